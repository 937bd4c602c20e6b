// keep.c: see keep.h.
#include "keep.h"

static Dump *dump;

void keep_begin(Dump *d) { dump = d; }

void keep_as(const char *name, const char *role, Tensor t) {
    if (dump) dump_write(dump, name, role, t);
}

void keep(const char *name, Tensor t) { keep_as(name, "output", t); }

void keep_long(const char *name, LongTensor t) {
    if (dump) dump_write_long(dump, name, "output", t);
}

static void record(void *ctx, const char *name, Tensor t) {
    (void)ctx;
    keep(name, t);
}

const Recorder *keep_recorder(void) {
    // Without --dump, one that keeps nothing.
    static const Recorder recorder = {record, NULL}, nobody = {NULL, NULL};
    return dump ? &recorder : &nobody;
}

ComputeMode keep_mode(void) { return (ComputeMode){.attention = dump ? ATTENTION_RECORDED : ATTENTION_FUSED}; }

const Recorder *no_recorder(void) {
    static const Recorder nobody = {NULL, NULL};
    return &nobody;
}
