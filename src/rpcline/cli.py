"""The ``rpcline`` command: check, classify, bench and sample JSON-RPC / MCP traffic, proxy.

Exit status: 0 when nothing was refused, 1 when something was (check), 2 for usage
errors and unreadable files, with one line on stderr and no traceback. The subcommands
live in ``rpcline._cli``: ``check`` (check, classify), ``bench`` (bench, sample), ``proxy``
and ``serve``; ``inputs`` reads files, ``shared`` holds the rest.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import rpcline
from rpcline._cli import bench, check
from rpcline._cli.shared import HelpFormatter, Outcome, epilog, positive_int

__all__ = ("main",)


def __dir__() -> list[str]:
    """The public names only, as ``dir(rpcline)`` gives them (imports stay out of sight)."""
    return sorted(__all__)

DESCRIPTION = """\
Check, classify and bench newline-delimited JSON-RPC 2.0 / MCP traffic, write a sample
of it, relay a stdio MCP server, or serve one over Streamable HTTP. `rpcline COMMAND
--help` tells more of each."""

STATUS = """\
0  success: nothing was refused
1  check saw a refused line
2  a file could not be read, or the command line is wrong
(proxy exits with its server's status; serve ends by the signal that stopped it)"""


def main(argv: Sequence[str] | None = None) -> int:
    args, extra = build_parser().parse_known_args(argv)
    if extra:  # argparse would blame the top-level command; the sub-command's usage helps
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    outcome = Outcome()
    try:
        status = int(args.run(args, outcome))
        sys.stdout.flush()  # here, so that a reader gone at the last write is seen here
        return status
    except BrokenPipeError:  # `rpcline check big.jsonl | head -1`: the reader left
        _stdout_to_devnull()
        return outcome.exit_status()  # what was seen so far still decides
    except KeyboardInterrupt:
        return 130


def _stdout_to_devnull() -> None:
    """Python's advice for SIGPIPE: point stdout at devnull, so that the interpreter's own
    flush at exit does not raise BrokenPipeError again (and print a traceback)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpcline", description=DESCRIPTION, formatter_class=HelpFormatter,
        epilog=epilog(STATUS, "rpcline sample 1000 | rpcline check",
                      "rpcline check --json session.jsonl",
                      "rpcline proxy -- python -m my_mcp_server",
                      "rpcline serve -- python -m my_mcp_server"),
    )
    parser.add_argument(
        "--version", action="version", help="print the version and the implementation in use",
        version=f"rpcline {rpcline.__version__} ({rpcline.IMPLEMENTATION})",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     help="one of:")
    check.add_parsers(commands)
    bench.add_parsers(commands)

    from rpcline._cli import proxy, serve  # asyncio and the relay load only with them

    proxy.add_parser(commands, positive_int)
    serve.add_parser(commands, positive_int)
    for sub in commands.choices.values():  # each sub-command reports its own errors
        sub.set_defaults(parser=sub)
    return parser
