// causal_attention.h: the book's CausalAttention (§3.5.3): self-attention on
// a batch (b, num_tokens, d_in), where each token attends only to itself and
// the tokens before it (a causal mask), with dropout on the attention weights.
// Its parameters and dropout masks come from the ParamSource it is made with
// (param_source.h); it computes as its ComputeMode says (mode.h), an
// ATTENTION_RECORDED forward reporting its locals to its Recorder
// (recorder.h). The contract every module keeps: nn/README.md.
#ifndef LITATTN_CAUSAL_ATTENTION_H
#define LITATTN_CAUSAL_ATTENTION_H

#include <stdbool.h>

#include "saved.h"
#include "dropout.h"
#include "gradients.h"
#include "linear.h"
#include "mode.h"
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
    int softmax_dim;                 // -1, as the book; the `recorded` Exercise 3.2 variant's old class: 1
    ComputeMode mode;                // how forward() computes (mode.h)
    Recorder rec;                    // where an ATTENTION_RECORDED forward reports its locals
    AttentionSaved saved;        // what the last forward with mode.keep kept for the backward
} CausalAttention;

// CausalAttention(d_in, d_out, context_length, dropout, qkv_bias), computing as `mode` says.
CausalAttention causal_attention_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                     int d_in, int d_out, int context_length, double dropout, bool qkv_bias);
// x (b, num_tokens, d_in) -> context_vec (b, num_tokens, d_out); num_tokens <= context_length.
// causal_attention_forward computes as m->mode says; _as as `mode` says.
Tensor causal_attention_forward(CausalAttention *m, Tensor x);
Tensor causal_attention_forward_as(CausalAttention *m, Tensor x, ComputeMode mode);
void causal_attention_eval(CausalAttention *m);  // ca.eval(): no dropout
// Makes m hold its mask whole, triu(ones(context_length, context_length), 1),
// as an attribute or a buffer (MASK_ATTRIBUTE, MASK_BUFFER). forward() then
// masks with m->mask.bool()[:num_tokens, :num_tokens] whatever it holds (a
// value changed in place included), on a materialised path.
void causal_attention_hold_mask(CausalAttention *m, MaskKind kind);

// --- backward: loss.backward() through the last forward, run with mode.keep --------
typedef struct {
    LinearGrad W_query, W_key, W_value;  // W_query.weight, W_query.bias, ...
    Tensor x;                            // (b, num_tokens, d_in)
} CausalAttentionGrads;
// dout (b, num_tokens, d_out): the output's gradient (ones for out.sum()).
CausalAttentionGrads causal_attention_backward(const CausalAttention *m, Tensor dout);
// The same, x's gradient (b, num_tokens, d_in) added to *dx (assigned when
// dx->data is NULL): the wrapper's heads share one x. g->x is left empty.
void causal_attention_backward_into(const CausalAttention *m, Tensor dout, CausalAttentionGrads *g, Tensor *dx);
// Frees what the last forward kept.
void causal_attention_forget(CausalAttention *m);
// A head's gradients under "<prefix>W_query.weight", ... (the wrapper's "heads.0.")
void causal_attention_add_grads(Gradients *g, const char *prefix, const CausalAttentionGrads *cg);

// x.requires_grad_(); loss = m(x).sum(); loss.backward() (gradients.h
// module_sum_backward): every parameter's .grad in named_parameters() order, and x's.
Gradients causal_attention_sum_backward(CausalAttention *m, Tensor x);

#endif
