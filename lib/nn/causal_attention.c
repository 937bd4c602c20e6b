// causal_attention.c: CausalAttention's forward, in five passes:
//   1. project x (b, T, d_in) to keys, queries, values (b, T, d_out)
//   2. attn_scores = queries @ keys.transpose(1, 2)           (b, T, T)
//   3. attn_scores[mask] = -inf above the diagonal, in place
//   4. attn_weights = dropout(softmax(attn_scores / sqrt(d_k), dim=-1))
//   5. context_vec = attn_weights @ values                    (b, T, d_out)
#include "causal_attention.h"

#include <math.h>
#include <stdio.h>

#include "error.h"
#include "ops.h"

static Linear layer(const ParamSource *ps, const char *module, const char *layer_name, int in, int out,
                    bool bias) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", module, layer_name);
    return linear_new(ps, key, in, out, bias);
}

CausalAttention causal_attention_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                     int d_out, int context_length, double dropout, bool qkv_bias) {
    CausalAttention m = {.d_out = d_out, .softmax_dim = -1, .rec = *rec};
    snprintf(m.name, sizeof m.name, "%s", name);
    m.W_query = layer(ps, name, "W_query", d_in, d_out, qkv_bias);
    m.W_key = layer(ps, name, "W_key", d_in, d_out, qkv_bias);
    m.W_value = layer(ps, name, "W_value", d_in, d_out, qkv_bias);
    char key[96];
    snprintf(key, sizeof key, "%s.dropout", name);
    m.dropout = dropout_new(ps, key, dropout);
    m.mask = torch_triu(torch_ones(SIZE(context_length, context_length)), 1);
    return m;
}

void causal_attention_eval(CausalAttention *m) { m->dropout.training = false; }

Tensor causal_mask_bool(const char *module, Tensor mask, int num_tokens) {
    // The book's classes index the buffer with [:num_tokens, :num_tokens];
    // more tokens than context_length would not fit (torch raises there).
    if (num_tokens > mask.shape[0])
        die(EXIT_BAD_INPUT, "%s: %s: expected inputs of at most context_length = %d tokens, found %d",
            error_input(), module, mask.shape[0], num_tokens);
    return torch_slice2(torch_bool(mask), num_tokens, num_tokens);
}

Tensor causal_attention_forward(CausalAttention *m, Tensor x) {
    if (x.ndim != 3) {
        char s[96];
        size_format(shape(x), s, sizeof s);
        die(EXIT_BAD_INPUT, "%s: %s: expected a batch (b, num_tokens, d_in), found shape %s",
            error_input(), m->name, s);
    }
    const int num_tokens = dim(x, 1);
    Tensor mask_bool = causal_mask_bool(m->name, m->mask, num_tokens);  // (refuses too many tokens first)
    Tensor keys = linear_forward(&m->W_key, x);
    Tensor queries = linear_forward(&m->W_query, x);
    Tensor values = linear_forward(&m->W_value, x);

    Tensor keys_T = torch_transpose(keys, 1, 2);
    Tensor attn_scores = torch_matmul(queries, keys_T);
    tensor_free(keys_T);
    torch_masked_fill_(&attn_scores, mask_bool, -INFINITY);
    Tensor scaled = torch_div_scalar(attn_scores, pow((double)dim(keys, -1), 0.5));
    Tensor attn_weights = torch_softmax(scaled, m->softmax_dim);
    tensor_free(scaled);
    attn_weights = dropout_replace(&m->dropout, attn_weights);

    Tensor context_vec = torch_matmul(attn_weights, values);
    RECORD(&m->rec, m->name, keys);
    RECORD(&m->rec, m->name, queries);
    RECORD(&m->rec, m->name, values);
    RECORD(&m->rec, m->name, attn_scores);
    RECORD(&m->rec, m->name, attn_weights);
    RECORD(&m->rec, m->name, context_vec);
    return context_vec;
}
