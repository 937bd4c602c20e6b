// kernels.h: the arithmetic, on flat row-major float arrays, written to give
// the same float32 bits as PyTorch 1.13's CPU build (AVX2 kernels, reference
// BLAS). lib/NUMERICS.md gives, per family of operations, the torch code path
// and the test that proves it; the comment above each kernel gives the order
// of operations it copies.
#ifndef LITATTN_KERNELS_H
#define LITATTN_KERNELS_H

// a (M, K) @ b (K, N) -> out (M, N)
void matmul(float *out, const float *a, const float *b, int M, int K, int N);
// batch independent products: a[i] (M, K) @ b[i] (K, N) -> out[i] (M, N)
void bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N);
// x (M, K) @ w^T, w (N, K), plus bias (N) or NULL -> out (M, N): nn.Linear's forward
void matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K, int N);
// a (M, N) -> out (N, M)
void transpose(float *out, const float *a, int M, int N);
// a (n,) . b (n,) -> scalar: torch.dot
float dot(const float *a, const float *b, int n);
// x (n,) -> sum: Tensor.sum() over n contiguous values
float sum(const float *x, int n);
// x (rows, n) -> out (rows,): x.sum(dim=-1)
void sum_rows(float *out, const float *x, long rows, int n);
// elementwise, each one rounding: out = a op b, a and b (n,)
void mul_elementwise(float *out, const float *a, const float *b, long n);
void div_elementwise(float *out, const float *a, const float *b, long n);
void add_elementwise(float *out, const float *a, const float *b, long n);
// x (n,) op s -> out (n,): a tensor and a scalar (0-d tensor or Python float as float32)
void div_scalar(float *out, const float *x, float s, long n);
void mul_scalar(float *out, const float *x, float s, long n);
void add_scalar(float *out, const float *x, float s, long n);
// exp(x) elementwise -> out (n,): torch.exp
void exp_elementwise(float *out, const float *x, long n);
// softmax over one row x (n,) -> out (n,): torch.softmax(dim=-1)
void softmax_row(float *out, const float *x, int n);
// x (rows, n) -> out (rows, n): softmax of every row
void softmax_rows(float *out, const float *x, long rows, int n);
// x (outer, n, inner) -> out: softmax over the middle axis (a dim that is not the last)
void softmax_dim(float *out, const float *x, long outer, int n, long inner);

#endif
