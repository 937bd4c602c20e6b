// linear.h: nn.Linear, a weight (out, in) and an optional bias (out,).
//
// linear_new draws exactly as nn.Linear(in, out, bias).reset_parameters()
// does (torch-cpu-numerics.md section 3): weight from
// kaiming_uniform_(a=sqrt(5)), out * in draws in row-major order, then the
// bias from U(-1/sqrt(in), 1/sqrt(in)), out draws. With a TorchGenerator
// source seeded like torch.manual_seed, the parameters equal PyTorch's to the
// bit; layers draw in the order they are made, as modules do in __init__.
#ifndef LITATTN_LINEAR_H
#define LITATTN_LINEAR_H

#include "random_source.h"
#include "tensor.h"

typedef struct {
    Tensor weight;  // (out, in)
    Tensor bias;    // (out,), or .data == NULL when bias=False
} Linear;

// nn.Linear(in, out, bias=bias != 0); in >= 1 and out >= 1.
Linear linear_new(int in, int out, int bias, RandomSource *rs);

// A layer from given parameters (e.g. read from a fixture): weight is rank 2
// (out, in); bias is rank 1 (out,) or has .data == NULL for no bias. Keeps
// the tensors (no copy). Dies on a shape mismatch.
Linear linear_from(Tensor weight, Tensor bias);

// y = x @ weight^T (+ bias): x (T, in) -> (T, out); a rank-1 x (in,) gives
// (out,), as nn.Linear does. Dies if x's last dimension is not in.
Tensor linear_forward(const Linear *l, Tensor x);

#endif
