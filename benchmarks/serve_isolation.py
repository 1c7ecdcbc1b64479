"""What a child of one's own costs: ``rpcline serve --isolation session`` against shared mode.

    python benchmarks/serve_isolation.py [--rounds 5] [--seconds 3] [--clients 16]

In interleaved rounds (the order alternates), the same minimal child
(benchmarks/fast_child.py) is served by ``rpcline serve`` ("shared"), the same with
``--children 16`` (the control: as many children and pipes as session mode has at 16
clients), ``rpcline serve --isolation session`` ("session") and the same with ``--prestart
2`` ("session, prestart").
At ``--clients`` keep-alive 2025-era clients (benchmarks/_serve_load.py; each a session, so
a child each in session mode, started before the measured window): throughput and the
gateway's CPU per call, medians over rounds, and their ratio to shared mode (target: CPU a
call <= 1.1x). Then ``initialize`` latency, one session at a time (each ended by DELETE, a
pause between them so that a warm child can be ready): the p50 and its ratio to shared
mode's (target with --prestart: <= 2x). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import time

import orjson
import serve
from _serve_variants import Variant, measure, options

from rpcline._build_info import describe

CHILD = serve.CHILDREN["fast"]
SHARED, SESSION, PRESTART = "shared", "session", "session, prestart 2"
SIXTEEN = "shared, 16 children"  # the control: as many pipes as session mode, shared
FLAGS = {SHARED: [], SIXTEEN: ["--children", "16"], SESSION: ["--isolation", "session"],
         PRESTART: ["--isolation", "session", "--prestart", "2"]}
INITIALIZE = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}})
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def gateway(name: str) -> serve.Gateway:
    return serve.Gateway(name, serve.PYTHON, ("2025",), lambda port, child: [
        serve.PYTHON, "-m", "rpcline", "serve", "--port", str(port), *FLAGS[name], "--",
        *child])


def initialize_latency(port: int, count: int, pause: float) -> list[float]:
    """Seconds each ``initialize`` took, one session at a time, each ended by DELETE."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    took = []
    for _ in range(count):
        started = time.perf_counter()
        connection.request("POST", "/mcp", INITIALIZE, HEADERS)
        answer = connection.getresponse()
        answer.read()
        took.append(time.perf_counter() - started)
        assert answer.status == 200, answer.status
        session = answer.getheader("mcp-session-id")
        assert session is not None
        connection.request("DELETE", "/mcp", headers={**HEADERS, "Mcp-Session-Id": session})
        connection.getresponse().read()
        time.sleep(pause)
    connection.close()
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options(parser)
    parser.add_argument("--sessions", type=int, default=20, help="initialize timings a round")
    parser.add_argument("--pause", type=float, default=0.3, help="seconds between sessions")
    args = parser.parse_args()
    print(f"measuring {describe()}")
    latencies: dict[str, list[float]] = {name: [] for name in FLAGS}

    def timing(name: str) -> Variant:
        return Variant(gateway(name), after=lambda port, pid: latencies[name].extend(
            initialize_latency(port, args.sessions, args.pause)))

    runs = measure({name: timing(name) for name in FLAGS}, args, CHILD)
    base = serve.figures(runs[(SHARED, "2025")])
    assert base is not None
    print(f"\n2025 era, {args.clients} clients, medians of {args.rounds} rounds")
    print(f"{'variant':22} {'calls/s':>9} {'ratio':>7} {'CPU us/call':>12} {'ratio':>7} "
          f"{'initialize p50 ms':>18} {'ratio':>7}")
    first = statistics.median(latencies[SHARED])
    for name in FLAGS:
        got = serve.figures(runs[(name, "2025")])
        assert got is not None, runs[(name, "2025")]
        p50 = statistics.median(latencies[name])
        print(f"{name:22} {got['rate']:9.0f} {got['rate'] / base['rate']:6.2f}x "
              f"{got['cpu']:12.1f} {got['cpu'] / base['cpu']:6.2f}x {p50 * 1000:18.2f} "
              f"{p50 / first:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
