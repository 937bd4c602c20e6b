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
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}
