"""Blocking reader: messages from a binary file object, with no hidden line limit.

``file.readline()`` would buffer a line of any length (or, in asyncio, fail past 64 KiB);
reading fixed-size chunks into a ``StreamParser`` keeps memory bounded by the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Final

import rpcline
from rpcline._message_py import Incoming
from rpcline._stream_py import DEFAULT_MAX_LINE_BYTES

CHUNK_BYTES: Final = 64 * 1024


def read_messages(
    file: BinaryIO,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Incoming]:
    """Yield every message of a binary stream (``sys.stdin.buffer``, a pipe, a socket file).

    A line is yielded as soon as its LF arrives (``read1`` returns what is available
    instead of waiting for a full chunk); the last line needs no LF.
    """
    parser = rpcline.StreamParser(max_line_bytes)
    read = getattr(file, "read1", file.read)
    while chunk := read(chunk_bytes):
        yield from parser.feed(chunk)
    yield from parser.close()
