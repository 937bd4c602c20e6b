// activations.h: what an attention module's forward keeps for its backward,
// as llm.c's ActivationTensors. A module keeps nothing unless its `act`
// field points to one of these (NULL by default: no memory cost when no
// backward is wanted); then forward() stores here, instead of freeing, the
// tensors the backward reads. None of them changes a forward output bit:
// they are the tensors the forward computes anyway.
#ifndef LITATTN_ACTIVATIONS_H
#define LITATTN_ACTIVATIONS_H

#include "tensor.h"

typedef struct {
    Tensor x;                      // the input (not copied: the caller keeps it until the backward)
    Tensor keys, queries, values;  // the projections: (T, d_out), (b, T, d_out), or heads (b, h, T, hd)
    Tensor attn_weights;           // softmax's output, before dropout: (T, T), (b, T, T) or (b, h, T, T);
                                   // .data NULL where the forward was fused (softmax over the last dim,
                                   // nothing recorded): the backward computes it again from q and k
    Tensor noise;                  // dropout's factor (mask / (1 - p)); .data NULL when dropout was the identity
    Tensor context;                // MultiHeadAttention: out_proj's input (b, T, d_out)
} AttentionActivations;

#endif
