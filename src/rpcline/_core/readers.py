"""Blocking reader: messages from a binary file object, with no hidden line limit.

``file.readline()`` would buffer a line of any length (or, in asyncio, fail past 64 KiB);
reading fixed-size chunks into a ``StreamParser`` keeps memory bounded by the limit.
"""

from __future__ import annotations

import io
import os
import select
from collections.abc import Callable, Iterator

from rpcline._core.shared import DEFAULT_MAX_LINE_BYTES
from rpcline._core.stream import StreamParser

TYPE_CHECKING = False  # typing's, without importing typing (see rpcline/__init__.py)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Final, TypeVar, overload

    from rpcline._core.message import Incoming, Refused
    from rpcline._core.route import Route

    R = TypeVar("R")
else:

    def overload(function: object) -> object:
        """typing.overload's part at run time: the last definition is the one that runs."""
        return function


CHUNK_BYTES: Final = 64 * 1024
TEXT_STREAM: Final = (
    "{function}() reads bytes, but {kind} is a text stream: open the file in binary mode "
    "('rb'), or use sys.stdin.buffer instead of sys.stdin{then}"
)


# The type follows classify, as StreamParser's does.
@overload
def read_messages(
    file: BinaryIO, max_line_bytes: int = ..., chunk_bytes: int = ...
) -> Iterator[Incoming]: ...
@overload
def read_messages(
    file: BinaryIO, max_line_bytes: int = ..., chunk_bytes: int = ...,
    *, classify: Callable[[bytes], Route],
) -> Iterator[Route]: ...
@overload
def read_messages(
    file: BinaryIO, max_line_bytes: int = ..., chunk_bytes: int = ...,
    *, classify: Callable[[bytes], R],
) -> Iterator[R | Refused]: ...
def read_messages(
    file: BinaryIO,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    chunk_bytes: int = CHUNK_BYTES,
    *,
    classify: Callable[[bytes], Any] | None = None,
) -> Iterator[Any]:
    """Yield every message of a binary stream (``sys.stdin.buffer``, a pipe, a socket file).

    A line is yielded as soon as its LF arrives (``read1`` returns what is available
    instead of waiting for a full chunk); the last line needs no LF. A non-blocking file
    is waited on when it has nothing to read, not taken for ended. Each line goes to
    ``classify``, as in ``StreamParser``: ``rpcline.parse`` (the default, also for
    ``None``), ``rpcline.route``, or any callable taking bytes. Bad arguments (a
    text-mode file, a chunk size below 1, a bad limit) raise here, not at the first read.
    """
    check_arguments("read_messages", file, chunk_bytes)
    return _messages(file, stream_parser(max_line_bytes, classify), chunk_bytes)


def stream_parser(
    max_line_bytes: int, classify: Callable[[bytes], Any] | None
) -> StreamParser[Any]:
    """The readers' parser: the implementation's ``parse`` unless told another classify."""
    if classify is None:
        return StreamParser(max_line_bytes)
    return StreamParser(max_line_bytes, classify=classify)


def _messages(file: BinaryIO, parser: StreamParser[Any], chunk_bytes: int) -> Iterator[Any]:
    read: Callable[[int], Any] = getattr(file, "read1", file.read)
    while chunk := _read(file, read, chunk_bytes):
        if isinstance(chunk, str):  # a text stream that is no io.TextIOBase
            raise TypeError(text_stream("read_messages", file))
        yield from parser.feed(chunk)
    yield from parser.close()


def _read(file: BinaryIO, read: Callable[[int], Any], size: int) -> Any:
    """One chunk, empty only at the end of the file.

    A non-blocking file with nothing waiting gives None (raw) or b"" (buffered), as if it
    had ended: wait until it is readable and read again. Readable with nothing to read is
    the end.
    """
    chunk = read(size)
    if chunk or not _non_blocking(file):
        return chunk
    while True:
        select.select([file], [], [])
        chunk = read(size)
        if chunk is not None:
            return chunk


def _non_blocking(file: object) -> bool:
    try:
        return not os.get_blocking(file.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # no descriptor: io.BytesIO, say
        return False


def check_arguments(function: str, file: object, chunk_bytes: object, then: str = "") -> None:
    """Refuse what would fail obscurely later (a text stream, a buffer, no file at all) or
    yield nothing (size 0)."""
    if isinstance(file, io.TextIOBase):
        raise TypeError(text_stream(function, file, then))
    if isinstance(file, str | bytes | bytearray | memoryview):
        # parse_lines points here for a file; this is the way back.
        raise TypeError(f"{function}() reads a file, not {type(file).__name__}: pass the "
                        "data to parse_lines(), or wrap it in io.BytesIO")
    if not callable(getattr(file, "read", None)):
        raise TypeError(f"{function}() reads a binary file object (with a read method), "
                        f"not {type(file).__name__}")
    if type(chunk_bytes) is not int:
        raise TypeError(
            f"{function}() chunk_bytes must be an int, not {type(chunk_bytes).__name__}"
        )
    if chunk_bytes < 1:
        raise ValueError(f"{function}() chunk_bytes must be at least 1, not {chunk_bytes}")


def text_stream(function: str, file: object, then: str = "") -> str:
    """The TypeError message for a text-mode file given where bytes are read."""
    return TEXT_STREAM.format(function=function, kind=type(file).__name__, then=then)
