# cython: language_level=3, binding=False, embedsignature=True, embedsignature.format=clinic
"""The Cython core of ``rpcline.http``: ``check_request``, the MCP 2026-07-28 HTTP ladder.

It mirrors ``_http_py.py`` function by function; that module is the typing source and
documents the behaviour. Here the header fold and the skipper over the (validated) params
run as C loops over the bytes, and the ladder on exact-type checks, so that a verdict
costs little more than ``route``.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memchr

import orjson

from rpcline._http_py import (
    ACCEPTED,
    BAD_REQUEST,
    CAPABILITIES_KEY,
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
    VERSION_HEADER,
    VERSION_KEY,
    VERSION_MISMATCH,
    VERSION_NOT_STRING,
    VERSIONS,
)
from rpcline._http_schema import ABSENT, UNRENDERABLE, decode_header_value

from rpcline._message_c cimport ProtocolError

from rpcline._message_c import InvalidParams, InvalidRequest, ParseError
from rpcline._message_py import BAD_PARAMS, BATCHING, NOT_AN_OBJECT
from rpcline._route_c import route

from collections.abc import Mapping
from inspect import Parameter, Signature  # importlib.metadata loads inspect anyway

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


@cython.final
@cython.freelist(16)
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
    """The ``mcp-*`` headers by lowercase name (first value wins), and those sent twice."""
    # An exact list (what ASGI gives) or dict skips the Mapping ABC check, which costs as
    # much as the rest of the fold.
    if type(headers) is list:
        pairs = headers
    elif type(headers) is dict or isinstance(headers, Mapping):
        pairs = headers.items()
    else:
        pairs = headers
    cdef dict folded = {}
    cdef set duplicated = set()
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
            duplicated.add(text)
        else:
            folded[text] = value
    return folded, duplicated


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
    p += 1
    while True:
        if d[p] == 0x22:
            return p + 1
        p += 2 if d[p] == 0x5C else 1


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


# --- the ladder ---------------------------------------------------------------------------


cdef Verdict _verdict(int status, object r, object error, object id, object name=None,
                      object version=None):
    response = None
    if error is not None:
        response = _dumps({"jsonrpc": "2.0", "id": id, "error": error.to_json()})
    return _make(status, r, name, version, error, response)


cdef UnsupportedProtocolVersion _unsupported(str requested, tuple versions):
    cdef UnsupportedProtocolVersion e = UnsupportedProtocolVersion.__new__(
        UnsupportedProtocolVersion)
    e.reason, e.supported, e.requested = UNSUPPORTED.format(requested), versions, requested
    return e


@cython.binding(True)  # a function object, to carry the __signature__ set below
def check_request(body, headers, *, versions=VERSIONS, tools=None):
    """The verdict on one POST of MCP 2026-07-28 Streamable HTTP, in the SDK's order."""
    r = route(body)
    cdef tuple supported = versions if type(versions) is tuple else tuple(versions)
    kind = r.kind
    error = r.error
    cdef dict folded = None
    cdef set duplicated = None
    if type(error) is ParseError:
        return _verdict(BAD_REQUEST, r, error, None)
    if headers is not None:
        folded, duplicated = _fold(headers)
    if r.id_span is None and not (type(error) is InvalidRequest
                                  and error.reason in _NOT_OBJECTS):
        return _notification(r, kind, error, folded, supported)
    line = r.line
    cdef bytes data = line if type(line) is bytes else line.encode()
    params = r.params_span
    # "params": null is no params to the SDK's model, whose next rungs refuse it anyway.
    cdef bint null_params = type(error) is InvalidParams and _first(data, params) == 0x6E
    if kind != "request" and not null_params:
        if kind == "response":
            error = _error(InvalidRequest, POSTED_RESPONSE)
        return _verdict(BAD_REQUEST, r, error, r.id)
    id = r.id
    cdef str method = r.method
    if headers is not None and duplicated:
        for header in duplicated:
            if header in ROUTING_HEADERS:
                return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, DUPLICATED.format(header)), id)
    # The _meta envelope.
    if null_params:
        params = None
    if params is None:
        return _verdict(BAD_REQUEST, r, _error(InvalidParams, NO_META), id)
    cdef dict members = _members(data, params)
    meta_span = members.get("_meta")
    if meta_span is None or _first(data, meta_span) != 0x7B:
        return _verdict(BAD_REQUEST, r, _error(InvalidParams, NO_META), id)
    cdef dict meta = _members(data, meta_span)
    version_span = meta.get(VERSION_KEY)
    if version_span is None or CAPABILITIES_KEY not in meta:
        missing = [key for key in (VERSION_KEY, CAPABILITIES_KEY) if key not in meta]
        return _verdict(BAD_REQUEST, r, _error(InvalidParams, MISSING_META.format(", ".join(missing))), id)
    version = (_string(data, version_span[0], version_span[1])
               if _first(data, version_span) == 0x22 else None)
    # The mirrored headers; Mcp-Name only where the body has a non-null name.
    name = None
    name_key = NAME_BEARING.get(method)
    name_span = None if name_key is None else members.get(name_key)
    if name_span is not None and _first(data, name_span) == 0x22:
        name = _string(data, name_span[0], name_span[1])
    if folded is not None:
        if version is None or folded.get(VERSION_HEADER) != version:
            return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, VERSION_MISMATCH), id, name, version)
        if folded.get(METHOD_HEADER) != method:
            return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, METHOD_MISMATCH), id, name, version)
        if name_span is not None and _first(data, name_span) != 0x6E:
            sent = folded.get(NAME_HEADER)
            if name is None or sent is None or decode_header_value(sent) != name:
                error = _error(HeaderMismatch, NAME_MISMATCH.format(name_key))
                return _verdict(BAD_REQUEST, r, error, id, name, version)
    # The version itself.
    if version is None:
        return _verdict(BAD_REQUEST, r, _error(InvalidParams, VERSION_NOT_STRING), id)
    if version not in supported:
        return _verdict(BAD_REQUEST, r, _unsupported(version, supported), id, name, version)
    # Mcp-Param-* against the called tool's annotated arguments.
    if folded is not None and tools is not None and method == "tools/call" and name is not None:
        annotations = tools.get(name)
        if annotations is not None:
            arguments = members.get("arguments")
            if arguments is not None and _first(data, arguments) == 0x6E:
                arguments = None  # null reads as no arguments
            if arguments is None or _first(data, arguments) == 0x7B:  # else not checked, as the SDK
                reason = annotations.mismatch(_Arguments(data, arguments), folded, duplicated)
                if reason is not None:
                    return _verdict(BAD_REQUEST, r, _error(HeaderMismatch, reason), id, name, version)
    return _make(OK, r, name, version, None, None)


# The embedded text signature cannot carry it: inspect reads a tuple default as its element.
check_request.__signature__ = Signature([
    Parameter("body", Parameter.POSITIONAL_OR_KEYWORD),
    Parameter("headers", Parameter.POSITIONAL_OR_KEYWORD),
    Parameter("versions", Parameter.KEYWORD_ONLY, default=VERSIONS),
    Parameter("tools", Parameter.KEYWORD_ONLY, default=None),
])


cdef Verdict _notification(object r, object kind, object error, dict folded, tuple versions):
    """A POST without an id: 202 for a notification at a served version, else 400 (id null)."""
    if kind == "response":
        return _verdict(BAD_REQUEST, r, _error(InvalidRequest, POSTED_RESPONSE), None)
    if kind != "notification":
        return _verdict(BAD_REQUEST, r, error, None)
    params = r.params_span
    line = r.line
    cdef unsigned char first
    if params is not None:
        first = _first(line if type(line) is bytes else line.encode(), params)
        if first != 0x7B and first != 0x6E:  # null params are no params
            return _verdict(BAD_REQUEST, r, _error(InvalidParams, BAD_PARAMS), None)
    if folded is not None:
        requested = folded.get(VERSION_HEADER, "")
        if requested not in versions:
            return _verdict(BAD_REQUEST, r, _unsupported(requested, versions), None)
    return _make(ACCEPTED, r, None, None, None, None)
