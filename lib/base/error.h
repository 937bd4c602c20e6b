// error.h: how a litattn program stops: one line on stderr, prefixed with
// the program's name, and an exit code that says whose fault it is; and how
// any text that came from a file or a command line is shown safely.
#ifndef LITATTN_ERROR_H
#define LITATTN_ERROR_H

#include <limits.h>
#include <stddef.h>
#include <stdnoreturn.h>

// 1: a file or a value given was wrong; 2: the command line was; 3: the
// system had no memory for what was asked; 4: litattn itself is wrong (a
// bug: the line names the source file and line).
enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2, EXIT_NO_MEMORY = 3, EXIT_INTERNAL = 4 };

// The longest name of a dataset, attribute or group that litattn asks a
// file for (a longer one is refused, in a line that names its length).
#define ERROR_NAME_MAX 255
// A buffer that holds any one-line message whole, its cause included: a path
// of up to PATH_MAX bytes, three names of up to ERROR_NAME_MAX bytes, and
// what was expected and found, every byte possibly escaped to four
// (text_escape). Messages are built to fit it, never cut to it.
#define ERROR_LINE_LEN (4 * (PATH_MAX + 3 * ERROR_NAME_MAX + 1024))

void error_set_program(const char *argv0);
// Prints "<program>: <message>" on stderr, escaped by text_escape, and exits
// with `code`. Flushes stdout and runs the cleanup functions first, so the
// line comes after what was printed and an unfinished --dump is gone.
noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// "out of memory: expected <bytes> bytes for <what>, found none", exit 3
// (bytes 0: a size the caller does not know, "expected memory for <what>").
noreturn void die_oom(size_t bytes, const char *what);
// "internal error at <file>:<line>: <message>", exit 4: a state no input can
// bring about. __FILE__ is relative to the repository (the build maps the
// source directory away with -fmacro-prefix-map).
#define die_internal(...) die_internal_at(__FILE__, __LINE__, __VA_ARGS__)
noreturn void die_internal_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
// The name the program's lines start with.
const char *error_program(void);

// Registers fn to run when the program ends early (die, a reader that closed
// the pipe); later registrations run first, each once.
void error_on_cleanup(void (*fn)(void));
void error_cleanup(void);
// Tells die() that stdout is closed and must not be flushed any more.
void error_stdout_closed(void);
// How messages about the data being computed name where it came from (the
// chapter runtime sets the fixture's path; "the input" until then): a shape
// that cannot be computed is the input's fault, and the message says whose.
void error_set_input(const char *label);
const char *error_input(void);

// Copies `in` to `out` (at most len - 1 bytes and a NUL; len 0 writes
// nothing) with every byte a terminal could act on written as \xNN:
//   C0 controls 0x00-0x1f (newline, tab, ESC, ...) and DEL 0x7f;
//   C1 controls, both as raw bytes 0x80-0x9f (an 8-bit terminal reads 0x9b
//   as CSI) and as UTF-8 U+0080-U+009F (0xc2 0x80-0x9f);
//   any other byte that is not part of well-formed UTF-8.
// Well-formed UTF-8 above U+009F and printable ASCII pass unchanged, so the
// escaping is idempotent (a backslash is not escaped). An escape or a UTF-8
// sequence is never cut in half at the end of the buffer. Returns the length
// the whole escaped text has (as snprintf does), so a caller can tell it was cut.
size_t text_escape(char *out, size_t len, const char *in);

#endif
