// error.c: one line on stderr and a non-zero exit, for every way input can be
// bad; and text_escape, the one place that decides what is safe to print.
#include "error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program = "litattn";

void error_set_program(const char *argv0) {
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    program = slash ? slash + 1 : (argv0 ? argv0 : program);
}

// The length of the well-formed UTF-8 sequence at s (2 to 4 bytes) that
// encodes a character above U+009F, or 0: overlong forms, surrogates, code
// points past U+10FFFF, stray continuation bytes and the C1 range all give 0.
static size_t utf8_printable(const unsigned char *s) {
    unsigned c = s[0];
    size_t n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;  // also stops at the NUL
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    if (cp <= 0x9f) return 0;  // U+0080-U+009F: the C1 controls
    return n;
}

size_t text_escape(char *out, size_t len, const char *in) {
    const unsigned char *s = (const unsigned char *)in;
    size_t total = 0, used = 0;
    int full = len == 0;
    while (*s) {
        char piece[16];
        size_t n, consumed;  // bytes written for it, bytes of the input it stands for
        if (*s >= 0x20 && *s < 0x7f) {
            piece[0] = (char)*s, n = consumed = 1;
        } else if ((consumed = utf8_printable(s)) > 0) {
            memcpy(piece, s, consumed), n = consumed;
        } else {
            snprintf(piece, sizeof piece, "\\x%02x", *s);
            n = 4, consumed = 1;
        }
        if (!full && used + n < len) {
            memcpy(out + used, piece, n);
            used += n;
        } else {
            full = 1;  // nothing after a piece that did not fit, so nothing is cut
        }
        total += n;
        s += consumed;
    }
    if (len) out[used] = '\0';
    return total;
}

enum { MAX_CLEANUPS = 8 };
static void (*cleanups[MAX_CLEANUPS])(void);
static int n_cleanups, stdout_closed;

void error_on_cleanup(void (*fn)(void)) {
    if (n_cleanups < MAX_CLEANUPS) cleanups[n_cleanups++] = fn;
}

void error_stdout_closed(void) { stdout_closed = 1; }

static const char *input_label = "the input";
void error_set_input(const char *label) { input_label = label ? label : "the input"; }
const char *error_input(void) { return input_label; }

void error_cleanup(void) {
    if (!stdout_closed) fflush(stdout);  // what the chapter printed so far comes first
    while (n_cleanups > 0) cleanups[--n_cleanups]();
}

const char *error_program(void) { return program; }

// The one line and the exit, for every die*(): `prefix` (file and line of an
// internal error) comes before the message, unescaped.
static noreturn void die_v(int code, const char *prefix, const char *fmt, va_list args) {
    error_cleanup();
    // Sized from the message, so that no cause is ever cut from the line; a
    // line too long for memory falls back to a buffer of ERROR_LINE_LEN.
    static char fallback_msg[ERROR_LINE_LEN], fallback_safe[ERROR_LINE_LEN];
    va_list ap;
    va_copy(ap, args);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t len = n > 0 ? (size_t)n + 1 : 1;
    char *msg = malloc(len);
    if (!msg) msg = fallback_msg, len = sizeof fallback_msg;
    va_copy(ap, args);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    // Messages quote names and values from files and from the command line:
    // escaped, a newline or a terminal control among them cannot reach the
    // terminal, and the message stays one plain line.
    size_t safe_len = text_escape(NULL, 0, msg) + 1;
    char *safe = malloc(safe_len);
    if (!safe) safe = fallback_safe, safe_len = sizeof fallback_safe;
    text_escape(safe, safe_len, msg);
    fprintf(stderr, "%s: %s%s\n", program, prefix, safe);
    if (msg != fallback_msg) free(msg);
    if (safe != fallback_safe) free(safe);
    exit(code);
}

void die(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die_v(code, "", fmt, ap);
}

void die_oom(size_t bytes, const char *what) {
    if (bytes == 0) die(EXIT_NO_MEMORY, "out of memory: expected memory for %s, found none", what);
    if (bytes == SIZE_MAX) die(EXIT_NO_MEMORY, "out of memory: expected more than %zu bytes for %s, found none", bytes, what);
    die(EXIT_NO_MEMORY, "out of memory: expected %zu bytes for %s, found none", bytes, what);
}

void die_internal_at(const char *file, int line, const char *fmt, ...) {
    char prefix[PATH_MAX + 64];
    snprintf(prefix, sizeof prefix, "internal error at %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    die_v(EXIT_INTERNAL, prefix, fmt, ap);
}
