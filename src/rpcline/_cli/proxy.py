"""``rpcline proxy``: the relay of ``rpcline.proxy`` on the proxy's own stdin and stdout."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from rpcline._cli.shared import HelpFormatter, Outcome, epilog, seconds

DESCRIPTION = """\
Start COMMAND (a stdio JSON-RPC / MCP server) and relay newline-delimited JSON-RPC
between this process's stdin/stdout (the client) and the server's, byte for byte.
Refused client requests are answered; requests still pending when the server exits,
or whose answer is refused, get a -32000 error naming the cause; nothing waits
forever. Logs and a summary go to stderr."""

STATUS = """\
N  the server's exit status (128 + N when signal N ended it)
2  COMMAND cannot start, the record cannot be written, or the command line is wrong"""

# Aimed at the proxy alone (kill PID): passed on. The server shares the proxy's process
# group, so a terminal's Ctrl-C (SIGINT to the group) reaches it directly; the proxy only
# stays, to relay the server's last words and exit with its status.
FORWARDED = (signal.SIGTERM, signal.SIGHUP)


def add_parser(commands: Any, positive: Any) -> None:
    """The ``proxy`` subcommand, on the ``rpcline`` command's subparsers."""
    proxy = commands.add_parser(
        "proxy", help="relay a stdio MCP server, forwarding bytes, never leaving a caller hanging",
        description=DESCRIPTION, formatter_class=HelpFormatter,
        epilog=epilog(STATUS, "rpcline proxy -- python -m my_mcp_server",
                      "rpcline proxy --record session -- python -m my_mcp_server"),
    )
    proxy.add_argument("--max-line-bytes", type=positive, default=None, metavar="N",
                       help="longest line either way (default: 64 MiB; SDK sessions carry "
                            "results of 20 MB and more)")
    proxy.add_argument("--record", metavar="PREFIX",
                       help="write PREFIX.client.jsonl and PREFIX.server.jsonl: every byte "
                            "each side sent")
    proxy.add_argument("--drain-timeout", type=seconds, default=10.0, metavar="S",
                       help="after the client's EOF, seconds to wait for pending answers")
    proxy.add_argument("--max-pending", type=positive, default=None, metavar="N",
                       help="requests without an answer held each way; one more is answered "
                            "with an error (default: 10000)")
    proxy.add_argument("--max-pending-bytes", type=positive, default=None, metavar="N",
                       help="what the ids of those requests may take in all, each way; one "
                            "more is answered with an error (default: 16 MiB)")
    proxy.add_argument("--kill-after", type=seconds, default=None, metavar="S",
                       help="seconds from SIGTERM to SIGKILL for a server that stays "
                            "(default: 2)")
    proxy.add_argument("--otel", action="store_true",
                       help="OpenTelemetry spans and metrics of each call, by the MCP semantic "
                            "conventions, exported as the OTEL_* variables say (OTLP over "
                            "HTTP by default); needs the otel extra")
    proxy.add_argument("--quiet", "-q", action="store_true",
                       help="no summary on stderr at exit (logs of refused lines remain)")
    proxy.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]",
                       help="the server to start and its arguments, after --")
    proxy.set_defaults(run=run)


def run(args: argparse.Namespace, outcome: Outcome) -> int:
    del outcome  # the proxy's status is its server's
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("rpcline proxy: no server command (rpcline proxy -- COMMAND [ARG...])",
              file=sys.stderr)
        return 2
    setup = None
    if args.otel:
        from rpcline._cli import serve_otel

        why = serve_otel.refused(True, False)
        if why is not None:
            print(f"rpcline proxy: {why}", file=sys.stderr)
            return 2
        setup = serve_otel.setup(True, False)
    import asyncio  # here, not above: the other commands need no event loop

    try:
        return asyncio.run(_main(command, args, None if setup is None else setup.hooks))
    finally:
        if setup is not None:
            setup.shutdown()  # the spans and metrics not exported yet


async def _main(command: list[str], args: argparse.Namespace, hooks: Any) -> int:
    import asyncio

    from rpcline import proxy

    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, lambda: None)
    reader, writer = await proxy.open_stdio()
    try:
        summary = await proxy.relay(
            command, reader, writer,
            max_line_bytes=args.max_line_bytes or proxy.DEFAULT_MAX_LINE_BYTES,
            max_pending=args.max_pending or proxy.DEFAULT_MAX_PENDING,
            max_pending_bytes=args.max_pending_bytes or proxy.DEFAULT_MAX_PENDING_BYTES,
            record=args.record, drain_timeout=args.drain_timeout,
            kill_after=proxy.DEFAULT_KILL_AFTER if args.kill_after is None else args.kill_after,
            forward_signals=FORWARDED, hooks=hooks)
    except OSError as error:  # the command could not start, or the record cannot be opened
        records = proxy.record_paths(args.record) if args.record is not None else ()
        what = (f"cannot write {error.filename}" if error.filename in records
                else f"cannot run {command[0]}")
        print(f"rpcline proxy: {what}: {error.strerror or error}", file=sys.stderr)
        return 2
    finally:
        await proxy.close_stdio(writer, args.drain_timeout)
    if not args.quiet:
        print(f"rpcline proxy: {summary}", file=sys.stderr)
    assert summary.returncode is not None
    return summary.returncode
