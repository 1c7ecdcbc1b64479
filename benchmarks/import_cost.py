"""What ``import rpcline`` costs against ``import orjson``, its one dependency (issue 26).

Each round runs one fresh interpreter per module, in turn, which times its own import
with ``perf_counter`` (the interpreter's start-up is in neither figure); the medians of
the rounds are compared. Target: ``import rpcline`` at most 1.5x ``import orjson``.

    python benchmarks/import_cost.py [--rounds 41]
    RPCLINE_NO_EXTENSIONS=1 python benchmarks/import_cost.py   # the pure-Python twin
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

TARGET = 1.5
TIMED = ("import time; t = time.perf_counter(); import {module}; "
         "print(time.perf_counter() - t)")
# Timed as installed: with bytecode cached. A warm-up round writes any .pyc missing (a
# fresh clone has none, and PYTHONDONTWRITEBYTECODE would compile every module each time).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def import_seconds(module: str) -> float:
    done = subprocess.run([sys.executable, "-c", TIMED.format(module=module)],
                          capture_output=True, text=True, check=True, env=ENV)
    return float(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    rounds = parser.parse_args().rounds
    modules = ("orjson", "rpcline")
    times: dict[str, list[float]] = {module: [] for module in modules}
    for module in modules:  # the warm-up round
        import_seconds(module)
    for _ in range(rounds):
        for module in modules:
            times[module].append(import_seconds(module))
    implementation = subprocess.run(
        [sys.executable, "-c", "import rpcline; print(rpcline.IMPLEMENTATION)"],
        capture_output=True, text=True, check=True).stdout.strip()
    median = {module: statistics.median(times[module]) for module in modules}
    print(f"rpcline ({implementation}), Python {sys.version.split()[0]}, "
          f"medians of {rounds} interleaved rounds, each in a fresh interpreter")
    for module in modules:
        print(f"  import {module:<8} {median[module] * 1e3:6.2f} ms  "
              f"(min {min(times[module]) * 1e3:.2f}, max {max(times[module]) * 1e3:.2f})")
    ratio = median["rpcline"] / median["orjson"]
    print(f"  ratio {ratio:.2f}x (target at most {TARGET}x): {'met' if ratio <= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
