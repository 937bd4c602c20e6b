// self_attention.h: the book's two compact self-attention classes (§3.4.2).
//
// Each module has a name, the notebook's variable (`sa_v1`): its parameters
// are "<name>.W_query" (v1) or "<name>.W_query.weight" (v2), drawn through
// the ParamSource it is made with (param_source.h), and forward() records
// its locals as "<name>.keys", "<name>.attn_weights", ... with the Recorder
// it is made with (recorder.h) when its ComputeMode (mode.h) is
// ATTENTION_RECORDED. The contract every module keeps: nn/README.md.
#ifndef LITATTN_SELF_ATTENTION_H
#define LITATTN_SELF_ATTENTION_H

#include <stdbool.h>

#include "saved.h"
#include "gradients.h"
#include "linear.h"
#include "mode.h"
#include "param_source.h"
#include "recorder.h"
#include "tensor.h"

// SelfAttention_v1: raw parameter matrices, projections as `x @ W`.
typedef struct {
    char name[64];
    Tensor W_query, W_key, W_value;  // each (d_in, d_out), nn.Parameter(torch.rand(d_in, d_out))
    ComputeMode mode;                // how forward() computes (mode.h)
    Recorder rec;                    // where an ATTENTION_RECORDED forward reports its locals
    AttentionSaved saved;        // what the last forward with mode.keep kept for the backward
} SelfAttentionV1;

// SelfAttention_v2: nn.Linear projections, `x @ W.weight.T (+ bias)`.
typedef struct {
    char name[64];
    Linear W_query, W_key, W_value;  // weight (d_out, d_in), bias (d_out,) if qkv_bias
    int softmax_dim;                 // -1; exercise-solutions' copy writes dim=1, the same axis for 2-D scores
    ComputeMode mode;                // how forward() computes (mode.h)
    Recorder rec;                    // where an ATTENTION_RECORDED forward reports its locals
    AttentionSaved saved;        // what the last forward with mode.keep kept for the backward
} SelfAttentionV2;

// The book's 2-D self-attention has no fused path: its (T, T) scores are
// made on every path (mode.h), and reported on ATTENTION_RECORDED only.
SelfAttentionV1 self_attention_v1_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                      int d_in, int d_out);
// x (T, d_in) -> (T, d_out), as m->mode says (_as: as `mode` says)
Tensor self_attention_v1_forward(SelfAttentionV1 *m, Tensor x);
Tensor self_attention_v1_forward_as(SelfAttentionV1 *m, Tensor x, ComputeMode mode);

SelfAttentionV2 self_attention_v2_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                      int d_in, int d_out, bool qkv_bias);
// x (T, d_in) -> (T, d_out), as m->mode says (_as: as `mode` says)
Tensor self_attention_v2_forward(SelfAttentionV2 *m, Tensor x);
Tensor self_attention_v2_forward_as(SelfAttentionV2 *m, Tensor x, ComputeMode mode);

// Free what the last forward kept.
void self_attention_v1_forget(SelfAttentionV1 *m);
void self_attention_v2_forget(SelfAttentionV2 *m);

// --- backward: loss.backward() through the last forward, run with mode.keep --------
// dout: the gradient of the forward's output (T, d_out), all ones for
// out.sum().backward(). Returns new tensors: each parameter's .grad, named
// as state_dict names the parameter, and x's.
typedef struct {
    Tensor W_query, W_key, W_value;  // (d_in, d_out)
    Tensor x;                        // (T, d_in)
} SelfAttentionV1Grads;
SelfAttentionV1Grads self_attention_v1_backward(const SelfAttentionV1 *m, Tensor dout);

typedef struct {
    LinearGrad W_query, W_key, W_value;  // W_query.weight, W_query.bias, ...
    Tensor x;                            // (T, d_in)
} SelfAttentionV2Grads;
SelfAttentionV2Grads self_attention_v2_backward(const SelfAttentionV2 *m, Tensor dout);


// x.requires_grad_(); loss = m(x).sum(); loss.backward() (gradients.h module_sum_backward).
// Returns every parameter's .grad in named_parameters() order (v1:
// "W_query", ...; v2: "W_query.weight", "W_query.bias", ...), and x's.
Gradients self_attention_v1_sum_backward(SelfAttentionV1 *m, Tensor x);
Gradients self_attention_v2_sum_backward(SelfAttentionV2 *m, Tensor x);

#endif
