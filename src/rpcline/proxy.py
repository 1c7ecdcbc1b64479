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
- Requests are tracked by id, exactly as they came (``1`` and ``"1"`` apart), each way.
  A client request still pending gets a ``-32000`` "Connection closed" error, with data
  naming the cause, when the server exits or closes its stdout, or answers it with a line
  that is refused (over-long lines keep their id: ``StreamParser``); a server request
  whose answer is refused likewise.
- Backpressure: each direction waits for its output to drain before it reads more, so
  memory stays within the line limit plus the transport buffers.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from rpcline._relay import _Recorder, _ServerPipes, _Session

__all__ = ("DEFAULT_MAX_LINE_BYTES", "Reader", "Summary", "Writer", "close_stdio", "open_stdio",
           "relay")

# SDK sessions carry tool results of 20 MB and more; a limit is there to bound memory.
DEFAULT_MAX_LINE_BYTES: Final = 64 * 1024 * 1024


class Reader(Protocol):
    async def read(self, n: int = -1, /) -> bytes: ...


class Writer(Protocol):
    def write(self, data: bytes, /) -> Any: ...
    async def drain(self) -> None: ...


@dataclass
class Summary:
    """What one relay did: lines each way, refusals, and answers the proxy made up."""

    client_lines: int = 0
    server_lines: int = 0
    client_refused: int = 0
    server_refused: int = 0
    answered: int = 0  # refused client requests answered with error_response
    failed: int = 0  # pending requests answered with -32000 "Connection closed"
    returncode: int | None = None

    def __str__(self) -> str:
        return (f"client to server {self.client_lines} lines ({self.client_refused} refused, "
                f"{self.answered} answered), server to client {self.server_lines} lines "
                f"({self.server_refused} refused), {self.failed} pending requests failed, "
                f"server exit status {self.returncode}")


async def relay(
    command: Sequence[str],
    reader: Reader,
    writer: Writer,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    record: str | None = None,
    drain_timeout: float = 10.0,
    log: Callable[[str], None] | None = None,
    forward_signals: Sequence[signal.Signals] = (),
) -> Summary:
    """Relay between a client and ``command`` until both sides are done.

    Raises ``OSError`` when the command cannot start. ``record``, a path prefix, writes
    ``PREFIX.client.jsonl`` and ``PREFIX.server.jsonl``: every byte each side sent.
    ``forward_signals`` are passed on to the server while the relay runs. The server stays
    in the caller's process group, so that a terminal's Ctrl-C, or a client that kills the
    group (as the MCP SDK's stdio client does), reaches it without the proxy's help.
    ``log`` takes one line per event (default: stderr).
    """
    loop = asyncio.get_running_loop()
    summary = Summary()
    with _Recorder(record) as recorder:
        session = _Session(reader, writer, max_line_bytes, drain_timeout, log or _stderr,
                           summary, recorder)
        transport, _ = await loop.subprocess_exec(
            lambda: _ServerPipes(session), *command, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=None,
        )
        for signum in forward_signals:
            loop.add_signal_handler(signum, _forward, transport, signum)
        try:
            summary.returncode = await session.run()
        finally:
            for signum in forward_signals:
                loop.remove_signal_handler(signum)
            transport.close()
    return summary


def _forward(transport: asyncio.SubprocessTransport, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        transport.send_signal(signum)


async def open_stdio(stdin: int = 0, stdout: int = 1) -> tuple[Reader, Writer]:
    """This process's stdin and stdout as a reader and a writer for ``relay``.

    Pipes and sockets, terminals and regular files alike (``rpcline._stdio`` says how).
    """
    from rpcline._stdio import open_stdio as _open

    return await _open(stdin, stdout)


async def close_stdio(writer: Writer, timeout: float = 10.0) -> None:
    """Flush and close a writer from ``open_stdio`` (for up to ``timeout`` seconds)."""
    from rpcline._stdio import close_stdio as _close

    await _close(writer, timeout)


def _stderr(text: str) -> None:
    print(f"rpcline proxy: {text}", file=sys.stderr, flush=True)
