// utf8.h: UTF-8 validation as Python's bytes.decode('utf-8') does it,
// and decoding of text already validated.
//
// Well-formed UTF-8 is the Unicode Standard's Table 3-7: no overlong forms,
// no surrogates (U+D800..U+DFFF), nothing above U+10FFFF. On the first
// ill-formed sequence Python raises UnicodeDecodeError with .start = the
// offset where that sequence starts and .end = .start + the length of its
// "maximal subpart" (the longest prefix that could still have begun a
// well-formed sequence, at least one byte); utf8_check reports the same
// two offsets.
#ifndef LITATTN_UTF8_H
#define LITATTN_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// True if s[0..len) is well-formed UTF-8. Otherwise false, with *bad_start
// and *bad_end (either may be NULL) set to Python's UnicodeDecodeError
// .start and .end for the same bytes.
bool utf8_check(const unsigned char *s, size_t len, size_t *bad_start, size_t *bad_end);

// The code point whose well-formed encoding starts at s (at most 4 bytes,
// all inside the validated text); *n receives its length in bytes.
static inline uint32_t utf8_decode(const unsigned char *s, size_t *n) {
    unsigned char c = s[0];
    if (c < 0x80) {
        *n = 1;
        return c;
    }
    if (c < 0xE0) {
        *n = 2;
        return ((uint32_t)(c & 0x1F) << 6) | (s[1] & 0x3Fu);
    }
    if (c < 0xF0) {
        *n = 3;
        return ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3Fu);
    }
    *n = 4;
    return ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
           ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3Fu);
}

#endif
