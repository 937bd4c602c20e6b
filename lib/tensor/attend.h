// attend.h: scaled dot-product attention over `batch` matrices, the part
// every attention module shares:
//   scores = q @ k^T; [masked_fill_ causal -inf]; w = softmax(scores / scale, dim);
//   ctx = (w * noise) @ v.
// Its backward's scalar reference (attend.c, on the reference kernels of
// gemm.h, rows.h, noise.h), and the fast forward, fused a block of query
// rows at a time, and backward (attend_fast.c), the same bits.
#ifndef LITATTN_ATTEND_H
#define LITATTN_ATTEND_H

#include <stdbool.h>

// --- reference ---
// q, k, v, dq, dk, dv (batch, T, hd); w, noise (batch, T, T), noise NULL
// without dropout; dctx (batch, T, hd). softmax_dim: -1 or 2 (last), 1 or -2,
// 0 or -3 of the (batch, T, T) scores. dq, dk, dv are assigned.
void attend_ref_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                        const float *v, const float *w, const float *noise, long batch, int T, int hd, float scale,
                        bool causal, int softmax_dim);

// --- fast (attend_fast.c) ---
// out (batch, T, D): causal (or full) attention of each item, a block of
// query rows at a time, never a (T, T) tensor: the bits of
//   s = q @ k^T; s[j > i] = -inf (if causal); w = softmax(s / scale, dim=-1);
//   w = w * noise (if noise); out = w @ v
// composed from the kernels of gemm.h and rows.h. q, k, v (batch, T, D);
// noise (batch, T, T) or NULL (dropout's factor, drawn beforehand).
void attend_fast(float *out, const float *q, const float *k, const float *v, const float *noise, long batch,
                    int T, int D, float scale, int causal);
// attend_ref_backward, its arguments and bits; w may be NULL (softmax over
// the last dim): each matrix's weights are then computed again from q and k,
// with the forward's bits
void attend_fast_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                             const float *v, const float *w, const float *noise, long batch, int T, int hd,
                             float scale, bool causal, int softmax_dim);

#endif
