"""asyncio reader: ``async for msg in rpcline.aio.messages(reader)``.

It reads fixed-size chunks with ``StreamReader.read``, never ``readline()``, whose 64 KiB
default limit ends a stream on the first long tool result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, overload

from rpcline._core.readers import CHUNK_BYTES, check_arguments, stream_parser, text_stream
from rpcline._core.shared import DEFAULT_MAX_LINE_BYTES

if TYPE_CHECKING:
    from rpcline import Incoming, Refused, Route, StreamParser

__all__ = ("messages",)


def __dir__() -> list[str]:
    """The public names only, as ``dir(rpcline)`` gives them (imports stay out of sight)."""
    return sorted(__all__)

R = TypeVar("R")

# What a text stream's refusal adds here: a binary file is no StreamReader either.
STREAM_READER: Final = ", and read it through an asyncio.StreamReader (loop.connect_read_pipe)"


# The type follows classify, as StreamParser's does.
@overload
def messages(
    reader: asyncio.StreamReader, max_line_bytes: int = ..., chunk_bytes: int = ...
) -> AsyncIterator[Incoming]: ...
@overload
def messages(
    reader: asyncio.StreamReader, max_line_bytes: int = ..., chunk_bytes: int = ...,
    *, classify: Callable[[bytes], Route],
) -> AsyncIterator[Route]: ...
@overload
def messages(
    reader: asyncio.StreamReader, max_line_bytes: int = ..., chunk_bytes: int = ...,
    *, classify: Callable[[bytes], R],
) -> AsyncIterator[R | Refused]: ...
def messages(
    reader: asyncio.StreamReader,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    chunk_bytes: int = CHUNK_BYTES,
    *,
    classify: Callable[[bytes], Any] | None = None,
) -> AsyncIterator[Any]:
    """Yield every message the peer sends, until EOF; a last line needs no LF.

    Each line goes to ``classify``, as in ``StreamParser`` (``rpcline.parse`` by default,
    also for ``None``). Bad arguments (a text-mode file, a chunk size below 1, a bad
    limit) raise here, when called, not at the first read.
    """
    check_arguments("aio.messages", reader, chunk_bytes, STREAM_READER)
    return _messages(reader, stream_parser(max_line_bytes, classify), chunk_bytes)


async def _messages(
    reader: asyncio.StreamReader, parser: StreamParser[Any], chunk_bytes: int
) -> AsyncIterator[Any]:
    while chunk := await reader.read(chunk_bytes):
        if isinstance(chunk, str):  # a reader of text
            raise TypeError(text_stream("aio.messages", reader, STREAM_READER))
        for message in parser.feed(chunk):
            yield message
    for message in parser.close():
        yield message
