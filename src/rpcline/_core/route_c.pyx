# cython: language_level=3, binding=False, embedsignature=True, embedsignature.format=clinic
"""route(): the card's nine rules without decoding params or result; Cython core.

``route_py.py`` is the twin and documents the behaviour; this module mirrors it function
by function. The scanner (``scan_c``) validates the line exactly as ``orjson.loads``
would and notes the top-level members; this module applies the card's rules to them and
makes the ``Route``, decoding only the ``id``, ``jsonrpc`` and ``method`` members.
"""

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_READ_CHAR
from libc.string cimport memcpy

import orjson

from rpcline._core.message_c cimport InvalidParams, InvalidRequest, ParseError, ProtocolError
from rpcline._core.scan_c cimport (
    E_MEMORY, V_ARRAY, V_INTEGER, V_OBJECT, V_STRING, Scan, Span, cursor, _integer,
    _is_version_2_0, _method_name, _prefix_id, _prefix_scan, _reason, _reset, _scan, _text,
)
from rpcline._core.shared import (
    BAD_ID as _BAD_ID,
    BAD_JSONRPC as _BAD_JSONRPC,
    BAD_METHOD as _BAD_METHOD,
    BAD_PARAMS as _BAD_PARAMS,
    BATCHING as _BATCHING,
    NOT_AN_OBJECT as _NOT_AN_OBJECT,
)
from rpcline._core.shared import (
    KINDS,
    NO_ID,
    NOT_FORWARDED,
    REPR_FIELDS,
    STR_SURROGATE,
    encode_id,
)

cdef extern from "Python.h":
    bint PyUnicode_IS_COMPACT_ASCII(object)
    void* PyUnicode_DATA(object)
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL

cdef tuple _KINDS = KINDS
# The reasons a refusal names, as C globals: no module dictionary look-up per refusal.
cdef str BAD_ID = _BAD_ID
cdef str BAD_JSONRPC = _BAD_JSONRPC
cdef str BAD_METHOD = _BAD_METHOD
cdef str BAD_PARAMS = _BAD_PARAMS
cdef str BATCHING = _BATCHING
cdef str NOT_AN_OBJECT = _NOT_AN_OBJECT
cdef object _dumps = orjson.dumps
cdef tuple _NO_SPANS = (None, None, None, None, None)  # a refusal's id, params, result, error, method


# --- the result ---------------------------------------------------------------------------


# No GC: a route holds an id, a method, an error and a line, none of which can refer
# back to it. Its memory comes from a pool of its own (_new_route, _dealloc_route below),
# not from Cython's freelist, whose inlined memset of the object compiles to a slow
# "rep stos" here.
@cython.final
@cython.no_gc
cdef class Route:
    """Route(*args, **kwargs)
--

Where a line goes, without its params or result decoded.

    ``kind`` is ``"request"``, ``"notification"``, ``"response"`` or ``"refused"``, as
    ``parse`` classifies the line; ``id``, ``method`` and ``error`` are what ``parse``
    gives (``method`` only for requests and notifications). The spans are ``(start,
    end)`` byte offsets of member values in the line's UTF-8 bytes, ``None`` when absent.
    """

    __match_args__ = ("kind", "id", "method", "error")

    def __init__(self, *args, **kwargs):
        raise TypeError("Route objects are made by route()")

    @property
    def kind(self):
        """``"request"``, ``"notification"``, ``"response"`` or ``"refused"``."""
        return _KINDS[self._kind]

    @property
    def id(self):
        return _get(self._id_value)

    @property
    def method(self):
        return _get(self._method)

    @property
    def error(self):
        """The ``ProtocolError`` of a refused line, else ``None``."""
        return _get(self._protocol_error)

    @property
    def id_span(self):
        """The last top-level ``id`` member's value (the one ``parse`` reads)."""
        return _span(self._id)

    @property
    def params_span(self):
        return _span(self._params)

    @property
    def result_span(self):
        return _span(self._result)

    @property
    def error_span(self):
        """The top-level ``error`` member's value (the ``error`` attribute is rpcline's own)."""
        return _span(self._error)

    @property
    def method_span(self):
        """The top-level ``method`` member's value, whatever its type."""
        return _span(self._method_span)

    @property
    def line(self):
        """The line as routed (a bytes copy of a mutable buffer); ``None`` for the refusal
        of a stream's over-long line, whose bytes were dropped."""
        return _get(self._line)

    def with_id(self, new_id):
        """The line's bytes with every top-level ``id`` value replaced by ``new_id``'s JSON.

        Only for a request or a response that has an id; bytes are spliced, nothing is
        re-encoded. Every id member is rewritten, so that an upstream parser keeping the
        first of duplicates sees the same id as one keeping the last.
        """
        if self._kind != REQUEST and self._kind != RESPONSE:
            raise ValueError(NOT_FORWARDED)
        if self._ids == 0:
            raise ValueError(NO_ID)
        cdef bytes value = encode_id(new_id)
        cdef bytes line = _utf8_bytes(<object>self._line)
        if self._ids == 1:
            return _splice(line, &self._id, 1, value)
        cdef Scan s
        _start(&s, line)
        s.collect = True
        s.all_ids = NULL
        s.all_ids_capacity = 0
        try:
            if not _scan(&s) or s.ids != self._ids:
                raise MemoryError() if s.error == E_MEMORY else AssertionError("line changed")
            return _splice(line, s.all_ids, s.ids, value)
        finally:
            PyMem_Free(s.all_ids)

    def __eq__(self, other):
        if type(other) is not Route:
            return NotImplemented
        return _fields(self) == _fields(<Route>other)

    def __hash__(self):
        return hash(_fields(self))

    def __repr__(self):
        fields = ", ".join([f"{name}={getattr(self, name)!r}" for name in REPR_FIELDS])
        return f"Route({fields})"

    def __reduce__(self):
        if self._line == NULL:
            return (refusal, (self.error, self.id, (self.id_span, self.params_span,
                                                    self.result_span, self.error_span,
                                                    self.method_span)))
        return (route, (<object>self._line,))


cdef tuple _fields(Route r):
    return (r.kind, type(r.id), r.id, r.method, r.error, r.id_span, r.params_span,
            r.result_span, r.error_span, r.method_span, type(r.line), r.line)


# --- the Route's memory -------------------------------------------------------------------
#
# A routed line makes one Route and usually drops it before the next: the memory of the
# last ones released is kept and handed out again. Unlike Cython's freelist nothing is
# zeroed, because _route sets every field. The type's tp_dealloc is replaced by
# _dealloc_route: Cython's wraps __dealloc__ in an exception save and restore (52
# instructions a route) that releasing four references, which cannot fail, does not need.
# Module state shared by every thread: only where the GIL serialises them (a
# free-threaded build allocates and frees every Route, as a heap type does).

cdef extern from *:
    """
    #if defined(Py_GIL_DISABLED) || CYTHON_USE_TYPE_SPECS
    #define RPCLINE_ROUTE_POOL 0
    #else
    #define RPCLINE_ROUTE_POOL 16
    #endif
    """
    const int ROUTE_POOL "RPCLINE_ROUTE_POOL"
    # The object struct of Route as Cython names it (module and class, mangled): the
    # build fails, rather than misbehaves, should that name ever change.
    ctypedef struct RouteObject "struct __pyx_obj_7rpcline_5_core_7route_c_Route":
        PyObject* _id_value
        PyObject* _method
        PyObject* _protocol_error
        PyObject* _line
    ctypedef struct TypeSlots "PyTypeObject":
        void (*tp_dealloc)(PyObject*) noexcept
        void (*tp_free)(void*) noexcept
    PyObject* PyObject_Init(PyObject*, TypeSlots*)
    TypeSlots* Py_TYPE(PyObject*)
    bint PyType_HasFeature(TypeSlots*, unsigned long)
    unsigned long Py_TPFLAGS_HEAPTYPE
    void Py_DECREF_ptr "Py_DECREF"(PyObject*)
    # A new reference to an object whose reference count is set already (a cast).
    object _owned "(PyObject *)"(PyObject*)

cdef PyObject* _pool[16]  # RPCLINE_ROUTE_POOL (16) at most
cdef int _pooled = 0


cdef inline Route _new_route():
    """A Route whose fields are all to be set (by _route)."""
    global _pooled
    if ROUTE_POOL and _pooled > 0:
        _pooled -= 1
        return <Route>_owned(PyObject_Init(_pool[_pooled], <TypeSlots*>Route))
    return Route.__new__(Route)


cdef void _dealloc_route(PyObject* o) noexcept:
    global _pooled
    cdef RouteObject* r = <RouteObject*>o
    Py_XDECREF(r._id_value)
    Py_XDECREF(r._method)
    Py_XDECREF(r._protocol_error)
    Py_XDECREF(r._line)
    if ROUTE_POOL and _pooled < ROUTE_POOL:
        _pool[_pooled] = o
        _pooled += 1
        return
    cdef TypeSlots* kind = Py_TYPE(o)
    kind.tp_free(o)
    if PyType_HasFeature(kind, Py_TPFLAGS_HEAPTYPE):  # each instance holds its heap type
        Py_DECREF_ptr(<PyObject*>kind)


(<TypeSlots*>Route).tp_dealloc = _dealloc_route


cdef inline object _get(PyObject* value):
    return None if value == NULL else <object>value


cdef inline PyObject* _own(object value):
    """A new reference to ``value``, or NULL for None."""
    if value is None:
        return NULL
    Py_INCREF(value)
    return <PyObject*>value


cdef inline object _span(Span span):
    return None if span.start < 0 else (span.start, span.end)


cdef bytes _utf8_bytes(object line):
    if type(line) is bytes:
        return <bytes>line
    return (<str>line).encode()


cdef bytes _splice(bytes line, Span* spans, Py_ssize_t count, bytes value):
    cdef Py_ssize_t size = PyBytes_GET_SIZE(value)
    cdef Py_ssize_t total = PyBytes_GET_SIZE(line)
    cdef Py_ssize_t i
    for i in range(count):
        total += size - (spans[i].end - spans[i].start)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, total)
    cdef char* o = PyBytes_AS_STRING(out)
    cdef const char* source = PyBytes_AS_STRING(line)
    cdef Py_ssize_t at = 0
    for i in range(count):
        memcpy(o, source + at, spans[i].start - at)
        o += spans[i].start - at
        memcpy(o, PyBytes_AS_STRING(value), size)
        o += size
        at = spans[i].end
    memcpy(o, source + at, PyBytes_GET_SIZE(line) - at)
    return out


cdef inline void _start(Scan* s, bytes line) noexcept:
    s.base = <cursor>PyBytes_AS_STRING(line)
    s.size = PyBytes_GET_SIZE(line)
    s.collect = s.nested = False


cdef inline Route _route(Kind kind, object id, object method, object error, object line,
                         Scan* s):
    cdef Route r = _new_route()
    r._kind = kind
    r._id_value = _own(id)
    r._method = _own(method)
    r._protocol_error = _own(error)
    r._line = _own(line)
    r._id = s.id
    r._method_span = s.method
    r._params = s.params
    r._result = s.result
    r._error = s.error_member
    r._ids = s.ids
    return r


cdef Route _refused(object line, Scan* s, ProtocolError error, object id):
    return _route(REFUSED, id, None, error, line, s)


cdef Route _invalid_request(object line, Scan* s, object id, str reason):
    cdef InvalidRequest e = InvalidRequest.__new__(InvalidRequest)
    e.reason = reason
    return _refused(line, s, e, id)


cdef Route _parse_error(object line, Scan* s, str reason):
    cdef ParseError e = ParseError.__new__(ParseError)
    e.reason = reason
    _reset(s)
    return _refused(line, s, e, None)


def refusal(ProtocolError error, id, tuple spans=_NO_SPANS):
    """A refused Route for a line that was never routed whole (a stream's over-long line):
    ``spans`` are its id, params, result, error and method spans (``prefix_refusal``)."""
    id_span, params_span, result_span, error_span, method_span = spans
    cdef Route r = _refusal(error, id)
    r._id = _unspan(id_span)
    r._params = _unspan(params_span)
    r._result = _unspan(result_span)
    r._error = _unspan(error_span)
    r._method_span = _unspan(method_span)
    return r


cdef Span _unspan(object span) except *:
    cdef Span s
    s.start, s.end = (-1, -1) if span is None else span
    return s


cdef object _refusal(object error, object id):
    cdef Scan s
    _reset(&s)
    return _route(REFUSED, id, None, error, None, &s)


def prefix_refusal(ProtocolError error, bytes data, bint cut):
    """A refused Route for a line known by its first bytes: the id and the spans of the
    members complete in its valid prefix, and no line (``route_py.prefix_refusal``)."""
    return _prefix_refusal(error, <cursor>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), cut)


cdef object _prefix_refusal(object error, cursor data, Py_ssize_t size, bint cut):
    cdef Scan s
    id = _prefix_scan(&s, data, size, cut)
    cdef Route r = _route(REFUSED, id, None, error, None, &s)
    r._ids = 0  # the line is not kept: there is nothing to rewrite
    return r


def prefix_id(bytes data):
    """The id of a line cut short at a limit: its last complete top-level ``id`` member.

    ``route_py.prefix_id`` says what counts; ``data`` is the line's first bytes.
    """
    return _prefix_id(<cursor>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


def route(line):
    """Classify one line as ``parse`` does, decoding only its id, jsonrpc and method."""
    cdef Scan s
    s.nested = False
    return _routed(line, &s)


cdef Route _routed(object line, Scan* s):
    """``route(line)`` with the caller's scanner state (``s.nested`` set by the caller),
    which keeps what the scan noted, pointing into the returned Route's line."""
    cdef Py_ssize_t size
    cdef type kind = type(line)
    if kind is bytes:
        s.base = <cursor>PyBytes_AS_STRING(line)
        s.size = PyBytes_GET_SIZE(line)
    elif kind is str and PyUnicode_IS_COMPACT_ASCII(line):
        s.base = <cursor>PyUnicode_DATA(line)
        s.size = PyUnicode_GET_LENGTH(line)
    else:
        line = _routable(line)
        if type(line) is bytes:
            s.base = <cursor>PyBytes_AS_STRING(line)
            s.size = PyBytes_GET_SIZE(line)
        else:
            try:
                s.base = <cursor>PyUnicode_AsUTF8AndSize(line, &size)
            except UnicodeEncodeError:
                return _parse_error(line, s, STR_SURROGATE.format(_surrogate_at(line)))
            s.size = size
    s.collect = False
    # The GIL is kept: releasing it would cost more than scanning a typical message.
    if not _scan(s):
        return _parse_error(line, s, _reason(s))
    return _classify(line, s)


cdef Route _classify(object line, Scan* s):
    """Steps 2 to 9 of the card, on what the scanner noted; ``message_c._classify``'s order."""
    if s.top != V_OBJECT:
        # Step 2: a JSON array is a batch, which MCP does not have.
        if s.top == V_ARRAY:
            return _invalid_request(line, s, None, BATCHING)
        # Step 3: any other non-object.
        return _invalid_request(line, s, None, NOT_AN_OBJECT)
    # Step 4: an id, when present, is an integer orjson keeps as int, or a string.
    cdef object id = None
    if s.id.start >= 0:
        if s.id_value == V_STRING:
            id = _text(s, s.id, s.id_flags)
        elif s.id_value == V_INTEGER:
            id = _integer(s, s.id)
        if id is None:
            return _invalid_request(line, s, None, BAD_ID)
    # Step 5: jsonrpc is exactly the string "2.0".
    if s.jsonrpc.start < 0 or not _is_version_2_0(s):
        return _invalid_request(line, s, id, BAD_JSONRPC)
    # Step 6: no method member, but a result or an error: a response.
    if s.method.start < 0 and (s.result.start >= 0 or s.error_member.start >= 0):
        return _route(RESPONSE, id, None, None, line, s)
    # Step 7: method is a string.
    if s.method.start < 0 or s.method_value != V_STRING:
        return _invalid_request(line, s, id, BAD_METHOD)
    # Step 8: params, when present, is an object; a notification is never answered.
    cdef InvalidParams e
    if s.params.start >= 0 and s.params_value != V_OBJECT and id is not None:
        e = InvalidParams.__new__(InvalidParams)
        e.reason = BAD_PARAMS
        return _refused(line, s, e, id)
    # Step 9: with an id a request, without one a notification.
    method = _method_name(s)
    if id is None:
        return _route(NOTIFICATION, None, method, None, line, s)
    return _route(REQUEST, id, method, None, line, s)


cdef object _routable(object line):
    """An immutable copy of what the decoder would read: bytes, or a str (see parse)."""
    cdef Py_buffer view
    if isinstance(line, str):
        return str.__str__(line)
    if isinstance(line, (bytes, bytearray)):
        return bytes(memoryview(line))  # the buffer, not overridable methods
    if isinstance(line, memoryview):
        if not (<memoryview>line).c_contiguous:
            return (<memoryview>line).tobytes()
        PyObject_GetBuffer(line, &view, PyBUF_SIMPLE)  # the bytes orjson would read
        try:
            return PyBytes_FromStringAndSize(<const char*>view.buf, view.len)
        finally:
            PyBuffer_Release(&view)
    raise TypeError(
        f"route() takes str, bytes, bytearray or memoryview, not {type(line).__name__}"
    )


cdef Py_ssize_t _surrogate_at(str line):
    cdef Py_ssize_t i
    cdef Py_UCS4 code
    for i in range(PyUnicode_GET_LENGTH(line)):
        code = PyUnicode_READ_CHAR(line, i)
        if 0xD800 <= code <= 0xDFFF:
            return i
    return -1
