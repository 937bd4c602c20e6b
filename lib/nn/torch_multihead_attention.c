// torch_multihead_attention.c: see torch_multihead_attention.h for the passes.
#include "torch_multihead_attention.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "causal_heads.h"
#include "error.h"
#include "gemm.h"
#include "init.h"
#include "layout.h"
#include "ops.h"
#include "rows.h"

MHAPyTorchClass mha_pytorch_class_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                      int d_in, int d_out, int num_heads, int context_length, double dropout,
                                      bool qkv_bias, bool need_weights) {
    if (qkv_bias)
        die(EXIT_BAD_INPUT, "%s: %s: nn.MultiheadAttention with bias=True and add_bias_kv=True is not written here",
            error_input(), name);
    // nn.MultiheadAttention: assert self.head_dim * num_heads == self.embed_dim
    if (num_heads < 1 || d_out % num_heads != 0)
        die(EXIT_BAD_INPUT, "%s: %s: expected num_heads to divide embed_dim (embed_dim must be divisible by "
            "num_heads), found embed_dim = %d and num_heads = %d", error_input(), name, d_out, num_heads);
    if (d_in != d_out)
        die(EXIT_BAD_INPUT, "%s: %s: nn.MultiheadAttention(embed_dim=d_out) takes inputs of d_out = %d features, "
            "found d_in = %d", error_input(), name, d_out, d_in);
    MHAPyTorchClass m = {.context_length = context_length, .need_weights = need_weights, .mode = mode, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    TorchMultiheadAttention *a = &m.multihead_attn;
    snprintf(a->name, sizeof a->name, "%s.multihead_attn", name);
    a->embed_dim = d_out, a->num_heads = num_heads, a->head_dim = d_out / num_heads;
    // __init__: in_proj_weight = Parameter(empty(3E, E)); out_proj draws now.
    a->in_proj_weight = tensor_empty(SIZE(3 * d_out, d_out));
    a->out_proj = linear_in(ps, a->name, "out_proj", d_out, d_out, false);
    // _reset_parameters: xavier_uniform_(in_proj_weight), fan_in E, fan_out 3E
    char key[128];
    snprintf(key, sizeof key, "%s.in_proj_weight", a->name);
    const double xb = xavier_uniform_bound(d_out, 3L * d_out, 1.0);
    ps->uniform_(ps->ctx, key, a->in_proj_weight, -xb, xb);
    a->in_proj_weight.requires_grad = true;
    snprintf(key, sizeof key, "%s.dropout", a->name);
    a->dropout = dropout_new(ps, key, dropout);
    // self.proj = nn.Linear(d_out, d_out)
    m.proj = linear_in(ps, name, "proj", d_out, d_out, true);
    return m;
}

// x (b, T, E), T <= context_length, or one line and exit 1
static void check_input(const MHAPyTorchClass *m, Tensor x) {
    const int E = m->multihead_attn.embed_dim;
    char dims[48];
    snprintf(dims, sizeof dims, "b, num_tokens, %d", E);
    attention_expect_batch(x, m->name, dims, E);
    // attn_mask = self.mask[:num_tokens, :num_tokens] (the notebook's class slices to context_length)
    causal_check_tokens(m->name, m->context_length, dim(x, 1));
}

void mha_pytorch_class_forget(MHAPyTorchClass *m) { attention_saved_free(&m->saved); }

Tensor mha_pytorch_class_forward(MHAPyTorchClass *m, Tensor x) { return mha_pytorch_class_forward_as(m, x, m->mode); }

Tensor mha_pytorch_class_forward_as(MHAPyTorchClass *m, Tensor x, ComputeMode mode) {
    TorchMultiheadAttention *a = &m->multihead_attn;
    const int E = a->embed_dim;
    check_input(m, x);
    mha_pytorch_class_forget(m);
    const int b = dim(x, 0), T = dim(x, 1);
    // 1. one product of every row with the packed (3E, E) weight
    Tensor qkv = tensor_empty(SIZE(b, T, 3 * E));
    gemm_fast_matmul_wt_bias(qkv.data, x.data, a->in_proj_weight.data, NULL, b * T, E, 3 * E);
    // 2.
    Tensor q, k, v;
    unpack_qkv_heads(qkv, a->num_heads, &q, &k, &v);
    tensor_free(qkv);
    // 3. q_scaled = q / math.sqrt(E), E the head's width here: a float division
    const float s = (float)sqrt((double)a->head_dim);
    for (long i = 0, n = numel(q); i < n; i++) q.data[i] = q.data[i] / s;
    // 4-5. baddbmm(mask, q_scaled, k^T), softmax, dropout, @ v: scale 1
    m->saved.x = x;
    Tensor per_head = attention_forward(mode, &m->rec, a->name, &a->dropout, q, k, v, (Tensor){0}, -1, 1.0, &m->saved);
    if (!mode.keep) {
        Tensor tmp[] = {q, k, v};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
        m->saved = (AttentionSaved){0};
    }
    Tensor merged = merge_heads(per_head);
    tensor_free(per_head);
    // 6. out_proj, then the notebook's proj
    Tensor attn_output = linear_forward(&a->out_proj, merged);
    Tensor output = linear_forward(&m->proj, attn_output);
    if (mode.keep) {  // out_proj's and proj's backward read their inputs
        m->saved.context = merged;
        m->saved.attn_output = attn_output;
    } else {
        tensor_free(merged);
        tensor_free(attn_output);
    }
    return output;
}

// The backward, passes 6-1 in reverse (torch 1.13's autograd of
// F.multi_head_attention_forward and the notebook's proj, checked against
// torch), over what the forward kept. A product's gradient sums over rows in
// the order torch's tensor holds them: proj's input, the module's output
// transposed back to (b, T, E), is copied by matmul in (b, T) order;
// out_proj's and the in-projection's inputs are (T, b) rows. So those two
// run on (T, b) copies (no arithmetic) and every sum is one chain from +0 in
// torch's order.
//   6. proj: dW_proj = dout^T @ attn_output (rows (b, T)), db_proj the row
//      sums, dattn = dout @ W_proj; out_proj: dW_out = dattn^T @ merged
//      (rows (T, b)), dmerged = dattn @ W_out
//   5. heads: dmerged (T * b, E) -> dctx (b * h, T, hd), item bi * h + hi
//   4. bmm, dropout, softmax, baddbmm on q_scaled with scale 1 (x / 1 is x):
//      dw = dctx @ v^T, dv = w^T @ dctx, dS = softmax's backward,
//      d(q_scaled) = dS @ k, dk = dS^T @ q_scaled (the weights computed
//      again from q_scaled and k where the forward was fused)
//   3. q_scaled = q / sqrt(hd): dq = d(q_scaled) / sqrt(hd), after the product
//   2. chunk and views: dq, dk, dv side by side in each (T, b) row of dproj (T * b, 3E)
//   1. dW_in = dproj^T @ x (rows (T, b)), dx = dproj @ W_in (one sum over
//      3E), transposed back to (b, T, E)
MHAPyTorchClassGrads mha_pytorch_class_backward(const MHAPyTorchClass *m, Tensor dout) {
    const TorchMultiheadAttention *a = &m->multihead_attn;
    const AttentionSaved *saved = &m->saved;
    if (!saved->queries.data || !saved->context.data || !saved->attn_output.data)
        die_internal("%s: backward without a forward that saved what its backward reads (mode.keep)", m->name);
    const int b = dim(saved->x, 0), T = dim(saved->x, 1), E = a->embed_dim, h = a->num_heads, hd = a->head_dim;
    if (!size_equal(shape(dout), shape(saved->x))) {
        char s[96], want[96];
        size_format(shape(dout), s, sizeof s);
        size_format(shape(saved->x), want, sizeof want);
        die(EXIT_BAD_INPUT, "%s: %s: backward: expected a gradient of the output's shape %s, found %s",
            error_input(), m->name, want, s);
    }
    const long rows = (long)b * T;
    const float s = (float)sqrt((double)a->head_dim);
    MHAPyTorchClassGrads g = {0};
    // 6.
    Tensor dattn = {0}, dmerged_tb = {0};
    linear_backward(&m->proj, saved->attn_output, dout, &g.proj, &dattn, false);
    Tensor dattn_tb = torch_transpose(dattn, 0, 1);  // (T, b, E)
    tensor_free(dattn);
    Tensor merged_tb = torch_transpose(saved->context, 0, 1);  // (T, b, E)
    linear_backward(&a->out_proj, merged_tb, dattn_tb, &g.out_proj, &dmerged_tb, false);
    tensor_free(merged_tb), tensor_free(dattn_tb);
    // 5.
    Tensor dmerged = torch_transpose(dmerged_tb, 0, 1);  // (b, T, E)
    tensor_free(dmerged_tb);
    // 4.
    Tensor dq, dk, dv;
    causal_heads_backward(saved, dmerged, 1.0, &dq, &dk, &dv);
    tensor_free(dmerged);
    // 3. rows_div_scalar_backward
    rows_fast_div_scalar(dq.data, dq.data, s, numel(dq));
    // 2.
    Tensor dproj = tensor_empty(SIZE(T, b, 3 * E)), part = tensor_empty(SIZE(b, T, E));
    const Tensor parts[3] = {dq, dk, dv};
    for (int p = 0; p < 3; p++) {
        layout_heads_merge(part.data, parts[p].data, b, T, h, hd);
        for (long bi = 0; bi < b; bi++)
            for (long t = 0; t < T; t++)
                memcpy(dproj.data + (t * b + bi) * 3 * E + (long)p * E, part.data + (bi * T + t) * E,
                       (size_t)E * sizeof(float));
    }
    Tensor back[] = {dq, dk, dv, part};
    for (size_t i = 0; i < sizeof back / sizeof back[0]; i++) tensor_free(back[i]);
    // 1.
    Tensor x_tb = torch_transpose(saved->x, 0, 1);  // (T, b, E)
    Tensor dx_tb = tensor_empty(SIZE(T, b, E));
    g.in_proj_weight = tensor_empty(shape(a->in_proj_weight));
    gemm_fast_matmul_at(g.in_proj_weight.data, dproj.data, x_tb.data, (int)rows, 3 * E, E);  // gemm_linear_backward_w
    gemm_fast_matmul(dx_tb.data, dproj.data, a->in_proj_weight.data, (int)rows, 3 * E, E);   // gemm_linear_backward_x
    tensor_free(dproj), tensor_free(x_tb);
    g.x = torch_transpose(dx_tb, 0, 1);
    tensor_free(dx_tb);
    return g;
}

// --- loss = m(x).sum(); loss.backward() (gradients.h) ---------------------------------------
static Tensor forward_keeping(void *m, Tensor x) {
    return mha_pytorch_class_forward_as(m, x, COMPUTE_FOR_BACKWARD);
}
static void backward(const void *m, Tensor dout, Gradients *g) {
    MHAPyTorchClassGrads pg = mha_pytorch_class_backward(m, dout);
    gradients_add(g, "multihead_attn.", "in_proj_weight", pg.in_proj_weight);
    gradients_add_linear(g, "multihead_attn.", "out_proj", pg.out_proj);
    gradients_add_linear(g, "", "proj", pg.proj);
    g->x = pg.x;
}
static void forget(void *m) { mha_pytorch_class_forget(m); }
static const ModuleOps ops = {forward_keeping, backward, forget};

Gradients mha_pytorch_class_sum_backward(MHAPyTorchClass *m, Tensor x) { return module_sum_backward(&ops, m, m->name, x); }
