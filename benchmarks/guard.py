"""The CI performance guard: rpcline's Cython parse against a bare orjson.loads, by callgrind.

    python benchmarks/guard.py [FILE.jsonl] [--max-ratio 1.10]

Exits 1 when the instructions per pass of ``rpcline._message_c.parse`` exceed
``--max-ratio`` times those of ``orjson.loads`` on the corpus (default: the generated
one), 2 when the extension is not built, and 0 (saying so) when valgrind is missing.
Instruction counts do not depend on machine load, so the threshold can be tight.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from compare import callgrind, valgrind_missing
from contenders import BASELINE, WHOLE, available, load_corpus, workloads

CONTENDER = "rpcline-cython"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, help=".jsonl corpus (default: generated)")
    parser.add_argument("--max-ratio", type=float, default=1.10, help="default 1.10")
    parser.add_argument("--passes", type=int, nargs=2, default=[1, 4], metavar=("LOW", "HIGH"))
    args = parser.parse_args(argv)
    if valgrind_missing():
        return 0
    if CONTENDER not in available([CONTENDER]):
        print(f"guard failed: {CONTENDER} is not built, nothing to guard")
        return 2
    groups = workloads(load_corpus(args.file), [WHOLE])
    result = callgrind([BASELINE, CONTENDER], groups, tuple(args.passes), None)[WHOLE]
    ratio = result["contenders"][CONTENDER]["ratio"]
    verdict = "ok" if ratio <= args.max_ratio else "FAILED"
    print(
        f"{verdict}: {CONTENDER} / {BASELINE} = {ratio:.3f}x instructions per pass "
        f"on {args.file or 'the generated corpus'} (limit {args.max_ratio:.2f}x)"
    )
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
