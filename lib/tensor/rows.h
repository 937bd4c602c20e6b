// rows.h: the row-wise arithmetic, forward and backward: sums, elementwise
// and scalar multiplication, division and addition, exp, the softmax and
// their gradients. The scalar reference (rows.c), in the float order of
// PyTorch 1.13's CPU build (AVX2 kernels, SLEEF); the fast versions
// (rows_fast.c over rows_simd.c, threads over rows) give the same bits on
// every path and thread count, and fall back to the reference for rows
// shorter than 8 and on the scalar path.
#ifndef LITATTN_ROWS_H
#define LITATTN_ROWS_H

#include <stdbool.h>

// --- reference: forward ---
// x (n,) -> sum: Tensor.sum() over n contiguous values
float rows_sum(const float *x, int n);
// x (rows, n) -> out (rows,): x.sum(dim=-1)
void rows_sum_rows(float *out, const float *x, long rows, int n);
// elementwise, each one rounding: out = a op b, a and b (n,)
void rows_mul(float *out, const float *a, const float *b, long n);
void rows_div(float *out, const float *a, const float *b, long n);
void rows_add(float *out, const float *a, const float *b, long n);
// x (n,) op s -> out (n,): a tensor and a scalar (0-d tensor or Python float as float32)
void rows_div_scalar(float *out, const float *x, float s, long n);
void rows_mul_scalar(float *out, const float *x, float s, long n);
void rows_add_scalar(float *out, const float *x, float s, long n);
// exp(x) elementwise -> out (n,): torch.exp
void rows_exp(float *out, const float *x, long n);
// softmax over one row x (n,) -> out (n,): torch.softmax(dim=-1)
void rows_softmax_row(float *out, const float *x, int n);
// x (rows, n) -> out (rows, n): softmax of every row
void rows_softmax_rows(float *out, const float *x, long rows, int n);
// x (outer, n, inner) -> out: softmax over the middle axis (a dim that is not the last)
void rows_softmax_dim(float *out, const float *x, long outer, int n, long inner);

// --- reference: backward (assigned outputs; sums from +0) ---
// dy (rows, out_f) -> db (out_f,): nn.Linear's bias gradient, the sum over the
// rows. dy_colmajor: torch holds dy as a transposed (column-major) view, which
// changes the order of the sum.
void rows_linear_backward_bias(float *db, const float *dy, long rows, int out_f, bool dy_colmajor);
// g (M, N) row-major -> out (N,): g.sum(0), cascade_sum's outer order
void rows_sum_dim0_rows(float *out, const float *g, long M, int N);
// the same sum of a column-major g: every column summed as Tensor.sum()
void rows_sum_dim0_cols(float *out, const float *g, long M, int N);
// x.sum() -> dx (n,): every element's gradient is the upstream scalar g
void rows_sum_backward(float *dx, float g, long n);
// y, dy, dx (rows, n): softmax over the last dim (y the forward's output)
void rows_softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n);
// y, dy, dx (outer, n, inner): softmax over the middle axis
void rows_softmax_dim_backward(float *dx, const float *dy, const float *y, long outer, int n, long inner);
// g (batch, T, T), in place: +0 where masked_fill_(triu(ones(T, T), 1).bool(), v) wrote v
void rows_masked_fill_causal_backward(float *g, long batch, int T);
// dy, dx (n,): x / s -> dx = dy / s, s the float32 divisor the forward used
void rows_div_scalar_backward(float *dx, const float *dy, float s, long n);
// acc, g (n,): acc = acc + g, a second gradient arriving at one tensor
void rows_accumulate_grad(float *acc, const float *g, long n);

// --- fast, the same bits (rows_fast.c) ---
// out (rows, n) = softmax of each row of x (rows, n): softmax_row() per row
void rows_fast_softmax_rows(float *out, const float *x, long rows, int n);
// out (rows,) = sum of each row of x (rows, n): sum() per row (x.sum(dim=-1))
void rows_fast_sum_rows(float *out, const float *x, long rows, int n);
// out (n,) = e^x (n,): rows_exp() (SLEEF's expf)
void rows_fast_exp(float *out, const float *x, long n);
// out (n,) = x (n,) / s: div_scalar() (a true division each; out may be x)
void rows_fast_div_scalar(float *out, const float *x, float s, long n);
// dx (rows, n) from dy, y (rows, n): rows_softmax_rows_backward
void rows_fast_softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n);

#endif
