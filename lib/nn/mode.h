// mode.h: how a module's forward computes, passed in by whoever makes or
// runs the module; a forward never infers it (not from its Recorder, not
// from what else is set).
//
//   attention  which path the attention takes (below);
//   keep       whether the forward keeps in the module what X_backward reads
//              (the input, the projections, the softmax output or dropout's
//              factor, ...), for a backward that follows; else it frees its
//              intermediates as it goes. A forward first forgets what an
//              earlier one kept.
//
// Every path gives the same output bits; they differ in what is made,
// reported and held:
//
//   ATTENTION_FUSED         no (T, T) tensor: scores, mask, softmax, dropout
//                           and the product with the values a block of query
//                           rows at a time (tensor/ops.h ops_fused_attention); the
//                           forward reports nothing. A softmax over another
//                           dim than the last, a mask the module holds, or the
//                           book's 2-D self-attention make their (T, T)
//                           tensors instead (there is no fused kernel for
//                           them), and still report nothing.
//   ATTENTION_MATERIALISED  every (T, T) tensor made as torch makes it, one
//                           batch item's at a time where nothing is kept (the
//                           same bits; the bonus notebook's classes run so,
//                           the chapter's limit being one item's (h, T, T));
//                           the forward reports nothing.
//   ATTENTION_RECORDED      every (T, T) tensor made for the whole batch, and
//                           the forward's locals (keys, attn_scores, ...,
//                           context_vec) reported to the module's Recorder:
//                           what --dump needs.
//
// The chapter runtime makes the book's modules RECORDED when --dump keeps
// their locals, else FUSED, and the bonus notebook's MATERIALISED
// (runtime/chapter.h); module_sum_backward (gradients.h) runs a forward
// {ATTENTION_FUSED, .keep = true} before its backward.
#ifndef LITATTN_MODE_H
#define LITATTN_MODE_H

#include <stdbool.h>

typedef enum { ATTENTION_FUSED, ATTENTION_MATERIALISED, ATTENTION_RECORDED } AttentionPath;

typedef struct {
    AttentionPath attention;
    bool keep;
} ComputeMode;

// The forward of loss = m(x).sum(); loss.backward() (module_sum_backward):
// fused, nothing reported, what its backward reads saved.
#define COMPUTE_FOR_BACKWARD ((ComputeMode){ATTENTION_FUSED, .keep = true})

#endif
