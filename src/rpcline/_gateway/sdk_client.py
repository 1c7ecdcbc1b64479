"""``rpcline.sdk.stdio_client``'s transport: the SDK's process handling, rpcline's framing.

The process is spawned, stopped and drained by ``mcp.client.stdio``'s own helpers, looked
up on that module at each use, so whatever patches them (the SDK's own tests do) patches
this transport too. What differs is the reading: bytes framed by ``StreamParser`` in
linear time with a line bound, each line validated by the SDK's adapter, and a refused
line that answers a call in flight turned into that call's error (``sdk_lines``).
"""

from __future__ import annotations

import codecs
import logging
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
import anyio.lowlevel
from mcp.client import stdio as sdk
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from pydantic import BaseModel

from rpcline._core.stream import StreamParser
from rpcline._gateway.sdk_lines import MAX_IN_FLIGHT, InFlight, Lines, note_sent

logger = logging.getLogger("rpcline.sdk")
# The SDK's own transport, for encodings bytes cannot frame; taken at import, so that a
# test run that puts ours in its place (.ci/sdk_stdio_plugin.py) does not loop.
_SDK_STDIO_CLIENT = sdk.stdio_client


@asynccontextmanager
async def stdio_client(
    server: sdk.StdioServerParameters, errlog: TextIO, max_line_bytes: int
) -> AsyncGenerator[TransportStreams, None]:
    parser = StreamParser(max_line_bytes, classify=bytes)  # bad bounds raise here
    if "\n".encode(server.encoding, server.encoding_error_handler) != b"\n":
        # UTF-16, say: a line does not end at the byte 0x0A, so the SDK frames the text.
        async with _SDK_STDIO_CLIENT(server, errlog) as streams:
            yield streams
        return
    in_flight = InFlight(MAX_IN_FLIGHT)
    lines = Lines(in_flight, _decoding(server))

    command = await sdk._get_executable_command(server.command)
    process = await sdk._create_platform_compatible_process(
        command=command,
        args=server.args,
        env=sdk.get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # No await from here until the task group runs: a cancellation in between would leak
    # the process the SDK's shutdown is there to stop.
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    stopping = False

    async def read_stdout() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                try:
                    # A chunk's lines are delivered before the next read: no read-ahead
                    # past a session that is not reading.
                    while True:
                        try:
                            chunk = await process.stdout.receive()
                        except anyio.EndOfStream:
                            return  # an unfinished last line is dropped, as the SDK does
                        for item in parser.feed(chunk):
                            try:
                                await read_writer.send(lines.message(item))
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return  # the session has gone
                finally:
                    await sdk._drain_stdout(process)
        except anyio.ClosedResourceError:
            pass  # the shutdown closed stdout under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not stopping:  # while stopping it is the kill's noise
                logger.exception("the server's stdout failed mid-session")

    async def write_stdin() -> None:
        assert process.stdin is not None
        encode = _encoder(server)
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    note_sent(message, in_flight)  # before the answer can possibly come
                    await process.stdin.send(encode(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may live on: end the read stream, or the session's calls wait.
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def stop() -> None:
        # The order is the SDK's: stop reading (the drain lets a server stuck writing
        # read its stdin again), give the writer a bounded flush, stop the server.
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()  # let the unblocked tasks leave before the cancel

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            stopping = True
            with anyio.CancelScope(shield=True):  # a cancelled caller must not leak the server
                await stop()
            tasks.cancel_scope.cancel()


def _decoding(server: sdk.StdioServerParameters) -> tuple[str, str] | None:
    """None when a line's bytes go to the adapter as they are (UTF-8, strict: the SDK's
    default), else the (encoding, errors) each line is decoded with, as the SDK does."""
    encoding, errors = server.encoding, server.encoding_error_handler
    if codecs.lookup(encoding).name == "utf-8" and errors == "strict":
        return None
    return encoding, errors


def _encoder(server: sdk.StdioServerParameters) -> Callable[[BaseModel], bytes]:
    """A message's line as the SDK writes it (``model_dump_json(by_alias=True,
    exclude_unset=True)`` and a LF, encoded). In UTF-8 pydantic's bytes are taken as
    they come: no str made and encoded again for every message."""
    encoding, errors = server.encoding, server.encoding_error_handler
    if codecs.lookup(encoding).name == "utf-8":
        def utf8(message: BaseModel) -> bytes:
            return message.__pydantic_serializer__.to_json(
                message, by_alias=True, exclude_unset=True) + b"\n"
        return utf8

    def other(message: BaseModel) -> bytes:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
        return f"{text}\n".encode(encoding, errors)
    return other
