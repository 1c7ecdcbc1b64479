# The core's C-level interface, cimported by stream_c.pyx so that streams classify
# lines without going through Python calls.

cimport cython
from libc.string cimport memcmp


cdef class ProtocolError:
    cdef readonly str reason


@cython.final
cdef class ParseError(ProtocolError):
    pass


@cython.final
cdef class InvalidRequest(ProtocolError):
    pass


@cython.final
cdef class InvalidParams(ProtocolError):
    pass


@cython.final
cdef class Request:
    cdef readonly object id
    cdef readonly str method
    cdef readonly dict params


@cython.final
cdef class Notification:
    cdef readonly str method
    cdef readonly dict params


@cython.final
cdef class ClientResponse:
    cdef readonly object id
    cdef readonly dict body


@cython.final
cdef class Refused:
    cdef readonly object id
    cdef readonly ProtocolError error


cdef object _parse_decodable(object line)
cdef Refused _parse_error(str reason)


# The top-level members the rules read, named by their UTF-8 bytes: shared by parse (on
# decoded keys) and route (on raw member names).
cdef enum Member:
    M_OTHER, M_ID, M_JSONRPC, M_METHOD, M_PARAMS, M_RESULT, M_ERROR


cdef inline Member member_named(const unsigned char* name, Py_ssize_t size) noexcept:
    if size == 2:
        return M_ID if name[0] == 0x69 and name[1] == 0x64 else M_OTHER  # "id"
    if size == 6:
        if memcmp(name, b"method", 6) == 0:
            return M_METHOD
        if memcmp(name, b"params", 6) == 0:
            return M_PARAMS
        return M_RESULT if memcmp(name, b"result", 6) == 0 else M_OTHER
    if size == 7:
        return M_JSONRPC if memcmp(name, b"jsonrpc", 7) == 0 else M_OTHER
    if size == 5:
        return M_ERROR if memcmp(name, b"error", 5) == 0 else M_OTHER
    return M_OTHER
