// causal_attention.c: CausalAttention's forward, in five passes:
//   1. project x (b, T, d_in) to keys, queries, values (b, T, d_out)
//   2. attn_scores = queries @ keys.transpose(1, 2)           (b, T, T)
//   3. attn_scores[mask] = -inf above the diagonal, in place
//   4. attn_weights = dropout(softmax(attn_scores / sqrt(d_k), dim=-1))
//   5. context_vec = attn_weights @ values                    (b, T, d_out)
// and its backward, the same passes in reverse.
#include "causal_attention.h"

#include <math.h>
#include <stdio.h>

#include "attend.h"
#include "attention.h"
#include "error.h"
#include "ops.h"

CausalAttention causal_attention_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                     int d_out, int context_length, double dropout, bool qkv_bias) {
    CausalAttention m = {.d_out = d_out, .softmax_dim = -1, .rec = *rec};
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

void causal_check_tokens(const char *module, int context_length, int num_tokens) {
    // The book's classes index the buffer with [:num_tokens, :num_tokens];
    // more tokens than context_length would not fit (torch raises there).
    if (num_tokens > context_length)
        die(EXIT_BAD_INPUT, "%s: %s: expected inputs of at most context_length = %d tokens, found %d",
            error_input(), module, context_length, num_tokens);
}

Tensor causal_mask_bool(const char *module, int context_length, int num_tokens) {
    causal_check_tokens(module, context_length, num_tokens);
    // The slice of triu(ones(context_length, context_length), 1) is
    // triu(ones(num_tokens, num_tokens), 1): the rest of the buffer is never read.
    Tensor ones = torch_ones(SIZE(num_tokens, num_tokens)), mask = torch_triu(ones, 1);
    Tensor mask_bool = torch_bool(mask);
    tensor_free(ones);
    tensor_free(mask);
    return mask_bool;
}

Tensor causal_attention_forward(CausalAttention *m, Tensor x) {
    attention_expect_batch(x, m->name, "b, num_tokens, d_in", 0);
    const int num_tokens = dim(x, 1);
    causal_check_tokens(m->name, m->context_length, num_tokens);  // (refuses too many tokens first)
    Tensor keys = linear_forward(&m->W_key, x);
    Tensor queries = linear_forward(&m->W_query, x);
    Tensor values = linear_forward(&m->W_value, x);

    if (!m->rec.record && !m->materialise && !m->mask.data && (m->softmax_dim == -1 || m->softmax_dim == 2)) {
        // 2-5 fused: nothing records the (b, T, T) tensors, so they are
        // never made; the same bits, a block of query rows at a time. A
        // backward computes the weights again from what it keeps.
        Tensor noise = dropout_factor(&m->dropout, SIZE(dim(x, 0), num_tokens, num_tokens));
        Tensor context_vec = fused_attention(queries, keys, values, noise, true, attention_scale(dim(keys, -1)));
        if (m->act) {
            *m->act = (AttentionActivations){.x = x, .keys = keys, .queries = queries, .values = values, .noise = noise};
        } else {
            Tensor tmp[] = {noise, keys, queries, values};
            for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        }
        return context_vec;
    }
    Tensor mask_bool;
    if (m->mask.data) {  // self.mask.bool()[:num_tokens, :num_tokens] of the mask the module holds
        Tensor whole = torch_bool(m->mask);
        mask_bool = torch_slice2(whole, num_tokens, num_tokens);
        tensor_free(whole);
    } else {
        mask_bool = causal_mask_bool(m->name, m->context_length, num_tokens);
    }
    Tensor context_vec = attention_materialised(&m->rec, m->name, &m->dropout, m->act, x, keys, queries, values,
                                                mask_bool, m->softmax_dim);
    tensor_free(mask_bool);
    RECORD(&m->rec, m->name, context_vec);
    return context_vec;
}

// --- backward -----------------------------------------------------------------------------
//   5-2. attention over the b matrices (backward_kernels.c attend_ref_backward):
//        dq, dk, dv (b, T, d_out)
//   1.   the three nn.Linear over all b * T rows, value, query, key: torch's
//        engine runs the newest node first, so x's gradient is
//        (dx_v + dx_q) + dx_k (engine.cpp, input_buffer.cpp). The key grad
//        comes back through keys.transpose(1, 2); with b == 1 the view back to
//        (T, d_out) keeps it column-major (its bias is summed column by column),
//        with b > 1 reshape copies it row-major.
void causal_attention_backward_into(const CausalAttention *m, Tensor dout, CausalAttentionGrads *g, Tensor *dx) {
    const AttentionActivations *act = m->act;
    if (!act || !act->queries.data)
        die_internal("%s: backward without a forward that kept its activations (set act first)", m->name);
    const int b = dim(act->x, 0), T = dim(act->x, 1), d_out = m->d_out;
    if (numel(dout) != (long)b * T * d_out)
        die_internal("%s: backward: expected a gradient of the output's size", m->name);
    const Size s = SIZE(b, T, d_out);
    Tensor dq = tensor_empty(s), dk = tensor_empty(s), dv = tensor_empty(s);
    // 5-2.
    attend_fast_backward(dq.data, dk.data, dv.data, dout.data, act->queries.data, act->keys.data, act->values.data,
                       act->attn_weights.data, act->noise.data, b, T, d_out,
                       (float)attention_scale(d_out), true, m->softmax_dim);
    // 1.
    linear_backward(&m->W_value, act->x, dv, &g->W_value, dx, false);
    linear_backward(&m->W_query, act->x, dq, &g->W_query, dx, false);
    linear_backward(&m->W_key, act->x, dk, &g->W_key, dx, b == 1 && T > 1);
    tensor_free(dq);
    tensor_free(dk);
    tensor_free(dv);
}

CausalAttentionGrads causal_attention_backward(const CausalAttention *m, Tensor dout) {
    CausalAttentionGrads g = {0};
    causal_attention_backward_into(m, dout, &g, &g.x);
    return g;
}

// --- loss = m(x).sum(); loss.backward() -------------------------------------------------
// After x.requires_grad_(), the forward again (torch builds its graph on
// it: in training mode with 0 < p < 1 its dropout draws the next mask,
// "<name>.dropout.noise.2"), keeping its activations and recording nothing
// (the forward cell recorded its locals), then the backward of sum(): a
// gradient of ones. The activations are freed before it returns.

// m's forward on x with its activations kept in *act and nothing recorded;
// m itself (its dropout's count of masks) advances as torch's module does.
Tensor causal_attention_forward_keeping(CausalAttention *m, Tensor x, AttentionActivations *act) {
    const Recorder rec = m->rec;
    AttentionActivations *const was = m->act;
    const bool materialise = m->materialise;
    m->rec = (Recorder){0};
    m->act = act;
    m->materialise = false;  // fused: the backward computes the weights again
    x.requires_grad = true;
    Tensor out = causal_attention_forward(m, x);
    m->rec = rec;
    m->act = was;
    m->materialise = materialise;
    return out;
}

void causal_attention_add_grads(Gradients *g, const char *prefix, const CausalAttentionGrads *cg) {
    gradients_add_linear(g, prefix, "W_query", cg->W_query);
    gradients_add_linear(g, prefix, "W_key", cg->W_key);
    gradients_add_linear(g, prefix, "W_value", cg->W_value);
}

Gradients causal_attention_sum_backward(CausalAttention *m, Tensor x) {
    AttentionActivations act = {0};
    Tensor out = causal_attention_forward_keeping(m, x, &act);
    Tensor ones = torch_ones(shape(out));
    CausalAttention kept = *m;
    kept.act = &act;
    CausalAttentionGrads cg = causal_attention_backward(&kept, ones);
    tensor_free(ones);
    tensor_free(out);
    attention_activations_free(&act);
    Gradients g;
    gradients_begin(&g, m->name);
    causal_attention_add_grads(&g, "", &cg);
    g.x = cg.x;
    return g;
}
