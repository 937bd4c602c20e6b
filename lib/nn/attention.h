// attention.h: what every attention module of nn/ shares, written once.
//
//   attention_scale(d)  = d ** 0.5, as the book writes keys.shape[-1]**0.5:
//                         Python's float power of an int, a double; the
//                         division by it then happens in float32, the
//                         tensor's type (lib/NUMERICS.md).
//   attention_expect_batch(x, module, dims)
//                       = x is a batch of rank 3, or one line and exit 1:
//                         "<input>: <module>: expected a batch (<dims>),
//                         found shape (...)".
//   attention_materialised(...)
//                       = the attention with every (..., T, T) tensor made, as
//                         the book's classes write it (below).
#ifndef LITATTN_ATTENTION_H
#define LITATTN_ATTENTION_H

#include "activations.h"
#include "dropout.h"
#include "recorder.h"
#include "tensor.h"

double attention_scale(int d);

// x: (b, num_tokens, d) expected. dims: the expected shape as the message
// shows it ("b, num_tokens, d_in"); last: the size dim 2 must have, or 0 for any.
void attention_expect_batch(Tensor x, const char *module, const char *dims, int last);

// The attention materialised, CausalAttention's passes 2-5 and
// MultiHeadAttention's 3-5, in the book's order:
//   attn_scores  = queries @ keys^T             (the last two dims: (b, T, d) or (b, h, T, hd))
//   attn_scores.masked_fill_(mask_bool, -inf)   (mask_bool (T, T), broadcast; not freed here)
//   attn_weights = dropout(softmax(attn_scores / attention_scale(d_k), dim=softmax_dim))
//   returns        attn_weights @ values
// rec gets keys, queries, values, attn_scores and attn_weights under `name`.
// act: NULL, or where the backward's activations go (x and the three
// projections, the softmax output, dropout's factor).
Tensor attention_materialised(const Recorder *rec, const char *name, Dropout *dropout, AttentionActivations *act,
                              Tensor x, Tensor keys, Tensor queries, Tensor values, Tensor mask_bool,
                              int softmax_dim);

#endif
