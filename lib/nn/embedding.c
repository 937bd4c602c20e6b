// embedding.c: see embedding.h.
#include "embedding.h"

#include <stdio.h>
#include <string.h>

#include "error.h"

Embedding embedding_new(const ParamSource *ps, const char *name, int num_embeddings, int embedding_dim) {
    if (!ps->normal_) die_internal("%s: nn.Embedding needs a ParamSource with normal_", name);
    Embedding e = {0};
    snprintf(e.name, sizeof e.name, "%s", name);
    e.weight = tensor_empty(SIZE(num_embeddings, embedding_dim));
    e.weight.requires_grad = true;
    char key[96];
    snprintf(key, sizeof key, "%s.weight", name);
    ps->normal_(ps->ctx, key, e.weight, 0.0, 1.0);  // init.normal_(self.weight)
    return e;
}

// out[i, :] = weight[ids[i], :]   ids (n,), weight (num, dim), out (n, dim)
Tensor embedding_forward(const Embedding *e, LongTensor ids) {
    const int num = e->weight.shape[0], dim = e->weight.shape[1];
    if (ids.ndim > TENSOR_MAX_DIMS - 1)
        die(EXIT_BAD_INPUT, "%s: expected ids of rank at most %d, found rank %d", e->name, TENSOR_MAX_DIMS - 1, ids.ndim);
    Size s = long_shape(ids);
    s.dims[s.ndim++] = dim;
    Tensor out = tensor_empty(s);
    const long n = long_numel(ids);
    for (long i = 0; i < n; i++) {
        int64_t id = ids.data[i];
        if (id < 0 || id >= num)
            die(EXIT_BAD_INPUT, "%s: %s: expected token ids in [0, %d), found %lld (index out of range in self)",
                error_input(), e->name, num, (long long)id);
        memcpy(out.data + i * dim, e->weight.data + id * (long)dim, (size_t)dim * sizeof(float));
    }
    out.grad_fn = "EmbeddingBackward0";
    return out;
}
