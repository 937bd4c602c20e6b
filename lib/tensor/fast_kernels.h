// fast_kernels.h: fast versions of the kernels of kernels.h (and of the layout
// copies and the dropout noise the attention modules need) that give exactly
// the same float32 bits, for any thread count and on every path.
//
// Each function picks, once, the fastest path this CPU runs: AVX-512
// (F/BW/DQ/VL), AVX2 + FMA, or the scalar kernels of kernels.h (on a Zen 4,
// whose 512-bit instructions are two 256-bit halves, AVX-512 with AVX2's
// register tile for the products). Small sizes go to the scalar kernels
// whatever the path (packing and threads would cost more than they save).
// The environment variable LITATTN_KERNELS=scalar|avx2|avx512|avx512-ymm
// asks for a path; a path the CPU lacks falls back silently to the best one
// it has.
//
// Arrays are flat, row-major, contiguous float32; `out` never overlaps an
// input. Every order of float operations is the reference's (see each kernel
// in fast_kernels_avx2.c): vectors run ACROSS independent outputs, never
// inside one output's sum in another order; threads split rows, heads or
// batches, never a sum.
#ifndef LITATTN_FAST_KERNELS_H
#define LITATTN_FAST_KERNELS_H

#include <stdbool.h>

#include "torch_generator.h"

// out (M, N) = a (M, K) @ b (K, N): matmul()
void fast_matmul(float *out, const float *a, const float *b, int M, int K, int N);
// out (M, N) = x (M, K) @ w^T, w (N, K), + bias (N) or NULL: matmul_wt_bias()
void fast_matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K, int N);
// out (batch, M, N) = a (batch, M, K) @ b (batch, K, N), one independent product per item
void fast_bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N);
// out (batch, M, N) = a (batch, M, K) @ b^T, b (batch, N, K): q @ k.transpose(-2, -1)
void fast_bmm_wt(float *out, const float *a, const float *b, long batch, int M, int K, int N);
// out (rows, n) = softmax of each row of x (rows, n): softmax_row() per row
void fast_softmax_rows(float *out, const float *x, long rows, int n);
// out (rows,) = sum of each row of x (rows, n): sum() per row (x.sum(dim=-1))
void fast_sum_rows(float *out, const float *x, long rows, int n);
// out (n,) = e^x (n,): exp_elementwise() (SLEEF's expf)
void fast_exp(float *out, const float *x, long n);
// out (n,) = x (n,) / s: div_scalar() (a true division each; out may be x)
void fast_div_scalar(float *out, const float *x, float s, long n);
// noise (n,): nn.Dropout(p)'s training-mode noise with keep = 1 - p (double):
// per element in order, r = torch_random64(g), u = (r & (2^53 - 1)) * 2^-53,
// noise = (u < keep ? 1.0f : 0.0f) / (float)keep. g ends as after n calls of
// torch_random64.
void fast_dropout_noise(float *noise, long n, double keep, TorchGenerator *g);
// out (batch, T, D): causal (or full) attention of each item, a block of
// query rows at a time, never a (T, T) tensor: the bits of
//   s = q @ k^T; s[j > i] = -inf (if causal); w = softmax(s / scale, dim=-1);
//   w = w * noise (if noise); out = w @ v
// composed from the kernels above. q, k, v (batch, T, D); noise (batch, T, T)
// or NULL (dropout's factor, drawn beforehand).
void fast_attention(float *out, const float *q, const float *k, const float *v, const float *noise, long batch,
                    int T, int D, float scale, int causal);
// out (N, M) = a (M, N) transposed: transpose()
void fast_transpose(float *out, const float *a, int M, int N);
// out (B, H, T, D) = x (B, T, H, D) with axes 1 and 2 swapped (the heads split)
void fast_split_heads(float *out, const float *x, int B, int T, int H, int D);
// out (B, T, H, D) = x (B, H, T, D) with axes 1 and 2 swapped (the heads merged)
void fast_merge_heads(float *out, const float *x, int B, int H, int T, int D);

// --- backward (backward_kernels.h, the same bits) ---
// out (K, N) = a (M, K)^T @ b (M, N): matmul_backward_b, linear_backward_w
void fast_matmul_at(float *out, const float *a, const float *b, int M, int K, int N);
// out (batch, K, N) = a (batch, M, K)^T @ b (batch, M, N), one product per item
void fast_bmm_at(float *out, const float *a, const float *b, long batch, int M, int K, int N);
// dx (rows, n) from dy, y (rows, n): softmax_rows_backward
void fast_softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n);
// attention_backward, its arguments and bits; w may be NULL (softmax over
// the last dim): each matrix's weights are then computed again from q and k,
// with the forward's bits
void fast_attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                             const float *v, const float *w, const float *noise, long batch, int T, int hd,
                             float scale, bool causal, int softmax_dim);

// The active path: 0 = scalar (kernels.h), 1 = AVX2, 2 = AVX-512, 3 =
// AVX-512 with AVX2's 6 x 16 register tile for the products (which needs
// what AVX-512 needs).
enum { FAST_PATH_SCALAR = 0, FAST_PATH_AVX2 = 1, FAST_PATH_AVX512 = 2, FAST_PATH_AVX512_YMM = 3, FAST_PATHS = 4 };
int fast_kernels_path(void);
const char *fast_kernels_path_name(void);
// "scalar", "avx2", "avx512", "avx512-ymm" (the LITATTN_KERNELS values)
const char *fast_kernels_path_name_of(int path);
// Whether this CPU runs the path.
bool fast_kernels_runs_path(int path);
// The path taken when LITATTN_KERNELS asks for none (the best this CPU has,
// or AVX-512 with AVX2's tile on a Zen 4).
int fast_kernels_preferred_path(void);
// Asks for a path (tests, benchmark); clamps to the best path the CPU has.
void fast_kernels_force_path(int path);
// Threads per call: 1 (the default) or more. The bits never depend on it.
void fast_kernels_set_threads(int n);
int fast_kernels_threads(void);
// Tests only: 1 = ignore the size thresholds, so that every size takes the
// chosen path (no scalar fallback for small sizes) and any work with two or
// more pieces is split over the threads; 0 (the default) = choose by size.
void fast_kernels_ignore_thresholds(int on);

#endif
