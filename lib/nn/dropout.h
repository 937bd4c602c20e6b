// dropout.h: nn.Dropout(p) as the CPU runs it (lib/NUMERICS.md#dropout).
// In training mode with 0 < p < 1 it draws a mask (two 32-bit draws per
// element) from the ParamSource it was given (param_source.h) and returns
// x * mask / (1 - p); in eval mode, with p = 0
// or on an empty input it returns x itself and draws nothing; with p = 1 it
// returns x * 0 and draws nothing.
#ifndef LITATTN_DROPOUT_H
#define LITATTN_DROPOUT_H

#include <stdbool.h>

#include "param_source.h"
#include "tensor.h"

typedef struct {
    char name[96];   // its masks are "<name>.noise", "<name>.noise.2", ...
    double p;
    bool training;   // nn.Module's default: true; eval() clears it
    int calls;       // masks drawn so far
    ParamSource source;  // where the masks come from
} Dropout;

Dropout dropout_new(const ParamSource *ps, const char *name, double p);  // p in [0, 1]
// The next mask, of shape s: bernoulli_(1 - p).div_(1 - p), named
// "<name>.noise" the first time, "<name>.noise.<k>" the k-th.
Tensor dropout_noise(Dropout *d, Size s);
Tensor dropout_forward(Dropout *d, Tensor x);
// `x = self.dropout(x)` where nothing else holds x: frees x if a new tensor replaced it.
Tensor dropout_replace(Dropout *d, Tensor x);
// dropout_forward that also hands back the factor the input was multiplied
// by, for the backward (dx = dy * noise): the mask / (1 - p) drawn, zeros for
// p = 1, and .data NULL when x was returned itself (eval, p = 0, empty).
// x is neither freed nor changed.
Tensor dropout_forward_keep(Dropout *d, Tensor x, Tensor *noise);
// That factor alone, for an input of shape s, drawn as dropout_forward_keep
// draws it: for a forward that applies it itself (ops_fused_attention).
Tensor dropout_factor(Dropout *d, Size s);

#endif
