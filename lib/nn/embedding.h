// embedding.h: nn.Embedding(num_embeddings, embedding_dim), the lookup table
// of multihead-attention.ipynb In [2] (token_embedding_layer,
// pos_embedding_layer).
//
// Its weight (num_embeddings, embedding_dim) is drawn as
// reset_parameters() draws it: init.normal_(weight), mean 0, std 1, through
// the ParamSource's normal_ (torch 1.13's CPU normal_: random/normal.h),
// no padding_idx. forward(ids) is F.embedding: row ids[i] of the weight for
// each id, no arithmetic.
#ifndef LITATTN_EMBEDDING_H
#define LITATTN_EMBEDDING_H

#include "param_source.h"
#include "tensor.h"

typedef struct {
    char name[64];   // "token_embedding_layer": its parameter is "<name>.weight"
    Tensor weight;   // (num_embeddings, embedding_dim), requires grad
} Embedding;

// nn.Embedding(num_embeddings, embedding_dim); both >= 1. Dies if ps has no normal_.
Embedding embedding_new(const ParamSource *ps, const char *name, int num_embeddings, int embedding_dim);
// ids (...) int64, each in [0, num_embeddings) -> (..., embedding_dim); rank of ids at most 3.
// An id out of range ends the program with one line (torch: IndexError).
Tensor embedding_forward(const Embedding *e, LongTensor ids);

#endif
