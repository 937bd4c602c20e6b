// multihead_attention.h: the book's two ways to attend with several heads
// (§3.6): MultiHeadAttentionWrapper, a list of CausalAttention heads whose
// outputs are concatenated, and MultiHeadAttention, one set of projections
// split into heads by a view, with an output projection. Both are made with
// a ParamSource (param_source.h) and a Recorder (recorder.h), as
// CausalAttention is.
#ifndef LITATTN_MULTIHEAD_ATTENTION_H
#define LITATTN_MULTIHEAD_ATTENTION_H

#include <stdbool.h>

#include "activations.h"
#include "causal_attention.h"
#include "dropout.h"
#include "gradients.h"
#include "linear.h"
#include "param_source.h"
#include "recorder.h"
#include "tensor.h"

#define MAX_HEADS 64  // the wrapper's list of heads (MultiHeadAttention takes any count)

typedef struct {
    char name[64];
    int num_heads;
    CausalAttention heads[MAX_HEADS];  // "<name>.heads.0", ...
    // multihead-attention.ipynb's wrapper (In [5]) ends with
    // self.out_proj = nn.Linear(d_out*num_heads, d_out*num_heads); ch03.ipynb's has none.
    bool has_out_proj;
    Linear out_proj;                   // (num_heads * d_out, num_heads * d_out), with a bias
    Recorder rec;                      // where forward() reports context_vec (with out_proj)
} MultiHeadAttentionWrapper;

MultiHeadAttentionWrapper multihead_attention_wrapper_new(const ParamSource *ps, const Recorder *rec,
                                                          const char *name, int d_in, int d_out, int context_length,
                                                          double dropout, int num_heads, bool qkv_bias);
// multihead-attention.ipynb In [5]'s wrapper: the heads, then out_proj, drawn after them.
MultiHeadAttentionWrapper multihead_attention_wrapper_out_proj_new(const ParamSource *ps, const Recorder *rec,
                                                                   const char *name, int d_in, int d_out,
                                                                   int context_length, double dropout, int num_heads,
                                                                   bool qkv_bias);
// x (b, T, d_in) -> (b, T, num_heads * d_out)
Tensor multihead_attention_wrapper_forward(MultiHeadAttentionWrapper *m, Tensor x);

typedef struct {
    char name[64];
    int d_out, num_heads, head_dim;
    Linear W_query, W_key, W_value;  // (d_out, d_in)
    Linear out_proj;                 // (d_out, d_out), with a bias
    Dropout dropout;
    int context_length;              // the buffer `mask` (context_length, context_length), 1 above the
                                     // diagonal, made only as forward() needs it (causal_mask_bool)
    // Make the (b, h, T, T) tensors even when nothing records them, as torch
    // does: one batch item at a time, (h, T, T) each (the bits do not depend on it).
    bool materialise;
    Recorder rec;                    // where forward() reports its locals
    AttentionActivations *act;       // NULL, or where forward() keeps what the backward needs
    // The last fused forward that drew nothing (no dropout in training
    // mode), on an input of at most 2^21 elements, keeps its activations
    // here, and a copy of its input: a
    // rows_sum_backward of an input of the same values then need not run that
    // forward again (it would give the same bits). .context.data NULL: none.
    AttentionActivations last;
    Tensor last_input;
} MultiHeadAttention;

MultiHeadAttention multihead_attention_new(const ParamSource *ps, const Recorder *rec, const char *name, int d_in,
                                           int d_out, int context_length, double dropout, int num_heads,
                                           bool qkv_bias);
// x (b, T, d_in) -> (b, T, d_out)
Tensor multihead_attention_forward(MultiHeadAttention *m, Tensor x);
void multihead_attention_eval(MultiHeadAttention *m);
long multihead_attention_parameters(const MultiHeadAttention *m);  // sum(p.numel() for p in parameters())

// --- backward: loss.backward() through the last forward -------------------------------
// The wrapper's forward keeps what each head's `act` (heads[i].act) points to.
// Not for a wrapper with out_proj (it dies): its rows_sum_backward below takes
// out_proj's backward first.
typedef struct {
    CausalAttentionGrads heads[MAX_HEADS];  // heads.0.W_query.weight, ... (their .x left empty)
    Tensor x;                               // (b, T, d_in)
} MultiHeadAttentionWrapperGrads;
// dout (b, T, num_heads * d_out)
MultiHeadAttentionWrapperGrads multihead_attention_wrapper_backward(const MultiHeadAttentionWrapper *m, Tensor dout);

typedef struct {
    LinearGrad W_query, W_key, W_value, out_proj;  // W_query.weight, ..., out_proj.bias
    Tensor x;                                      // (b, T, d_in)
} MultiHeadAttentionGrads;
// dout (b, T, d_out); m->act set for the forward
MultiHeadAttentionGrads multihead_attention_backward(const MultiHeadAttention *m, Tensor dout);


// x.requires_grad_(); loss = m(x).sum(); loss.backward() (causal_attention.h):
// every parameter's .grad in named_parameters() order ("heads.0.W_query.weight",
// ..., or "W_query.weight", ..., "out_proj.bias"), and x's.
Gradients multihead_attention_wrapper_sum_backward(MultiHeadAttentionWrapper *m, Tensor x);
Gradients multihead_attention_sum_backward(MultiHeadAttention *m, Tensor x);

#endif
