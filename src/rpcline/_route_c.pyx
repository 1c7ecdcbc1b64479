# cython: language_level=3, binding=False, embedsignature=True, embedsignature.format=clinic
"""route(): the card's nine rules without decoding params or result; Cython core.

``_route_py.py`` is the twin and documents the behaviour; this module mirrors it function
by function, with the same scanner states, the same error offsets and the same reasons.
A validating scanner accepts exactly what ``orjson.loads`` accepts and decodes only the
top-level ``id``, ``jsonrpc`` and ``method`` members. String bodies, where large tool
results spend their bytes, are skipped 16 and then 64 bytes per step with SSE2 (eight
without: one word, four bit tricks for quote, backslash, control character and non-ASCII
byte, and a count of trailing zeros); UTF-8 is validated only where a non-ASCII byte
appears. A line's first cache lines are prefetched before the scan.
"""

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.long cimport PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH, PyUnicode_READ_CHAR
from libc.limits cimport LLONG_MIN
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcmp, memcpy

import orjson

from rpcline._message_c cimport (
    M_ERROR, M_ID, M_JSONRPC, M_METHOD, M_OTHER, M_PARAMS, M_RESULT, Member, member_named
)
from rpcline._message_c cimport InvalidParams, InvalidRequest, ParseError, ProtocolError
from rpcline._message_py import (
    BAD_ID as _BAD_ID,
    BAD_JSONRPC as _BAD_JSONRPC,
    BAD_METHOD as _BAD_METHOD,
    BAD_PARAMS as _BAD_PARAMS,
    BATCHING as _BATCHING,
    NOT_AN_OBJECT as _NOT_AN_OBJECT,
)
from rpcline._route_py import (
    ERROR_TEXTS,
    INFINITY_THRESHOLD,
    KINDS,
    MAX_DEPTH as _MAX_DEPTH,
    CUT_TOLERANCE as _CUT_TOLERANCE,
    NO_ID,
    NOT_FORWARDED,
    REPR_FIELDS,
    STR_SURROGATE,
    UNEXPECTED_REASONS,
    encode_id,
)

cdef extern from "Python.h":
    bint PyUnicode_IS_COMPACT_ASCII(object)
    void* PyUnicode_DATA(object)
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    object PyUnicode_New(Py_ssize_t, Py_UCS4)

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(_MSC_VER)
    #include <intrin.h>
    #endif
    /* A little-endian view of 8 unaligned bytes: byte i of the line is bits 8i..8i+7. */
    static inline uint64_t rpcline_load64(const unsigned char *p) {
        uint64_t w;
        memcpy(&w, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
    #endif
        return w;
    }
    /* Compile-time constants (module-level cdef variables would be loaded from memory). */
    #define RPCLINE_ONES 0x0101010101010101ULL
    #define RPCLINE_HIGHS 0x8080808080808080ULL
    #define RPCLINE_QUOTES 0x2222222222222222ULL
    #define RPCLINE_BACKSLASHES 0x5C5C5C5C5C5C5C5CULL
    #define RPCLINE_SPACES 0x2020202020202020ULL
    /* JSON whitespace as a bit set over codes 0..32: space, tab, LF, CR. */
    #define RPCLINE_WHITESPACE ((1ULL << 32) | (1ULL << 9) | (1ULL << 10) | (1ULL << 13))
    /* SSE2 is part of every x86-64: 16 bytes a step there, the portable words elsewhere
       (or with -DRPCLINE_NO_SIMD, to test that path). In one 16-byte step, a signed
       compare with 0x20 finds control characters and non-ASCII bytes at once. */
    /* The lowest and the highest set bit of a non-zero 32-bit mask. */
    static inline unsigned int rpcline_low32(unsigned int x) {
    #if defined(_MSC_VER)
        unsigned long i;
        _BitScanForward(&i, x);
        return (unsigned int)i;
    #else
        return (unsigned int)__builtin_ctz(x);
    #endif
    }
    static inline unsigned int rpcline_high32(unsigned int x) {
    #if defined(_MSC_VER)
        unsigned long i;
        _BitScanReverse(&i, x);
        return (unsigned int)i;
    #else
        return 31u - (unsigned int)__builtin_clz(x);
    #endif
    }
    static inline int rpcline_ctz64(uint64_t x) {
    #if defined(_MSC_VER)
        unsigned long i;
        _BitScanForward64(&i, x);
        return (int)i;
    #else
        return __builtin_ctzll(x);
    #endif
    }
    #if (defined(__SSE2__) || defined(_M_X64) || defined(_M_AMD64)) && !defined(RPCLINE_NO_SIMD)
    #include <emmintrin.h>
    #define RPCLINE_SIMD 1
    /* 0xFF for each quote, backslash, control character and non-ASCII byte: a signed
       compare with 0x20 finds the last two at once. */
    static inline __m128i rpcline_special_bytes(const unsigned char *p) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        return _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x22)),
                         _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5C))),
            _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
    }
    static inline unsigned int rpcline_special16(const unsigned char *p) {
        return (unsigned int)_mm_movemask_epi8(rpcline_special_bytes(p));
    }
    /* Bytes [0, limit] of a block whose bytes >= 0x80 are v's: is the UTF-8 before
       position limit valid, with no sequence running into it? One mask bit per byte:
       the continuation bytes must be exactly those the lead bytes before them ask for,
       no byte may be C0, C1 or F5..FF, and E0, ED, F0, F4 limit their second byte (no
       overlong forms, no surrogates, nothing above U+10FFFF). */
    #define RPCLINE_GE(u, k) ((unsigned int)_mm_movemask_epi8( \
        _mm_cmpgt_epi8((u), _mm_set1_epi8((char)((((k) ^ 0x80) - 1))))))
    #define RPCLINE_EQ(v, k) ((unsigned int)_mm_movemask_epi8( \
        _mm_cmpeq_epi8((v), _mm_set1_epi8((char)(k)))))
    static int rpcline_utf8_valid(__m128i v, unsigned int high, unsigned int limit,
                                  unsigned int *crossing) {
        __m128i u = _mm_xor_si128(v, _mm_set1_epi8((char)0x80)); /* unsigned order */
        unsigned int ge_c0 = RPCLINE_GE(u, 0xC0), ge_c2 = RPCLINE_GE(u, 0xC2);
        unsigned int ge_e0 = RPCLINE_GE(u, 0xE0), ge_f0 = RPCLINE_GE(u, 0xF0);
        unsigned int ge_f5 = RPCLINE_GE(u, 0xF5), ge_a0 = RPCLINE_GE(u, 0xA0);
        unsigned int ge_90 = RPCLINE_GE(u, 0x90);
        unsigned int cont = high & ~ge_c0;
        unsigned int lead3 = ge_e0 & ~ge_f0, lead4 = ge_f0 & ~ge_f5;
        unsigned int need = ((ge_c2 & ~ge_f5) << 1) | ((lead3 | lead4) << 2) | (lead4 << 3);
        unsigned int bad = (ge_c0 & ~ge_c2) | ge_f5;
        unsigned int wrong = ((RPCLINE_EQ(v, 0xE0) << 1) & ~ge_a0)
                           | ((RPCLINE_EQ(v, 0xED) << 1) & ge_a0)
                           | ((RPCLINE_EQ(v, 0xF0) << 1) & ~ge_90)
                           | ((RPCLINE_EQ(v, 0xF4) << 1) & ge_90);
        unsigned int range;
        *crossing = 16;
        if (limit == 16 && (need >> 16)) {
            /* A sequence runs past the block: check up to its lead (the last lead byte),
               and let the next block start there. */
            *crossing = rpcline_high32(ge_c0 & 0xFFFF);
            limit = *crossing;
        }
        range = (2u << limit) - 1; /* bits 0..limit; bit 16 set when limit is 16 */
        return (((need ^ cont) | bad | wrong) & range) == 0;
    }
    /* The 16 bytes of a string body from a non-ASCII byte (so from a character's
       first byte): how many of them are validated text, up to the first quote,
       backslash or control character, or all 16, or up to the first byte of a
       sequence that runs into the next block (at least 1); -1 when not valid UTF-8. */
    static inline int rpcline_utf8_block(const unsigned char *p) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        unsigned int hi = (unsigned int)_mm_movemask_epi8(v);
        unsigned int stop = RPCLINE_EQ(v, 0x22) | RPCLINE_EQ(v, 0x5C)
            | ((unsigned int)_mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20))) & ~hi);
        unsigned int limit = stop ? rpcline_low32(stop) : 16;
        unsigned int crossing;
        if (!rpcline_utf8_valid(v, hi, limit, &crossing))
            return -1;
        return (int)(limit == 16 ? crossing : limit);
    }
    /* The first byte from p that stops a string body or is non-ASCII, looking in whole
       16-byte blocks only; else the start of the last, incomplete block. Most strings
       end, or meet their next escape, within two blocks: those are tested one at a
       time (a 64-byte step costs four). Longer runs of plain text (base64 above all)
       go 64 bytes a step, with one mask test. */
    #define RPCLINE_SINGLE_BLOCKS 2
    static inline const unsigned char *rpcline_plain_blocks(const unsigned char *p,
                                                            const unsigned char *end) {
        unsigned int m;
        int i;
        for (i = 0; i < RPCLINE_SINGLE_BLOCKS; i++, p += 16) {
            if (end - p < 16)
                return p;
            m = rpcline_special16(p);
            if (m)
                return p + rpcline_low32(m);
        }
        for (; end - p >= 64; p += 64) {
            __m128i a = rpcline_special_bytes(p), b = rpcline_special_bytes(p + 16);
            __m128i c = rpcline_special_bytes(p + 32), d = rpcline_special_bytes(p + 48);
            /* A long string is read at memory speed: ask for its bytes 2 KB ahead (past
               the end is harmless), which the hardware prefetcher alone does too late
               for a line not in cache. */
            _mm_prefetch((const char *)(p + 2048), _MM_HINT_T0);
            if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)))) {
                uint64_t found = (uint64_t)(unsigned int)_mm_movemask_epi8(a)
                    | ((uint64_t)(unsigned int)_mm_movemask_epi8(b) << 16)
                    | ((uint64_t)(unsigned int)_mm_movemask_epi8(c) << 32)
                    | ((uint64_t)(unsigned int)_mm_movemask_epi8(d) << 48);
                return p + rpcline_ctz64(found);
            }
        }
        for (; end - p >= 16; p += 16) {
            m = rpcline_special16(p);
            if (m)
                return p + rpcline_low32(m);
        }
        return p;
    }
    #else
    #define RPCLINE_SIMD 0
    static inline unsigned int rpcline_special16(const unsigned char *p) { (void)p; return 0; }
    static inline int rpcline_utf8_block(const unsigned char *p) { (void)p; return -1; }
    static inline const unsigned char *rpcline_plain_blocks(const unsigned char *p,
                                                            const unsigned char *end) {
        (void)end; return p;
    }
    #endif
    /* Ask for every cache line of a line's first 2 KB (and its NUL) before scanning: the
       scan's loads depend on what it has read, so a line not in cache would otherwise
       arrive one miss after another. Longer lines are left to the hardware prefetcher.
       The first lines are asked for whatever the size, with no branch to mispredict (a
       prefetch past the data is harmless). */
    #define RPCLINE_PREFETCH_BYTES 2048
    static inline void rpcline_prefetch(const unsigned char *p, Py_ssize_t size) {
    #if defined(__GNUC__) || defined(__clang__)
        const unsigned char *line = (const unsigned char *)((uintptr_t)p & ~(uintptr_t)63);
        const unsigned char *last = p + (size < RPCLINE_PREFETCH_BYTES ? size : RPCLINE_PREFETCH_BYTES);
        __builtin_prefetch(line + 64);  /* the first one is being read already */
        __builtin_prefetch(line + 128);
        __builtin_prefetch(line + 192);
        for (line += 256; line <= last; line += 64)
            __builtin_prefetch(line);
    #else
        (void)p; (void)size;
    #endif
    }
    """
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
    unsigned int _special16 "rpcline_special16"(const unsigned char*) noexcept nogil
    int _utf8_block "rpcline_utf8_block"(const unsigned char*) noexcept nogil
    const unsigned char* _plain_blocks "rpcline_plain_blocks"(
        const unsigned char*, const unsigned char*) noexcept nogil

ctypedef const unsigned char* cursor

cdef enum:
    MAX_DEPTH = 1024  # orjson's nesting limit, the twin's MAX_DEPTH
assert MAX_DEPTH == _MAX_DEPTH

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

# A route's kind, and its name (KINDS in the twin's order).
cdef enum Kind:
    REQUEST, NOTIFICATION, RESPONSE, REFUSED
cdef tuple _KINDS = KINDS
cdef Py_ssize_t CUT_TOLERANCE = _CUT_TOLERANCE
# The reasons a refusal names, as C globals: no module dictionary look-up per refusal.
cdef str BAD_ID = _BAD_ID
cdef str BAD_JSONRPC = _BAD_JSONRPC
cdef str BAD_METHOD = _BAD_METHOD
cdef str BAD_PARAMS = _BAD_PARAMS
cdef str BATCHING = _BATCHING
cdef str NOT_AN_OBJECT = _NOT_AN_OBJECT
cdef tuple _ERROR_TEXTS = ERROR_TEXTS
cdef tuple _UNEXPECTED = UNEXPECTED_REASONS
cdef object _dumps = orjson.dumps


cdef struct Span:
    Py_ssize_t start
    Py_ssize_t end


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
    """``_string`` for a member name, by a byte loop.

    Names recur in the same order message after message, so the predictor learns where
    the loop ends and the scan reads on speculatively; a block's mask would make it wait
    for the mask and its count instead. A name that is long or holds an escape or a
    non-ASCII byte goes on to ``_string_body`` from that byte.
    """
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
    With SSE2, from a non-ASCII byte UTF-8 is validated a block at a time. A block found
    invalid sends the string to the exact scan (``_string_rest``), which finds and words
    the first error as the twin does: the block check can only cost time, never change
    an answer.
    """
    cdef int advance
    cdef int flags = 0
    if SIMD:
        while True:
            p = _plain_blocks(p, end)
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


cdef cursor _number(Scan* s, cursor p, cursor end) noexcept:
    """Validate the number at ``p``; the byte after it, or NULL. Sets ``s.value``.

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


cdef cursor _value(Scan* s, cursor p, cursor end, int depth) noexcept:
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


cdef inline Member _member(Scan* s, cursor name, cursor name_end) noexcept:
    """Which member a top-level name (between its quotes) is; escapes are decoded."""
    cdef unsigned char buffer[8]
    cdef Py_ssize_t size = 0
    cdef cursor p = name
    cdef int unit
    if s.string_flags & S_ESCAPED:
        # Names the rules read are short ASCII: decode up to 8 bytes, else it is another.
        while p < name_end:
            if size == 8:
                return M_OTHER
            if p[0] != 0x5C:
                buffer[size] = p[0]
                p += 1
            elif p[1] == 0x75:
                unit = _hex4(p + 2)
                if unit >= 0x80:
                    return M_OTHER
                buffer[size] = <unsigned char>unit
                p += 6
            else:
                buffer[size] = _unescaped(p[1])
                p += 2
            size += 1
        return member_named(buffer, size)
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


cdef inline void _reset(Scan* s) noexcept:
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
# made for a name is handed out again, sparing its allocation, copy and release. The GIL
# is held throughout route().
cdef enum:
    RECENT_METHODS = 16
    RECENT_METHOD_BYTES = 64
cdef PyObject* _recent_methods[RECENT_METHODS]


cdef object _method_name(Scan* s):
    """The method's str (a validated top-level string): a recent one when its bytes match."""
    cdef cursor p = s.base + s.method.start + 1
    cdef Py_ssize_t size = s.method.end - s.method.start - 2
    if s.method_flags != 0 or size > RECENT_METHOD_BYTES:  # escaped, non-ASCII or long
        return _text(s, s.method, s.method_flags)
    # p[size >> 1] is the closing quote for "": still a byte of the line.
    cdef unsigned int slot = <unsigned int>(size + p[size >> 1]) % RECENT_METHODS
    cdef PyObject* recent = _recent_methods[slot]
    if (recent != NULL and PyUnicode_GET_LENGTH(<object>recent) == size
            and memcmp(PyUnicode_DATA(<object>recent), p, size) == 0):
        return <object>recent
    cdef object text = _text(s, s.method, 0)
    # Read the slot again: were _text ever to run Python code (a collection's finalizer
    # calling route), the name read above could have been replaced and released meanwhile.
    recent = _recent_methods[slot]
    Py_INCREF(text)
    _recent_methods[slot] = <PyObject*>text
    Py_XDECREF(recent)
    return text


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


cdef object _integer(Scan* s, Span span):
    """The int orjson decodes a top-level integer to, or None where it decodes a float.

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


cdef bint _is_version_2_0(Scan* s) except -1:
    if s.jsonrpc_value != V_STRING:
        return False
    if s.jsonrpc_flags == 0:
        return (s.jsonrpc.end - s.jsonrpc.start == 5
                and memcmp(s.base + s.jsonrpc.start, b'"2.0"', 5) == 0)
    return _text(s, s.jsonrpc, s.jsonrpc_flags) == "2.0"


# --- the result ---------------------------------------------------------------------------


# No freelist: its inlined memset of the object compiles to a slow "rep stos" here, and
# the allocator is faster. No GC: a route holds an id, a method, an error and a line,
# none of which can refer back to it.
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

    def __dealloc__(self):
        Py_XDECREF(self._id_value)
        Py_XDECREF(self._method)
        Py_XDECREF(self._protocol_error)
        Py_XDECREF(self._line)

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
        return self._fields() == (<Route>other)._fields()

    def __hash__(self):
        return hash(self._fields())

    cdef tuple _fields(self):
        return (self.kind, type(self.id), self.id, self.method, self.error, self.id_span,
                self.params_span, self.result_span, self.error_span, self.method_span,
                type(self.line), self.line)

    def __repr__(self):
        fields = ", ".join([f"{name}={getattr(self, name)!r}" for name in REPR_FIELDS])
        return f"Route({fields})"

    def __reduce__(self):
        if self._line == NULL:
            return (refusal, (self.error, self.id))
        return (route, (<object>self._line,))


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
    s.collect = False


cdef inline Route _route(Kind kind, object id, object method, object error, object line,
                         Scan* s):
    cdef Route r = Route.__new__(Route)
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


cdef str _reason(Scan* s):
    if s.error == E_CHARACTER and s.error_at < len(_UNEXPECTED):
        return _UNEXPECTED[s.error_at]
    return f"{_ERROR_TEXTS[s.error]} at byte {s.error_at}"


def refusal(ProtocolError error, id):
    """A refused Route for a line that was never routed (a stream's over-long line)."""
    return _refusal(error, id)


cdef object _refusal(object error, object id):
    cdef Scan s
    _reset(&s)
    return _route(REFUSED, id, None, error, None, &s)


def prefix_id(bytes data):
    """The id of a line cut short at a limit: its last complete top-level ``id`` member.

    ``_route_py.prefix_id`` says what counts; ``data`` is the line's first bytes.
    """
    return _prefix_id(<cursor>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef object _prefix_id(const unsigned char* data, Py_ssize_t size):
    """``prefix_id`` on memory followed by a NUL byte (the scanner's end mark)."""
    cdef Scan s
    s.base = data
    s.size = size
    s.collect = False
    _reset(&s)
    cdef cursor p = _whitespace(data)
    if p[0] != 0x7B:
        return None
    p = _members(&s, p, data + size)
    if p == NULL:
        if s.error_at < size - CUT_TOLERANCE:
            return None  # not JSON before the cut: no id to trust
    elif _whitespace(p) != data + size:
        return None
    if s.id.start < 0 or (s.id_value == V_INTEGER and s.id.end == size):
        return None
    if s.id_value == V_STRING:
        return _text(&s, s.id, s.id_flags)
    if s.id_value == V_INTEGER:
        return _integer(&s, s.id)
    return None


def route(line):
    """Classify one line as ``parse`` does, decoding only its id, jsonrpc and method."""
    cdef Scan s
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
                return _parse_error(line, &s, STR_SURROGATE.format(_surrogate_at(line)))
            s.size = size
    s.collect = False
    # The GIL is kept: releasing it would cost more than scanning a typical message.
    if not _scan(&s):
        return _parse_error(line, &s, _reason(&s))
    return _classify(line, &s)


cdef object _classify(object line, Scan* s):
    """Steps 2 to 9 of the card, on what the scanner noted; ``_message_c._classify``'s order."""
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
