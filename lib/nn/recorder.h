// recorder.h: how a module reports the tensors its forward() computed.
//
// forward()'s locals (keys, attn_scores, ...) are what a reader compares with
// PyTorch's, tensor by tensor. A module does not know where they go: whoever
// makes it passes a Recorder down, as llm.c hands its forward pass an
// activations struct. The chapter runtime's writes them to --dump
// (runtime/keep.h; its ctx is the chapter's run, whose dump it writes to); a
// Recorder whose `record` is NULL keeps nothing.
//
//   RECORD(&m->rec, m->name, attn_scores);     // "ca.attn_scores"
#ifndef LITATTN_RECORDER_H
#define LITATTN_RECORDER_H

#include "tensor.h"

typedef struct {
    // t under `name` ("<module>.<local>"); a name recorded again replaces the
    // earlier value, as a notebook variable does when a later cell assigns it.
    // It copies what it keeps: forward() frees some locals once recorded.
    void (*record)(void *ctx, const char *name, Tensor t);
    void *ctx;
} Recorder;

// Records t as "<module>.<local>"; nothing if rec or rec->record is NULL.
void record_local(const Recorder *rec, const char *module, const char *local, Tensor t);
#define RECORD(rec, module, x) record_local((rec), (module), #x, (x))

#endif
