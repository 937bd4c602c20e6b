// strbuf.h: one small growable byte string, used wherever text or bytes are
// built up piece by piece (a tensor's repr, a child process's output, what a
// test captured from a chapter). In the spirit of antirez/sds, but a plain
// struct: `s` is always NUL-terminated, `len` bytes long, and may hold NULs.
//
//   StrBuf b = {0};
//   sb_puts(&b, "tensor(");
//   sb_printf(&b, "%d", 6);
//   ... use b.s ...
//   sb_free(&b);
#ifndef LITATTN_STRBUF_H
#define LITATTN_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *s;      // the bytes, NUL-terminated; NULL until the first append
    size_t len;   // bytes held, not counting the terminating NUL
    size_t cap;   // bytes allocated
} StrBuf;

// Each append grows the buffer as needed; out of memory ends the program
// with one line (die), so callers never check.
void sb_put(StrBuf *b, const void *bytes, size_t n);
void sb_puts(StrBuf *b, const char *text);
void sb_putc(StrBuf *b, char c);
void sb_spaces(StrBuf *b, int n);  // n spaces (none if n <= 0)
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3), nonnull(1, 2)));
// Makes room for `more` further bytes and returns where they go; the caller
// writes them, then calls sb_grew(b, written).
char *sb_reserve(StrBuf *b, size_t more);
void sb_grew(StrBuf *b, size_t written);
const char *sb_str(const StrBuf *b);  // "" while empty
char *sb_take(StrBuf *b);             // the malloc'd string, handed to the caller; b is empty again
void sb_clear(StrBuf *b);             // length 0, memory kept
void sb_free(StrBuf *b);

#endif
