// self_attention.h: the book's two compact self-attention classes (§3.4.2).
//
// Each module has a name, the notebook's variable (`sa_v1`): its parameters
// are "<name>.W_query" (v1) or "<name>.W_query.weight" (v2), drawn through
// the ParamSource it is made with (param_source.h), and forward() records
// its locals as "<name>.keys", "<name>.attn_weights", ... with the Recorder
// it is made with (recorder.h).
#ifndef LITATTN_SELF_ATTENTION_H
#define LITATTN_SELF_ATTENTION_H

#include <stdbool.h>

#include "activations.h"
#include "gradients.h"
#include "linear.h"
#include "param_source.h"
#include "recorder.h"
#include "tensor.h"

// SelfAttention_v1: raw parameter matrices, projections as `x @ W`.
typedef struct {
    char name[64];
    Tensor W_query, W_key, W_value;  // each (d_in, d_out), nn.Parameter(torch.rand(d_in, d_out))
    Recorder rec;                    // where forward() reports its locals
    AttentionActivations *act;       // NULL, or where forward() keeps what the backward needs
} SelfAttentionV1;

// SelfAttention_v2: nn.Linear projections, `x @ W.weight.T (+ bias)`.
typedef struct {
    char name[64];
    Linear W_query, W_key, W_value;  // weight (d_out, d_in), bias (d_out,) if qkv_bias
    int softmax_dim;                 // -1; exercise-solutions' copy writes dim=1, the same axis for 2-D scores
    Recorder rec;
    AttentionActivations *act;       // NULL, or where forward() keeps what the backward needs
} SelfAttentionV2;

SelfAttentionV1 self_attention_v1_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                      int d_out);
Tensor self_attention_v1_forward(const SelfAttentionV1 *m, Tensor x);  // x (T, d_in) -> (T, d_out)

SelfAttentionV2 self_attention_v2_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                      int d_out, bool qkv_bias);
Tensor self_attention_v2_forward(const SelfAttentionV2 *m, Tensor x);  // x (T, d_in) -> (T, d_out)

// --- backward: loss.backward() through the last forward (made with m->act set) -------
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


// x.requires_grad_(); loss = m(x).sum(); loss.backward(): the forward again,
// keeping its activations and recording nothing, then the backward of ones.
// Returns every parameter's .grad in named_parameters() order (v1:
// "W_query", ...; v2: "W_query.weight", "W_query.bias", ...), and x's.
Gradients self_attention_v1_sum_backward(SelfAttentionV1 *m, Tensor x);
Gradients self_attention_v2_sum_backward(SelfAttentionV2 *m, Tensor x);

#endif
