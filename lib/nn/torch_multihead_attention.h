// torch_multihead_attention.h: torch 1.13's nn.MultiheadAttention, as the
// bonus notebook's MHAPyTorchClass (mha-implementations.ipynb, sections 7
// and 8) uses it: batch_first=True, bias=False, add_bias_kv=False, in
// training mode (the module's fast path is then off), query = key = value.
//
// Its initialisation (torch/nn/modules/activation.py, 1.13): out_proj is an
// nn.Linear(E, E, bias=False) made in __init__, so its weight draws first
// (kaiming_uniform_(a=sqrt(5))); then _reset_parameters draws in_proj_weight
// (3E, E) by xavier_uniform_ (U(-a, a), a = sqrt(6 / (E + 3E))). The
// notebook's own proj = nn.Linear(E, E) draws after it.
//
// Its forward (F.multi_head_attention_forward, 1.13, checked against torch):
//   1. x.transpose(1, 0); proj = x @ in_proj_weight^T (T, b, 3E), split into q, k, v
//   2. q, k, v -> (b * h, T, hd)
//   3. q_scaled = q / sqrt(hd)                           BEFORE the product
//   4. the bool mask becomes a float one (0, or -inf above the diagonal), and
//      w = baddbmm(mask, q_scaled, k^T): netlib's sgemm with beta = 1 starts
//      each sum at the mask value and adds the products in k order; -inf
//      stays -inf, and 0 + p0 + ... is the sum from +0
//   5. softmax(w, dim=-1), dropout(p), w @ v, heads merged (T * b, E)
//   6. out_proj (no bias), back to (b, T, E)
// need_weights=False takes the same path in 1.13 (the module's fast path,
// which would differ, needs eval mode): it only skips returning the weights
// averaged over heads, which the notebook's class throws away anyway.
//
// Its backward (torch 1.13's autograd, checked against torch): every sum
// over rows runs in the order torch's tensors hold the rows. The notebook's
// proj reads the module's (b, T, E) output, a transposed view that matmul
// copies: its weight's gradient sums over (b, T) rows. out_proj and the
// in-projection read (T, b) rows (x.transpose(1, 0)): their weights'
// gradients sum over (T, b) rows. The baddbmm's gradients go to q_scaled
// (dk = dS^T @ q_scaled), and dq = d(q_scaled) / sqrt(hd) divides after the
// product. need_weights changes no gradient.
#ifndef LITATTN_TORCH_MULTIHEAD_ATTENTION_H
#define LITATTN_TORCH_MULTIHEAD_ATTENTION_H

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
    char name[80];           // "<class>.multihead_attn"
    int embed_dim, num_heads, head_dim;
    Tensor in_proj_weight;   // (3E, E): rows of q, then k, then v
    Linear out_proj;         // (E, E), no bias
    Dropout dropout;         // F.dropout(p) on the weights in training mode
} TorchMultiheadAttention;

typedef struct {
    char name[64];
    int context_length;
    TorchMultiheadAttention multihead_attn;
    bool need_weights;
    Linear proj;               // (d_out, d_out), with a bias
    ComputeMode mode;          // how forward() computes (mode.h)
    Recorder rec;              // where an ATTENTION_RECORDED forward reports the attention's locals
                               // (under "<name>.multihead_attn")
    AttentionSaved saved;  // what the last forward with mode.keep kept for the backward
} MHAPyTorchClass;

// MHAPyTorchClass(d_in, d_out, num_heads, context_length, dropout, qkv_bias, need_weights).
// qkv_bias=True (in-projection biases and add_bias_kv) is not written: it dies.
MHAPyTorchClass mha_pytorch_class_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name,
                                      int d_in, int d_out, int num_heads, int context_length, double dropout,
                                      bool qkv_bias, bool need_weights);
// x (b, T, d_out) -> (b, T, d_out); T <= context_length. As m->mode says (_as: as `mode` says).
Tensor mha_pytorch_class_forward(MHAPyTorchClass *m, Tensor x);
Tensor mha_pytorch_class_forward_as(MHAPyTorchClass *m, Tensor x, ComputeMode mode);

// --- backward: out.backward(dout) through the last forward, run with mode.keep -----
typedef struct {
    Tensor in_proj_weight;  // multihead_attn.in_proj_weight (3E, E)
    LinearGrad out_proj;    // multihead_attn.out_proj.weight (E, E), no bias
    LinearGrad proj;        // proj.weight, proj.bias
    Tensor x;               // (b, T, d_out)
} MHAPyTorchClassGrads;
// dout (b, T, d_out), any upstream gradient
MHAPyTorchClassGrads mha_pytorch_class_backward(const MHAPyTorchClass *m, Tensor dout);
void mha_pytorch_class_forget(MHAPyTorchClass *m);  // frees what the last forward kept

// x.requires_grad_(); loss = m(x).sum(); loss.backward() (gradients.h
// module_sum_backward): every parameter's .grad in named_parameters() order
// (multihead_attn.in_proj_weight, multihead_attn.out_proj.weight,
// proj.weight, proj.bias), and x's (b, T, d_out).
Gradients mha_pytorch_class_sum_backward(MHAPyTorchClass *m, Tensor x);

#endif
