// saved.h: what an attention module's forward saves for its backward (torch's
// ctx.save_for_backward; llm.c's ActivationTensors). A module holds one (its
// `saved`), empty until a forward runs with mode.keep (mode.h). That forward
// then stores here, instead of freeing, the tensors its backward reads, and
// X_backward(m, dout) reads them. None of them changes a forward output bit:
// they are the tensors the forward computes anyway. A forward first forgets
// what an earlier one kept (attention_saved_free, gradients.h).
#ifndef LITATTN_SAVED_H
#define LITATTN_SAVED_H

#include "tensor.h"

typedef struct {
    Tensor x;                      // the input (not copied: the caller keeps it until the backward)
    Tensor keys, queries, values;  // the projections: (T, d_out), (b, T, d_out), or heads (b, h, T, hd)
                                   // (MHAPyTorchClass: its queries divided by sqrt(hd))
    Tensor attn_weights;           // softmax's output, before dropout: (T, T), (b, T, T) or (b, h, T, T);
                                   // .data NULL where the forward was fused: the backward computes it
                                   // again from queries and keys
    Tensor noise;                  // dropout's factor (mask / (1 - p)), the weights' shape; .data NULL
                                   // when dropout was the identity
    Tensor context;                // the heads merged, the output projection's input (b, T, d_out); the
                                   // wrapper's: the heads' outputs concatenated (b, T, h * d_out)
    Tensor attn_output;            // MHAPyTorchClass: nn.MultiheadAttention's output, the class's
                                   // proj's input (b, T, d_out)
} AttentionSaved;

#endif
