"""The pure-Python twin of ``_stream_c.pyx``: many lines at a time, from buffers and streams.

Only LF ends a line (a CR before it is JSON whitespace); lines holding only JSON
whitespace are separators and yield nothing; every other line yields exactly one result,
as ``parse`` gives it. A UTF-8 BOM is skipped at the very start of a stream or buffer.
"""

from __future__ import annotations

from typing import Final

from rpcline._message_py import Incoming, ParseError, Refused, parse

__all__ = ("DEFAULT_MAX_LINE_BYTES", "StreamParser", "parse_lines")

DEFAULT_MAX_LINE_BYTES: Final = 16 * 1024 * 1024
BOM: Final = b"\xef\xbb\xbf"
LINE_TOO_LONG: Final = "line exceeds {limit} bytes"
_JSON_SPACE: Final = b" \t\r"


def parse_lines(data: bytes | bytearray | memoryview | str) -> list[Incoming]:
    """Classify every line of a newline-delimited buffer; a last line needs no LF."""
    if isinstance(data, str):
        lines = data.removeprefix("\ufeff").split("\n")
        return [parse(line) for line in lines if line.strip(" \t\r")]
    parser = StreamParser(max_line_bytes=_UNLIMITED)
    return parser.feed(data) + parser.close()


class StreamParser:
    """Classifies lines from chunks cut anywhere, with memory bounded by ``max_line_bytes``.

    A line longer than the limit (its bytes without the LF) yields one
    ``Refused(None, ParseError("line exceeds … bytes"))``; its bytes are dropped up to the
    next LF and parsing resumes after it. One parser serves one stream and one thread.
    """

    __slots__ = ("_at_start", "_closed", "_discarding", "_limit", "_pending")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if type(max_line_bytes) is not int:
            raise TypeError(f"max_line_bytes must be an int, not {type(max_line_bytes).__name__}")
        if max_line_bytes <= 0:
            raise ValueError(f"max_line_bytes must be positive, not {max_line_bytes}")
        self._limit = max_line_bytes
        self._pending = bytearray()  # the current line's bytes from earlier chunks
        self._discarding = False  # inside an over-long line, dropping bytes up to its LF
        self._at_start = True  # a BOM may still be arriving
        self._closed = False

    @property
    def max_line_bytes(self) -> int:
        return self._limit

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[Incoming]:
        """Classify the lines this chunk completes; keep the unfinished one for later."""
        if self._closed:
            raise ValueError("feed() after close()")
        data = _chunk_bytes(chunk)
        if self._at_start:
            data = bytes(self._pending) + data
            self._drop_pending()
            if len(data) < len(BOM) and BOM.startswith(data):
                self._keep(data)  # too short to tell: wait for the next chunk
                return []
            self._at_start = False
            if data.startswith(BOM):
                data = data[len(BOM) :]
        return self._split(data)

    def close(self) -> list[Incoming]:
        """Classify the final line if it had no LF; the parser takes no more input."""
        if self._closed:
            return []
        self._closed = True
        self._at_start = False
        results: list[Incoming] = []
        if not self._discarding:
            _append(results, bytes(self._pending))
        self._drop_pending()
        self._discarding = False
        return results

    def _split(self, data: bytes) -> list[Incoming]:
        results: list[Incoming] = []
        limit = self._limit
        start = 0
        end = data.find(b"\n")
        while end >= 0:
            if self._discarding:
                self._discarding = False
            elif self._pending:
                if len(self._pending) + end - start > limit:
                    results.append(_too_long(limit))
                else:
                    self._keep(data[start:end])
                    _append(results, bytes(self._pending))
                self._drop_pending()
            elif end - start > limit:
                results.append(_too_long(limit))
            else:
                _append(results, data[start:end])
            start = end + 1
            end = data.find(b"\n", start)
        if not self._discarding:
            if len(self._pending) + len(data) - start > limit:
                results.append(_too_long(limit))
                self._drop_pending()
                self._discarding = True
            else:
                self._keep(data[start:])
        return results

    def _keep(self, data: bytes) -> None:
        """Append to the pending line; its size stays within the limit (_split sees to it)."""
        self._pending += data

    def _drop_pending(self) -> None:
        """Forget the pending line."""
        self._pending.clear()


# parse_lines holds a whole buffer anyway, so it needs no limit of its own.
_UNLIMITED: Final = 2**62


def _append(results: list[Incoming], line: bytes) -> None:
    # The opening brace is checked first: strip() builds a new object for every line.
    if line[:1] == b"{" or line.strip(_JSON_SPACE):
        results.append(parse(line))


def _too_long(limit: int) -> Refused:
    return Refused(None, ParseError(LINE_TOO_LONG.format(limit=limit)))


def _chunk_bytes(chunk: object) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, bytearray | memoryview):
        return bytes(chunk)
    raise TypeError(
        f"feed() takes bytes, bytearray or memoryview, not {type(chunk).__name__}"
    )
