"""What ``http.check_request`` costs per MCP 2026-07-28 request, against orjson and the SDK.

    PYTHONPATH=src python benchmarks/http_check.py [--requests 2000] [--rounds 15]

The requests are the first ``--requests`` POSTs labelled "ok" by
``rpcline.corpus.iter_http``, the generated 2026-07-28 gateway traffic (tools/call with
arguments and Mcp-Param headers, some base64-encoded, tools/list, resources/read,
prompts/get, server/discover, subscriptions/listen, ...), each with the raw header pairs
an ASGI server hands over (lowercase bytes, host/accept/content-type/user-agent besides
the mcp-* ones; the few mixed-case names of the traffic are lowered, as ASGI lowers them);
``tools`` is built from ``corpus.HTTP_TOOLS``. Contenders, each over the whole corpus in
one Python loop that keeps its results in a list, in interleaved rounds (so drift and other
load hit all alike); the figure is the median per-request time:

- ``orjson.loads(body)``: the bare decode a gateway would otherwise start from;
- ``check_request(body, pairs, tools=...)``;
- the SDK's path (``mcp`` 2.3, as ``_streamable_http_modern`` runs it): ``json.loads``,
  ``JSONRPCRequest.model_validate``, ``find_duplicated_routing_header`` and
  ``classify_inbound_request`` (given a ready dict of str headers, which spares it
  Starlette's header decoding).

Targets (DESIGN.md): check_request at most 0.35x orjson.loads, and at least 15x faster
than the SDK's path. Wall clock only here; instruction counts are not measured.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

import orjson

import rpcline
from rpcline import http
from rpcline.corpus import HTTP_TOOLS, iter_http


def corpus(n: int) -> list[tuple[bytes, list[tuple[bytes, bytes]]]]:
    """The first ``n`` POSTs of the generated traffic that are to be dispatched."""
    posts = iter_http(1 << 62)  # generated as they are taken: about 86% are "ok"
    ok = ((body, [(n.lower(), v) for n, v in pairs]) for label, body, pairs in posts if label == "ok")
    return list(itertools.islice(ok, n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    requests = corpus(args.requests)
    tools = {name: http.ParamHeaders(schema) for name, schema in HTTP_TOOLS.items()}
    for body, pairs in requests:  # every request of the corpus is one to dispatch
        assert http.check_request(body, pairs, tools=tools).status == 200

    loads = orjson.loads
    check = http.check_request

    def bare(kept: list) -> None:
        for body, _ in requests:
            kept.append(loads(body))

    def ours(kept: list) -> None:
        for body, pairs in requests:
            kept.append(check(body, pairs, tools=tools))

    contenders = {"orjson.loads": bare, "check_request": ours}
    try:
        from mcp.shared import inbound
        from mcp_types import JSONRPCRequest

        prepared = [
            (body, [(n.decode("latin-1"), v.decode("latin-1")) for n, v in pairs])
            for body, pairs in requests
        ]
        prepared = [(body, pairs, dict(pairs)) for body, pairs in prepared]
        validate = JSONRPCRequest.model_validate

        def sdk(kept: list) -> None:
            for body, pairs, folded in prepared:
                decoded = json.loads(body)
                validate(decoded)
                inbound.find_duplicated_routing_header(pairs)
                kept.append(inbound.classify_inbound_request(decoded, headers=folded))

        contenders["SDK path"] = sdk
    except ImportError:
        print("the SDK (mcp, the bench extra) is not installed: its arm is skipped")

    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(args.rounds):
        for name, run in contenders.items():
            kept: list = []
            start = time.perf_counter_ns()
            run(kept)
            times[name].append((time.perf_counter_ns() - start) / len(requests))
            del kept
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"rpcline {rpcline.IMPLEMENTATION}; {len(requests)} requests x {args.rounds} "
          f"interleaved rounds; median ns per request")  # fmt: skip
    for name, value in median.items():
        print(f"  {name:15} {value:9.0f} ns")
    ratio = median["check_request"] / median["orjson.loads"]
    print(f"check_request / orjson.loads: {ratio:.2f}x   (target <= 0.35x: "
          f"{'met' if ratio <= 0.35 else 'NOT met'})")  # fmt: skip
    if "SDK path" in median:
        speedup = median["SDK path"] / median["check_request"]
        print(f"SDK path / check_request:     {speedup:.1f}x   (target >= 15x: "
              f"{'met' if speedup >= 15 else 'NOT met'})")  # fmt: skip


if __name__ == "__main__":
    main()
