// config.h: what a chapter takes from its fixture besides what was drawn at
// random: input tensors, and the notebook's settings.
//
// A setting is written with the book's value, so the chapter reads like the
// cell (`int d_out = setting_int("d_out", 2);` is `d_out = 2`). The value the
// fixture holds is the one used: the book's in the book's variant, another in
// a sweep configuration; where it differs from the book's, the chapter says
// so in a line of its output ("# d_out = 16 here; the book has 2").
//
// Every attribute is checked for type and range before it is used (the table
// in settings.c), and every dataset for type and shape; a failure is one line
// naming the file, the attribute or dataset, what was expected and found.
#ifndef LITATTN_CONFIG_H
#define LITATTN_CONFIG_H

#include <stdbool.h>

#include "run.h"
#include "settings.h"
#include "tensor.h"

// Each reads the run's fixture (run->fixture); a chapter calls them without
// the run (chapter.h passes its own).

// The fixture's dataset `name`, float32 of shape `want` (SIZE_ANY: any length
// on that axis). Kept for --dump with role "input".
Tensor input_tensor(Run *run, const char *name, Size want);
bool has_input(const Run *run, const char *name);

// An output the fixture records (a gradient): float32 of shape `want`, or,
// too large to commit, a digest "<name>.sha256" with "<name>.shape" that
// shape. Only the record is checked, not its values; a fixture without it,
// or with another type or shape, ends the chapter in one line. With sizes
// of one's own (--context-len, --batch-size) nothing is checked: the
// fixture's outputs are of the book's sizes.
void expect_output(const Run *run, const char *name, Size want);

// The command line's value of an int setting (--context-len N is
// context_len, --batch-size B batch_size), when given, else the fixture's;
// with the note where it is not the book's.
int setting_int(const Run *run, const char *name, int book);
// setting_int of a count that must divide `width` (num_heads of embed_dim:
// `assert d_out % num_heads == 0`), refused in one line if it does not.
int setting_int_dividing(const Run *run, const char *name, int book, int width, const char *width_name);
// The value setting_int would give, checked as it would be, without its note.
int setting_int_silent(const Run *run, const char *name, int book);
double setting_float(const Run *run, const char *name, double book);
bool setting_bool(const Run *run, const char *name, bool book);

#endif
