"""The ``rpcline`` command: check, classify and bench captured JSON-RPC / MCP traffic.

Exit status: 0 when nothing was refused, 1 when something was (check), 2 for usage
errors and unreadable files, with one line on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import IO, Any, BinaryIO

import orjson

import rpcline
from rpcline import _message_py, corpus
from rpcline._bench import interleaved

READ_BYTES = 64 * 1024
PROGRESS_MIN_BYTES = 32 * 1024 * 1024  # smaller files finish before a bar helps


class UsageError(Exception):
    """A problem of the command line or the files named on it: exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except UsageError as error:
        print(f"rpcline: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `rpcline classify | head`: the reader left, nothing to say
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpcline", description="Check, classify and bench JSON-RPC 2.0 / MCP traffic."
    )
    parser.add_argument(
        "--version", action="version",
        version=f"rpcline {rpcline.__version__} ({rpcline.IMPLEMENTATION})",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="report every refused line and a summary")
    check.add_argument("files", nargs="*", metavar="FILE", help="default: standard input")
    check.add_argument("--json", action="store_true", help="one JSON document for machines")
    check.add_argument("--max-line-bytes", type=_positive, default=16 * 1024 * 1024)
    check.set_defaults(run=_check)

    classify = commands.add_parser("classify", help="one JSON line out per message in")
    classify.add_argument("files", nargs="*", metavar="FILE", help="default: standard input")
    classify.add_argument("--max-line-bytes", type=_positive, default=16 * 1024 * 1024)
    classify.set_defaults(run=_classify)

    bench = commands.add_parser("bench", help="throughput of parse and route against orjson.loads")
    bench.add_argument("file", nargs="?", metavar="FILE",
                       help="a .jsonl file; default: the embedded generated corpus")
    bench.add_argument("--rounds", type=_positive, default=15)
    bench.add_argument("--json", action="store_true", help="one JSON document for machines")
    bench.set_defaults(run=_bench)

    sample = commands.add_parser("sample", help="write N lines of the generated corpus")
    sample.add_argument("count", nargs="?", type=_positive, default=1000, metavar="N")
    sample.add_argument("--seed", type=int, default=corpus.DEFAULT_SEED)
    sample.set_defaults(run=_sample)

    from rpcline import _proxy_cli  # asyncio and the relay load only with the command

    _proxy_cli.add_parser(commands, _positive)
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {value}")
    return value


# Reading: physical line numbers (blank lines counted) over the stream parser.


def _numbered(file: BinaryIO, max_line_bytes: int) -> Iterator[tuple[int, rpcline.Incoming]]:
    """Every message with the 1-based number of the physical line it came from."""
    parser = rpcline.StreamParser(max_line_bytes)
    number = 1
    # readline(n) returns at most n bytes: a huge line arrives in pieces, memory stays bounded.
    while chunk := file.readline(READ_BYTES):
        for message in parser.feed(chunk):
            yield number, message
        if chunk.endswith(b"\n"):
            number += 1
    for message in parser.close():
        yield number, message


def _inputs(names: Sequence[str]) -> Iterator[tuple[str, BinaryIO]]:
    if not names:
        yield "<stdin>", sys.stdin.buffer
        return
    for name in names:
        try:
            file = open(name, "rb")  # noqa: SIM115 - closed below, after the caller's loop
        except OSError as error:
            raise UsageError(f"cannot read {name}: {error.strerror or error}") from None
        with file:
            yield name, _with_progress(file, name)


def _with_progress(file: BinaryIO, name: str) -> BinaryIO:
    size = os.fstat(file.fileno()).st_size
    if size < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        return file
    try:
        from tqdm import tqdm
    except ImportError:
        print(f"rpcline: reading {name} ({size:,} bytes)", file=sys.stderr)
        return file
    bar = tqdm(total=size, unit="B", unit_scale=True, desc=name, leave=False)
    return _ProgressFile(file, bar)


class _ProgressFile:
    """A file whose reads advance a progress bar."""

    def __init__(self, file: BinaryIO, bar: Any) -> None:
        self._file, self._bar = file, bar

    def readline(self, size: int = -1) -> bytes:
        line = self._file.readline(size)
        self._bar.update(len(line))
        if not line:
            self._bar.close()
        return line


def _describe(number: int, message: rpcline.Incoming) -> dict[str, object]:
    """One message as the JSON object ``classify`` prints."""
    match message:
        case rpcline.Request(id, method, _):
            return {"line": number, "kind": "request", "id": id, "method": method}
        case rpcline.Notification(method, _):
            return {"line": number, "kind": "notification", "method": method}
        case rpcline.ClientResponse(id, _):
            return {"line": number, "kind": "response", "id": id}
        case rpcline.Refused(id, error):
            return {"line": number, "kind": "refused", "id": id, "code": error.code,
                    "message": error.message, "reason": error.reason}
    raise TypeError(f"not a result of parse: {message!r}")


# Commands.


def _classify(args: argparse.Namespace) -> int:
    out = sys.stdout.buffer
    for _, file in _inputs(args.files):
        for number, message in _numbered(file, args.max_line_bytes):
            out.write(orjson.dumps(_describe(number, message)) + b"\n")
        out.flush()
    return 0


def _check(args: argparse.Namespace) -> int:
    kinds: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    refusals: list[dict[str, object]] = []
    for name, file in _inputs(args.files):
        for number, message in _numbered(file, args.max_line_bytes):
            row = _describe(number, message)
            kinds[str(row["kind"])] += 1
            if isinstance(message, rpcline.Refused):
                codes[f"{row['code']} {row['message']}"] += 1
                row = {"file": name, **row,
                       "response": orjson.loads(rpcline.error_response(message))}
                refusals.append(row)
                if not args.json:
                    _print_refusal(row)
            elif "method" in row:
                methods[str(row["method"])] += 1
    if args.json:
        report = {"messages": sum(kinds.values()), "kinds": kinds, "refusals_by_code": codes,
                  "top_methods": dict(methods.most_common(10)), "refused": refusals}
        sys.stdout.buffer.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        _print_summary(kinds, codes, methods)
    return 1 if refusals else 0


def _print_refusal(row: dict[str, Any]) -> None:
    print(f"{row['file']}:{row['line']}: {row['code']} {row['message']}: {row['reason']}")
    print(f"    answer: {orjson.dumps(row['response']).decode()}")


def _print_summary(kinds: Counter[str], codes: Counter[str], methods: Counter[str]) -> None:
    total = sum(kinds.values())
    print(_table("messages", [(kind, kinds[kind]) for kind in
                              ("request", "notification", "response", "refused")]
                 + [("total", total)]))
    if codes:
        print(_table("refusals by code", codes.most_common()))
    if methods:
        print(_table("top methods", methods.most_common(10)))


def _table(title: str, rows: list[tuple[str, int]]) -> str:
    width = max(len(label) for label, _ in rows)
    counts = [f"{count:,}" for _, count in rows]
    count_width = max(map(len, counts))
    lines = [f"\n{title}"] + [
        f"  {label:<{width}}  {count:>{count_width}}" for (label, _), count in zip(rows, counts)
    ]
    return "\n".join(lines)


def _bench(args: argparse.Namespace) -> int:
    if args.file:
        try:
            with open(args.file, "rb") as file:
                lines = [line for line in file.read().splitlines() if line.strip()]
        except OSError as error:
            raise UsageError(f"cannot read {args.file}: {error.strerror or error}") from None
        source = args.file
    else:
        lines = corpus.generate(corpus.DEFAULT_SIZE, corpus.DEFAULT_SEED)
        source = f"generated corpus (seed {corpus.DEFAULT_SEED})"
    if not lines:
        raise UsageError("nothing to measure: the file has no lines")
    contenders = {
        "orjson.loads": orjson.loads,
        f"rpcline.parse ({rpcline.IMPLEMENTATION})": rpcline.parse,
        f"rpcline.route ({rpcline.IMPLEMENTATION})": rpcline.route,  # no params/result decoded
    }
    if rpcline.IMPLEMENTATION != "python":
        contenders["rpcline.parse (python twin)"] = _message_py.parse
    timings = interleaved(contenders, lines, args.rounds)
    floor = timings[0].seconds_per_pass
    if args.json:
        rows = [{"contender": t.name, "ns_per_message": t.ns_per_message,
                 "messages_per_second": t.messages_per_second,
                 "megabytes_per_second": t.megabytes_per_second,
                 "ratio_to_orjson": t.seconds_per_pass / floor} for t in timings]
        report = {"source": source, "messages": len(lines), "rounds": args.rounds,
                  "contenders": rows}
        sys.stdout.buffer.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    size = sum(map(len, lines))
    print(f"{source}: {len(lines):,} messages, {size:,} bytes, "
          f"median of {args.rounds} interleaved rounds\n")
    width = max(len(t.name) for t in timings)
    print(f"{'contender':<{width}}  {'messages/s':>12}  {'MB/s':>8}  {'ns/message':>10}  ratio")
    for t in timings:
        print(f"{t.name:<{width}}  {t.messages_per_second:>12,.0f}  "
              f"{t.megabytes_per_second:>8,.1f}  {t.ns_per_message:>10,.0f}  "
              f"{t.seconds_per_pass / floor:.2f}x")
    return 0


def _sample(args: argparse.Namespace) -> int:
    out: IO[bytes] = sys.stdout.buffer
    for line in corpus.generate(args.count, args.seed):
        out.write(line + b"\n")
    out.flush()
    return 0
