// error.c: one line on stderr and a non-zero exit, for every way input can be bad.
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *program = "litattn";

void error_set_program(const char *argv0) {
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    program = slash ? slash + 1 : (argv0 ? argv0 : program);
}

enum { MAX_CLEANUPS = 8 };
static void (*cleanups[MAX_CLEANUPS])(void);
static int n_cleanups;

void error_on_cleanup(void (*fn)(void)) {
    if (n_cleanups < MAX_CLEANUPS) cleanups[n_cleanups++] = fn;
}

static int stdout_closed;

void error_stdout_closed(void) { stdout_closed = 1; }

void error_cleanup(void) {
    if (!stdout_closed) fflush(stdout);  // errors writing it are reported elsewhere, or moot now
    // Each runs once, even if a cleanup itself ends in die().
    while (n_cleanups > 0) cleanups[--n_cleanups]();
}

size_t text_escape(char *out, size_t len, const char *in) {
    size_t n = 0;
    if (!len) return 0;
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        unsigned c = *p;
        int control = c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f);
        // U+0080..U+009F in UTF-8: 0xC2 followed by 0x80..0x9F
        int c1_utf8 = c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
        char piece[12];
        size_t k;
        if (c1_utf8) k = (size_t)snprintf(piece, sizeof piece, "\\xc2\\x%02x", p[1]), p++;
        else if (control) k = (size_t)snprintf(piece, sizeof piece, "\\x%02x", c);
        else piece[0] = (char)c, k = 1;
        if (n + k >= len) break;
        memcpy(out + n, piece, k);
        n += k;
    }
    out[n] = '\0';
    return n;
}

void die(int code, const char *fmt, ...) {
    char msg[1024], line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    error_cleanup();  // what the chapter printed so far comes before the error, a --dump is undone
    text_escape(line, sizeof line, msg);
    fprintf(stderr, "%s: %s\n", program, line);
    fflush(stderr);
    _exit(code);
}
