"""What serving a server by name costs: one of ten named servers against the same one alone.

    python benchmarks/serve_named.py [--rounds 5] [--seconds 3] [--clients 16] [--servers 10]

In interleaved rounds (the order alternates), the same minimal child (benchmarks/fast_child.py)
is served by ``rpcline serve -- CHILD`` at ``/mcp`` ("alone") and by ``rpcline serve
--config`` with ``--servers`` named copies of it, the load on one of them at
``/servers/s5/mcp`` ("named"). For each era, at ``--clients`` keep-alive clients
(benchmarks/_serve_load.py): throughput and the gateway's CPU per call, medians over rounds,
and their ratios (targets: throughput >= 0.95x, CPU a call <= 1.05x). Then, on the named
gateway: the CPU ``GET /readyz`` takes (target: under 1 ms), and the memory an idle configured
server costs: the gateway's RSS with ``--servers`` servers less its RSS with one, per server
(the children's own RSS beside it). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import time
from pathlib import Path

import serve
from _serve_load import cpu_seconds
from _serve_variants import Variant, measure, options, table

from rpcline._build_info import describe

CHILD = serve.CHILDREN["fast"]
TARGET = "s5"


def named(count: int, config: Path) -> serve.Gateway:
    config.write_text(json.dumps({"mcpServers": {
        f"s{n}": {"command": CHILD[0], "args": CHILD[1:]} for n in range(1, count + 1)}}))
    return serve.Gateway(f"named {count}", serve.PYTHON, ("2025", "2026"), lambda port, child: [
        serve.PYTHON, "-m", "rpcline", "serve", "--port", str(port), "--config", str(config)])


def readyz_cpu(port: int, pid: int, requests: int) -> float:
    """Seconds of the gateway's CPU per ``GET /readyz`` (one keep-alive connection)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    before = cpu_seconds(pid)
    for _ in range(requests):
        connection.request("GET", "/readyz")
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
    spent = cpu_seconds(pid) - before
    connection.close()
    return spent / requests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options(parser)
    parser.add_argument("--servers", type=int, default=10)
    args = parser.parse_args()
    print(f"measuring {describe()}")
    folder = Path(tempfile.mkdtemp(prefix="rpcline-named-bench-"))
    serve.LOGS = folder
    readyz: list[float] = []
    alone = serve.Gateway("alone", serve.PYTHON, ("2025", "2026"), lambda port, child: [
        serve.PYTHON, "-m", "rpcline", "serve", "--port", str(port), "--", *child])
    variants = {
        "alone": Variant(alone),
        f"named ({args.servers})": Variant(
            named(args.servers, folder / "many.json"), f"/servers/{TARGET}/mcp",
            after=lambda port, pid: readyz.append(readyz_cpu(port, pid, 1000)))}
    runs = measure(variants, args, CHILD)
    rss = []
    for _ in range(args.rounds):
        for count in (args.servers, 1):
            with serve.running(named(count, folder / f"{count}.json"), CHILD) as (port, process):
                time.sleep(2)  # every server warmed: its child started and probed
                children = [serve.rss_kb(pid) for pid in serve.descendants(process.pid)]
                rss.append((count, serve.rss_kb(process.pid), sum(children) / len(children)))
    print(f"the same fast child alone at /mcp and as {TARGET} of {args.servers} named servers, "
          f"{args.clients} clients, {args.rounds} interleaved rounds, medians")
    table(runs, list(variants))
    print(f"GET /readyz with {args.servers} servers: "
          f"{serve.median(readyz) * 1e6:.0f} us of the gateway's CPU (median of rounds)")
    many = serve.median([kb for count, kb, _ in rss if count == args.servers])
    single = serve.median([kb for count, kb, _ in rss if count == 1])
    child = serve.median([kb for _, _, kb in rss])
    assert many is not None and single is not None and child is not None
    print(f"an idle configured server: {(many - single) / (args.servers - 1):.0f} KB of the "
          f"gateway's RSS ({single:.0f} KB with one server, {many:.0f} KB with "
          f"{args.servers}), and its child's own RSS, {child:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
