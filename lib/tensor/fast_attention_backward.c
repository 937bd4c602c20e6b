// fast_attention_backward.c: fast_attention_backward, with the bits of
// backward_kernels.c's attention_backward and in its order, for
//   s = q @ k^T; s[j > i] = -inf (if causal); w = softmax(s / scale, dim);
//   d = w * noise (if noise); ctx = d @ v
// given dctx: d_d = dctx @ v^T, dv = d^T @ dctx; d_w = d_d * noise; d_s by
// softmax's backward; / scale; +0 where masked; dq = d_s @ k, dk = d_s^T @ q.
// One (T, T) matrix at a time (unless the softmax ran over the batch axis),
// the products on fast_gemm.c's blocked product (skipping the causal dead
// triangle where the other operand is finite: a skipped 0 * x = +-0 moves
// no sum from +0), the softmax's backward on fast_rows.c's rows. Without
// the kept weights w, each matrix's are computed again from q and k with
// the forward's bits.
#include "fast_kernels.h"

#include <math.h>

#include "backward_kernels.h"
#include "error.h"
#include "fast_kernels_internal.h"
#include "kernels.h"
#include "tensor.h"

// Whether every matrix of w (batch, T, T) is 0 above its diagonal
static int zero_above(const float *w, long batch, int T) {
    for (long p = 0; p < batch; p++)
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T; j++)
                if (w[(p * T + i) * T + j] != 0.0f) return 0;
    return 1;
}

// attention_backward (backward_kernels.c), its passes in the same order on
// `batch` matrices at once, the products on the fast matmul, the softmax's
// backward on the fast rows. dim: the softmax's, 0-2 of (batch, T, T).
static void attention_backward_matrices(float *dq, float *dk, float *dv, const float *dctx, const float *q,
                                        const float *k, const float *v, const float *w, const float *noise,
                                        long batch, int T, int hd, float scale, bool causal, int dim) {
    // (batch, T, T) temporaries from the tensor pool, which hands back the
    // blocks freed before (the previous matrix's): memory already faulted in
    const long n = batch * T * T;
    Tensor dw_t = tensor_empty(SIZE((int)n)), dz_t = tensor_empty(SIZE((int)n));
    Tensor dropped_t = noise ? tensor_empty(SIZE((int)n)) : (Tensor){0};
    float *dw = dw_t.data, *dz = dz_t.data, *dropped = dropped_t.data;
    const float *wd = w;
    if (noise) {
        mul_elementwise(dropped, w, noise, n);
        wd = dropped;
    }
    // Causal: above the diagonal the weights are 0 (unless a row is NaN)
    // and the scores' gradients +0 (masked_fill's backward writes them), so
    // three products may skip the dead triangle where the other operand is
    // finite (gemm_zeros); d_dropped is needed whole (softmax's backward sums
    // over the row).
    const int dead = causal && T > 1;
    const int w_zero_above = dead && zero_above(wd, batch, T) && all_finite(dctx, batch * T * hd);
    // 5. d_dropped = dctx @ v^T; dv = dropped^T @ dctx
    fast_bmm_wt(dw, dctx, v, batch, T, hd, T);
    fast_gemm_zeros(dv, wd, dctx, NULL, batch, T, T, hd, 0, 1, w_zero_above ? GEMM_ZEROS_BELOW : GEMM_ZEROS_NONE);
    // 4.
    if (noise) dropout_backward(dw, dw, noise, n);
    // 3.
    if (dim == 2) fast_softmax_rows_backward(dz, dw, w, batch * T, T);
    else if (dim == 1) softmax_dim_backward(dz, dw, w, batch, T, T);
    else softmax_dim_backward(dz, dw, w, 1, (int)batch, (long)T * T);
    // 2.
    fast_div_scalar(dz, dz, scale, n);  // div_scalar_backward: dz / scale
    if (causal) masked_fill_causal_backward(dz, batch, T);
    // 1. dq = dscores @ k; dk = dscores^T @ q
    fast_gemm_zeros(dq, dz, k, NULL, batch, T, T, hd, 0, 0,
               dead && all_finite(k, batch * T * hd) ? GEMM_ZEROS_ABOVE : GEMM_ZEROS_NONE);
    fast_gemm_zeros(dk, dz, q, NULL, batch, T, T, hd, 0, 1,
               dead && all_finite(q, batch * T * hd) ? GEMM_ZEROS_BELOW : GEMM_ZEROS_NONE);
    tensor_free(dw_t), tensor_free(dz_t);
    if (noise) tensor_free(dropped_t);
}

// w (T, T) = softmax((q @ k^T)[j > i: -inf if causal] / scale, dim=-1) of
// one matrix, q, k (T, hd): the forward's weights again, by the forward's
// kernels in its order (the same bits as its composed ops and as
// fast_attention)
static void attention_weights(float *w, float *scores, const float *q, const float *k, int T, int hd, float scale,
                              bool causal) {
    fast_gemm(scores, q, k, NULL, 1, T, hd, T, 1, 0);
    for (long i = 0; causal && i < T; i++)
        for (long j = i + 1; j < T; j++) scores[i * T + j] = -INFINITY;
    fast_div_scalar(scores, scores, scale, (long)T * T);
    fast_softmax_rows(w, scores, T, T);
}

void fast_attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                             const float *v, const float *w, const float *noise, long batch, int T, int hd,
                             float scale, bool causal, int softmax_dim) {
    // One (T, T) matrix at a time (4 MiB of temporaries at Exercise 3.3's
    // size, not 48), unless the softmax ran over the batch axis (dim 0),
    // which ties the matrices together. Without w (a forward that kept no
    // (T, T) tensor: softmax over the last dim only) each matrix's weights
    // are computed again from q and k.
    const int dim = softmax_dim < 0 ? softmax_dim + 3 : softmax_dim;
    const long chunk = dim == 0 ? batch : 1;
    if (!w && dim != 2) die_internal("attention's backward: the weights of a softmax over dim %d must be kept", softmax_dim);
    Tensor w_again = w ? (Tensor){0} : tensor_empty(SIZE(T, T)), scores = w ? (Tensor){0} : tensor_empty(SIZE(T, T));
    for (long p = 0; p < batch; p += chunk) {
        const long m = p * T * hd, s = p * T * T;
        if (!w) attention_weights(w_again.data, scores.data, q + m, k + m, T, hd, scale, causal);
        attention_backward_matrices(dq + m, dk + m, dv + m, dctx + m, q + m, k + m, v + m, w ? w + s : w_again.data,
                                    noise ? noise + s : NULL, chunk, T, hd, scale, causal, dim);
    }
    if (!w) tensor_free(w_again), tensor_free(scores);
}
