// multihead_attention.c: the wrapper, and MultiHeadAttention's forward in
// six passes:
//   1. project x (b, T, d_in) to keys, queries, values (b, T, d_out)
//   2. split the last axis into heads: view (b, T, h, hd), transpose -> (b, h, T, hd)
//   3. attn_scores = queries @ keys.transpose(2, 3), -inf above the diagonal   (b, h, T, T)
//   4. attn_weights = dropout(softmax(attn_scores / sqrt(hd), dim=-1))
//   5. context_vec = (attn_weights @ values).transpose(1, 2), heads merged back: (b, T, d_out)
//   6. context_vec = out_proj(context_vec)
#include "multihead_attention.h"

#include <math.h>
#include <stdio.h>

#include "error.h"
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

Tensor multihead_attention_wrapper_forward(MultiHeadAttentionWrapper *m, Tensor x) {
    // torch.cat([head(x) for head in self.heads], dim=-1)
    Tensor outs[MAX_HEADS];
    for (int i = 0; i < m->num_heads; i++) outs[i] = causal_attention_forward(&m->heads[i], x);
    return torch_cat(m->num_heads, outs, -1);
}

static Linear layer(const ParamSource *ps, const char *module, const char *layer_name, int in, int out,
                    bool bias) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", module, layer_name);
    return linear_new(ps, key, in, out, bias);
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
    m.W_query = layer(ps, name, "W_query", d_in, d_out, qkv_bias);
    m.W_key = layer(ps, name, "W_key", d_in, d_out, qkv_bias);
    m.W_value = layer(ps, name, "W_value", d_in, d_out, qkv_bias);
    m.out_proj = layer(ps, name, "out_proj", d_out, d_out, true);  // Linear layer to combine head outputs
    char key[96];
    snprintf(key, sizeof key, "%s.dropout", name);
    m.dropout = dropout_new(ps, key, dropout);
    m.mask = torch_triu(torch_ones(SIZE(context_length, context_length)), 1);
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

Tensor multihead_attention_forward(MultiHeadAttention *m, Tensor x) {
    if (x.ndim != 3) {
        char s[96];
        size_format(shape(x), s, sizeof s);
        die(EXIT_BAD_INPUT, "%s: %s: expected a batch (b, num_tokens, d_in), found shape %s",
            error_input(), m->name, s);
    }
    const int b = dim(x, 0), num_tokens = dim(x, 1);
    Tensor mask_bool = causal_mask_bool(m->name, m->mask, num_tokens);  // (refuses too many tokens first)
    Tensor keys = split_heads(m, linear_forward(&m->W_key, x));
    Tensor queries = split_heads(m, linear_forward(&m->W_query, x));
    Tensor values = split_heads(m, linear_forward(&m->W_value, x));

    Tensor keys_T = torch_transpose(keys, 2, 3);
    Tensor attn_scores = torch_matmul(queries, keys_T);  // dot product for each head
    tensor_free(keys_T);
    torch_masked_fill_(&attn_scores, mask_bool, -INFINITY);

    Tensor scaled = torch_div_scalar(attn_scores, pow((double)dim(keys, -1), 0.5));
    Tensor attn_weights = torch_softmax(scaled, -1);
    tensor_free(scaled);
    attn_weights = dropout_replace(&m->dropout, attn_weights);

    Tensor per_head = torch_matmul(attn_weights, values);              // (b, h, T, hd)
    Tensor context_vec = torch_transpose(per_head, 1, 2);             // (b, T, h, hd)
    tensor_free(per_head);
    Tensor merged = view(torch_contiguous(context_vec), SIZE(b, num_tokens, m->d_out));
    context_vec = linear_forward(&m->out_proj, merged);               // optional projection
    tensor_free(merged);
    RECORD(&m->rec, m->name, keys);
    RECORD(&m->rec, m->name, queries);
    RECORD(&m->rec, m->name, values);
    RECORD(&m->rec, m->name, attn_scores);
    RECORD(&m->rec, m->name, attn_weights);
    RECORD(&m->rec, m->name, context_vec);
    return context_vec;
}
