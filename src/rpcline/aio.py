"""asyncio reader: ``async for msg in rpcline.aio.messages(reader)``.

It reads fixed-size chunks with ``StreamReader.read``, never ``readline()``, whose 64 KiB
default limit ends a stream on the first long tool result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Final

import rpcline
from rpcline._message_py import Incoming
from rpcline._readers import CHUNK_BYTES, check_arguments, text_stream
from rpcline._stream_py import DEFAULT_MAX_LINE_BYTES

__all__ = ("messages",)

# What a text stream's refusal adds here: a binary file is no StreamReader either.
STREAM_READER: Final = ", and read it through an asyncio.StreamReader (loop.connect_read_pipe)"


def messages(
    reader: asyncio.StreamReader,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    chunk_bytes: int = CHUNK_BYTES,
) -> AsyncIterator[Incoming]:
    """Yield every message the peer sends, until EOF; a last line needs no LF.

    Bad arguments (a text-mode file, a chunk size below 1, a bad limit) raise here, when
    called, not at the first read.
    """
    check_arguments("aio.messages", reader, chunk_bytes, STREAM_READER)
    return _messages(reader, rpcline.StreamParser(max_line_bytes), chunk_bytes)


async def _messages(
    reader: asyncio.StreamReader, parser: Any, chunk_bytes: int
) -> AsyncIterator[Incoming]:
    while chunk := await reader.read(chunk_bytes):
        if isinstance(chunk, str):  # a reader of text
            raise TypeError(text_stream("aio.messages", reader, STREAM_READER))
        for message in parser.feed(chunk):
            yield message
    for message in parser.close():
        yield message
