// tensor.h: a float32 tensor of rank 0 to 4 (batch, heads, tokens,
// features), stored contiguous and row-major like a contiguous PyTorch
// tensor. A Tensor is a small value: its shape, a pointer to its floats, and
// what autograd would print for it (the C has no autograd; it only keeps the
// name torch would show, so printed tensors read like the notebook's).
//
// Memory: every tensor made here belongs to one pool, freed all at once by
// tensor_release_all() when the chapter ends, so a chapter reads like its
// notebook (no free() after every cell). Small tensors (scalars, rows) cost
// their floats and no more; a large temporary can be given back early with
// tensor_free(). Indexing (`inputs[1]`, `a[0, 0]`) and view() make views that
// share their parent's floats and allocate nothing.
#ifndef LITATTN_TENSOR_H
#define LITATTN_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TENSOR_MAX_DIMS 4
// The most elements one tensor may hold: 2^26 floats (256 MiB). The largest
// tensor of the book's own sizes is Exercise 3.3's (1, 12, 1024, 1024)
// attention (2^23.6); a (4, 12, 1024, 1024) one still fits. Counted in
// elements, whatever the shape: making a larger tensor is refused with one
// line naming its shape.
#define TENSOR_MAX_NUMEL (1L << 26)

// torch.Size: a shape. As a wanted shape (fixture checks), a size of
// SIZE_ANY accepts any length on that axis.
typedef struct {
    int ndim;
    int dims[TENSOR_MAX_DIMS];
} Size;

#define SIZE_ANY (-1)
// SIZE(6, 3) is the shape (6, 3); SIZE_SCALAR the shape () of a 0-d tensor.
#define SIZE(...) ((Size){SIZE_COUNT_(__VA_ARGS__, 4, 3, 2, 1, 0), {__VA_ARGS__}})
#define SIZE_COUNT_(a, b, c, d, n, ...) n
#define SIZE_SCALAR ((Size){0, {0}})

typedef struct {
    int ndim;                        // 0 .. TENSOR_MAX_DIMS
    int shape[TENSOR_MAX_DIMS];      // shape[0 .. ndim-1]
    float *data;                     // numel() floats, C order
    const char *grad_fn;             // e.g. "MmBackward0": the node torch would record, or NULL
    bool requires_grad;              // a leaf that requires grad (an nn.Parameter)
} Tensor;

// torch.int64 tensors: token ids, and batches of them (x, y). The same pool
// owns them; no arithmetic, only shape and values.
typedef struct {
    int ndim;                        // 0 .. TENSOR_MAX_DIMS
    int shape[TENSOR_MAX_DIMS];
    int64_t *data;                   // numel() values, C order
} LongTensor;

LongTensor long_tensor_empty(Size s);   // torch.empty(*s, dtype=torch.int64)
LongTensor torch_arange(int n);         // torch.arange(n): 0, 1, ..., n - 1
long long_numel(LongTensor t);
Size long_shape(LongTensor t);

// --- making tensors -----------------------------------------------------------
Tensor tensor_zeros(Size s);         // torch.zeros(*s)
Tensor tensor_empty(Size s);         // torch.empty(*s): contents unspecified, for outputs written in full
Tensor tensor_scalar(float value);   // a 0-d tensor
Tensor tensor_copy(Tensor t);        // t.clone(), detached
Tensor tensor_detach(Tensor t);      // t.detach(): the same floats, no grad_fn, requires no grad

// torch's grad mode: `with torch.no_grad():` is torch_set_grad_enabled(false)
// then (true). While it is off, what the ops make records no grad_fn.
void torch_set_grad_enabled(bool enabled);
bool torch_is_grad_enabled(void);
void tensor_free(Tensor t);          // gives back a tensor made above (not a view) before the end
void tensor_release_all(void);       // frees every tensor made so far

// --- shape ------------------------------------------------------------------------
long numel(Tensor t);                // t.numel()
int dim(Tensor t, int d);            // t.shape[d]; negative d counts from the end
Size shape(Tensor t);                // t.shape
long size_numel(Size s);             // the number of elements of shape s (no check)
bool size_equal(Size a, Size b);
bool size_matches(Size want, Size have);    // SIZE_ANY in want matches any length
// Spells a shape as Python prints a tuple: "(3, 2)", "(6,)", "()"; SIZE_ANY as
// "*". Takes any rank, as a file's datasets can have.
void shape_format(int ndim, const long long *dims, char *buf, size_t len);
void size_format(Size s, char *buf, size_t len);

// --- views: no copy, no allocation ----------------------------------------------------
Tensor sel(Tensor t, int i);             // t[i]: drops the first axis; negative i counts from the end
Tensor sel2(Tensor t, int i, int j);     // t[i, j]
Tensor view(Tensor t, Size s);              // t.view(*s): the same floats, another shape
float item(Tensor t);                       // t.item() of a one-element tensor
// The float at t[i, j, ...] (as many indices as t has axes), for loops that
// fill a tensor element by element as the notebook does.
float *at(Tensor t, int n, const int *index);
#define AT(t, ...) (*at((t), (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__}))

#endif
