// linear.c: nn.Linear's initialisation and forward.
#include "linear.h"

#include <stddef.h>

#include "error.h"
#include "init.h"
#include "kernels.h"

Linear linear_new(int in, int out, int bias, RandomSource *rs) {
    if (in < 1 || out < 1) die(EXIT_USAGE, "linear_new: in_features %d and out_features %d must be >= 1", in, out);
    Linear l;
    // nn.Linear.__init__ allocates weight, then bias; reset_parameters then
    // draws in the same order. Allocation draws nothing.
    l.weight = tensor_matrix(out, in);
    l.bias = (Tensor){.ndim = 0};
    if (bias) l.bias = tensor_vector(out);
    // kaiming_uniform_(weight, a=sqrt(5)): U(-bound, bound), out * in draws in row-major order.
    double wb = kaiming_uniform_bound(in);
    uniform_fill(l.weight.data, out * in, -wb, wb, rs);
    // then uniform_(bias, -1/sqrt(in), 1/sqrt(in)): out draws.
    if (bias) {
        double bb = linear_bias_bound(in);
        uniform_fill(l.bias.data, out, -bb, bb, rs);
    }
    return l;
}

Linear linear_from(Tensor weight, Tensor bias) {
    if (weight.ndim != 2 || weight.data == NULL)
        die(EXIT_BAD_INPUT, "linear_from: weight must be a rank-2 (out, in) tensor, got rank %d", weight.ndim);
    int out = weight.rows;
    if (bias.data != NULL && (bias.ndim != 1 || bias.cols != out))
        die(EXIT_BAD_INPUT, "linear_from: bias must be rank 1 of %d values (weight is (%d, %d)), got rank %d of %d",
            out, out, weight.cols, bias.ndim, bias.rows * bias.cols);
    Linear l = {weight, bias};
    return l;
}

Tensor linear_forward(const Linear *l, Tensor x) {
    int in = l->weight.cols, out = l->weight.rows;
    if ((x.ndim != 1 && x.ndim != 2) || x.cols != in)
        die(EXIT_BAD_INPUT, "linear_forward: input must be (T, %d) or (%d,), got rank %d with last dimension %d", in,
            in, x.ndim, x.cols);
    // rank 1 is a single row: (1, in) -> (1, out), printed as (out,)
    int T = x.rows;
    Tensor y = x.ndim == 2 ? tensor_matrix(T, out) : tensor_vector(out);
    // x (T, in) @ weight^T, weight (out, in), + bias (out) or NULL -> y (T, out)
    matmul_wt_bias(y.data, x.data, l->weight.data, l->bias.data, T, in, out);
    return y;
}
