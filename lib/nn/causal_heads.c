// causal_heads.c: see causal_heads.h.
#include "causal_heads.h"

#include <string.h>

#include "attention.h"
#include "error.h"
#include "layout.h"

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

void causal_heads_backward(const AttentionSaved *saved, Tensor dmerged, double scale, Tensor *dq, Tensor *dk,
                           Tensor *dv) {
    const int b = dim(saved->queries, 0), h = dim(saved->queries, 1), T = dim(saved->queries, 2), hd = dim(saved->queries, 3);
    Tensor dctx = tensor_empty(shape(saved->queries));
    layout_heads_split(dctx.data, dmerged.data, b, T, h, hd);  // merge_heads' backward
    attention_backward_kept(saved, dctx, scale, true, -1, dq, dk, dv);
    tensor_free(dctx);
}
