"""The proxy's own stdin and stdout as an asyncio reader and writer, whatever they are.

Pipes and sockets are read by ``pipes.PipeReadTransport`` (asyncio's pipe transport on
Windows) and written by asyncio's pipe transport (event-driven, with flow control). A
terminal or a regular file cannot: asyncio refuses regular files ("Pipe transport is for
pipes/sockets only"), and a terminal's file description is shared with the shell and with
stderr, which non-blocking mode would break. Those are read in a daemon thread, one chunk
in flight at a time (so a large file is not buffered whole), and written with blocking
writes, which a file or a terminal completes at once.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import stat
import threading
from typing import Any

from rpcline._gateway.pipes import READS_BY_CALLBACK, PipeReadTransport
from rpcline._gateway.relay_types import READ_BYTES, Consumer, Reader, Unbuffered, Writer


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def open_stdio(stdin: int = 0, stdout: int = 1) -> tuple[Reader, Writer]:
    """A reader of ``stdin`` and a writer of ``stdout`` (file descriptors) on this loop."""
    loop = asyncio.get_running_loop()
    reader: Reader
    writer: Writer
    if _is_pipe(stdin) and READS_BY_CALLBACK:
        reader = _PipeReader()
        PipeReadTransport(loop, stdin, reader, close_fd=False)
    elif _is_pipe(stdin):  # Windows: asyncio's pipe transport
        _, reader = await loop.connect_read_pipe(
            _PipeReader, os.fdopen(stdin, "rb", buffering=0, closefd=False)
        )
    else:
        reader = _ThreadReader(stdin, loop)
    if _is_pipe(stdout):
        transport, protocol = await loop.connect_write_pipe(
            _Flushed, os.fdopen(stdout, "wb", buffering=0, closefd=False)
        )
        writer = _PipeWriter(transport, protocol, None, loop)
    else:
        writer = _BlockingWriter(stdout)
    return reader, writer


async def close_stdio(writer: Writer, timeout: float) -> None:
    """Flush what the writer still holds, for up to ``timeout`` seconds, and close it.

    A pipe transport writes what the pipe takes and keeps the rest: without this, the
    last answers to a slow reader would be lost when the loop closes.
    """
    if isinstance(writer, _PipeWriter):
        await writer.flush_and_close(timeout)


class _Flushed(asyncio.streams.FlowControlMixin):
    """Flow control, and a future that is done once the transport has closed."""

    def __init__(self) -> None:
        super().__init__()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self.closed.done():
            self.closed.set_result(None)


class _PipeWriter(asyncio.StreamWriter):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.write = self.transport.write  # type: ignore[method-assign]  # a frame fewer a write

    async def flush_and_close(self, timeout: float) -> None:
        self.transport.close()  # a pipe transport closes once its buffer is written
        protocol = self._protocol  # type: ignore[attr-defined]
        assert isinstance(protocol, _Flushed)
        try:
            await asyncio.wait_for(asyncio.shield(protocol.closed), timeout)
        except TimeoutError:
            self.transport.abort()


class _PipeReader(asyncio.Protocol):
    """A pipe's chunks, by ``read`` or, once a consumer is attached, by its callbacks.

    The relay attaches itself (a ``relay_types.Consumer``): a chunk is then relayed in the
    callback that received it, with no task to wake. ``read`` serves any other use; it
    holds at most about ``READ_BYTES`` before it pauses the pipe.
    """

    def __init__(self) -> None:
        self.transport: asyncio.ReadTransport | None = None
        self._chunks: collections.deque[bytes] = collections.deque()
        self._held = 0
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._consumer: Consumer | None = None
        self._held_back = False  # paused by the consumer (``pause``), until it resumes

    def attach(self, consumer: Consumer) -> None:
        """From now on hand every chunk, then the end, to ``consumer``.

        What came before is handed over first; reading resumes after it unless the
        consumer paused it meanwhile (those chunks congested its output, say).
        """
        self._consumer = consumer
        while self._chunks:
            consumer.client_data(self._chunks.popleft())
        if self._eof:
            consumer.client_eof()
        elif not self._held_back:
            self._set_reading(True)

    def pause(self) -> None:
        self._held_back = True
        self._set_reading(False)

    def resume(self) -> None:
        self._held_back = False
        self._set_reading(True)

    def _set_reading(self, on: bool) -> None:
        if self.transport is not None and not self.transport.is_closing():
            if on:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._consumer is not None:
            self._consumer.client_data(data)
            return
        self._chunks.append(data)
        self._held += len(data)
        if self._held > READ_BYTES:
            self._set_reading(False)
        self._wake()

    def eof_received(self) -> bool:
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()  # an error reading stdin ends the client's side like an EOF

    def _end(self) -> None:
        if self._eof:
            return
        self._eof = True
        if self._consumer is not None:
            self._consumer.client_eof()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def read(self, n: int = -1, /) -> bytes:
        while not self._chunks and not self._eof:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if not self._chunks:
            return b""
        chunk = self._chunks.popleft()
        if 0 < n < len(chunk):
            chunk, rest = chunk[:n], chunk[n:]
            self._chunks.appendleft(rest)
        self._held -= len(chunk)
        if self._held <= READ_BYTES and not self._held_back:
            self._set_reading(True)
        return chunk


class _ThreadReader:
    """Chunks read by a daemon thread with blocking reads (a terminal, a file, nothing)."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd = fd
        self._loop = loop
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue(maxsize=1)
        self._eof = False
        self._thread: threading.Thread | None = None  # started by the first read

    def _run(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, READ_BYTES)
            except OSError:
                chunk = b""  # no stdin at all, or it broke: the client is done
            try:  # waits while the relay is busy with the last chunk: one in flight
                asyncio.run_coroutine_threadsafe(self._chunks.put(chunk), self._loop).result()
            except (RuntimeError, concurrent.futures.CancelledError):  # the loop has closed
                return
            if not chunk:
                return

    async def read(self, n: int = -1, /) -> bytes:
        if self._eof:
            return b""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="rpcline-stdin", daemon=True)
            self._thread.start()
        chunk = await self._chunks.get()
        self._eof = not chunk
        return chunk


class _BlockingWriter(Unbuffered):
    """Blocking writes to a terminal or a regular file; ``drain`` has nothing to wait for."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes, /) -> Any:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    async def drain(self) -> None:
        return None
