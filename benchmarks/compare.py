"""Compare the contenders per message class: interleaved wall-clock rounds, or callgrind.

    python benchmarks/compare.py [FILE.jsonl] [--rounds 20] [--json [PATH]]
    python benchmarks/compare.py [FILE.jsonl] --callgrind [--passes 1 4] [--keep DIR]

Without FILE the generated corpus (rpcline.corpus, fixed seed) is used, and beside it
the large results of one text style each (512 KiB of plain ASCII, and escaped, CJK,
emoji, embedded JSON: ``rpcline.corpus.long_results``), where the peers to beat for
``rpcline-route`` are ``pysimdjson`` (a lazy parse reading the id and the method),
``ssrjson`` (a SIMD decoder) and ``msgspec-raw`` (a Struct with ``msgspec.Raw`` params,
result and error); they are the ``bench`` extra's optional packages. Wall-clock mode
times every contender in one process, round after round, in a rotating order, and
reports the median ns/message and the median of the per-round ratios to orjson.loads:
machine noise hits neighbours in a round alike, so the ratio is steadier than the times.
Callgrind mode counts instructions instead (noise-free): each contender runs in a child
under valgrind at two pass counts, and the difference cancels start-up and imports.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rpcline._build_info import describe

from contenders import (
    BASELINE,
    CONTENDERS,
    GROUPS,
    LONG_TEXTS,
    SMALL,
    WHOLE,
    Parser,
    available,
    load_corpus,
    run_pass,
    workloads,
)

CHILD = Path(__file__).with_name("_callgrind_child.py")
DEFAULT_JSON = Path(".benchmarks/compare.json")
CALLGRIND_GROUPS = [WHOLE, SMALL]  # each costs two valgrind runs per contender
# Short classes repeat their pass so that a timing lasts about a millisecond or more.
MIN_LINES_PER_TIMING = 2000
MIN_BYTES_PER_TIMING = 4_000_000

Results = dict[str, dict[str, Any]]  # group -> {"messages", "bytes", "contenders": {...}}


def wall_clock(parsers: dict[str, Parser], groups: dict[str, list[bytes]], rounds: int) -> Results:
    names = list(parsers)
    samples: dict[str, dict[str, list[float]]] = {g: {n: [] for n in names} for g in groups}
    for round in range(rounds + 1):  # round 0 warms caches and specialises code; dropped
        turn = round % len(names)
        for group, lines in groups.items():
            size = sum(map(len, lines))
            repeat = max(1, min(MIN_LINES_PER_TIMING // len(lines), MIN_BYTES_PER_TIMING // size))
            for name in names[turn:] + names[:turn]:
                ns = _time_passes(parsers[name], lines, repeat) / (repeat * len(lines))
                if round:
                    samples[group][name].append(ns)
    return {g: _summary(groups[g], _ratios(times)) for g, times in samples.items()}


def _time_passes(parse: Parser, lines: list[bytes], repeat: int) -> int:
    start = time.perf_counter_ns()
    for _ in range(repeat):
        run_pass(parse, lines)
    return time.perf_counter_ns() - start


def _ratios(times: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """Per contender: median cost per message, median of the per-round ratios to the baseline."""
    base = times[BASELINE]
    return {
        name: (statistics.median(t), statistics.median(a / b for a, b in zip(t, base, strict=True)))
        for name, t in times.items()
    }


def _summary(lines: list[bytes], figures: dict[str, tuple[float, float]]) -> dict[str, Any]:
    contenders = {n: {"per_message": c, "ratio": r} for n, (c, r) in figures.items()}
    return {"messages": len(lines), "bytes": sum(map(len, lines)), "contenders": contenders}


def callgrind(
    names: list[str], groups: dict[str, list[bytes]], passes: tuple[int, int], keep: Path | None
) -> Results:
    """Instructions per message of each contender, per group, from callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        results = {}
        for index, (group, lines) in enumerate(groups.items()):
            path = folder / f"group{index}.jsonl"
            path.write_bytes(b"".join(line + b"\n" for line in lines))
            per_pass = {name: callgrind_per_pass(name, path, passes, folder) for name in names}
            figures = {n: (i / len(lines), i / per_pass[BASELINE]) for n, i in per_pass.items()}
            results[group] = _summary(lines, figures)
    return results


def callgrind_per_pass(name: str, path: Path, passes: tuple[int, int], folder: Path) -> float:
    low, high = (_instructions(name, path, count, folder) for count in passes)
    return (high - low) / (passes[1] - passes[0])


def _instructions(name: str, path: Path, passes: int, folder: Path) -> int:
    out = folder / f"callgrind.{name}.{path.stem}.{passes}.out"
    print(f"callgrind: {name} on {path.name}, {passes} passes", file=sys.stderr)
    return count_instructions([str(CHILD), name, str(path), str(passes)], out)


def count_instructions(script_and_args: list[str], out: Path) -> int:
    """The instructions callgrind counts for ``python SCRIPT ARGS...``."""
    # A fixed hash seed, and no .pyc written by the first run only: both runs start alike.
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    subprocess.run([*command, sys.executable, *script_and_args], env=env, check=True,
                   capture_output=True)
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no instruction total in {out}")


def valgrind_missing() -> bool:
    if shutil.which("valgrind"):
        return False
    print("callgrind measurement skipped: valgrind is not installed (not on PATH)")
    return True


def print_table(report: dict[str, Any]) -> None:
    wall = report["mode"] == "wall-clock"
    unit = "ns/msg" if wall else "instr/msg"
    print(f"{report['mode']} on {report['corpus']}, Python {report['python']}")
    print(f"  {'contender':<16} {unit:>10} {'MB/s' if wall else '':>8} {'vs ' + BASELINE:>16}")
    for group, result in report["groups"].items():
        print(f"{group}: {result['messages']} messages, {result['bytes'] / 1e6:.2f} MB")
        for name, figures in result["contenders"].items():
            per_message, ratio = figures["per_message"], figures["ratio"]
            speed = result["bytes"] / result["messages"] / per_message * 1e3  # bytes/ns = GB/s
            mbps = f"{speed:8.0f}" if wall else ""
            print(f"  {name:<16} {per_message:10.0f} {mbps:>8} {ratio:15.2f}x")


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    print(f"measuring {describe()}")
    if args.callgrind and valgrind_missing():
        return 0
    groups = workloads(
        load_corpus(args.file),
        args.groups or (CALLGRIND_GROUPS if args.callgrind else None),
        long_texts=args.file is None,
    )
    parsers = available([BASELINE, *(n for n in args.contenders if n != BASELINE)])
    if args.callgrind:
        results = callgrind(list(parsers), groups, tuple(args.passes), args.keep)
    else:
        results = wall_clock(parsers, groups, args.rounds)
    report = {
        "mode": "callgrind" if args.callgrind else "wall-clock",
        "corpus": str(args.file or "generated corpus (rpcline.corpus defaults)"),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "build": describe(),
        "groups": results,
    }
    print_table(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, help=".jsonl corpus (default: generated)")
    parser.add_argument(
        "--contenders", nargs="+", choices=list(CONTENDERS), default=list(CONTENDERS)
    )
    parser.add_argument(
        "--groups", nargs="+", choices=[*GROUPS, *LONG_TEXTS], help="message classes"
    )
    parser.add_argument("--rounds", type=int, default=20, help="wall-clock rounds (default 20)")
    parser.add_argument(
        "--json",
        type=Path,
        nargs="?",
        const=DEFAULT_JSON,
        help=f"write results (default {DEFAULT_JSON})",
    )
    parser.add_argument("--callgrind", action="store_true", help="count instructions instead")
    parser.add_argument("--passes", type=int, nargs=2, default=[1, 4], metavar=("LOW", "HIGH"))
    parser.add_argument("--keep", type=Path, help="keep callgrind outputs in this folder")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
