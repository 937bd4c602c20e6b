// strbuf.c: see strbuf.h.
#include "strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

char *sb_reserve(StrBuf *b, size_t more) {
    if (more > SIZE_MAX / 2 - b->len) die_oom(SIZE_MAX, "a string");
    size_t need = b->len + more + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < need) cap *= 2;
        char *s = xrealloc(b->s, cap, "a string");
        b->s = s;
        b->cap = cap;
    }
    return b->s + b->len;
}

void sb_grew(StrBuf *b, size_t written) {
    b->len += written;
    b->s[b->len] = '\0';
}

void sb_put(StrBuf *b, const void *bytes, size_t n) {
    char *at = sb_reserve(b, n);
    if (n) memcpy(at, bytes, n);
    sb_grew(b, n);
}

void sb_puts(StrBuf *b, const char *text) { sb_put(b, text, strlen(text)); }

void sb_putc(StrBuf *b, char c) { sb_put(b, &c, 1); }

void sb_spaces(StrBuf *b, int n) {
    if (n <= 0) return;
    memset(sb_reserve(b, (size_t)n), ' ', (size_t)n);
    sb_grew(b, (size_t)n);
}

void sb_printf(StrBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) die_internal("cannot format '%s'", fmt);
    char *at = sb_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(at, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_grew(b, (size_t)n);
}

const char *sb_str(const StrBuf *b) { return b->s ? b->s : ""; }

char *sb_take(StrBuf *b) {
    if (!b->s) sb_reserve(b, 0), b->s[0] = '\0';
    char *s = b->s;
    *b = (StrBuf){0};
    return s;
}

void sb_clear(StrBuf *b) {
    b->len = 0;
    if (b->s) b->s[0] = '\0';
}

void sb_free(StrBuf *b) {
    free(b->s);
    *b = (StrBuf){0};
}
