// param_source.h: where a module's parameters and dropout masks come from.
//
// A module never decides that itself: whoever makes it passes a ParamSource
// down, and the module fills the tensors it made through it, in the order
// torch's __init__ and forward() draw them. Each call names what it fills as
// the fixtures name it ("ca.W_query.weight", "mha.dropout.noise"), so that a
// source can look it up. Two sources exist:
//  - the chapter runtime's (runtime/draws.h): drawn in C by PyTorch's
//    generator with --seed, else read from the fixture; its ctx is the
//    chapter's run (runtime/run.h), whose generator and fixture it uses;
//  - param_source_random below: every value drawn from any RandomSource, as
//    PyTorch's CPU kernels draw it (tests, and code outside a chapter).
#ifndef LITATTN_PARAM_SOURCE_H
#define LITATTN_PARAM_SOURCE_H

#include "random_source.h"
#include "tensor.h"

typedef struct {
    // t.uniform_(from, to) on the parameter `name`: nn.Linear's initialisation.
    void (*uniform_)(void *ctx, const char *name, Tensor t, double from, double to);
    // t = torch.rand(*t.shape): nn.Parameter(torch.rand(d_in, d_out)).
    void (*rand)(void *ctx, const char *name, Tensor t);
    // nn.Dropout(p)'s noise in training mode, bernoulli_(1 - p) then div_(1 - p):
    // two 32-bit draws per element.
    void (*dropout_noise)(void *ctx, const char *name, Tensor noise, double p);
    // t.normal_(mean, std): nn.Embedding's init (normal_(0, 1)), as torch 1.13's
    // CPU kernel draws it (random/normal.h). NULL for a source that cannot.
    void (*normal_)(void *ctx, const char *name, Tensor t, double mean, double std);
    void *ctx;
} ParamSource;

// A source that draws every value from rs (init.h), and reads nothing: the
// names are not used. rs must outlive the modules made with it. It has no
// normal_: torch's normal_ needs the generator itself (its cached normal).
ParamSource param_source_random(RandomSource *rs);

#endif
