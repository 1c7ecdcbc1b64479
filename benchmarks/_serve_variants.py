"""Two or more configurations of ``rpcline serve`` on the same child, in interleaved rounds.

What benchmarks/serve_named.py and serve_auth.py share: each variant is a ``serve.Gateway``
(its command line), the path its load is sent to, and what each request carries
(``authorization``, a callable of the port, since a token's audience names it). For each era,
the load generator's throughput and the gateway's CPU per call (medians over rounds) and their
ratio to the first variant.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import serve


@dataclass
class Variant:
    gateway: serve.Gateway
    path: str = "/mcp"
    authorization: Callable[[int], str] | None = None  # the header's value, given the port
    after: Callable[[int, int], None] | None = None  # more to measure: (port, gateway pid)


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--warm", type=float, default=1.0)
    parser.add_argument("--clients", type=int, default=16)


def measure(variants: dict[str, Variant], args: argparse.Namespace,
            child: list[str]) -> dict[tuple[str, str], list[dict[str, object]]]:
    runs: dict[tuple[str, str], list[dict[str, object]]] = {}
    for round in range(args.rounds):
        for name in serve.rotated(list(variants), round):
            variant = variants[name]
            with serve.running(variant.gateway, child) as (port, process):
                os.environ["RPCLINE_BENCH_PATH"] = variant.path  # read by the load generator
                if variant.authorization is not None:
                    os.environ["RPCLINE_BENCH_AUTHORIZATION"] = variant.authorization(port)
                try:
                    for era in variant.gateway.eras:
                        deadline = time.monotonic() + 30
                        while not serve.ready(port, era, [process.pid]):
                            assert time.monotonic() < deadline, f"{name} answers no {era} call"
                            time.sleep(0.2)
                        runs.setdefault((name, era), []).append(serve.load(
                            port, era, args.clients, args.warm, args.seconds, [process.pid]))
                    if variant.after is not None:
                        variant.after(port, process.pid)
                finally:
                    os.environ.pop("RPCLINE_BENCH_PATH", None)
                    os.environ.pop("RPCLINE_BENCH_AUTHORIZATION", None)
        print(f"round {round + 1} of {args.rounds} done", flush=True)
    return runs


def table(runs: dict[tuple[str, str], list[dict[str, object]]], names: list[str]) -> None:
    """Calls/s and CPU us a call per variant and era, with the ratio to the first."""
    base = names[0]
    print(f"{'era':5} {'variant':30} {'calls/s':>9} {'ratio':>7} {'CPU us/call':>12} {'ratio':>7}")
    for era in ("2025", "2026"):
        first = serve.figures(runs[(base, era)])
        assert first is not None, runs[(base, era)]
        for name in names:
            got = serve.figures(runs[(name, era)])
            assert got is not None, runs[(name, era)]
            print(f"{era:5} {name:30} {got['rate']:9.0f} {got['rate'] / first['rate']:6.2f}x "
                  f"{got['cpu']:12.1f} {got['cpu'] / first['cpu']:6.2f}x")
