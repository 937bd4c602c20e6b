// attention.h: what every attention module of nn/ shares, written once.
//
//   attention_scale(d)  = d ** 0.5, as the book writes keys.shape[-1]**0.5:
//                         Python's float power of an int, a double; the
//                         division by it then happens in float32, the
//                         tensor's type (lib/NUMERICS.md).
//   attention_expect_batch(x, module, dims, last)
//                       = x is a batch of rank 3, or one line and exit 1:
//                         "<input>: <module>: expected a batch (<dims>),
//                         found shape (...)".
//   causal_check_tokens, causal_mask_bool
//                       = the causal buffer's limit and its [:T, :T] slice.
//   attention_forward   = the causal attention on any path of a ComputeMode
//                         (mode.h), every module's passes from the scores to
//                         the context;
//   attention_materialised
//                       = the same with every (..., T, T) tensor made, as
//                         the book's classes write it;
//   attention_backward_kept = their backward over what they kept.
#ifndef LITATTN_ATTENTION_H
#define LITATTN_ATTENTION_H

#include "saved.h"
#include "dropout.h"
#include "mode.h"
#include "recorder.h"
#include "tensor.h"

double attention_scale(int d);

// x: (b, num_tokens, d) expected. dims: the expected shape as the message
// shows it ("b, num_tokens, d_in"); last: the size dim 2 must have, or 0 for any.
void attention_expect_batch(Tensor x, const char *module, const char *dims, int last);

// Refuses more than context_length tokens (exit 1), as slicing the book's
// (context_length, context_length) buffer with [:num_tokens, :num_tokens] would.
void causal_check_tokens(const char *module, int context_length, int num_tokens);
// self.mask.bool()[:num_tokens, :num_tokens] of the buffer
// triu(ones(context_length, context_length), 1), made at (num_tokens,
// num_tokens) only: bool (num_tokens, num_tokens), new. Refuses as above.
Tensor causal_mask_bool(const char *module, int context_length, int num_tokens);

// The attention materialised, in the book's order:
//   attn_scores  = queries @ keys^T                  (..., T, T): the last two dims of
//                                                    (T, d), (b, T, d) or (b, h, T, hd)
//   attn_scores.masked_fill_(mask_bool, -inf)        mask_bool bool (T, T), broadcast;
//                                                    .data NULL: no mask (self-attention)
//   attn_weights = dropout(softmax(attn_scores / scale, dim=softmax_dim))
//                                                    dropout NULL: none
//   returns        attn_weights @ values             queries' shape but its last dim, values'
// rec (NULL: none) gets keys, queries, values, attn_scores and attn_weights
// under `name`. keep: NULL, or where the backward reads goes:
// queries, keys and values (kept, not copied: the caller then leaves them to
// *keep), the softmax output and dropout's factor. q, k, v, mask_bool are
// not freed here.
Tensor attention_materialised(const Recorder *rec, const char *name, Dropout *dropout, Tensor queries, Tensor keys,
                              Tensor values, Tensor mask_bool, int softmax_dim, double scale,
                              AttentionSaved *keep);

// The causal attention of every attention module on the path mode.attention
// says (mode.h):
//   queries, keys, values   (b, T, d) or (b, h, T, hd), one shape
//   held_mask               bool (T, T): the mask a module holds, sliced
//                           ([:T, :T]); .data NULL: the causal mask, made
//                           here on the materialised paths, never on the fused
//   softmax_dim             -1 (or the `recorded` Exercise 3.2 variant's 1)
//   scale                   the division of the scores (attention_scale(d), or 1)
//   returns                 the context, (b, T, d) or (b, h, T, hd)
// On ATTENTION_RECORDED, rec gets the locals as attention_materialised
// reports them, under `name`. With mode.keep, *keep gets queries, keys and
// values (which the caller then leaves to it), dropout's factor, and the
// softmax output where the path made it (.data NULL on the fused path: the
// backward computes it again); else the caller frees q, k, v.
Tensor attention_forward(ComputeMode mode, const Recorder *rec, const char *name, Dropout *dropout, Tensor queries,
                         Tensor keys, Tensor values, Tensor held_mask, int softmax_dim, double scale,
                         AttentionSaved *keep);

// The backward of attention_forward (or attention_materialised) over what it
// kept in *saved: dcontext (the context's shape, (T, d), (b, T, d) or (b, h, T, hd))
// -> *dq, *dk, *dv (new, queries' shape), attend.h attend_ref_backward's
// order of operations. causal: whether the forward masked (every module but
// the 2-D self-attention).
void attention_backward_kept(const AttentionSaved *saved, Tensor dcontext, double scale, bool causal, int softmax_dim,
                        Tensor *dq, Tensor *dk, Tensor *dv);

#endif
