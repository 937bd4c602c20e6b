// tensor.h: a small float32 tensor of rank 0, 1 or 2, row-major like a
// contiguous PyTorch tensor.
//
// Every tensor made here is recorded in one pool and freed together by
// tensor_release_all(), so a chapter reads like its notebook (no free() after
// every cell) and still ends clean under valgrind.
#ifndef LITATTN_TENSOR_H
#define LITATTN_TENSOR_H

#include <stddef.h>

typedef struct {
    int ndim;        // 0, 1 or 2: how it prints and how it is stored in HDF5
    int rows, cols;  // rank 0: (1, 1); rank 1 of n values: (1, n); rank 2: (rows, cols)
    float *data;     // rows * cols floats, data[r * cols + c]
} Tensor;

// A wanted shape, for checks: dims[i] == -1 accepts any size on that axis.
typedef struct {
    int ndim;
    int dims[2];
} Shape;

#define SHAPE_ANY (-1)

Tensor tensor_scalar(float value);           // rank 0
Tensor tensor_vector(int n);                 // rank 1, zeros
Tensor tensor_matrix(int rows, int cols);    // rank 2, zeros
Tensor tensor_copy(Tensor t);
Tensor tensor_row(Tensor t, int r);          // t[r] of a rank-2 t, as a rank-1 copy
float tensor_item(Tensor t);                 // the value of a rank-0 (or one-element) tensor

int tensor_numel(Tensor t);
int tensor_dim(Tensor t, int dim);           // t.shape[dim]; negative dim counts from the end
Shape tensor_shape(Tensor t);
int shape_matches(Shape want, Shape have);   // dims of -1 in want match anything
// Spells a shape as Python prints a tuple: "(3, 2)", "(6,)", "()"; a size of
// -1 (SHAPE_ANY) as "*". Takes any rank, as a file's datasets can have.
void shape_format(int ndim, const long long *dims, char *buf, size_t len);

void tensor_release_all(void);               // frees every tensor made so far

#endif
