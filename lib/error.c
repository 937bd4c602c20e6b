// error.c: one line on stderr and a non-zero exit, for every way input can be bad.
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program = "litattn";

void error_set_program(const char *argv0) {
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    program = slash ? slash + 1 : (argv0 ? argv0 : program);
}

void die(int code, const char *fmt, ...) {
    fflush(stdout);  // what the chapter printed so far comes before the error
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    // Messages quote names and values from files; a newline or a terminal
    // escape among them is shown as '?', so the message stays one plain line.
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    fprintf(stderr, "%s: %s\n", program, msg);
    exit(code);
}
