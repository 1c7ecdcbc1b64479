/* The scanner's C helpers: word and SSE2 block tests over string bodies, UTF-8
   validation of a 16-byte block, and prefetching. Included by scan_c.pyx, which
   declares what it uses; plain C99 (and MSVC), so that it compiles and lints on its own:
   cc -fsyntax-only -Wall -Wextra src/rpcline/_core/scan.h */
#ifndef RPCLINE_SCAN_H
#define RPCLINE_SCAN_H

#include <stddef.h>
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
/* Whether the compiler optimised this build, for benchmarks and CI to refuse to measure
   one that it did not: GCC and clang say so with __OPTIMIZE__; MSVC does not say (-1). */
#if defined(__OPTIMIZE__)
#define RPCLINE_OPTIMIZED 1
#elif defined(__GNUC__) || defined(__clang__)
#define RPCLINE_OPTIMIZED 0
#else
#define RPCLINE_OPTIMIZED (-1)
#endif
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
/* From p, 64 bytes a step with SSE2, then 16: the first byte that stops a string body or
   is non-ASCII, looking in whole 16-byte blocks only; else the start of the last,
   incomplete block. Runs of plain text (base64 above all) take this loop, with one mask
   test a step; rpcline_plain_blocks (scan_long.h) calls it, or its AVX2 twin. */
static inline const unsigned char *rpcline_sse2_plain_run(const unsigned char *p,
                                                          const unsigned char *end) {
    unsigned int m;
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
#endif
/* Ask for every cache line of a line's first 2 KB (and its NUL) before scanning: the
   scan's loads depend on what it has read, so a line not in cache would otherwise
   arrive one miss after another. Longer lines are left to the hardware prefetcher.
   The first lines are asked for whatever the size, with no branch to mispredict (a
   prefetch past the data is harmless). */
#define RPCLINE_PREFETCH_BYTES 2048
static inline void rpcline_prefetch(const unsigned char *p, ptrdiff_t size) {
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

#endif /* RPCLINE_SCAN_H */
