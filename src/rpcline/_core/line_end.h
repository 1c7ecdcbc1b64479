/* The end of an event-stream line: its first CR or LF, found in one pass where two memchr
   calls would read the line twice, and, for a long data line, copied on as it is looked
   for. AVX2 where the CPU has it (chosen at run time, GCC and clang on Linux x86-64, as
   scan_long.h does), 128 bytes a step; elsewhere, and with -DRPCLINE_NO_SIMD, the caller
   keeps memchr and memcpy (glibc's SSE2 memchr reads one byte value faster than an SSE2
   loop reads two). Plain C99:
   cc -fsyntax-only -Wall -Wextra src/rpcline/_core/line_end.h */
#ifndef RPCLINE_LINE_END_H
#define RPCLINE_LINE_END_H

#include "scan.h"

#if RPCLINE_SIMD && (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) \
    && defined(__linux__)
#include <immintrin.h>
#define RPCLINE_LINE_END_AVX2 1
/* 0xFF for each CR and LF of the 32 bytes at p: a byte's low nibble picks the one byte it
   could be (CR for D, LF for A, a byte no low nibble matches otherwise; vpshufb gives 0 for
   bytes >= 0x80, which no such byte equals), so two instructions test both values. */
__attribute__((target("avx2")))
static inline __m256i rpcline_avx2_line_ends(const unsigned char *p) {
    const __m256i wanted = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, '\n', -1, -1, '\r', -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, '\n', -1, -1, '\r', -1, -1);
    __m256i v = _mm256_loadu_si256((const __m256i *)p);
    return _mm256_cmpeq_epi8(_mm256_shuffle_epi8(wanted, v), v);
}
/* The first CR or LF in [p, end), or end. */
__attribute__((target("avx2")))
static const unsigned char *rpcline_avx2_line_end(const unsigned char *p,
                                                  const unsigned char *end) {
    unsigned int m;
    for (; end - p >= 128; p += 128) {
        __m256i a = rpcline_avx2_line_ends(p), b = rpcline_avx2_line_ends(p + 32);
        __m256i c = rpcline_avx2_line_ends(p + 64), d = rpcline_avx2_line_ends(p + 96);
        __m256i any = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
        if (!_mm256_testz_si256(any, any)) {
            uint64_t low = (uint64_t)(unsigned int)_mm256_movemask_epi8(a)
                | ((uint64_t)(unsigned int)_mm256_movemask_epi8(b) << 32);
            uint64_t high = (uint64_t)(unsigned int)_mm256_movemask_epi8(c)
                | ((uint64_t)(unsigned int)_mm256_movemask_epi8(d) << 32);
            return low ? p + rpcline_ctz64(low) : p + 64 + rpcline_ctz64(high);
        }
    }
    for (; end - p >= 32; p += 32) {
        m = (unsigned int)_mm256_movemask_epi8(rpcline_avx2_line_ends(p));
        if (m)
            return p + rpcline_low32(m);
    }
    for (; p < end; p++)
        if (*p == '\r' || *p == '\n')
            return p;
    return end;
}
/* The same scan, copying [p, end) to dst as it goes, up to the first CR or LF: where that
   byte is, or end. dst has room for end - p bytes; bytes after the CR or LF, up to the end
   of its 128- or 32-byte step, may be written too. One pass over the bytes, where a scan
   and then memcpy make two. */
__attribute__((target("avx2")))
static inline const unsigned char *rpcline_avx2_copy_line(unsigned char *dst,
                                                          const unsigned char *p,
                                                          const unsigned char *end) {
    unsigned int m;
    int i;
    for (; end - p >= 128; p += 128, dst += 128) {
        __m256i any;
        for (i = 0; i < 4; i++)
            _mm256_storeu_si256((__m256i *)(dst + 32 * i),
                                _mm256_loadu_si256((const __m256i *)(p + 32 * i)));
        any = _mm256_or_si256(_mm256_or_si256(rpcline_avx2_line_ends(p),
                                              rpcline_avx2_line_ends(p + 32)),
                              _mm256_or_si256(rpcline_avx2_line_ends(p + 64),
                                              rpcline_avx2_line_ends(p + 96)));
        if (!_mm256_testz_si256(any, any))
            return rpcline_avx2_line_end(p, p + 128);
    }
    for (; end - p >= 32; p += 32, dst += 32) {
        _mm256_storeu_si256((__m256i *)dst, _mm256_loadu_si256((const __m256i *)p));
        m = (unsigned int)_mm256_movemask_epi8(rpcline_avx2_line_ends(p));
        if (m)
            return p + rpcline_low32(m);
    }
    for (; p < end; p++, dst++) {
        if (*p == '\r' || *p == '\n')
            return p;
        *dst = *p;
    }
    return end;
}
static inline int rpcline_line_end_avx2_supported(void) {
    return __builtin_cpu_supports("avx2");
}
#else
#define RPCLINE_LINE_END_AVX2 0
static inline const unsigned char *rpcline_avx2_line_end(const unsigned char *p,
                                                         const unsigned char *end) {
    (void)p; return end;  /* never called: rpcline_line_end_avx2_supported() says 0 */
}
static inline const unsigned char *rpcline_avx2_copy_line(unsigned char *dst,
                                                          const unsigned char *p,
                                                          const unsigned char *end) {
    (void)dst; (void)p; return end;  /* never called, as above */
}
static inline int rpcline_line_end_avx2_supported(void) { return 0; }
#endif

#endif /* RPCLINE_LINE_END_H */
