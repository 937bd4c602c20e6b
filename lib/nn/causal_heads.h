// causal_heads.h: causal attention over heads already split, the step the
// bonus notebook's classes share (mha-implementations.ipynb 3, 4, 7, 8):
//
//   attn_scores  = q @ k^T                         (b, h, T, T)
//   attn_scores[j > i] = -inf                      the causal mask
//   attn_weights = softmax(attn_scores / scale, dim=-1), then dropout
//   context      = attn_weights @ v                (b, h, T, hd)
//
// Two ways, the same bits: materialised, as torch runs it, one batch item's
// (h, T, T) tensors at a time; or fused (ops fused_attention), a block of
// query rows at a time, never a (T, T) tensor. Dividing before the mask (the
// einsum class) or after it (chapter 3's) gives the same bits: -inf / s is
// -inf. nn.MultiheadAttention divides q first and adds the mask as the start
// of the product's sum; its caller passes q / sqrt(hd) and scale 1 (x / 1 is x).
#ifndef LITATTN_CAUSAL_HEADS_H
#define LITATTN_CAUSAL_HEADS_H

#include <stdbool.h>

#include "dropout.h"
#include "recorder.h"
#include "tensor.h"

// q, k, v (b, h, T, hd) -> context (b, h, T, hd). dropout: its mask drawn in
// the forward's order, (b, h, T, T) row-major, either way. rec and module:
// where the materialised path reports attn_scores and attn_weights (the last
// batch item's); rec may hold a NULL record.
Tensor causal_heads(Tensor q, Tensor k, Tensor v, Dropout *dropout, double scale, bool materialise,
                    const Recorder *rec, const char *module);

// Its backward through merge_heads, the weights computed again from q and k
// (the fused path's bits, a (T, T) matrix at a time): dmerged (b, T, h * hd)
// -> dq, dk, dv (b, h, T, hd), each new. noise: the forward's dropout
// factor (b, h, T, T), or no data.
void causal_heads_backward(Tensor dmerged, Tensor q, Tensor k, Tensor v, Tensor noise, double scale, Tensor *dq,
                           Tensor *dk, Tensor *dv);

// (b, T, 3, h, hd) packed projections -> q, k, v (b, h, T, hd) each: the
// .view(b, T, 3, h, hd).permute(2, 0, 3, 1, 4).unbind(0) of a (b, T, 3 * h * hd) tensor.
void unpack_qkv_heads(Tensor qkv, int num_heads, Tensor *q, Tensor *k, Tensor *v);

// (b, h, T, hd) -> (b, T, h * hd): .transpose(1, 2).contiguous().view(b, T, h * hd)
Tensor merge_heads(Tensor heads);
// (b, T, h * hd) -> (b, h, T, hd): .view(b, T, h, hd).transpose(1, 2)
Tensor split_heads_of(Tensor t, int num_heads);

#endif
