// causal_heads.h: the layout of heads the bonus notebook's classes share
// (mha-implementations.ipynb 3, 4, 7, 8): the packed q, k, v split into
// heads, the heads merged back, and the attention's backward through that
// merge. The attention itself is every module's (attention.h
// attention_forward): dividing before the mask (the einsum class) or after
// it (chapter 3's) gives the same bits, -inf / s being -inf;
// nn.MultiheadAttention divides q first and adds the mask as the start of
// the product's sum: its caller passes q / sqrt(hd) and scale 1 (x / 1 is x).
#ifndef LITATTN_CAUSAL_HEADS_H
#define LITATTN_CAUSAL_HEADS_H

#include "saved.h"
#include "tensor.h"

// (b, T, 3, h, hd) packed projections -> q, k, v (b, h, T, hd) each, new: the
// .view(b, T, 3, h, hd).permute(2, 0, 3, 1, 4).unbind(0) of a (b, T, 3 * h * hd) tensor.
void unpack_qkv_heads(Tensor qkv, int num_heads, Tensor *q, Tensor *k, Tensor *v);

// (b, h, T, hd) -> (b, T, h * hd), new: .transpose(1, 2).contiguous().view(b, T, h * hd)
Tensor merge_heads(Tensor heads);
// (b, T, h * hd) -> (b, h, T, hd), new: .view(b, T, h, hd).transpose(1, 2)
Tensor split_heads_of(Tensor t, int num_heads);

// The attention's backward through merge_heads, over what attention_forward
// kept in *saved (its queries, keys, values (b, h, T, hd), dropout's factor,
// the softmax output where it was made): dmerged (b, T, h * hd) -> *dq, *dk,
// *dv (b, h, T, hd) each, new.
void causal_heads_backward(const AttentionSaved *saved, Tensor dmerged, double scale, Tensor *dq, Tensor *dk,
                           Tensor *dv);

#endif
