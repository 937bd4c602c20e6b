// keep.c: see keep.h.
#include "keep.h"

#include <stdio.h>

#include "dump.h"
#include "error.h"
#include "runtime.h"

void keep_as(const char *name, const char *role, Tensor t) {
    Dump *d = runtime_dump();
    if (d) dump_write(d, name, role, t);
}

void keep(const char *name, Tensor t) { keep_as(name, "output", t); }

void keep_local(const char *module, const char *local, Tensor t) {
    char name[256];
    if (snprintf(name, sizeof name, "%s.%s", module, local) >= (int)sizeof name)
        die(EXIT_BAD_INPUT, "a kept name longer than %zu characters: %s.%s", sizeof name - 1, module, local);
    keep(name, t);
}
