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
from pathlib import Path

import serve
from _serve_variants import Variant, measure, options, table

from rpcline._build_info import describe

CHILD = serve.CHILDREN["fast"]
SRC = str(Path(__file__).parents[1] / "src")
QUIET = ("OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none")


def gateway(name: str, src: str, *flags: str) -> serve.Gateway:
    path = os.pathsep.join([src, *os.environ.get("PYTHONPATH", "").split(os.pathsep)])
    return serve.Gateway(name, serve.PYTHON, ("2025", "2026"), lambda port, child: [
        "env", f"PYTHONPATH={path}", *QUIET, serve.PYTHON, "-m", "rpcline", "serve", "--port",
        str(port), *flags, "--", *child])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="another source tree's src (today's main, say)")
    options(parser)
    args = parser.parse_args()
    print(f"measuring {describe()}")
    serve.LOGS = Path(tempfile.mkdtemp(prefix="rpcline-otel-bench-"))
    variants = {"off": Variant(gateway("off", SRC)),
                "otel": Variant(gateway("otel", SRC, "--otel")),
                "metrics": Variant(gateway("metrics", SRC, "--metrics"))}
    if args.base:
        variants["base"] = Variant(gateway("base", args.base))
    runs = measure(variants, args, CHILD)
    print(f"the fast child, {args.clients} clients, {args.rounds} interleaved rounds, medians; "
          "ratios to off")
    table(runs, list(variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
