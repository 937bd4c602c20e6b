// self_attention.c: scaled dot-product self-attention, as the book's classes
// compute it, in four passes:
//   1. project x to keys, queries, values
//   2. attn_scores  = queries @ keys.T
//   3. attn_weights = softmax(attn_scores / sqrt(d_k), dim=-1)
//   4. context_vec  = attn_weights @ values
// Passes 2-4 are shared (attention.h attention_materialised); only pass 1
// differs between v1 and v2. Each backward runs the passes in reverse (4, 3,
// 2 in attention_backward_kept, then 1).
#include "self_attention.h"

#include <math.h>
#include <stdio.h>

#include "attention.h"
#include "error.h"
#include "gemm.h"
#include "ops.h"
#include "rows.h"

// Passes 2-4 (attention_materialised, no mask, no dropout), on x's
// projections, as `mode` says: the module's locals reported on
// ATTENTION_RECORDED, what its backward reads saved in m->saved with mode.keep.
static Tensor attend(const Recorder *rec, const char *name, ComputeMode mode, AttentionSaved *saved, Tensor x,
                     Tensor keys, Tensor queries, Tensor values, int softmax_dim) {
    const Recorder *report = mode.attention == ATTENTION_RECORDED ? rec : NULL;
    saved->x = x;
    Tensor context_vec = attention_materialised(report, name, NULL, queries, keys, values, (Tensor){0}, softmax_dim,
                                                attention_scale(dim(keys, -1)), mode.keep ? saved : NULL);
    RECORD(report, name, context_vec);
    if (!mode.keep) {
        Tensor tmp[] = {keys, queries, values};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        *saved = (AttentionSaved){0};
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

SelfAttentionV1 self_attention_v1_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                      int d_in, int d_out) {
    // Drawn in the order __init__ assigns them: query, key, value.
    SelfAttentionV1 m = {.mode = mode, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = parameter_rand(ps, name, "W_query", d_in, d_out);
    m.W_key = parameter_rand(ps, name, "W_key", d_in, d_out);
    m.W_value = parameter_rand(ps, name, "W_value", d_in, d_out);
    return m;
}

void self_attention_v1_forget(SelfAttentionV1 *m) { attention_saved_free(&m->saved); }

Tensor self_attention_v1_forward(SelfAttentionV1 *m, Tensor x) { return self_attention_v1_forward_as(m, x, m->mode); }

Tensor self_attention_v1_forward_as(SelfAttentionV1 *m, Tensor x, ComputeMode mode) {
    self_attention_v1_forget(m);
    Tensor keys = torch_matmul(x, m->W_key);
    Tensor queries = torch_matmul(x, m->W_query);
    Tensor values = torch_matmul(x, m->W_value);
    return attend(&m->rec, m->name, mode, &m->saved, x, keys, queries, values, -1);
}

SelfAttentionV2 self_attention_v2_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                      int d_in, int d_out, bool qkv_bias) {
    SelfAttentionV2 m = {.softmax_dim = -1, .mode = mode, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = linear_in(ps, name, "W_query", d_in, d_out, qkv_bias);
    m.W_key = linear_in(ps, name, "W_key", d_in, d_out, qkv_bias);
    m.W_value = linear_in(ps, name, "W_value", d_in, d_out, qkv_bias);
    return m;
}

void self_attention_v2_forget(SelfAttentionV2 *m) { attention_saved_free(&m->saved); }

Tensor self_attention_v2_forward(SelfAttentionV2 *m, Tensor x) { return self_attention_v2_forward_as(m, x, m->mode); }

Tensor self_attention_v2_forward_as(SelfAttentionV2 *m, Tensor x, ComputeMode mode) {
    self_attention_v2_forget(m);
    Tensor keys = linear_forward(&m->W_key, x);
    Tensor queries = linear_forward(&m->W_query, x);
    Tensor values = linear_forward(&m->W_value, x);
    return attend(&m->rec, m->name, mode, &m->saved, x, keys, queries, values, m->softmax_dim);
}

// --- backward ---------------------------------------------------------------------------

static const AttentionSaved *kept(const AttentionSaved *saved, const char *name, Tensor dout, int T,
                                        int d_out) {
    if (!saved->attn_weights.data)
        die_internal("%s: backward without a forward that saved what its backward reads (mode.keep)", name);
    if (numel(dout) != (long)T * d_out) die_internal("%s: backward: expected a gradient of the output's size", name);
    return saved;
}

// Passes 4-2 in reverse (attention_backward_kept): dq, dk, dv (T, d_out), new. The
// scores are 2-D, so softmax over dim 1 is the last dim either way.
static void attend_backward(const AttentionSaved *saved, Tensor dout, Tensor *dq, Tensor *dk, Tensor *dv) {
    attention_backward_kept(saved, dout, attention_scale(dim(saved->keys, -1)), false, -1, dq, dk, dv);
}

// v1: 4-2. attention; 1. keys = x @ W_key, ...: dW = x^T @ d (sum over the T rows),
// and x's gradient from the three products in the order torch's engine runs
// them, newest node first: dx = ((dv @ W_value^T) + (dq @ W_query^T)) + (dk @ W_key^T)
// (torch/csrc/autograd/engine.cpp: ready nodes by sequence number, highest first;
// input_buffer.cpp: old + new).
SelfAttentionV1Grads self_attention_v1_backward(const SelfAttentionV1 *m, Tensor dout) {
    const int T = dim(m->saved.x.data ? m->saved.x : dout, 0), d_in = dim(m->W_query, 0), d_out = dim(m->W_query, 1);
    const AttentionSaved *saved = kept(&m->saved, m->name, dout, T, d_out);
    Tensor dq, dk, dv;
    // 4-2.
    attend_backward(saved, dout, &dq, &dk, &dv);
    // 1.
    SelfAttentionV1Grads g = {.x = tensor_empty(SIZE(T, d_in))};
    const Tensor d[3] = {dv, dq, dk}, W[3] = {m->W_value, m->W_query, m->W_key};
    Tensor *dW[3] = {&g.W_value, &g.W_query, &g.W_key};
    Tensor part = tensor_empty(SIZE(T, d_in));
    for (int i = 0; i < 3; i++) {
        *dW[i] = tensor_empty(SIZE(d_in, d_out));
        gemm_fast_matmul_at(dW[i]->data, saved->x.data, d[i].data, T, d_in, d_out);  // gemm_matmul_backward_b
        gemm_fast_matmul_wt_bias(i == 0 ? g.x.data : part.data, d[i].data, W[i].data, NULL, T, d_out, d_in);  // gemm_matmul_backward_a
        if (i > 0) rows_accumulate_grad(g.x.data, part.data, (long)T * d_in);
    }
    Tensor tmp[] = {part, dq, dk, dv};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    return g;
}

// v2: 4-2. attention; 1. the three nn.Linear, value, query, key (newest first),
// each adding its part to x's gradient. The keys.T gradient comes back through
// mm's column-major branch transposed back, so every bias sums rows in order.
SelfAttentionV2Grads self_attention_v2_backward(const SelfAttentionV2 *m, Tensor dout) {
    const int T = dim(m->saved.x.data ? m->saved.x : dout, 0), d_out = dim(m->W_query.weight, 0);
    const AttentionSaved *saved = kept(&m->saved, m->name, dout, T, d_out);
    Tensor dq, dk, dv;
    // 4-2.
    attend_backward(saved, dout, &dq, &dk, &dv);
    // 1.
    SelfAttentionV2Grads g = {0};
    linear_backward(&m->W_value, saved->x, dv, &g.W_value, &g.x, false);
    linear_backward(&m->W_query, saved->x, dq, &g.W_query, &g.x, false);
    linear_backward(&m->W_key, saved->x, dk, &g.W_key, &g.x, false);
    Tensor tmp[] = {dq, dk, dv};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    return g;
}

// --- loss = m(x).sum(); loss.backward() (gradients.h) ---------------------------------------

static Tensor v1_forward_keeping(void *m, Tensor x) { return self_attention_v1_forward_as(m, x, COMPUTE_FOR_BACKWARD); }
static void v1_backward(const void *m, Tensor dout, Gradients *g) {
    SelfAttentionV1Grads sg = self_attention_v1_backward(m, dout);
    gradients_add(g, "", "W_query", sg.W_query);
    gradients_add(g, "", "W_key", sg.W_key);
    gradients_add(g, "", "W_value", sg.W_value);
    g->x = sg.x;
}
static void v1_forget(void *m) { self_attention_v1_forget(m); }
static const ModuleOps v1_ops = {v1_forward_keeping, v1_backward, v1_forget};

Gradients self_attention_v1_sum_backward(SelfAttentionV1 *m, Tensor x) { return module_sum_backward(&v1_ops, m, m->name, x); }

static Tensor v2_forward_keeping(void *m, Tensor x) { return self_attention_v2_forward_as(m, x, COMPUTE_FOR_BACKWARD); }
static void v2_backward(const void *m, Tensor dout, Gradients *g) {
    SelfAttentionV2Grads sg = self_attention_v2_backward(m, dout);
    gradients_add_linear(g, "", "W_query", sg.W_query);
    gradients_add_linear(g, "", "W_key", sg.W_key);
    gradients_add_linear(g, "", "W_value", sg.W_value);
    g->x = sg.x;
}
static void v2_forget(void *m) { self_attention_v2_forget(m); }
static const ModuleOps v2_ops = {v2_forward_keeping, v2_backward, v2_forget};

Gradients self_attention_v2_sum_backward(SelfAttentionV2 *m, Tensor x) { return module_sum_backward(&v2_ops, m, m->name, x); }
