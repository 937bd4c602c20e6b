// causal_attention.c: CausalAttention's forward, in five passes:
//   1. project x (b, T, d_in) to keys, queries, values (b, T, d_out)
//   2. attn_scores = queries @ keys.transpose(1, 2)           (b, T, T)
//   3. attn_scores[mask] = -inf above the diagonal, in place
//   4. attn_weights = dropout(softmax(attn_scores / sqrt(d_k), dim=-1))
//   5. context_vec = attn_weights @ values                    (b, T, d_out)
// (2-5: attention_forward, attention.h), and its backward, the same passes in reverse.
#include "causal_attention.h"

#include <stdio.h>

#include "attention.h"
#include "error.h"
#include "ops.h"

CausalAttention causal_attention_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                     int d_in, int d_out, int context_length, double dropout, bool qkv_bias) {
    CausalAttention m = {.d_out = d_out, .softmax_dim = -1, .mode = mode, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = linear_in(ps, name, "W_query", d_in, d_out, qkv_bias);
    m.W_key = linear_in(ps, name, "W_key", d_in, d_out, qkv_bias);
    m.W_value = linear_in(ps, name, "W_value", d_in, d_out, qkv_bias);
    char key[96];
    snprintf(key, sizeof key, "%s.dropout", name);
    m.dropout = dropout_new(ps, key, dropout);
    m.context_length = context_length;
    return m;
}

void causal_attention_eval(CausalAttention *m) { m->dropout.training = false; }

void causal_attention_hold_mask(CausalAttention *m, MaskKind kind) {
    Tensor ones = torch_ones(SIZE(m->context_length, m->context_length));
    m->mask = torch_triu(ones, 1);
    tensor_free(ones);
    m->mask_kind = kind;
}

void causal_attention_forget(CausalAttention *m) { attention_saved_free(&m->saved); }

Tensor causal_attention_forward(CausalAttention *m, Tensor x) { return causal_attention_forward_as(m, x, m->mode); }

Tensor causal_attention_forward_as(CausalAttention *m, Tensor x, ComputeMode mode) {
    attention_expect_batch(x, m->name, "b, num_tokens, d_in", 0);
    const int num_tokens = dim(x, 1);
    causal_check_tokens(m->name, m->context_length, num_tokens);  // (refuses too many tokens first)
    causal_attention_forget(m);
    // 1.
    Tensor keys = linear_forward(&m->W_key, x);
    Tensor queries = linear_forward(&m->W_query, x);
    Tensor values = linear_forward(&m->W_value, x);
    // 2-5.
    Tensor held = {0};  // self.mask.bool()[:num_tokens, :num_tokens] of the mask the module holds
    if (m->mask.data) {
        Tensor whole = torch_bool(m->mask);
        held = torch_slice2(whole, num_tokens, num_tokens);
        tensor_free(whole);
    }
    m->saved.x = x;
    Tensor context_vec = attention_forward(mode, &m->rec, m->name, &m->dropout, queries, keys, values, held,
                                           m->softmax_dim, attention_scale(m->d_out), &m->saved);
    if (held.data) tensor_free(held);
    if (!mode.keep) {
        Tensor tmp[] = {keys, queries, values};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        m->saved = (AttentionSaved){0};
    }
    if (mode.attention == ATTENTION_RECORDED) RECORD(&m->rec, m->name, context_vec);
    return context_vec;
}

// --- backward -----------------------------------------------------------------------------
//   5-2. attention over the b matrices (attention_backward_kept): dq, dk, dv (b, T, d_out)
//   1.   the three nn.Linear over all b * T rows, value, query, key: torch's
//        engine runs the newest node first, so x's gradient is
//        (dx_v + dx_q) + dx_k (engine.cpp, input_buffer.cpp). The key grad
//        comes back through keys.transpose(1, 2); with b == 1 the view back to
//        (T, d_out) keeps it column-major (its bias is summed column by column),
//        with b > 1 reshape copies it row-major.
void causal_attention_backward_into(const CausalAttention *m, Tensor dout, CausalAttentionGrads *g, Tensor *dx) {
    const AttentionSaved *saved = &m->saved;
    if (!saved->queries.data)
        die_internal("%s: backward without a forward that saved what its backward reads (mode.keep)", m->name);
    const int b = dim(saved->x, 0), T = dim(saved->x, 1);
    if (numel(dout) != (long)b * T * m->d_out)
        die_internal("%s: backward: expected a gradient of the output's size", m->name);
    // 5-2.
    Tensor dq, dk, dv;
    attention_backward_kept(saved, dout, attention_scale(m->d_out), true, m->softmax_dim, &dq, &dk, &dv);
    // 1.
    linear_backward(&m->W_value, saved->x, dv, &g->W_value, dx, false);
    linear_backward(&m->W_query, saved->x, dq, &g->W_query, dx, false);
    linear_backward(&m->W_key, saved->x, dk, &g->W_key, dx, b == 1 && T > 1);
    tensor_free(dq);
    tensor_free(dk);
    tensor_free(dv);
}

CausalAttentionGrads causal_attention_backward(const CausalAttention *m, Tensor dout) {
    CausalAttentionGrads g = {0};
    causal_attention_backward_into(m, dout, &g, &g.x);
    return g;
}

void causal_attention_add_grads(Gradients *g, const char *prefix, const CausalAttentionGrads *cg) {
    gradients_add_linear(g, prefix, "W_query", cg->W_query);
    gradients_add_linear(g, prefix, "W_key", cg->W_key);
    gradients_add_linear(g, prefix, "W_value", cg->W_value);
}

// --- loss = m(x).sum(); loss.backward() (gradients.h) ---------------------------------------
static Tensor forward_keeping(void *m, Tensor x) {
    return causal_attention_forward_as(m, x, COMPUTE_FOR_BACKWARD);
}
static void backward(const void *m, Tensor dout, Gradients *g) {
    CausalAttentionGrads cg = causal_attention_backward(m, dout);
    causal_attention_add_grads(g, "", &cg);
    g->x = cg.x;
}
static void forget(void *m) { causal_attention_forget(m); }
static const ModuleOps ops = {forward_keeping, backward, forget};

Gradients causal_attention_sum_backward(CausalAttention *m, Tensor x) { return module_sum_backward(&ops, m, m->name, x); }
