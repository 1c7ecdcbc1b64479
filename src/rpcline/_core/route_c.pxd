# The route core's C-level interface: the Route type for http_c.pyx, and what
# stream_c.pyx and sse_c.pyx need for over-long lines.

cimport cython
from cpython.object cimport PyObject

from rpcline._core.scan_c cimport Scan, Span

# A route's kind, and its name (KINDS in the twin's order).
cdef enum Kind:
    REQUEST, NOTIFICATION, RESPONSE, REFUSED


# No cdef methods: a pooled Route (route_c.pyx) has no vtable pointer to restore.
@cython.final
@cython.no_gc
cdef class Route:
    # Owned references, NULL for None: setting object fields would first store None and
    # then release it, a chain of writes to None's reference count on every route.
    cdef Kind _kind
    cdef PyObject* _id_value
    cdef PyObject* _method
    cdef PyObject* _protocol_error
    cdef PyObject* _line  # bytes or str, as given (a copy for mutable buffers); NULL: none
    cdef Span _id
    cdef Span _method_span
    cdef Span _params
    cdef Span _result
    cdef Span _error
    cdef Py_ssize_t _ids


cdef Route _routed(object line, Scan* s)
cdef object _refusal(object error, object id)
cdef object _prefix_refusal(object error, const unsigned char* data, Py_ssize_t size, bint cut)
