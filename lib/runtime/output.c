// output.c: see output.h.
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

// EPIPE: the reader is gone. Leave as a closed pipe leaves `yes`: quietly,
// by SIGPIPE, once the cleanup that die() would run has run.
static void reader_gone(void) {
    error_cleanup();
    signal(SIGPIPE, SIG_DFL);
    raise(SIGPIPE);
    _exit(128 + SIGPIPE);
}

static void failed(const char *what) {
    int e = errno;
    if (e == EPIPE) reader_gone();
    die(EXIT_BAD_INPUT, "cannot write the output (stdout): %s failed: %s", what, strerror(e));
}

void output_begin(Run *run) {
    // A closed stdout would let the next file opened take descriptor 1, and
    // the printed cells would go into it: refuse before anything is opened.
    if (fcntl(STDOUT_FILENO, F_GETFD) < 0)
        die(EXIT_BAD_INPUT, "cannot write the output: expected an open stdout, found it closed");
    // Writes to a closed pipe fail with EPIPE instead of killing the program
    // at once, so the cleanup runs first (see reader_gone).
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, run->stdout_buffer, _IOFBF, sizeof run->stdout_buffer);
}

void output_set_quiet(Run *run, bool quiet) { run->quiet = quiet; }
bool output_is_quiet(const Run *run) { return run->quiet; }

void output_write(const char *bytes, size_t n) {
    if (n && fwrite(bytes, 1, n, stdout) != n) failed("write");
}

void output_text(const char *text) { output_write(text, strlen(text)); }

void output_end(void) {
    if (fflush(stdout) != 0) failed("flush");
    error_stdout_closed();
    if (fclose(stdout) != 0) failed("close");
}
