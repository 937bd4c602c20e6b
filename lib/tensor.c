// tensor.c: allocation, shape queries and the pool that frees them all.
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

// Every data block handed out, so tensor_release_all() can free them at once.
static float **pool;
static size_t pool_len, pool_cap;

static float *pool_alloc(size_t n) {
    if (pool_len == pool_cap) {
        size_t cap = pool_cap ? 2 * pool_cap : 64;
        float **grown = realloc(pool, cap * sizeof *grown);
        if (!grown) die(EXIT_BAD_INPUT, "out of memory growing the tensor pool");
        pool = grown;
        pool_cap = cap;
    }
    float *data = calloc(n ? n : 1, sizeof(float));
    if (!data) die(EXIT_BAD_INPUT, "out of memory allocating %zu floats", n);
    pool[pool_len++] = data;
    return data;
}

static Tensor tensor_new(int ndim, int rows, int cols) {
    if (rows < 0 || cols < 0) die(EXIT_BAD_INPUT, "negative tensor size (%d, %d)", rows, cols);
    Tensor t = {ndim, rows, cols, pool_alloc((size_t)rows * (size_t)cols)};
    return t;
}

Tensor tensor_scalar(float value) {
    Tensor t = tensor_new(0, 1, 1);
    t.data[0] = value;
    return t;
}

Tensor tensor_vector(int n) { return tensor_new(1, 1, n); }

Tensor tensor_matrix(int rows, int cols) { return tensor_new(2, rows, cols); }

Tensor tensor_copy(Tensor t) {
    Tensor c = tensor_new(t.ndim, t.rows, t.cols);
    memcpy(c.data, t.data, (size_t)tensor_numel(t) * sizeof(float));
    return c;
}

Tensor tensor_row(Tensor t, int r) {
    if (t.ndim != 2 || r < 0 || r >= t.rows)
        die(EXIT_BAD_INPUT, "row %d of a tensor with %d rows", r, t.ndim == 2 ? t.rows : 0);
    Tensor row = tensor_vector(t.cols);
    memcpy(row.data, t.data + (size_t)r * (size_t)t.cols, (size_t)t.cols * sizeof(float));
    return row;
}

float tensor_item(Tensor t) {
    if (tensor_numel(t) != 1) die(EXIT_BAD_INPUT, "item() of a tensor with %d elements", tensor_numel(t));
    return t.data[0];
}

int tensor_numel(Tensor t) { return t.rows * t.cols; }

int tensor_dim(Tensor t, int dim) {
    Shape s = tensor_shape(t);
    if (dim < 0) dim += s.ndim;
    if (dim < 0 || dim >= s.ndim) die(EXIT_BAD_INPUT, "dimension %d of a rank-%d tensor", dim, s.ndim);
    return s.dims[dim];
}

Shape tensor_shape(Tensor t) {
    Shape s = {t.ndim, {0, 0}};
    if (t.ndim == 1) s.dims[0] = t.cols;
    if (t.ndim == 2) s.dims[0] = t.rows, s.dims[1] = t.cols;
    return s;
}

int shape_matches(Shape want, Shape have) {
    if (want.ndim != have.ndim) return 0;
    for (int i = 0; i < want.ndim; i++)
        if (want.dims[i] != SHAPE_ANY && want.dims[i] != have.dims[i]) return 0;
    return 1;
}

void shape_format(int ndim, const long long *dims, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < ndim && n < len; i++) {
        if (dims[i] < 0) n += (size_t)snprintf(buf + n, len - n, "%s*", i ? ", " : "");
        else n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", dims[i]);
    }
    if (n < len) snprintf(buf + n, len - n, ndim == 1 ? ",)" : ")");
}

void tensor_release_all(void) {
    for (size_t i = 0; i < pool_len; i++) free(pool[i]);
    free(pool);
    pool = NULL;
    pool_len = pool_cap = 0;
}
