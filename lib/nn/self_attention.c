// self_attention.c: scaled dot-product self-attention, as the book's classes
// compute it, in four passes:
//   1. project x to keys, queries, values
//   2. attn_scores  = queries @ keys.T
//   3. attn_weights = softmax(attn_scores / sqrt(d_k), dim=-1)
//   4. context_vec  = attn_weights @ values
// Passes 2-4 are shared; only pass 1 differs between v1 and v2.
#include "self_attention.h"

#include <math.h>
#include <stdio.h>

#include "ops.h"

// keys.shape[-1]**0.5: Python's float power of an int, a double; the
// division then happens in float32, the tensor's type.
static double sqrt_d_k(Tensor keys) { return pow((double)dim(keys, -1), 0.5); }

// Passes 2-4, recording forward()'s locals under the module's name.
static Tensor attend(const Recorder *rec, const char *name, Tensor keys, Tensor queries, Tensor values,
                     int softmax_dim) {
    Tensor attn_scores = torch_matmul(queries, torch_T(keys));  // omega
    Tensor attn_weights = torch_softmax(torch_div_scalar(attn_scores, sqrt_d_k(keys)), softmax_dim);
    Tensor context_vec = torch_matmul(attn_weights, values);
    RECORD(rec, name, keys);
    RECORD(rec, name, queries);
    RECORD(rec, name, values);
    RECORD(rec, name, attn_scores);
    RECORD(rec, name, attn_weights);
    RECORD(rec, name, context_vec);
    return context_vec;
}

static Tensor parameter_rand(const ParamSource *ps, const char *module, const char *param, int rows, int cols) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", module, param);
    Tensor t = tensor_empty(SIZE(rows, cols));
    ps->rand(ps->ctx, key, t);
    t.requires_grad = true;  // nn.Parameter
    return t;
}

SelfAttentionV1 self_attention_v1_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                      int d_out) {
    // Drawn in the order __init__ assigns them: query, key, value.
    SelfAttentionV1 m = {.rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = parameter_rand(ps, name, "W_query", d_in, d_out);
    m.W_key = parameter_rand(ps, name, "W_key", d_in, d_out);
    m.W_value = parameter_rand(ps, name, "W_value", d_in, d_out);
    return m;
}

Tensor self_attention_v1_forward(const SelfAttentionV1 *m, Tensor x) {
    Tensor keys = torch_matmul(x, m->W_key);
    Tensor queries = torch_matmul(x, m->W_query);
    Tensor values = torch_matmul(x, m->W_value);
    return attend(&m->rec, m->name, keys, queries, values, -1);
}

static Linear layer(const ParamSource *ps, const char *module, const char *layer_name, int in, int out,
                    bool bias) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", module, layer_name);
    return linear_new(ps, key, in, out, bias);
}

SelfAttentionV2 self_attention_v2_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                      int d_out, bool qkv_bias) {
    SelfAttentionV2 m = {.softmax_dim = -1, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = layer(ps, name, "W_query", d_in, d_out, qkv_bias);
    m.W_key = layer(ps, name, "W_key", d_in, d_out, qkv_bias);
    m.W_value = layer(ps, name, "W_value", d_in, d_out, qkv_bias);
    return m;
}

Tensor self_attention_v2_forward(const SelfAttentionV2 *m, Tensor x) {
    Tensor keys = linear_forward(&m->W_key, x);
    Tensor queries = linear_forward(&m->W_query, x);
    Tensor values = linear_forward(&m->W_value, x);
    return attend(&m->rec, m->name, keys, queries, values, m->softmax_dim);
}
