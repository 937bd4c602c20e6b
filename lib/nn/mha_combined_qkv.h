// mha_combined_qkv.h: the bonus notebook's MultiHeadAttentionCombinedQKV
// (mha-implementations.ipynb, section 3): one nn.Linear(d_in, 3 * d_out) for
// queries, keys and values, split into heads by a view and a permute, then
// chapter 3's causal attention and a projection with a bias.
//
// Sections 5 and 6's MHAPyTorchScaledDotProduct and MHAPyTorchSDPAWithoutFlash
// hold the same parameters (qkv, then proj) and hand the heads to
// nn.functional.scaled_dot_product_attention, which torch 1.13 lacks (2.0):
// they are made here with mha_sdpa_new, and their forward is the exact fused
// causal attention (ops_fused_attention, ATTENTION_FUSED), chapter 3's order
// of operations.
#ifndef LITATTN_MHA_COMBINED_QKV_H
#define LITATTN_MHA_COMBINED_QKV_H

#include <stdbool.h>

#include "saved.h"
#include "dropout.h"
#include "gradients.h"
#include "linear.h"
#include "mode.h"
#include "param_source.h"
#include "recorder.h"
#include "tensor.h"

typedef struct {
    char name[64];
    int d_out, num_heads, head_dim, context_length;
    Linear qkv;                // (3 * d_out, d_in): rows 0..d_out-1 queries, then keys, then values
    Linear proj;               // (d_out, d_out), with a bias
    Dropout dropout;           // nn.Dropout(dropout), or the SDPA classes' dropout_p
    ComputeMode mode;          // how forward() computes (mode.h)
    Recorder rec;              // where an ATTENTION_RECORDED forward reports its locals
    AttentionSaved saved;  // what the last forward with mode.keep kept for the backward
} MultiHeadAttentionCombinedQKV;

// MultiHeadAttentionCombinedQKV(d_in, d_out, num_heads, context_length, dropout, qkv_bias)
MultiHeadAttentionCombinedQKV mha_combined_qkv_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode,
                                                   const char *name, int d_in, int d_out, int num_heads,
                                                   int context_length, double dropout, bool qkv_bias);
// MHAPyTorchScaledDotProduct / MHAPyTorchSDPAWithoutFlash(d_in, d_out, num_heads, context_length, dropout,
// qkv_bias): the same draws (qkv, proj); their maker passes ATTENTION_FUSED (the stand-in for torch 2.0's SDPA).
MultiHeadAttentionCombinedQKV mha_sdpa_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode,
                                           const char *name, int d_in, int d_out, int num_heads, int context_length,
                                           double dropout, bool qkv_bias);
// x (b, T, d_in) -> (b, T, d_out); T <= context_length. As m->mode says (_as: as `mode` says).
Tensor mha_combined_qkv_forward(MultiHeadAttentionCombinedQKV *m, Tensor x);
Tensor mha_combined_qkv_forward_as(MultiHeadAttentionCombinedQKV *m, Tensor x, ComputeMode mode);

// --- backward: loss.backward() through the last forward, run with mode.keep --------
typedef struct {
    LinearGrad qkv, proj;  // qkv.weight, [qkv.bias,] proj.weight, proj.bias
    Tensor x;              // (b, T, d_in)
} MultiHeadAttentionCombinedQKVGrads;
// dout (b, T, d_out)
MultiHeadAttentionCombinedQKVGrads mha_combined_qkv_backward(const MultiHeadAttentionCombinedQKV *m, Tensor dout);
void mha_combined_qkv_forget(MultiHeadAttentionCombinedQKV *m);  // frees what the last forward kept

// x.requires_grad_(); loss = m(x).sum(); loss.backward() (gradients.h
// module_sum_backward): every parameter's .grad in named_parameters() order
// (qkv.weight, [qkv.bias,] proj.weight, proj.bias), and x's.
Gradients mha_combined_qkv_sum_backward(MultiHeadAttentionCombinedQKV *m, Tensor x);

#endif
