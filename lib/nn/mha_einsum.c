// mha_einsum.c: MHAEinsum's forward in five passes:
//   1. Q = einsum("bnd,do->bno", x, W_query): Q[r, o] = sum_d x[r, d] * W[d, o]
//      (then + bias_q); K and V alike                        (b, n, d_out)
//   2. .view(b, n, h, hd).transpose(1, 2)                    (b, h, n, hd)
//   3. scores = einsum("bhnd,bhmd->bhnm", Q, K) / sqrt(hd), masked, softmax,
//      dropout, einsum("bhnm,bhmd->bhnd", weights, V)        (attention_forward)
//   4. .transpose(1, 2).reshape(b, n, d_out)
//   5. out_proj
#include "mha_einsum.h"

#include <math.h>
#include <stdio.h>

#include "attention.h"
#include "causal_heads.h"
#include "error.h"
#include "gemm.h"
#include "init.h"
#include "layout.h"
#include "rows.h"

static Tensor einsum_param(const ParamSource *ps, const char *module, const char *attr, Size s, double bound, bool randn) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", module, attr);
    Tensor t = tensor_empty(s);
    if (randn) ps->normal_(ps->ctx, key, t, 0.0, 1.0);  // nn.Parameter(torch.randn(d_in, d_out))
    else ps->uniform_(ps->ctx, key, t, -bound, bound);
    t.requires_grad = true;
    return t;
}

MHAEinsum mha_einsum_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name, int d_in,
                         int d_out, int context_length, double dropout, int num_heads, bool qkv_bias) {
    // assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
    if (num_heads < 1 || d_out % num_heads != 0)
        die(EXIT_BAD_INPUT, "%s: %s: expected num_heads to divide d_out (d_out must be divisible by num_heads), "
            "found d_out = %d and num_heads = %d", error_input(), name, d_out, num_heads);
    if (!ps->normal_) die(EXIT_BAD_INPUT, "%s: this parameter source cannot draw torch.randn", name);
    MHAEinsum m = {.d_out = d_out, .num_heads = num_heads, .head_dim = d_out / num_heads,
                   .context_length = context_length, .mode = mode, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    const Size ws = SIZE(d_in, d_out);
    m.W_query = einsum_param(ps, name, "W_query", ws, 0, true);
    m.W_key = einsum_param(ps, name, "W_key", ws, 0, true);
    m.W_value = einsum_param(ps, name, "W_value", ws, 0, true);
    // the biases start as torch.zeros(d_out): no draw
    m.out_proj = linear_in(ps, name, "out_proj", d_out, d_out, true);
    char key[96];
    snprintf(key, sizeof key, "%s.dropout", name);
    m.dropout = dropout_new(ps, key, dropout);
    // self.reset_parameters(): kaiming_uniform_(W, a=sqrt(5)), fan_in = W.size(1) = d_out
    const double wb = kaiming_uniform_bound(d_out);
    Tensor *W[3] = {&m.W_query, &m.W_key, &m.W_value};
    static const char *const wn[3] = {"W_query", "W_key", "W_value"};
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "%s.%s", name, wn[i]);
        ps->uniform_(ps->ctx, key, *W[i], -wb, wb);
    }
    if (qkv_bias) {
        const double bb = 1.0 / sqrt((double)d_out);  // bound = 1 / math.sqrt(fan_in)
        m.bias_q = einsum_param(ps, name, "bias_q", SIZE(d_out), bb, false);
        m.bias_k = einsum_param(ps, name, "bias_k", SIZE(d_out), bb, false);
        m.bias_v = einsum_param(ps, name, "bias_v", SIZE(d_out), bb, false);
    }
    return m;
}

// einsum("bnd,do->bno", x, W) (+ bias, added after: Q += self.bias_q)
static Tensor project(Tensor x, Tensor W, Tensor bias) {
    const int d_in = dim(W, 0), d_out = dim(W, 1);
    const long rows = numel(x) / d_in;
    Tensor y = tensor_empty(SIZE(dim(x, 0), dim(x, 1), d_out));
    gemm_fast_matmul(y.data, x.data, W.data, (int)rows, d_in, d_out);
    if (bias.data)
        for (long r = 0; r < rows; r++)
            for (int o = 0; o < d_out; o++) y.data[r * d_out + o] += bias.data[o];
    return y;
}

// .view(b, n, h, hd).transpose(1, 2) of a projection nothing else holds
static Tensor heads_of(Tensor t, int num_heads) {
    Tensor heads = split_heads_of(t, num_heads);
    tensor_free(t);
    return heads;
}

void mha_einsum_forget(MHAEinsum *m) { attention_saved_free(&m->saved); }

Tensor mha_einsum_forward(MHAEinsum *m, Tensor x) { return mha_einsum_forward_as(m, x, m->mode); }

Tensor mha_einsum_forward_as(MHAEinsum *m, Tensor x, ComputeMode mode) {
    char dims[48];
    snprintf(dims, sizeof dims, "b, n, %d", dim(m->W_query, 0));
    attention_expect_batch(x, m->name, dims, dim(m->W_query, 0));
    causal_check_tokens(m->name, m->context_length, dim(x, 1));
    mha_einsum_forget(m);
    // 1-2.
    Tensor Q = heads_of(project(x, m->W_query, m->bias_q), m->num_heads);
    Tensor K = heads_of(project(x, m->W_key, m->bias_k), m->num_heads);
    Tensor V = heads_of(project(x, m->W_value, m->bias_v), m->num_heads);
    // 3.
    m->saved.x = x;
    Tensor context_vec = attention_forward(mode, &m->rec, m->name, &m->dropout, Q, K, V, (Tensor){0}, -1,
                                           attention_scale(m->head_dim), &m->saved);
    if (!mode.keep) {
        Tensor tmp[] = {Q, K, V};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        m->saved = (AttentionSaved){0};
    }
    // 4-5.
    Tensor merged = merge_heads(context_vec);
    tensor_free(context_vec);
    Tensor out = linear_forward(&m->out_proj, merged);
    if (mode.keep) m->saved.context = merged;  // out_proj's backward reads its input
    else tensor_free(merged);
    return out;
}

// The backward, passes 5-1 in reverse:
//   5. out_proj: dmerged = dout @ W_out, dW_out = dout^T @ merged, db_out the row sums
//   4. dmerged (b, n, d_out) -> (b, h, n, hd)
//   3. the attention over the b * h matrices (the einsums are bmm: dividing
//      before the mask or after it gives the same gradients)
//   2. back to (b, n, d_out)
//   1. each einsum("bnd,do->bno", x, W): dW = x^T @ dQ (a sum over the rows
//      in order), dx = dQ @ W^T; x's gradient gathers the newest first:
//      (V + K) + Q
MHAEinsumGrads mha_einsum_backward(const MHAEinsum *m, Tensor dout) {
    if (m->bias_q.data) die(EXIT_BAD_INPUT, "%s: the backward with qkv_bias is not written", m->name);
    const AttentionSaved *saved = &m->saved;
    if (!saved->queries.data || !saved->context.data)
        die_internal("%s: backward without a forward that saved what its backward reads (mode.keep)", m->name);
    const Tensor x = saved->x;
    const int b = dim(x, 0), T = dim(x, 1), h = m->num_heads, hd = m->head_dim, d = m->d_out;
    const int d_in = dim(m->W_query, 0);
    const long rows = (long)b * T;
    if (numel(dout) != rows * d) die_internal("%s: backward: expected a gradient of the output's size", m->name);
    MHAEinsumGrads g = {0};
    // 5.
    Tensor dmerged = {0};
    linear_backward(&m->out_proj, saved->context, dout, &g.out_proj, &dmerged, false);
    // 4-3.
    Tensor dq, dk, dv;
    causal_heads_backward(saved, dmerged, attention_scale(hd), &dq, &dk, &dv);
    // 2-1. V first, then K, then Q
    Tensor dflat = tensor_empty(SIZE(b, T, d)), part = tensor_empty(SIZE(b, T, d_in));
    g.x = tensor_empty(SIZE(b, T, d_in));
    const Tensor dh[3] = {dq, dk, dv}, W[3] = {m->W_query, m->W_key, m->W_value};
    Tensor *dW[3] = {&g.W_query, &g.W_key, &g.W_value};
    for (int i = 2; i >= 0; i--) {
        layout_heads_merge(dflat.data, dh[i].data, b, T, h, hd);
        *dW[i] = tensor_empty(SIZE(d_in, d));
        gemm_fast_matmul_at(dW[i]->data, x.data, dflat.data, (int)rows, d_in, d);     // x^T @ dQ
        Tensor W_T = tensor_empty(SIZE(d, d_in));
        layout_fast_transpose(W_T.data, W[i].data, d_in, d);
        gemm_fast_matmul(i == 2 ? g.x.data : part.data, dflat.data, W_T.data, (int)rows, d, d_in);  // dQ @ W^T
        tensor_free(W_T);
        if (i != 2) rows_accumulate_grad(g.x.data, part.data, rows * d_in);
    }
    Tensor tmp[] = {dmerged, dq, dk, dv, dflat, part};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    return g;
}

// --- loss = m(x).sum(); loss.backward() (gradients.h) ---------------------------------------
static Tensor forward_keeping(void *m, Tensor x) {
    return mha_einsum_forward_as(m, x, COMPUTE_FOR_BACKWARD);
}
static void backward(const void *m, Tensor dout, Gradients *g) {
    MHAEinsumGrads eg = mha_einsum_backward(m, dout);
    gradients_add(g, "", "W_query", eg.W_query);
    gradients_add(g, "", "W_key", eg.W_key);
    gradients_add(g, "", "W_value", eg.W_value);
    gradients_add_linear(g, "", "out_proj", eg.out_proj);
    g->x = eg.x;
}
static void forget(void *m) { mha_einsum_forget(m); }
static const ModuleOps ops = {forward_keeping, backward, forget};

Gradients mha_einsum_sum_backward(MHAEinsum *m, Tensor x) { return module_sum_backward(&ops, m, m->name, x); }
