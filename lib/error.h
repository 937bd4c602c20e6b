// error.h: how a litattn program stops on bad input: one line on stderr,
// prefixed with the program's name, and a non-zero exit.
#ifndef LITATTN_ERROR_H
#define LITATTN_ERROR_H

#include <stdnoreturn.h>

enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

void error_set_program(const char *argv0);
noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
