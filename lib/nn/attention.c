// attention.c: the attention's scale and its batch check (attention.h).
#include "attention.h"

#include <math.h>

#include "error.h"
#include "ops.h"

double attention_scale(int d) { return pow((double)d, 0.5); }

void attention_expect_batch(Tensor x, const char *module, const char *dims, int last) {
    if (x.ndim == 3 && (last == 0 || dim(x, 2) == last)) return;
    char s[96];
    size_format(shape(x), s, sizeof s);
    die(EXIT_BAD_INPUT, "%s: %s: expected a batch (%s), found shape %s", error_input(), module, dims, s);
}

Tensor attention_materialised(const Recorder *rec, const char *name, Dropout *dropout, AttentionActivations *act,
                              Tensor x, Tensor keys, Tensor queries, Tensor values, Tensor mask_bool,
                              int softmax_dim) {
    Tensor keys_T = torch_transpose(keys, keys.ndim - 2, keys.ndim - 1);
    Tensor attn_scores = torch_matmul(queries, keys_T);  // dot product for each (head and) batch item
    tensor_free(keys_T);
    torch_masked_fill_(&attn_scores, mask_bool, -INFINITY);
    Tensor scaled = torch_div_scalar(attn_scores, attention_scale(dim(keys, -1)));
    Tensor attn_weights = torch_softmax(scaled, softmax_dim);
    tensor_free(scaled);
    if (act) {  // the backward reads the softmax output and dropout's factor
        *act = (AttentionActivations){.x = x, .keys = keys, .queries = queries, .values = values,
                                      .attn_weights = attn_weights};
        attn_weights = dropout_forward_keep(dropout, attn_weights, &act->noise);
    } else {
        attn_weights = dropout_replace(dropout, attn_weights);
    }
    Tensor context = torch_matmul(attn_weights, values);
    RECORD(rec, name, keys);
    RECORD(rec, name, queries);
    RECORD(rec, name, values);
    RECORD(rec, name, attn_scores);
    RECORD(rec, name, attn_weights);
    // The recorder copied what it keeps: the T x T tensors go now, but for
    // the softmax output the backward reads.
    tensor_free(attn_scores);
    if (!act || attn_weights.data != act->attn_weights.data) tensor_free(attn_weights);
    return context;
}
