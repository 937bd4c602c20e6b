// multihead_attention.h: the book's two ways to attend with several heads
// (§3.6): MultiHeadAttentionWrapper, a list of CausalAttention heads whose
// outputs are concatenated, and MultiHeadAttention, one set of projections
// split into heads by a view, with an output projection. Both are made with
// a ParamSource (param_source.h), a Recorder (recorder.h) and a ComputeMode
// (mode.h), as CausalAttention is (the contract: nn/README.md).
#ifndef LITATTN_MULTIHEAD_ATTENTION_H
#define LITATTN_MULTIHEAD_ATTENTION_H

#include <stdbool.h>

#include "saved.h"
#include "causal_attention.h"
#include "dropout.h"
#include "gradients.h"
#include "linear.h"
#include "mode.h"
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
    ComputeMode mode;                  // how forward() computes (mode.h), its heads' included
    Recorder rec;                      // where an ATTENTION_RECORDED forward reports context_vec (with out_proj)
    AttentionSaved saved;          // with mode.keep and out_proj: .context, out_proj's input
} MultiHeadAttentionWrapper;

MultiHeadAttentionWrapper multihead_attention_wrapper_new(const ParamSource *ps, const Recorder *rec,
                                                          ComputeMode mode, const char *name, int d_in, int d_out,
                                                          int context_length, double dropout, int num_heads,
                                                          bool qkv_bias);
// multihead-attention.ipynb In [5]'s wrapper: the heads, then out_proj, drawn after them.
MultiHeadAttentionWrapper multihead_attention_wrapper_out_proj_new(const ParamSource *ps, const Recorder *rec,
                                                                   ComputeMode mode, const char *name, int d_in,
                                                                   int d_out, int context_length, double dropout,
                                                                   int num_heads, bool qkv_bias);
// x (b, T, d_in) -> (b, T, num_heads * d_out), as m->mode says (_as: as `mode` says, for every head)
Tensor multihead_attention_wrapper_forward(MultiHeadAttentionWrapper *m, Tensor x);
Tensor multihead_attention_wrapper_forward_as(MultiHeadAttentionWrapper *m, Tensor x, ComputeMode mode);

typedef struct {
    char name[64];
    int d_out, num_heads, head_dim;
    Linear W_query, W_key, W_value;  // (d_out, d_in)
    Linear out_proj;                 // (d_out, d_out), with a bias
    Dropout dropout;
    int context_length;              // the buffer `mask` (context_length, context_length), 1 above the
                                     // diagonal, made only as forward() needs it (causal_mask_bool)
    ComputeMode mode;                // how forward() computes (mode.h)
    Recorder rec;                    // where an ATTENTION_RECORDED forward reports its locals
    AttentionSaved saved;        // what the last forward with mode.keep kept for the backward
    // A fused forward without mode.keep that drew nothing (no dropout in
    // training mode), on an input of at most 2^21 elements, saves what
    // its backward reads all the same, and here a copy of its input: a
    // rows_sum_backward of an input of the same values then need not run that
    // forward again (it would give the same bits). .data NULL: none.
    Tensor last_input;
} MultiHeadAttention;

MultiHeadAttention multihead_attention_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode,
                                           const char *name, int d_in, int d_out, int context_length, double dropout,
                                           int num_heads, bool qkv_bias);
// x (b, T, d_in) -> (b, T, d_out), as m->mode says (_as: as `mode` says)
Tensor multihead_attention_forward(MultiHeadAttention *m, Tensor x);
Tensor multihead_attention_forward_as(MultiHeadAttention *m, Tensor x, ComputeMode mode);
void multihead_attention_eval(MultiHeadAttention *m);
long multihead_attention_parameters(const MultiHeadAttention *m);  // sum(p.numel() for p in parameters())

// --- backward: loss.backward() through the last forward, run with mode.keep --------
typedef struct {
    CausalAttentionGrads heads[MAX_HEADS];  // heads.0.W_query.weight, ... (their .x left empty)
    LinearGrad out_proj;                    // out_proj.weight, out_proj.bias (with out_proj)
    Tensor x;                               // (b, T, d_in)
} MultiHeadAttentionWrapperGrads;
// dout (b, T, num_heads * d_out)
MultiHeadAttentionWrapperGrads multihead_attention_wrapper_backward(const MultiHeadAttentionWrapper *m, Tensor dout);

typedef struct {
    LinearGrad W_query, W_key, W_value, out_proj;  // W_query.weight, ..., out_proj.bias
    Tensor x;                                      // (b, T, d_in)
} MultiHeadAttentionGrads;
// dout (b, T, d_out)
MultiHeadAttentionGrads multihead_attention_backward(const MultiHeadAttention *m, Tensor dout);

// Free what the last forward kept.
void multihead_attention_wrapper_forget(MultiHeadAttentionWrapper *m);
void multihead_attention_forget(MultiHeadAttention *m);

// x.requires_grad_(); loss = m(x).sum(); loss.backward() (gradients.h
// module_sum_backward): every parameter's .grad in named_parameters() order
// ("heads.0.W_query.weight", ..., "out_proj.bias", or "W_query.weight", ...,
// "out_proj.bias"), and x's.
Gradients multihead_attention_wrapper_sum_backward(MultiHeadAttentionWrapper *m, Tensor x);
Gradients multihead_attention_sum_backward(MultiHeadAttention *m, Tensor x);

#endif
