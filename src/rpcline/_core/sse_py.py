"""The pure-Python twin of ``sse_c.pyx``: Server-Sent Events in, classified messages out.

The framing is WHATWG HTML's "Interpreting an event stream": a line ends with CRLF, LF
or CR (a CR ends its line at once, and an LF right after it, even in the next chunk, is
part of the same line end); a UTF-8 BOM is skipped at the stream's start; ``data``
values join with LF; one space after the colon is dropped; comments and unknown fields
are ignored; ``id`` is stream state (kept across events, ignored when it holds NUL) and
so is ``retry`` (ASCII digits only: the reconnection time); a blank line dispatches the
event, unless no ``data`` line came, and the end of the stream discards an unfinished one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from inspect import Parameter, Signature  # orjson loads inspect anyway
from operator import itemgetter
from threading import Lock
from typing import Any, Final, Generic, Self, TypeVar, overload

from rpcline._core import route_py
from rpcline._core.message_py import Incoming, ParseError, Refused, parse
from rpcline._core.shared import REENTERED, bind_parser
from rpcline._core.sse_shared import DATA_PREFIX, DEFAULT_MAX_EVENT_BYTES, EVENT_TOO_LONG, encode

__all__ = ("DEFAULT_MAX_EVENT_BYTES", "Event", "EventStreamParser", "encode")

BOM: Final = b"\xef\xbb\xbf"
_PREFIX: Final = len(DATA_PREFIX)
_LINE_END: Final = re.compile(rb"[\r\n]")
_LINE_ENDS: Final = re.compile(rb"[\r\n]*")
_CR_LF: Final = (b"\r", b"\n")
# How the SDK's server (sse-starlette) starts an event: the line-by-line path's shortcut.
_SDK_HEAD: Final = b"event: message\r\ndata: "
# Its event line counts against the limit as any line does: under this limit (with the six
# bytes of a data prefix) it alone passes it, and _sdk_frame leaves the event to the lines.
_SDK_MIN_LIMIT: Final = len(b"event: message") - _PREFIX
_JSON_SPACE: Final = b" \t\r\n"
_new = tuple.__new__
# What an event carries: classify's results, and its refusals of over-long events.
T = TypeVar("T", covariant=True)
# What a given classify returns.
R = TypeVar("R")


class Event(tuple, Generic[T]):  # type: ignore[type-arg]
    """One dispatched event: its type, the stream's last event id and reconnection time
    when it was dispatched, and ``classify``'s result for its data (``None`` when the data
    holds only JSON whitespace, as in the empty priming event a resumable server sends).
    """

    __slots__ = ()
    __match_args__ = ("event", "id", "retry", "message")

    def __new__(
        cls, event: str = "message", id: str = "", retry: int | None = None,
        message: T | None = None,
    ) -> Self:
        return _new(cls, (event, id, retry, message))

    event: str = property(itemgetter(0))  # type: ignore[assignment]
    id: str = property(itemgetter(1))  # type: ignore[assignment]
    retry: int | None = property(itemgetter(2))  # type: ignore[assignment]
    message: T | None = property(itemgetter(3))  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if type(other) is not Event:
            return False if isinstance(other, tuple) else NotImplemented
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"Event(event={self[0]!r}, id={self[1]!r}, retry={self[2]!r}, message={self[3]!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Event, tuple(self))


class EventStreamParser(Generic[T]):
    """Classifies the events of a ``text/event-stream`` from chunks cut anywhere.

    Each event's data goes to ``classify`` as bytes: ``parse`` (the default), ``route``,
    or any callable taking bytes. ``max_event_bytes`` bounds what the parser holds for
    one event: its data so far plus the line being read. An event that runs past it
    yields one ``Event`` at once whose message is ``Refused(id, ParseError("event exceeds
    … bytes"))`` (a refused ``Route`` for ``route``), ``id`` read from the data's first
    ``max_event_bytes`` bytes as ``StreamParser`` reads an over-long line's; the rest of
    the event, its fields included, is dropped up to its blank line. One parser serves
    one stream and one thread: ``feed`` or ``close`` while a ``feed`` of the same parser
    runs (its ``classify`` calling back, or another thread while ``classify`` runs) is a
    ``RuntimeError``.

    When ``classify`` raises, the call raises it and the framing stays intact: the event
    it was given is consumed, the events already made and the rest of the chunk are kept,
    and the next ``feed`` (or ``close``) returns them first; ``classify`` only ever gets
    whole events' data. A ``close`` that raised has ended the stream all the same: call
    it again for what it still owed.
    """

    __slots__ = ("_after_cr", "_at_start", "_busy", "_classify", "_closed", "_data",
                 "_data_prefix", "_discarding", "_event", "_id", "_in_line", "_limit", "_line",
                 "_owed", "_rest", "_retry", "_span")  # fmt: skip

    # For inspect.signature, as the core's: __init__ takes *args to word its own errors.
    __signature__ = Signature([
        Parameter("max_event_bytes", Parameter.POSITIONAL_OR_KEYWORD,
                  default=DEFAULT_MAX_EVENT_BYTES),
        Parameter("classify", Parameter.KEYWORD_ONLY, default=parse),
    ])

    # The type follows classify, as StreamParser's does.
    @overload
    def __init__(self: EventStreamParser[Incoming], max_event_bytes: int = ...) -> None: ...
    @overload
    def __init__(
        self: EventStreamParser[route_py.Route], max_event_bytes: int = ...,
        *, classify: Callable[[bytes], route_py.Route],
    ) -> None: ...
    @overload
    def __init__(
        self: EventStreamParser[R | Refused], max_event_bytes: int = ...,
        *, classify: Callable[[bytes], R],
    ) -> None: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # *args: the core's TypeErrors for wrong arguments (_shared.bind_parser), not Python's.
        max_event_bytes, classify = bind_parser("EventStreamParser", "max_event_bytes",
                                                DEFAULT_MAX_EVENT_BYTES, parse, args, kwargs)
        if type(max_event_bytes) is not int:
            raise TypeError(f"max_event_bytes must be an int, not {type(max_event_bytes).__name__}")
        if max_event_bytes <= 0:
            raise ValueError(f"max_event_bytes must be positive, not {max_event_bytes}")
        if not callable(classify):
            raise TypeError(f"classify must be callable, not {type(classify).__name__}")
        self._limit = max_event_bytes
        self._classify = classify
        self._line = bytearray()  # the unfinished line's bytes from earlier chunks
        self._data = bytearray()  # WHATWG's data buffer: each value and an LF
        # Not 0: the unfinished line is a data line, whose value so far ends the data buffer
        # (so a large value is copied once); its "data:" or "data: " took this many bytes,
        # which buffered_bytes and the limit count as they count a pending line's.
        self._data_prefix = 0
        # (start, end) of the event's only data value when it lies in the current chunk:
        # it reaches classify as one slice, never joined (see _dispatch).
        self._span: tuple[int, int] | None = None
        self._event = "message"  # the type to dispatch: WHATWG's type buffer, or "message"
        self._id = ""  # the last event id buffer (WHATWG's initial value is "")
        self._retry: int | None = None  # the reconnection time, once a retry field set it
        self._discarding = False  # inside an over-long event, dropping it up to its blank line
        self._in_line = False  # while discarding: the current line has bytes (it is not blank)
        self._after_cr = False  # the last chunk ended with CR: an LF first is that line's end
        self._at_start = True  # a BOM may still be arriving
        self._closed = False
        # After classify raised: the events made before it, and the chunk after its event.
        self._owed: list[Event] | None = None
        self._rest: bytes | None = None
        # Held while feed runs (the core's _chunk would be reset under it by a second call):
        # a lock, as a flag's test and set could be split by a thread switch here.
        self._busy = Lock()

    @property
    def max_event_bytes(self) -> int:
        return self._limit

    @property
    def classify(self) -> Callable[[bytes], Any]:
        return self._classify

    @property
    def buffered_bytes(self) -> int:
        """What the parser holds for the current event between chunks (data and line)."""
        return len(self._data) + len(self._line) + self._data_prefix

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[Event[T]]:
        """The events this chunk completes; the unfinished one is kept for later."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError(REENTERED.format("EventStreamParser.feed"))
        try:
            if self._closed:
                raise ValueError("feed() after close()")
            return self._feed(_chunk_bytes(chunk))
        finally:
            self._busy.release()

    def _feed(self, data: bytes) -> list[Event]:
        events = self._take_owed()
        if self._rest is not None:  # what a raising classify left of the last chunk
            data = self._rest + data
            self._rest = None
        if not data:  # nothing to say, and an LF may still follow a CR
            return events
        if self._at_start:
            data = bytes(self._line) + data
            self._line.clear()
            if len(data) < len(BOM) and BOM.startswith(data):
                self._line += data  # too short to tell: wait for the next chunk
                return events
            self._at_start = False
            data = data.removeprefix(BOM)
        return self._lines(data, events)

    def close(self) -> list[Event[T]]:
        """End the stream: an unfinished event is discarded (WHATWG), so this gives [] (or
        what a ``classify`` that raised still owed)."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError(REENTERED.format("EventStreamParser.close"))
        try:
            self._closed = True
            events = self._take_owed()
            if self._rest is not None:
                rest, self._rest = self._rest, None
                self._lines(rest, events)
            self._line.clear()
            self._data.clear()
            self._data_prefix = 0
            self._discarding = False
            return events
        finally:
            self._busy.release()

    def _take_owed(self) -> list[Event]:
        """The events a raising classify kept back, or a new list."""
        owed, self._owed = self._owed, None
        return [] if owed is None else owed

    def _lines(self, data: bytes, events: list[Event]) -> list[Event]:
        size = len(data)
        start = 0
        resume = -1  # where the chunk goes on if classify raises: set around each call of it
        if self._after_cr:
            self._after_cr = False
            start = 1 if data[:1] == b"\n" else 0
        try:
            while True:
                if self._data_prefix:  # a data line goes on from the last chunk
                    end = self._end_data_line(events, data, start)
                    if end == size:
                        start = size
                        break
                else:
                    if (start < size and data[start] == 0x65 and not self._discarding
                            and not self._line):
                        end = self._sdk_frame(data, start)
                        if end >= 0:
                            resume = end + 4
                            self._event = "message"
                            value = data[start + len(_SDK_HEAD) : end]
                            events.append(self._event_of(self._classify_data(value)))
                            start, resume = end + 4, -1
                            continue
                    end = _line_end(data, start)
                    if end < 0:
                        break
                    if self._discarding:
                        self._skip(end > start)
                    elif self._line:
                        if len(self._line) + end - start > self._room():  # refused before it
                            self._refuse_line(events, data, start, end)  # grows past the limit
                        else:
                            self._line += memoryview(data)[start:end]
                            self._field(events, self._line, 0, len(self._line), False)
                            self._line.clear()
                    elif end == start:  # a blank line: an event may go to classify
                        resume = end + (2 if data[end : end + 2] == b"\r\n" else 1)
                        self._field(events, data, start, end, True)
                        resume = -1
                        if data[end + 1 : end + 2] in _CR_LF:  # more blank lines: no event
                            end = _last_line_end(data, end)
                    else:
                        self._field(events, data, start, end, True)
                start = end + 1
                if data[end] == 0x0D:  # CR: an LF after it belongs to the same line end
                    if start == size:
                        self._after_cr = True
                    elif data[start] == 0x0A:
                        start += 1
        except BaseException:
            if resume >= 0:
                self._consumed(events, data, resume)
            raise
        self._keep(events, data, start)
        return events

    def _consumed(self, events: list[Event], data: bytes, resume: int) -> None:
        """classify raised on the event whose line end runs up to ``resume``: that event is
        gone; the events before it and the rest of the chunk wait for the next call, so no
        event is lost or handed over in part (issue 29)."""
        self._event = "message"
        self._after_cr = resume == len(data) and data[-1:] == b"\r"
        self._owed, self._rest = events, data[resume:]

    def _sdk_frame(self, data: bytes, start: int) -> int:
        """Where the data of the event at ``start`` ends when the SDK's server wrote it
        (``event: message``, one data line, a blank line, each ended with CRLF) and it lies
        whole in the chunk, with no data held: the caller dispatches it as its three lines
        would be; -1 for anything else, which the line-by-line path takes."""
        if (self._span is not None or self._data or self._limit < _SDK_MIN_LIMIT
                or not data.startswith(_SDK_HEAD, start)):
            return -1
        value = start + len(_SDK_HEAD)
        end = _line_end(data, value)
        if end < 0 or not data.startswith(b"\r\n\r\n", end) or end - value > self._limit:
            return -1
        return end

    def _skip(self, has_bytes: bool) -> None:
        """A line of an over-long event ends; a blank one ends the event, undispatched."""
        if not (has_bytes or self._in_line):
            self._discarding = False
            self._event = "message"
        self._in_line = False

    def _field(
        self, events: list[Event], buf: bytes | bytearray, start: int, end: int, in_chunk: bool
    ) -> None:
        """One complete line, ``buf[start:end]``; ``in_chunk``: it lies in the caller's chunk."""
        if start == end:
            self._dispatch(events, buf)
            return
        name: bytes | bytearray = b""  # a comment's (":" first): no field, and no name to read
        value_start = end
        if buf[start] != 0x3A:
            colon = buf.find(b":", start, end)
            if colon < 0:
                name = buf[start:end]
            else:
                name, value_start = buf[start:colon], colon + 1
                if value_start < end and buf[value_start] == 0x20:
                    value_start += 1
            if name == b"data":
                self._add_data(events, buf, value_start, end, in_chunk)
                return
        # Any other line counts whole (_room, inlined: two calls on every comment line cost
        # the twin about a tenth more); held, _lines counted it before it grew.
        if end - start > self._limit + _PREFIX - len(self._data) - (
                self._span[1] - self._span[0] + 1 if self._span else 0):
            self._refuse_line(events, buf, start, end)
        elif name == b"event":
            self._event = _event_type(buf[value_start:end])
        elif name == b"id":
            if buf.find(b"\0", value_start, end) < 0:
                self._id = _text(buf[value_start:end])
        elif name == b"retry":
            value = buf[value_start:end]
            if value.isdigit():  # bytes.isdigit: ASCII digits only, as WHATWG asks
                try:
                    self._retry = int(value)
                except ValueError:  # beyond int()'s digit limit: no reconnection time
                    pass

    def _add_data(
        self, events: list[Event], buf: bytes | bytearray, start: int, end: int, in_chunk: bool
    ) -> None:
        held = self._held()
        if held + end - start > self._limit:
            self._flush_span(buf)
            events.append(self._too_long(buf, start, end))
            return
        if in_chunk and not held:
            self._span = (start, end)
            return
        self._flush_span(buf)
        self._data += memoryview(buf)[start:end]
        self._data.append(0x0A)

    def _end_data_line(self, events: list[Event], data: bytes, start: int) -> int:
        """The pending data line goes on at ``start``: its value joins the data buffer up to
        the line's end, which is returned, or up to the chunk's end (then ``len(data)``). The
        limit counts as ``_add_data`` counts a whole value and ``_keep`` a pending line."""
        end = _line_end(data, start)
        if end >= 0:  # the line ends here
            self._data_prefix = 0
            if len(self._data) + end - start > self._limit:
                del self._data[self._limit :]
                events.append(self._too_long(data, start, end))
                return end
            self._data += memoryview(data)[start:end]
            self._data.append(0x0A)
            return end
        if len(data) - start > self._limit + len(DATA_PREFIX) - len(self._data) - self._data_prefix:
            self._data_prefix = 0  # it goes on past the limit
            del self._data[self._limit :]
            events.append(self._too_long(data, start, len(data)))
            self._in_line = True
        else:
            self._data += memoryview(data)[start:]
        return len(data)

    def _flush_span(self, buf: bytes | bytearray) -> None:
        """The event's first data value leaves the chunk for the data buffer."""
        if self._span is not None:
            start, end = self._span
            self._data += memoryview(buf)[start:end]
            self._data.append(0x0A)
            self._span = None

    def _dispatch(self, events: list[Event], buf: bytes | bytearray) -> None:
        if self._span is not None:
            start, end = self._span
            span = buf[start:end]
            data = span if isinstance(span, bytes) else bytes(span)  # classify gets bytes
            self._span = None
        elif self._data:
            data = bytes(self._data[:-1])
            self._data.clear()
        else:  # no data line: WHATWG dispatches nothing (the id is kept all the same)
            self._event = "message"
            return
        events.append(self._event_of(self._classify_data(data)))
        self._event = "message"

    def _classify_data(self, data: bytes) -> Any:
        """classify(data), or None when the data holds only JSON whitespace."""
        # The opening brace is checked first: strip() builds a new object for every event.
        return self._classify(data) if data[:1] == b"{" or data.strip(_JSON_SPACE) else None

    def _event_of(self, message: Any) -> Event:
        """An event of ``message`` with the stream's state as it stands."""
        return _new(Event, (self._event, self._id, self._retry, message))

    def _keep(self, events: list[Event], data: bytes, start: int) -> None:
        """The chunk ends inside a line (or at a line end): keep what the event needs."""
        self._flush_span(data)
        if self._discarding:
            self._in_line = self._in_line or start < len(data)
            return
        if self._data_prefix:  # _end_data_line took the chunk
            return
        if len(self._line) + len(data) - start > self._room():
            self._refuse_line(events, data, start, len(data))
            self._in_line = True
        elif not self._line and len(data) - start > 5 and data.startswith(b"data:", start):
            # A data line begins: its value goes to the data buffer at once, not through the
            # pending line (which would copy it there again when the line ends).
            self._data_prefix = 6 if data[start + 5] == 0x20 else 5
            self._data += memoryview(data)[start + self._data_prefix :]
        else:
            self._line += memoryview(data)[start:]

    def _held(self) -> int:
        """The event's data so far, an LF after each value, wherever it lies."""
        return len(self._data) + (self._span[1] - self._span[0] + 1 if self._span else 0)

    def _room(self) -> int:
        """How many bytes a line may take with the data so far: every line counts whole, data
        or not, held across chunks or not, so that where the network cuts changes nothing;
        six bytes more, for a data line's ``data: `` (_add_data bounds the data itself)."""
        return self._limit + _PREFIX - self._held()

    def _refuse_line(
        self, events: list[Event], data: bytes | bytearray, start: int, end: int
    ) -> None:
        """The line whose bytes go on at ``data[start:end]`` (after the pending line's) takes
        the event past the limit: only what fits is kept, for the refusal's id when it is a
        data line; then the line goes."""
        room = self._room() - len(self._line)
        self._flush_span(data)
        self._line += memoryview(data)[start : start + max(min(room, end - start), 0)]
        events.append(self._too_long(self._line, _data_value(self._line), len(self._line)))
        self._line.clear()

    def _too_long(self, buf: bytes | bytearray, start: int, end: int) -> Event:
        """The refusal of the event the data value ``buf[start:end]`` takes past the limit.

        Only the data's first ``max_event_bytes`` bytes are scanned for an id, then dropped:
        a value in the pending line that is all the data becomes the data buffer in place,
        anything else tops the data buffer up to the limit; memory stays within the limit.
        """
        end = min(end, start + max(0, self._limit - len(self._data)))
        if buf is self._line and not self._data:
            self._data, self._line = self._line, self._data
            del self._data[end:]
            del self._data[:start]
        else:
            self._data += memoryview(buf)[start:end]
        error = ParseError(EVENT_TOO_LONG.format(limit=self._limit))
        id = route_py.prefix_id(self._data)
        self._data.clear()
        self._discarding = True
        self._in_line = False
        if self._classify is route_py.route:
            message: Any = route_py.refusal(error, id)
        else:
            message = Refused(id, error)
        return self._event_of(message)


def _line_end(data: bytes, start: int) -> int:
    """The offset of the next CR or LF from ``start`` on, or -1."""
    found = _LINE_END.search(data, start)
    return -1 if found is None else found.start()


def _last_line_end(data: bytes, end: int) -> int:
    """The last of the line ends that run on from ``data[end]``, one: each is a blank line
    with nothing to dispatch after the first (a flood of CRs costs a regex step each)."""
    return _LINE_ENDS.match(data, end).end() - 1  # type: ignore[union-attr]


def _data_value(line: bytearray) -> int:
    """Where the value of an unfinished ``data`` line starts, or its size for any other field."""
    if line.startswith(b"data:"):
        return 6 if line[5:6] == b" " else 5
    return len(line)


def _event_type(value: bytes | bytearray) -> str:
    """The type an event field sets: an empty one dispatches as "message", the common type."""
    return "message" if value in (b"", b"message") else _text(value)


def _text(value: bytes | bytearray) -> str:
    # The stream is UTF-8 decoded with replacement (WHATWG).
    return value.decode("utf-8", "replace")


def _chunk_bytes(chunk: object) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, bytearray | memoryview):
        return bytes(chunk)
    raise TypeError(f"feed() takes bytes, bytearray or memoryview, not {type(chunk).__name__}")
