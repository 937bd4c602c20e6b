// linear.h: nn.Linear, a weight (out, in) and an optional bias (out,).
//
// linear_new draws exactly as nn.Linear(in, out, bias).reset_parameters()
// does (lib/NUMERICS.md#uniform-draws-and-initialisation): the weight from
// kaiming_uniform_(a=sqrt(5)), out * in draws in row-major order, then the
// bias from U(-1/sqrt(in), 1/sqrt(in)), out draws, through the ParamSource
// it is given (param_source.h). Seeded like torch.manual_seed, the
// parameters equal PyTorch's to the bit; layers draw in the order they are
// made, as modules do in __init__.
#ifndef LITATTN_LINEAR_H
#define LITATTN_LINEAR_H

#include <stdbool.h>

#include "param_source.h"
#include "tensor.h"

typedef struct {
    char name[96];  // "W_query", "mha.out_proj": its parameters are "<name>.weight", "<name>.bias"
    Tensor weight;  // (out, in), requires grad
    Tensor bias;    // (out,), or .data == NULL when bias=False
} Linear;

// nn.Linear(in, out, bias=bias); in >= 1 and out >= 1. Its parameters come from ps.
Linear linear_new(const ParamSource *ps, const char *name, int in, int out, bool bias);
// The same, as a module's attribute: `self.W_query` of module "ca" is named
// "ca.W_query" (its parameters "ca.W_query.weight", ...), as in a state_dict.
Linear linear_in(const ParamSource *ps, const char *module, const char *attr, int in, int out, bool bias);

// y = x @ weight.T (+ bias): x (..., in) -> (..., out), any rank from 1 to 4.
Linear linear_from(const char *name, Tensor weight, Tensor bias);  // given parameters (Exercise 3.1)
Tensor linear_forward(const Linear *l, Tensor x);

long linear_parameters(const Linear *l);  // weight.numel() + bias.numel()

// The .grad of a Linear's parameters: weight (out, in), bias (out,) (.data NULL without a bias).
typedef struct {
    Tensor weight, bias;
} LinearGrad;

// y = linear_forward(l, x), dy y's gradient (y's shape): the parameters'
// gradients into g (new tensors), and x's: assigned to *dx when dx->data is
// NULL (x's first gradient), else added to it (dx = dx + dy @ weight), as
// torch's InputBuffer adds a later consumer's gradient. dx may be NULL.
// dy_colmajor: torch holds dy as a transposed view (rows.h
// rows_linear_backward_bias), which only changes the bias sum's order.
void linear_backward(const Linear *l, Tensor x, Tensor dy, LinearGrad *g, Tensor *dx, bool dy_colmajor);

#endif
