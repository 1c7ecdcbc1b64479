"""The pure-Python twin of ``stream_c.pyx``: many lines at a time, from buffers and streams.

Only LF ends a line (a CR before it is JSON whitespace); lines holding only JSON
whitespace are separators and yield nothing; every other line yields exactly one result,
as ``parse`` gives it. A UTF-8 BOM is skipped at the very start of a stream or buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from inspect import Parameter, Signature  # orjson loads inspect anyway
from threading import Lock
from typing import Any, Final, Generic, TypeVar, overload

from rpcline._core import route_py
from rpcline._core.message_py import Incoming, ParseError, Refused, parse
from rpcline._core.shared import (
    DEFAULT_MAX_LINE_BYTES,
    LINE_TOO_LONG,
    REENTERED,
    bind_parser,
    not_lines,
)

__all__ = ("DEFAULT_MAX_LINE_BYTES", "StreamParser", "parse_lines")

BOM: Final = b"\xef\xbb\xbf"
# What a parser yields: classify's results, and its refusals of over-long lines.
T = TypeVar("T", covariant=True)
# What a given classify returns.
R = TypeVar("R")
_JSON_SPACE: Final = b" \t\r"


def parse_lines(data: bytes | bytearray | memoryview | str) -> list[Incoming]:
    """Classify every line of a newline-delimited buffer; a last line needs no LF."""
    if isinstance(data, str):
        lines = data.removeprefix("\ufeff").split("\n")
        return [parse(line) for line in lines if line.strip(" \t\r")]
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(not_lines(data))
    parser = StreamParser(_UNLIMITED)
    return parser.feed(data) + parser.close()


class StreamParser(Generic[T]):
    """Classifies lines from chunks cut anywhere, with memory bounded by ``max_line_bytes``.

    Each line's bytes go to ``classify``: ``parse`` (the default), ``route``, or any
    callable taking bytes. A line longer than the limit (its bytes without the LF) yields
    one refusal, ``Refused(id, ParseError("line exceeds … bytes"))`` (for ``route``, a
    refused ``Route`` whose spans name the members complete within the limit, so that a
    relay can tell a request from an answer), where ``id`` is the line's when its first
    ``max_line_bytes`` bytes hold a complete top-level id member
    (``route_py.prefix_id``), else ``None``; its bytes
    are dropped up to the next LF and parsing resumes after it. One parser serves one
    stream and one thread: ``feed`` or ``close`` while a call of the same parser runs (its
    ``classify`` calling back, or another thread while ``classify`` runs) is a
    ``RuntimeError``.

    When ``classify`` raises, the call raises it and the framing stays intact: the line
    it was given is consumed, the results already made and the rest of the chunk are
    kept, and the next ``feed`` (or ``close``) returns them first; ``classify`` only ever
    gets whole lines. A ``close`` that raised has ended the stream all the same: call it
    again for what it still owed.
    """

    __slots__ = ("_at_start", "_busy", "_classify", "_closed", "_discarding", "_limit",
                 "_owed", "_pending", "_rest")  # fmt: skip

    # For inspect.signature, as the core's: __init__ takes *args to word its own errors.
    __signature__ = Signature([
        Parameter("max_line_bytes", Parameter.POSITIONAL_OR_KEYWORD,
                  default=DEFAULT_MAX_LINE_BYTES),
        Parameter("classify", Parameter.KEYWORD_ONLY, default=parse),
    ])

    # The type follows classify: parse (the default) gives Incoming, route gives Route,
    # and any other callable its own results or the Refused of an over-long line.
    @overload
    def __init__(self: StreamParser[Incoming], max_line_bytes: int = ...) -> None: ...
    @overload
    def __init__(
        self: StreamParser[route_py.Route], max_line_bytes: int = ...,
        *, classify: Callable[[bytes], route_py.Route],
    ) -> None: ...
    @overload
    def __init__(
        self: StreamParser[R | Refused], max_line_bytes: int = ...,
        *, classify: Callable[[bytes], R],
    ) -> None: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # *args: the core's TypeErrors for wrong arguments (_shared.bind_parser), not Python's.
        if len(args) == 1 and not kwargs:  # parse_lines's call: no binder
            max_line_bytes, classify = args[0], parse
        else:
            max_line_bytes, classify = bind_parser("StreamParser", "max_line_bytes",
                                                   DEFAULT_MAX_LINE_BYTES, parse, args, kwargs)
        if type(max_line_bytes) is not int:
            raise TypeError(f"max_line_bytes must be an int, not {type(max_line_bytes).__name__}")
        if max_line_bytes <= 0:
            raise ValueError(f"max_line_bytes must be positive, not {max_line_bytes}")
        if not callable(classify):
            raise TypeError(f"classify must be callable, not {type(classify).__name__}")
        self._limit = max_line_bytes
        self._classify = classify
        self._pending = bytearray()  # the current line's bytes from earlier chunks
        self._discarding = False  # inside an over-long line, dropping bytes up to its LF
        self._at_start = True  # a BOM may still be arriving
        self._closed = False
        # After classify raised: the results made before it, and the chunk after its line.
        self._owed: list[Any] | None = None
        self._rest: bytes | None = None
        # Held while feed or close runs: a lock, as a flag's test and set could be split
        # by a thread switch here (the core's flag cannot: nothing releases the GIL there).
        self._busy = Lock()

    @property
    def max_line_bytes(self) -> int:
        return self._limit

    @property
    def classify(self) -> Callable[[bytes], Any]:
        return self._classify

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[T]:
        """Classify the lines this chunk completes; keep the unfinished one for later."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError(REENTERED.format("StreamParser.feed"))
        try:
            if self._closed:
                raise ValueError("feed() after close()")
            return self._feed(_chunk_bytes(chunk))
        finally:
            self._busy.release()

    def _feed(self, data: bytes) -> list[T]:
        results = self._take_owed()
        if self._rest is not None:  # what a raising classify left of the last chunk
            data = self._rest + data
            self._rest = None
        if self._at_start:
            data = bytes(self._pending) + data
            self._drop_pending()
            if len(data) < len(BOM) and BOM.startswith(data):
                self._keep(data)  # too short to tell: wait for the next chunk
                return results
            self._at_start = False
            if data.startswith(BOM):
                data = data[len(BOM) :]
        return self._split(data, results)

    def close(self) -> list[T]:
        """Classify the final line if it had no LF; the parser takes no more input."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError(REENTERED.format("StreamParser.close"))
        try:
            self._closed = True
            self._at_start = False
            results = self._take_owed()
            if self._rest is not None:
                rest, self._rest = self._rest, None
                self._split(rest, results)
            line = b"" if self._discarding else bytes(self._pending)
            self._drop_pending()
            self._discarding = False
            try:
                self._append(results, line)
            except BaseException:
                self._owed = results  # for the next close
                raise
            return results
        finally:
            self._busy.release()

    def _take_owed(self) -> list[T]:
        """The results a raising classify kept back, or a new list."""
        owed, self._owed = self._owed, None
        return [] if owed is None else owed

    def _split(self, data: bytes, results: list[T]) -> list[T]:
        limit = self._limit
        start = 0
        end = data.find(b"\n")
        try:
            while end >= 0:
                line_start, start = start, end + 1  # consumed, whatever classify does
                if self._discarding:
                    self._discarding = False
                elif len(self._pending) + end - line_start > limit:
                    results.append(self._too_long(data, line_start))
                elif self._pending:
                    self._keep(data[line_start:end])
                    line = bytes(self._pending)
                    self._drop_pending()
                    self._append(results, line)
                else:
                    self._append(results, data[line_start:end])
                end = data.find(b"\n", start)
        except BaseException:
            # classify raised: its line is gone; what came before it and what follows wait
            # for the next call, so no line is lost or spliced onto another (issue 29).
            self._drop_pending()
            self._owed, self._rest = results, data[start:]
            raise
        if not self._discarding and len(self._pending) + len(data) - start > limit:
            results.append(self._too_long(data, start))
            self._discarding = True
        elif not self._discarding:
            self._keep(data[start:])
        return results

    def _append(self, results: list[Any], line: bytes) -> None:
        # The opening brace is checked first: strip() builds a new object for every line.
        if line[:1] == b"{" or line.strip(_JSON_SPACE):
            results.append(self._classify(line))

    def _too_long(self, data: bytes, start: int) -> Any:
        """The refusal of the line that runs past the limit from ``data[start:]``.

        The pending line is topped up to the limit and scanned where it lies for an id, so
        memory stays within the limit; then it is dropped.
        """
        self._keep(memoryview(data)[start : start + self._limit - len(self._pending)])
        error = ParseError(LINE_TOO_LONG.format(limit=self._limit))
        try:
            if self._classify is route_py.route:
                return route_py.prefix_refusal(error, self._pending, True)
            return Refused(route_py.prefix_id(self._pending), error)
        finally:
            self._drop_pending()

    def _keep(self, data: bytes | memoryview) -> None:
        """Append to the pending line; its size stays within the limit (_split sees to it)."""
        self._pending += data

    def _drop_pending(self) -> None:
        """Forget the pending line."""
        self._pending.clear()


# parse_lines holds a whole buffer anyway, so it needs no limit of its own.
_UNLIMITED: Final = 2**62


def _chunk_bytes(chunk: object) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, bytearray | memoryview):
        return bytes(chunk)
    raise TypeError(
        f"feed() takes bytes, bytearray or memoryview, not {type(chunk).__name__}"
    )
