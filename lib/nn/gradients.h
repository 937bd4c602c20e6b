// gradients.h: what `loss.backward()` leaves in a module's parameters and
// its input, for whoever prints or keeps them.
//
// In the notebook, after
//     x.requires_grad_()
//     loss = module(x).sum()
//     loss.backward()
// each parameter holds its .grad, visited as
//     for name, param in module.named_parameters(): print(name, param.grad)
// and x holds x.grad. Gradients is that: the module's name, each parameter's
// state_dict key ("W_query.weight", "heads.1.W_key.bias", "out_proj.bias")
// with its gradient, in named_parameters() order, and x's gradient.
//
// module_sum_backward below is that cell for every module, written once over the
// module's ModuleOps: each module's X_sum_backward(m, x) is
// module_sum_backward(&X_ops, m, m->name, x).
#ifndef LITATTN_GRADIENTS_H
#define LITATTN_GRADIENTS_H

#include "saved.h"
#include "linear.h"
#include "tensor.h"

// The wrapper's 64 heads of three Linear layers with biases, and room to spare.
#define GRADIENTS_MAX 400

typedef struct {
    char key[48];  // the state_dict key, relative to the module: "W_query.weight"
    Tensor grad;   // the parameter's shape; prints without grad_fn, as a .grad does
} ParamGrad;

typedef struct {
    char module[64];  // the module's name ("ca", "exercise_3_3.mha")
    int n;
    ParamGrad param[GRADIENTS_MAX];  // in named_parameters() order
    Tensor x;                        // the input's .grad, x's shape
} Gradients;

// The module's record, before any parameter.
void gradients_begin(Gradients *g, const char *module);
// A parameter's gradient under `key` (prefix "" or "heads.0.", then the attribute).
void gradients_add(Gradients *g, const char *prefix, const char *key, Tensor grad);
// A Linear attribute's parameters in named_parameters() order: "<attr>.weight", then "<attr>.bias" if it has one.
void gradients_add_linear(Gradients *g, const char *prefix, const char *attr, LinearGrad lg);

// Frees what a forward kept in *saved (the input aside, which it does not own) and empties it.
void attention_saved_free(AttentionSaved *saved);

// What module_sum_backward needs of a module, each a one-line adapter over the
// module's own functions (m is the module, X *):
typedef struct {
    // X_forward_as(m, x, {ATTENTION_FUSED, .keep = true}): m's forward on x
    // (b, T, d_in) or (T, d_in), keeping what its backward reads and
    // reporting nothing; m itself moves on as torch's module does (in
    // training mode its dropout draws its next mask). Returns the output.
    Tensor (*forward_keeping)(void *m, Tensor x);
    // X_backward(m, dout) over what that forward kept, dout the output's
    // shape: each parameter's gradient added to g under its key, in
    // named_parameters() order, and g->x set.
    void (*backward)(const void *m, Tensor dout, Gradients *g);
    // X_forget(m): frees what the forward kept.
    void (*forget)(void *m);
} ModuleOps;

// x.requires_grad_(); loss = m(x).sum(); loss.backward(): the forward again
// (the forward cell reported its locals; this one reports none), saving what its
// backward reads, then the backward of a gradient of ones (out.sum()'s), what
// was saved then freed. Returns every parameter's .grad in
// named_parameters() order, and x's (x's shape). name: the module's.
Gradients module_sum_backward(const ModuleOps *ops, void *m, const char *name, Tensor x);

#endif
