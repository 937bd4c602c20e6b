// recorder.c: see recorder.h.
#include "recorder.h"

#include <stdio.h>

#include "error.h"

void record_local(const Recorder *rec, const char *module, const char *local, Tensor t) {
    if (!rec || !rec->record) return;
    char name[256];
    if (snprintf(name, sizeof name, "%s.%s", module, local) >= (int)sizeof name)
        die_internal("a kept name longer than %zu characters: %s.%s", sizeof name - 1, module, local);
    rec->record(rec->ctx, name, t);
}
