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
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, Final, Protocol

import orjson

import rpcline
from rpcline._message_py import BAD_ID

__all__ = ("DEFAULT_MAX_LINE_BYTES", "Reader", "Summary", "Writer", "close_stdio", "open_stdio",
           "relay")

# SDK sessions carry tool results of 20 MB and more; a limit is there to bound memory.
DEFAULT_MAX_LINE_BYTES: Final = 64 * 1024 * 1024
READ_BYTES: Final = 64 * 1024
CONNECTION_CLOSED: Final = -32000  # the code the MCP SDKs use for a closed connection
KILL_AFTER: Final = 2.0  # seconds between SIGTERM and SIGKILL for a child that stays


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
    ``forward_signals`` are passed on to the server while the relay runs (the server runs
    in a process group of its own, so a terminal's Ctrl-C reaches it only this way).
    ``log`` takes one line per event (default: stderr).
    """
    child = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        process_group=0,
    )
    loop = asyncio.get_running_loop()
    for signum in forward_signals:
        loop.add_signal_handler(signum, _forward, child, signum)
    session = _Session(child, reader, writer, max_line_bytes, drain_timeout, log or _stderr)
    try:
        with _Recorder(record) as recorder:
            session.recorder = recorder
            return await session.run()
    finally:
        for signum in forward_signals:
            loop.remove_signal_handler(signum)


def _forward(child: asyncio.subprocess.Process, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signum)


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


class _Recorder:
    """The ``--record`` files: each side's bytes exactly as they came, in order."""

    def __init__(self, prefix: str | None) -> None:
        self.prefix = prefix
        self.client: IO[bytes] | None = None
        self.server: IO[bytes] | None = None

    def __enter__(self) -> _Recorder:
        if self.prefix is not None:
            self.client = open(f"{self.prefix}.client.jsonl", "wb")  # noqa: SIM115
            self.server = open(f"{self.prefix}.server.jsonl", "wb")  # noqa: SIM115
        return self

    def __exit__(self, *exc: object) -> None:
        for file in (self.client, self.server):
            if file is not None:
                file.close()


def _connection_closed(id: rpcline.RequestId, cause: str) -> bytes:
    """The error line (no LF) that answers a request nobody else will answer."""
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "error": {
        "code": CONNECTION_CLOSED, "message": "Connection closed", "data": cause}})


def _lines(lines: list[bytes]) -> bytes:
    """The lines, each with its LF, in one write."""
    lines.append(b"")
    return b"\n".join(lines)


def _shape(r: rpcline.Route) -> str:
    """What a refused line looks like: ``"response"``, ``"request"`` or ``"unknown"``."""
    if r.line is None:
        return "unknown"  # an over-long line: only its id was read
    if r.method_span is None and (r.result_span is not None or r.error_span is not None):
        return "response"
    return "request"


def _is_null_id_error(r: rpcline.Route) -> bool:
    """A server's answer to an unreadable request: ``"id": null`` and an ``error``."""
    if r.id_span is None or r.error_span is None or r.method_span is not None:
        return False
    if r.result_span is not None or r.error is None or r.error.reason != BAD_ID:
        return False
    line = r.line if type(r.line) is bytes else str(r.line).encode()
    start, end = r.id_span
    return line[start:end] == b"null"


class _Session:
    def __init__(self, child: asyncio.subprocess.Process, reader: Reader, writer: Writer,
                 max_line_bytes: int, drain_timeout: float, log: Callable[[str], None]) -> None:
        self.child = child
        self.client_in, self.client_out = reader, writer
        assert child.stdin is not None and child.stdout is not None
        self.server_in: asyncio.StreamWriter = child.stdin
        self.server_out: asyncio.StreamReader = child.stdout
        self.limit = max_line_bytes
        self.drain_timeout = drain_timeout
        self.log = log
        self.summary = Summary()
        self.recorder: _Recorder = _Recorder(None)
        # Requests without an answer yet, by id as it came (1 and "1" are different keys).
        self.client_pending: dict[rpcline.RequestId, None] = {}
        self.server_pending: dict[rpcline.RequestId, None] = {}
        self.server_gone: str | None = None  # why the server can take no more, once it can't
        self.client_gone = False  # the client's output broke: nothing more reaches it
        self.answered_all = asyncio.Event()  # set whenever client_pending empties

    async def run(self) -> Summary:
        to_server = asyncio.create_task(self._client_to_server())
        to_client = asyncio.create_task(self._server_to_client())
        await to_client  # the server closed its stdout: it has nothing more to say
        returncode = await self._wait_for_exit(to_server)
        self.summary.returncode = returncode
        return self.summary

    # --- client to server -------------------------------------------------------------------

    async def _client_to_server(self) -> None:
        parser = rpcline.StreamParser(self.limit, classify=rpcline.route)
        record = self.recorder.client
        try:
            while chunk := await self.client_in.read(READ_BYTES):
                if record is not None:
                    record.write(chunk)
                await self._from_client(parser.feed(chunk))
            await self._from_client(parser.close())
        except (ConnectionError, OSError) as error:  # the client's side broke
            self.log(f"client input failed: {error}")
        # The client is done sending: its requests in flight still deserve their answers.
        if self.client_pending and self.server_gone is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.answered_all.wait(), self.drain_timeout)
        with contextlib.suppress(ConnectionError, OSError):
            self.server_in.close()
        await self._stop_child()

    async def _from_client(self, routes: list[Any]) -> None:
        forward: list[bytes] = []
        answers: list[bytes] = []
        for r in routes:
            self.summary.client_lines += 1
            kind = r.kind
            if kind == "request":
                if self.server_gone is not None:
                    answers.append(_connection_closed(r.id, self.server_gone))
                    self.summary.failed += 1
                    continue
                self.client_pending[r.id] = None
                self.answered_all.clear()
            elif kind == "response":
                self.server_pending.pop(r.id, None)
            elif kind == "refused":
                self._client_refused(r, answers, forward)
                continue
            forward.append(r.line)
        if forward and self.server_gone is None:
            try:
                self.server_in.write(_lines(forward))
                await self.server_in.drain()
            except (ConnectionError, OSError):
                self.server_gone = "the server closed its input"
        if answers:
            await self._to_client(_lines(answers))

    def _client_refused(self, r: rpcline.Route, answers: list[bytes], forward: list[bytes]) -> None:
        self.summary.client_refused += 1
        error = r.error
        assert error is not None
        shape = _shape(r)
        if shape == "unknown" and r.id is not None and r.id in self.server_pending:
            shape = "response"  # the client's over-long answer to a server request
        if shape == "response":
            self.log(f"client sent a refused response ({error.reason}); not answered")
            if r.id is not None and self.server_pending.pop(r.id, 0) is None:
                forward.append(_connection_closed(r.id, f"the client's answer was refused: "
                                                        f"{error.reason}"))
                self.summary.failed += 1
            return
        self.log(f"client sent a refused line ({error.reason}); answered")
        answers.append(rpcline.error_response(rpcline.Refused(r.id, error)))
        self.summary.answered += 1

    # --- server to client -------------------------------------------------------------------

    async def _server_to_client(self) -> None:
        parser = rpcline.StreamParser(self.limit, classify=rpcline.route)
        record = self.recorder.server
        try:
            while chunk := await self.server_out.read(READ_BYTES):
                if record is not None:
                    record.write(chunk)
                await self._from_server(parser.feed(chunk))
            await self._from_server(parser.close())
        except (ConnectionError, OSError) as error:
            self.log(f"server output failed: {error}")
        self.server_gone = "the server closed its output"
        await self._fail_pending(self.server_gone)

    async def _from_server(self, routes: list[Any]) -> None:
        forward: list[bytes] = []
        for r in routes:
            self.summary.server_lines += 1
            kind = r.kind
            if kind == "response":
                self._answered(r.id)
            elif kind == "request":
                self.server_pending[r.id] = None
            elif kind == "refused":
                self._server_refused(r, forward)
                continue
            forward.append(r.line)
        if forward:
            await self._to_client(_lines(forward))

    def _server_refused(self, r: rpcline.Route, forward: list[bytes]) -> None:
        if _is_null_id_error(r):
            assert type(r.line) is bytes
            forward.append(r.line)  # JSON-RPC 2.0 §5: the client's line was unreadable
            return
        self.summary.server_refused += 1
        error = r.error
        assert error is not None
        shape = _shape(r)
        if shape == "unknown" and r.id is not None and r.id in self.client_pending:
            shape = "response"
        if shape == "response" and r.id is not None and r.id in self.client_pending:
            self.log(f"server sent a refused answer to {r.id!r} ({error.reason}); failed it")
            self._answered(r.id)
            forward.append(_connection_closed(r.id, f"the server's answer was refused: "
                                                    f"{error.reason}"))
            self.summary.failed += 1
        elif shape != "response" and r.id is not None and self.server_gone is None:
            # A request the client would refuse: answered here, so the server does not wait.
            self.log(f"server sent a refused request ({error.reason}); answered")
            with contextlib.suppress(ConnectionError, OSError):
                self.server_in.write(rpcline.error_response(rpcline.Refused(r.id, error)) + b"\n")
        else:
            self.log(f"server sent a refused line ({error.reason}); not forwarded")

    def _answered(self, id: rpcline.RequestId) -> None:
        if self.client_pending.pop(id, 0) is None and not self.client_pending:
            self.answered_all.set()

    async def _fail_pending(self, cause: str) -> None:
        """Answer every client request still pending: nobody else will."""
        pending = list(self.client_pending)
        self.client_pending.clear()
        self.answered_all.set()
        if pending:
            self.summary.failed += len(pending)
            await self._to_client(_lines([_connection_closed(id, cause) for id in pending]))

    async def _to_client(self, data: bytes) -> None:
        if self.client_gone:
            return
        try:
            self.client_out.write(data)
            await self.client_out.drain()
        except (ConnectionError, OSError):
            self.client_gone = True

    # --- the end ------------------------------------------------------------------------------

    async def _wait_for_exit(self, to_server: asyncio.Task[None]) -> int:
        """The server's exit status, after it closed its stdout (``128 + N`` for signal N)."""
        returncode = await self._stop_child()
        to_server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await to_server
        return returncode if returncode >= 0 else 128 - returncode

    async def _stop_child(self) -> int:
        """Give the server ``drain_timeout`` to exit by itself, then SIGTERM, then SIGKILL."""
        child = self.child
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(child.wait(), self.drain_timeout)
        self.log(f"server did not exit within {self.drain_timeout:g} s: terminating it")
        with contextlib.suppress(ProcessLookupError):
            child.terminate()
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(child.wait(), KILL_AFTER)
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        return await child.wait()
