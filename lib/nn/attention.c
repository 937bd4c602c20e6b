// attention.c: the attention every module of nn/ shares (attention.h).
#include "attention.h"

#include <math.h>
#include <string.h>

#include "attend.h"
#include "error.h"
#include "ops.h"

double attention_scale(int d) { return pow((double)d, 0.5); }

void attention_expect_batch(Tensor x, const char *module, const char *dims, int last) {
    if (x.ndim == 3 && (last == 0 || dim(x, 2) == last)) return;
    char s[96];
    size_format(shape(x), s, sizeof s);
    die(EXIT_BAD_INPUT, "%s: %s: expected a batch (%s), found shape %s", error_input(), module, dims, s);
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

Tensor attention_materialised(const Recorder *rec, const char *name, Dropout *dropout, Tensor queries, Tensor keys,
                              Tensor values, Tensor mask_bool, int softmax_dim, double scale,
                              AttentionSaved *keep) {
    Tensor keys_T = keys.ndim == 2 ? torch_T(keys) : torch_transpose(keys, keys.ndim - 2, keys.ndim - 1);
    Tensor attn_scores = torch_matmul(queries, keys_T);  // dot product for each (head and) batch item
    tensor_free(keys_T);
    if (mask_bool.data) torch_masked_fill_(&attn_scores, mask_bool, -INFINITY);
    Tensor scaled = torch_div_scalar(attn_scores, scale);
    Tensor attn_weights = torch_softmax(scaled, softmax_dim);
    tensor_free(scaled);
    Tensor softmax_out = attn_weights;
    if (keep) {  // the backward reads the softmax output and dropout's factor
        *keep = (AttentionSaved){.x = keep->x, .keys = keys, .queries = queries, .values = values,
                                       .attn_weights = softmax_out};
        if (dropout) attn_weights = dropout_forward_keep(dropout, attn_weights, &keep->noise);
    } else if (dropout) {
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
    if (!keep || attn_weights.data != softmax_out.data) tensor_free(attn_weights);
    return context;
}

Tensor attention_forward(ComputeMode mode, const Recorder *rec, const char *name, Dropout *dropout, Tensor queries,
                         Tensor keys, Tensor values, Tensor held_mask, int softmax_dim, double scale,
                         AttentionSaved *keep) {
    if (queries.ndim < 3 || !size_equal(shape(queries), shape(keys)) || !size_equal(shape(queries), shape(values)))
        die_internal("%s: attention: expected queries, keys, values of one shape (b, T, d) or (b, h, T, hd)", name);
    if (!mode.keep) keep = NULL;
    const int T = dim(queries, -2), last = queries.ndim - 1;
    if (mode.attention == ATTENTION_FUSED && !held_mask.data && (softmax_dim == -1 || softmax_dim == last)) {
        // Nothing reads the (T, T) tensors: never made, a block of query
        // rows at a time, the same bits. A backward computes the weights
        // again from what is kept.
        Size scores = shape(queries);
        scores.dims[last] = T;
        Tensor noise = dropout_factor(dropout, scores);
        Tensor context = ops_fused_attention(queries, keys, values, noise, true, scale);
        if (keep) *keep = (AttentionSaved){.x = keep->x, .keys = keys, .queries = queries, .values = values,
                                                 .noise = noise};
        else if (noise.data) tensor_free(noise);
        return context;
    }
    const Recorder *report = mode.attention == ATTENTION_RECORDED ? rec : NULL;
    Tensor mask_bool = held_mask.data ? held_mask : causal_mask_bool(name, T, T);
    Tensor context;
    const int b = dim(queries, 0);
    if (mode.attention == ATTENTION_MATERIALISED && !keep && b > 1) {
        // One batch item at a time: (1, [h,] T, T) tensors, the same bits
        // (each item's products, softmax rows and dropout draws are its own, in order).
        context = tensor_empty(shape(queries));
        Size item = shape(queries);
        item.dims[0] = 1;
        const long per = size_numel(item);
        for (int i = 0; i < b; i++) {
            Tensor one = attention_materialised(NULL, name, dropout, view(sel(queries, i), item),
                                                view(sel(keys, i), item), view(sel(values, i), item), mask_bool,
                                                softmax_dim, scale, NULL);
            memcpy(context.data + i * per, one.data, (size_t)per * sizeof(float));
            tensor_free(one);
        }
    } else {
        context = attention_materialised(report, name, dropout, queries, keys, values, mask_bool, softmax_dim, scale,
                                         keep);
    }
    if (!held_mask.data) tensor_free(mask_bool);
    return context;
}

void attention_backward_kept(const AttentionSaved *saved, Tensor dcontext, double scale, bool causal, int softmax_dim,
                        Tensor *dq, Tensor *dk, Tensor *dv) {
    const Size s = shape(saved->queries);
    const int T = dim(saved->queries, -2), d = dim(saved->queries, -1);
    *dq = tensor_empty(s), *dk = tensor_empty(s), *dv = tensor_empty(s);
    attend_fast_backward(dq->data, dk->data, dv->data, dcontext.data, saved->queries.data, saved->keys.data,
                            saved->values.data, saved->attn_weights.data, saved->noise.data, numel(saved->queries) / ((long)T * d),
                            T, d, (float)scale, causal, softmax_dim);
}
