// attend.c: the scalar reference of the attention's backward (attend.h),
// the part every attention module shares, in the order of torch 1.13.1's
// autograd on the composed ops (their forwards: gemm.h, rows.h, noise.h).
// attend_fast.c gives the same bits faster (and the fused forward).
#include "attend.h"

#include <math.h>
#include <string.h>

#include "error.h"
#include "gemm.h"
#include "noise.h"
#include "rows.h"
#include "tensor.h"

// Backward of the part every attention module shares, in reverse:
//   5. ctx = dropped @ v:  d_dropped = dctx @ v^T (sum over hd), dv = dropped^T @ dctx
//      (sum over the query rows); dropped = w * noise, recomputed by the forward's kernel
//   4. dropped = w * noise: dw = d_dropped * noise
//   3. w = softmax(z, dim): dz (last dim, or dim 1 / 0 of the (batch, T, T) scores)
//   2. z = scores / scale: dscores = dz / scale; then +0 where the mask wrote -inf
//   1. scores = q @ k^T: dq = dscores @ k (sum over keys), dk = dscores^T @ q (sum over queries)
static void attention_backward_all(float *dq, float *dk, float *dv, const float *dctx, const float *q,
                                   const float *k, const float *v, const float *w, const float *noise, long batch,
                                   int T, int hd, float scale, bool causal, int softmax_dim) {
    const long n = batch * T * T;
    Tensor dw = tensor_empty(SIZE((int)n)), dz = tensor_empty(SIZE((int)n));
    Tensor dropped = {0};
    const float *wd = w;
    if (noise) {
        dropped = tensor_empty(SIZE((int)n));
        rows_mul(dropped.data, w, noise, n);
        wd = dropped.data;
    }
    // 5.
    gemm_bmm_backward(dw.data, dv, dctx, wd, v, batch, T, T, hd);
    // 4.
    if (noise) noise_dropout_backward(dw.data, dw.data, noise, n);
    // 3.
    if (softmax_dim == -1 || softmax_dim == 2) rows_softmax_rows_backward(dz.data, dw.data, w, batch * T, T);
    else if (softmax_dim == 1) rows_softmax_dim_backward(dz.data, dw.data, w, batch, T, T);
    else rows_softmax_dim_backward(dz.data, dw.data, w, 1, (int)batch, (long)T * T);
    // 2.
    rows_div_scalar_backward(dz.data, dz.data, scale, n);
    if (causal) rows_masked_fill_causal_backward(dz.data, batch, T);
    // 1. scores = q @ k^T, k^T (hd, T): dq = dscores @ (k^T)^T, d(k^T) = q^T @ dscores, dk its transpose
    for (long i = 0; i < batch; i++) {
        const long m = i * T * hd;
        const float *ds = dz.data + i * T * T;
        // dq[t][c] = sum_s ds[t][s] * k[s][c], s ascending
        for (long t = 0; t < T; t++)
            for (long c = 0; c < hd; c++) {
                float s = 0.0f;
                for (long u = 0; u < T; u++) s += ds[t * T + u] * k[m + u * hd + c];
                dq[m + t * hd + c] = s;
            }
        // dk[s][c] = sum_t ds[t][s] * q[t][c], t ascending
        gemm_matmul_backward_b(dk + m, ds, q + m, T, T, hd);
    }
    if (noise) tensor_free(dropped);
    tensor_free(dw);
    tensor_free(dz);
}

// Every step above but a softmax over the batch axis (dim 0 of the scores)
// works on one (T, T) matrix at a time, in the same order: so the matrices
// go one by one, and the temporaries are (T, T), not (batch, T, T) (at
// Exercise 3.3's size 4 MiB each instead of 48 MiB).
void attend_ref_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                        const float *v, const float *w, const float *noise, long batch, int T, int hd, float scale,
                        bool causal, int softmax_dim) {
    // The (batch, T, T) scores' dims counted from the end, as torch counts them (-2 is 1, -3 is 0).
    if (softmax_dim < -1) softmax_dim += 3;
    if (!(softmax_dim == -1 || softmax_dim == 1 || softmax_dim == 2)) {
        attention_backward_all(dq, dk, dv, dctx, q, k, v, w, noise, batch, T, hd, scale, causal, softmax_dim);
        return;
    }
    const long m = (long)T * hd, s = (long)T * T;
    for (long i = 0; i < batch; i++)
        attention_backward_all(dq + i * m, dk + i * m, dv + i * m, dctx + i * m, q + i * m, k + i * m, v + i * m,
                               w + i * s, noise ? noise + i * s : NULL, 1, T, hd, scale, causal, softmax_dim);
}
