// ops.h: the notebook's torch expressions, one function each, on tensors of
// rank 0 to 4. They check shapes (a mismatch is bad input: one line naming
// the operation and both shapes), allocate the result, call the arithmetic in
// the op families (gemm.h, rows.h, noise.h, layout.h, attend.h), and record the grad_fn torch would print. So a chapter reads like
// its notebook:
//
//   attn_scores = queries @ keys.transpose(1, 2)
//   Tensor attn_scores = torch_matmul(queries, torch_transpose(keys, 1, 2));
//
// Layout operations (transpose, T, stack, cat, the mask slice) copy: every
// tensor here is contiguous, and a copy involves no arithmetic.
#ifndef LITATTN_OPS_H
#define LITATTN_OPS_H

#include <stdbool.h>

#include "tensor.h"

// --- making ----------------------------------------------------------------------
Tensor torch_ones(Size s);                        // torch.ones(*s)
Tensor torch_tril(Tensor a);                      // torch.tril(a): 2-D, keeps the lower triangle
Tensor torch_triu(Tensor a, int diagonal);        // torch.triu(a, diagonal=k)
Tensor torch_stack(int n, const Tensor *ts, int dim);  // torch.stack((t0, t1, ...), dim=dim)
Tensor torch_cat(int n, const Tensor *ts, int dim);    // torch.cat([t0, t1, ...], dim=dim)
#define TENSORS(...) (int)(sizeof((Tensor[]){__VA_ARGS__}) / sizeof(Tensor)), (Tensor[]){__VA_ARGS__}

// --- layout ------------------------------------------------------------------------
Tensor torch_transpose(Tensor a, int dim0, int dim1);  // a.transpose(dim0, dim1)
Tensor torch_T(Tensor a);                         // a.T of a 2-D (or 1-D) tensor
Tensor torch_contiguous(Tensor a);                // a.contiguous(): always already so here
Tensor torch_slice2(Tensor a, int rows, int cols);  // a[:rows, :cols] of a 2-D tensor
Tensor torch_bool(Tensor a);                      // a.bool(): 1 where a != 0, else 0 (a float mask)
Tensor torch_eq_scalar(Tensor a, double s);       // a == s, s a Python float (as float32): 1 where equal, else 0

// --- arithmetic ------------------------------------------------------------------
Tensor torch_matmul(Tensor a, Tensor b);          // a @ b: dot, vector-matrix, mm, batched with broadcast
Tensor torch_dot(Tensor a, Tensor b);             // torch.dot(a, b) of two (n,) -> 0-d
Tensor torch_sum(Tensor a);                       // a.sum() -> 0-d
Tensor torch_sum_dim(Tensor a, int dim, bool keepdim);  // a.sum(dim=-1, keepdim=...) (last dim only)
Tensor torch_mul(Tensor a, Tensor b);             // a * b, broadcasting
Tensor torch_div(Tensor a, Tensor b);             // a / b, broadcasting; a 0-d b divides by its value
Tensor torch_mul_scalar(Tensor a, double s);      // a * s, s a Python float (used as float32)
Tensor torch_div_scalar(Tensor a, double s);      // a / s, s a Python float (used as float32)
Tensor torch_add(Tensor a, Tensor b);             // a + b, broadcasting
void torch_add_(Tensor acc, Tensor b);            // acc += b, in place
Tensor torch_exp(Tensor a);                       // torch.exp(a)
Tensor torch_softmax(Tensor a, int dim);          // torch.softmax(a, dim=dim)
Tensor torch_masked_fill(Tensor a, Tensor mask, float value);  // a.masked_fill(mask, value), mask broadcast
void torch_masked_fill_(Tensor *a, Tensor mask, float value);  // a.masked_fill_(mask, value), in place
bool torch_equal(Tensor a, Tensor b);             // torch.equal(a, b): same shape, every value == (NaN != NaN)

// Whether torch would record autograd history for a result made from t.
bool ops_needs_grad(Tensor t);

// --- attention, fused --------------------------------------------------------
// softmax((q @ k^T)[masked: -inf] / scale, dim=-1) * noise @ v without the
// (T, T) tensors: the same bits as the composed ops (attend_fast). q, k,
// v (..., T, D), the same shape; noise (..., T, T), or an empty tensor
// (.data NULL) when dropout is the identity; causal: -inf where j > i.
Tensor ops_fused_attention(Tensor q, Tensor k, Tensor v, Tensor noise, bool causal, double scale);

#endif
