"""What observability costs the gateway: ``rpcline serve`` without it, with ``--otel``, with
``--metrics``, and (``--base SRC``) the same command from another source tree.

    python benchmarks/serve_otel.py [--base /path/to/main/src] [--rounds 5] [--seconds 3]

In interleaved rounds (the order rotates), the same minimal child (benchmarks/fast_child.py)
is served by each configuration; for each era, at ``--clients`` keep-alive clients
(benchmarks/_serve_load.py): throughput and the gateway's CPU per call, medians over rounds,
and their ratios to "off". ``--otel`` runs with the OpenTelemetry SDK recording every span
and metric and exporting none (``OTEL_TRACES_EXPORTER=none``, ``OTEL_METRICS_EXPORTER=none``:
the exporter's own network cost left out). Targets (the issue's): "off" at most 1.02x the
base's CPU per call (hooks cost nothing when none is registered); "otel" at most 1.5x "off".
Linux only (/proc).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import serve

from rpcline._build_info import describe

CHILD = serve.CHILDREN["fast"]
SRC = str(Path(__file__).parents[1] / "src")
QUIET = ("OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none")


def gateway(name: str, src: str, *flags: str) -> serve.Gateway:
    return serve.Gateway(name, serve.PYTHON, ("2025", "2026"), lambda port, child: [
        "env", f"PYTHONPATH={os.pathsep.join([src, *os.environ.get('PYTHONPATH', '').split(os.pathsep)])}",
        *QUIET, serve.PYTHON, "-m", "rpcline", "serve", "--port", str(port), *flags, "--",
        *child])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="another source tree's src (today's main, say)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--warm", type=float, default=1.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    print(f"measuring {describe()}")
    serve.LOGS = Path(tempfile.mkdtemp(prefix="rpcline-otel-bench-"))
    gateways = {"off": gateway("off", SRC), "otel": gateway("otel", SRC, "--otel"),
                "metrics": gateway("metrics", SRC, "--metrics")}
    if args.base:
        gateways["base"] = gateway("base", args.base)
    runs: dict[tuple[str, str], list[dict[str, object]]] = {}
    for round in range(args.rounds):
        for name in serve.rotated(list(gateways), round):
            with serve.running(gateways[name], CHILD) as (port, process):
                for era in ("2025", "2026"):
                    deadline = time.monotonic() + 30
                    while not serve.ready(port, era, [process.pid]):
                        assert time.monotonic() < deadline, f"{name} answers no {era} call"
                        time.sleep(0.2)
                    runs.setdefault((name, era), []).append(serve.load(
                        port, era, args.clients, args.warm, args.seconds, [process.pid]))
        print(f"round {round + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"the fast child, {args.clients} clients, {args.rounds} interleaved rounds, medians; "
          "ratios to off")
    print(f"{'era':6} {'gateway':8} {'calls/s':>9} {'ratio':>7} {'CPU us/call':>12} {'ratio':>7}")
    for era in ("2025", "2026"):
        off = serve.figures(runs[("off", era)])
        assert off is not None
        for name in gateways:
            got = serve.figures(runs[(name, era)])
            assert got is not None
            print(f"{era:6} {name:8} {got['rate']:9.0f} {got['rate'] / off['rate']:6.2f}x "
                  f"{got['cpu']:12.1f} {got['cpu'] / off['cpu']:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
