// gemm.h: the products, forward and backward. The scalar reference
// (gemm.c), in the float order of PyTorch 1.13's CPU build (netlib BLAS):
// every output one chain from +0 over the contracted index, ascending, each
// product rounded then added, a Linear's bias last. The fast versions
// (gemm_fast.c: blocked, packed, register tiles of gemm_simd.c, threads)
// give the same bits on every path and thread count, and fall back to the
// reference for small sizes and on the scalar path.
#ifndef LITATTN_GEMM_H
#define LITATTN_GEMM_H

// --- reference: forward ---
// a (M, K) @ b (K, N) -> out (M, N)
void gemm_matmul(float *out, const float *a, const float *b, int M, int K, int N);
// batch independent products: a[i] (M, K) @ b[i] (K, N) -> out[i] (M, N)
void gemm_bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N);
// x (M, K) @ w^T, w (N, K), plus bias (N) or NULL -> out (M, N): nn.Linear's forward
void gemm_matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K, int N);
// a (n,) . b (n,) -> scalar: torch.dot
float gemm_dot(const float *a, const float *b, int n);

// --- reference: backward (assigned outputs; sums from +0) ---
// g (M, N) @ b^T, b (K, N) -> da (M, K): matmul's input gradient
void gemm_matmul_backward_a(float *da, const float *g, const float *b, int M, int K, int N);
// a^T @ g, a (M, K), g (M, N) -> db (K, N): matmul's other input gradient
void gemm_matmul_backward_b(float *db, const float *a, const float *g, int M, int K, int N);
// rows [k0, k1) of gemm_matmul_backward_b's db, into db_rows (k1 - k0, N)
void gemm_matmul_backward_b_rows(float *db_rows, const float *a, const float *g, int M, int K, int N, int k0, int k1);
// batch independent products out[i] = a[i] (M, K) @ b[i] (K, N), g (batch, M, N):
// da (batch, M, K), db (batch, K, N); either may be NULL
void gemm_bmm_backward(float *da, float *db, const float *g, const float *a, const float *b, long batch, int M, int K,
                  int N);
// nn.Linear: y (rows, out_f) = x (rows, in_f) @ w^T (+ bias), w (out_f, in_f).
// dy (rows, out_f), w (out_f, in_f) -> dx (rows, in_f) = dy @ w
void gemm_linear_backward_x(float *dx, const float *dy, const float *w, long rows, int in_f, int out_f);
// dy (rows, out_f), x (rows, in_f) -> dw (out_f, in_f) = dy^T @ x
void gemm_linear_backward_w(float *dw, const float *dy, const float *x, long rows, int in_f, int out_f);

// --- fast, the same bits (gemm_fast.c) ---
// out (M, N) = a (M, K) @ b (K, N): matmul()
void gemm_fast_matmul(float *out, const float *a, const float *b, int M, int K, int N);
// out (M, N) = x (M, K) @ w^T, w (N, K), + bias (N) or NULL: gemm_matmul_wt_bias()
void gemm_fast_matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K, int N);
// out (batch, M, N) = a (batch, M, K) @ b (batch, K, N), one independent product per item
void gemm_fast_bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N);
// out (batch, M, N) = a (batch, M, K) @ b^T, b (batch, N, K): q @ k.transpose(-2, -1)
void gemm_fast_bmm_wt(float *out, const float *a, const float *b, long batch, int M, int K, int N);
// out (K, N) = a (M, K)^T @ b (M, N): gemm_matmul_backward_b, gemm_linear_backward_w
void gemm_fast_matmul_at(float *out, const float *a, const float *b, int M, int K, int N);
// out (batch, K, N) = a (batch, M, K)^T @ b (batch, M, N), one product per item
void gemm_fast_bmm_at(float *out, const float *a, const float *b, long batch, int M, int K, int N);

#endif
