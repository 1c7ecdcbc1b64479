# cython: language_level=3, binding=False, embedsignature=True, embedsignature.format=clinic
"""The Cython core: the card's nine rules on the object ``orjson.loads`` returns.

It mirrors ``message_py.py`` function by function and rule by rule; that module is the
typing source and documents the behaviour. Here the rules run on exact-type checks and
borrowed dictionary look-ups, and results come from freelists, so that ``parse`` costs
little more than the decoder it wraps.
"""

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_READ_CHAR
from libc.string cimport memcmp

import orjson

from rpcline._core.shared import (
    BAD_ID,
    BAD_JSONRPC,
    BAD_METHOD,
    BAD_PARAMS,
    BATCHING,
    NOT_AN_OBJECT,
    NOT_UTF8,
    STRAY_REASONS,
    UNEXPECTED_CHARACTER,
    bind,
    utf8_reason,
    wrong_type,
)

cdef extern from "Python.h":
    bint PyDict_CheckExact(object)
    bint PyList_CheckExact(object)
    bint PyLong_CheckExact(object)
    bint PyUnicode_CheckExact(object)
    bint PyUnicode_CheckExact_ptr "PyUnicode_CheckExact"(PyObject*)
    bint PyLong_CheckExact_ptr "PyLong_CheckExact"(PyObject*)
    bint PyDict_CheckExact_ptr "PyDict_CheckExact"(PyObject*)
    bint PyUnicode_IS_COMPACT_ASCII(object)
    ctypedef PyObject* (*PyCFunction)(PyObject*, PyObject*)
    int METH_O
    bint PyCFunction_Check(object)
    int PyCFunction_GET_FLAGS(object)
    PyCFunction PyCFunction_GET_FUNCTION(object)
    PyObject* PyCFunction_GET_SELF(object)
    # Returns NULL with the exception set: _parse_decodable checks it without a try block.
    PyObject* PyObject_CallOneArg(object, object)

cdef object _loads = orjson.loads
# orjson.loads is a METH_O builtin: calling its C function directly skips the generic
# call machinery, the largest fixed cost parse adds to the decoder (the recursion check it
# skips guards nothing here: orjson bounds its own nesting at 1024 levels).
cdef PyCFunction _loads_function = NULL
cdef PyObject* _loads_self = NULL
if PyCFunction_Check(_loads) and PyCFunction_GET_FLAGS(_loads) == METH_O:
    _loads_function = PyCFunction_GET_FUNCTION(_loads)
    _loads_self = PyCFunction_GET_SELF(_loads)
cdef tuple _STRAY_REASONS = STRAY_REASONS
cdef object _DecodeError = orjson.JSONDecodeError


cdef inline bint _same(object a, object b):
    # Records compare fields with their types: 1 and True, or 1 and 1.0, are not one id.
    return type(a) is type(b) and a == b


# inspect.signature and help(): embedsignature gives functions and methods a text
# signature; a class docstring opens with its own ("Name(params)" and "--", CPython's
# convention for built-in types), with the twin's parameter names.
cdef class ProtocolError:
    """ProtocolError(reason)
--

A JSON-RPC protocol error: a value to answer with, not an exception."""

    __match_args__ = ("reason",)

    # *args: the twin's TypeErrors for wrong arguments (_shared.bind), not Cython's.
    def __init__(self, *args, **kwargs):
        if type(self) is ProtocolError:
            raise TypeError("ProtocolError is abstract; use one of its subclasses")
        owner = type(self).__name__
        reason, = bind(owner, ProtocolError.__match_args__, args, kwargs)
        if not isinstance(reason, str):
            raise wrong_type(owner, "reason", "str", reason)
        if self.reason is None:  # immutable: a second __init__ is ignored, as for the twin's
            self.reason = reason

    def to_json(self):
        """The JSON-RPC ``error`` member: ``{"code": …, "message": …, "data": reason}``."""
        return {"code": self.code, "message": self.message, "data": self.reason}

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self.reason == (<ProtocolError>other).reason

    def __hash__(self):
        return hash((type(self), self.reason))

    def __repr__(self):
        return f"{type(self).__name__}(reason={self.reason!r})"

    def __reduce__(self):
        return (type(self), (self.reason,))


# No freelists for the errors: Cython cannot give one to a subtype, and refusals are rare.
@cython.final
cdef class ParseError(ProtocolError):
    """ParseError(reason)
--

The line is not JSON (-32700)."""
    code = -32700
    message = "Parse error"


@cython.final
cdef class InvalidRequest(ProtocolError):
    """InvalidRequest(reason)
--

The line is JSON but no valid JSON-RPC message (-32600)."""
    code = -32600
    message = "Invalid Request"


@cython.final
cdef class InvalidParams(ProtocolError):
    """InvalidParams(reason)
--

A request whose params is not an object (-32602)."""
    code = -32602
    message = "Invalid params"


@cython.final
@cython.freelist(64)
cdef class Request:
    """Request(id, method, params)
--

A call to answer: ``id`` is the exact decoded ``int`` or ``str``."""

    __match_args__ = ("id", "method", "params")

    def __init__(self, *args, **kwargs):
        id, method, params = bind("Request", Request.__match_args__, args, kwargs)
        id_json(id)  # refuses what is no id (parse builds results without __init__)
        if not isinstance(method, str):
            raise wrong_type("Request", "method", "str", method)
        if not isinstance(params, dict):
            raise wrong_type("Request", "params", "dict", params)
        if self.method is None:  # immutable: a second __init__ is ignored, as for the twin's
            self.id, self.method, self.params = id, method, params

    def __eq__(self, other):
        if type(other) is not Request:
            return NotImplemented
        cdef Request that = <Request>other
        return (_same(self.id, that.id) and self.method == that.method
                and self.params == that.params)

    def __hash__(self):
        return hash((Request, self.id, self.method, self.params))

    def __repr__(self):
        return f"Request(id={self.id!r}, method={self.method!r}, params={self.params!r})"

    def __reduce__(self):
        return (Request, (self.id, self.method, self.params))


@cython.final
@cython.freelist(64)
cdef class Notification:
    """Notification(method, params)
--

A message never answered; ``params`` is ``{}`` when absent or not an object."""

    __match_args__ = ("method", "params")

    def __init__(self, *args, **kwargs):
        method, params = bind("Notification", Notification.__match_args__, args, kwargs)
        if not isinstance(method, str):
            raise wrong_type("Notification", "method", "str", method)
        if not isinstance(params, dict):
            raise wrong_type("Notification", "params", "dict", params)
        if self.method is None:  # immutable: a second __init__ is ignored, as for the twin's
            self.method, self.params = method, params

    def __eq__(self, other):
        if type(other) is not Notification:
            return NotImplemented
        cdef Notification that = <Notification>other
        return self.method == that.method and self.params == that.params

    def __hash__(self):
        return hash((Notification, self.method, self.params))

    def __repr__(self):
        return f"Notification(method={self.method!r}, params={self.params!r})"

    def __reduce__(self):
        return (Notification, (self.method, self.params))


@cython.final
@cython.freelist(64)
cdef class ClientResponse:
    """ClientResponse(id, body)
--

A response (it has ``result`` or ``error``); ``id`` is ``None`` when absent."""

    __match_args__ = ("id", "body")

    def __init__(self, *args, **kwargs):
        id, body = bind("ClientResponse", ClientResponse.__match_args__, args, kwargs)
        if id is not None:
            id_json(id)
        if not isinstance(body, dict):
            raise wrong_type("ClientResponse", "body", "dict", body)
        if self.body is None:  # immutable: a second __init__ is ignored, as for the twin's
            self.id, self.body = id, body

    @property
    def result(self):
        """The ``result`` member as decoded, or ``None`` when there is none."""
        return self.body.get("result")

    @property
    def error(self):
        """The ``error`` member as decoded (the peer's, any JSON value: not a
        ``ProtocolError``), or ``None`` when there is none."""
        return self.body.get("error")

    def __eq__(self, other):
        if type(other) is not ClientResponse:
            return NotImplemented
        cdef ClientResponse that = <ClientResponse>other
        return _same(self.id, that.id) and self.body == that.body

    def __hash__(self):
        return hash((ClientResponse, self.id, self.body))

    def __repr__(self):
        return f"ClientResponse(id={self.id!r}, body={self.body!r})"

    def __reduce__(self):
        return (ClientResponse, (self.id, self.body))


@cython.final
@cython.freelist(16)
cdef class Refused:
    """Refused(id, error)
--

A line that breaks the protocol, with the error to answer and the id to answer it with."""

    __match_args__ = ("id", "error")

    def __init__(self, *args, **kwargs):
        id, error = bind("Refused", Refused.__match_args__, args, kwargs)
        if id is not None:
            id_json(id)
        if not isinstance(error, ProtocolError):
            raise wrong_type("Refused", "error", "ProtocolError", error)
        if self.error is None:  # immutable: a second __init__ is ignored, as for the twin's
            self.id, self.error = id, error

    def __eq__(self, other):
        if type(other) is not Refused:
            return NotImplemented
        cdef Refused that = <Refused>other
        return _same(self.id, that.id) and self.error == that.error

    def __hash__(self):
        return hash((Refused, self.id, self.error))

    def __repr__(self):
        return f"Refused(id={self.id!r}, error={self.error!r})"

    def __reduce__(self):
        return (Refused, (self.id, self.error))


# Constructors that skip __init__'s argument parsing: the hot path builds results here.

cdef inline Request _request(object id, str method, dict params):
    cdef Request r = Request.__new__(Request)
    r.id = id
    r.method = method
    r.params = params
    return r


cdef inline Notification _notification(str method, dict params):
    cdef Notification n = Notification.__new__(Notification)
    n.method = method
    n.params = params
    return n


cdef inline ClientResponse _response(object id, dict body):
    cdef ClientResponse c = ClientResponse.__new__(ClientResponse)
    c.id = id
    c.body = body
    return c


cdef Refused _refused(object id, ProtocolError error):
    cdef Refused r = Refused.__new__(Refused)
    r.id = id
    r.error = error
    return r


cdef Refused _parse_error(str reason):
    cdef ParseError e = ParseError.__new__(ParseError)
    e.reason = reason
    return _refused(None, e)


cdef Refused _invalid_request(object id, str reason):
    cdef InvalidRequest e = InvalidRequest.__new__(InvalidRequest)
    e.reason = reason
    return _refused(id, e)


cdef Refused _invalid_params(object id, str reason):
    cdef InvalidParams e = InvalidParams.__new__(InvalidParams)
    e.reason = reason
    return _refused(id, e)


def parse(line):
    """Classify one line; never raises for text or bytes, ``TypeError`` for anything else."""
    cdef type kind = type(line)
    if kind is not bytes and kind is not str:
        line = _decodable(line)
    return _parse_decodable(line)


cdef object _parse_decodable(object line):
    """parse() for a str, bytes, bytearray or contiguous memoryview (the stream's entry)."""
    cdef Py_ssize_t stray_at = _stray_position(line)
    if stray_at >= 0:
        return _parse_error(_stray_reason(stray_at))
    # Step 1: decode; failure is Refused(None, ParseError(reason)).
    cdef PyObject* decoded
    if _loads_function is not NULL:
        decoded = _loads_function(_loads_self, <PyObject*>line)
    else:
        decoded = PyObject_CallOneArg(_loads, line)
    if decoded is NULL:
        return _decode_failure(line)
    message = <object>decoded
    Py_DECREF(message)  # <object> took a reference of its own
    return _classify(message)


cdef object _decode_failure(object line):
    """The refusal for the decoder's pending exception; any other exception propagates."""
    try:
        _raise_pending()
    except _DecodeError as error:
        return _parse_error(_decode_reason(line, error))


cdef str _decode_reason(object line, object error):
    """The decoder's message, but route's ("invalid UTF-8 at byte N") for text that is not
    UTF-8: orjson says "surrogates not allowed" for any bad byte, and names no offset."""
    cdef str reason = str(error)
    if reason.startswith(NOT_UTF8):
        return utf8_reason(line) or reason
    return reason


cdef int _raise_pending() except -1:
    return -1  # "except -1": the exception already set is raised in the caller


cdef inline Member _member(PyObject* key) noexcept:
    if not PyUnicode_CheckExact_ptr(key) or not PyUnicode_IS_COMPACT_ASCII(<object>key):
        return M_OTHER
    return member_named(<const unsigned char*>PyUnicode_DATA(<object>key),
                        PyUnicode_GET_LENGTH(<object>key))


cdef inline bint _is_version_2_0(PyObject* value) noexcept:
    if not PyUnicode_CheckExact_ptr(value) or not PyUnicode_IS_COMPACT_ASCII(<object>value):
        return False
    return (PyUnicode_GET_LENGTH(<object>value) == 3
            and memcmp(PyUnicode_DATA(<object>value), b"2.0", 3) == 0)


cdef object _classify(object message):
    """Steps 2 to 9 of the card, on an object as ``orjson.loads`` returns it."""
    if not PyDict_CheckExact(message):
        # Step 2: a JSON array is a batch, which MCP does not have.
        if PyList_CheckExact(message):
            return _invalid_request(None, BATCHING)
        # Step 3: any other non-object.
        return _invalid_request(None, NOT_AN_OBJECT)
    # One pass over the members instead of a hash look-up per rule: keys are unique, so
    # this finds what dict.get finds in the twin, with borrowed references.
    cdef PyObject* found_id = NULL
    cdef PyObject* jsonrpc = NULL
    cdef PyObject* method = NULL
    cdef PyObject* found_params = NULL
    cdef bint has_outcome = False
    cdef Py_ssize_t position = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef Member member
    while PyDict_Next(message, &position, &key, &value):
        member = _member(key)
        if member == M_ID:
            found_id = value
        elif member == M_JSONRPC:
            jsonrpc = value
        elif member == M_METHOD:
            method = value
        elif member == M_PARAMS:
            found_params = value
        elif member == M_RESULT or member == M_ERROR:
            has_outcome = True
    # Step 4: an id, when present, is an exact int or str (bool, float and null are not).
    cdef object id = None
    if found_id is not NULL:
        if not (PyLong_CheckExact_ptr(found_id) or PyUnicode_CheckExact_ptr(found_id)):
            return _invalid_request(None, BAD_ID)
        id = <object>found_id
    # Step 5: jsonrpc is exactly the string "2.0".
    if jsonrpc is NULL or not _is_version_2_0(jsonrpc):
        return _invalid_request(id, BAD_JSONRPC)
    # Step 6: no method member, but a result or an error: a response.
    if method is NULL and has_outcome:
        return _response(id, <dict>message)
    # Step 7: method is a string.
    if method is NULL or not PyUnicode_CheckExact_ptr(method):
        return _invalid_request(id, BAD_METHOD)
    # Step 8: params, when present, is an object; a notification is never answered.
    cdef dict params
    if found_params is not NULL and PyDict_CheckExact_ptr(found_params):
        params = <dict>found_params
    elif found_params is not NULL and id is not None:
        return _invalid_params(id, BAD_PARAMS)
    else:
        params = {}
    # Step 9: with an id a request, without one a notification.
    if id is None:
        return _notification(<str>method, params)
    return _request(id, <str>method, params)


cdef object _decodable(object line):
    """Hand the decoder a type it accepts: base types for subclasses, contiguous views."""
    if isinstance(line, memoryview):
        return line if (<memoryview>line).c_contiguous else (<memoryview>line).tobytes()
    if type(line) is bytearray:
        return line
    if isinstance(line, (bytearray, bytes)):
        return bytes(memoryview(line))  # the buffer, not overridable methods
    if isinstance(line, str):
        return str.__str__(line)
    raise TypeError(
        f"parse() takes str, bytes, bytearray or memoryview, not {type(line).__name__}"
    )


cdef inline bint _json_start(Py_UCS4 code) noexcept:
    # The codes the decoder must judge: those that can start a JSON text, LF (the decoder
    # counts lines), + and . (it words their errors otherwise) and all of non-ASCII.
    return (code == ord('{') or code == ord('[') or code == ord('"') or code == ord('-')
            or (ord('0') <= code <= ord('9')) or code == ord('t') or code == ord('f')
            or code == ord('n') or code == ord('\n') or code == ord('+') or code == ord('.')
            or code >= 0x80)


cdef Py_ssize_t _stray_position(object line) except -2:
    """The offset of a first character that cannot start JSON, or -1 to ask the decoder.

    The one function the twin lacks: a shortcut, not a rule. It answers only where the
    decoder would say exactly the same (ASCII after spaces, tabs and CRs, valid UTF-8), so
    results are identical with or without it; in C it makes a log line 20x cheaper, in
    Python it would cost every valid line more than it saves.
    """
    cdef Py_ssize_t position = -1
    cdef Py_UCS4 code
    cdef Py_buffer buffer
    if type(line) is str:
        for position in range(PyUnicode_GET_LENGTH(line)):
            code = PyUnicode_READ_CHAR(line, position)
            if code == ord(' ') or code == ord('\t') or code == ord('\r'):
                continue
            if _json_start(code):
                return -1
            break
        else:
            return -1
    elif type(line) is bytes:
        position = _stray_byte_position(<const unsigned char*>PyBytes_AS_STRING(line),
                                        PyBytes_GET_SIZE(line))
    else:  # a bytearray or a contiguous memoryview (_decodable saw to that)
        PyObject_GetBuffer(line, &buffer, PyBUF_SIMPLE)
        try:
            position = _stray_byte_position(<const unsigned char*>buffer.buf, buffer.len)
        finally:
            PyBuffer_Release(&buffer)
    if position < 0 or not _is_utf8(line):
        return -1
    return position


cdef str _stray_reason(Py_ssize_t position):
    if position < len(_STRAY_REASONS):
        return _STRAY_REASONS[position]
    return UNEXPECTED_CHARACTER.format(column=position + 1, char=position)


cdef bint _is_utf8(object line) except -1:
    """Whether the text is valid UTF-8: the decoder checks that first, in its own words."""
    if type(line) is memoryview:
        line = line.tobytes()  # only stray lines get here
    if line.isascii():
        return True
    try:
        line.encode() if type(line) is str else line.decode()
    except UnicodeError:
        return False
    return True


cdef inline Py_ssize_t _stray_byte_position(const unsigned char* data, Py_ssize_t size) noexcept:
    cdef Py_ssize_t position
    cdef unsigned char code
    for position in range(size):
        code = data[position]
        if code == ord(' ') or code == ord('\t') or code == ord('\r'):
            continue
        return -1 if _json_start(code) else position
    return -1


def id_json(id):
    """The JSON value to echo for an id: the exact ``int`` or ``str`` (a ``bool`` is none)."""
    if PyLong_CheckExact(id) or PyUnicode_CheckExact(id):
        return id
    raise TypeError(f"a request id is an int or a str, not {type(id).__name__}")


def error_response(refused):
    """The compact JSON-RPC error response for a refusal; ``"id": null`` when it has none."""
    if type(refused) is not Refused:
        raise TypeError(f"error_response() takes a Refused, not {type(refused).__name__}")
    cdef Refused r = <Refused>refused
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": None if r.id is None else id_json(r.id),
            "error": r.error.to_json(),
        }
    )
