// error.h: how a litattn program stops on bad input: one line on stderr,
// prefixed with the program's name, and a non-zero exit.
#ifndef LITATTN_ERROR_H
#define LITATTN_ERROR_H

#include <stddef.h>
#include <stdnoreturn.h>

enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

void error_set_program(const char *argv0);

// Ends the program: runs the cleanup functions (the output printed so far is
// flushed, an unfinished --dump removed), writes "<program>: <message>" on
// stderr as one line (control characters escaped), and exits with `code`
// without running exit handlers (HDF5's may crash after a failed close).
noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Registers fn to run when the program ends early (die, a closed pipe);
// later registrations run first.
void error_on_cleanup(void (*fn)(void));
void error_cleanup(void);
// Tells die() that stdout is closed and must not be flushed any more.
void error_stdout_closed(void);

// Copies `in` into out (len bytes, always NUL-terminated), each control
// character (C0, DEL, C1 as a raw byte or as UTF-8 U+0080..U+009F) written
// as \xNN, so text from a file can never move the cursor, forge a line or
// start an escape sequence. Returns the length written.
size_t text_escape(char *out, size_t len, const char *in);

#endif
