"""asyncio reader: ``async for msg in rpcline.aio.messages(reader)``.

It reads fixed-size chunks with ``StreamReader.read``, never ``readline()``, whose 64 KiB
default limit ends a stream on the first long tool result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import rpcline
from rpcline._message_py import Incoming
from rpcline._readers import CHUNK_BYTES
from rpcline._stream_py import DEFAULT_MAX_LINE_BYTES

__all__ = ("messages",)


async def messages(
    reader: asyncio.StreamReader,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    chunk_bytes: int = CHUNK_BYTES,
) -> AsyncIterator[Incoming]:
    """Yield every message the peer sends, until EOF; a last line needs no LF."""
    parser = rpcline.StreamParser(max_line_bytes)
    while chunk := await reader.read(chunk_bytes):
        for message in parser.feed(chunk):
            yield message
    for message in parser.close():
        yield message
