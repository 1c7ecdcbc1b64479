# cython: language_level=3, binding=False
"""The validating scanner shared by route() and http.check_request(); Cython core.

``scan_py.py`` is the twin and documents the behaviour; this module mirrors it function
by function, with the same scanner states, the same error offsets and the same reasons.
It accepts exactly what ``orjson.loads`` accepts and notes where the members the rules
read are: the top-level ``id``, ``jsonrpc``, ``method``, ``params``, ``result`` and
``error``, and, when ``Scan.nested`` is set, ``name``, ``uri``, ``arguments`` and
``_meta`` inside ``params`` and the protocol version and client capabilities inside
``_meta``. String bodies, where large tool results spend their bytes, are skipped 16 and
then 64 bytes per step with SSE2, 128 with AVX2 where the CPU has it (eight without: one
word, four bit tricks for quote, backslash, control character and non-ASCII byte, and a
count of trailing zeros); UTF-8 is validated only where a non-ASCII byte appears. The C
helpers are in ``scan.h``. A line's first cache lines are prefetched before the scan.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.long cimport PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH
from libc.limits cimport LLONG_MIN
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy

from rpcline._core.message_c cimport (
    M_ERROR, M_ID, M_JSONRPC, M_METHOD, M_OTHER, M_PARAMS, M_RESULT, Member, member_named
)
from rpcline._core.shared import (
    CAPABILITIES_KEY as _CAPABILITIES_KEY_TEXT,
    CUT_TOLERANCE as _CUT_TOLERANCE,
    INNER_NAME_BYTES as _INNER_NAME_BYTES,
    ERROR_TEXTS,
    INFINITY_THRESHOLD,
    MAX_DEPTH as _MAX_DEPTH,
    UNEXPECTED_REASONS,
    VERSION_KEY as _VERSION_KEY_TEXT,
)

cdef extern from "Python.h":
    void* PyUnicode_DATA(object)
    object PyUnicode_New(Py_ssize_t, Py_UCS4)

cdef extern from "scan.h":
    uint64_t _load64 "rpcline_load64"(const unsigned char*) noexcept nogil
    int _ctz64 "rpcline_ctz64"(uint64_t) noexcept nogil
    void _prefetch "rpcline_prefetch"(const unsigned char*, Py_ssize_t) noexcept nogil
    const uint64_t ONES "RPCLINE_ONES"
    const uint64_t HIGHS "RPCLINE_HIGHS"
    const uint64_t QUOTES "RPCLINE_QUOTES"
    const uint64_t BACKSLASHES "RPCLINE_BACKSLASHES"
    const uint64_t SPACES "RPCLINE_SPACES"
    const uint64_t WHITESPACE "RPCLINE_WHITESPACE"
    const bint SIMD "RPCLINE_SIMD"
    const int _OPTIMIZED "RPCLINE_OPTIMIZED"
    unsigned int _special16 "rpcline_special16"(const unsigned char*) noexcept nogil
    int _utf8_block "rpcline_utf8_block"(const unsigned char*) noexcept nogil

cdef extern from "scan_long.h":
    const int LONG_ESCAPED "RPCLINE_ESCAPED"
    const int LONG_NON_ASCII "RPCLINE_NON_ASCII"
    const int PATH_NONE "RPCLINE_PATH_NONE"
    const int PATH_SSE2 "RPCLINE_PATH_SSE2"
    const int PATH_AVX2 "RPCLINE_PATH_AVX2"
    int _long_path "rpcline_long_path"
    bint _avx2_supported "rpcline_avx2_supported"() noexcept nogil
    const unsigned char* _long_string "rpcline_long_string"(
        const unsigned char*, const unsigned char*, int*) noexcept nogil
    const unsigned char* _plain_blocks "rpcline_plain_blocks"(
        const unsigned char*, const unsigned char*) noexcept nogil

assert LONG_ESCAPED == S_ESCAPED and LONG_NON_ASCII == S_NON_ASCII

# The block scans of long strings (plain text, and text with escapes or non-ASCII bytes)
# this build can run on this CPU, fastest last; the fastest is used. Tests and benchmarks
# switch with use_simd_path().
cdef dict _PATHS = {"none": PATH_NONE, "sse2": PATH_SSE2, "avx2": PATH_AVX2}
SIMD_PATHS = (("sse2", "avx2") if _avx2_supported() else ("sse2",)) if SIMD else ("none",)


def use_simd_path(name: str) -> None:
    """Scan long strings with ``name``, one of ``SIMD_PATHS``."""
    global _long_path
    if name not in SIMD_PATHS:
        raise ValueError(f"{name!r} is not one of {SIMD_PATHS}")
    _long_path = _PATHS[name]


def floor_pass(bytes line):
    """The floor under any classifier of ``line``, for ``benchmarks/guard.py``: a bare C
    call and one memchr pass over its bytes (for a byte no JSON line holds). Called as
    ``route`` is (vectorcall, keywords allowed, as ``route(line=...)`` must be)."""
    return memchr(PyBytes_AS_STRING(line), 0x01, PyBytes_GET_SIZE(line)) != NULL


def simd_path() -> str:
    """The block scan of long strings in use."""
    return next(name for name, path in _PATHS.items() if path == _long_path)


# True when the compiler optimised this build (False: a debug or mis-flagged build that no
# benchmark should measure; None: the compiler does not say, MSVC).
OPTIMIZED = None if _OPTIMIZED < 0 else bool(_OPTIMIZED)

use_simd_path(SIMD_PATHS[len(SIMD_PATHS) - 1])  # the fastest (no wraparound here)
assert MAX_DEPTH == _MAX_DEPTH and INNER_NAME_BYTES == _INNER_NAME_BYTES

# Bytes a string body cannot skip: quote, backslash, control characters, non-ASCII.
cdef unsigned char SPECIAL[256]
cdef int _code
for _code in range(256):
    SPECIAL[_code] = _code == 0x22 or _code == 0x5C or _code < 0x20 or _code >= 0x80
# JSON whitespace: space, tab, LF, CR.
cdef unsigned char IS_WHITESPACE[256]
for _code in range(256):
    IS_WHITESPACE[_code] = _code <= 32 and (WHITESPACE >> _code) & 1
# The letters of the one-letter escapes: " \ / b f n r t.
cdef unsigned char SIMPLE_ESCAPE[256]
for _code in range(256):
    SIMPLE_ESCAPE[_code] = _code in b'"\\/bfnrt'
# The 309 digits of 2**1024 - 2**970, the least decimal that rounds to infinity as a
# double (the tie rounds to even, which is infinity); an 8-byte-aligned copy.
cdef bytes _THRESHOLD = INFINITY_THRESHOLD
cdef const char* THRESHOLD = _THRESHOLD
cdef Py_ssize_t THRESHOLD_DIGITS = len(INFINITY_THRESHOLD)

cdef Py_ssize_t CUT_TOLERANCE = _CUT_TOLERANCE
# The two _meta members of MCP 2026-07-28 that rpcline.http checks, as the body spells them.
cdef bytes _VERSION_KEY = _VERSION_KEY_TEXT.encode()
cdef bytes _CAPABILITIES_KEY = _CAPABILITIES_KEY_TEXT.encode()
cdef const char* VERSION_KEY = _VERSION_KEY
cdef const char* CAPABILITIES_KEY = _CAPABILITIES_KEY
cdef Py_ssize_t VERSION_KEY_SIZE = len(_VERSION_KEY)
cdef Py_ssize_t CAPABILITIES_KEY_SIZE = len(_CAPABILITIES_KEY)
cdef tuple _ERROR_TEXTS = ERROR_TEXTS
cdef tuple _UNEXPECTED = UNEXPECTED_REASONS


# --- the scanner ------------------------------------------------------------------------
#
# Every line the scanner reads is followed by a NUL byte: CPython ends the data of bytes,
# of compact ASCII str and of a str's UTF-8 form with one. A NUL is no JSON token, so
# loops stop at the end without counting; ``p == end`` is only asked to word the error
# (end of data, or a NUL inside the line), exactly as the twin words it.


cdef inline cursor _fail(Scan* s, Error error, cursor at) noexcept:
    s.error = error
    s.error_at = at - s.base
    return NULL


cdef inline cursor _unexpected(Scan* s, cursor p, cursor end) noexcept:
    """The error for a byte that cannot be where it is: the end, or an unexpected one."""
    return _fail(s, E_END if p == end else E_CHARACTER, p)


cdef inline cursor _whitespace(cursor p) noexcept:
    # One load and test per byte; compact JSON, the usual kind, has none to skip.
    while IS_WHITESPACE[p[0]]:  # the NUL after the line stops it
        p += 1
    return p


cdef inline uint64_t _special(uint64_t word) noexcept:
    """The high bit of every byte that stops a string body (exact from the lowest one up).

    A zero byte of ``word ^ QUOTES`` is a quote, of ``word ^ BACKSLASHES`` a backslash;
    ``x - ONES & ~x`` sets the high bit of zero bytes, ``word - SPACES & ~word`` that of
    bytes below 0x20, and ``word`` itself that of non-ASCII bytes. A borrow can only flag
    a byte above one that is flagged already, so the lowest flag is always a true one.
    """
    cdef uint64_t quotes = word ^ QUOTES
    cdef uint64_t backslashes = word ^ BACKSLASHES
    return (((quotes - ONES) & ~quotes) | ((backslashes - ONES) & ~backslashes)
            | ((word - SPACES) & ~word) | word) & HIGHS


cdef inline cursor _plain(cursor p, cursor end) noexcept:
    """The first byte from ``p`` that stops a string body, or ``end``."""
    cdef uint64_t found, more
    if SIMD:  # a compile-time constant: one of the two paths is compiled
        p = _plain_blocks(p, end)  # the stop, or the last incomplete block (read below)
    else:
        if end - p >= 8:  # member names and short values end within the first word
            found = _special(_load64(p))
            if found:
                return p + (_ctz64(found) >> 3)
            p += 8
        while end - p >= 16:  # two words a step; most strings end within the first two
            found = _special(_load64(p))
            more = _special(_load64(p + 8))
            if found | more:
                return p + ((_ctz64(found) >> 3) if found else 8 + (_ctz64(more) >> 3))
            p += 16
    if end - p >= 8:
        found = _special(_load64(p))
        if found:
            return p + (_ctz64(found) >> 3)
        p += 8
    while not SPECIAL[p[0]]:  # the NUL after the line is special
        p += 1
    return p


cdef inline int _hex4(cursor p) noexcept:
    """The value of four hex digits, or -1."""
    cdef int value = 0
    cdef int i, digit
    cdef unsigned char c
    for i in range(4):
        c = p[i]
        if 0x30 <= c <= 0x39:
            digit = c - 0x30
        elif 0x61 <= c <= 0x66:
            digit = c - 0x61 + 10
        elif 0x41 <= c <= 0x46:
            digit = c - 0x41 + 10
        else:
            return -1
        value = value * 16 + digit
    return value


cdef inline cursor _escape(Scan* s, cursor p, cursor end) noexcept:
    """Validate the escape at ``p`` (a backslash); the byte after it, or NULL.

    The one-letter escapes (``\\n`` in text) are taken inline; ``\\u`` and errors are not.
    """
    if SIMPLE_ESCAPE[p[1]]:  # p[1] is at most the NUL after the line
        return p + 2
    return _unicode_escape(s, p, end)


cdef cursor _unicode_escape(Scan* s, cursor p, cursor end) noexcept:
    """``_escape`` for ``\\uXXXX`` and for what is no escape."""
    if end - p < 2:
        return _fail(s, E_END, end)
    cdef unsigned char c = p[1]
    if c != 0x75:  # u
        return _fail(s, E_ESCAPE, p)
    if end - p < 6:
        return _fail(s, E_END, end)
    cdef int unit = _hex4(p + 2)
    if unit < 0:
        return _fail(s, E_ESCAPE, p)
    if 0xDC00 <= unit <= 0xDFFF:
        return _fail(s, E_SURROGATE, p)
    if 0xD800 <= unit <= 0xDBFF:  # a high surrogate must be followed by a low one
        if end - p < 12 or p[6] != 0x5C or p[7] != 0x75:
            return _fail(s, E_SURROGATE, p)
        unit = _hex4(p + 8)
        if not 0xDC00 <= unit <= 0xDFFF:
            return _fail(s, E_SURROGATE, p)
        return p + 12
    return p + 6


cdef cursor _utf8(Scan* s, cursor p, cursor end) noexcept:
    """Validate the UTF-8 sequence at ``p`` (a non-ASCII byte); the byte after it, or NULL.

    Overlong forms, surrogates (ED A0..BF) and code points above U+10FFFF are invalid, as
    for Python's strict decoder and for orjson.
    """
    cdef unsigned char lead = p[0]
    cdef Py_ssize_t length
    cdef unsigned char low = 0x80, high = 0xBF
    if lead < 0xC2:
        return _fail(s, E_UTF8, p)
    elif lead < 0xE0:
        length = 2
    elif lead < 0xF0:
        length = 3
        if lead == 0xE0:
            low = 0xA0
        elif lead == 0xED:
            high = 0x9F
    elif lead < 0xF5:
        length = 4
        if lead == 0xF0:
            low = 0x90
        elif lead == 0xF4:
            high = 0x8F
    else:
        return _fail(s, E_UTF8, p)
    if end - p < length or not low <= p[1] <= high:
        return _fail(s, E_UTF8, p)
    if length > 2 and not 0x80 <= p[2] <= 0xBF:
        return _fail(s, E_UTF8, p)
    if length > 3 and not 0x80 <= p[3] <= 0xBF:
        return _fail(s, E_UTF8, p)
    return p + length


cdef inline cursor _string(Scan* s, cursor p, cursor end) noexcept:
    """Validate the string whose opening quote is at ``p``; the byte after it, or NULL.

    Sets ``s.string_flags`` (escaped, non-ASCII) for the decoding of top-level values.
    Inline only for the usual string, plain ASCII closed within 16 bytes (or 8); any
    other goes on from the first byte that block did not clear.
    """
    cdef unsigned int mask
    cdef uint64_t found
    cdef cursor stop
    if SIMD and end - p >= 17:
        mask = _special16(p + 1)
        if mask == 0:  # 16 plain bytes: a longer string
            return _string_body(s, p, p + 17, end)
        stop = p + 1 + _ctz64(mask)
        if stop[0] == 0x22:
            s.string_flags = 0
            return stop + 1
        return _string_body(s, p, stop, end)
    elif not SIMD and end - p >= 9:
        found = _special(_load64(p + 1))
        if found and p[1 + (_ctz64(found) >> 3)] == 0x22:
            s.string_flags = 0
            return p + 2 + (_ctz64(found) >> 3)
    return _string_body(s, p, p + 1, end)


cdef inline cursor _key(Scan* s, cursor p, cursor end) noexcept:
    """``_string`` for a member name: with SSE2 its first 16 bytes in one block test, as
    for values; else a byte loop.

    A byte loop lets the predictor, which learns where recurring names end, read on
    speculatively, but it costs about four instructions a byte against one block test
    for the whole name (most names are under 16 bytes): 1,025 of check_request's 7,158
    instructions a request went to names read a byte at a time, and instruction counts
    are what the guard holds. A name that is long or holds an escape or a non-ASCII byte
    goes on to ``_string_body`` from the first byte the block did not clear.
    """
    if SIMD:
        return _string(s, p, end)
    cdef cursor q = p + 1
    while not SPECIAL[q[0]]:  # the NUL after the line is special
        q += 1
    if q[0] == 0x22:
        s.string_flags = 0
        return q + 1
    return _string_body(s, p, q, end)


cdef cursor _string_body(Scan* s, cursor start, cursor p, cursor end) noexcept:
    """``_string`` for any other string: long, escaped, non-ASCII, near the end or invalid.

    ``start`` is the opening quote, and the bytes between it and ``p`` are plain ASCII.
    With SSE2, a string that has run 64 bytes and holds an escape or non-ASCII text is
    checked 64 bytes a step from there (``scan_long.h``) while 64 bytes of the line are
    left, its end with UTF-8 validated 16 bytes at a time. A block found invalid sends the string to the exact scan
    (``_string_rest``), which finds and words the first error as the twin does: the
    block checks can only cost time, never change an answer.
    """
    cdef int advance
    cdef int flags = 0
    if SIMD:
        while True:
            p = _plain_blocks(p, end)
            if p - start >= 64 and end - p >= 64 and p[0] != 0x22:
                # Long text with escapes or non-ASCII: 64 bytes a step, no branch for each
                # (the UTF-8 check reads the three bytes before a block, which the 64
                # bytes already passed hold). Only a string that has run 64 bytes: most
                # strings are short, and ending one costs a block less in 16-byte steps.
                p = _long_string(p, end, &flags)
                if p == NULL:
                    return _string_rest(s, _plain(start + 1, end), end, 0)
                if p[0] != 0x22 and p[0] != 0x5C:
                    continue  # fewer than 64 bytes left: the 16-byte steps
            if end - p < 16:
                break
            if p[0] == 0x22:
                s.string_flags = flags
                return p + 1
            if p[0] == 0x5C:
                flags |= S_ESCAPED
                p = _escape(s, p, end)
                if p == NULL:
                    return NULL
            elif p[0] < 0x20:
                return _fail(s, E_CONTROL, p)
            else:  # non-ASCII
                advance = _utf8_block(p)
                if advance < 0:
                    return _string_rest(s, _plain(start + 1, end), end, 0)
                flags |= S_NON_ASCII
                p += advance
    return _string_rest(s, _plain(p, end), end, flags)


cdef cursor _string_rest(Scan* s, cursor p, cursor end, int flags) noexcept:
    """The rest of a string from its first escape, control character or non-ASCII byte
    (or its end), one special byte at a time."""
    cdef unsigned char c
    while True:
        c = p[0]
        if c == 0x22:
            s.string_flags = flags
            return p + 1
        if c == 0x5C:
            flags |= S_ESCAPED
            p = _escape(s, p, end)
        elif c < 0x20:
            return _fail(s, E_END, end) if p == end else _fail(s, E_CONTROL, p)
        else:
            flags |= S_NON_ASCII
            p = _utf8(s, p, end)
            while p != NULL and p[0] >= 0x80:  # runs of non-Latin text
                p = _utf8(s, p, end)
        if p == NULL:
            return NULL
        p = _plain(p, end)


cdef inline cursor _digits(cursor p) noexcept:
    while 0x30 <= p[0] <= 0x39:
        p += 1
    return p


cdef inline cursor _number(Scan* s, cursor p, cursor end) noexcept:
    """Validate the number at ``p``; the byte after it, or NULL. Sets ``s.value``.

    Inline for the usual number, a positive integer (ids, counts, sizes) that cannot be
    infinite; any other goes to ``_any_number``, which gives the same answer for this one.
    """
    cdef cursor q
    if 0x31 <= p[0] <= 0x39:
        q = _digits(p + 1)
        if q[0] != 0x2E and q[0] | 0x20 != 0x65 and q - p < THRESHOLD_DIGITS:  # . e E
            s.value = V_INTEGER
            return q
    return _any_number(s, p, end)


cdef cursor _any_number(Scan* s, cursor p, cursor end) noexcept:
    """``_number`` for any number.

    orjson refuses a number that is infinite as a double: only one with an exponent, or
    with 309 or more integer digits, can be, and only that one is looked at closely.
    """
    cdef cursor start = p
    if p[0] == 0x2D:  # -
        p += 1
    cdef cursor integer = p
    if p[0] == 0x30:
        p += 1
        if 0x30 <= p[0] <= 0x39:
            return _fail(s, E_LEADING_ZERO, p - 1)
    elif 0x31 <= p[0] <= 0x39:
        p = _digits(p + 1)
    else:
        return _unexpected(s, p, end)
    cdef cursor integer_end = p
    cdef cursor fraction = p
    cdef cursor fraction_end = p
    cdef cursor exponent = NULL
    s.value = V_INTEGER
    if p[0] == 0x2E:  # .
        s.value = V_FLOAT
        fraction = p + 1
        p = fraction
        if not 0x30 <= p[0] <= 0x39:
            return _unexpected(s, p, end)
        p = _digits(p)
        fraction_end = p
    if p[0] == 0x65 or p[0] == 0x45:  # e E
        s.value = V_FLOAT
        p += 1
        if p[0] == 0x2B or p[0] == 0x2D:
            p += 1
        exponent = p
        if not 0x30 <= p[0] <= 0x39:
            return _unexpected(s, p, end)
        p = _digits(p)
    if (exponent != NULL or integer_end - integer >= THRESHOLD_DIGITS) and _is_infinite(
        integer, integer_end, fraction, fraction_end, exponent, p
    ):
        return _fail(s, E_INFINITE, start)
    return p


cdef bint _is_infinite(cursor integer, cursor integer_end, cursor fraction,
                       cursor fraction_end, cursor exponent, cursor end) noexcept:
    """Whether the number rounds to infinity as a double (decided exactly, on digits).

    With its significant digits written 0.d1d2d3... x 10**power (d1 not zero), it does
    when power > 309, never when power < 309, and at 309 when d1d2d3... is at least the
    threshold's digits.
    """
    cdef int64_t power = 0
    cdef int64_t written = 0
    cdef bint negative = False
    cdef cursor p
    if exponent != NULL:
        p = exponent
        if (p - 1)[0] == 0x2D:  # the exponent's sign
            negative = True
        while p < end:  # saturates: no line holds 10**15 digits to offset it
            if written < 1000000000000000LL:
                written = written * 10 + (p[0] - 0x30)
            p += 1
    cdef cursor first  # the first significant digit
    if integer[0] != 0x30:
        first = integer
        power = integer_end - integer
    else:
        first = fraction
        while first < fraction_end and first[0] == 0x30:
            first += 1
        if first == fraction_end:
            return False  # zero
        power = -(first - fraction)
    power += -written if negative else written
    if power != THRESHOLD_DIGITS:
        return power > THRESHOLD_DIGITS
    cdef Py_ssize_t i
    cdef unsigned char digit
    p = first  # the digits run on from the integer part into the fraction
    for i in range(THRESHOLD_DIGITS):
        if p == integer_end:
            p = fraction
        if p < fraction_end:
            digit = p[0]
            p += 1
        else:
            digit = 0x30
        if digit != THRESHOLD[i]:
            return digit > THRESHOLD[i]
    return True


cdef cursor _literal(Scan* s, cursor p, cursor end) noexcept:
    # Fixed-size comparisons, which the compiler turns into one load and compare each.
    cdef Py_ssize_t length = 5 if p[0] == 0x66 else 4
    cdef bint matches
    if end - p < length:
        return _fail(s, E_LITERAL, p)
    if p[0] == 0x74:
        matches = memcmp(p, b"true", 4) == 0
    elif p[0] == 0x6E:
        matches = memcmp(p, b"null", 4) == 0
    else:
        matches = memcmp(p, b"false", 5) == 0
    if not matches:
        return _fail(s, E_LITERAL, p)
    s.value = V_LITERAL
    return p + length


cdef inline cursor _value(Scan* s, cursor p, cursor end, int depth) noexcept:
    """Validate the value at ``p`` inside ``depth`` containers; the byte after it, or NULL.

    Sets ``s.value`` (and ``s.string_flags`` for a string).
    """
    cdef unsigned char c = p[0]
    if c == 0x22:
        s.value = V_STRING
        return _string(s, p, end)
    if c == 0x7B or c == 0x5B:
        p = _container(s, p, end, depth)
        s.value = V_OBJECT if c == 0x7B else V_ARRAY
        return p
    if c == 0x2D or 0x30 <= c <= 0x39:
        return _number(s, p, end)
    if c == 0x74 or c == 0x66 or c == 0x6E:
        return _literal(s, p, end)
    return _unexpected(s, p, end)


cdef inline cursor _token(cursor p, unsigned char expected) noexcept:
    """``p`` when ``expected`` is there, else the first byte after whitespace.

    Compact JSON, the usual kind, has no whitespace: the byte the grammar expects is
    tested first, and whitespace only where it is not found.
    """
    if p[0] == expected:
        return p
    return _whitespace(p)


cdef inline cursor _name(Scan* s, cursor p, cursor end) noexcept:
    """Validate a member name and its colon at ``p`` (or after whitespace); the byte after
    the colon, or NULL. Whitespace before the value is left to ``_container``."""
    p = _token(p, 0x22)
    if p[0] != 0x22:
        return _unexpected(s, p, end)
    p = _key(s, p, end)
    if p == NULL:
        return NULL
    p = _token(p, 0x3A)
    if p[0] != 0x3A:
        return _unexpected(s, p, end)
    return p + 1


cdef cursor _container(Scan* s, cursor p, cursor end, int outer) noexcept:
    """Validate the object or array at ``p`` inside ``outer`` containers, without recursion.

    A byte per level holds its closing bracket; a level beyond MAX_DEPTH is refused
    where its bracket opens, as orjson does. Each turn of the outer loop reads one value;
    the inner loop reads what may follow a value: a comma (and the next member's name)
    or closing brackets.
    """
    cdef unsigned char closers[MAX_DEPTH + 1]  # by level, 1 to MAX_DEPTH - outer
    cdef int depth = outer
    cdef unsigned char c
    cdef unsigned char close = 0  # the innermost open level's bracket: 0x7D } or 0x5D ]
    while True:  # p at a value, or at whitespace before it
        c = p[0]
        if c == 0x22:
            p = _string(s, p, end)
        elif c == 0x7B or c == 0x5B:
            depth += 1
            if depth > MAX_DEPTH:
                return _fail(s, E_DEPTH, p)
            close = c + 2  # { 0x7B to } 0x7D, [ 0x5B to ] 0x5D
            closers[depth - outer] = close
            if close == 0x7D:
                p = _token(p + 1, 0x22)
                if p[0] != 0x7D:
                    p = _name(s, p, end)
                    if p == NULL:
                        return NULL
                    continue
            else:
                p = _whitespace(p + 1)
                if p[0] != 0x5D:
                    continue
            p += 1  # an empty container: closed at once
            depth -= 1
            if depth == outer:
                return p
            close = closers[depth - outer]
        elif c == 0x2D or 0x30 <= c <= 0x39:
            p = _number(s, p, end)
        elif c == 0x74 or c == 0x66 or c == 0x6E:
            p = _literal(s, p, end)
        elif IS_WHITESPACE[c]:
            p = _whitespace(p)
            continue
        else:
            return _unexpected(s, p, end)
        if p == NULL:
            return NULL
        while True:  # p after a value
            c = p[0]
            if c == 0x2C:
                p += 1
                if close == 0x7D:
                    p = _name(s, p, end)
                    if p == NULL:
                        return NULL
                break
            if c != close:
                if IS_WHITESPACE[c]:
                    p = _whitespace(p)
                    continue
                return _unexpected(s, p, end)
            p += 1
            depth -= 1
            if depth == outer:
                return p
            close = closers[depth - outer]


cdef inline Py_ssize_t _short_name(cursor p, cursor end, unsigned char* buffer,
                                   Py_ssize_t capacity) noexcept:
    """An escaped name decoded into ``buffer``; -1 when it is longer than ``capacity``
    bytes or escapes a character beyond ASCII (no name the scanner looks for does)."""
    cdef Py_ssize_t size = 0
    cdef int unit
    while p < end:
        if size == capacity:
            return -1
        if p[0] != 0x5C:
            buffer[size] = p[0]
            p += 1
        elif p[1] == 0x75:
            unit = _hex4(p + 2)
            if unit >= 0x80:
                return -1
            buffer[size] = <unsigned char>unit
            p += 6
        else:
            buffer[size] = _unescaped(p[1])
            p += 2
        size += 1
    return size


cdef inline Member _member(Scan* s, cursor name, cursor name_end) noexcept:
    """Which member a top-level name (between its quotes) is; escapes are decoded."""
    cdef unsigned char buffer[8]
    cdef Py_ssize_t size
    if s.string_flags & S_ESCAPED:
        # Names the rules read are short ASCII: decode up to 8 bytes, else it is another.
        size = _short_name(name, name_end, buffer, 8)
        return M_OTHER if size < 0 else member_named(buffer, size)
    return member_named(name, name_end - name)


cdef inline unsigned char _unescaped(unsigned char c) noexcept:
    if c == 0x62:
        return 0x08
    if c == 0x66:
        return 0x0C
    if c == 0x6E:
        return 0x0A
    if c == 0x72:
        return 0x0D
    if c == 0x74:
        return 0x09
    return c  # " \ /


cdef cursor _members(Scan* s, cursor p, cursor end) noexcept:
    """Validate the top-level object at ``p``, noting the members the rules read."""
    cdef cursor name
    cdef cursor start
    cdef Member member
    p = _token(p + 1, 0x22)
    if p[0] == 0x7D:
        return p + 1
    while True:
        if p[0] != 0x22:
            return _unexpected(s, p, end)
        name = p + 1
        p = _key(s, p, end)
        if p == NULL:
            return NULL
        member = _member(s, name, p - 1)
        p = _token(p, 0x3A)
        if p[0] != 0x3A:
            return _unexpected(s, p, end)
        start = _whitespace(p + 1)
        if member == M_PARAMS and s.nested:
            p = _params(s, start, end)
        else:
            p = _value(s, start, end, 1)
        if p == NULL:
            return NULL
        if member != M_OTHER and _note(s, member, start - s.base, p - s.base) < 0:
            return _fail(s, E_MEMORY, start)
        p = _token(p, 0x2C)
        if p[0] == 0x2C:
            p = _token(p + 1, 0x22)
        elif p[0] == 0x7D:
            return p + 1
        else:
            return _unexpected(s, p, end)


cdef inline int _note(Scan* s, Member member, Py_ssize_t start, Py_ssize_t end) noexcept:
    """Record a top-level member's value (the last one wins); -1 when out of memory."""
    cdef Span span
    span.start = start
    span.end = end
    if member == M_ID:
        s.id = span
        s.id_value = s.value
        s.id_flags = s.string_flags
        s.ids += 1
        if s.collect:
            if s.ids > s.all_ids_capacity:
                s.all_ids_capacity = 2 * s.ids
                s.all_ids = <Span*>PyMem_Realloc(s.all_ids, s.all_ids_capacity * sizeof(Span))
                if s.all_ids == NULL:
                    return -1
            s.all_ids[s.ids - 1] = span
    elif member == M_JSONRPC:
        s.jsonrpc = span
        s.jsonrpc_value = s.value
        s.jsonrpc_flags = s.string_flags
    elif member == M_METHOD:
        s.method = span
        s.method_value = s.value
        s.method_flags = s.string_flags
    elif member == M_PARAMS:
        s.params = span
        s.params_value = s.value
    elif member == M_RESULT:
        s.result = span
    else:
        s.error_member = span
    return 0


# --- the members inside params that rpcline.http reads (Scan.nested) ---------------------


cdef inline Inner _inner_named(cursor name, Py_ssize_t size, int level) noexcept:
    if level == 0:  # in params
        if size == 4 and memcmp(name, b"name", 4) == 0:
            return N_NAME
        if size == 3 and memcmp(name, b"uri", 3) == 0:
            return N_URI
        if size == 9 and memcmp(name, b"arguments", 9) == 0:
            return N_ARGUMENTS
        if size == 5 and memcmp(name, b"_meta", 5) == 0:
            return N_META
        return N_OTHER
    if size == VERSION_KEY_SIZE and memcmp(name, VERSION_KEY, VERSION_KEY_SIZE) == 0:
        return N_VERSION
    if size == CAPABILITIES_KEY_SIZE and memcmp(name, CAPABILITIES_KEY,
                                               CAPABILITIES_KEY_SIZE) == 0:
        return N_CAPABILITIES
    return N_OTHER


cdef inline Inner _inner(Scan* s, cursor name, cursor name_end, int level) noexcept:
    """Which member of params (level 0) or of its _meta (level 1) a name is."""
    cdef unsigned char buffer[INNER_NAME_BYTES]
    cdef Py_ssize_t size
    if s.string_flags & S_ESCAPED:
        size = _short_name(name, name_end, buffer, INNER_NAME_BYTES)
        return N_OTHER if size < 0 else _inner_named(buffer, size, level)
    return _inner_named(name, name_end - name, level)


cdef inline void _forget(Scan* s, int first) noexcept:
    """Forget the inner members from ``first`` on: a later params or _meta replaces them."""
    cdef int i
    for i in range(first, <int>N_COUNT):
        s.inner[i].span.start = s.inner[i].span.end = -1


cdef cursor _params(Scan* s, cursor p, cursor end) noexcept:
    """Validate a top-level params value, noting its inner members when it is an object."""
    _forget(s, N_NAME)
    if p[0] != 0x7B:
        return _value(s, p, end, 1)
    p = _inner_members(s, p, end, 2, 0)
    s.value = V_OBJECT
    return p


cdef cursor _inner_members(Scan* s, cursor p, cursor end, int depth, int level) noexcept:
    """Validate the object at ``p``, ``depth`` levels deep with itself (params 2, its
    _meta 3), noting the members of params (level 0) or of _meta (level 1); the last one
    wins. The same states and error offsets as ``_container`` reading the object."""
    cdef cursor name
    cdef cursor start
    cdef Inner inner
    cdef Noted* noted
    p = _token(p + 1, 0x22)
    if p[0] == 0x7D:
        return p + 1
    while True:
        if p[0] != 0x22:
            return _unexpected(s, p, end)
        name = p + 1
        p = _key(s, p, end)
        if p == NULL:
            return NULL
        inner = _inner(s, name, p - 1, level)
        p = _token(p, 0x3A)
        if p[0] != 0x3A:
            return _unexpected(s, p, end)
        start = _whitespace(p + 1)
        if inner == N_META:
            _forget(s, N_VERSION)
            if start[0] == 0x7B:
                p = _inner_members(s, start, end, depth + 1, 1)
                s.value = V_OBJECT
            else:
                p = _value(s, start, end, depth)
        else:
            p = _value(s, start, end, depth)
        if p == NULL:
            return NULL
        if inner != N_OTHER:
            noted = &s.inner[<int>inner]
            noted.span.start = start - s.base
            noted.span.end = p - s.base
            noted.value = s.value
            noted.flags = s.string_flags
        p = _token(p, 0x2C)
        if p[0] == 0x2C:
            p = _token(p + 1, 0x22)
        elif p[0] == 0x7D:
            return p + 1
        else:
            return _unexpected(s, p, end)


cdef void _reset(Scan* s) noexcept:
    s.error = E_NONE
    s.id.start = s.jsonrpc.start = s.method.start = -1
    s.params.start = s.result.start = s.error_member.start = -1
    s.id.end = s.jsonrpc.end = s.method.end = -1
    s.params.end = s.result.end = s.error_member.end = -1
    s.ids = 0


cdef bint _scan(Scan* s) noexcept:
    """Validate the whole line as orjson would; False with ``s.error`` set when it is not.

    ``s.base[s.size]`` must be a NUL byte (see above).
    """
    cdef cursor end = s.base + s.size
    _prefetch(s.base, s.size)
    cdef cursor p = _whitespace(s.base)
    _reset(s)
    if s.nested:
        _forget(s, N_NAME)
    if p[0] == 0x7B:
        s.top = V_OBJECT
        p = _members(s, p, end)
    else:
        p = _value(s, p, end, 0)
        s.top = s.value
    if p == NULL:
        return False
    p = _whitespace(p)
    if p != end:
        _fail(s, E_TRAILING, p)
        return False
    return True


# --- decoding the three members the rules read -------------------------------------------


cdef object _text(Scan* s, Span span, int flags):
    """The str a validated top-level string value holds (span includes the quotes)."""
    cdef cursor p = s.base + span.start + 1
    cdef Py_ssize_t size = span.end - span.start - 2
    cdef object text
    if flags == 0:  # ASCII without escapes: the common case, one copy
        text = PyUnicode_New(size, 127)
        memcpy(PyUnicode_DATA(text), p, size)
        return text
    if not flags & S_ESCAPED:
        return PyUnicode_DecodeUTF8(<const char*>p, size, NULL)
    # Unescaping never lengthens: \uXXXX is at most 3 bytes, a pair of them 4.
    cdef unsigned char* buffer = <unsigned char*>PyMem_Malloc(size + 1)
    if buffer == NULL:
        raise MemoryError()
    try:
        return PyUnicode_DecodeUTF8(<const char*>buffer, _unescape(p, p + size, buffer), NULL)
    finally:
        PyMem_Free(buffer)


# Recently routed method names, owned references or NULL, by a hash of their bytes: a
# stream names a handful of methods again and again, and a str is immutable, so the one
# made for a name is handed out again, sparing its allocation, copy and release. A slot is
# replaced, and its name released, by whichever call misses on it: the cache is shared by
# every thread. With the GIL, route() runs in one thread at a time and needs no lock; a
# free-threaded build would let one thread release a name that another is comparing or
# handing out, so there every read and write of a slot holds a lock (PyMutex, which every
# free-threaded CPython has), and the reference a caller gets is taken before it is let go.
cdef enum:
    RECENT_METHODS = 16
    RECENT_METHOD_BYTES = 64
cdef PyObject* _recent_methods[RECENT_METHODS]

cdef extern from *:
    """
    #ifdef Py_GIL_DISABLED
    static PyMutex rpcline_recent_methods_lock = {0};
    #define RPCLINE_LOCK_RECENT_METHODS() PyMutex_Lock(&rpcline_recent_methods_lock)
    #define RPCLINE_UNLOCK_RECENT_METHODS() PyMutex_Unlock(&rpcline_recent_methods_lock)
    #else
    #define RPCLINE_LOCK_RECENT_METHODS() ((void)0)
    #define RPCLINE_UNLOCK_RECENT_METHODS() ((void)0)
    #endif
    """
    void _lock_recent_methods "RPCLINE_LOCK_RECENT_METHODS"() noexcept nogil
    void _unlock_recent_methods "RPCLINE_UNLOCK_RECENT_METHODS"() noexcept nogil


cdef object _method_name(Scan* s):
    """The method's str (a validated top-level string): a recent one when its bytes match."""
    cdef cursor p = s.base + s.method.start + 1
    cdef Py_ssize_t size = s.method.end - s.method.start - 2
    if s.method_flags != 0 or size > RECENT_METHOD_BYTES:  # escaped, non-ASCII or long
        return _text(s, s.method, s.method_flags)
    # p[size >> 1] is the closing quote for "": still a byte of the line.
    cdef unsigned int slot = <unsigned int>(size + p[size >> 1]) % RECENT_METHODS
    cdef PyObject* recent
    _lock_recent_methods()
    recent = _recent_methods[slot]
    if (recent != NULL and PyUnicode_GET_LENGTH(<object>recent) == size
            and memcmp(PyUnicode_DATA(<object>recent), p, size) == 0):
        Py_INCREF(<object>recent)  # the caller's, taken while the slot still holds it
        _unlock_recent_methods()
        return _steal(recent)
    _unlock_recent_methods()
    # Made outside the lock: were _text ever to run Python code (a collection's finalizer
    # calling route), the lock would be taken again in the same thread.
    cdef object text = _text(s, s.method, 0)
    Py_INCREF(text)  # the slot's
    _lock_recent_methods()
    recent = _recent_methods[slot]  # again: it may have been replaced meanwhile
    _recent_methods[slot] = <PyObject*>text
    _unlock_recent_methods()
    Py_XDECREF(recent)
    return text


cdef extern from *:
    """
    /* An owned reference handed to Cython as the object to return, without a new one. */
    static inline PyObject *rpcline_steal(PyObject *owned) { return owned; }
    """
    object _steal "rpcline_steal"(PyObject*)


cdef Py_ssize_t _unescape(cursor p, cursor end, unsigned char* out) noexcept:
    """Write the UTF-8 of a validated string body with escapes into ``out``; its length."""
    cdef Py_ssize_t size = 0
    cdef unsigned int unit
    while p < end:
        if p[0] != 0x5C:
            out[size] = p[0]
            size += 1
            p += 1
            continue
        if p[1] != 0x75:
            out[size] = _unescaped(p[1])
            size += 1
            p += 2
            continue
        unit = <unsigned int>_hex4(p + 2)
        p += 6
        if 0xD800 <= unit <= 0xDBFF:  # validated: a low surrogate follows
            unit = 0x10000 + ((unit - 0xD800) << 10) + (<unsigned int>_hex4(p + 2) - 0xDC00)
            p += 6
        if unit < 0x80:
            out[size] = unit
            size += 1
        elif unit < 0x800:
            out[size] = 0xC0 | (unit >> 6)
            out[size + 1] = 0x80 | (unit & 0x3F)
            size += 2
        elif unit < 0x10000:
            out[size] = 0xE0 | (unit >> 12)
            out[size + 1] = 0x80 | ((unit >> 6) & 0x3F)
            out[size + 2] = 0x80 | (unit & 0x3F)
            size += 3
        else:
            out[size] = 0xF0 | (unit >> 18)
            out[size + 1] = 0x80 | ((unit >> 12) & 0x3F)
            out[size + 2] = 0x80 | ((unit >> 6) & 0x3F)
            out[size + 3] = 0x80 | (unit & 0x3F)
            size += 4
    return size


cdef object _long_integer(Scan* s, Span span):
    """``_integer`` (``scan_c.pxd``) for 10 digits or more: the int orjson decodes a
    top-level integer to, or None where it decodes a float.

    orjson keeps -2**63 .. 2**64 - 1 as int and makes anything beyond a float.
    """
    cdef cursor p = s.base + span.start
    cdef cursor end = s.base + span.end
    cdef bint negative = p[0] == 0x2D
    if negative:
        p += 1
    if end - p > 20:
        return None
    cdef uint64_t value = 0
    cdef uint64_t digit
    while p < end:
        digit = p[0] - 0x30
        if value > (0xFFFFFFFFFFFFFFFFULL - digit) // 10:
            return None
        value = value * 10 + digit
        p += 1
    if not negative:
        return PyLong_FromUnsignedLongLong(value)
    if value > 0x8000000000000000ULL:
        return None
    if value == 0x8000000000000000ULL:
        return PyLong_FromLongLong(LLONG_MIN)
    return PyLong_FromLongLong(-<long long>value)


cdef bint _escaped_version_2_0(Scan* s) except -1:
    """``_is_version_2_0`` (``scan_c.pxd``) for a jsonrpc string with escapes or
    non-ASCII text."""
    return _text(s, s.jsonrpc, s.jsonrpc_flags) == "2.0"


cdef str _reason(Scan* s):
    if s.error == E_CHARACTER and s.error_at < len(_UNEXPECTED):
        return _UNEXPECTED[s.error_at]
    return f"{_ERROR_TEXTS[s.error]} at byte {s.error_at}"


cdef object _prefix_id(const unsigned char* data, Py_ssize_t size):
    """``prefix_id`` on memory followed by a NUL byte (the scanner's end mark)."""
    cdef Scan s
    return _prefix_scan(&s, data, size, True)


cdef object _prefix_scan(Scan* s, const unsigned char* data, Py_ssize_t size, bint cut):
    """``scan_py._prefix_scan`` on memory followed by a NUL byte: the id, with ``s``
    noting the members complete in the valid prefix (none when nothing is trusted)."""
    s.base = data
    s.size = size
    s.collect = s.nested = False
    _reset(s)
    cdef cursor p = _whitespace(data)
    if p[0] != 0x7B:
        return None
    p = _members(s, p, data + size)
    if cut and (s.error_at < size - CUT_TOLERANCE if p == NULL else _whitespace(p) != data + size):
        _reset(s)  # not JSON before the cut: nothing to trust
        return None
    if s.id.start >= 0 and s.id_value == V_INTEGER and s.id.end == size:
        s.id.start = s.id.end = -1  # an integer running into the end might go on
    if s.id.start < 0:
        return None
    if s.id_value == V_STRING:
        return _text(s, s.id, s.id_flags)
    if s.id_value == V_INTEGER:
        return _integer(s, s.id)
    return None
