// multihead_attention.c: the wrapper, and MultiHeadAttention's forward in
// six passes:
//   1. project x (b, T, d_in) to keys, queries, values (b, T, d_out)
//   2. split the last axis into heads: view (b, T, h, hd), transpose -> (b, h, T, hd)
//   3. attn_scores = queries @ keys.transpose(2, 3), -inf above the diagonal   (b, h, T, T)
//   4. attn_weights = dropout(softmax(attn_scores / sqrt(hd), dim=-1))   (3-5: attention_forward)
//   5. context_vec = (attn_weights @ values).transpose(1, 2), heads merged back: (b, T, d_out)
//   6. context_vec = out_proj(context_vec)
// and the backwards of both, passes in reverse.
#include "multihead_attention.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "error.h"
#include "layout.h"
#include "ops.h"
#include "rows.h"

MultiHeadAttentionWrapper multihead_attention_wrapper_new(const ParamSource *ps, const Recorder *rec,
                                                          ComputeMode mode, const char *name, int d_in, int d_out,
                                                          int context_length, double dropout, int num_heads,
                                                          bool qkv_bias) {
    if (num_heads < 1 || num_heads > MAX_HEADS)
        die(EXIT_BAD_INPUT, "%s: %s: expected 1 to %d heads, found %d", error_input(), name, MAX_HEADS, num_heads);
    MultiHeadAttentionWrapper m = {.num_heads = num_heads, .mode = mode, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    // nn.ModuleList([CausalAttention(...) for _ in range(num_heads)]): each
    // head draws its parameters in turn.
    for (int i = 0; i < num_heads; i++) {
        char head[64];
        snprintf(head, sizeof head, "%s.heads.%d", name, i);
        m.heads[i] = causal_attention_new(ps, rec, mode, head, d_in, d_out, context_length, dropout, qkv_bias);
    }
    return m;
}

MultiHeadAttentionWrapper multihead_attention_wrapper_out_proj_new(const ParamSource *ps, const Recorder *rec,
                                                                   ComputeMode mode, const char *name, int d_in,
                                                                   int d_out, int context_length, double dropout,
                                                                   int num_heads, bool qkv_bias) {
    MultiHeadAttentionWrapper m = multihead_attention_wrapper_new(ps, rec, mode, name, d_in, d_out, context_length,
                                                                  dropout, num_heads, qkv_bias);
    // self.out_proj = nn.Linear(d_out*num_heads, d_out*num_heads)
    m.out_proj = linear_in(ps, name, "out_proj", d_out * num_heads, d_out * num_heads, true);
    m.has_out_proj = true;
    return m;
}

void multihead_attention_wrapper_forget(MultiHeadAttentionWrapper *m) {
    for (int i = 0; i < m->num_heads; i++) causal_attention_forget(&m->heads[i]);
    attention_saved_free(&m->saved);
}

Tensor multihead_attention_wrapper_forward(MultiHeadAttentionWrapper *m, Tensor x) {
    return multihead_attention_wrapper_forward_as(m, x, m->mode);
}

Tensor multihead_attention_wrapper_forward_as(MultiHeadAttentionWrapper *m, Tensor x, ComputeMode mode) {
    attention_saved_free(&m->saved);
    // torch.cat([head(x) for head in self.heads], dim=-1)
    Tensor outs[MAX_HEADS];
    for (int i = 0; i < m->num_heads; i++) outs[i] = causal_attention_forward_as(&m->heads[i], x, mode);
    Tensor context_vec = torch_cat(m->num_heads, outs, -1);
    for (int i = 0; i < m->num_heads; i++) tensor_free(outs[i]);
    if (!m->has_out_proj) return context_vec;
    // return self.out_proj(context_vec)
    if (mode.attention == ATTENTION_RECORDED) RECORD(&m->rec, m->name, context_vec);
    Tensor out = linear_forward(&m->out_proj, context_vec);
    if (mode.keep) m->saved.context = context_vec;  // out_proj's backward reads its input
    else tensor_free(context_vec);
    return out;
}

// The largest input whose fused forward's saved tensors (and a copy of it) are
// kept for a backward that may follow (multihead_attention.h: last_input):
// five tensors of at most 8 MiB. Exercise 3.3's (1, 1024, 768) is 2^19.6; the
// bonus notebook's (8, 1024, 768), whose chapter runs no backward after its
// fused forward, is past it.
#define LAST_MAX_NUMEL (1L << 21)

MultiHeadAttention multihead_attention_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode,
                                           const char *name, int d_in, int d_out, int context_length, double dropout,
                                           int num_heads, bool qkv_bias) {
    // assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
    if (num_heads < 1 || d_out % num_heads != 0)
        die(EXIT_BAD_INPUT, "%s: %s: expected num_heads to divide d_out (d_out must be divisible by num_heads), "
            "found d_out = %d and num_heads = %d", error_input(), name, d_out, num_heads);
    MultiHeadAttention m = {.d_out = d_out, .num_heads = num_heads, .head_dim = d_out / num_heads, .mode = mode,
                            .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = linear_in(ps, name, "W_query", d_in, d_out, qkv_bias);
    m.W_key = linear_in(ps, name, "W_key", d_in, d_out, qkv_bias);
    m.W_value = linear_in(ps, name, "W_value", d_in, d_out, qkv_bias);
    m.out_proj = linear_in(ps, name, "out_proj", d_out, d_out, true);  // Linear layer to combine head outputs
    char key[96];
    snprintf(key, sizeof key, "%s.dropout", name);
    m.dropout = dropout_new(ps, key, dropout);
    m.context_length = context_length;
    return m;
}

void multihead_attention_eval(MultiHeadAttention *m) { m->dropout.training = false; }

long multihead_attention_parameters(const MultiHeadAttention *m) {
    return linear_parameters(&m->W_query) + linear_parameters(&m->W_key) + linear_parameters(&m->W_value) +
           linear_parameters(&m->out_proj);
}

void multihead_attention_forget(MultiHeadAttention *m) {
    attention_saved_free(&m->saved);
    if (m->last_input.data) tensor_free(m->last_input);
    m->last_input = (Tensor){0};
}

// (b, T, d_out) -> (b, h, T, hd): .view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
static Tensor split_heads(const MultiHeadAttention *m, Tensor t) {
    Tensor heads = torch_transpose(view(t, SIZE(dim(t, 0), dim(t, 1), m->num_heads, m->head_dim)), 1, 2);
    tensor_free(t);
    return heads;
}

Tensor multihead_attention_forward(MultiHeadAttention *m, Tensor x) {
    return multihead_attention_forward_as(m, x, m->mode);
}

Tensor multihead_attention_forward_as(MultiHeadAttention *m, Tensor x, ComputeMode mode) {
    attention_expect_batch(x, m->name, "b, num_tokens, d_in", 0);
    const int b = dim(x, 0), num_tokens = dim(x, 1);
    causal_check_tokens(m->name, m->context_length, num_tokens);  // (refuses too many tokens first)
    multihead_attention_forget(m);
    // A fused forward that draws nothing keeps what a backward of the same
    // input would compute again (multihead_attention.h: last_input).
    const bool for_later = mode.attention == ATTENTION_FUSED && !mode.keep &&
                           (!m->dropout.training || m->dropout.p == 0.0) && numel(x) <= LAST_MAX_NUMEL;
    ComputeMode run = mode;
    run.keep = mode.keep || for_later;
    // 1-2.
    Tensor keys = split_heads(m, linear_forward(&m->W_key, x));
    Tensor queries = split_heads(m, linear_forward(&m->W_query, x));
    Tensor values = split_heads(m, linear_forward(&m->W_value, x));
    // 3-5.
    m->saved.x = x;
    Tensor per_head = attention_forward(run, &m->rec, m->name, &m->dropout, queries, keys, values, (Tensor){0}, -1,
                                        attention_scale(m->head_dim), &m->saved);  // (b, h, T, hd)
    if (!run.keep) {
        Tensor tmp[] = {keys, queries, values};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        m->saved = (AttentionSaved){0};
    }
    Tensor context_vec = torch_transpose(per_head, 1, 2);             // (b, T, h, hd)
    tensor_free(per_head);
    Tensor merged = view(torch_contiguous(context_vec), SIZE(b, num_tokens, m->d_out));
    // 6.
    context_vec = linear_forward(&m->out_proj, merged);               // optional projection
    if (run.keep) m->saved.context = merged;
    else tensor_free(merged);
    if (for_later) m->last_input = tensor_copy(x);
    if (mode.attention == ATTENTION_RECORDED) RECORD(&m->rec, m->name, context_vec);
    return context_vec;
}

// --- backward -----------------------------------------------------------------------------

// The wrapper: out_proj(torch.cat([head(x) for head in heads], dim=-1)), in reverse:
//   3. out_proj (with one): dcat = dout @ W_out, dW_out = dout^T @ cat, db_out the row sums
//   2. cat: head i gets columns i * d_out .. (i + 1) * d_out - 1 of dcat
//   1. the heads, LAST head first (its nodes are the newest: engine.cpp runs
//      the highest sequence number first), each adding its value, query and
//      key parts to the one x gradient:
//      dx = (((((v[H-1] + q[H-1]) + k[H-1]) + v[H-2]) + ...) + k[0]
MultiHeadAttentionWrapperGrads multihead_attention_wrapper_backward(const MultiHeadAttentionWrapper *m, Tensor dout) {
    MultiHeadAttentionWrapperGrads g = {0};
    const int H = m->num_heads, d_out = m->heads[0].d_out;
    // 3.
    Tensor dcat = dout;
    if (m->has_out_proj) {
        if (!m->saved.context.data)
            die_internal("%s: backward without a forward that saved what its backward reads (mode.keep)", m->name);
        dcat = (Tensor){0};
        linear_backward(&m->out_proj, m->saved.context, dout, &g.out_proj, &dcat, false);
    }
    const long rows = numel(dcat) / ((long)H * d_out);
    Tensor dhead = tensor_empty(SIZE((int)rows, d_out));
    for (int h = H - 1; h >= 0; h--) {
        // 2.
        layout_cat_lastdim_backward(dhead.data, dcat.data, rows, H * d_out, h * d_out, d_out);
        // 1.
        causal_attention_backward_into(&m->heads[h], dhead, &g.heads[h], &g.x);
    }
    tensor_free(dhead);
    if (m->has_out_proj) tensor_free(dcat);
    return g;
}

// MultiHeadAttention, passes 6-1 in reverse:
//   6. out_proj: dcontext = dout @ W_out, dW_out = dout^T @ context, db_out row sums
//   5. merge backward: dcontext (b, T, d_out) -> heads (b, h, T, hd)
//   4-3. attention over the b * h matrices, scale sqrt(hd): dq, dk, dv (b, h, T, hd)
//   2. split backward: back to (b, T, d_out)
//   1. the Linear layers value, query, key (newest first); as in
//      CausalAttention, the key bias is summed column-major when b == 1.
MultiHeadAttentionGrads multihead_attention_backward(const MultiHeadAttention *m, Tensor dout) {
    const AttentionSaved *saved = &m->saved;
    if (!saved->queries.data || !saved->context.data)
        die_internal("%s: backward without a forward that saved what its backward reads (mode.keep)", m->name);
    const int b = dim(saved->x, 0), T = dim(saved->x, 1), h = m->num_heads, hd = m->head_dim;
    if (numel(dout) != (long)b * T * m->d_out)
        die_internal("%s: backward: expected a gradient of the output's size", m->name);
    MultiHeadAttentionGrads g = {0};
    const Size flat = SIZE(b, T, m->d_out), heads = SIZE(b, h, T, hd);
    // 6.
    Tensor dcontext = {0};
    linear_backward(&m->out_proj, saved->context, dout, &g.out_proj, &dcontext, false);
    // 5.
    Tensor dctx_h = tensor_empty(heads);
    layout_heads_split(dctx_h.data, dcontext.data, b, T, h, hd);
    // 4-3.
    Tensor dq_h, dk_h, dv_h;
    attention_backward_kept(saved, dctx_h, attention_scale(hd), true, -1, &dq_h, &dk_h, &dv_h);
    // 2.
    Tensor dq = tensor_empty(flat), dk = tensor_empty(flat), dv = tensor_empty(flat);
    layout_heads_merge(dq.data, dq_h.data, b, T, h, hd);
    layout_heads_merge(dk.data, dk_h.data, b, T, h, hd);
    layout_heads_merge(dv.data, dv_h.data, b, T, h, hd);
    // 1.
    linear_backward(&m->W_value, saved->x, dv, &g.W_value, &g.x, false);
    linear_backward(&m->W_query, saved->x, dq, &g.W_query, &g.x, false);
    linear_backward(&m->W_key, saved->x, dk, &g.W_key, &g.x, b == 1 && T > 1);
    Tensor tmp[] = {dcontext, dctx_h, dq_h, dk_h, dv_h, dq, dk, dv};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    return g;
}

// --- loss = m(x).sum(); loss.backward() (gradients.h) ---------------------------------------

static Tensor wrapper_forward_keeping(void *m, Tensor x) { return multihead_attention_wrapper_forward_as(m, x, COMPUTE_FOR_BACKWARD); }
static void wrapper_backward(const void *p, Tensor dout, Gradients *g) {
    const MultiHeadAttentionWrapper *m = p;
    static MultiHeadAttentionWrapperGrads wg;  // 64 heads: large for the stack
    wg = multihead_attention_wrapper_backward(m, dout);
    for (int i = 0; i < m->num_heads; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "heads.%d.", i);
        causal_attention_add_grads(g, prefix, &wg.heads[i]);
    }
    if (m->has_out_proj) gradients_add_linear(g, "", "out_proj", wg.out_proj);
    g->x = wg.x;
}
static void wrapper_forget(void *m) { multihead_attention_wrapper_forget(m); }
static const ModuleOps wrapper_ops = {wrapper_forward_keeping, wrapper_backward, wrapper_forget};

Gradients multihead_attention_wrapper_sum_backward(MultiHeadAttentionWrapper *m, Tensor x) {
    return module_sum_backward(&wrapper_ops, m, m->name, x);
}

static Tensor mha_forward_keeping(void *p, Tensor x) {
    MultiHeadAttention *m = p;
    if (m->last_input.data && (!m->dropout.training || m->dropout.p == 0.0) &&
        size_equal(shape(m->last_input), shape(x)) &&
        memcmp(m->last_input.data, x.data, (size_t)numel(x) * sizeof(float)) == 0) {
        // torch runs the forward again; drawing nothing, it would give the
        // bits of the last forward, whose input had these very values: what
        // that forward kept serves. The output's shape is all rows_sum_backward reads.
        m->saved.x = x;
        tensor_free(m->last_input);
        m->last_input = (Tensor){0};
        return tensor_empty(SIZE(dim(x, 0), dim(x, 1), m->d_out));
    }
    return multihead_attention_forward_as(m, x, COMPUTE_FOR_BACKWARD);
}
static void mha_backward(const void *m, Tensor dout, Gradients *g) {
    MultiHeadAttentionGrads mg = multihead_attention_backward(m, dout);
    gradients_add_linear(g, "", "W_query", mg.W_query);
    gradients_add_linear(g, "", "W_key", mg.W_key);
    gradients_add_linear(g, "", "W_value", mg.W_value);
    gradients_add_linear(g, "", "out_proj", mg.out_proj);
    g->x = mg.x;
}
static void mha_forget(void *m) { multihead_attention_forget(m); }
static const ModuleOps mha_ops = {mha_forward_keeping, mha_backward, mha_forget};

Gradients multihead_attention_sum_backward(MultiHeadAttention *m, Tensor x) {
    return module_sum_backward(&mha_ops, m, m->name, x);
}
