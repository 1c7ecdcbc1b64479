# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Cython core of SSE: ``sse_py.py`` documents the behaviour, this mirrors it.

Line ends are found in the chunk's own buffer, CR and LF in one AVX2 pass where the CPU
has it (``line_end.h``), else with memchr. An event whose only data line lies in the
chunk is classified from where it lies: no data buffer, no join; small data as bytes,
large data through a view released at once (as ``stream_c`` does for lines). The event
shape the SDK's server writes is taken whole, skipping the line-by-line path.
"""

cimport cython
from cpython.buffer cimport PyBUF_READ, PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF
from cpython.memoryview cimport PyMemoryView_FromMemory
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memchr, memcmp, memcpy, memmove

from rpcline._core.message_c cimport ParseError, Refused, _parse_decodable
from inspect import Parameter, Signature  # orjson loads inspect anyway
from types import GenericAlias

from rpcline._core.message_c import parse
from rpcline._core.route_c cimport _refusal
from rpcline._core.scan_c cimport _prefix_id
from rpcline._core.route_c import Route, route

from rpcline._core.sse_shared import DATA_PREFIX, DEFAULT_MAX_EVENT_BYTES, EVENT_TOO_LONG, encode
from rpcline._core.shared import REENTERED, bind_parser

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)
    PyObject* _new_bytes "PyBytes_FromStringAndSize"(const char*, Py_ssize_t)
    int _resize_bytes "_PyBytes_Resize"(PyObject**, Py_ssize_t)
    char* _bytes_of "PyBytes_AS_STRING"(PyObject*)

cdef extern from "line_end.h":
    const unsigned char* _avx2_line_end "rpcline_avx2_line_end"(
        const unsigned char*, const unsigned char*) noexcept nogil
    const unsigned char* _avx2_copy_line "rpcline_avx2_copy_line"(
        unsigned char*, const unsigned char*, const unsigned char*) noexcept nogil
    bint _avx2_supported "rpcline_line_end_avx2_supported"() noexcept nogil

cdef const char* BOM = b"\xef\xbb\xbf"
cdef Py_ssize_t _PREFIX = len(DATA_PREFIX)
# The SDK's event line counts against the limit as any line does: under this limit (with the
# six bytes of a data prefix) it alone passes it, and _sdk_frame leaves the event to the lines.
cdef Py_ssize_t _SDK_MIN_LIMIT = len(b"event: message") - _PREFIX
# Data from this size on is decoded through a view instead of a copy (see _classify_data).
cdef Py_ssize_t _VIEW_BYTES = 16 * 1024
# A buffer's first allocation, and the most it keeps between events.
cdef Py_ssize_t _BUFFER_START = 4 * 1024
# Lines end where one AVX2 pass finds CR or LF (line_end.h), else where memchr does.
cdef bint _AVX2 = _avx2_supported()
# The line-end scans this build can run on this CPU, the one in use last; tests switch.
LINE_END_PATHS = ("memchr", "avx2") if _AVX2 else ("memchr",)


def use_line_end_path(name):
    """Find line ends with ``name``, one of ``LINE_END_PATHS``."""
    global _AVX2
    if name not in LINE_END_PATHS:
        raise ValueError(f"{name!r} is not one of {LINE_END_PATHS}")
    _AVX2 = name == "avx2"


def line_end_path():
    """The line-end scan in use."""
    return "avx2" if _AVX2 else "memchr"


cdef struct Buffer:
    # Grows fourfold up to the limit, so data arriving in many chunks is copied about once
    # (a bytearray grows to the exact size and may copy everything each time); one byte
    # more than the content is allocated, for the NUL the route scanner needs after a prefix.
    # The bytes live in a bytes object of capacity - 1 bytes (its NUL is the one more), so
    # that large data goes to classify as that object, with no copy (_take).
    PyObject* owner
    char* bytes
    Py_ssize_t size
    Py_ssize_t capacity


# No freelist: as for Route, its inlined memset costs more than the allocator saves.
@cython.final
cdef class Event:
    """Event(event='message', id='', retry=None, message=None)
--

    One dispatched event: its type, the stream's last event id and reconnection time
    when it was dispatched, and ``classify``'s result for its data (``None`` when the data
    holds only JSON whitespace, as in the empty priming event a resumable server sends).
    """

    cdef readonly str event
    cdef readonly str id
    cdef readonly object retry
    cdef readonly object message

    # Subscriptable as the twin's Generic class is (Event[Route]): the type is for
    # type checkers, the class the same.
    __class_getitem__ = classmethod(GenericAlias)

    __match_args__ = ("event", "id", "retry", "message")

    def __init__(self, event="message", id="", retry=None, message=None):
        self.event, self.id, self.retry, self.message = event, id, retry, message

    def __eq__(self, other):
        if type(other) is not Event:
            return NotImplemented
        return self._fields() == (<Event>other)._fields()

    def __hash__(self):
        return hash(self._fields())

    cdef tuple _fields(self):
        return (self.event, self.id, self.retry, self.message)

    def __repr__(self):
        return (f"Event(event={self.event!r}, id={self.id!r}, retry={self.retry!r}, "
                f"message={self.message!r})")

    def __reduce__(self):
        return (Event, self._fields())


cdef class EventStreamParser:
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

    cdef Buffer _line  # the unfinished line's bytes from earlier chunks
    cdef Buffer _data  # WHATWG's data buffer: each value and an LF
    # Not 0: the unfinished line is a data line, whose value so far ends the data buffer (so
    # a large value is copied once); its "data:" or "data: " took this many bytes, which
    # buffered_bytes and the limit count as they count a pending line's.
    cdef Py_ssize_t _data_prefix
    # The chunk _lines is reading, and the event's only data value when it lies there.
    cdef const char* _chunk
    cdef Py_ssize_t _span_start
    cdef Py_ssize_t _span_end
    cdef bint _has_span
    cdef str _event  # the type to dispatch: WHATWG's type buffer, "message" when it is empty
    cdef str _id  # the last event id buffer
    cdef object _retry  # the reconnection time, once a retry field set it
    cdef Py_ssize_t _limit
    cdef object _classify
    cdef bint _parses  # classify is parse: data goes to the core's C entry point
    cdef bint _discarding  # inside an over-long event, dropping it up to its blank line
    cdef bint _in_line  # while discarding: the current line has bytes (it is not blank)
    cdef bint _after_cr  # the last chunk ended with CR: an LF first is that line's end
    cdef bint _at_start  # a BOM may still be arriving
    cdef bint _closed
    # feed runs: _lines holds the chunk in _chunk, which a second call would reset under it
    # (the twin's lock: under the GIL a flag is enough)
    cdef bint _busy
    # After classify raised: the events made before it, and the chunk after its event.
    cdef list _owed
    cdef bytes _rest

    # For inspect.signature: a text signature cannot name parse as a default.
    __signature__ = Signature([
        Parameter("max_event_bytes", Parameter.POSITIONAL_OR_KEYWORD,
                  default=DEFAULT_MAX_EVENT_BYTES),
        Parameter("classify", Parameter.KEYWORD_ONLY, default=parse),
    ])

    # Subscriptable as the twin's Generic class is (EventStreamParser[Route]): the type is for
    # type checkers, the class the same.
    __class_getitem__ = classmethod(GenericAlias)

    # *args: the twin's TypeErrors for wrong arguments (_shared.bind_parser), not Cython's.
    def __cinit__(self, *args, **kwargs):
        max_event_bytes, classify = bind_parser("EventStreamParser", "max_event_bytes",
                                                DEFAULT_MAX_EVENT_BYTES, parse, args, kwargs)
        if type(max_event_bytes) is not int:
            raise TypeError(f"max_event_bytes must be an int, not {type(max_event_bytes).__name__}")
        if max_event_bytes <= 0:
            raise ValueError(f"max_event_bytes must be positive, not {max_event_bytes}")
        if not callable(classify):
            raise TypeError(f"classify must be callable, not {type(classify).__name__}")
        self._limit = min(max_event_bytes, 2**62)
        self._classify = classify
        self._parses = classify is parse
        self._line = Buffer(NULL, NULL, 0, 0)
        self._data = Buffer(NULL, NULL, 0, 0)
        self._data_prefix = 0
        self._chunk = NULL
        self._has_span = False
        self._event = "message"
        self._id = ""
        self._retry = None
        self._discarding = self._in_line = self._after_cr = self._closed = self._busy = False
        self._at_start = True
        self._owed = self._rest = None

    def __dealloc__(self):
        Py_XDECREF(self._line.owner)
        Py_XDECREF(self._data.owner)

    @property
    def max_event_bytes(self):
        return self._limit

    @property
    def classify(self):
        return self._classify

    @property
    def buffered_bytes(self):
        """What the parser holds for the current event between chunks (data and line)."""
        return self._data.size + self._line.size + self._data_prefix

    def feed(self, chunk):
        """The events this chunk completes; the unfinished one is kept for later."""
        if self._busy:
            raise RuntimeError(REENTERED.format("EventStreamParser.feed"))
        self._busy = True
        try:
            if self._closed:
                raise ValueError("feed() after close()")
            return self._feed(_chunk_bytes(chunk))
        finally:
            self._busy = False

    cdef list _feed(self, data):
        cdef list events = self._take_owed()
        if self._rest is not None:  # what a raising classify left of the last chunk
            data = self._rest + bytes(data)
            self._rest = None
        if not len(data):  # nothing to say, and an LF may still follow a CR
            return events
        cdef Py_buffer view
        cdef Py_ssize_t skip = 0
        if self._at_start and self._line.size:  # an earlier chunk began like a BOM
            data = PyBytes_FromStringAndSize(self._line.bytes, self._line.size) + bytes(data)
            _drop(&self._line)
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            if self._at_start:
                if view.len < 3 and memcmp(view.buf, BOM, view.len) == 0:
                    self._grow(&self._line, <const char*>view.buf, view.len)
                    return events
                self._at_start = False
                if view.len >= 3 and memcmp(view.buf, BOM, 3) == 0:
                    skip = 3
            return self._lines(<const char*>view.buf + skip, view.len - skip, events)
        finally:
            PyBuffer_Release(&view)

    def close(self):
        """End the stream: an unfinished event is discarded (WHATWG), so this gives [] (or
        what a ``classify`` that raised still owed)."""
        if self._busy:
            raise RuntimeError(REENTERED.format("EventStreamParser.close"))
        self._closed = True
        cdef list events = self._take_owed()
        cdef bytes rest
        if self._rest is not None:
            rest, self._rest = self._rest, None
            self._busy = True
            try:
                self._lines(rest, len(rest), events)
            finally:
                self._busy = False
        _drop(&self._line)
        _drop(&self._data)
        self._data_prefix = 0
        self._discarding = False
        return events

    cdef list _take_owed(self):
        """The events a raising classify kept back, or a new list."""
        cdef list owed = self._owed
        self._owed = None
        return [] if owed is None else owed

    cdef list _lines(self, const char* data, Py_ssize_t size, list events):
        cdef Py_ssize_t start = 0
        cdef Py_ssize_t end
        cdef Py_ssize_t resume = -1  # where the chunk goes on if classify raises (see _consumed)
        # Without AVX2: the next LF and the next CR, each looked for again only once passed
        # (-2: not yet, -1: none left), so a stream without CR costs one scan for it per chunk.
        cdef Py_ssize_t lf = -2
        cdef Py_ssize_t cr = -2
        if self._after_cr:
            self._after_cr = False
            start = 1 if data[0] == b"\n" else 0
        self._chunk = data
        try:
            while True:
                if self._data_prefix:  # a data line goes on from the last chunk
                    end = self._end_data_line(events, data, start, size)
                    if end == size:
                        start = size
                        break
                else:
                    if (start < size and data[start] == b"e" and not self._discarding
                            and not self._line.size):
                        end = self._sdk_frame(data, start, size)
                        if end >= 0:
                            resume = end + 4
                            self._event = "message"
                            events.append(self._event_of(self._classify_data(  # past the
                                data + start + 22, end - start - 22)))  # head: _sdk_frame
                            start, resume = end + 4, -1
                            continue
                    if start < size and (data[start] == b"\n" or data[start] == b"\r"):
                        end = start  # a blank line (one an event) needs no scan
                    elif _AVX2:  # CR and LF in one pass
                        end = _line_end(data, start, size)
                        if end == -1:
                            break
                    else:
                        if -1 != lf < start:
                            lf = _find(data, start, size, b"\n")
                        if -1 != cr < start:
                            cr = _find(data, start, size, b"\r")
                        if lf == -1 and cr == -1:
                            break
                        end = lf if cr == -1 or (lf != -1 and lf < cr) else cr
                    if self._discarding:
                        self._skip(end > start)
                    elif self._line.size:
                        if self._line.size + end - start > self._room():  # refused before it
                            self._refuse_line(events, data, start, end)  # grows past the limit
                        else:
                            self._grow(&self._line, data + start, end - start)
                            try:
                                self._field(events, self._line.bytes, 0, self._line.size, False)
                            finally:
                                _drop(&self._line)
                    elif end == start:  # a blank line: an event may go to classify
                        resume = end + (2 if end + 1 < size and data[end] == b"\r"
                                        and data[end + 1] == b"\n" else 1)
                        self._field(events, data, start, end, True)
                        resume = -1
                        end = _last_line_end(data, end, size)  # those right after: no event
                    else:
                        self._field(events, data, start, end, True)
                start = end + 1
                if data[end] == b"\r":  # CR: an LF after it belongs to the same line end
                    if start == size:
                        self._after_cr = True
                    elif data[start] == b"\n":
                        start += 1
            self._keep(events, data, start, size)
        except BaseException:
            if resume >= 0:
                self._consumed(events, data, size, resume)
            raise
        finally:
            self._has_span = False
            self._chunk = NULL
        return events

    cdef int _consumed(self, list events, const char* data, Py_ssize_t size,
                       Py_ssize_t resume) except -1:
        """classify raised on the event whose line end runs up to ``resume``: that event is
        gone; the events before it and the rest of the chunk wait for the next call, so no
        event is lost or handed over in part (issue 29)."""
        self._event = "message"
        self._after_cr = resume == size and data[size - 1] == b"\r"
        self._owed = events
        self._rest = PyBytes_FromStringAndSize(data + resume, size - resume)
        return 0

    cdef Py_ssize_t _sdk_frame(self, const char* data, Py_ssize_t start,
                               Py_ssize_t size) except -2:
        """Where the data of the event at ``start`` ends when the SDK's server wrote it
        (``event: message``, one data line, a blank line, each ended with CRLF) and it lies
        whole in the chunk, with no data held: the caller dispatches it as its three lines
        would be; -1 for anything else, which the line-by-line path takes."""
        # The head is sse_py._SDK_HEAD, written as a literal so that C compares it inline.
        cdef Py_ssize_t value = start + 22
        if (size - value < 4 or self._has_span or self._data.size
                or self._limit < _SDK_MIN_LIMIT
                or memcmp(data + start, b"event: message\r\ndata: ", 22) != 0):
            return -1
        cdef Py_ssize_t end = _line_end(data, value, size)
        if (end < 0 or size - end < 4 or memcmp(data + end, b"\r\n\r\n", 4) != 0
                or end - value > self._limit):
            return -1
        return end

    cdef void _skip(self, bint has_bytes) noexcept:
        """A line of an over-long event ends; a blank one ends the event, undispatched."""
        if not (has_bytes or self._in_line):
            self._discarding = False
            self._event = "message"
        self._in_line = False

    cdef int _field(self, list events, const char* buf, Py_ssize_t start, Py_ssize_t end,
                    bint in_chunk) except -1:
        """One complete line, ``buf[start:end]``; ``in_chunk``: it lies in the caller's chunk."""
        if start == end:
            return self._dispatch(events)
        cdef const char* name = buf + start
        cdef const char* colon
        cdef Py_ssize_t name_size = 0  # a comment's (":" first): no field, and no name to read
        cdef Py_ssize_t value_start = end
        if buf[start] != b":":
            colon = <const char*>memchr(name, ord(":"), end - start)
            if colon is NULL:
                name_size = end - start
            else:
                name_size, value_start = colon - name, colon - buf + 1
                if value_start < end and buf[value_start] == b" ":
                    value_start += 1
            if name_size == 4 and memcmp(name, b"data", 4) == 0:
                return self._add_data(events, buf, value_start, end, in_chunk)
        # Any other line counts whole (_room); held, _lines counted it before it grew.
        if end - start > self._room():
            return self._refuse_line(events, buf, start, end)
        cdef Py_ssize_t size = end - value_start
        if name_size == 5 and memcmp(name, b"event", 5) == 0:
            self._event = _event_type(buf + value_start, size)
        elif name_size == 2 and memcmp(name, b"id", 2) == 0:
            if memchr(buf + value_start, 0, size) is NULL:
                self._id = _text(buf + value_start, size)
        elif name_size == 5 and memcmp(name, b"retry", 5) == 0:
            if _digits(buf + value_start, size):
                try:
                    self._retry = int(PyBytes_FromStringAndSize(buf + value_start, size))
                except ValueError:  # beyond int()'s digit limit: no reconnection time
                    pass
        return 0

    cdef int _add_data(self, list events, const char* buf, Py_ssize_t start, Py_ssize_t end,
                       bint in_chunk) except -1:
        cdef Py_ssize_t held = self._held()
        if held + end - start > self._limit:
            self._flush_span()
            events.append(self._too_long(buf, start, end))
            return 0
        if in_chunk and not held:
            self._span_start, self._span_end, self._has_span = start, end, True
            return 0
        self._flush_span()
        self._grow(&self._data, buf + start, end - start)
        self._grow(&self._data, b"\n", 1)
        return 0

    cdef Py_ssize_t _end_data_line(self, list events, const char* data, Py_ssize_t start,
                                   Py_ssize_t size) except -1:
        """The pending data line goes on at ``start``: its value joins the data buffer up to
        the line's end, which is returned, or up to the chunk's end (then ``size``). The
        limit counts as ``_add_data`` counts a whole value and ``_keep`` a pending line."""
        cdef Py_ssize_t held = self._data.size
        cdef Py_ssize_t room = self._limit + _PREFIX - held - self._data_prefix
        cdef Py_ssize_t take = min(size - start, max(room, 0))
        cdef Py_ssize_t end
        cdef bint copied = _AVX2 and held >= _VIEW_BYTES  # a large value: one pass
        if copied:
            self._reserve(&self._data, take)
            end = <const char*>_avx2_copy_line(<unsigned char*>self._data.bytes + held,
                                               <const unsigned char*>data + start,
                                               <const unsigned char*>data + start + take) - data
            if end == start + take:  # no line end in what may be held: past it, or none
                end = -1 if take == size - start else _line_end(data, end, size)
        else:
            end = _line_end(data, start, size)
        if end >= 0:  # the line ends here
            self._data_prefix = 0
            if held + end - start > self._limit:
                self._data.size = min(held, self._limit)
                events.append(self._too_long(data, start, end))
                return end
        elif size - start > room:  # it goes on past the limit
            self._data_prefix = 0
            self._data.size = min(held, self._limit)
            events.append(self._too_long(data, start, size))
            self._in_line = True
            return size
        if copied:
            self._data.size = (end if end >= 0 else size) - start + held
        else:
            self._grow(&self._data, data + start, (end if end >= 0 else size) - start)
        if end < 0:
            return size
        self._grow(&self._data, b"\n", 1)
        return end

    cdef int _flush_span(self) except -1:
        """The event's first data value leaves the chunk for the data buffer."""
        if self._has_span:
            self._has_span = False
            self._grow(&self._data, self._chunk + self._span_start,
                       self._span_end - self._span_start)
            self._grow(&self._data, b"\n", 1)
        return 0

    cdef int _dispatch(self, list events) except -1:
        if self._has_span:
            self._has_span = False
            message = self._classify_data(self._chunk + self._span_start,
                                          self._span_end - self._span_start)
        elif self._data.size > _VIEW_BYTES:  # large: the buffer's own bytes, not a copy
            whole = _take(&self._data, self._data.size - 1)
            message = None if _blank(whole, len(whole)) else self._classify_bytes(whole)
        elif self._data.size:
            try:
                message = self._classify_data(self._data.bytes, self._data.size - 1)
            finally:
                _drop(&self._data)
        else:  # no data line: WHATWG dispatches nothing (the id is kept all the same)
            self._event = "message"
            return 0
        events.append(self._event_of(message))
        self._event = "message"
        return 0

    cdef Event _event_of(self, object message):
        """An event of ``message`` with the stream's state as it stands."""
        cdef Event event = Event.__new__(Event)
        event.event, event.id, event.retry = self._event, self._id, self._retry
        event.message = message
        if message is None or type(message) is Route:
            # Nothing a Route holds can refer back to the event, so the collector need not
            # visit it (a collection per 700 events otherwise); parse's results hold dicts.
            PyObject_GC_UnTrack(<void*>event)
        return event

    cdef object _classify_data(self, const char* data, Py_ssize_t size):
        """classify(data), or None when the data holds only JSON whitespace."""
        if _blank(data, size):
            return None
        if size < _VIEW_BYTES or not self._parses:
            return self._classify_bytes(PyBytes_FromStringAndSize(data, size))
        # Large data is decoded where it lies (as stream_c does for lines): the view is
        # released at once, so nothing can read the memory after this call.
        view = PyMemoryView_FromMemory(<char*>data, size, PyBUF_READ)
        try:
            return _parse_decodable(view)
        finally:
            view.release()

    cdef object _classify_bytes(self, bytes data):
        """classify(data), parse through the core's C entry point."""
        return _parse_decodable(data) if self._parses else self._classify(data)

    cdef int _keep(self, list events, const char* data, Py_ssize_t start,
                   Py_ssize_t size) except -1:
        """The chunk ends inside a line (or at a line end): keep what the event needs."""
        self._flush_span()
        if self._discarding:
            self._in_line = self._in_line or start < size
            return 0
        if self._data_prefix:  # _end_data_line took the chunk
            return 0
        if self._line.size + size - start > self._room():
            self._refuse_line(events, data, start, size)
            self._in_line = True
        elif not self._line.size and size - start > 5 and memcmp(data + start, b"data:", 5) == 0:
            # A data line begins: its value goes to the data buffer at once, not through the
            # pending line (which would copy it there again when the line ends).
            self._data_prefix = 6 if data[start + 5] == b" " else 5
            self._grow(&self._data, data + start + self._data_prefix,
                       size - start - self._data_prefix)
        else:
            self._grow(&self._line, data + start, size - start)
        return 0

    cdef inline Py_ssize_t _held(self) noexcept:
        """The event's data so far, an LF after each value, wherever it lies."""
        return self._data.size + (self._span_end - self._span_start + 1 if self._has_span else 0)

    cdef inline Py_ssize_t _room(self) noexcept:
        """How many bytes a line may take with the data so far: every line counts whole, data
        or not, held across chunks or not, so that where the network cuts changes nothing;
        six bytes more, for a data line's ``data: `` (_add_data bounds the data itself)."""
        return self._limit + _PREFIX - self._held()

    cdef int _refuse_line(self, list events, const char* data, Py_ssize_t start,
                          Py_ssize_t end) except -1:
        """The line whose bytes go on at ``data[start:end]`` (after the pending line's) takes
        the event past the limit: only what fits is kept, for the refusal's id when it is a
        data line; then the line goes."""
        cdef Py_ssize_t room = self._room() - self._line.size
        self._flush_span()
        self._grow(&self._line, data + start, max(min(room, end - start), 0))
        cdef Py_ssize_t value = _data_value(self._line.bytes, self._line.size)
        try:
            events.append(self._too_long(self._line.bytes, value, self._line.size))
        finally:
            _drop(&self._line)
        return 0

    cdef object _too_long(self, const char* buf, Py_ssize_t start, Py_ssize_t end):
        """The refusal of the event the data value ``buf[start:end]`` takes past the limit.

        Only the data's first ``max_event_bytes`` bytes are scanned for an id, then dropped:
        a value in the pending line that is all the data becomes the data buffer in place,
        anything else tops the data buffer up to the limit; memory stays within the limit.
        """
        end = min(end, start + max(0, self._limit - self._data.size))
        if buf == self._line.bytes and not self._data.size:
            self._line, self._data = self._data, self._line
            memmove(self._data.bytes, self._data.bytes + start, end - start)
            self._data.size = end - start
        else:
            self._grow(&self._data, buf + start, end - start)
        cdef ParseError error = ParseError.__new__(ParseError)
        error.reason = EVENT_TOO_LONG.format(limit=self._limit)
        self._data.bytes[self._data.size] = 0
        id = _prefix_id(<const unsigned char*>self._data.bytes, self._data.size)
        _drop(&self._data)
        self._discarding = True
        self._in_line = False
        cdef Refused refused
        if self._classify is route:
            message = _refusal(error, id)
        else:
            refused = Refused.__new__(Refused)
            refused.id, refused.error = id, error
            message = refused
        return self._event_of(message)

    cdef int _grow(self, Buffer* buffer, const char* data, Py_ssize_t size) except -1:
        """Append to a buffer, always allocated afterwards; its size stays within the limit
        (the callers see to it)."""
        self._reserve(buffer, size)
        if size:
            memcpy(buffer.bytes + buffer.size, data, size)
            buffer.size += size
        return 0

    cdef int _reserve(self, Buffer* buffer, Py_ssize_t size) except -1:
        """Room in a buffer for ``size`` bytes more, always allocated afterwards."""
        cdef Py_ssize_t needed = buffer.size + size
        cdef Py_ssize_t capacity
        if needed + 1 > buffer.capacity:
            capacity = 1 + max(needed, min(max(4 * buffer.capacity, _BUFFER_START),
                                           self._limit + _PREFIX))
            if buffer.owner is NULL:
                buffer.owner = _new_bytes(NULL, capacity - 1)
                if buffer.owner is NULL:
                    raise MemoryError()
            elif _resize_bytes(&buffer.owner, capacity - 1) < 0:
                buffer.bytes, buffer.size, buffer.capacity = NULL, 0, 0  # it freed the object
                raise MemoryError()
            buffer.bytes, buffer.capacity = _bytes_of(buffer.owner), capacity
        return 0


cdef inline Py_ssize_t _line_end(const char* data, Py_ssize_t start, Py_ssize_t size) noexcept:
    """The offset of the next CR or LF from ``start`` on, or -1."""
    cdef Py_ssize_t end, lf
    if _AVX2:
        end = <const char*>_avx2_line_end(<const unsigned char*>data + start,
                                          <const unsigned char*>data + size) - data
        return -1 if end == size else end
    lf = _find(data, start, size, b"\n")
    end = _find(data, start, size if lf == -1 else lf, b"\r")  # a CR before it ends the line
    return lf if end == -1 else end


cdef Py_ssize_t _last_line_end(const char* data, Py_ssize_t end, Py_ssize_t size) noexcept:
    """The last of the line ends that run on from ``data[end]``, one: each is a blank line
    with nothing to dispatch after the first (a flood of CRs costs a byte each)."""
    while end + 1 < size and (data[end + 1] == b"\n" or data[end + 1] == b"\r"):
        end += 1
    return end


cdef inline Py_ssize_t _find(const char* data, Py_ssize_t start, Py_ssize_t size,
                             char byte) noexcept:
    """The offset of the next ``byte`` from ``start`` on, or -1."""
    cdef const char* found = <const char*>memchr(data + start, byte, size - start)
    return -1 if found is NULL else found - data


cdef void _drop(Buffer* buffer) noexcept:
    """Forget a buffer's content; a large allocation goes with it, so as not to stay pinned."""
    buffer.size = 0
    if buffer.capacity > _BUFFER_START + 1:
        Py_XDECREF(buffer.owner)
        buffer.owner, buffer.bytes, buffer.capacity = NULL, NULL, 0


cdef bytes _take(Buffer* buffer, Py_ssize_t size):
    """The buffer's first ``size`` bytes as the bytes object holding them (cut to size in
    place, no copy); the buffer is left empty, to allocate anew."""
    cdef PyObject* owner = buffer.owner
    buffer.owner, buffer.bytes, buffer.size, buffer.capacity = NULL, NULL, 0, 0
    if _resize_bytes(&owner, size) < 0:
        raise MemoryError()
    whole = <bytes>owner
    Py_XDECREF(owner)  # whole holds the one reference now
    return whole


cdef bint _blank(const char* data, Py_ssize_t size) noexcept:
    """Only JSON whitespace, or nothing: no message for classify (the twin's strip())."""
    cdef Py_ssize_t position
    for position in range(size):
        if data[position] not in b" \t\r\n":
            return False
    return True


cdef Py_ssize_t _data_value(const char* line, Py_ssize_t size) noexcept:
    """Where the value of an unfinished ``data`` line starts, or ``size`` for any other field."""
    if size >= 5 and memcmp(line, b"data:", 5) == 0:
        return 6 if size > 5 and line[5] == b" " else 5
    return size


cdef bint _digits(const char* value, Py_ssize_t size) noexcept:
    """ASCII digits only, as WHATWG asks of retry (bytes.isdigit in the twin)."""
    cdef Py_ssize_t position
    for position in range(size):
        if not ord("0") <= value[position] <= ord("9"):
            return False
    return size > 0


cdef str _event_type(const char* value, Py_ssize_t size):
    """The type an event field sets: an empty one dispatches as "message", the common type."""
    if size == 0 or (size == 7 and memcmp(value, b"message", 7) == 0):
        return "message"
    return _text(value, size)


cdef str _text(const char* value, Py_ssize_t size):
    # The stream is UTF-8 decoded with replacement (WHATWG).
    return PyUnicode_DecodeUTF8(value, size, "replace")


cdef object _chunk_bytes(object chunk):
    if isinstance(chunk, (bytes, bytearray)):
        return chunk
    if isinstance(chunk, memoryview):
        return chunk if (<memoryview>chunk).c_contiguous else (<memoryview>chunk).tobytes()
    raise TypeError(f"feed() takes bytes, bytearray or memoryview, not {type(chunk).__name__}")
