// dump.h: --dump, writing every tensor a chapter computed to an HDF5 file,
// each dataset named as in the fixture (schema: fixtures/README.md).
#ifndef LITATTN_DUMP_H
#define LITATTN_DUMP_H

#include "fixture.h"
#include "tensor.h"

typedef struct Dump Dump;

// Dies with one line if it cannot; refuses the file `input` is read from.
Dump *dump_create(const char *path, const Fixture *input);
// Writes `t` as dataset `name` with attribute role ("input", "weight",
// "output"). A name written again replaces the earlier value, as a notebook
// variable does when a later cell assigns it.
void dump_write(Dump *d, const char *name, const char *role, Tensor t);
void dump_close(Dump *d);

#endif
