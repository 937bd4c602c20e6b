// torch_multihead_attention.c: see torch_multihead_attention.h for the passes.
#include "torch_multihead_attention.h"

#include <math.h>
#include <stdio.h>

#include "causal_attention.h"
#include "causal_heads.h"
#include "error.h"
#include "fast_kernels.h"
#include "init.h"

MHAPyTorchClass mha_pytorch_class_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                      int d_out, int num_heads, int context_length, double dropout, bool qkv_bias,
                                      bool need_weights) {
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
    MHAPyTorchClass m = {.context_length = context_length, .need_weights = need_weights, .rec = *rec};
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

Tensor mha_pytorch_class_forward(MHAPyTorchClass *m, Tensor x) {
    TorchMultiheadAttention *a = &m->multihead_attn;
    const int E = a->embed_dim;
    if (x.ndim != 3 || dim(x, 2) != E) {
        char s[96];
        size_format(shape(x), s, sizeof s);
        die(EXIT_BAD_INPUT, "%s: %s: expected a batch (b, num_tokens, %d), found shape %s", error_input(), m->name,
            E, s);
    }
    const int b = dim(x, 0), T = dim(x, 1);
    // attn_mask = self.mask[:num_tokens, :num_tokens] (the notebook's class slices to context_length)
    causal_check_tokens(m->name, m->context_length, T);
    // 1. one product of every row with the packed (3E, E) weight
    Tensor qkv = tensor_empty(SIZE(b, T, 3 * E));
    fast_matmul_wt_bias(qkv.data, x.data, a->in_proj_weight.data, NULL, b * T, E, 3 * E);
    // 2.
    Tensor q, k, v;
    unpack_qkv_heads(qkv, a->num_heads, &q, &k, &v);
    tensor_free(qkv);
    // 3. q_scaled = q / math.sqrt(E), E the head's width here: a float division
    const float s = (float)sqrt((double)a->head_dim);
    for (long i = 0, n = numel(q); i < n; i++) q.data[i] = q.data[i] / s;
    // 4-5. baddbmm(mask, q_scaled, k^T), softmax, dropout, @ v: scale 1
    Tensor per_head = causal_heads(q, k, v, &a->dropout, 1.0, m->materialise, &m->rec, a->name);
    Tensor tmp[] = {q, k, v};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tensor_free(tmp[i]);
    Tensor merged = merge_heads(per_head);
    tensor_free(per_head);
    // 6. out_proj, then the notebook's proj
    Tensor attn_output = linear_forward(&a->out_proj, merged);
    tensor_free(merged);
    Tensor output = linear_forward(&m->proj, attn_output);
    tensor_free(attn_output);
    return output;
}
