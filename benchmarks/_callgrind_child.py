"""Run PASSES passes of one contender over a .jsonl file: the process callgrind counts.

    python benchmarks/_callgrind_child.py CONTENDER FILE PASSES

compare.py runs it at two pass counts and takes the difference, so that start-up,
imports and loading the file cancel out and only whole passes remain.
"""

from __future__ import annotations

import sys

from contenders import load, load_jsonl, run_pass


def main() -> None:
    name, path, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    parse = load(name)
    lines = load_jsonl(path)
    for _ in range(passes):
        run_pass(parse, lines)


if __name__ == "__main__":
    main()
