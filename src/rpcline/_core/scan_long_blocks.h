/* The 64-byte block scan of long string bodies, written once for any vector width:
   scan_long.h includes this file twice, with SSE2 (4 registers of 16 bytes a block) and
   with AVX2 (2 of 32), after defining
     RPCLINE_NAME(x)   the names of this instance's functions
     RPCLINE_ATTR      attributes of its functions (the AVX2 target)
     V, W              the vector type and its width in bytes
     LOAD(p), SET1(c), EQ(a, b), GT(a, b) (signed), OR, AND, ANDNOT(a, b) (~a & b), XOR,
     MOVEMASK(v)       the intrinsics;
     RPCLINE_LOOKUP    where the vectors can shuffle bytes (AVX2): UTF-8 is checked by
                       table look-ups, with SHUFFLE(table, v), TABLE16(16 bytes),
                       SRLI16_4(v) (16-bit lanes shifted right by 4) and SUBS_EPU8;
                       without it (SSE2) by compares.
   No include guard, by design; the macros are undefined at the end. */

#define RPCLINE_VECTORS (64 / W)

/* 64 bytes in registers. */
typedef struct { V v[RPCLINE_VECTORS]; } RPCLINE_NAME(block);

/* One bit per byte of a block's vectors. */
RPCLINE_ATTR static inline uint64_t RPCLINE_NAME(mask)(const V *v) {
    uint64_t mask = 0;
    int i;
    for (i = 0; i < RPCLINE_VECTORS; i++)
        mask |= (uint64_t)(uint32_t)MOVEMASK(v[i]) << (W * i);
    return mask;
}
RPCLINE_ATTR static inline uint64_t RPCLINE_NAME(equal)(const RPCLINE_NAME(block) *b, char k) {
    V found[RPCLINE_VECTORS];
    int i;
    for (i = 0; i < RPCLINE_VECTORS; i++)
        found[i] = EQ(b->v[i], SET1(k));
    return RPCLINE_NAME(mask)(found);
}
/* Control characters: signed below 0x20, which non-ASCII bytes are too. */
RPCLINE_ATTR static inline uint64_t RPCLINE_NAME(below_space)(const RPCLINE_NAME(block) *b) {
    V found[RPCLINE_VECTORS];
    int i;
    for (i = 0; i < RPCLINE_VECTORS; i++)
        found[i] = GT(SET1(0x20), b->v[i]);
    return RPCLINE_NAME(mask)(found);
}
/* The bytes that no one-letter escape allows after a backslash: not " \ / b f n r t. */
RPCLINE_ATTR static inline uint64_t RPCLINE_NAME(not_letters)(const RPCLINE_NAME(block) *b) {
    static const char letters[] = "\"\\/bfnrt";
    V found[RPCLINE_VECTORS];
    int i, j;
    for (i = 0; i < RPCLINE_VECTORS; i++) {
        found[i] = EQ(b->v[i], SET1(letters[0]));
        for (j = 1; j < 8; j++)
            found[i] = OR(found[i], EQ(b->v[i], SET1(letters[j])));
    }
    return ~RPCLINE_NAME(mask)(found);
}

#ifdef RPCLINE_LOOKUP
/* Where UTF-8 goes wrong in the W bytes at q, one bit per byte, by table look-ups (the
   algorithm of Keiser and Lemire, "Validating UTF-8 in less than one instruction per
   byte", 2021): each byte and the one before it, by three nibbles, fall in classes of
   errors, one bit each, and a bit in all three look-ups is an error of the pair:
   a lead byte without a continuation (TOO_SHORT), a continuation after ASCII (TOO_LONG)
   or after a continuation (TWO_CONTS, which is right as a third or fourth byte: those
   positions come from the lead two or three bytes before, and cancel it), overlong
   forms, surrogates and code points above U+10FFFF. The bit of an error is set at the
   pair's second byte, never after the first byte that breaks the sequence. */
#define RPCLINE_TOO_SHORT 0x01
#define RPCLINE_TOO_LONG 0x02
#define RPCLINE_OVERLONG_3 0x04
#define RPCLINE_TOO_LARGE 0x08
#define RPCLINE_SURROGATE 0x10
#define RPCLINE_OVERLONG_2 0x20
#define RPCLINE_TOO_LARGE_1000 0x40 /* F5..FF 80..8F, with F0 80..8F (OVERLONG_4) */
#define RPCLINE_OVERLONG_4 0x40
#define RPCLINE_TWO_CONTS 0x80
#define RPCLINE_CARRY (RPCLINE_TOO_SHORT | RPCLINE_TOO_LONG | RPCLINE_TWO_CONTS)
RPCLINE_ATTR static inline uint32_t RPCLINE_NAME(utf8_errors)(const unsigned char *q) {
    V input = LOAD(q), prev1 = LOAD(q - 1), nibble = SET1(0x0F);
    /* the byte before, by its high nibble: what it is (ASCII, continuation, a lead) */
    V first_high = SHUFFLE(TABLE16(
        RPCLINE_TOO_LONG, RPCLINE_TOO_LONG, RPCLINE_TOO_LONG, RPCLINE_TOO_LONG,
        RPCLINE_TOO_LONG, RPCLINE_TOO_LONG, RPCLINE_TOO_LONG, RPCLINE_TOO_LONG,
        RPCLINE_TWO_CONTS, RPCLINE_TWO_CONTS, RPCLINE_TWO_CONTS, RPCLINE_TWO_CONTS,
        RPCLINE_TOO_SHORT | RPCLINE_OVERLONG_2,
        RPCLINE_TOO_SHORT,
        RPCLINE_TOO_SHORT | RPCLINE_OVERLONG_3 | RPCLINE_SURROGATE,
        RPCLINE_TOO_SHORT | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000 | RPCLINE_OVERLONG_4),
        AND(SRLI16_4(prev1), nibble));
    /* the byte before, by its low nibble: which lead it is (C0, C1, E0, ED, F0, F4, F5..) */
    V first_low = SHUFFLE(TABLE16(
        RPCLINE_CARRY | RPCLINE_OVERLONG_3 | RPCLINE_OVERLONG_2 | RPCLINE_OVERLONG_4,
        RPCLINE_CARRY | RPCLINE_OVERLONG_2,
        RPCLINE_CARRY, RPCLINE_CARRY,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000 | RPCLINE_SURROGATE,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000,
        RPCLINE_CARRY | RPCLINE_TOO_LARGE | RPCLINE_TOO_LARGE_1000),
        AND(prev1, nibble));
    /* this byte, by its high nibble: not a continuation, or which range of them */
    V second_high = SHUFFLE(TABLE16(
        RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT,
        RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT,
        RPCLINE_TOO_LONG | RPCLINE_OVERLONG_2 | RPCLINE_TWO_CONTS | RPCLINE_OVERLONG_3
            | RPCLINE_TOO_LARGE_1000 | RPCLINE_OVERLONG_4,
        RPCLINE_TOO_LONG | RPCLINE_OVERLONG_2 | RPCLINE_TWO_CONTS | RPCLINE_OVERLONG_3
            | RPCLINE_TOO_LARGE,
        RPCLINE_TOO_LONG | RPCLINE_OVERLONG_2 | RPCLINE_TWO_CONTS | RPCLINE_SURROGATE
            | RPCLINE_TOO_LARGE,
        RPCLINE_TOO_LONG | RPCLINE_OVERLONG_2 | RPCLINE_TWO_CONTS | RPCLINE_SURROGATE
            | RPCLINE_TOO_LARGE,
        RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT, RPCLINE_TOO_SHORT),
        AND(SRLI16_4(input), nibble));
    V pairs = AND(AND(first_high, first_low), second_high);
    /* a third or fourth byte is due: a lead E0.. two bytes before, or F0.. three */
    V due = OR(SUBS_EPU8(LOAD(q - 2), SET1((char)(0xE0 - 0x80))),
               SUBS_EPU8(LOAD(q - 3), SET1((char)(0xF0 - 0x80))));
    V errors = XOR(AND(due, SET1((char)0x80)), pairs);
    return ~(uint32_t)MOVEMASK(EQ(errors, SET1(0)));
}
#undef RPCLINE_TOO_SHORT
#undef RPCLINE_TOO_LONG
#undef RPCLINE_OVERLONG_3
#undef RPCLINE_TOO_LARGE
#undef RPCLINE_SURROGATE
#undef RPCLINE_OVERLONG_2
#undef RPCLINE_TOO_LARGE_1000
#undef RPCLINE_OVERLONG_4
#undef RPCLINE_TWO_CONTS
#undef RPCLINE_CARRY
#else
/* Bytes >= k as unsigned numbers, of bytes flipped by 0x80 (which turns unsigned order
   into the signed order the compares use). */
#define RPCLINE_AT_LEAST(u, k) GT((u), SET1((char)(((k) ^ 0x80) - 1)))
/* Where UTF-8 goes wrong in the W bytes at q, one bit per byte: a continuation byte
   where none is due, or none where one is; a byte that is never UTF-8 (C0, C1, F5..FF);
   a second byte out of range after E0, ED, F0 or F4 (overlong forms, surrogates, code
   points above U+10FFFF). What is due at a byte comes from the three bytes before it,
   read from memory: a sequence that runs in from the block before is checked where it
   ends, with no carry to keep. Only the bits up to the first stop of the string count. */
RPCLINE_ATTR static inline uint32_t RPCLINE_NAME(utf8_errors)(const unsigned char *q) {
    V flip = SET1((char)0x80);
    V u = XOR(LOAD(q), flip), before = LOAD(q - 1), u1 = XOR(before, flip);
    V u2 = XOR(LOAD(q - 2), flip), u3 = XOR(LOAD(q - 3), flip);
    /* due: a lead byte one, two or three bytes before (F5..FF are errors anyway) */
    V due = OR(OR(RPCLINE_AT_LEAST(u1, 0xC2), RPCLINE_AT_LEAST(u2, 0xE0)),
               RPCLINE_AT_LEAST(u3, 0xF0));
    V lead = RPCLINE_AT_LEAST(u, 0xC0);
    V continuation = ANDNOT(lead, RPCLINE_AT_LEAST(u, 0x80));
    V never = OR(ANDNOT(RPCLINE_AT_LEAST(u, 0xC2), lead), RPCLINE_AT_LEAST(u, 0xF5));
    V a0 = RPCLINE_AT_LEAST(u, 0xA0), n90 = RPCLINE_AT_LEAST(u, 0x90);
    V range = OR(OR(ANDNOT(a0, EQ(before, SET1((char)0xE0))), AND(a0, EQ(before, SET1((char)0xED)))),
                 OR(ANDNOT(n90, EQ(before, SET1((char)0xF0))), AND(n90, EQ(before, SET1((char)0xF4)))));
    return (uint32_t)MOVEMASK(OR(OR(XOR(due, continuation), never), range));
}
#undef RPCLINE_AT_LEAST
#endif

/* The UTF-8 errors of the 64 bytes at p. Not inlined: its constants would otherwise
   stay in registers across the whole loop and crowd the ASCII path (5 to 7 more
   instructions a block of escaped ASCII text, with AVX2's tables, in callgrind). */
RPCLINE_ATTR static RPCLINE_NOINLINE uint64_t RPCLINE_NAME(utf8_block)(const unsigned char *p) {
    uint64_t errors = 0;
    int i;
    for (i = 0; i < RPCLINE_VECTORS; i++)
        errors |= (uint64_t)RPCLINE_NAME(utf8_errors)(p + W * i) << (W * i);
    return errors;
}

/* See rpcline_long_string in scan_long.h. */
RPCLINE_ATTR static const unsigned char *RPCLINE_NAME(long_string)(const unsigned char *p,
                                                                   const unsigned char *end,
                                                                   int *flags) {
    uint64_t carry = 0;      /* 1: the block's first byte is escaped */
    uint64_t last_high = 0;  /* the non-ASCII bytes of the block before */
    int i;
    for (; end - p >= 64; p += 64) {
        RPCLINE_NAME(block) b;
        uint64_t quotes, backslashes, high, errors, escaped = carry, letters = 0, stops;
        for (i = 0; i < RPCLINE_VECTORS; i++)
            b.v[i] = LOAD(p + W * i);
        quotes = RPCLINE_NAME(equal)(&b, '"');
        backslashes = RPCLINE_NAME(equal)(&b, '\\');
        high = RPCLINE_NAME(mask)(b.v);
        errors = RPCLINE_NAME(below_space)(&b) & ~high;
        _mm_prefetch((const char *)(p + 2048), _MM_HINT_T0); /* as rpcline_plain_blocks */
        if (backslashes | carry) {
            /* A backslash the block before escapes starts no run of its own. */
            backslashes &= ~carry;
            escaped |= rpcline_escaped(backslashes);
            letters = escaped & ~backslashes & RPCLINE_NAME(not_letters)(&b);
            quotes &= ~escaped;
            carry = (backslashes & ~escaped) >> 63;
        }
        if (high | (last_high >> 61)) /* or a sequence from the block before ends here */
            errors |= RPCLINE_NAME(utf8_block)(p);
        last_high = high;
        stops = quotes | letters | errors;
        if (stops) {
            uint64_t first = stops & (0 - stops), before = first - 1; /* the lowest stop */
            if (errors & first)
                return NULL;
            *flags |= (backslashes & before ? RPCLINE_ESCAPED : 0)
                    | (high & before ? RPCLINE_NON_ASCII : 0);
            return p + rpcline_ctz64(first) - (letters & first ? 1 : 0);
        }
        *flags |= (backslashes ? RPCLINE_ESCAPED : 0) | (high ? RPCLINE_NON_ASCII : 0);
    }
    return rpcline_clean_start(p, carry, last_high);
}

#undef RPCLINE_VECTORS
#undef RPCLINE_NAME
#undef RPCLINE_ATTR
#undef V
#undef W
#undef LOAD
#undef SET1
#undef EQ
#undef GT
#undef OR
#undef AND
#undef ANDNOT
#undef XOR
#undef MOVEMASK
#undef RPCLINE_LOOKUP
#undef SHUFFLE
#undef TABLE16
#undef SRLI16_4
#undef SUBS_EPU8
