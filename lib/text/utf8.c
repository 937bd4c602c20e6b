// utf8.c: UTF-8 validation with Python's error offsets (see utf8.h).
#include "utf8.h"

#include <string.h>

// The length of the well-formed sequence that lead byte c starts (1..4), or
// 0 if c can start none: 0x80..0xBF are continuation bytes, 0xC0 and 0xC1
// could only start overlong 2-byte forms, 0xF5..0xFF only code points above
// U+10FFFF.
static size_t sequence_length(unsigned char c) {
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return 2;
    if (c < 0xF0) return 3;
    if (c < 0xF5) return 4;
    return 0;
}

// The range [*lo, *hi] of the second byte after lead byte c (Table 3-7):
// narrower than 0x80..0xBF after E0 (no overlongs), ED (no surrogates),
// F0 (no overlongs) and F4 (nothing above U+10FFFF).
static void second_byte_range(unsigned char c, unsigned char *lo, unsigned char *hi) {
    *lo = 0x80;
    *hi = 0xBF;
    if (c == 0xE0) *lo = 0xA0;
    else if (c == 0xED) *hi = 0x9F;
    else if (c == 0xF0) *lo = 0x90;
    else if (c == 0xF4) *hi = 0x8F;
}

// How many bytes of the sequence starting at s (avail bytes left, lead byte
// already known to start one of length n >= 2) are well-formed so far: n if
// the whole sequence is, else the length of the maximal subpart (>= 1).
static size_t valid_prefix(const unsigned char *s, size_t avail, size_t n) {
    unsigned char lo, hi;
    second_byte_range(s[0], &lo, &hi);
    for (size_t k = 1; k < n; k++) {
        if (k >= avail) return k;
        if (s[k] < lo || s[k] > hi) return k;
        lo = 0x80;  // bytes after the second: any continuation byte
        hi = 0xBF;
    }
    return n;
}

bool utf8_check(const unsigned char *s, size_t len, size_t *bad_start, size_t *bad_end) {
    size_t i = 0;
    while (i < len) {
        // ASCII eight bytes at a time while no byte has its top bit set.
        while (len - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & UINT64_C(0x8080808080808080)) break;
            i += 8;
        }
        if (i >= len) break;
        size_t n = sequence_length(s[i]);
        size_t ok = n <= 1 ? n : valid_prefix(s + i, len - i, n);
        if (n == 0 || ok < n) {
            if (bad_start) *bad_start = i;
            if (bad_end) *bad_end = i + (ok > 0 ? ok : 1);
            return false;
        }
        i += n;
    }
    return true;
}
