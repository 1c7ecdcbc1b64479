"""parse_lines and StreamParser against a Python loop of orjson.loads over pre-split lines.

    python benchmarks/streams.py [FILE.jsonl] [--rounds 20]
    python benchmarks/streams.py [FILE.jsonl] --callgrind [--passes 1 4]

The baseline keeps what it decodes, as parse_lines and feed do (a loop that dropped its
results would be spared the allocator and collector work that keeping them costs), and
survives bad lines, as a gateway's loop must. Without FILE the generated corpus is used.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from compare import count_instructions, valgrind_missing
from contenders import BASELINE, load_corpus

import rpcline._core.stream_py as stream_py
from rpcline._build_info import describe

CHUNK = 64 * 1024
LOOP = f"{BASELINE} loop"
Pass = Callable[[bytes, list[bytes]], object]  # (buffer, its pre-split lines) -> results


def loads_loop(buffer: bytes, lines: list[bytes]) -> list[object]:
    import orjson

    loads = orjson.loads
    results: list[object] = []
    append = results.append
    for line in lines:
        try:
            append(loads(line))
        except orjson.JSONDecodeError as error:
            append(error)
    return results


def _feed(module: object) -> Pass:
    def feed(buffer: bytes, lines: list[bytes]) -> list[object]:
        parser = module.StreamParser()  # type: ignore[attr-defined]
        view = memoryview(buffer)
        results = []
        for start in range(0, len(buffer), CHUNK):
            results += parser.feed(view[start : start + CHUNK])
        return results + parser.close()

    return feed


def contenders() -> dict[str, Pass]:
    found: dict[str, Pass] = {LOOP: loads_loop}
    try:
        import rpcline._core.stream_c as stream_c
    except ImportError as error:
        print(f"skipped the Cython core: {error}")
    else:
        found["parse_lines (cython)"] = lambda buffer, lines: stream_c.parse_lines(buffer)
        found["StreamParser.feed (cython)"] = _feed(stream_c)
    found["parse_lines (python)"] = lambda buffer, lines: stream_py.parse_lines(buffer)
    found["StreamParser.feed (python)"] = _feed(stream_py)
    return found


def workload(path: Path | None) -> tuple[bytes, list[bytes]]:
    lines = [line for _, line in load_corpus(path)]
    return b"\n".join(lines) + b"\n", lines


def wall_clock(path: Path | None, rounds: int) -> None:
    buffer, lines = workload(path)
    runs = contenders()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    ratios: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for round in range(rounds + 1):  # round 0 warms up and is dropped
        times = {}
        # Each round starts with the next contender: one that runs just after another has
        # freed its results finds the allocator's memory warm, so a fixed order would bias.
        turn = round % len(names)
        for name in names[turn:] + names[:turn]:
            run = runs[name]
            start = time.perf_counter()
            results = run(buffer, lines)
            times[name] = time.perf_counter() - start
            del results  # freeing them is the caller's business, and is timed for none
            gc.collect()  # each run starts with the collector in the same state
        if round:
            for name, seconds in times.items():
                samples[name].append(seconds * 1e9 / len(lines))
                ratios[name].append(seconds / times[LOOP])
    print(f"{path or 'generated corpus'}: {len(lines):,} lines, {len(buffer):,} bytes, "
          f"median of {rounds} interleaved rounds")
    for name in runs:
        print(f"  {name:<28} {statistics.median(samples[name]):8.0f} ns/msg  "
              f"{statistics.median(ratios[name]):.3f}x")


def by_callgrind(path: Path | None, passes: tuple[int, int]) -> int:
    if valgrind_missing():
        return 0
    _, lines = workload(path)
    print(f"callgrind, {path or 'generated corpus'}: {len(lines):,} lines, instructions/message")
    floor = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for name in contenders():
            low, high = (
                count_instructions([__file__, "--child", name, str(path or ""), str(count)],
                                   Path(folder) / f"{count}.out")
                for count in passes
            )
            per_message = (high - low) / (passes[1] - passes[0]) / len(lines)
            floor = floor or per_message
            print(f"  {name:<28} {per_message:8.0f}  {per_message / floor:.3f}x")
    return 0


def child(name: str, path: str, passes: int) -> None:
    buffer, lines = workload(Path(path) if path else None)
    run = contenders()[name]
    for _ in range(passes):
        run(buffer, lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--passes", type=int, nargs=2, default=[1, 4])
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.child:
        print(f"measuring {describe()}")
    if args.child:
        name, path, passes = args.child
        child(name, path, int(passes))
        return 0
    if args.callgrind:
        return by_callgrind(args.file, tuple(args.passes))
    wall_clock(args.file, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
