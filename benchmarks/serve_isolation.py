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
mode's (target with --prestart: <= 2x). Last, ``--idle`` sessions opened and left idle: the
gateway's RSS per session (its part; a child's RSS beside it, the median of the gateway's
descendants). Linux only (/proc).
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


def idle_memory(port: int, pid: int, count: int) -> tuple[float, float]:
    """The gateway's RSS per idle session (``count`` opened, never used, left open) and
    the median RSS of one child, in kB."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    time.sleep(0.5)
    before = serve.rss_kb(pid)
    for _ in range(count):
        connection.request("POST", "/mcp", INITIALIZE, HEADERS)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
    time.sleep(1.0)
    grown = (serve.rss_kb(pid) - before) / count
    children = [serve.rss_kb(child) for child in serve.descendants(pid)]
    connection.close()
    return grown, statistics.median(children) if children else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options(parser)
    parser.add_argument("--sessions", type=int, default=20, help="initialize timings a round")
    parser.add_argument("--pause", type=float, default=0.3, help="seconds between sessions")
    parser.add_argument("--idle", type=int, default=50, help="idle sessions opened, at the end")
    args = parser.parse_args()
    print(f"measuring {describe()}")
    latencies: dict[str, list[float]] = {name: [] for name in FLAGS}
    memory: dict[str, list[tuple[float, float]]] = {name: [] for name in FLAGS}

    def after(name: str, port: int, pid: int) -> None:
        latencies[name].extend(initialize_latency(port, args.sessions, args.pause))
        memory[name].append(idle_memory(port, pid, args.idle))

    def timing(name: str) -> Variant:
        return Variant(gateway(name), after=lambda port, pid: after(name, port, pid))

    runs = measure({name: timing(name) for name in FLAGS}, args, CHILD)
    base = serve.figures(runs[(SHARED, "2025")])
    assert base is not None
    print(f"\n2025 era, {args.clients} clients, medians of {args.rounds} rounds")
    print(f"{'variant':22} {'calls/s':>9} {'ratio':>7} {'CPU us/call':>12} {'ratio':>7} "
          f"{'initialize p50 ms':>18} {'ratio':>7} {'kB/idle session':>16} {'child kB':>9}")
    first = statistics.median(latencies[SHARED])
    for name in FLAGS:
        got = serve.figures(runs[(name, "2025")])
        assert got is not None, runs[(name, "2025")]
        p50 = statistics.median(latencies[name])
        kb = statistics.median(m[0] for m in memory[name])
        child_kb = statistics.median(m[1] for m in memory[name])
        print(f"{name:22} {got['rate']:9.0f} {got['rate'] / base['rate']:6.2f}x "
              f"{got['cpu']:12.1f} {got['cpu'] / base['cpu']:6.2f}x {p50 * 1000:18.2f} "
              f"{p50 / first:6.2f}x {kb:16.1f} {child_kb:9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
