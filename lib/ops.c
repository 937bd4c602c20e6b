// ops.c: shape checks and allocation around the kernels. A shape mismatch
// here means a fixture's tensors do not fit together, so it is reported as
// bad input, naming the operation and both shapes.
#include "ops.h"

#include <stdio.h>

#include "error.h"
#include "kernels.h"

static const char *shape_str(Tensor t, char *buf, size_t len) {
    Shape s = tensor_shape(t);
    long long dims[2] = {s.dims[0], s.dims[1]};
    shape_format(s.ndim, dims, buf, len);
    return buf;
}

static void mismatch(const char *op, Tensor a, Tensor b) {
    char sa[32], sb[32];
    die(EXIT_BAD_INPUT, "%s: shapes %s and %s do not fit", op, shape_str(a, sa, sizeof sa),
        shape_str(b, sb, sizeof sb));
}

Tensor torch_matmul(Tensor a, Tensor b) {
    // A vector on the left is a one-row matrix whose row dimension is then dropped.
    int M = a.ndim == 2 ? a.rows : 1, K = a.cols;
    if (a.ndim == 0 || b.ndim != 2 || b.rows != K) mismatch("matmul", a, b);
    Tensor out = a.ndim == 2 ? tensor_matrix(M, b.cols) : tensor_vector(b.cols);
    matmul(out.data, a.data, b.data, M, K, b.cols);
    return out;
}

Tensor torch_transpose(Tensor a) {
    if (a.ndim != 2) mismatch("transpose", a, a);
    Tensor out = tensor_matrix(a.cols, a.rows);
    transpose(out.data, a.data, a.rows, a.cols);
    return out;
}

Tensor torch_dot(Tensor a, Tensor b) {
    if (a.ndim != 1 || b.ndim != 1 || a.cols != b.cols) mismatch("dot", a, b);
    return tensor_scalar(dot(a.data, b.data, a.cols));
}

Tensor torch_sum(Tensor a) { return tensor_scalar(sum(a.data, tensor_numel(a))); }

Tensor torch_sum_rows(Tensor a) {
    if (a.ndim != 2) mismatch("sum(dim=-1)", a, a);
    Tensor out = tensor_vector(a.rows);
    for (int r = 0; r < a.rows; r++) out.data[r] = sum(a.data + (size_t)r * a.cols, a.cols);
    return out;
}

Tensor torch_div(Tensor a, float s) {
    Tensor out = tensor_copy(a);
    div_scalar(out.data, a.data, s, tensor_numel(a));
    return out;
}

Tensor torch_mul(Tensor a, float s) {
    Tensor out = tensor_copy(a);
    mul_scalar(out.data, a.data, s, tensor_numel(a));
    return out;
}

Tensor torch_exp(Tensor a) {
    Tensor out = tensor_copy(a);
    exp_elementwise(out.data, a.data, tensor_numel(a));
    return out;
}

Tensor torch_softmax(Tensor a, int dim) {
    // Only the last dimension: the one the book normalises (dim=0 of a vector, dim=-1).
    if (a.ndim == 0 || (dim != -1 && dim != a.ndim - 1)) mismatch("softmax over a dimension other than the last", a, a);
    Tensor out = tensor_copy(a);
    for (int r = 0; r < a.rows; r++) softmax_row(out.data + (size_t)r * a.cols, a.data + (size_t)r * a.cols, a.cols);
    return out;
}

void torch_add_scaled_(Tensor acc, float w, Tensor x) {
    if (tensor_numel(acc) != tensor_numel(x)) mismatch("add", acc, x);
    add_scaled(acc.data, w, x.data, tensor_numel(x));
}
