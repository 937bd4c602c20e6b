// mha_combined_qkv.c: MultiHeadAttentionCombinedQKV's forward in five passes:
//   1. qkv = x @ W_qkv^T                      (b, T, 3 * d_out), one product per row
//   2. .view(b, T, 3, h, hd).permute(2, 0, 3, 1, 4).unbind(0): q, k, v (b, h, T, hd)
//   3. causal attention (attention_forward): softmax(masked q @ k^T / sqrt(hd)) @ v
//   4. .transpose(1, 2).contiguous().view(b, T, d_out)
//   5. proj: @ W_proj^T + b_proj
// Each output of pass 1 is the k-sum of chapter 3's W_query, W_key or W_value
// product with the same row of weights: the split changes no bit.
#include "mha_combined_qkv.h"

#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "causal_heads.h"
#include "error.h"
#include "layout.h"

MultiHeadAttentionCombinedQKV mha_combined_qkv_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode,
                                                   const char *name, int d_in, int d_out, int num_heads,
                                                   int context_length, double dropout, bool qkv_bias) {
    // assert d_out % num_heads == 0, "d_out is indivisible by num_heads"
    if (num_heads < 1 || d_out % num_heads != 0)
        die(EXIT_BAD_INPUT, "%s: %s: expected num_heads to divide d_out (d_out is indivisible by num_heads), "
            "found d_out = %d and num_heads = %d", error_input(), name, d_out, num_heads);
    MultiHeadAttentionCombinedQKV m = {.d_out = d_out, .num_heads = num_heads, .head_dim = d_out / num_heads,
                                       .context_length = context_length, .mode = mode, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.qkv = linear_in(ps, name, "qkv", d_in, 3 * d_out, qkv_bias);
    m.proj = linear_in(ps, name, "proj", d_out, d_out, true);
    char key[96];
    snprintf(key, sizeof key, "%s.dropout", name);
    m.dropout = dropout_new(ps, key, dropout);
    return m;
}

MultiHeadAttentionCombinedQKV mha_sdpa_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode,
                                           const char *name, int d_in, int d_out, int num_heads, int context_length,
                                           double dropout, bool qkv_bias) {
    return mha_combined_qkv_new(ps, rec, mode, name, d_in, d_out, num_heads, context_length, dropout, qkv_bias);
}

void mha_combined_qkv_forget(MultiHeadAttentionCombinedQKV *m) { attention_saved_free(&m->saved); }

Tensor mha_combined_qkv_forward(MultiHeadAttentionCombinedQKV *m, Tensor x) {
    return mha_combined_qkv_forward_as(m, x, m->mode);
}

Tensor mha_combined_qkv_forward_as(MultiHeadAttentionCombinedQKV *m, Tensor x, ComputeMode mode) {
    attention_expect_batch(x, m->name, "b, num_tokens, embed_dim", 0);
    causal_check_tokens(m->name, m->context_length, dim(x, 1));
    mha_combined_qkv_forget(m);
    // 1.
    Tensor qkv = linear_forward(&m->qkv, x);
    // 2.
    Tensor queries, keys, values;
    unpack_qkv_heads(qkv, m->num_heads, &queries, &keys, &values);
    tensor_free(qkv);
    // 3.
    m->saved.x = x;
    Tensor context_vec = attention_forward(mode, &m->rec, m->name, &m->dropout, queries, keys, values, (Tensor){0},
                                           -1, attention_scale(m->head_dim), &m->saved);
    if (!mode.keep) {
        Tensor tmp[] = {queries, keys, values};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        m->saved = (AttentionSaved){0};
    }
    // 4.
    Tensor merged = merge_heads(context_vec);
    tensor_free(context_vec);
    // 5.
    Tensor out = linear_forward(&m->proj, merged);
    if (mode.keep) m->saved.context = merged;  // proj's backward reads its input
    else tensor_free(merged);
    return out;
}

// The backward, passes 5-1 in reverse:
//   5. proj: dmerged = dout @ W_proj, dW_proj = dout^T @ merged, db_proj the row sums
//   4. merge backward: dmerged (b, T, d_out) -> (b, h, T, hd)
//   3. attention over the b * h matrices, scale sqrt(hd): dq, dk, dv
//   2. unbind, permute and view backward: no arithmetic; dq, dk, dv side by
//      side in each row of dqkv (b, T, 3 * d_out)
//   1. qkv: dW_qkv = dqkv^T @ x, dx = dqkv @ W_qkv (one sum over 3 * d_out)
MultiHeadAttentionCombinedQKVGrads mha_combined_qkv_backward(const MultiHeadAttentionCombinedQKV *m, Tensor dout) {
    const AttentionSaved *saved = &m->saved;
    if (!saved->queries.data || !saved->context.data)
        die_internal("%s: backward without a forward that saved what its backward reads (mode.keep)", m->name);
    const int b = dim(saved->x, 0), T = dim(saved->x, 1), h = m->num_heads, hd = m->head_dim, d = m->d_out;
    if (numel(dout) != (long)b * T * d) die_internal("%s: backward: expected a gradient of the output's size", m->name);
    MultiHeadAttentionCombinedQKVGrads g = {0};
    // 5.
    Tensor dmerged = {0};
    linear_backward(&m->proj, saved->context, dout, &g.proj, &dmerged, false);
    // 4-3.
    Tensor dq, dk, dv;
    causal_heads_backward(saved, dmerged, attention_scale(hd), &dq, &dk, &dv);
    // 2.
    Tensor dqkv = tensor_empty(SIZE(b, T, 3 * d)), part = tensor_empty(SIZE(b, T, d));
    const Tensor parts[3] = {dq, dk, dv};
    for (int p = 0; p < 3; p++) {
        layout_heads_merge(part.data, parts[p].data, b, T, h, hd);
        for (long r = 0; r < (long)b * T; r++)
            memcpy(dqkv.data + r * 3 * d + (long)p * d, part.data + r * d, (size_t)d * sizeof(float));
    }
    // 1.
    linear_backward(&m->qkv, saved->x, dqkv, &g.qkv, &g.x, false);
    Tensor tmp[] = {dmerged, dq, dk, dv, dqkv, part};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    return g;
}

// --- loss = m(x).sum(); loss.backward() (gradients.h) ---------------------------------------
static Tensor forward_keeping(void *m, Tensor x) {
    return mha_combined_qkv_forward_as(m, x, COMPUTE_FOR_BACKWARD);
}
static void backward(const void *m, Tensor dout, Gradients *g) {
    MultiHeadAttentionCombinedQKVGrads cg = mha_combined_qkv_backward(m, dout);
    gradients_add_linear(g, "", "qkv", cg.qkv);
    gradients_add_linear(g, "", "proj", cg.proj);
    g->x = cg.x;
}
static void forget(void *m) { mha_combined_qkv_forget(m); }
static const ModuleOps ops = {forward_keeping, backward, forget};

Gradients mha_combined_qkv_sum_backward(MultiHeadAttentionCombinedQKV *m, Tensor x) {
    return module_sum_backward(&ops, m, m->name, x);
}
