// mha_einsum.h: the bonus notebook's MHAEinsum (mha-implementations.ipynb,
// section 4): weights held as (d_in, d_out) nn.Parameters and applied with
// torch.einsum.
//
// __init__ draws W_query, W_key, W_value = torch.randn(d_in, d_out) in turn
// (normal_, random/normal.h), then out_proj = nn.Linear(d_out, d_out), and
// reset_parameters() draws the three weights AGAIN by kaiming_uniform_(a =
// sqrt(5)), whose fan_in is W.size(1) = d_out, and with qkv_bias the biases
// by uniform_(+-1/sqrt(d_out)). The randn values are thrown away; their
// words still move the generator.
//
// torch 1.13's einsum contracts two operands with one bmm: "bnd,do->bno" is
// x @ W, "bhnd,bhmd->bhnm" is Q @ K^T, "bhnm,bhmd->bhnd" is P @ V, each output
// the k-sum from +0 in k order (checked against torch: the same bits).
#ifndef LITATTN_MHA_EINSUM_H
#define LITATTN_MHA_EINSUM_H

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
    Tensor W_query, W_key, W_value;  // (d_in, d_out): x @ W, not x @ W.T
    Tensor bias_q, bias_k, bias_v;   // (d_out,), or .data NULL without qkv_bias
    Linear out_proj;                 // (d_out, d_out), with a bias
    Dropout dropout;
    ComputeMode mode;                // how forward() computes (mode.h)
    Recorder rec;                    // where an ATTENTION_RECORDED forward reports its locals
    AttentionSaved saved;        // what the last forward with mode.keep kept for the backward
} MHAEinsum;

// MHAEinsum(d_in, d_out, context_length, dropout, num_heads, qkv_bias). ps
// must have a normal_ (the chapter's draws do).
MHAEinsum mha_einsum_new(const ParamSource *ps, const Recorder *rec, ComputeMode mode, const char *name, int d_in,
                         int d_out, int context_length, double dropout, int num_heads, bool qkv_bias);
// x (b, n, d_in) -> (b, n, d_out); n <= context_length. As m->mode says (_as: as `mode` says).
Tensor mha_einsum_forward(MHAEinsum *m, Tensor x);
Tensor mha_einsum_forward_as(MHAEinsum *m, Tensor x, ComputeMode mode);

// --- backward: loss.backward() through the last forward, run with mode.keep --------
// (qkv_bias=False only: with biases it dies)
typedef struct {
    Tensor W_query, W_key, W_value;  // (d_in, d_out)
    LinearGrad out_proj;             // out_proj.weight, out_proj.bias
    Tensor x;                        // (b, n, d_in)
} MHAEinsumGrads;
// dout (b, n, d_out)
MHAEinsumGrads mha_einsum_backward(const MHAEinsum *m, Tensor dout);
void mha_einsum_forget(MHAEinsum *m);  // frees what the last forward kept

// x.requires_grad_(); loss = m(x).sum(); loss.backward() (gradients.h
// module_sum_backward; qkv_bias=False only): every parameter's .grad in
// named_parameters() order (W_query, W_key, W_value, out_proj.weight,
// out_proj.bias), and x's.
Gradients mha_einsum_sum_backward(MHAEinsum *m, Tensor x);

#endif
