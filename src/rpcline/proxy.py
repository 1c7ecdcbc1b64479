"""A stdio JSON-RPC / MCP relay that forwards bytes and never lets a caller hang.

``await relay(command, reader, writer)`` starts ``command`` as a child process and
relays newline-delimited JSON-RPC between the client (``reader``, ``writer``) and the
child's stdin and stdout. ``rpcline proxy -- COMMAND`` is the same relay on the proxy's
own stdin and stdout.

- Bytes in, the same bytes out: every valid line is forwarded as it came (``route``
  classifies it without decoding its params or result); nothing is re-encoded.
- A refused client line shaped like a request is answered with ``error_response``; one
  shaped like a response (``result`` or ``error``, no ``method``) is logged, never
  answered, so that two peers cannot answer each other's errors forever.
- A server's error response with ``"id": null`` (JSON-RPC 2.0 §5) is forwarded; other
  refused server lines are logged.
- Requests are tracked by id, exactly as they came (``1`` and ``"1"`` apart, two with
  one id counted twice), each way, up to ``max_pending`` requests whose ids take up to
  ``max_pending_bytes``. A client request still pending gets a ``-32000`` error, with
  data naming the cause, when the server exits or closes its stdout ("Connection
  closed"), or answers it with a refused line ("Invalid response from the server"): the
  part of the line that can be read (all of a line that is JSON, the part before the
  first error of one that is not, the part within the limit of an over-long one) names
  the pending id and ``"jsonrpc"``, and no ``method`` (a request never answers anything;
  a line with no ``"jsonrpc"`` in it is no answer). A server request whose answer is
  refused likewise.
- Backpressure: each direction waits for its output to drain before it reads more (the
  relay's own answers included: they stop the reading of the peer they answer), so
  memory stays within about twice the line limit (the line, and the transport's copy of
  what the pipe has not taken yet) plus a constant.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Sequence

from rpcline._gateway import stdio as _stdio
from rpcline._gateway.observe import Hooks
from rpcline._gateway.record import Recorder, record_paths
from rpcline._gateway.relay import RelaySession
from rpcline._gateway.relay_types import (
    DEFAULT_KILL_AFTER, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_BYTES,
    Reader, Summary, Writer)

__all__ = ("DEFAULT_KILL_AFTER", "DEFAULT_MAX_LINE_BYTES", "DEFAULT_MAX_PENDING",
           "DEFAULT_MAX_PENDING_BYTES", "Reader", "Summary", "Writer", "close_stdio",
           "open_stdio", "record_paths", "relay")


def __dir__() -> list[str]:
    """The public names only, as ``dir(rpcline)`` gives them (imports stay out of sight)."""
    return sorted(__all__)


async def relay(
    command: Sequence[str],
    reader: Reader,
    writer: Writer,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_pending: int = DEFAULT_MAX_PENDING,
    max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
    record: str | None = None,
    drain_timeout: float = 10.0,
    kill_after: float = DEFAULT_KILL_AFTER,
    log: Callable[[str], None] | None = None,
    forward_signals: Sequence[signal.Signals] = (),
    hooks: Hooks | None = None,
) -> Summary:
    """Relay between a client and ``command`` until both sides are done.

    Raises ``OSError`` when the command cannot start, or a record file cannot be opened
    (its ``filename`` is then one of ``record_paths(record)``). ``record``, a path prefix,
    writes ``PREFIX.client.jsonl`` and ``PREFIX.server.jsonl``: every byte each side sent;
    a record that can no longer be written (a full disk) stops recording, logged once,
    and the relay goes on. ``max_pending`` requests without an answer are held each way,
    their ids taking at most ``max_pending_bytes`` (each at its size in memory); one more
    is answered with a -32000 "Too many pending requests" error and not forwarded.
    ``forward_signals`` are passed on to the server while the relay runs; a SIGTERM among
    them becomes SIGKILL ``kill_after`` seconds later if the server is still there (as
    after the drain timeout at the end). The server stays
    in the caller's process group, so that a terminal's Ctrl-C, or a client that kills the
    group (as the MCP SDK's stdio client does), reaches it without the proxy's help.
    ``log`` takes one line per event (default: stderr). ``hooks`` (``rpcline.otel.Hooks``,
    as ``StdioBridge`` takes them) are told of each client request forwarded: its start, its
    writing to the server (``child_meta``'s entries spliced into its ``params._meta``) and
    its answer; ``rpcline.otel.Telemetry().hooks()`` makes spans and metrics of them.
    """
    loop = asyncio.get_running_loop()
    summary = Summary()
    log = log or _stderr
    with Recorder(record, log) as recorder:
        session = RelaySession(command, reader, writer, max_line_bytes, max_pending,
                               max_pending_bytes, drain_timeout, kill_after, log, summary,
                               recorder, hooks)
        await session.child.start()
        for signum in forward_signals:
            loop.add_signal_handler(signum, session.forward_signal, signum)
        try:
            summary.returncode = await session.run()
        finally:
            for signum in forward_signals:
                loop.remove_signal_handler(signum)
            if session.child.transport is not None:
                session.child.transport.close()
            if session.child.stdout is not None:
                session.child.stdout.close()  # spawn's reader: its own, not the transport's
    return summary


async def open_stdio(stdin: int = 0, stdout: int = 1) -> tuple[Reader, Writer]:
    """This process's stdin and stdout as a reader and a writer for ``relay``.

    Pipes and sockets, terminals and regular files alike (``rpcline._gateway.stdio`` says how).
    """
    return await _stdio.open_stdio(stdin, stdout)


async def close_stdio(writer: Writer, timeout: float = 10.0) -> None:
    """Flush and close a writer from ``open_stdio`` (for up to ``timeout`` seconds)."""
    await _stdio.close_stdio(writer, timeout)


def _stderr(text: str) -> None:
    print(f"rpcline proxy: {text}", file=sys.stderr, flush=True)
