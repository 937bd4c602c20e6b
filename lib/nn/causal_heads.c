// causal_heads.c: see causal_heads.h.
#include "causal_heads.h"

#include <math.h>
#include <string.h>

#include "attend.h"
#include "causal_attention.h"
#include "error.h"
#include "layout.h"
#include "ops.h"

// One batch item, as torch composes it: (h, T, T) scores, mask, scale,
// softmax, dropout, product with v. q, k, v (1, h, T, hd) views.
static Tensor materialised_item(Tensor q, Tensor k, Tensor v, Tensor mask_bool, Dropout *dropout, double scale,
                                const Recorder *rec, const char *module) {
    Tensor k_T = torch_transpose(k, 2, 3);
    Tensor attn_scores = torch_matmul(q, k_T);      // (1, h, T, T)
    tensor_free(k_T);
    torch_masked_fill_(&attn_scores, mask_bool, -INFINITY);
    Tensor scaled = torch_div_scalar(attn_scores, scale);
    Tensor attn_weights = torch_softmax(scaled, -1);
    tensor_free(scaled);
    attn_weights = dropout_replace(dropout, attn_weights);
    Tensor context = torch_matmul(attn_weights, v);  // (1, h, T, hd)
    record_local(rec, module, "attn_scores", attn_scores);
    record_local(rec, module, "attn_weights", attn_weights);
    tensor_free(attn_scores);
    tensor_free(attn_weights);
    return context;
}

Tensor causal_heads(Tensor q, Tensor k, Tensor v, Dropout *dropout, double scale, bool materialise,
                    const Recorder *rec, const char *module) {
    if (q.ndim != 4 || !size_equal(shape(q), shape(k)) || !size_equal(shape(q), shape(v)))
        die_internal("%s: attention: expected q, k, v of one shape (b, h, T, hd)", module);
    const int b = dim(q, 0), h = dim(q, 1), T = dim(q, 2), hd = dim(q, 3);
    if (!materialise) {
        Tensor noise = dropout_factor(dropout, SIZE(b, h, T, T));
        Tensor context = fused_attention(q, k, v, noise, true, scale);
        tensor_free(noise);
        return context;
    }
    Tensor mask_bool = causal_mask_bool(module, T, T);
    Tensor context = tensor_empty(shape(q));
    const Size item = SIZE(1, h, T, hd);
    const long per = size_numel(item);
    for (int i = 0; i < b; i++) {
        Tensor one = materialised_item(view(sel(q, i), item), view(sel(k, i), item), view(sel(v, i), item),
                                       mask_bool, dropout, scale, rec, module);
        memcpy(context.data + i * per, one.data, (size_t)per * sizeof(float));
        tensor_free(one);
    }
    tensor_free(mask_bool);
    return context;
}

void unpack_qkv_heads(Tensor qkv, int num_heads, Tensor *q, Tensor *k, Tensor *v) {
    const int b = dim(qkv, 0), T = dim(qkv, 1), width = dim(qkv, 2);
    if (qkv.ndim != 3 || num_heads < 1 || width % (3 * num_heads) != 0)
        die(EXIT_BAD_INPUT, "qkv: expected (b, T, 3 * num_heads * head_dim) with num_heads = %d, found %d columns",
            num_heads, width);
    const int d = width / 3, hd = d / num_heads;
    Tensor *out[3] = {q, k, v};
    for (int part = 0; part < 3; part++) {
        // qkv[:, :, part] is (b, T, h, hd) inside rows of 3 * d: copied out, then split.
        Tensor flat = tensor_empty(SIZE(b, T, d));
        for (long r = 0; r < (long)b * T; r++)
            memcpy(flat.data + r * d, qkv.data + r * width + (long)part * d, (size_t)d * sizeof(float));
        *out[part] = tensor_empty(SIZE(b, num_heads, T, hd));
        layout_fast_split_heads(out[part]->data, flat.data, b, T, num_heads, hd);
        tensor_free(flat);
    }
}

Tensor merge_heads(Tensor heads) {
    const int b = dim(heads, 0), h = dim(heads, 1), T = dim(heads, 2), hd = dim(heads, 3);
    Tensor out = tensor_empty(SIZE(b, T, h * hd));
    layout_fast_merge_heads(out.data, heads.data, b, h, T, hd);
    return out;
}

Tensor split_heads_of(Tensor t, int num_heads) {
    const int b = dim(t, 0), T = dim(t, 1), d = dim(t, 2);
    if (t.ndim != 3 || num_heads < 1 || d % num_heads != 0)
        die(EXIT_BAD_INPUT, "expected (b, T, d) with num_heads = %d dividing d = %d", num_heads, d);
    Tensor out = tensor_empty(SIZE(b, num_heads, T, d / num_heads));
    layout_fast_split_heads(out.data, t.data, b, T, num_heads, d / num_heads);
    return out;
}

void causal_heads_backward(Tensor dmerged, Tensor q, Tensor k, Tensor v, Tensor noise, double scale, Tensor *dq,
                           Tensor *dk, Tensor *dv) {
    const int b = dim(q, 0), h = dim(q, 1), T = dim(q, 2), hd = dim(q, 3);
    const Size heads = shape(q);
    Tensor dctx = tensor_empty(heads);
    layout_heads_split(dctx.data, dmerged.data, b, T, h, hd);  // merge_heads' backward
    *dq = tensor_empty(heads), *dk = tensor_empty(heads), *dv = tensor_empty(heads);
    attend_fast_backward(dq->data, dk->data, dv->data, dctx.data, q.data, k.data, v.data, NULL, noise.data,
                            (long)b * h, T, hd, (float)scale, true, -1);
    tensor_free(dctx);
}
