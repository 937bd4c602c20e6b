// output.h: the chapter's standard output, where the notebook's cells are
// printed. Every write is checked, and so is the final flush and close: output
// that cannot be written (stdout closed, a full device, an I/O error) ends the
// program with one line on stderr and exit 1, never with exit 0. A reader that
// stops reading (`| head -1`) ends the program quietly, as it ends `yes`:
// killed by SIGPIPE, after the usual cleanup (an unfinished --dump is removed).
#ifndef LITATTN_OUTPUT_H
#define LITATTN_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "run.h"

// Before anything is printed: stdout must be open; its buffer is the run's.
void output_begin(Run *run);
void output_write(const char *bytes, size_t n);
void output_text(const char *text);
void output_end(void);                       // flush and close stdout, checked
// While quiet, print() writes nothing (a setup cell's output); notes about the
// run (print_note) and markers are still written.
void output_set_quiet(Run *run, bool quiet);
bool output_is_quiet(const Run *run);

#endif
