"""What ``http.check_request`` costs per MCP 2026-07-28 request, against orjson and the SDK.

    python benchmarks/http_check.py [--requests 2000] [--rounds 15]
    python benchmarks/http_check.py --callgrind [--requests 500] [--passes 1 3]

The requests are the first ``--requests`` POSTs labelled "ok" by
``rpcline.corpus.iter_http``, the generated 2026-07-28 gateway traffic (tools/call with
arguments and Mcp-Param headers, some base64-encoded, tools/list, resources/read,
prompts/get, server/discover, subscriptions/listen, ...), each with the raw header pairs
an ASGI server hands over (lowercase bytes, host/accept/content-type/user-agent besides
the mcp-* ones; the few mixed-case names of the traffic are lowered, as ASGI lowers them);
``tools`` is built from ``corpus.HTTP_TOOLS``. Contenders, each over the whole corpus in
one Python loop that drops each result as it comes, as every other workload of the guard
does (DESIGN.md: keeping 500 decoded bodies alive makes ``orjson.loads`` 17.5% dearer and
flatters whoever is compared with it):

- ``orjson.loads(body)``: the bare decode a gateway would otherwise start from;
- ``route(body)``: rpcline's scan alone, the floor under check_request (for reference);
- ``check_request(body, pairs, tools=...)``;
- the SDK's path (``mcp`` 2.3, as ``_streamable_http_modern`` runs it): ``json.loads``,
  ``JSONRPCRequest.model_validate``, ``find_duplicated_routing_header`` and
  ``classify_inbound_request`` (given a ready dict of str headers, which spares it
  Starlette's header decoding).

Wall-clock mode runs them in interleaved rounds (so drift and other load hit all alike)
and reports median ns per request. Callgrind mode counts instructions instead: each
contender runs in a child of its own under valgrind at two pass counts, and the
difference cancels start-up, imports and building the corpus (deterministic, PYTHONHASHSEED=0).

Targets (DESIGN.md, settled after measurement): check_request at most 0.5x orjson.loads, and
at least 11x faster than the SDK's path, in instructions; both are printed next to the
measured figures, with the build that was measured.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

import rpcline
from rpcline import http
from rpcline._build_info import describe, verdict
from rpcline.corpus import HTTP_TOOLS, iter_http

Run = Callable[[], None]  # one pass over the corpus, each result dropped as it comes
MAX_RATIO, MIN_SPEEDUP = 0.5, 11.0


def corpus(n: int) -> list[tuple[bytes, list[tuple[bytes, bytes]]]]:
    """The first ``n`` POSTs of the generated traffic that are to be dispatched."""
    posts = iter_http(1 << 62)  # generated as they are taken: about 86% are "ok"
    ok = ((body, [(n.lower(), v) for n, v in pairs]) for label, body, pairs in posts if label == "ok")
    return list(itertools.islice(ok, n))


def contenders(requests: list[tuple[bytes, list[tuple[bytes, bytes]]]]) -> dict[str, Run]:
    tools = {name: http.ParamHeaders(schema) for name, schema in HTTP_TOOLS.items()}
    for body, pairs in requests:  # every request of the corpus is one to dispatch
        assert http.check_request(body, pairs, tools=tools).status == 200
    loads, route, check = orjson.loads, rpcline.route, http.check_request

    def bare() -> None:
        for body, _ in requests:
            loads(body)

    def scan() -> None:
        for body, _ in requests:
            route(body)

    def ours() -> None:
        for body, pairs in requests:
            check(body, pairs, tools=tools)

    runs: dict[str, Run] = {"orjson.loads": bare, "route": scan, "check_request": ours}
    sdk = sdk_path(requests)
    if sdk is not None:
        runs["SDK path"] = sdk
    return runs


def sdk_path(requests: list[tuple[bytes, list[tuple[bytes, bytes]]]]) -> Run | None:
    try:
        from mcp.shared import inbound
        from mcp_types import JSONRPCRequest
    except ImportError:
        print("the SDK (mcp, the bench extra) is not installed: its arm is skipped")
        return None
    text = [
        (body, [(n.decode("latin-1"), v.decode("latin-1")) for n, v in pairs])
        for body, pairs in requests
    ]
    prepared = [(body, pairs, dict(pairs)) for body, pairs in text]
    validate = JSONRPCRequest.model_validate

    def sdk() -> None:
        for body, pairs, folded in prepared:
            decoded = json.loads(body)
            validate(decoded)
            inbound.find_duplicated_routing_header(pairs)
            inbound.classify_inbound_request(decoded, headers=folded)

    return sdk


def wall_clock(runs: dict[str, Run], count: int, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter_ns()
            run()
            times[name].append((time.perf_counter_ns() - start) / count)
    return {name: statistics.median(values) for name, values in times.items()}


def callgrind(names: list[str], count: int, passes: tuple[int, int]) -> dict[str, float]:
    """Instructions per request of each contender, from two callgrind runs of a child."""
    from compare import count_instructions  # benchmarks/ is this script's folder

    per_request = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            total = []
            for n in passes:
                print(f"callgrind: {name}, {n} passes", file=sys.stderr)
                args = [__file__, "--child", name, str(n), "--requests", str(count)]
                total.append(count_instructions(args, Path(tmp) / f"{name}.{n}.out"))
            per_request[name] = (total[1] - total[0]) / (passes[1] - passes[0]) / count
    return per_request


def report(figures: dict[str, float], unit: str, heading: str) -> None:
    print(heading)
    for name, value in figures.items():
        print(f"  {name:15} {value:9.0f} {unit}")
    ratio = figures["check_request"] / figures["orjson.loads"]
    print(f"check_request / orjson.loads: {ratio:.2f}x   (target <= {MAX_RATIO}x: "
          f"{verdict(ratio <= MAX_RATIO)})")  # fmt: skip
    if "SDK path" in figures:
        speedup = figures["SDK path"] / figures["check_request"]
        print(f"SDK path / check_request:     {speedup:.1f}x   (target >= {MIN_SPEEDUP:.0f}x: "
              f"{verdict(speedup >= MIN_SPEEDUP)})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, help="default 2000, or 500 with --callgrind")
    parser.add_argument("--rounds", type=int, default=15, help="wall-clock rounds")
    parser.add_argument("--callgrind", action="store_true", help="count instructions instead")
    parser.add_argument("--passes", type=int, nargs=2, default=[1, 3], metavar=("LOW", "HIGH"))
    # NAME PASSES: run one contender that many times, the process callgrind counts
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    count = args.requests or (500 if args.callgrind or args.child else 2000)
    if args.callgrind:
        from compare import valgrind_missing

        if valgrind_missing():
            return
    runs = contenders(corpus(count))
    if args.child:
        name, passes = args.child
        for _ in range(int(passes)):
            runs[name]()
        return
    where = f"{describe()}; {count} requests"
    if args.callgrind:
        figures = callgrind(list(runs), count, (args.passes[0], args.passes[1]))
        report(figures, "instr", f"{where}; callgrind instructions per request")
    else:
        figures = wall_clock(runs, count, args.rounds)
        report(figures, "ns", f"{where} x {args.rounds} interleaved rounds; median ns per request")


if __name__ == "__main__":
    main()
