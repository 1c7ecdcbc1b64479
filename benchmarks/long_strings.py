"""route on one large tool result full of escapes or non-ASCII text, per block scan.

    python benchmarks/long_strings.py [--size 262144] [--rounds 41]

Four texts (an escape about every 25 bytes, CJK, emoji among words, JSON embedded as a
string: the text styles of ``rpcline.corpus``), each as the text of one tool result. Contenders: ``orjson.loads``, pysimdjson's
lazy parse with ``id`` and ``method`` read (skipped when pysimdjson is not installed),
and ``route`` on every block scan of long strings this build and CPU have (SSE2, AVX2).
Rounds are interleaved (each starts with the next contender) and medians printed, as
GB/s and as the ratio to pysimdjson (target: at most 1.00), whose kernel is printed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import orjson

from rpcline._core import route_c, scan_c
from rpcline._build_info import describe
from rpcline.corpus import styled_text

def contenders() -> dict[str, Callable[[bytes], object]]:
    found: dict[str, Callable[[bytes], object]] = {"orjson.loads": orjson.loads}
    try:
        import simdjson
    except ImportError:
        print("pysimdjson is not installed: pip install pysimdjson")
    else:
        parser = simdjson.Parser()
        # simdjson runs its best kernel for the CPU (AVX-512 where there is one); set
        # SIMDJSON_FORCE_IMPLEMENTATION=haswell (AVX2) or westmere (SSE4.2) to compare
        # route's paths with simdjson on the same vector width.
        print("pysimdjson kernel: {} ({})".format(*parser.implementation))

        def lazy(line: bytes) -> object:
            document = parser.parse(line)  # plain values out: the parser is reused
            return document.get("id"), document.get("method")

        found["pysimdjson"] = lazy
    for path in scan_c.SIMD_PATHS:
        def routed(line: bytes, path: str = path) -> object:
            scan_c.use_simd_path(path)
            return route_c.route(line)

        found[f"route ({path})"] = routed
    return found


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--size", type=int, default=256 * 1024)
    arguments.add_argument("--rounds", type=int, default=41)
    options = arguments.parse_args()
    print(f"measuring {describe()}")
    rng = random.Random(2)
    parsers = contenders()
    names = list(parsers)
    for kind in ("escaped", "cjk", "emoji", "embedded-json"):
        content = {"type": "text", "text": styled_text(rng, kind, options.size)}
        message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [content]}}
        line = orjson.dumps(message)
        times: dict[str, list[float]] = {name: [] for name in names}
        for round in range(options.rounds):
            for name in names[round % len(names):] + names[:round % len(names)]:
                started = time.perf_counter()
                parsers[name](line)
                times[name].append(time.perf_counter() - started)
        median = {name: statistics.median(values) for name, values in times.items()}
        print(f"{kind}: {len(line):,} bytes")
        for name in names:
            versus = (f"  {median[name] / median['pysimdjson']:.2f}x pysimdjson"
                      if "pysimdjson" in median and name.startswith("route") else "")
            print(f"  {name:14} {len(line) / median[name] / 1e9:6.2f} GB/s{versus}")
    scan_c.use_simd_path(scan_c.SIMD_PATHS[-1])


if __name__ == "__main__":
    main()
