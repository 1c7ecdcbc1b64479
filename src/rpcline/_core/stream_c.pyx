# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Cython core of streams: ``stream_py.py`` documents the behaviour, this mirrors it.

Lines are found with memchr in the chunk's own buffer and handed to the core's C entry
point, so no Python-level loop or split list stands between the bytes and the decoder:
small lines as bytes, large ones as a view of the buffer they lie in (no copy).
"""

from cpython.buffer cimport PyBUF_READ, PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.memoryview cimport PyMemoryView_FromMemory
from libc.string cimport memchr, memcmp, memcpy

from rpcline._core.message_c cimport ParseError, Refused, _parse_decodable
from rpcline._core.message_c import parse
from rpcline._core.route_c cimport _prefix_refusal
from rpcline._core.scan_c cimport _prefix_id
from rpcline._core.route_c import route

from rpcline._core.shared import (
    DEFAULT_MAX_LINE_BYTES,
    LINE_TOO_LONG,
    REENTERED,
    bind_parser,
    not_lines,
)

from inspect import Parameter, Signature  # orjson loads inspect anyway
from types import GenericAlias

cdef const char* BOM = b"\xef\xbb\xbf"
# parse_lines holds a whole buffer anyway, so it needs no limit of its own.
cdef Py_ssize_t _UNLIMITED = 2**62
# Lines from this size on are decoded through a view instead of a copy (see _append).
cdef Py_ssize_t _VIEW_BYTES = 16 * 1024
# A parser's first allocation for a pending line, and the most it keeps between lines.
cdef Py_ssize_t _PENDING_START = 4 * 1024


def parse_lines(data):
    """Classify every line of a newline-delimited buffer; a last line needs no LF."""
    if isinstance(data, str):
        lines = data.removeprefix("\ufeff").split("\n")
        return [parse(line) for line in lines if line.strip(" \t\r")]
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(not_lines(data))
    cdef StreamParser parser = StreamParser.__new__(StreamParser, _UNLIMITED)
    return parser.feed(data) + parser.close()


cdef class StreamParser:
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

    # The current line's bytes from earlier chunks (the twin's bytearray). Its allocation
    # grows fourfold up to the limit, so a line arriving in many chunks is copied about
    # once; a bytearray grows to the exact size, and each time malloc cannot extend it in
    # place it copies the whole line again (quadratic at worst). One byte more than the
    # line is allocated, for the NUL the route scanner needs after an over-long prefix.
    cdef char* _pending
    cdef Py_ssize_t _pending_size
    cdef Py_ssize_t _pending_capacity
    cdef Py_ssize_t _limit
    cdef bint _discarding  # inside an over-long line, dropping bytes up to its LF
    cdef bint _at_start  # a BOM may still be arriving
    cdef bint _closed
    cdef bint _busy  # feed or close runs (the twin's lock: under the GIL a flag is enough)
    cdef object _classify
    cdef bint _parses  # classify is parse: lines go to the core's C entry point
    # After classify raised: the results made before it, and the chunk after its line.
    cdef list _owed
    cdef bytes _rest

    # For inspect.signature: a text signature cannot name parse as a default.
    __signature__ = Signature([
        Parameter("max_line_bytes", Parameter.POSITIONAL_OR_KEYWORD, default=DEFAULT_MAX_LINE_BYTES),
        Parameter("classify", Parameter.KEYWORD_ONLY, default=parse),
    ])

    # Subscriptable as the twin's Generic class is (StreamParser[Route]): the type is for
    # type checkers, the class the same.
    __class_getitem__ = classmethod(GenericAlias)

    # *args: the twin's TypeErrors for wrong arguments (_shared.bind_parser), not Cython's.
    def __cinit__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs:  # parse_lines's call: no Python binder
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
        self._limit = min(max_line_bytes, _UNLIMITED)
        self._classify = classify
        self._parses = classify is parse
        self._pending = NULL
        self._pending_size = self._pending_capacity = 0
        self._discarding = False
        self._at_start = True
        self._closed = self._busy = False
        self._owed = self._rest = None

    def __dealloc__(self):
        PyMem_Free(self._pending)

    @property
    def max_line_bytes(self):
        return self._limit

    @property
    def classify(self):
        return self._classify

    def feed(self, chunk):
        """Classify the lines this chunk completes; keep the unfinished one for later."""
        if self._busy:
            raise RuntimeError(REENTERED.format("StreamParser.feed"))
        self._busy = True
        try:
            if self._closed:
                raise ValueError("feed() after close()")
            return self._feed(_chunk_bytes(chunk))
        finally:
            self._busy = False

    cdef list _feed(self, data):
        cdef Py_buffer view
        cdef Py_ssize_t skip = 0
        cdef list results = self._take_owed()
        if self._rest is not None:  # what a raising classify left of the last chunk
            data = self._rest + bytes(data)
            self._rest = None
        if self._at_start:
            if self._pending_size:  # an earlier chunk began like a BOM
                data = PyBytes_FromStringAndSize(self._pending, self._pending_size) + bytes(data)
                self._drop_pending()
            PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
            try:
                if view.len < 3 and memcmp(view.buf, BOM, view.len) == 0:
                    self._keep(<const char*>view.buf, view.len)
                    return results
                self._at_start = False
                if view.len >= 3 and memcmp(view.buf, BOM, 3) == 0:
                    skip = 3
                return self._split(<const char*>view.buf + skip, view.len - skip, results)
            finally:
                PyBuffer_Release(&view)
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            return self._split(<const char*>view.buf, view.len, results)
        finally:
            PyBuffer_Release(&view)

    def close(self):
        """Classify the final line if it had no LF; the parser takes no more input."""
        if self._busy:
            raise RuntimeError(REENTERED.format("StreamParser.close"))
        self._closed = True
        self._at_start = False
        cdef list results = self._take_owed()
        cdef bytes rest
        self._busy = True
        try:
            if self._rest is not None:
                rest, self._rest = self._rest, None
                self._split(rest, len(rest), results)
            if not self._discarding:
                try:
                    self._append(results, self._pending, self._pending_size)
                except BaseException:
                    self._drop_pending()
                    self._owed = results  # for the next close
                    raise
        finally:
            self._busy = False
        self._drop_pending()
        self._discarding = False
        return results

    cdef list _take_owed(self):
        """The results a raising classify kept back, or a new list."""
        cdef list owed = self._owed
        self._owed = None
        return [] if owed is None else owed

    cdef list _split(self, const char* data, Py_ssize_t size, list results):
        cdef Py_ssize_t limit = self._limit
        cdef Py_ssize_t start = 0
        cdef Py_ssize_t end, line_start
        cdef const char* found = <const char*>memchr(data, ord('\n'), size)
        try:
            while found is not NULL:
                end = found - data
                line_start, start = start, end + 1  # consumed, whatever classify does
                if self._discarding:
                    self._discarding = False
                elif self._pending_size + end - line_start > limit:
                    results.append(self._too_long(data + line_start, end - line_start))
                elif self._pending_size:
                    self._keep(data + line_start, end - line_start)
                    self._append(results, self._pending, self._pending_size)
                    self._drop_pending()
                else:
                    self._append(results, data + line_start, end - line_start)
                found = <const char*>memchr(data + start, ord('\n'), size - start)
        except BaseException:
            # classify raised: its line is gone; what came before it and what follows wait
            # for the next call, so no line is lost or spliced onto another (issue 29).
            self._drop_pending()
            self._owed = results
            self._rest = PyBytes_FromStringAndSize(data + start, size - start)
            raise
        if not self._discarding and self._pending_size + size - start > limit:
            results.append(self._too_long(data + start, size - start))
            self._discarding = True
        elif not self._discarding:
            self._keep(data + start, size - start)
        return results

    cdef int _append(self, list results, const char* line, Py_ssize_t size) except -1:
        # Lines holding only JSON whitespace are separators: they yield nothing.
        cdef Py_ssize_t position
        for position in range(size):
            if line[position] != ord(' ') and line[position] != ord('\t') and line[position] != ord('\r'):
                break
        else:
            return 0
        if size < _VIEW_BYTES:
            line_bytes = PyBytes_FromStringAndSize(line, size)
            results.append(_parse_decodable(line_bytes) if self._parses else self._classify(line_bytes))
            return 0
        # A large line is decoded where it lies: a view costs the same at any size, while a
        # copy costs its size again and, past malloc's mmap threshold, fresh pages to fault
        # in. The view is released at once, so nothing can read the memory after this call
        # (a classify that keeps its argument gets a copy: route, for one, keeps bytes).
        if not self._parses:
            results.append(self._classify(PyBytes_FromStringAndSize(line, size)))
            return 0
        view = PyMemoryView_FromMemory(<char*>line, size, PyBUF_READ)
        try:
            results.append(_parse_decodable(view))
        finally:
            view.release()
        return 0

    cdef object _too_long(self, const char* data, Py_ssize_t available):
        """The refusal of the line that runs past the limit from ``data`` on.

        The pending line is topped up to the limit and scanned where it lies for an id, so
        memory stays within the limit; then it is dropped.
        """
        self._keep(data, min(available, self._limit - self._pending_size))
        cdef ParseError error = ParseError.__new__(ParseError)
        error.reason = LINE_TOO_LONG.format(limit=self._limit)
        self._pending[self._pending_size] = 0
        cdef Refused refused
        try:
            if self._classify is route:
                return _prefix_refusal(error, <const unsigned char*>self._pending,
                                       self._pending_size, True)
            refused = Refused.__new__(Refused)
            refused.id = _prefix_id(<const unsigned char*>self._pending, self._pending_size)
            refused.error = error
            return refused
        finally:
            self._drop_pending()

    cdef int _keep(self, const char* data, Py_ssize_t size) except -1:
        """Append to the pending line; its size stays within the limit (_split sees to it)."""
        cdef Py_ssize_t needed = self._pending_size + size
        cdef Py_ssize_t capacity
        cdef char* grown
        if needed + 1 > self._pending_capacity:
            capacity = 1 + max(needed, min(max(4 * self._pending_capacity, _PENDING_START), self._limit))
            grown = <char*>PyMem_Realloc(self._pending, capacity)
            if grown is NULL:
                raise MemoryError()
            self._pending, self._pending_capacity = grown, capacity
        if size:
            memcpy(self._pending + self._pending_size, data, size)
            self._pending_size = needed
        return 0

    cdef void _drop_pending(self) noexcept:
        """Forget the pending line; a large allocation goes with it, so as not to stay pinned."""
        self._pending_size = 0
        if self._pending_capacity > _PENDING_START + 1:
            PyMem_Free(self._pending)
            self._pending = NULL
            self._pending_capacity = 0


cdef object _chunk_bytes(object chunk):
    if isinstance(chunk, (bytes, bytearray)):
        return chunk
    if isinstance(chunk, memoryview):
        return chunk if (<memoryview>chunk).c_contiguous else (<memoryview>chunk).tobytes()
    raise TypeError(
        f"feed() takes bytes, bytearray or memoryview, not {type(chunk).__name__}"
    )
