// keep.c: see keep.h.
#include "keep.h"

void keep_as(Run *run, const char *name, const char *role, Tensor t) {
    if (run->dump) dump_write(run->dump, name, role, t);
}

void keep(Run *run, const char *name, Tensor t) { keep_as(run, name, "output", t); }

void keep_long(Run *run, const char *name, LongTensor t) {
    if (run->dump) dump_write_long(run->dump, name, "output", t);
}

static void record(void *ctx, const char *name, Tensor t) { keep((Run *)ctx, name, t); }

// Keeps nothing: a module told so may skip making tensors only a record
// would read (ops_fused_attention).
static const Recorder nobody = {NULL, NULL};

void keep_begin(Run *run) { run->recorder = (Recorder){record, run}; }

const Recorder *keep_recorder(const Run *run) { return run->dump ? &run->recorder : &nobody; }

const Recorder *no_recorder(void) { return &nobody; }

ComputeMode keep_mode(const Run *run) {
    return (ComputeMode){.attention = run->dump ? ATTENTION_RECORDED : ATTENTION_FUSED};
}
