// self_attention.c: scaled dot-product self-attention, as the book's classes
// compute it, in four passes:
//   1. project x to keys, queries, values
//   2. attn_scores  = queries @ keys.T
//   3. attn_weights = softmax(attn_scores / sqrt(d_k), dim=-1)
//   4. context_vec  = attn_weights @ values
// Passes 2-4 are shared; only pass 1 differs between v1 and v2. Each
// backward runs the passes in reverse (4, 3, 2 in attend_ref_backward, then 1).
#include "self_attention.h"

#include <math.h>
#include <stdio.h>

#include "attend.h"
#include "attention.h"
#include "error.h"
#include "gemm.h"
#include "ops.h"
#include "rows.h"

// keys.shape[-1]**0.5 (attention.h)
static double sqrt_d_k(Tensor keys) { return attention_scale(dim(keys, -1)); }

// Passes 2-4, recording forward()'s locals under the module's name.
// With act, also what the backward needs.
static Tensor attend(const Recorder *rec, const char *name, Tensor keys, Tensor queries, Tensor values,
                     int softmax_dim, AttentionActivations *act) {
    Tensor attn_scores = torch_matmul(queries, torch_T(keys));  // omega
    Tensor attn_weights = torch_softmax(torch_div_scalar(attn_scores, sqrt_d_k(keys)), softmax_dim);
    Tensor context_vec = torch_matmul(attn_weights, values);
    RECORD(rec, name, keys);
    RECORD(rec, name, queries);
    RECORD(rec, name, values);
    RECORD(rec, name, attn_scores);
    RECORD(rec, name, attn_weights);
    RECORD(rec, name, context_vec);
    if (act) {
        act->keys = keys;
        act->queries = queries;
        act->values = values;
        act->attn_weights = attn_weights;
        act->noise = (Tensor){0};
    }
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
    if (m->act) m->act->x = x;
    return attend(&m->rec, m->name, keys, queries, values, -1, m->act);
}

SelfAttentionV2 self_attention_v2_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                      int d_out, bool qkv_bias) {
    SelfAttentionV2 m = {.softmax_dim = -1, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = linear_in(ps, name, "W_query", d_in, d_out, qkv_bias);
    m.W_key = linear_in(ps, name, "W_key", d_in, d_out, qkv_bias);
    m.W_value = linear_in(ps, name, "W_value", d_in, d_out, qkv_bias);
    return m;
}

Tensor self_attention_v2_forward(const SelfAttentionV2 *m, Tensor x) {
    Tensor keys = linear_forward(&m->W_key, x);
    Tensor queries = linear_forward(&m->W_query, x);
    Tensor values = linear_forward(&m->W_value, x);
    if (m->act) m->act->x = x;
    return attend(&m->rec, m->name, keys, queries, values, m->softmax_dim, m->act);
}

// --- backward ---------------------------------------------------------------------------

static const AttentionActivations *kept(const AttentionActivations *act, const char *name, Tensor dout, int T,
                                        int d_out) {
    if (!act || !act->attn_weights.data)
        die_internal("%s: backward without a forward that kept its activations (set act first)", name);
    if (numel(dout) != (long)T * d_out) die_internal("%s: backward: expected a gradient of the output's size", name);
    return act;
}

// Passes 4-2 in reverse (attend_ref_backward): dq, dk, dv (T, d_out). The scores
// are 2-D, so softmax over dim 1 is the last dim either way.
static void attend_backward(const AttentionActivations *act, Tensor dout, Tensor dq, Tensor dk, Tensor dv, int T,
                            int d_out) {
    attend_fast_backward(dq.data, dk.data, dv.data, dout.data, act->queries.data, act->keys.data, act->values.data,
                       act->attn_weights.data, NULL, 1, T, d_out, (float)sqrt_d_k(act->keys), false, -1);
}

// v1: 4-2. attention; 1. keys = x @ W_key, ...: dW = x^T @ d (sum over the T rows),
// and x's gradient from the three products in the order torch's engine runs
// them, newest node first: dx = ((dv @ W_value^T) + (dq @ W_query^T)) + (dk @ W_key^T)
// (torch/csrc/autograd/engine.cpp: ready nodes by sequence number, highest first;
// input_buffer.cpp: old + new).
SelfAttentionV1Grads self_attention_v1_backward(const SelfAttentionV1 *m, Tensor dout) {
    const int T = dim(m->act ? m->act->x : dout, 0), d_in = dim(m->W_query, 0), d_out = dim(m->W_query, 1);
    const AttentionActivations *act = kept(m->act, m->name, dout, T, d_out);
    Tensor dq = tensor_empty(SIZE(T, d_out)), dk = tensor_empty(SIZE(T, d_out)), dv = tensor_empty(SIZE(T, d_out));
    // 4-2.
    attend_backward(act, dout, dq, dk, dv, T, d_out);
    // 1.
    SelfAttentionV1Grads g = {.x = tensor_empty(SIZE(T, d_in))};
    const Tensor d[3] = {dv, dq, dk}, W[3] = {m->W_value, m->W_query, m->W_key};
    Tensor *dW[3] = {&g.W_value, &g.W_query, &g.W_key};
    Tensor part = tensor_empty(SIZE(T, d_in));
    for (int i = 0; i < 3; i++) {
        *dW[i] = tensor_empty(SIZE(d_in, d_out));
        gemm_fast_matmul_at(dW[i]->data, act->x.data, d[i].data, T, d_in, d_out);  // gemm_matmul_backward_b
        gemm_fast_matmul_wt_bias(i == 0 ? g.x.data : part.data, d[i].data, W[i].data, NULL, T, d_out, d_in);  // gemm_matmul_backward_a
        if (i > 0) rows_accumulate_grad(g.x.data, part.data, (long)T * d_in);
    }
    tensor_free(part);
    return g;
}

// v2: 4-2. attention; 1. the three nn.Linear, value, query, key (newest first),
// each adding its part to x's gradient. The keys.T gradient comes back through
// mm's column-major branch transposed back, so every bias sums rows in order.
SelfAttentionV2Grads self_attention_v2_backward(const SelfAttentionV2 *m, Tensor dout) {
    const int T = dim(m->act ? m->act->x : dout, 0), d_out = dim(m->W_query.weight, 0);
    const AttentionActivations *act = kept(m->act, m->name, dout, T, d_out);
    Tensor dq = tensor_empty(SIZE(T, d_out)), dk = tensor_empty(SIZE(T, d_out)), dv = tensor_empty(SIZE(T, d_out));
    // 4-2.
    attend_backward(act, dout, dq, dk, dv, T, d_out);
    // 1.
    SelfAttentionV2Grads g = {0};
    linear_backward(&m->W_value, act->x, dv, &g.W_value, &g.x, false);
    linear_backward(&m->W_query, act->x, dq, &g.W_query, &g.x, false);
    linear_backward(&m->W_key, act->x, dk, &g.W_key, &g.x, false);
    return g;
}

// --- loss = m(x).sum(); loss.backward() -------------------------------------------------
// After x.requires_grad_(), the forward again (torch would build its graph
// on it), keeping its activations and recording nothing (the forward cell
// recorded its locals), then the backward of sum(): a gradient of ones.

Gradients self_attention_v1_sum_backward(SelfAttentionV1 *m, Tensor x) {
    AttentionActivations act = {0};
    SelfAttentionV1 quiet = *m;
    quiet.act = &act;
    quiet.rec = (Recorder){0};
    x.requires_grad = true;
    Tensor out = self_attention_v1_forward(&quiet, x);
    Tensor ones = torch_ones(shape(out));
    SelfAttentionV1Grads sg = self_attention_v1_backward(&quiet, ones);
    tensor_free(ones);
    tensor_free(out);
    attention_activations_free(&act);
    Gradients g;
    gradients_begin(&g, m->name);
    gradients_add(&g, "", "W_query", sg.W_query);
    gradients_add(&g, "", "W_key", sg.W_key);
    gradients_add(&g, "", "W_value", sg.W_value);
    g.x = sg.x;
    return g;
}

Gradients self_attention_v2_sum_backward(SelfAttentionV2 *m, Tensor x) {
    AttentionActivations act = {0};
    SelfAttentionV2 quiet = *m;
    quiet.act = &act;
    quiet.rec = (Recorder){0};
    x.requires_grad = true;
    Tensor out = self_attention_v2_forward(&quiet, x);
    Tensor ones = torch_ones(shape(out));
    SelfAttentionV2Grads sg = self_attention_v2_backward(&quiet, ones);
    tensor_free(ones);
    tensor_free(out);
    attention_activations_free(&act);
    Gradients g;
    gradients_begin(&g, m->name);
    gradients_add_linear(&g, "", "W_query", sg.W_query);
    gradients_add_linear(&g, "", "W_key", sg.W_key);
    gradients_add_linear(&g, "", "W_value", sg.W_value);
    g.x = sg.x;
    return g;
}
