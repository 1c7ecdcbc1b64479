"""``rpcline bench`` and ``rpcline sample``: the generated corpus, measured or written out."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import Any

import orjson

import rpcline
from rpcline import corpus
from rpcline._cli.rounds import Timing, interleaved
from rpcline._build_info import describe
from rpcline._cli.inputs import STDIN, Source, display, hint_once, progress_bar, sources
from rpcline._cli.shared import (
    HelpFormatter,
    Outcome,
    epilog,
    fraction,
    integer,
    positive_int,
)

DEFAULT_ROUNDS = 15
# Below these, bench warns that its figures are not to be trusted: a pass shorter than a
# millisecond is dominated by the loop and the timer (25 log lines once read "11x faster"),
# and a middle half of the passes wider than a tenth of their median says the machine
# was busy enough to move the median itself.
MIN_PASS_SECONDS = 1e-3
MAX_SPREAD = 0.10
DEFAULT_SAMPLE_COUNT = 1000

BENCH_DESCRIPTION = """\
Measure rpcline.parse and rpcline.route against a bare orjson.loads on the same lines,
in interleaved rounds from one Python loop, and print the median pass of each with the
fastest and slowest (a warning follows when the input is too small or the passes too far
apart to trust). FILE is loaded whole first (blank lines dropped); without FILE, piped
or redirected standard input is measured, else the embedded generated corpus. On a
terminal, a progress bar on stderr follows the loading and the rounds (with the progress
extra: tqdm)."""

BENCH_STATUS = """\
0  measured
2  FILE could not be read or holds no line, or the command line is wrong"""

SAMPLE_DESCRIPTION = """\
Write N lines of generated MCP traffic to stdout, as they are generated (any N runs in
constant memory). Some lines are deliberately bad, as a peer must refuse them: log
output, broken JSON, rule violations. Without --bad-fraction they follow the corpus's own
schedule, about 3% (one line in 33): the same lines, for the same seed, as the corpus
`rpcline bench` measures. --bad-fraction F instead makes each line bad with probability
F. The same N, seed and F always give the same bytes."""

SAMPLE_STATUS = """\
0  written (also when the reader of stdout left early)
2  the command line is wrong"""


def add_parsers(commands: Any) -> None:
    """The ``bench`` and ``sample`` subcommands, on the ``rpcline`` command's subparsers."""
    bench = commands.add_parser(
        "bench", help="throughput of parse and route against orjson.loads",
        description=BENCH_DESCRIPTION, formatter_class=HelpFormatter,
        epilog=epilog(BENCH_STATUS, "rpcline bench                      # the generated corpus",
                      "rpcline bench --rounds 5 traffic.jsonl --json",
                      "zcat traffic.jsonl.gz | rpcline bench -"),
    )
    bench.add_argument("file", nargs="?", metavar="FILE",
                       help="a .jsonl file, - for standard input (default: standard input "
                            "when it is a pipe or a file, else the embedded generated "
                            f"corpus, {corpus.DEFAULT_SIZE:,} lines)")
    bench.add_argument("--rounds", type=positive_int, default=DEFAULT_ROUNDS, metavar="N",
                       help="timed passes of each contender; the median is reported")
    bench.add_argument("--json", action="store_true",
                       help="print the figures as one JSON document")
    bench.set_defaults(run=run_bench)

    sample = commands.add_parser(
        "sample", help="write N lines of generated MCP traffic, some deliberately bad",
        description=SAMPLE_DESCRIPTION, formatter_class=HelpFormatter,
        epilog=epilog(SAMPLE_STATUS,
                      "rpcline sample 1000 | rpcline check    # exits 1, by design",
                      "rpcline sample 10000 --bad-fraction 0 > clean.jsonl    # about 7 MB"),
    )
    sample.add_argument("count", nargs="?", type=positive_int, default=DEFAULT_SAMPLE_COUNT,
                        metavar="N", help="how many lines")
    sample.add_argument("--seed", type=integer, default=corpus.DEFAULT_SEED,
                        help="the random seed: the same seed, the same lines")
    sample.add_argument("--bad-fraction", type=fraction, default=None, metavar="F",
                        help="the share of bad lines, from 0 to 1 (default: about 0.03, "
                             "the corpus's own schedule)")
    sample.set_defaults(run=run_sample)


def run_sample(args: argparse.Namespace, outcome: Outcome) -> int:
    write = sys.stdout.buffer.write
    for _, line in corpus.iter_labelled(args.count, args.seed, args.bad_fraction):
        write(line + b"\n")
    return outcome.exit_status()


def run_bench(args: argparse.Namespace, outcome: Outcome) -> int:
    if args.file is None and _stdin_holds_data():
        args.file = STDIN  # `cat FILE | rpcline bench`, as check and classify read it
    if args.file is None:
        lines = corpus.generate(corpus.DEFAULT_SIZE, corpus.DEFAULT_SEED)
        source = f"generated corpus (seed {corpus.DEFAULT_SEED})"
    else:
        lines = []
        for opened in sources([args.file], outcome, show_progress=False):  # _load's bar
            lines = _load(opened)
        if outcome.unreadable:
            return outcome.exit_status()  # stderr said why
        source = "<stdin>" if args.file == STDIN else display(args.file)
    if not lines:
        print(f"rpcline: nothing to measure: {source} has no lines", file=sys.stderr)
        return 2
    contenders = {
        "orjson.loads": orjson.loads,
        f"rpcline.parse ({rpcline.IMPLEMENTATION})": rpcline.parse,
        f"rpcline.route ({rpcline.IMPLEMENTATION})": rpcline.route,  # no params/result decoded
    }
    if rpcline.IMPLEMENTATION != "python":
        from rpcline._core import message_py  # measured here only: `rpcline check` loads no twin

        contenders["rpcline.parse (python twin)"] = message_py.parse
    passes = (args.rounds + 1) * len(contenders)  # one warm-up round, then the timed ones
    with progress_bar(passes, "measuring", unit="pass") as bar:
        timings = interleaved(contenders, lines, args.rounds,
                              after_pass=None if bar is None else bar.update)
    warnings = _untrustworthy(timings)
    build = describe()  # a figure means something only for the build it was taken on
    if args.json:
        document = _document(source, lines, args.rounds, timings)
        sys.stdout.buffer.write(
            orjson.dumps({**document, "build": build, "warnings": warnings}) + b"\n")
    else:
        print(f"measuring {build}")
        _print_table(source, lines, args.rounds, timings)
        for warning in warnings:
            print(f"\nwarning: {warning}")
    return outcome.exit_status()


def _stdin_holds_data() -> bool:
    """Whether stdin is a pipe or a redirected file: data given to bench, not a terminal
    or /dev/null (a shell script's or CI's stdin), which leave bench its generated corpus."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # closed, or replaced by a non-file
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _untrustworthy(timings: list[Timing]) -> list[str]:
    """Why the figures may mislead: passes too short to time, or rounds too far apart."""
    warnings = []
    fastest = min(timings, key=lambda t: t.seconds_per_pass)
    shortest = fastest.seconds_per_pass
    if shortest < MIN_PASS_SECONDS:
        warnings.append(f"a pass of {fastest.name} takes {shortest * 1e6:,.0f} µs, under "
                        f"{MIN_PASS_SECONDS * 1e3:g} ms: too little input to time, the "
                        "ratios are mostly loop and timer noise; measure more lines")
    widest = max(timings, key=lambda t: t.spread)
    if widest.spread > MAX_SPREAD:
        warnings.append(f"the middle half of the passes of {widest.name} ranges over "
                        f"{widest.spread:.0%} of their median (more than {MAX_SPREAD:.0%}): "
                        "the machine was busy; measure again, with more --rounds")
    return warnings


def _load(source: Source) -> list[bytes]:
    """The non-blank lines of ``source``, read with a progress bar on a terminal."""
    lines: list[bytes] = []
    parts: list[bytes] = []
    size = source.size()
    with progress_bar(size, f"loading {source.name}") as bar:
        if bar is None:
            hint_once(size)
        source.bar = bar
        for chunk in source.chunks():  # pieces of at most 64 KiB: join a long line's
            parts.append(chunk)
            if chunk.endswith(b"\n"):
                line = b"".join(parts).rstrip(b"\r\n")
                parts.clear()
                if line.strip():
                    lines.append(line)
        if parts and (line := b"".join(parts)).strip():
            lines.append(line)
    return lines


def _document(source: str, lines: list[bytes], rounds: int,
              timings: list[Timing]) -> dict[str, object]:
    floor = timings[0].seconds_per_pass
    rows = [{"contender": t.name, "ns_per_message": t.ns_per_message,
             "messages_per_second": t.messages_per_second,
             "ns_per_message_min": t.fastest * 1e9 / t.messages,
             "ns_per_message_max": t.slowest * 1e9 / t.messages,
             "megabytes_per_second": t.megabytes_per_second,
             "ratio_to_orjson": t.seconds_per_pass / floor} for t in timings]
    return {"source": source, "messages": len(lines), "rounds": rounds, "contenders": rows}


def _print_table(source: str, lines: list[bytes], rounds: int, timings: list[Timing]) -> None:
    floor = timings[0].seconds_per_pass
    size = sum(map(len, lines))
    print(f"{source}: {len(lines):,} messages, {size:,} bytes, "
          f"wall clock: median (and min-max) of {rounds} interleaved rounds\n")
    width = max(len(t.name) for t in timings)
    spreads = [f"{t.fastest * 1e9 / t.messages:,.0f}-{t.slowest * 1e9 / t.messages:,.0f}"
               for t in timings]
    spread_width = max(len("min-max"), *map(len, spreads))
    print(f"{'contender':<{width}}  {'messages/s':>12}  {'MB/s':>8}  {'ns/message':>10}  "
          f"{'min-max':>{spread_width}}  vs {timings[0].name}")
    for t, spread in zip(timings, spreads):
        print(f"{t.name:<{width}}  {t.messages_per_second:>12,.0f}  "
              f"{t.megabytes_per_second:>8,.1f}  {t.ns_per_message:>10,.0f}  "
              f"{spread:>{spread_width}}  {_versus(t.seconds_per_pass / floor)}")


def _versus(ratio: float) -> str:
    """A time ratio in words: ``0.25`` is "4.00x faster", ``1.4`` is "1.40x slower"."""
    if abs(ratio - 1.0) < 0.005:
        return "same"
    return f"{1 / ratio:.2f}x faster" if ratio < 1.0 else f"{ratio:.2f}x slower"
