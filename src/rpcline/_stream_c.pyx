# cython: language_level=3
"""The Cython core of streams: ``_stream_py.py`` documents the behaviour, this mirrors it.

Lines are found with memchr in the chunk's own buffer and handed to the core's C entry
point as bytes, so no Python-level loop or split list stands between the bytes and the
decoder.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.string cimport memchr, memcmp, memcpy

from rpcline._message_c cimport _parse_decodable, _parse_error
from rpcline._message_c import parse

from rpcline._stream_py import DEFAULT_MAX_LINE_BYTES, LINE_TOO_LONG

cdef const char* BOM = b"\xef\xbb\xbf"
# parse_lines holds a whole buffer anyway, so it needs no limit of its own.
cdef Py_ssize_t _UNLIMITED = 2**62


def parse_lines(data):
    """Classify every line of a newline-delimited buffer; a last line needs no LF."""
    if isinstance(data, str):
        lines = data.removeprefix("\ufeff").split("\n")
        return [parse(line) for line in lines if line.strip(" \t\r")]
    cdef StreamParser parser = StreamParser.__new__(StreamParser, _UNLIMITED)
    return parser.feed(data) + parser.close()


cdef class StreamParser:
    """Classifies lines from chunks cut anywhere, with memory bounded by ``max_line_bytes``.

    A line longer than the limit (its bytes without the LF) yields one
    ``Refused(None, ParseError("line exceeds … bytes"))``; its bytes are dropped up to the
    next LF and parsing resumes after it. One parser serves one stream and one thread.
    """

    cdef bytearray _buffer  # the current line's bytes from earlier chunks
    cdef Py_ssize_t _limit
    cdef bint _discarding  # inside an over-long line, dropping bytes up to its LF
    cdef bint _at_start  # a BOM may still be arriving
    cdef bint _closed

    def __cinit__(self, max_line_bytes=DEFAULT_MAX_LINE_BYTES):
        if type(max_line_bytes) is not int:
            raise TypeError(f"max_line_bytes must be an int, not {type(max_line_bytes).__name__}")
        if max_line_bytes <= 0:
            raise ValueError(f"max_line_bytes must be positive, not {max_line_bytes}")
        self._limit = min(max_line_bytes, _UNLIMITED)
        self._buffer = bytearray()
        self._discarding = False
        self._at_start = True
        self._closed = False

    @property
    def max_line_bytes(self):
        return self._limit

    def feed(self, chunk):
        """Classify the lines this chunk completes; keep the unfinished one for later."""
        if self._closed:
            raise ValueError("feed() after close()")
        data = _chunk_bytes(chunk)
        cdef Py_buffer view
        cdef Py_ssize_t skip = 0
        if self._at_start:
            if PyByteArray_GET_SIZE(self._buffer):  # an earlier chunk began like a BOM
                data = bytes(self._buffer) + bytes(data)
                self._buffer.clear()
            PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
            try:
                if view.len < 3 and memcmp(view.buf, BOM, view.len) == 0:
                    _extend(self._buffer, <const char*>view.buf, view.len)
                    return []
                self._at_start = False
                if view.len >= 3 and memcmp(view.buf, BOM, 3) == 0:
                    skip = 3
                return self._split(<const char*>view.buf + skip, view.len - skip)
            finally:
                PyBuffer_Release(&view)
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            return self._split(<const char*>view.buf, view.len)
        finally:
            PyBuffer_Release(&view)

    def close(self):
        """Classify the final line if it had no LF; the parser takes no more input."""
        if self._closed:
            return []
        self._closed = True
        self._at_start = False
        results = []
        if not self._discarding:
            _append(results, PyByteArray_AS_STRING(self._buffer),
                    PyByteArray_GET_SIZE(self._buffer))
        self._buffer.clear()
        self._discarding = False
        return results

    cdef list _split(self, const char* data, Py_ssize_t size):
        cdef list results = []
        cdef Py_ssize_t limit = self._limit
        cdef Py_ssize_t start = 0
        cdef Py_ssize_t end
        cdef const char* found = <const char*>memchr(data, ord('\n'), size)
        while found is not NULL:
            end = found - data
            if self._discarding:
                self._discarding = False
            elif PyByteArray_GET_SIZE(self._buffer):
                _extend(self._buffer, data + start, end - start)
                if PyByteArray_GET_SIZE(self._buffer) > limit:
                    results.append(_too_long(limit))
                else:
                    _append(results, PyByteArray_AS_STRING(self._buffer),
                            PyByteArray_GET_SIZE(self._buffer))
                self._buffer.clear()
            elif end - start > limit:
                results.append(_too_long(limit))
            else:
                _append(results, data + start, end - start)
            start = end + 1
            found = <const char*>memchr(data + start, ord('\n'), size - start)
        if not self._discarding:
            if PyByteArray_GET_SIZE(self._buffer) + size - start > limit:
                results.append(_too_long(limit))
                self._buffer.clear()
                self._discarding = True
            else:
                _extend(self._buffer, data + start, size - start)
        return results


cdef int _append(list results, const char* line, Py_ssize_t size) except -1:
    # Lines holding only JSON whitespace are separators: they yield nothing.
    cdef Py_ssize_t position
    for position in range(size):
        if line[position] != ord(' ') and line[position] != ord('\t') and line[position] != ord('\r'):
            results.append(_parse_decodable(PyBytes_FromStringAndSize(line, size)))
            return 0
    return 0


cdef object _too_long(Py_ssize_t limit):
    return _parse_error(LINE_TOO_LONG.format(limit=limit))


cdef int _extend(bytearray buffer, const char* data, Py_ssize_t size) except -1:
    cdef Py_ssize_t old = PyByteArray_GET_SIZE(buffer)
    if size:
        PyByteArray_Resize(buffer, old + size)
        memcpy(PyByteArray_AS_STRING(buffer) + old, data, size)
    return 0


cdef object _chunk_bytes(object chunk):
    if isinstance(chunk, (bytes, bytearray)):
        return chunk
    if isinstance(chunk, memoryview):
        return chunk if (<memoryview>chunk).c_contiguous else (<memoryview>chunk).tobytes()
    raise TypeError(
        f"feed() takes bytes, bytearray or memoryview, not {type(chunk).__name__}"
    )
