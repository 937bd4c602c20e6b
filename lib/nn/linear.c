// linear.c: nn.Linear's initialisation and forward.
#include "linear.h"

#include <stdio.h>

#include "error.h"
#include "gemm.h"
#include "init.h"
#include "ops.h"
#include "rows.h"

Linear linear_new(const ParamSource *ps, const char *name, int in, int out, bool bias) {
    if (in < 1 || out < 1) die(EXIT_BAD_INPUT, "nn.Linear: in_features %d and out_features %d must be >= 1", in, out);
    Linear l = {.weight = tensor_empty(SIZE(out, in))};
    snprintf(l.name, sizeof l.name, "%s", name);
    char key[128];
    // nn.Linear.__init__ allocates weight, then bias; reset_parameters draws
    // in the same order. kaiming_uniform_(weight, a=sqrt(5)) is U(-b, b).
    double wb = kaiming_uniform_bound(in);
    snprintf(key, sizeof key, "%s.weight", name);
    ps->uniform_(ps->ctx, key, l.weight, -wb, wb);
    l.weight.requires_grad = true;
    if (bias) {
        l.bias = tensor_empty(SIZE(out));
        double bb = linear_bias_bound(in);
        snprintf(key, sizeof key, "%s.bias", name);
        ps->uniform_(ps->ctx, key, l.bias, -bb, bb);
        l.bias.requires_grad = true;
    }
    return l;
}

Linear linear_in(const ParamSource *ps, const char *module, const char *attr, int in, int out, bool bias) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", module, attr);
    return linear_new(ps, key, in, out, bias);
}

Linear linear_from(const char *name, Tensor weight, Tensor bias) {
    if (weight.ndim != 2 || (bias.data && (bias.ndim != 1 || bias.shape[0] != weight.shape[0])))
        die(EXIT_BAD_INPUT, "nn.Linear: expected a (out, in) weight and an (out,) bias");
    Linear l = {.weight = weight, .bias = bias};
    snprintf(l.name, sizeof l.name, "%s", name);
    return l;
}

long linear_parameters(const Linear *l) { return numel(l->weight) + (l->bias.data ? numel(l->bias) : 0); }

Tensor linear_forward(const Linear *l, Tensor x) {
    const int in = l->weight.shape[1], out = l->weight.shape[0];
    if (x.ndim < 1 || x.shape[x.ndim - 1] != in) {
        char s[96];
        size_format(shape(x), s, sizeof s);
        die(EXIT_BAD_INPUT, "%s: expected an input whose last axis has %d features, found %s", l->name, in, s);
    }
    Size s = shape(x);
    s.dims[s.ndim - 1] = out;
    Tensor y = tensor_empty(s);
    // F.linear: every row of x (B*T collapsed into one axis) times weight.T,
    // one sgemm 'T','N'; the bias, when there is one, is added last.
    const int rows = (int)(numel(x) / in);
    gemm_fast_matmul_wt_bias(y.data, x.data, l->weight.data, l->bias.data, rows, in, out);
    // What F.linear records: addmm on 2-D (and 3-D through a view) input
    // with a bias, matmul (+ add) otherwise.
    const bool b = l->bias.data != NULL;
    const char *fn = x.ndim == 1 ? (b ? "AddBackward0" : "SqueezeBackward3")
                   : x.ndim == 2 ? (b ? "AddmmBackward0" : "MmBackward0")
                   : x.ndim == 3 ? (b ? "ViewBackward0" : "UnsafeViewBackward0")
                                 : (b ? "AddBackward0" : "UnsafeViewBackward0");
    y.grad_fn = ops_needs_grad(x) || ops_needs_grad(l->weight) || (b && ops_needs_grad(l->bias)) ? fn : NULL;
    return y;
}

// linear_forward's backward (gemm.c and rows.c: gemm_linear_backward_x, _w, rows_linear_backward_bias):
//   dweight = dy^T @ x, dbias = dy summed over the rows, dx (+)= dy @ weight,
// all rows of x (any rank) taken as one matrix, as F.linear does.
void linear_backward(const Linear *l, Tensor x, Tensor dy, LinearGrad *g, Tensor *dx, bool dy_colmajor) {
    const int in = l->weight.shape[1], out = l->weight.shape[0];
    const long rows = numel(x) / in;
    if (numel(dy) != rows * out) die_internal("%s: backward: the gradient does not have the output's size", l->name);
    g->weight = tensor_empty(shape(l->weight));
    gemm_fast_matmul_at(g->weight.data, dy.data, x.data, (int)rows, out, in);  // gemm_linear_backward_w
    g->bias = (Tensor){0};
    if (l->bias.data) {
        g->bias = tensor_empty(shape(l->bias));
        rows_linear_backward_bias(g->bias.data, dy.data, rows, out, dy_colmajor);
    }
    if (!dx) return;
    if (!dx->data) {
        *dx = tensor_empty(shape(x));
        gemm_fast_matmul(dx->data, dy.data, l->weight.data, (int)rows, out, in);  // gemm_linear_backward_x
    } else {
        Tensor part = tensor_empty(shape(x));
        gemm_fast_matmul(part.data, dy.data, l->weight.data, (int)rows, out, in);
        rows_accumulate_grad(dx->data, part.data, rows * in);
        tensor_free(part);
    }
}
