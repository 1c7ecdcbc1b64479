# The core's C-level interface, cimported by _stream_c.pyx so that streams classify
# lines without going through Python calls.

cimport cython


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
