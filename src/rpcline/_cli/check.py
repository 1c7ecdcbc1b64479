"""``rpcline check`` and ``rpcline classify``: every message of captured traffic, classified.

Both run in constant memory whatever the input's size: check keeps counters and the first
``--max-errors`` refusals only, classify writes each line's verdict as soon as it has it.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import orjson

import rpcline
from rpcline._cli.inputs import STDIN, Terminal, sources
from rpcline._gateway.relay_types import DEFAULT_MAX_LINE_BYTES as PROXY_MAX_LINE_BYTES
from rpcline._cli.shared import (
    HelpFormatter,
    Outcome,
    epilog,
    non_negative_int,
    positive_int,
)

# The proxy's: a session that `rpcline proxy --record` relayed checks clean as recorded.
DEFAULT_MAX_LINE_BYTES = PROXY_MAX_LINE_BYTES
DEFAULT_MAX_ERRORS = 100
TOP_METHODS = 10
# Distinct method names counted one by one; past this many, hostile input (a new name on
# every line) would grow the counter without bound, so the rest share one bucket.
MAX_METHOD_NAMES = 10_000
OTHER_METHODS = "(other methods)"
KINDS = ("request", "notification", "response", "refused")
SIDES = ("client", "server")
SERVER_RECORD = ".server.jsonl"  # rpcline proxy --record PREFIX: PREFIX.server.jsonl

CHECK_DESCRIPTION = """\
Classify every line of FILE (JSON-RPC 2.0 / MCP traffic, one message a line) and report
the lines a peer must refuse, each with the error response a server would send, then a
summary: messages by kind, refusals by error code, the most frequent methods. Line
numbers are physical lines, blank lines counted. Memory stays constant: only the first
--max-errors refusals are listed; the summary counts them all."""

CHECK_STATUS = """\
0  nothing was refused
1  at least one line was refused (also when the reader of stdout left early)
2  a file could not be read (reported on stderr, skipped; the others are checked and
   summarised), or the command line is wrong"""

CLASSIFY_DESCRIPTION = """\
Write one compact JSON object per message in FILE, as soon as it is read: "line" (the
physical line, per file), "kind" (request, notification, response, refused), "id",
"method"; error responses (a non-null "error") add "error": true and their "code";
refusals add "code", "message" and "reason". With several files, each object names its "file"."""

CLASSIFY_STATUS = """\
0  every file was read (refused lines are output, not failures: use check for a verdict)
2  a file could not be read (reported on stderr, skipped), or the command line is wrong"""


def add_parsers(commands: Any) -> None:
    """The ``check`` and ``classify`` subcommands, on the ``rpcline`` command's subparsers."""
    check = commands.add_parser(
        "check", help="report refused lines and a summary; exit 1 if any line is refused",
        description=CHECK_DESCRIPTION, formatter_class=HelpFormatter,
        epilog=epilog(CHECK_STATUS, "rpcline sample 1000 | rpcline check   # exits 1: ~3% bad",
                      "rpcline check --json session.jsonl | jq .kinds",
                      "rpcline check --jsonl big.jsonl | head -5"),
    )
    _add_files(check)
    output = check.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="print the report as one compact JSON document: the counters, "
                             '"refused" (the listed refusals) and "truncated" (how many '
                             "more there were)")
    output.add_argument("--jsonl", action="store_true",
                        help="print each refusal as one JSON object as soon as it is found "
                             "(every one, whatever --max-errors says), and no summary")
    check.add_argument("--max-errors", type=non_negative_int, default=DEFAULT_MAX_ERRORS,
                       metavar="N", help="list the first N refusals; count the rest")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="list no refusal, print only the summary (as --max-errors 0)")
    _add_from(check)
    _add_max_line_bytes(check)
    check.set_defaults(run=run_check)

    classify = commands.add_parser(
        "classify", help="one JSON line out per message in",
        description=CLASSIFY_DESCRIPTION, formatter_class=HelpFormatter,
        epilog=epilog(CLASSIFY_STATUS, "rpcline classify session.jsonl | jq -c 'select(.error)'",
                      "rpcline classify -q a.jsonl b.jsonl > messages.jsonl"),
    )
    _add_files(classify)
    classify.add_argument("-q", "--quiet", action="store_true",
                          help="leave refused lines out: output only requests, "
                               "notifications and responses")
    _add_from(classify)
    _add_max_line_bytes(classify)
    classify.set_defaults(run=run_classify)


def _add_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="files to read in turn; - is standard input "
                             "(default: standard input)")


def _add_max_line_bytes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-line-bytes", type=positive_int, default=DEFAULT_MAX_LINE_BYTES,
                        metavar="N", help="a longer line is refused as a parse error "
                                          "without being held in memory")


def _add_from(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="side", choices=SIDES, default=None,
                        help="whose lines these are. client: a server reads them, by the "
                             "card. server: a client reads them; JSON-RPC 2.0 error "
                             'responses with "id": null (a server\'s answer to an unreadable '
                             "line) are valid, and no answer is proposed. Default: server "
                             f"for files named *{SERVER_RECORD} (as rpcline proxy --record "
                             "writes them), else client")


def side_of(name: str, side: str | None) -> str:
    """Whose lines the file holds: as --from says, else as the proxy's record names it."""
    if side is not None:
        return side
    return "server" if name.endswith(SERVER_RECORD) else "client"


def reader(side: str) -> Callable[[bytes], rpcline.Incoming]:
    """How a line is classified: by the card (``parse``), or as a client reads a server."""
    return read_from_server if side == "server" else rpcline.parse


def read_from_server(line: bytes) -> rpcline.Incoming:
    """``parse``, except that a server's JSON-RPC 2.0 §5 answer to a line it could not read
    (``"id": null``, an ``error``, no ``method``) is a response with no id, not a refusal.

    The card refuses a null id because it describes what a server receives; a client
    reading a server receives such answers legitimately. The test is route's documented
    reading of a server's output (docs/gateways.md), and the line must be valid once its
    null is an id, so a null id does not excuse another fault.
    """
    message = rpcline.parse(line)
    if type(message) is rpcline.Refused and message.id is None and _answers_unreadable(line):
        return rpcline.ClientResponse(None, orjson.loads(line))
    return message


def _answers_unreadable(line: bytes) -> bool:
    r = rpcline.route(line)
    if r.kind != "refused" or r.id_span is None or r.error_span is None \
            or r.method_span is not None:
        return False
    start, end = r.id_span
    return line[start:end] == b"null" and \
        rpcline.route(line[:start] + b"0" + line[end:]).kind == "response"


def describe(number: int, message: rpcline.Incoming) -> dict[str, object]:
    """One message as the JSON object ``classify`` prints."""
    match message:
        case rpcline.Request(id, method, _):
            return {"line": number, "kind": "request", "id": id, "method": method}
        case rpcline.Notification(method, _):
            return {"line": number, "kind": "notification", "method": method}
        case rpcline.ClientResponse(id, body):
            row: dict[str, object] = {"line": number, "kind": "response", "id": id}
            # A null error is no error (docs/rules.md): the line is a response all the same.
            if body.get("error") is not None:
                row["error"] = True
                row["code"] = _error_code(body["error"])
            return row
        case rpcline.Refused(id, error):
            return {"line": number, "kind": "refused", "id": id, "code": error.code,
                    "message": error.message, "reason": error.reason}
    raise TypeError(f"not a result of parse: {message!r}")


def _error_code(error: object) -> int | None:
    # parse checks the envelope only: a response's error member may be any JSON value.
    code = error.get("code") if isinstance(error, dict) else None
    return code if type(code) is int else None


def hint_if_waiting_on_a_terminal(command: str, files: list[str]) -> None:
    """Say on stderr that standard input is read, when it is a terminal: without a file
    the command would otherwise wait there in silence (as jq and rg say too)."""
    if STDIN in (files or [STDIN]) and sys.stdin.isatty():
        sys.stderr.write(f"rpcline {command}: reading lines from standard input (the "
                         f"terminal); end with Ctrl-D, or name a file: rpcline {command} FILE\n")
        sys.stderr.flush()


def run_classify(args: argparse.Namespace, outcome: Outcome) -> int:
    terminal = Terminal.current
    several = len(args.files) > 1
    hint_if_waiting_on_a_terminal("classify", args.files)
    for source in sources(args.files, outcome):
        classify = reader(side_of(source.name, args.side))
        for number, message in source.messages(args.max_line_bytes, classify):
            if args.quiet and isinstance(message, rpcline.Refused):
                continue
            row = describe(number, message)
            if several:
                row = {"file": source.name, **row}
            terminal.line(orjson.dumps(row))
    return outcome.exit_status()


class CheckReport:
    """Counters over every message, and the first ``listed`` refusals in full."""

    def __init__(self, listed: int) -> None:
        self.kinds: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.methods: Counter[str] = Counter()
        self.listed = listed
        self.refused: list[dict[str, object]] = []
        self.truncated = 0  # refusals seen but not listed
        self.unreadable: list[dict[str, str]] = []  # files skipped, each with its reason
        self.sides: dict[str, list[str]] = {}  # the files read, by whose lines they hold

    def count(self, message: rpcline.Incoming) -> None:
        match message:
            case rpcline.Request(_, method, _) | rpcline.Notification(method, _):
                self.kinds["request" if type(message) is rpcline.Request
                           else "notification"] += 1
                if method in self.methods or len(self.methods) < MAX_METHOD_NAMES:
                    self.methods[method] += 1
                else:
                    self.methods[OTHER_METHODS] += 1
            case rpcline.ClientResponse():
                self.kinds["response"] += 1
            case rpcline.Refused(_, error):
                self.kinds["refused"] += 1
                self.codes[f"{error.code} {error.message}"] += 1

    def keep(self, row: dict[str, object]) -> bool:
        """Keep ``row`` for the report if there is room; count it as truncated if not."""
        if len(self.refused) < self.listed:
            self.refused.append(row)
            return True
        self.truncated += 1
        return False

    def document(self) -> dict[str, object]:
        return {"messages": sum(self.kinds.values()),
                "kinds": {kind: self.kinds[kind] for kind in KINDS},
                "refusals_by_code": dict(self.codes),
                "top_methods": dict(self.methods.most_common(TOP_METHODS)),
                "refused": self.refused, "truncated": self.truncated,
                "unreadable": self.unreadable, "from": self.sides}


def refusal_row(name: str, number: int, message: rpcline.Refused,
                answered: bool = True) -> dict[str, object]:
    """A refusal as check reports it: where, why, and the error response to send (None
    for a server's line: a client answering a server's errors could loop forever)."""
    response = orjson.loads(rpcline.error_response(message)) if answered else None
    return {"file": name, **describe(number, message), "response": response}


def run_check(args: argparse.Namespace, outcome: Outcome) -> int:
    if args.quiet and args.jsonl:
        args.parser.error("--quiet lists no refusal, --jsonl only refusals: choose one")
    terminal = Terminal.current
    report = CheckReport(0 if args.quiet else args.max_errors)
    text = not (args.json or args.jsonl)
    hint_if_waiting_on_a_terminal("check", args.files)
    for source in sources(args.files, outcome, sniff_binary=True):
        side = side_of(source.name, args.side)
        report.sides.setdefault(side, []).append(source.name)
        for number, message in source.messages(args.max_line_bytes, reader(side)):
            report.count(message)
            if not isinstance(message, rpcline.Refused):
                continue
            outcome.refused = True
            row = refusal_row(source.name, number, message, answered=side == "client")
            if args.jsonl:
                terminal.line(orjson.dumps(row))
            elif report.keep(row) and text:
                _print_refusal(terminal, row)
    report.unreadable = outcome.unreadable
    if args.json:
        terminal.line(orjson.dumps(report.document()))
    elif text and report.sides:  # no summary of input that was never read
        _print_summary(terminal, report, args.max_errors)
    return outcome.exit_status()


def _print_refusal(terminal: Terminal, row: dict[str, Any]) -> None:
    terminal.line(f"{row['file']}:{row['line']}: {row['code']} {row['message']}: "
                  f"{row['reason']}".encode())
    if row["response"] is not None:
        terminal.line(b"    answer: " + orjson.dumps(row["response"]))


def _print_summary(terminal: Terminal, report: CheckReport, max_errors: int) -> None:
    kinds = [(kind, report.kinds[kind]) for kind in KINDS]
    lines = [f"\n{SIDE_TITLES[side]}: {', '.join(names)}" for side, names in report.sides.items()]
    lines.append(_table("messages", [*kinds, ("total", sum(report.kinds.values()))]))
    if report.codes:
        lines.append(_table("refusals by code", report.codes.most_common()))
    if report.methods:
        lines.append(_table("top methods", report.methods.most_common(TOP_METHODS)))
    if report.truncated and report.listed:
        lines.append(f"\n{report.truncated:,} more refused lines not listed "
                     f"(--max-errors {max_errors})")
    if report.unreadable:
        count = len(report.unreadable)
        lines.append(f"\n{count} file{'s' if count > 1 else ''} not read (see stderr)")
    summary = "\n".join(lines)
    if not report.refused:  # no refusal listed above it: no blank line to set it apart
        summary = summary.lstrip("\n")
    for line in summary.splitlines():
        terminal.line(line.encode())


# Whose lines a summary counts, as --from (or the file's name) said.
SIDE_TITLES = {"client": "lines from a client (as a server reads them; refusals answered)",
         "server": "lines from a server (as a client reads them; refusals not answered)"}


def _table(title: str, rows: list[tuple[str, int]]) -> str:
    width = max(len(label) for label, _ in rows)
    counts = [f"{count:,}" for _, count in rows]
    count_width = max(map(len, counts))
    lines = [f"\n{title}"] + [
        f"  {label:<{width}}  {count:>{count_width}}" for (label, _), count in zip(rows, counts)
    ]
    return "\n".join(lines)
