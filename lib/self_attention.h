// self_attention.h: the book's two compact self-attention classes (§3.4.2).
#ifndef LITATTN_SELF_ATTENTION_H
#define LITATTN_SELF_ATTENTION_H

#include "linear.h"
#include "params.h"
#include "tensor.h"

// forward()'s local variables, named as in the notebook, so a chapter can
// print or --dump any of them; context_vec is what forward() returns.
typedef struct {
    Tensor keys, queries, values;  // each (T, d_out)
    Tensor attn_scores;            // (T, T)
    Tensor attn_weights;           // (T, T), rows sum to 1
    Tensor context_vec;            // (T, d_out)
} AttentionTrace;

// SelfAttention_v1: raw parameter matrices, projections as `x @ W`.
typedef struct {
    Tensor W_query, W_key, W_value;  // each (d_in, d_out)
} SelfAttentionV1;

// SelfAttention_v2: nn.Linear projections, `x @ W.weight.T (+ bias)`.
typedef struct {
    Linear W_query, W_key, W_value;  // weight (d_out, d_in), bias (d_out,) if qkv_bias
} SelfAttentionV2;

SelfAttentionV1 self_attention_v1_new(int d_in, int d_out, ParamSource *params);
AttentionTrace self_attention_v1_forward(const SelfAttentionV1 *m, Tensor x);  // x is (T, d_in)

SelfAttentionV2 self_attention_v2_new(int d_in, int d_out, int qkv_bias, ParamSource *params);
AttentionTrace self_attention_v2_forward(const SelfAttentionV2 *m, Tensor x);  // x is (T, d_in)

#endif
