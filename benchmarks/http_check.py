"""What ``http.check_request`` costs per MCP 2026-07-28 request, against orjson and the SDK.

    PYTHONPATH=src python benchmarks/http_check.py [--requests 2000] [--rounds 15]

A corpus of 2026-07-28 requests (tools/call with arguments and Mcp-Param headers,
tools/list, resources/read, prompts/get, server/discover), each with the raw header pairs
an ASGI server hands over (lowercase bytes, the usual host/accept/content-type/user-agent
besides the mcp-* ones). Contenders, each over the whole corpus in one Python loop that
keeps its results in a list, in interleaved rounds (so drift and other load hit all
alike); the figure is the median per-request time:

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
import json
import statistics
import time

import orjson

import rpcline
from rpcline import http

V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "bench-client", "version": "1.0.0"},
}
SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "x-mcp-header": "City"},
        "days": {"type": "integer", "x-mcp-header": "Days"},
        "units": {"type": "string"},
    },
}
COMMON = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"user-agent", b"python-httpx/0.28.1"),
    (b"accept-encoding", b"gzip, deflate"),
]


def corpus(n: int) -> list[tuple[bytes, list[tuple[bytes, bytes]]]]:
    shapes = [
        ("tools/call", {"name": "weather", "arguments": {"city": "Paris", "days": 3, "units": "metric"}}),
        ("tools/list", {}),
        ("resources/read", {"uri": "file:///srv/data/report.md"}),
        ("prompts/get", {"name": "summarise", "arguments": {"style": "short"}}),
        ("server/discover", {}),
    ]
    out = []
    for i in range(n):
        method, params = shapes[i % len(shapes)]
        body = orjson.dumps(
            {"jsonrpc": "2.0", "id": i, "method": method, "params": {**params, "_meta": META}}
        )
        pairs = [*COMMON, (b"content-length", str(len(body)).encode()),
                 (b"mcp-protocol-version", V.encode()), (b"mcp-method", method.encode())]  # fmt: skip
        name = params.get("name") or params.get("uri")
        if name:
            pairs.append((b"mcp-name", name.encode()))
        if method == "tools/call":
            pairs += [(b"mcp-param-city", b"Paris"), (b"mcp-param-days", b"3")]
        out.append((body, pairs))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    requests = corpus(args.requests)
    tools = {"weather": http.ParamHeaders(SCHEMA)}
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
