"""``rpcline.sdk.stdio_server``'s transport: the SDK's claim on stdin and stdout, read and
written on the event loop.

The SDK's ``mcp.server.stdio.stdio_server`` reads every line in a worker thread, and
writes and flushes every message in two more hops; a sync tool adds one of its own. Here
the claimed descriptors are made non-blocking and read and written by the task itself:
a read or a write is tried first, and only a pipe that has nothing (or no room) is waited
on with anyio's readiness waits (``wait_readable``, ``wait_writable``: asyncio and trio
alike). Lines are framed by ``StreamParser(classify=route)`` with a bound, each validated
by the SDK's adapter (``sdk_lines.ClientLines``), and the messages that are ready when the
writer wakes go out in one write.

The descriptors are claimed by ``mcp.server.stdio``'s own ``_claim_fd``, looked up on
that module at each start: while serving, fd 0 reads the null device and fd 1 writes to
stderr, so a handler's ``print`` misses the wire, and both are restored on exit. Where
there are no descriptors to wait on (explicit streams, a ``sys.stdin`` with no descriptor),
the SDK's own transport serves. A sys stream on another descriptor (a test's pipe)
is served in place, as the SDK does.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Final

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.server import stdio as sdk
from mcp.shared._context_streams import ContextSendStream, create_context_streams
from mcp.shared.message import SessionMessage

from rpcline._core.route import route
from rpcline._core.stream import StreamParser
from rpcline._gateway.relay_types import READ_BYTES
from rpcline._gateway.sdk_lines import MAX_IN_FLIGHT, ClientLines, InFlight, note_sent

logger = logging.getLogger("rpcline.sdk")
# The SDK's own transport, for streams with no descriptor to wait on; taken at import, so
# that a test run that puts ours in its place does not loop.
_SDK_STDIO_SERVER = sdk.stdio_server
MAX_READ_BYTES: Final = 1024 * 1024
# How long the writer may take to flush what the session wrote before it ended.
FLUSH_TIMEOUT: Final = 2.0


@asynccontextmanager
async def stdio_server(
    stdin: Any, stdout: Any, max_line_bytes: int
) -> AsyncGenerator[tuple[Any, Any], None]:
    parser = StreamParser(max_line_bytes, classify=route)  # bad bounds raise here
    if stdin is not None or stdout is not None or not (_has_fd(sys.stdin) and _has_fd(sys.stdout)):
        async with _SDK_STDIO_SERVER(stdin, stdout) as streams:
            yield streams
        return
    restore: list[Callable[[], None]] = []
    blocking: list[tuple[int, bool]] = []
    try:
        in_file, release = sdk._claim_fd(0, sys.stdin, "rb", sdk._open_stdin_diversion)
        if release is not None:
            restore.append(release)
        out_file, release = sdk._claim_fd(1, sys.stdout, "wb", sdk._open_stdout_diversion)
        if release is not None:
            restore.append(release)
        # A sys stream that is not fd 0/1 (a test's pipe) is served in place, as the SDK
        # does; what its buffer holds is written before anything of ours.
        out_file.flush()
        in_fd, out_fd = in_file.fileno(), out_file.fileno()
        for fd in (in_fd, out_fd):
            blocking.append((fd, os.get_blocking(fd)))
            os.set_blocking(fd, False)
        in_flight = InFlight(MAX_IN_FLIGHT)
        lines = ClientLines(in_flight)
        read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
        # The session's write stream carries (context, message) envelopes as the SDK's does;
        # the writer takes them raw, to take every message that is ready in one go.
        raw_send, raw_receive = anyio.create_memory_object_stream[tuple[Any, Any]](0)
        write_stream = ContextSendStream(raw_send)
        answers = raw_send.clone()  # the transport's own error responses
        writer_done = anyio.Event()

        pollable = True

        async def readable() -> None:
            nonlocal pollable
            if pollable:
                try:
                    await anyio.wait_readable(in_fd)
                except OSError:  # a file or /dev/null: never waits, and cannot be polled
                    pollable = False

        async def read_stdin() -> None:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async with read_writer, answers:
                    await read_lines()

        async def read_lines() -> None:
            size = READ_BYTES
            while True:
                try:
                    chunk = os.read(in_fd, size)
                except BlockingIOError:
                    await readable()
                    continue
                except OSError as error:
                    logger.error("reading stdin failed: %s; the session ends", error)
                    return
                if not chunk:
                    await deliver(parser.close())  # the last line needs no LF
                    return
                drained = len(chunk) < size
                if not drained and size < MAX_READ_BYTES:
                    size *= 2  # more is waiting: read more at a time
                if not await deliver(parser.feed(chunk)):
                    await anyio.lowlevel.checkpoint()  # no line yet: let others run
                if drained:
                    # The pipe was drained: wait for more rather than try a read that
                    # would fail (one system call a message saved).
                    size = READ_BYTES
                    await readable()

        async def deliver(routes: list[Any]) -> bool:
            for r in routes:
                item = lines.message(r)
                if lines.answers:
                    for answer in lines.answers:
                        await answers.send((None, answer))
                    lines.answers.clear()
                await read_writer.send(item)
            return bool(routes)

        async def write_stdout() -> None:
            try:
                await write_messages(raw_receive, out_fd, in_flight)
            finally:
                writer_done.set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_stdin)
            tasks.start_soon(write_stdout)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    # What the session wrote goes out (bounded: a client that reads no
                    # more must not hold the server), then the reader stops.
                    raw_send.close()
                    answers.close()
                    with anyio.move_on_after(FLUSH_TIMEOUT):
                        await writer_done.wait()
                tasks.cancel_scope.cancel()
    finally:
        for fd, was_blocking in blocking:
            with suppress(OSError):
                os.set_blocking(fd, was_blocking)
        for release in reversed(restore):
            release()


def _has_fd(stream: Any) -> bool:
    """Whether a sys stream's bytes are a descriptor's (to wait on), not an object's."""
    try:
        return type(stream.buffer.fileno()) is int
    except (AttributeError, OSError, ValueError):
        return False


async def write_messages(
    receive: MemoryObjectReceiveStream[tuple[Any, Any]], fd: int, in_flight: InFlight
) -> None:
    """Write each message as the SDK does (``model_dump_json(by_alias=True,
    exclude_unset=True)`` and a LF), every one that is ready joined into one write."""
    failed = False
    async with receive:
        async for _, item in receive:
            batch = [_encoded(item, in_flight)]
            while True:
                try:
                    _, item = receive.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
                batch.append(_encoded(item, in_flight))
            if failed:
                continue  # stdout is gone: what the session writes is dropped, never waited on
            try:
                await _write_all(fd, batch[0] if len(batch) == 1 else b"".join(batch))
            except OSError as error:
                logger.error("writing stdout failed: %s; what the server writes is dropped", error)
                failed = True


def _encoded(item: Any, in_flight: InFlight) -> bytes:
    if type(item) is bytes:  # an answer of the transport's own
        return item + b"\n"
    message = item.message
    note_sent(message, in_flight)  # before the answer can possibly come
    return message.__pydantic_serializer__.to_json(  # type: ignore[no-any-return]
        message, by_alias=True, exclude_unset=True) + b"\n"


async def _write_all(fd: int, data: bytes) -> None:
    try:
        done = os.write(fd, data)
    except BlockingIOError:
        done = 0
    if done == len(data):
        return
    view = memoryview(data)[done:]
    while view:
        await anyio.wait_writable(fd)
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            pass


async def serve(server: Any, max_line_bytes: int) -> None:
    """Serve ``server`` on this transport until the client's input ends, as
    ``MCPServer.run_stdio_async`` serves it on the SDK's: an ``MCPServer`` through the
    low-level ``Server`` it wraps, with that server's initialization options."""
    lowlevel = getattr(server, "_lowlevel_server", server)  # MCPServer wraps a Server
    if not callable(getattr(lowlevel, "create_initialization_options", None)):
        raise TypeError(f"run_stdio needs an MCPServer or a low-level Server, "
                        f"not {type(server).__name__}")
    options = lowlevel.create_initialization_options()
    async with stdio_server(None, None, max_line_bytes) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, options)
