/* Long string bodies 64 bytes a step: escapes and UTF-8 are checked over a whole block by
   arithmetic on its byte masks, with no branch per escape or per character (the way
   simdjson's stage 1 finds escaped quotes). Text with an escape every few bytes (JSON
   embedded in a string) or in non-Latin scripts otherwise leaves the 16-byte steps of
   scan.h at each one. SSE2 on every x86-64, AVX2 where the CPU has it (chosen at run
   time, GCC and clang on Linux), nothing without SIMD. UTF-8 is checked by compares with
   SSE2, and with AVX2 by byte shuffles as table look-ups (simdjson's algorithm), which
   takes less than half the instructions. Plain C99 (and MSVC):
   cc -fsyntax-only -Wall -Wextra src/rpcline/_core/scan_long.h */
#ifndef RPCLINE_SCAN_LONG_H
#define RPCLINE_SCAN_LONG_H

#include "scan.h"

/* A string's content as far as decoding it goes: S_ESCAPED and S_NON_ASCII of
   scan_c.pxd, which the scanner checks at import. */
#define RPCLINE_ESCAPED 1
#define RPCLINE_NON_ASCII 2

/* The block scans there are, for rpcline_long_path. */
#define RPCLINE_PATH_NONE 0
#define RPCLINE_PATH_SSE2 1
#define RPCLINE_PATH_AVX2 2

#if RPCLINE_SIMD
#if defined(_MSC_VER)
#define RPCLINE_NOINLINE __declspec(noinline)
#else
#define RPCLINE_NOINLINE __attribute__((noinline))
#endif
#define RPCLINE_EVEN_BITS 0x5555555555555555ULL

/* The bytes an odd run of backslashes escapes, for a block whose first byte is escaped
   by nothing before it. In a run, every second backslash is escaped, counting from the
   run's first: an even position for a run that starts at an odd one, and the reverse.
   Adding a run's first bit to the mask clears the run (the carry runs to its end), which
   picks out the runs that start at even positions without a loop over them. */
static inline uint64_t rpcline_escaped(uint64_t backslashes) {
    uint64_t starts = backslashes & ~(backslashes << 1);
    uint64_t even_runs = backslashes & ~(backslashes + (starts & RPCLINE_EVEN_BITS));
    uint64_t odd_runs = backslashes & ~even_runs;
    return ((even_runs << 1) & ~RPCLINE_EVEN_BITS) | ((odd_runs << 1) & RPCLINE_EVEN_BITS);
}
/* Where the blocks stopped, fewer than 64 bytes from the end: back to where nothing runs
   in from before, the escape or the UTF-8 sequence that runs past the last block (which
   checked that it is a lead byte's). */
static inline const unsigned char *rpcline_clean_start(const unsigned char *p, uint64_t carry,
                                                       uint64_t last_high) {
    if (carry)
        return p - 1;
    if (last_high >> 61) {
        if (p[-1] >= 0xC0)
            return p - 1;
        if (p[-2] >= 0xE0)
            return p - 2;
        if (p[-3] >= 0xF0)
            return p - 3;
    }
    return p;
}

#define RPCLINE_NAME(x) rpcline_sse2_##x
#define RPCLINE_ATTR
#define V __m128i
#define W 16
#define LOAD(p) _mm_loadu_si128((const __m128i *)(p))
#define SET1 _mm_set1_epi8
#define EQ _mm_cmpeq_epi8
#define GT _mm_cmpgt_epi8
#define OR _mm_or_si128
#define AND _mm_and_si128
#define ANDNOT _mm_andnot_si128
#define XOR _mm_xor_si128
#define MOVEMASK _mm_movemask_epi8
#include "scan_long_blocks.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && defined(__linux__)
/* Compiled for AVX2 function by function, and only run where the CPU says it has it.
   Not on macOS, where __builtin_cpu_supports needs a runtime the wheels may not link. */
#include <immintrin.h>
#define RPCLINE_AVX2 1
#define RPCLINE_NAME(x) rpcline_avx2_##x
#define RPCLINE_ATTR __attribute__((target("avx2")))
#define V __m256i
#define W 32
#define LOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define SET1 _mm256_set1_epi8
#define EQ _mm256_cmpeq_epi8
#define GT _mm256_cmpgt_epi8
#define OR _mm256_or_si256
#define AND _mm256_and_si256
#define ANDNOT _mm256_andnot_si256
#define XOR _mm256_xor_si256
#define MOVEMASK _mm256_movemask_epi8
#define RPCLINE_LOOKUP 1
#define SHUFFLE _mm256_shuffle_epi8
#define TABLE16(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)
#define SRLI16_4(v) _mm256_srli_epi16((v), 4)
#define SUBS_EPU8 _mm256_subs_epu8
#include "scan_long_blocks.h"
static inline int rpcline_avx2_supported(void) { return __builtin_cpu_supports("avx2"); }

/* 0xFF for each quote, backslash, control character and non-ASCII byte of the 32 bytes
   at p: rpcline_special_bytes at twice the width, with one compare fewer. A byte looks
   up its low nibble in `table` (0x22 at 2, 0x5C at 12, 0 elsewhere) and only the quote
   and the backslash equal what they find (and NUL, a control character: no other byte
   is 0; a byte with its high bit set finds 0, so it equals nothing). A signed compare
   with `space` (0x20 in every byte) finds control characters and non-ASCII bytes at
   once. */
__attribute__((target("avx2")))
static inline __m256i rpcline_avx2_special(const unsigned char *p, __m256i table, __m256i space) {
    __m256i v = _mm256_loadu_si256((const __m256i *)p);
    return _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, v), v),
                           _mm256_cmpgt_epi8(space, v));
}
/* rpcline_sse2_plain_run with AVX2: 128 bytes a step in 30 instructions (0.23 a byte,
   against 0.78 for SSE2's 64-byte steps), then 32, then one 16-byte block. Large tool
   results are mostly plain text, and this loop is nearly all of routing them. */
__attribute__((target("avx2")))
static const unsigned char *rpcline_avx2_plain_run(const unsigned char *p,
                                                   const unsigned char *end) {
    __m256i table = _mm256_setr_epi8(0, 0, 0x22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x5C, 0, 0, 0,
                                     0, 0, 0x22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x5C, 0, 0, 0);
    __m256i space = _mm256_set1_epi8(0x20);
    size_t steps = (size_t)(end - p) / 128;  /* counted down: 3 instructions of loop a step */
    unsigned int m;
    /* GCC turns `0x20 > v` with a known constant into min and equal, one instruction more
       a vector: an empty asm hides the value. */
    __asm__("" : "+x"(space));
    for (; steps; steps--, p += 128) {
        __m256i a = rpcline_avx2_special(p, table, space);
        __m256i b = rpcline_avx2_special(p + 32, table, space);
        __m256i c = rpcline_avx2_special(p + 64, table, space);
        __m256i d = rpcline_avx2_special(p + 96, table, space);
        __m256i any = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
        /* as rpcline_sse2_plain_run: 2 KB ahead, each of the two cache lines */
        _mm_prefetch((const char *)(p + 2048), _MM_HINT_T0);
        _mm_prefetch((const char *)(p + 2048 + 64), _MM_HINT_T0);
        if (!_mm256_testz_si256(any, any)) {
            uint64_t found = (uint64_t)(uint32_t)_mm256_movemask_epi8(a)
                | ((uint64_t)(uint32_t)_mm256_movemask_epi8(b) << 32);
            if (found)
                return p + rpcline_ctz64(found);
            found = (uint64_t)(uint32_t)_mm256_movemask_epi8(c)
                | ((uint64_t)(uint32_t)_mm256_movemask_epi8(d) << 32);
            return p + 64 + rpcline_ctz64(found);
        }
    }
    for (; end - p >= 32; p += 32) {
        m = (unsigned int)_mm256_movemask_epi8(rpcline_avx2_special(p, table, space));
        if (m)
            return p + rpcline_low32(m);
    }
    if (end - p >= 16) {
        m = rpcline_special16(p);
        if (m)
            return p + rpcline_low32(m);
        p += 16;
    }
    return p;
}
#else
#define RPCLINE_AVX2 0
static inline int rpcline_avx2_supported(void) { return 0; }
#endif

/* The block scan in use: the scanner sets it at import (tests switch it). */
static int rpcline_long_path = RPCLINE_PATH_SSE2;

/* From p, where no escape or UTF-8 sequence runs in from before (and which has three
   readable bytes before it), over whole 64-byte blocks: the first byte the blocks do not
   clear. That is the closing quote; or the backslash of an escape other than a
   one-letter one (a Unicode escape, or an error), for the exact scan to take; or, with
   fewer than 64 bytes left, a byte where again nothing runs in from before. NULL when a
   control character or invalid UTF-8 comes first: the caller rescans the string exactly,
   to find and word the first error as the twin does. *flags gains RPCLINE_ESCAPED and
   RPCLINE_NON_ASCII for the bytes cleared. */
static inline const unsigned char *rpcline_long_string(const unsigned char *p,
                                                       const unsigned char *end,
                                                       int *flags) {
#if RPCLINE_AVX2
    if (rpcline_long_path == RPCLINE_PATH_AVX2)
        return rpcline_avx2_long_string(p, end, flags);
#endif
    return rpcline_sse2_long_string(p, end, flags);
}
/* The first byte from p that stops a string body or is non-ASCII, looking in whole
   16-byte blocks only; else the start of the last, incomplete block. Most strings
   end, or meet their next escape, within two blocks: those are tested one at a time,
   inline (a 64-byte step costs four). Longer runs of plain text go on in the block scan
   in use, SSE2 or AVX2, as long strings do. */
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
#if RPCLINE_AVX2
    if (rpcline_long_path == RPCLINE_PATH_AVX2)
        return rpcline_avx2_plain_run(p, end);
#endif
    return rpcline_sse2_plain_run(p, end);
}
#else
#define RPCLINE_AVX2 0
static int rpcline_long_path = RPCLINE_PATH_NONE;
static inline int rpcline_avx2_supported(void) { return 0; }
static inline const unsigned char *rpcline_long_string(const unsigned char *p,
                                                       const unsigned char *end,
                                                       int *flags) {
    (void)end; (void)flags; return p;
}
static inline const unsigned char *rpcline_plain_blocks(const unsigned char *p,
                                                        const unsigned char *end) {
    (void)end; return p;
}
#endif /* RPCLINE_SIMD */

#endif /* RPCLINE_SCAN_LONG_H */
