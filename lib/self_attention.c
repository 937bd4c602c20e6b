// self_attention.c: scaled dot-product self-attention, as the book's classes
// compute it, in four passes:
//   1. project x to keys, queries, values
//   2. attn_scores  = queries @ keys.T
//   3. attn_weights = softmax(attn_scores / sqrt(d_k), dim=-1)
//   4. context_vec  = attn_weights @ values
// Passes 2-4 are shared; only pass 1 differs between v1 and v2.
#include "self_attention.h"

#include <math.h>

#include "ops.h"

// Passes 2-4 on a trace whose keys, queries and values are filled in.
static AttentionTrace attend(AttentionTrace tr) {
    tr.attn_scores = torch_matmul(tr.queries, torch_transpose(tr.keys));
    // keys.shape[-1]**0.5 is Python's float power, libm's pow in double; the
    // division then happens in float32, the tensor's type.
    float scale = (float)pow((double)tensor_dim(tr.keys, -1), 0.5);
    tr.attn_weights = torch_softmax(torch_div(tr.attn_scores, scale), -1);
    tr.context_vec = torch_matmul(tr.attn_weights, tr.values);
    return tr;
}

SelfAttentionV1 self_attention_v1_new(int d_in, int d_out, ParamSource *params) {
    // Drawn in the order __init__ assigns them: query, key, value.
    SelfAttentionV1 m;
    m.W_query = param_rand(params, "W_query", d_in, d_out);
    m.W_key = param_rand(params, "W_key", d_in, d_out);
    m.W_value = param_rand(params, "W_value", d_in, d_out);
    return m;
}

AttentionTrace self_attention_v1_forward(const SelfAttentionV1 *m, Tensor x) {
    AttentionTrace tr = {0};
    tr.keys = torch_matmul(x, m->W_key);
    tr.queries = torch_matmul(x, m->W_query);
    tr.values = torch_matmul(x, m->W_value);
    return attend(tr);
}

SelfAttentionV2 self_attention_v2_new(int d_in, int d_out, int qkv_bias, ParamSource *params) {
    SelfAttentionV2 m;
    m.W_query = param_linear(params, "W_query", d_in, d_out, qkv_bias);
    m.W_key = param_linear(params, "W_key", d_in, d_out, qkv_bias);
    m.W_value = param_linear(params, "W_value", d_in, d_out, qkv_bias);
    return m;
}

AttentionTrace self_attention_v2_forward(const SelfAttentionV2 *m, Tensor x) {
    AttentionTrace tr = {0};
    tr.keys = linear_forward(&m->W_key, x);
    tr.queries = linear_forward(&m->W_query, x);
    tr.values = linear_forward(&m->W_value, x);
    return attend(tr);
}
