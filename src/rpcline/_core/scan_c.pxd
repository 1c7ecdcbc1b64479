# The scanner's C-level interface (scan_c.pyx), cimported by route, http, streams and SSE.

from cpython.long cimport PyLong_FromLong
from libc.string cimport memcmp

ctypedef const unsigned char* cursor

cdef enum:
    MAX_DEPTH = 1024  # orjson's nesting limit, the twin's MAX_DEPTH

# The reasons a parse error names, by error kind; ERROR_TEXTS in the twin, same order.
cdef enum Error:
    E_NONE, E_END, E_CHARACTER, E_LITERAL, E_CONTROL, E_ESCAPE, E_SURROGATE, E_UTF8,
    E_LEADING_ZERO, E_INFINITE, E_DEPTH, E_TRAILING, E_MEMORY

# What a scanned value was; the twin's V_* constants.
cdef enum Value:
    V_STRING, V_INTEGER, V_FLOAT, V_LITERAL, V_OBJECT, V_ARRAY

# The top-level member names the rules read; the twin's M_* constants.
# A string's content, as far as decoding it goes.
cdef enum:
    S_ESCAPED = 1
    S_NON_ASCII = 2


cdef struct Span:
    Py_ssize_t start
    Py_ssize_t end


# The members inside params that rpcline.http reads (``Scan.nested``): name, uri,
# arguments and _meta in params, the protocol version and client capabilities in _meta.
# The twin's N_* constants.
cdef enum Inner:
    N_NAME, N_URI, N_ARGUMENTS, N_META, N_VERSION, N_CAPABILITIES, N_COUNT, N_OTHER

cdef enum:
    INNER_NAME_BYTES = 48  # an escaped inner name is decoded up to this many bytes


cdef struct Noted:
    Span span  # start -1 when absent
    Value value
    int flags


cdef struct Scan:
    cursor base
    Py_ssize_t size
    Error error
    Py_ssize_t error_at
    # The last scanned value: its kind, and for a string whether it needs decoding.
    Value value
    int string_flags
    # The top-level members, last one winning (start -1 when absent).
    Value top
    Span id
    Value id_value
    int id_flags
    Py_ssize_t ids  # how many id members the object has
    Span jsonrpc
    Value jsonrpc_value
    int jsonrpc_flags
    Span method
    Value method_value
    int method_flags
    Span params
    Value params_value
    Span result
    Span error_member
    # with_id's second pass on a line with several ids: every id value span, in order.
    bint collect
    Span* all_ids
    Py_ssize_t all_ids_capacity
    # rpcline.http's pass: the inner members too (``_params``); set before every scan.
    bint nested
    Noted inner[N_COUNT]


cdef void _reset(Scan* s) noexcept
cdef bint _scan(Scan* s) noexcept
cdef str _reason(Scan* s)
cdef object _text(Scan* s, Span span, int flags)
cdef object _method_name(Scan* s)
cdef object _long_integer(Scan* s, Span span)
cdef bint _escaped_version_2_0(Scan* s) except -1


# Inline in the modules that cimport them (route above all): a call into scan_c goes
# through a pointer, and these run on every routed message. The rare cases are calls.

cdef inline object _integer(Scan* s, Span span):
    """The int orjson decodes a top-level integer to, or None where it decodes a float."""
    cdef cursor p = s.base + span.start
    cdef cursor end = s.base + span.end
    cdef bint negative = p[0] == 0x2D
    cdef long value = 0
    if end - p - negative > 9:
        return _long_integer(s, span)
    # The usual id: below 10**9, so no overflow to test for, and below 2**30, one CPython
    # digit, which PyLong_FromLong makes without counting digits.
    p += negative
    while p < end:
        value = value * 10 + (p[0] - 0x30)
        p += 1
    return PyLong_FromLong(-value if negative else value)


cdef inline bint _is_version_2_0(Scan* s) except -1:
    """Whether the top-level jsonrpc member (present) is the string "2.0"."""
    if s.jsonrpc_value != V_STRING:
        return False
    if s.jsonrpc_flags == 0:
        return (s.jsonrpc.end - s.jsonrpc.start == 5
                and memcmp(s.base + s.jsonrpc.start, b'"2.0"', 5) == 0)
    return _escaped_version_2_0(s)
cdef object _prefix_id(const unsigned char* data, Py_ssize_t size)
cdef object _prefix_scan(Scan* s, const unsigned char* data, Py_ssize_t size, bint cut)
