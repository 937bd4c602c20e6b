// backward_kernels.h: the gradients of kernels.h's operations, on flat
// row-major float arrays, giving the same float32 bits as PyTorch 1.13's
// autograd on the CPU (Debian's build: reference BLAS, AVX2 kernels, one
// thread). Each kernel names, in backward_kernels.c, the torch code path
// whose order of float operations it copies.
//
// Conventions: a gradient named d<x> has x's shape; "assigned" outputs are
// overwritten, never added to (a leaf's first gradient is assigned in torch
// too, so a -0.0 survives); sums over a contracted index start at +0.
#ifndef LITATTN_BACKWARD_KERNELS_H
#define LITATTN_BACKWARD_KERNELS_H

#include <stdbool.h>

// --- products: out = a @ b ----------------------------------------------------------
// g (M, N) @ b^T, b (K, N) -> da (M, K): matmul's input gradient
void matmul_backward_a(float *da, const float *g, const float *b, int M, int K, int N);
// a^T @ g, a (M, K), g (M, N) -> db (K, N): matmul's other input gradient
void matmul_backward_b(float *db, const float *a, const float *g, int M, int K, int N);
// batch independent products out[i] = a[i] (M, K) @ b[i] (K, N), g (batch, M, N):
// da (batch, M, K), db (batch, K, N); either may be NULL
void bmm_backward(float *da, float *db, const float *g, const float *a, const float *b, long batch, int M, int K,
                  int N);

// --- nn.Linear: y (rows, out_f) = x (rows, in_f) @ w^T (+ bias), w (out_f, in_f) ------
// dy (rows, out_f), x (rows, in_f), w (out_f, in_f) -> dx (rows, in_f) = dy @ w
void linear_backward_x(float *dx, const float *dy, const float *w, long rows, int in_f, int out_f);
// dy (rows, out_f), x (rows, in_f) -> dw (out_f, in_f) = dy^T @ x
void linear_backward_w(float *dw, const float *dy, const float *x, long rows, int in_f, int out_f);
// dy (rows, out_f) -> db (out_f,): sum over the rows. dy_colmajor: torch holds dy as a
// transposed (column-major) view, which changes the order of the sum.
void linear_backward_bias(float *db, const float *dy, long rows, int out_f, bool dy_colmajor);

// --- reductions -----------------------------------------------------------------------
// g (M, N) row-major -> out (N,): g.sum(0), cascade_sum's outer order
void sum_dim0_rows(float *out, const float *g, long M, int N);
// the same sum of a column-major g: every column summed as Tensor.sum()
void sum_dim0_cols(float *out, const float *g, long M, int N);
// x.sum() -> dx (n,): every element's gradient is the upstream scalar g
void sum_backward(float *dx, float g, long n);

// --- softmax: y the forward's output, dy the upstream grad ---------------------------
// y, dy, dx (rows, n): softmax over the last dim
void softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n);
// y, dy, dx (outer, n, inner): softmax over the middle axis
void softmax_dim_backward(float *dx, const float *dy, const float *y, long outer, int n, long inner);

// --- pointwise ------------------------------------------------------------------------
// g (batch, T, T), in place: +0 where masked_fill_(triu(ones(T, T), 1).bool(), v) wrote v
void masked_fill_causal_backward(float *g, long batch, int T);
// dy, dx (n,): x / s -> dx = dy / s, s the float32 divisor the forward used
void div_scalar_backward(float *dx, const float *dy, float s, long n);
// dy, noise, dx (n,): dropout's x * noise -> dx = dy * noise
void dropout_backward(float *dx, const float *dy, const float *noise, long n);
// acc, g (n,): acc = acc + g, a second gradient arriving at one tensor
void accumulate_grad(float *acc, const float *g, long n);

// --- data movement (no arithmetic) ----------------------------------------------------
// dout (rows, total) -> dpart (rows, width): torch.cat(dim=-1)'s gradient for the
// input at columns offset .. offset + width - 1
void cat_lastdim_backward(float *dpart, const float *dout, long rows, int total, int offset, int width);
// dout (n, m) of torch.stack(n inputs of m floats, dim=0) -> dpart (m,): input i's gradient
void stack_backward(float *dpart, const float *dout, int i, long m);
// transpose's gradient is the transpose back (kernels.h transpose); view's is the
// same floats in the input's shape (no kernel).
// in (b, T, h * hd) -> out (b, h, T, hd): view(b, T, h, hd).transpose(1, 2), contiguous
void heads_split(float *out, const float *in, int b, int T, int h, int hd);
// in (b, h, T, hd) -> out (b, T, h * hd): transpose(1, 2).contiguous().view(b, T, h * hd)
void heads_merge(float *out, const float *in, int b, int T, int h, int hd);

// --- scaled dot-product attention over `batch` matrices ---------------------------------
// Forward: scores = q @ k^T; [masked_fill_ causal -inf]; w = softmax(scores / scale, dim);
// ctx = (w * noise) @ v.  q, k, v, dq, dk, dv (batch, T, hd); w, noise (batch, T, T), noise
// NULL without dropout; dctx (batch, T, hd). softmax_dim: -1 or 2 (last), 1 or -2, 0 or -3
// of the (batch, T, T) scores. dq, dk, dv are assigned.
void attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                        const float *v, const float *w, const float *noise, long batch, int T, int hd, float scale,
                        bool causal, int softmax_dim);

#endif
