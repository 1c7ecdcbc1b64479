# cython: language_level=3, binding=False, embedsignature=True, embedsignature.format=clinic
"""The Cython core of ``rpcline.http``: ``check_request``, the MCP 2026-07-28 HTTP ladder.

It mirrors ``http_py.py`` function by function; that module is the typing source and
documents the behaviour. Here the header fold and the skipper over the (validated) params
run as C loops over the bytes, and the ladder on exact-type checks, so that a verdict
costs little more than ``route``.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF, Py_XINCREF
from cpython.sequence cimport PySequence_Fast_GET_SIZE, PySequence_Fast_ITEMS
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.unicode cimport PyUnicode_DecodeLatin1, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH
from libc.string cimport memchr, memcmp, strchr

import orjson

from rpcline._core.http_shared import (
    ACCEPTED,
    BAD_REQUEST,
    DUPLICATED,
    METHOD_HEADER,
    METHOD_MISMATCH,
    MISSING_META,
    NAME_BEARING,
    NAME_HEADER,
    NAME_MISMATCH,
    NO_META,
    OK,
    POSTED_RESPONSE,
    ROUTING_HEADERS,
    UNSUPPORTED,
    VERSIONS,
    VERSION_HEADER,
    VERSION_MISMATCH,
    VERSION_NOT_STRING,
)
from rpcline._core.shared import (BAD_PARAMS, BATCHING, CAPABILITIES_KEY, NOT_AN_OBJECT,
                                  VERSION_KEY)
from rpcline._core.http_schema import (
    ABSENT, UNRENDERABLE, ParamHeaders, compiled, decode_header_value, json_text, strings,
    tools_mapping,
)

from rpcline._core.message_c cimport ProtocolError
from rpcline._core.route_c cimport NOTIFICATION, REQUEST, RESPONSE, Route, _routed
from rpcline._core.scan_c cimport (
    N_ARGUMENTS, N_CAPABILITIES, N_META, N_NAME, N_URI, N_VERSION, S_ESCAPED, V_OBJECT, V_STRING,
    Noted, Scan, Span, cursor, _text as _string_at,
)

from rpcline._core.message_c import InvalidParams, InvalidRequest, ParseError

from collections.abc import Mapping
from inspect import Parameter, Signature  # importlib.metadata loads inspect anyway

cdef extern from "Python.h":
    bint PyUnicode_IS_COMPACT_ASCII(object)
    bint PyUnicode_IS_ASCII(object)
    void* PyUnicode_DATA(object)
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL

cdef object _loads = orjson.loads
cdef object _dumps = orjson.dumps
cdef tuple _NOT_OBJECTS = (BATCHING, NOT_AN_OBJECT)


cdef inline bint _same(object a, object b):
    return type(a) is type(b) and a == b


@cython.final
cdef class HeaderMismatch(ProtocolError):
    """HeaderMismatch(reason)
--

An HTTP header disagrees with the body it mirrors, or is sent twice (MCP -32020)."""

    code = -32020
    message = "Header mismatch"


@cython.final
cdef class UnsupportedProtocolVersion(ProtocolError):
    """UnsupportedProtocolVersion(reason, supported, requested)
--

A protocol version the server does not serve (MCP -32022)."""

    cdef readonly tuple supported
    cdef readonly str requested

    __match_args__ = ("reason", "supported", "requested")
    code = -32022
    message = "Unsupported protocol version"

    def __init__(self, str reason, supported, str requested):
        if self.reason is None:  # immutable: a second __init__ is ignored, as for the twin's
            self.reason, self.supported, self.requested = reason, tuple(supported), requested

    def to_json(self):
        data = {"supported": list(self.supported), "requested": self.requested}
        return {"code": self.code, "message": self.message, "data": data}

    def __eq__(self, other):
        if type(other) is not UnsupportedProtocolVersion:
            return NotImplemented
        cdef UnsupportedProtocolVersion that = <UnsupportedProtocolVersion>other
        return (self.reason == that.reason and self.supported == that.supported
                and self.requested == that.requested)

    def __hash__(self):
        return hash((UnsupportedProtocolVersion, self.reason, self.supported, self.requested))

    def __repr__(self):
        return (f"UnsupportedProtocolVersion(reason={self.reason!r}, "
                f"supported={self.supported!r}, requested={self.requested!r})")

    def __reduce__(self):
        return (UnsupportedProtocolVersion, (self.reason, self.supported, self.requested))


# No freelist and no GC, as for Route: a verdict holds a route, strs, an error and bytes,
# none of which can refer back to it.
@cython.final
@cython.no_gc
cdef class Verdict:
    """Verdict(status, route, name, protocol_version, error, response)
--

What to do with one POST: ``status`` 200 (dispatch), 202 (acknowledge) or 400."""

    cdef readonly int status
    cdef readonly object route
    cdef readonly object name
    cdef readonly object protocol_version
    cdef readonly object error
    cdef readonly object response

    __match_args__ = ("status", "route", "name", "protocol_version", "error", "response")

    def __init__(self, int status, route, name, protocol_version, error, response):
        if self.route is None:  # immutable: a second __init__ is ignored, as for the twin's
            self.status, self.route, self.name = status, route, name
            self.protocol_version, self.error, self.response = protocol_version, error, response

    def _fields(self):
        return (self.status, self.route, self.name, self.protocol_version, self.error,
                self.response)

    def __eq__(self, other):
        if type(other) is not Verdict:
            return NotImplemented
        return all(_same(a, b) for a, b in zip(self._fields(), (<Verdict>other)._fields()))

    def __hash__(self):
        return hash((Verdict, self._fields()))

    def __repr__(self):
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self.__match_args__, self._fields()))
        return f"Verdict({fields})"

    def __reduce__(self):
        return (Verdict, self._fields())


cdef inline Verdict _make(int status, object r, object name, object version, object error,
                          object response):
    cdef Verdict v = Verdict.__new__(Verdict)
    v.status, v.route, v.name = status, r, name
    v.protocol_version, v.error, v.response = version, error, response
    return v


cdef inline object _error(type cls, str reason):
    cdef ProtocolError e = cls.__new__(cls)
    e.reason = reason
    return e


# --- headers ------------------------------------------------------------------------------


cdef inline bint _mcp_prefix(const unsigned char* p, Py_ssize_t size) noexcept:
    """Whether a name starts with "mcp-" in any case (ASCII folding, as str.lower())."""
    return (size >= 4 and (p[0] | 0x20) == 0x6D and (p[1] | 0x20) == 0x63
            and (p[2] | 0x20) == 0x70 and p[3] == 0x2D)


cdef tuple _fold(object headers):
    """The ``mcp-*`` headers by lowercase name (first value wins), and those sent twice
    (in the order their second copy came). The general fold: ``_fold_fast`` first."""
    # An exact list (what ASGI gives) or dict skips the Mapping ABC check, which costs as
    # much as the rest of the fold.
    if type(headers) is list:
        pairs = headers
    elif type(headers) is dict or isinstance(headers, Mapping):
        pairs = headers.items()
    else:
        pairs = headers
    cdef dict folded = {}
    cdef dict duplicated = {}  # in the order of their second copy, as the SDK reports them
    cdef str text
    for name, value in pairs:
        if type(name) is bytes:
            if not _mcp_prefix(<const unsigned char*>PyBytes_AS_STRING(name),
                               PyBytes_GET_SIZE(name)):
                continue
            text = (<bytes>name).decode("latin-1").lower()
        else:
            if type(name) is not str:
                name = _text(name, "name")
            if (<str>name)[:4].lower() != "mcp-":
                continue
            text = (<str>name).lower()
        if type(value) is bytes:
            value = (<bytes>value).decode("latin-1")
        elif type(value) is not str:
            value = _text(value, "value")
        if text in folded:
            duplicated[text] = None
        else:
            folded[text] = value
    return folded, duplicated


# The fast fold: exact bytes or ASCII str pairs in a list, tuple or dict, read in place.
cdef struct Header:
    const unsigned char* data  # the value's bytes (latin-1 text), NULL when not read in place
    Py_ssize_t size
    PyObject* value  # the caller's object (held, see _hold), or the general fold's; NULL: absent

cdef enum:
    MAX_PARAM_HEADERS = 8  # more go to the general fold

cdef struct Folded:
    Header routing[3]  # by ROUTING_ORDER: version, method, name
    int duplicated  # 1 + the ROUTING_ORDER index of the first routing header sent twice, or 0
    Py_ssize_t params
    Header param_names[MAX_PARAM_HEADERS]
    Header param_values[MAX_PARAM_HEADERS]
    bint held  # whether _hold took references to the objects above

cdef enum:
    H_VERSION, H_METHOD, H_NAME
cdef tuple ROUTING_ORDER = (VERSION_HEADER, METHOD_HEADER, NAME_HEADER)


cdef inline bint _view(PyObject* item, Header* h) noexcept:
    """Point ``h`` at the bytes of an exact bytes or ASCII str; False for anything else."""
    if type(<object>item) is bytes:
        h.data = <const unsigned char*>PyBytes_AS_STRING(<object>item)
        h.size = PyBytes_GET_SIZE(<object>item)
    elif type(<object>item) is str and PyUnicode_IS_COMPACT_ASCII(<object>item):
        h.data = <const unsigned char*>PyUnicode_DATA(<object>item)
        h.size = PyUnicode_GET_LENGTH(<object>item)
    else:
        return False
    h.value = item
    return True


cdef inline bint _lower_is(const unsigned char* p, const char* lower, Py_ssize_t size) noexcept:
    """Whether ``p`` folds to ``lower`` (ASCII lowercase, as ``str.lower()`` on latin-1).
    ASGI names come lowercase already: one memcmp decides those."""
    cdef Py_ssize_t i
    cdef unsigned char c
    if memcmp(p, lower, size) == 0:
        return True
    for i in range(size):
        c = p[i]
        if 0x41 <= c <= 0x5A:
            c |= 0x20
        if c != <unsigned char>lower[i]:
            return False
    return True


cdef inline bint _fold_pair(PyObject* name, PyObject* value, Folded* f) noexcept:
    cdef Header n, v
    cdef int which
    if not _view(name, &n):
        return False
    if not _mcp_prefix(n.data, n.size):
        return True
    if not _view(value, &v):
        return False
    if n.size == 20 and _lower_is(n.data, b"mcp-protocol-version", 20):
        which = H_VERSION
    elif n.size == 10 and _lower_is(n.data, b"mcp-method", 10):
        which = H_METHOD
    elif n.size == 8 and _lower_is(n.data, b"mcp-name", 8):
        which = H_NAME
    else:
        if n.size > 10 and _lower_is(n.data, b"mcp-param-", 10):
            if f.params == MAX_PARAM_HEADERS:
                return False
            f.param_names[f.params] = n
            f.param_values[f.params] = v
            f.params += 1
        return True
    if f.routing[which].value == NULL:
        f.routing[which] = v
    elif f.duplicated == 0:
        f.duplicated = which + 1
    return True


cdef bint _fold_fast(object headers, Folded* f) noexcept:
    """``_fold`` without allocating, for exact types; False when the general fold must run."""
    cdef Py_ssize_t i = 0, count
    cdef PyObject* key
    cdef PyObject* item
    cdef PyObject** pairs
    f.routing[0].value = f.routing[1].value = f.routing[2].value = NULL
    f.duplicated = 0
    f.params = 0
    if type(headers) is list or type(headers) is tuple:
        # Borrowed items, no iterator: nothing here runs Python code that could change them.
        pairs = PySequence_Fast_ITEMS(headers)
        count = PySequence_Fast_GET_SIZE(headers)
        for i in range(count):
            item = pairs[i]
            if type(<object>item) is not tuple or PyTuple_GET_SIZE(<object>item) != 2:
                return False
            if not _fold_pair(PyTuple_GET_ITEM(<object>item, 0),
                              PyTuple_GET_ITEM(<object>item, 1), f):
                return False
        return True
    if type(headers) is dict:
        while PyDict_Next(headers, &i, &key, &item):
            if not _fold_pair(key, item, f):
                return False
        return True
    return False


cdef void _hold(Folded* f) noexcept:
    """Take a reference to every object the fast fold points into. Its pointers are
    borrowed from the caller's header list, and the ladder runs Python code before it reads
    the last of them (``tools.get``, ``decode_header_value``, a version's ``__eq__``, a
    finaliser the collector runs): code that may drop the list, or let another thread
    do so, and free the values under our pointers (issue 25)."""
    cdef Py_ssize_t i
    for i in range(3):
        Py_XINCREF(f.routing[i].value)
    for i in range(f.params):
        Py_XINCREF(f.param_names[i].value)
        Py_XINCREF(f.param_values[i].value)
    f.held = True


cdef void _release(Folded* f) noexcept:
    cdef Py_ssize_t i
    if not f.held:
        return
    f.held = False
    for i in range(3):
        Py_XDECREF(f.routing[i].value)
    for i in range(f.params):
        Py_XDECREF(f.param_names[i].value)
        Py_XDECREF(f.param_values[i].value)


cdef tuple _param_fold(Folded* f):
    """The general fold's two dicts from the Mcp-Param-* pairs the fast fold kept, the only
    ones ``ParamHeaders.mismatch`` reads: folding the caller's headers again after
    ``tools.get`` would see whatever that call left of them, not what the twin saw."""
    cdef dict folded = {}
    cdef dict duplicated = {}
    cdef Py_ssize_t i
    for i in range(f.params):
        key = _header_text(&f.param_names[i]).lower()
        if key in folded:
            duplicated[key] = None
        else:
            folded[key] = _header_text(&f.param_values[i])
    return folded, duplicated


cdef int _from_general(dict folded, dict duplicated, Folded* f) except -1:
    """The general fold's result as a Folded: values as objects, nothing read in place."""
    cdef int which
    f.duplicated = 0
    f.params = MAX_PARAM_HEADERS + 1  # never read in place
    for which in range(3):
        value = folded.get(ROUTING_ORDER[which])  # the dict keeps it alive
        f.routing[which].data = NULL
        f.routing[which].value = NULL if value is None else <PyObject*>value
    for header in duplicated:
        if header in ROUTING_HEADERS:
            f.duplicated = 1 + ROUTING_ORDER.index(header)
            return 0
    return 0


cdef inline str _header_text(Header* h):
    """A header value as the SDK reads it: latin-1 text."""
    if type(<object>h.value) is bytes:
        return PyUnicode_DecodeLatin1(PyBytes_AS_STRING(<object>h.value),
                                      PyBytes_GET_SIZE(<object>h.value), NULL)
    return <str>h.value


cdef bint _same_text(Scan* s, Noted* n, Header* h) except -1:
    """Whether a header's text equals the body string noted at ``n``: on the bytes when
    the string is plain ASCII (latin-1 text equals it exactly when the bytes do)."""
    cdef Py_ssize_t size
    if h.value == NULL:
        return False
    if h.data != NULL and n.flags == 0:
        size = n.span.end - n.span.start - 2
        return h.size == size and memcmp(h.data, s.base + n.span.start + 1, size) == 0
    return _header_text(h) == _string_at(s, n.span, n.flags)


cdef inline bint _sentinel(Header* h) noexcept:
    """Whether a value read in place may be in the ``=?base64?...?=`` form."""
    return h.size >= 2 and h.data[0] == 0x3D and h.data[1] == 0x3F


cdef inline bint _base64_sentinel(Header* h) noexcept:
    """Whether a value read in place is in the ``=?base64?...?=`` form exactly as
    ``decode_header_value``'s pattern takes it (its ``.`` stops at a newline)."""
    return (h.size >= 11 and memcmp(h.data, b"=?base64?", 9) == 0
            and h.data[h.size - 2] == 0x3F and h.data[h.size - 1] == 0x3D
            and memchr(h.data + 9, 0x0A, h.size - 11) == NULL)


cdef const unsigned char* BASE64 = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


cdef bint _base64_of(Header* h, const unsigned char* text, Py_ssize_t size) noexcept:
    """Whether a ``=?base64?...?=`` value decodes to exactly the UTF-8 ``text`` (valid
    UTF-8, as a validated body string's raw bytes are). ``decode_header_value`` takes a
    payload only when it is canonical base64, that is the one encoding of its bytes, so
    encoding ``text`` and comparing says what decoding and comparing would, without the
    Python path (a sentinel value used to cost the general path, ~21% of all time)."""
    cdef const unsigned char* payload = h.data + 9
    cdef Py_ssize_t i = 0, o = 0
    cdef unsigned int chunk
    if h.size - 11 != (size + 2) // 3 * 4:
        return False
    while i + 3 <= size:
        chunk = (<unsigned int>text[i] << 16) | (<unsigned int>text[i + 1] << 8) | text[i + 2]
        if (payload[o] != BASE64[chunk >> 18] or payload[o + 1] != BASE64[(chunk >> 12) & 63]
                or payload[o + 2] != BASE64[(chunk >> 6) & 63] or payload[o + 3] != BASE64[chunk & 63]):
            return False
        i += 3
        o += 4
    if i == size:
        return True
    chunk = <unsigned int>text[i] << 16
    if i + 2 == size:
        chunk |= <unsigned int>text[i + 1] << 8
    return (payload[o] == BASE64[chunk >> 18] and payload[o + 1] == BASE64[(chunk >> 12) & 63]
            and payload[o + 2] == (BASE64[(chunk >> 6) & 63] if i + 2 == size else 0x3D)
            and payload[o + 3] == 0x3D)


def _text(item, str what):
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item).decode("latin-1")  # HTTP field bytes, as Starlette decodes them
    if isinstance(item, str):
        return str.__str__(item)
    raise TypeError(f"a header {what} is str or bytes, not {type(item).__name__}")


# --- reading validated JSON (route validated it: a NUL ends every bytes object) -----------


cdef inline Py_ssize_t _ws(const unsigned char* d, Py_ssize_t p) noexcept:
    while d[p] == 0x20 or d[p] == 0x09 or d[p] == 0x0A or d[p] == 0x0D:
        p += 1
    return p


cdef inline Py_ssize_t _string_end(const unsigned char* d, Py_ssize_t p) noexcept:
    """After the closing quote of the string at ``p``: short strings a byte at a time,
    then strchr (vectorised in libc; no NUL can come first in a validated string), a
    quote ending the string when an even run of backslashes precedes it."""
    cdef Py_ssize_t stop = p + 17, k
    p += 1
    while p < stop:
        if d[p] == 0x22:
            return p + 1
        if d[p] == 0x5C:
            p += 1
        p += 1
    while True:
        p = <const unsigned char*>strchr(<const char*>d + p, 0x22) - d
        k = 0
        while d[p - 1 - k] == 0x5C:
            k += 1
        p += 1
        if k % 2 == 0:
            return p


cdef Py_ssize_t _value_end(const unsigned char* d, Py_ssize_t p) noexcept:
    cdef unsigned char c = d[p]
    cdef Py_ssize_t depth = 0
    if c == 0x22:
        return _string_end(d, p)
    if c != 0x7B and c != 0x5B:
        while not (d[p] == 0x2C or d[p] == 0x7D or d[p] == 0x5D or d[p] == 0x20
                   or d[p] == 0x09 or d[p] == 0x0A or d[p] == 0x0D or d[p] == 0):
            p += 1
        return p
    while True:
        c = d[p]
        if c == 0x22:
            p = _string_end(d, p)
            continue
        if c == 0x7B or c == 0x5B:
            depth += 1
        elif c == 0x7D or c == 0x5D:
            depth -= 1
            if depth == 0:
                return p + 1
        p += 1


cdef inline unsigned char _first(bytes data, tuple span):
    return <unsigned char>PyBytes_AS_STRING(data)[<Py_ssize_t>span[0]]


cdef dict _members(bytes data, tuple span):
    """The value span of each member of the validated object at ``span`` (the last wins)."""
    cdef const unsigned char* d = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef dict members = {}
    cdef Py_ssize_t p = _ws(d, <Py_ssize_t>span[0] + 1), name_end, start
    if d[p] == 0x7D:
        return members
    while True:
        name_end = _string_end(d, p)
        name = _string(data, p, name_end)
        start = _ws(d, _ws(d, name_end) + 1)  # past the colon
        p = _value_end(d, start)
        members[name] = (start, p)
        p = _ws(d, p)
        if d[p] == 0x7D:
            return members
        p = _ws(d, p + 1)


cdef str _string(bytes data, Py_ssize_t start, Py_ssize_t end):
    """The str a validated string value holds (start and end include the quotes)."""
    cdef const char* d = PyBytes_AS_STRING(data)
    if memchr(d + start + 1, 0x5C, end - start - 2) is NULL:
        return PyUnicode_DecodeUTF8(d + start + 1, end - start - 2, NULL)
    return _loads(data[start:end])


cdef object _scalar(bytes data, tuple span):
    cdef Py_ssize_t start = span[0], end = span[1]
    cdef unsigned char c = <unsigned char>PyBytes_AS_STRING(data)[start]
    if c == 0x22:
        return _string(data, start, end)
    if c == 0x7B or c == 0x5B:
        return UNRENDERABLE
    if c == 0x6E:
        return ABSENT
    if c == 0x74 or c == 0x66:
        return c == 0x74
    text = data[start:end]
    if b"." in text or b"e" in text or b"E" in text:
        return float(text)
    return int(text)


@cython.final
cdef class _Arguments:
    """The ``arguments`` object of a ``tools/call``, read path by path on demand."""

    cdef bytes data
    cdef object top
    cdef dict objects

    def __init__(self, bytes data, span):
        self.data, self.top, self.objects = data, span, {}

    def __call__(self, tuple path):
        span = self.top
        cdef bytes data = self.data
        cdef dict members
        for key in path:
            if span is None or _first(data, span) != 0x7B:
                return ABSENT
            members = self.objects.get(span[0])
            if members is None:
                members = self.objects[span[0]] = _members(data, span)
            span = members.get(key)
        return ABSENT if span is None else _scalar(data, span)


# --- Mcp-Param-* on the bytes, for the usual case ----------------------------------------


cdef enum:
    A_ABSENT, A_CONTAINER, A_PLAIN, A_UNKNOWN  # what an argument path leads to


cdef int _member_at(const unsigned char* d, Py_ssize_t* start, Py_ssize_t* end,
                    const char* key, Py_ssize_t size) noexcept:
    """Move the span of a validated object to its member ``key`` (the last one wins):
    A_PLAIN when found, A_ABSENT when not, A_UNKNOWN when a name has escapes."""
    cdef Py_ssize_t p = _ws(d, start[0] + 1), name_end, value
    cdef int found = A_ABSENT
    if d[p] == 0x7D:
        return A_ABSENT
    while True:
        name_end = _string_end(d, p)
        if memchr(d + p + 1, 0x5C, name_end - p - 2) != NULL:
            return A_UNKNOWN
        value = _ws(d, _ws(d, name_end) + 1)
        if name_end - p - 2 == size and memcmp(d + p + 1, key, size) == 0:
            found = A_PLAIN
            start[0] = value
        p = _value_end(d, value)
        if found == A_PLAIN and start[0] == value:
            end[0] = p
        p = _ws(d, p)
        if d[p] == 0x7D:
            return found
        p = _ws(d, p + 1)


cdef enum:
    MAX_MEMBERS = 16  # an arguments object with more is searched once per annotation


cdef struct Members:
    Py_ssize_t count  # -1: not read (more members, or an escaped name)
    Span names[MAX_MEMBERS]  # without the quotes
    Span values[MAX_MEMBERS]


cdef void _collect(const unsigned char* d, Py_ssize_t start, Members* m) noexcept:
    """The members of the validated object at ``start``, read once for all annotations:
    searching it once per annotation skipped every argument value that many times."""
    cdef Py_ssize_t p = _ws(d, start + 1), name_end, value
    m.count = 0
    if d[p] == 0x7D:
        return
    while True:
        name_end = _string_end(d, p)
        if m.count == MAX_MEMBERS or memchr(d + p + 1, 0x5C, name_end - p - 2) != NULL:
            m.count = -1
            return
        value = _ws(d, _ws(d, name_end) + 1)
        m.names[m.count].start, m.names[m.count].end = p + 1, name_end - 1
        m.values[m.count].start = value
        p = _value_end(d, value)
        m.values[m.count].end = p
        m.count += 1
        p = _ws(d, p)
        if d[p] == 0x7D:
            return
        p = _ws(d, p + 1)


cdef bint _utf8_encodable(str text) except -1:
    """Whether a str has UTF-8 bytes: a schema that ``json.loads`` decoded may name a
    property with a lone surrogate, which no body can hold (issue 29, item 9)."""
    try:
        PyUnicode_AsUTF8AndSize(text, NULL)
    except UnicodeEncodeError:
        return False
    return True


cdef int _argument(Scan* s, Noted* arguments, tuple path, Py_ssize_t* start,
                   Py_ssize_t* end, Members* top) except -1:
    """Where an argument path leads in a validated ``arguments`` object (None: absent);
    its first step through ``top``, the members of ``arguments`` when they were read."""
    cdef const unsigned char* d = s.base
    cdef const char* key
    cdef Py_ssize_t size, i
    cdef int found
    if arguments == NULL:
        return A_ABSENT
    start[0], end[0] = arguments.span.start, arguments.span.end
    for step in path:
        if d[start[0]] != 0x7B:
            return A_ABSENT
        if not PyUnicode_IS_ASCII(step) and not _utf8_encodable(step):
            return A_UNKNOWN  # a lone surrogate from a json.loads schema: the general path
        key = PyUnicode_AsUTF8AndSize(step, &size)
        if top != NULL and top.count >= 0 and start[0] == arguments.span.start:
            found = A_ABSENT
            i = top.count
            while i > 0:  # the last of duplicates wins
                i -= 1
                if (top.names[i].end - top.names[i].start == size
                        and memcmp(d + top.names[i].start, key, size) == 0):
                    start[0], end[0] = top.values[i].start, top.values[i].end
                    found = A_PLAIN
                    break
        else:
            found = _member_at(d, start, end, key, size)
        if found != A_PLAIN:
            return found
    if d[start[0]] == 0x7B or d[start[0]] == 0x5B:
        return A_CONTAINER
    if d[start[0]] == 0x6E:
        return A_ABSENT  # null
    return A_PLAIN


cdef inline bint _plain_value(const unsigned char* d, Py_ssize_t start, Py_ssize_t end,
                              bint utf8) noexcept:
    """Whether an argument's JSON text is what a client renders in its header: a string
    without escapes (ASCII unless ``utf8``: a header's own bytes are latin-1 text), true,
    false, or a short integer other than -0."""
    cdef Py_ssize_t i
    cdef unsigned char c
    if d[start] == 0x22:
        for i in range(start + 1, end - 1):
            if d[i] == 0x5C or (d[i] >= 0x80 and not utf8):
                return False
        return True
    if d[start] == 0x74 or d[start] == 0x66:
        return True
    if end - start > 18 or (end - start == 2 and d[start] == 0x2D and d[start + 1] == 0x30):
        return False
    for i in range(start, end):
        c = d[i]
        if c == 0x2E or c == 0x65 or c == 0x45:
            return False
    return True


cdef bint _params_agree(object annotations, Scan* s, Noted* arguments, Folded* f) except -1:
    """Whether every annotated argument agrees with its Mcp-Param-* header, decided on the
    bytes: True only when each pair is plainly equal (or both are absent). False leaves
    the decision, and the reason, to ``ParamHeaders.mismatch``."""
    cdef const unsigned char* d = s.base
    cdef Py_ssize_t start, end, size, i, text
    cdef const char* key
    cdef Header* sent
    cdef int leads
    cdef Members top
    top.count = -1
    if arguments != NULL:
        _collect(d, arguments.span.start, &top)
    for entry in annotations.entries:  # (path, name, key, integer, argument)
        key = PyUnicode_AsUTF8AndSize(<str>PyTuple_GET_ITEM(entry, 2), &size)
        sent = NULL
        for i in range(f.params):
            if f.param_names[i].size == size and _lower_is(f.param_names[i].data, key, size):
                if sent != NULL:
                    return False  # sent twice
                sent = &f.param_values[i]
        leads = _argument(s, arguments, <tuple>PyTuple_GET_ITEM(entry, 0), &start, &end, &top)
        if leads == A_UNKNOWN:
            return False
        if leads != A_PLAIN:
            if sent != NULL:
                return False
            continue
        if sent == NULL:
            return False
        text = start + 1 if d[start] == 0x22 else start
        size = end - start - 2 if d[start] == 0x22 else end - start
        if _sentinel(sent):  # base64: the decoded bytes are UTF-8 text
            if not (_base64_sentinel(sent) and _plain_value(d, start, end, True)
                    and _base64_of(sent, d + text, size)):
                return False
        elif not (_plain_value(d, start, end, False) and sent.size == size
                  and memcmp(sent.data, d + text, size) == 0):
            return False
    return True


# --- the ladder ---------------------------------------------------------------------------


cdef Verdict _verdict(int status, object r, object error, object id, object name=None,
                      object version=None):
    response = None
    if error is not None:
        response = _dumps({"jsonrpc": "2.0", "id": id, "error": _error_member(error)})
    return _make(status, r, name, version, error, response)


cdef dict _error_member(object error):
    """The response's ``error`` as the SDK words it: the detail in ``message`` (a client that
    logs only the message keeps it); "Parse error", and -32022 with its data, as they are."""
    if type(error) is ParseError or type(error) is UnsupportedProtocolVersion:
        return error.to_json()
    return {"code": error.code, "message": (<ProtocolError>error).reason}


cdef UnsupportedProtocolVersion _unsupported(str requested, tuple versions):
    """-32022 for ``requested``, made encodable (a ``str`` header may hold lone surrogates)."""
    requested = json_text(requested)
    cdef UnsupportedProtocolVersion e = UnsupportedProtocolVersion.__new__(
        UnsupportedProtocolVersion)
    e.reason, e.supported, e.requested = UNSUPPORTED.format(requested), versions, requested
    return e


@cython.binding(True)  # a function object, to carry the __signature__ set below
def check_request(body, headers, *, versions=VERSIONS, tools=None):
    """The verdict on one POST of MCP 2026-07-28 Streamable HTTP, in the SDK's order."""
    cdef Scan s
    s.nested = True
    cdef Route r = _routed(body, &s)
    cdef tuple supported
    if type(versions) is tuple and _all_str(versions):
        supported = versions
    else:  # a str would be taken as its characters
        supported = strings("versions", versions)
    if tools is not None and type(tools) is not dict:
        tools_mapping(tools)
    error = _get(r._protocol_error)
    if type(error) is ParseError:
        return _verdict(BAD_REQUEST, r, error, None)
    cdef Folded f
    f.held = False
    cdef dict folded = None  # the general fold's, where the fast one does not apply
    cdef dict duplicated = None
    if headers is not None:
        if _fold_fast(headers, &f):
            _hold(&f)
        else:
            folded, duplicated = _fold(headers)
            _from_general(folded, duplicated, &f)
    try:
        return _ladder(r, &s, error, headers, &f, folded, duplicated, supported, tools)
    finally:
        _release(&f)


cdef Verdict _ladder(Route r, Scan* s, object error, object headers, Folded* fold,
                     dict folded, dict duplicated, tuple supported, object tools):
    """The rungs after the fold: the twin's ``check_request`` from its fold on, apart so
    that one try/finally releases what ``_hold`` took, whichever rung answers."""
    cdef Folded* sent = NULL if headers is None else fold
    if r._id.start < 0 and not (type(error) is InvalidRequest
                                and error.reason in _NOT_OBJECTS):
        return _notification(r, s, error, sent, supported)
    cdef const unsigned char* d = s.base
    # "params": null is no params to the SDK's model, whose next rungs refuse it anyway.
    cdef bint null_params = type(error) is InvalidParams and d[r._params.start] == 0x6E
    id = _get(r._id_value)
    if r._kind != REQUEST and not null_params:
        if r._kind == RESPONSE:
            error = _error(InvalidRequest, POSTED_RESPONSE)
        return _verdict(BAD_REQUEST, r, error, id)
    if sent != NULL and sent.duplicated:
        reason = DUPLICATED.format(ROUTING_ORDER[sent.duplicated - 1])
        return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, reason), id)
    # The _meta envelope.
    cdef Noted* meta = &s.inner[<int>N_META]
    if null_params or r._params.start < 0 or meta.span.start < 0 or meta.value != V_OBJECT:
        return _verdict(BAD_REQUEST, r, _error(InvalidParams, NO_META), id)
    cdef Noted* version_at = &s.inner[<int>N_VERSION]
    if version_at.span.start < 0 or s.inner[<int>N_CAPABILITIES].span.start < 0:
        missing = [key for key, at in ((VERSION_KEY, N_VERSION), (CAPABILITIES_KEY, N_CAPABILITIES))
                   if s.inner[<int>at].span.start < 0]
        return _verdict(BAD_REQUEST, r, _error(InvalidParams, MISSING_META.format(", ".join(missing))), id)
    version = _version(s, version_at, supported)
    # The mirrored headers; Mcp-Name only where the body has a non-null name.
    cdef str method = <str>r._method
    cdef int name_index = _name_bearing(s, method)
    cdef Noted* name_at = NULL
    if name_index >= 0:
        name_at = &s.inner[name_index]
        if name_at.span.start < 0:
            name_at = NULL
    name = None
    if name_at != NULL and name_at.value == V_STRING:
        name = _string_at(s, name_at.span, name_at.flags)
    cdef Noted method_at
    if sent != NULL:
        if version is None or not _same_text(s, version_at, &sent.routing[<int>H_VERSION]):
            return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, VERSION_MISMATCH), id, name, version)
        method_at.span, method_at.value, method_at.flags = r._method_span, V_STRING, s.method_flags
        if not _same_text(s, &method_at, &sent.routing[<int>H_METHOD]):
            return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, METHOD_MISMATCH), id, name, version)
        if name_at != NULL and d[name_at.span.start] != 0x6E and not _same_name(
                s, name_at, name, &sent.routing[<int>H_NAME]):
            error = _error(HeaderMismatch, NAME_MISMATCH.format(
                "name" if name_index == N_NAME else "uri"))
            return _verdict(BAD_REQUEST, r, error, id, name, version)
    # The version itself.
    if version is None:
        return _verdict(BAD_REQUEST, r, _error(InvalidParams, VERSION_NOT_STRING), id)
    if not _supported(version, supported):
        return _verdict(BAD_REQUEST, r, _unsupported(version, supported), id, name, version)
    # Mcp-Param-* against the called tool's annotated arguments.
    if sent == NULL or tools is None or name is None or not _is_tools_call(s, method):
        return _make(OK, r, name, version, None, None)
    cdef PyObject* found
    if type(tools) is dict:
        found = PyDict_GetItem(tools, name)
        annotations = None if found == NULL else <object>found
    else:
        annotations = tools.get(name)
    if annotations is None:
        return _make(OK, r, name, version, None, None)
    if type(annotations) is not ParamHeaders:
        annotations = compiled(name, annotations)
    cdef Noted* arguments = &s.inner[<int>N_ARGUMENTS]
    if arguments.span.start < 0 or d[arguments.span.start] == 0x6E:
        arguments = NULL  # absent or null: no arguments
    elif d[arguments.span.start] != 0x7B:
        return _make(OK, r, name, version, None, None)  # not checked, as the SDK
    if folded is None and type(annotations) is ParamHeaders and _params_agree(
            annotations, s, arguments, sent):
        return _make(OK, r, name, version, None, None)
    if folded is None:
        folded, duplicated = _param_fold(sent)
    data = <bytes>r._line if type(<object>r._line) is bytes else (<str>r._line).encode()
    span = None if arguments == NULL else (arguments.span.start, arguments.span.end)
    reason = annotations.mismatch(_Arguments(data, span), folded, duplicated)
    if reason is not None:
        return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, reason), id, name, version)
    return _make(OK, r, name, version, None, None)


cdef int _name_bearing(Scan* s, str method) except -2:
    """The inner member Mcp-Name mirrors for a method (NAME_BEARING), or -1 for none."""
    cdef const unsigned char* p = s.base + s.method.start + 1
    cdef Py_ssize_t size = s.method.end - s.method.start - 2
    if s.method_flags != 0:  # escaped or non-ASCII: by its str
        key = NAME_BEARING.get(method)
        return -1 if key is None else (N_NAME if key == "name" else N_URI)
    if size == 10 and memcmp(p, b"tools/call", 10) == 0:
        return N_NAME
    if size == 11 and memcmp(p, b"prompts/get", 11) == 0:
        return N_NAME
    if size == 14 and memcmp(p, b"resources/read", 14) == 0:
        return N_URI
    return -1


cdef inline bint _is_tools_call(Scan* s, str method) except -1:
    if s.method_flags != 0:
        return method == "tools/call"
    return (s.method.end - s.method.start == 12
            and memcmp(s.base + s.method.start + 1, b"tools/call", 10) == 0)


cdef object _version(Scan* s, Noted* n, tuple supported):
    """The body's protocol version: a supported version's own str when the bytes spell
    it (no new str, and the membership test is then by identity), None when no string."""
    cdef Py_ssize_t size = n.span.end - n.span.start - 2, length
    cdef const char* text
    if n.value != V_STRING:
        return None
    if n.flags == 0:
        for version in supported:
            if type(version) is str and PyUnicode_IS_COMPACT_ASCII(version):
                length = PyUnicode_GET_LENGTH(version)
                text = <const char*>PyUnicode_DATA(version)
                if length == size and memcmp(text, s.base + n.span.start + 1, size) == 0:
                    return version
    return _string_at(s, n.span, n.flags)


cdef inline bint _all_str(tuple versions) noexcept:
    """Whether a versions tuple needs no check: exact str items (``strings`` does the rest)."""
    cdef Py_ssize_t i
    for i in range(PyTuple_GET_SIZE(versions)):
        if type(<object>PyTuple_GET_ITEM(versions, i)) is not str:
            return False
    return True


cdef inline bint _supported(object version, tuple supported) except -1:
    cdef Py_ssize_t i
    for i in range(PyTuple_GET_SIZE(supported)):
        if <PyObject*>PyTuple_GET_ITEM(supported, i) == <PyObject*>version:
            return True
    return version in supported


cdef inline object _get(PyObject* value):
    return None if value == NULL else <object>value


cdef bint _same_name(Scan* s, Noted* n, object name, Header* h) except -1:
    """Whether Mcp-Name agrees with the body's name (a string, or None for another type)."""
    if name is None or h.value == NULL:
        return False
    if h.data != NULL and not _sentinel(h):
        return _same_text(s, n, h)
    if h.data != NULL and _base64_sentinel(h) and not (n.flags & S_ESCAPED):
        return _base64_of(h, s.base + n.span.start + 1, n.span.end - n.span.start - 2)
    return decode_header_value(_header_text(h)) == name


# The embedded text signature cannot carry it: inspect reads a tuple default as its element.
check_request.__signature__ = Signature([
    Parameter("body", Parameter.POSITIONAL_OR_KEYWORD),
    Parameter("headers", Parameter.POSITIONAL_OR_KEYWORD),
    Parameter("versions", Parameter.KEYWORD_ONLY, default=VERSIONS),
    Parameter("tools", Parameter.KEYWORD_ONLY, default=None),
])


cdef Verdict _notification(Route r, Scan* s, object error, Folded* f, tuple versions):
    """A POST without an id: 202 for a notification at a served version, else 400 (id null)."""
    if r._kind == RESPONSE:
        return _verdict(BAD_REQUEST, r, _error(InvalidRequest, POSTED_RESPONSE), None)
    if r._kind != NOTIFICATION:
        return _verdict(BAD_REQUEST, r, error, None)
    cdef unsigned char first
    if r._params.start >= 0:
        first = s.base[r._params.start]
        if first != 0x7B and first != 0x6E:  # null params are no params
            return _verdict(BAD_REQUEST, r, _error(InvalidParams, BAD_PARAMS), None)
    if f != NULL:
        version = &f.routing[<int>H_VERSION]
        requested = "" if version.value == NULL else _header_text(version)
        if requested not in versions:
            return _verdict(BAD_REQUEST, r, _unsupported(requested, versions), None)
    return _make(ACCEPTED, r, None, None, None, None)
