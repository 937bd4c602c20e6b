// params.h: where a module's parameters come from.
//
// The notebook draws them (`torch.manual_seed(123); torch.rand(d_in, d_out)`,
// `nn.Linear(d_in, d_out)`); a chapter either reads what PyTorch drew from the
// fixture, or, with --seed, draws them itself exactly as PyTorch does. The
// modules in self_attention.h only ask a ParamSource and never know which.
#ifndef LITATTN_PARAMS_H
#define LITATTN_PARAMS_H

#include "linear.h"
#include "random_source.h"
#include "tensor.h"

typedef struct ParamSource ParamSource;
struct ParamSource {
    // torch.nn.Parameter(torch.rand(rows, cols)), stored as `name`
    Tensor (*rand)(ParamSource *ps, const char *name, int rows, int cols);
    // nn.Linear(in, out, bias), stored as `name.weight` (out, in) and `name.bias` (out,)
    Linear (*linear)(ParamSource *ps, const char *name, int in, int out, int bias);
    // Called with every parameter made, e.g. to --dump it.
    void (*made)(const char *name, Tensor t);
    RandomSource *rng;  // for drawn parameters
};

// Drawn parameters: a draw from `rng` per element, in PyTorch's order.
ParamSource params_drawn(RandomSource *rng, void (*made)(const char *, Tensor));

static inline Tensor param_rand(ParamSource *ps, const char *name, int rows, int cols) {
    return ps->rand(ps, name, rows, cols);
}

static inline Linear param_linear(ParamSource *ps, const char *name, int in, int out, int bias) {
    return ps->linear(ps, name, in, out, bias);
}

#endif
