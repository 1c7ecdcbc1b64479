"""A pipe's read end read by the event loop's own reader callback: the relay's hot path.

asyncio's pipe transports read 256 KiB at a time (``_UnixReadPipeTransport.max_size``),
whatever comes: each read of a 100-byte request maps 256 KiB and unmaps it again (mmap,
mremap, munmap, three system calls a chunk), and a subprocess transport hands each chunk of
its pipes on with ``call_soon``, one more loop iteration a chunk. ``PipeReadTransport``
reads ``READ_BYTES`` at a time (twice as much after a read that filled it, up to
``MAX_READ_BYTES``, what asyncio read; back to ``READ_BYTES`` after one that did not), and
hands each chunk to its protocol in the callback that read it. ``spawn`` starts a server
with its stdout read so (and, ``process.Process``, no descriptor but its three).

POSIX only (``READS_BY_CALLBACK``): Windows' proactor loop has no ``add_reader``, and
there the relay reads through asyncio's transports as it always did.
"""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

from rpcline._gateway.process import Process
from rpcline._gateway.relay_types import READ_BYTES

MAX_READ_BYTES: Final = 256 * 1024
READS_BY_CALLBACK: Final = os.name == "posix"


class PipeReadTransport(asyncio.ReadTransport):
    """Reads ``fd`` (made non-blocking) while not paused; ``eof_received`` then
    ``connection_lost(None)`` at its end, ``connection_lost(error)`` if a read fails.
    ``close_fd``: whether the descriptor is its own to close at the end (not a stdin)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, protocol: asyncio.Protocol,
                 *, close_fd: bool) -> None:
        super().__init__()
        self._loop = loop
        self._fd = fd
        self._protocol = protocol
        self._close_fd = close_fd
        self._size = READ_BYTES
        self._reading = False
        self._closing = False
        os.set_blocking(fd, False)
        protocol.connection_made(self)
        self.resume_reading()

    def _ready(self) -> None:
        size = self._size
        try:
            data = os.read(self._fd, size)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self._end(error)
            return
        if not data:
            self._end(None)
            return
        if len(data) == size:  # more may be waiting: read more at a time
            if size < MAX_READ_BYTES:
                self._size = size * 2
        elif size != READ_BYTES:
            self._size = READ_BYTES
        self._protocol.data_received(data)

    def _end(self, error: OSError | None) -> None:
        self._stop()
        if error is None:
            self._protocol.eof_received()
        self._protocol.connection_lost(error)

    def _stop(self) -> None:
        self.pause_reading()
        if not self._closing:
            self._closing = True
            if self._close_fd:
                os.close(self._fd)

    def is_reading(self) -> bool:
        return self._reading

    def pause_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._fd)

    def resume_reading(self) -> None:
        if not self._reading and not self._closing:
            self._reading = True
            self._loop.add_reader(self._fd, self._ready)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        """Stop reading; the protocol hears ``connection_lost(None)`` soon after."""
        if not self._closing:
            self._stop()
            self._loop.call_soon(self._protocol.connection_lost, None)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        assert isinstance(protocol, asyncio.Protocol)
        self._protocol = protocol


class _Output(asyncio.Protocol):
    """A server's stdout, handed to its subprocess protocol as asyncio would (fd 1)."""

    def __init__(self, pipes: asyncio.SubprocessProtocol) -> None:
        # A partial, not a method: one Python frame fewer for every chunk.
        self.data_received = functools.partial(pipes.pipe_data_received, 1)  # type: ignore[method-assign]
        self.connection_lost = functools.partial(pipes.pipe_connection_lost, 1)  # type: ignore[method-assign]


async def spawn(
    factory: Callable[[], asyncio.SubprocessProtocol], command: Sequence[str], **options: Any
) -> tuple[asyncio.SubprocessTransport, asyncio.ReadTransport]:
    """Start ``command`` with its three standard descriptors and no other (``Process``):
    its stdin a pipe the loop writes, its stdout read by a ``PipeReadTransport`` that hands
    the protocol ``pipe_data_received(1, chunk)`` and ``pipe_connection_lost(1, error)``,
    its stderr ``options["stderr"]`` (a descriptor; absent or None: the caller's); the other
    ``options`` (``env``, ``cwd``, ``start_new_session``) as ``Popen`` takes them. Where ``READS_BY_CALLBACK`` is false, the loop's own
    ``subprocess_exec`` and pipes. Close the reader at the end."""
    loop = asyncio.get_running_loop()
    if not READS_BY_CALLBACK:
        transport, _ = await loop.subprocess_exec(
            factory, *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **options)
        return transport, cast(asyncio.ReadTransport, transport.get_pipe_transport(1))
    protocol = factory()
    read_end, write_end = os.pipe()  # neither inherited: the child gets a dup as its fd 1
    try:
        process = Process(protocol, command, stdout=write_end, **options)
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)  # the server's exit (and its children's) is then the pipe's end
    try:
        await process.connect()
    except BaseException:
        os.close(read_end)
        raise
    return process, PipeReadTransport(loop, read_end, _Output(protocol), close_fd=True)
