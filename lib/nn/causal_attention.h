// causal_attention.h: the book's CausalAttention (§3.5.3): self-attention on
// a batch (b, num_tokens, d_in), where each token attends only to itself and
// the tokens before it (a causal mask), with dropout on the attention weights.
// Its parameters and dropout masks come from the ParamSource it is made with
// (param_source.h); forward() records its locals with its Recorder (recorder.h).
#ifndef LITATTN_CAUSAL_ATTENTION_H
#define LITATTN_CAUSAL_ATTENTION_H

#include <stdbool.h>

#include "activations.h"
#include "dropout.h"
#include "gradients.h"
#include "linear.h"
#include "param_source.h"
#include "recorder.h"
#include "tensor.h"

// understanding-buffers.ipynb's two classes hold the mask as a tensor:
// CausalAttentionWithoutBuffers as a plain attribute (self.mask = ...: not in
// state_dict(), not moved by .to()), CausalAttentionWithBuffer and the book's
// CausalAttention with register_buffer("mask", ...) (in state_dict(), first:
// a module's own buffers come before its submodules' parameters).
typedef enum { MASK_MADE_AS_NEEDED, MASK_ATTRIBUTE, MASK_BUFFER } MaskKind;

typedef struct {
    char name[64];                   // "ca", "mha.heads.0": records "<name>.keys", ...
    int d_out;
    Linear W_query, W_key, W_value;  // weight (d_out, d_in)
    Dropout dropout;
    int context_length;              // the buffer `mask` = triu(ones(context_length, context_length), 1),
                                     // made only as forward() needs it: [:num_tokens, :num_tokens]
    Tensor mask;                     // or held whole (causal_attention_hold_mask): .data NULL until then
    MaskKind mask_kind;              // how the module holds it: what state_dict() and .to() see of it
    bool materialise;                // make the (b, T, T) tensors even when nothing records them
    int softmax_dim;                 // -1, as the book; the `recorded` Exercise 3.2 variant's old class: 1
    Recorder rec;                    // where forward() reports its locals
    AttentionActivations *act;       // NULL, or where forward() keeps what the backward needs
} CausalAttention;

CausalAttention causal_attention_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                     int d_out, int context_length, double dropout, bool qkv_bias);
// x (b, num_tokens, d_in) -> context_vec (b, num_tokens, d_out); num_tokens <= context_length.
Tensor causal_attention_forward(CausalAttention *m, Tensor x);
void causal_attention_eval(CausalAttention *m);  // ca.eval(): no dropout
// Makes m hold its mask whole, triu(ones(context_length, context_length), 1),
// as an attribute or a buffer (MASK_ATTRIBUTE, MASK_BUFFER). forward() then
// masks with m->mask.bool()[:num_tokens, :num_tokens] whatever it holds (a
// value changed in place included), always materialised.
void causal_attention_hold_mask(CausalAttention *m, MaskKind kind);

// The causal mask of a buffer for `num_tokens` tokens: mask.bool()[:n, :n].
// Shared with MultiHeadAttention; dies if num_tokens > context_length.
// self.mask.bool()[:num_tokens, :num_tokens] of a (context_length,
// context_length) buffer, made at (num_tokens, num_tokens) only.
Tensor causal_mask_bool(const char *module, int context_length, int num_tokens);
// Refuses more than context_length tokens, as slicing the buffer would.
void causal_check_tokens(const char *module, int context_length, int num_tokens);

// --- backward: loss.backward() through the last forward (made with m->act set) -------
typedef struct {
    LinearGrad W_query, W_key, W_value;  // W_query.weight, W_query.bias, ...
    Tensor x;                            // (b, num_tokens, d_in)
} CausalAttentionGrads;
// dout (b, num_tokens, d_out): the output's gradient (ones for out.sum()).
CausalAttentionGrads causal_attention_backward(const CausalAttention *m, Tensor dout);
// The same, x's gradient added to *dx (assigned when dx->data is NULL): the
// wrapper's heads share one x. g.x is left empty.
void causal_attention_backward_into(const CausalAttention *m, Tensor dout, CausalAttentionGrads *g, Tensor *dx);


// x.requires_grad_(); loss = m(x).sum(); loss.backward(): the forward again
// (in training mode its dropout draws the next mask, as torch's does),
// keeping its activations and recording nothing, then the backward of ones.
// Returns every parameter's .grad in named_parameters() order, and x's.
Gradients causal_attention_sum_backward(CausalAttention *m, Tensor x);
// The pieces the wrapper shares: m's forward with its activations kept in
// *act, recording nothing; and a head's gradients under "<prefix>W_query.weight", ...
Tensor causal_attention_forward_keeping(CausalAttention *m, Tensor x, AttentionActivations *act);
void causal_attention_add_grads(Gradients *g, const char *prefix, const CausalAttentionGrads *cg);

#endif
