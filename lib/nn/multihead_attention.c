// multihead_attention.c: the wrapper, and MultiHeadAttention's forward in
// six passes:
//   1. project x (b, T, d_in) to keys, queries, values (b, T, d_out)
//   2. split the last axis into heads: view (b, T, h, hd), transpose -> (b, h, T, hd)
//   3. attn_scores = queries @ keys.transpose(2, 3), -inf above the diagonal   (b, h, T, T)
//   4. attn_weights = dropout(softmax(attn_scores / sqrt(hd), dim=-1))
//   5. context_vec = (attn_weights @ values).transpose(1, 2), heads merged back: (b, T, d_out)
//   6. context_vec = out_proj(context_vec)
// and the backwards of both, passes in reverse.
#include "multihead_attention.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attend.h"
#include "attention.h"
#include "error.h"
#include "layout.h"
#include "ops.h"

MultiHeadAttentionWrapper multihead_attention_wrapper_new(const ParamSource *ps, const Recorder *rec,
                                                          const char *name, int d_in, int d_out, int context_length,
                                                          double dropout, int num_heads, bool qkv_bias) {
    if (num_heads < 1 || num_heads > MAX_HEADS)
        die(EXIT_BAD_INPUT, "%s: %s: expected 1 to %d heads, found %d", error_input(), name, MAX_HEADS, num_heads);
    MultiHeadAttentionWrapper m = {.num_heads = num_heads};
    snprintf(m.name, sizeof m.name, "%s", name);
    // nn.ModuleList([CausalAttention(...) for _ in range(num_heads)]): each
    // head draws its parameters in turn.
    for (int i = 0; i < num_heads; i++) {
        char head[64];
        snprintf(head, sizeof head, "%s.heads.%d", name, i);
        m.heads[i] = causal_attention_new(ps, rec, head, d_in, d_out, context_length, dropout, qkv_bias);
    }
    return m;
}

MultiHeadAttentionWrapper multihead_attention_wrapper_out_proj_new(const ParamSource *ps, const Recorder *rec,
                                                                   const char *name, int d_in, int d_out,
                                                                   int context_length, double dropout, int num_heads,
                                                                   bool qkv_bias) {
    MultiHeadAttentionWrapper m =
        multihead_attention_wrapper_new(ps, rec, name, d_in, d_out, context_length, dropout, num_heads, qkv_bias);
    // self.out_proj = nn.Linear(d_out*num_heads, d_out*num_heads)
    m.out_proj = linear_in(ps, name, "out_proj", d_out * num_heads, d_out * num_heads, true);
    m.has_out_proj = true;
    m.rec = *rec;
    return m;
}

Tensor multihead_attention_wrapper_forward(MultiHeadAttentionWrapper *m, Tensor x) {
    // torch.cat([head(x) for head in self.heads], dim=-1)
    Tensor outs[MAX_HEADS];
    for (int i = 0; i < m->num_heads; i++) outs[i] = causal_attention_forward(&m->heads[i], x);
    Tensor context_vec = torch_cat(m->num_heads, outs, -1);
    if (!m->has_out_proj) return context_vec;
    // return self.out_proj(context_vec)
    RECORD(&m->rec, m->name, context_vec);
    return linear_forward(&m->out_proj, context_vec);
}

// The largest input whose forward's activations (and a copy of it) are kept
// for a backward that may follow (multihead_attention.h: last): five
// tensors of at most 8 MiB. Exercise 3.3's (1, 1024, 768) is 2^19.6; the
// bonus notebook's (8, 1024, 768), whose chapter runs no backward after its
// fused forward, is past it.
#define LAST_MAX_NUMEL (1L << 21)

// Frees what the last forward kept for a backward (multihead_attention.h: last)
static void forget_last(MultiHeadAttention *m) {
    attention_activations_free(&m->last);
    if (m->last_input.data) tensor_free(m->last_input);
    m->last = (AttentionActivations){0};
    m->last_input = (Tensor){0};
}

MultiHeadAttention multihead_attention_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                           int d_out, int context_length, double dropout, int num_heads,
                                           bool qkv_bias) {
    // assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
    if (num_heads < 1 || d_out % num_heads != 0)
        die(EXIT_BAD_INPUT, "%s: %s: expected num_heads to divide d_out (d_out must be divisible by num_heads), "
            "found d_out = %d and num_heads = %d", error_input(), name, d_out, num_heads);
    MultiHeadAttention m = {.d_out = d_out, .num_heads = num_heads, .head_dim = d_out / num_heads, .rec = *rec};
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

// (b, T, d_out) -> (b, h, T, hd): .view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
static Tensor split_heads(const MultiHeadAttention *m, Tensor t) {
    Tensor heads = torch_transpose(view(t, SIZE(dim(t, 0), dim(t, 1), m->num_heads, m->head_dim)), 1, 2);
    tensor_free(t);
    return heads;
}

// Passes 3-5 as the notebook writes them, every (b, h, T, T) tensor made
// (attention.h): the recorder gets them, and the backward keeps the softmax's output.
static Tensor attention_heads(MultiHeadAttention *m, Tensor keys, Tensor queries, Tensor values, Tensor mask_bool,
                              Tensor x) {
    return attention_materialised(&m->rec, m->name, &m->dropout, m->act, x, keys, queries, values, mask_bool, -1);
}

Tensor multihead_attention_forward(MultiHeadAttention *m, Tensor x) {
    attention_expect_batch(x, m->name, "b, num_tokens, d_in", 0);
    const int b = dim(x, 0), num_tokens = dim(x, 1);
    causal_check_tokens(m->name, m->context_length, num_tokens);  // (refuses too many tokens first)
    Tensor keys = split_heads(m, linear_forward(&m->W_key, x));
    Tensor queries = split_heads(m, linear_forward(&m->W_query, x));
    Tensor values = split_heads(m, linear_forward(&m->W_value, x));

    Tensor per_head;  // (b, h, T, hd)
    if (!m->rec.record && !m->materialise) {
        // 3-5 fused: nothing records the (b, h, T, T) tensors, so they are
        // never made; the same bits, a block of query rows at a time. A
        // backward computes the weights again from the heads it keeps.
        Tensor noise = dropout_factor(&m->dropout, SIZE(b, m->num_heads, num_tokens, num_tokens));
        per_head = fused_attention(queries, keys, values, noise, true, attention_scale(dim(keys, -1)));
        if (m->act) {
            *m->act = (AttentionActivations){.x = x, .keys = keys, .queries = queries, .values = values, .noise = noise};
        } else if (!noise.data && numel(x) <= LAST_MAX_NUMEL) {  // nothing drawn: kept for a backward of x
            forget_last(m);
            m->last = (AttentionActivations){.x = x, .keys = keys, .queries = queries, .values = values};
            m->last_input = tensor_copy(x);
        } else {
            Tensor tmp[] = {noise, keys, queries, values};
            for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        }
    } else if (m->materialise && b > 1 && !m->act) {
        // One batch item at a time: (1, h, T, T) tensors, the same bits (each
        // item's products, softmax rows and dropout draws are its own, in order).
        Tensor mask_bool = causal_mask_bool(m->name, m->context_length, num_tokens);
        per_head = tensor_empty(shape(queries));
        const Size item = SIZE(1, m->num_heads, num_tokens, m->head_dim);
        const long per = size_numel(item);
        for (int i = 0; i < b; i++) {
            Tensor one = attention_heads(m, view(sel(keys, i), item), view(sel(queries, i), item),
                                         view(sel(values, i), item), mask_bool, x);
            memcpy(per_head.data + i * per, one.data, (size_t)per * sizeof(float));
            tensor_free(one);
        }
        tensor_free(mask_bool);
        Tensor tmp[] = {keys, queries, values};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    } else {
        Tensor mask_bool = causal_mask_bool(m->name, m->context_length, num_tokens);
        per_head = attention_heads(m, keys, queries, values, mask_bool, x);
        tensor_free(mask_bool);
    }
    Tensor context_vec = torch_transpose(per_head, 1, 2);             // (b, T, h, hd)
    tensor_free(per_head);
    Tensor merged = view(torch_contiguous(context_vec), SIZE(b, num_tokens, m->d_out));
    context_vec = linear_forward(&m->out_proj, merged);               // optional projection
    if (m->act) m->act->context = merged;
    else if (m->last.keys.data && m->last.x.data == x.data && !m->last.context.data) m->last.context = merged;
    else tensor_free(merged);
    RECORD(&m->rec, m->name, context_vec);
    return context_vec;
}

// --- backward -----------------------------------------------------------------------------

// The wrapper: torch.cat([head(x) for head in heads], dim=-1), in reverse:
//   2. cat: head i gets columns i * d_out .. (i + 1) * d_out - 1 of dout
//   1. the heads, LAST head first (its nodes are the newest: engine.cpp runs
//      the highest sequence number first), each adding its value, query and
//      key parts to the one x gradient:
//      dx = (((((v[H-1] + q[H-1]) + k[H-1]) + v[H-2]) + ...) + k[0]
MultiHeadAttentionWrapperGrads multihead_attention_wrapper_backward(const MultiHeadAttentionWrapper *m, Tensor dout) {
    MultiHeadAttentionWrapperGrads g = {0};
    if (m->has_out_proj) die(EXIT_BAD_INPUT, "%s: the backward of a wrapper with out_proj is not written", m->name);
    const int H = m->num_heads, d_out = m->heads[0].d_out;
    const long rows = numel(dout) / ((long)H * d_out);
    Tensor dhead = tensor_empty(SIZE((int)rows, d_out));
    for (int h = H - 1; h >= 0; h--) {
        // 2.
        layout_cat_lastdim_backward(dhead.data, dout.data, rows, H * d_out, h * d_out, d_out);
        // 1.
        causal_attention_backward_into(&m->heads[h], dhead, &g.heads[h], &g.x);
    }
    tensor_free(dhead);
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
    const AttentionActivations *act = m->act;
    if (!act || !act->queries.data)
        die_internal("%s: backward without a forward that kept its activations (set act first)", m->name);
    const int b = dim(act->x, 0), T = dim(act->x, 1), h = m->num_heads, hd = m->head_dim;
    if (numel(dout) != (long)b * T * m->d_out)
        die_internal("%s: backward: expected a gradient of the output's size", m->name);
    MultiHeadAttentionGrads g = {0};
    const Size flat = SIZE(b, T, m->d_out), heads = SIZE(b, h, T, hd);
    // 6.
    Tensor dcontext = {0};
    linear_backward(&m->out_proj, act->context, dout, &g.out_proj, &dcontext, false);
    // 5.
    Tensor dctx_h = tensor_empty(heads);
    layout_heads_split(dctx_h.data, dcontext.data, b, T, h, hd);
    // 4-3.
    Tensor dq_h = tensor_empty(heads), dk_h = tensor_empty(heads), dv_h = tensor_empty(heads);
    attend_fast_backward(dq_h.data, dk_h.data, dv_h.data, dctx_h.data, act->queries.data, act->keys.data,
                       act->values.data, act->attn_weights.data, act->noise.data, (long)b * h, T, hd,
                       (float)attention_scale(hd), true, -1);
    // 2.
    Tensor dq = tensor_empty(flat), dk = tensor_empty(flat), dv = tensor_empty(flat);
    layout_heads_merge(dq.data, dq_h.data, b, T, h, hd);
    layout_heads_merge(dk.data, dk_h.data, b, T, h, hd);
    layout_heads_merge(dv.data, dv_h.data, b, T, h, hd);
    // 1.
    linear_backward(&m->W_value, act->x, dv, &g.W_value, &g.x, false);
    linear_backward(&m->W_query, act->x, dq, &g.W_query, &g.x, false);
    linear_backward(&m->W_key, act->x, dk, &g.W_key, &g.x, b == 1 && T > 1);
    Tensor tmp[] = {dcontext, dctx_h, dq_h, dk_h, dv_h, dq, dk, dv};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    return g;
}

// --- loss = m(x).sum(); loss.backward() -------------------------------------------------
// As causal_attention_sum_backward: after x.requires_grad_(), the forward
// again, keeping its activations and recording nothing (in training mode its
// dropout draws the next mask), then the backward of a gradient of ones.

Gradients multihead_attention_wrapper_sum_backward(MultiHeadAttentionWrapper *m, Tensor x) {
    // torch.cat([head(x) for head in self.heads], dim=-1), each head keeping its activations
    AttentionActivations act[MAX_HEADS];
    memset(act, 0, sizeof act);
    Tensor outs[MAX_HEADS];
    for (int i = 0; i < m->num_heads; i++) outs[i] = causal_attention_forward_keeping(&m->heads[i], x, &act[i]);
    Tensor out = torch_cat(m->num_heads, outs, -1);
    for (int i = 0; i < m->num_heads; i++) tensor_free(outs[i]);
    MultiHeadAttentionWrapper kept = *m;
    for (int i = 0; i < m->num_heads; i++) kept.heads[i].act = &act[i];
    // mha-implementations.ipynb's wrapper ends with out_proj: its backward
    // first (dcontext = ones @ W_out, dW_out = ones^T @ context, db_out the
    // row sums), then the heads' from dcontext.
    LinearGrad out_proj_grad = {0};
    Tensor dout;
    if (m->has_out_proj) {
        Tensor projected = linear_forward(&m->out_proj, out);
        Tensor ones = torch_ones(shape(projected));
        tensor_free(projected);
        dout = (Tensor){0};
        linear_backward(&m->out_proj, out, ones, &out_proj_grad, &dout, false);
        tensor_free(ones);
        kept.has_out_proj = false;
    } else {
        dout = torch_ones(shape(out));
    }
    tensor_free(out);
    MultiHeadAttentionWrapperGrads wg = multihead_attention_wrapper_backward(&kept, dout);
    tensor_free(dout);
    for (int i = 0; i < m->num_heads; i++) attention_activations_free(&act[i]);
    Gradients g;
    gradients_begin(&g, m->name);
    for (int i = 0; i < m->num_heads; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "heads.%d.", i);
        causal_attention_add_grads(&g, prefix, &wg.heads[i]);
    }
    if (m->has_out_proj) gradients_add_linear(&g, "", "out_proj", out_proj_grad);
    g.x = wg.x;
    return g;
}

// m's forward on x with its activations kept in *act and nothing recorded,
// as causal_attention_forward_keeping does for a head
static Tensor forward_keeping(MultiHeadAttention *m, Tensor x, AttentionActivations *act) {
    const Recorder rec = m->rec;
    AttentionActivations *const was = m->act;
    const bool materialise = m->materialise;
    m->rec = (Recorder){0};
    m->act = act;
    m->materialise = false;  // fused: the backward computes the weights again
    x.requires_grad = true;
    Tensor out = multihead_attention_forward(m, x);
    m->rec = rec;
    m->act = was;
    m->materialise = materialise;
    return out;
}

Gradients multihead_attention_sum_backward(MultiHeadAttention *m, Tensor x) {
    AttentionActivations act = {0};
    Tensor ones;  // d loss / d out, of out's shape (b, T, d_out)
    if (m->last.context.data && (!m->dropout.training || m->dropout.p == 0.0) &&
        size_equal(shape(m->last_input), shape(x)) &&
        memcmp(m->last_input.data, x.data, (size_t)numel(x) * sizeof(float)) == 0) {
        // torch runs the forward again; drawing nothing, it would give the
        // bits of the last forward, whose input had these very values
        act = m->last;
        act.x = x;
        act.x.requires_grad = true;
        m->last = (AttentionActivations){0};
        forget_last(m);
        ones = torch_ones(SIZE(dim(x, 0), dim(x, 1), m->d_out));
    } else {
        Tensor out = forward_keeping(m, x, &act);
        ones = torch_ones(shape(out));
        tensor_free(out);
    }
    MultiHeadAttention kept = *m;
    kept.act = &act;
    MultiHeadAttentionGrads mg = multihead_attention_backward(&kept, ones);
    tensor_free(ones);
    attention_activations_free(&act);
    Gradients g;
    gradients_begin(&g, m->name);
    gradients_add_linear(&g, "", "W_query", mg.W_query);
    gradients_add_linear(&g, "", "W_key", mg.W_key);
    gradients_add_linear(&g, "", "W_value", mg.W_value);
    gradients_add_linear(&g, "", "out_proj", mg.out_proj);
    g.x = mg.x;
    return g;
}
