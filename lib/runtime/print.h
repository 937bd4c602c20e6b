// print.h: Python's print(), for the notebook's values. A chapter writes
//
//   print("Attention weights:", attn_weights_2_tmp);
//   print(context_vecs);
//   print("keys.shape:", shape(keys));
//   print(TUPLE(query_2, key_2, value_2));     // a cell whose value is a tuple
//   print(param(W_query));                     // an nn.Parameter: "Parameter containing:"
//
// and gets what the notebook printed: the arguments' str() joined by spaces,
// then a newline. Each argument's type picks how it prints, checked by the
// compiler (_Generic): a Tensor prints as torch prints it (tensor_repr.h), a
// Size as torch.Size([...]), a string as itself, an int as Python prints an
// int, a double as Python prints a float (its repr), a bool as True/False.
// Up to 8 arguments. chapter.h's print(...) is run_print(run, ...) on the
// chapter's run (nothing printed in a setup cell); print_note needs no run.
#ifndef LITATTN_PRINT_H
#define LITATTN_PRINT_H

#include <stdbool.h>

#include "run.h"
#include "tensor.h"

typedef enum { PY_STR, PY_TENSOR, PY_PARAM, PY_SIZE, PY_INT, PY_FLOAT, PY_FIXED, PY_BOOL, PY_TUPLE } PyKind;

typedef struct PyValue {
    PyKind kind;
    union {
        const char *str;
        Tensor tensor;   // PY_TENSOR, PY_PARAM
        Size size;
        long long integer;
        double real;
        struct {
            double value;
            int digits;
        } fixed;
        bool boolean;
        struct {
            const struct PyValue *items;
            int n;
        } tuple;
    } as;
} PyValue;

PyValue py_str(const char *s);
PyValue py_tensor(Tensor t);
PyValue py_size(Size s);
PyValue py_int(int v);
PyValue py_long(long v);
PyValue py_llong(long long v);
PyValue py_float(double v);
PyValue py_bool(bool v);
PyValue py_value(PyValue v);
PyValue param(Tensor t);                       // an nn.Parameter
PyValue py_tuple(const PyValue *items, int n);
PyValue fixed(double v, int digits);           // f"{v:.{digits}f}"

// t.device as print() shows it: "cpu", where litattn keeps and computes every
// tensor (a notebook run on a GPU shows "cuda:0" for what it moved there).
const char *device_of(Tensor t);

// The double Python reads back from the 4-decimal text torch printed for x
// ("0.1385"): what a reader who types a printed value back in gets.
double as_printed(float x);

#define PY(x)                                                                                                 \
    _Generic((x), Tensor: py_tensor, Size: py_size, PyValue: py_value, char *: py_str, const char *: py_str, \
             int: py_int, long: py_long, long long: py_llong, double: py_float, bool: py_bool)(x)

#define PY_N_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define PY_COUNT(...) PY_N_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define PY_MAP(...) PY_N_(__VA_ARGS__, PY_8, PY_7, PY_6, PY_5, PY_4, PY_3, PY_2, PY_1, 0)(__VA_ARGS__)
#define PY_1(a) PY(a)
#define PY_2(a, b) PY(a), PY(b)
#define PY_3(a, b, c) PY(a), PY(b), PY(c)
#define PY_4(a, b, c, d) PY(a), PY(b), PY(c), PY(d)
#define PY_5(a, b, c, d, e) PY(a), PY(b), PY(c), PY(d), PY(e)
#define PY_6(a, b, c, d, e, f) PY(a), PY(b), PY(c), PY(d), PY(e), PY(f)
#define PY_7(a, b, c, d, e, f, g) PY(a), PY(b), PY(c), PY(d), PY(e), PY(f), PY(g)
#define PY_8(a, b, c, d, e, f, g, h) PY(a), PY(b), PY(c), PY(d), PY(e), PY(f), PY(g), PY(h)

// (a, b, ...) as a Python tuple prints: "(tensor(...), tensor(...))".
#define TUPLE(...) py_tuple((PyValue[]){PY_MAP(__VA_ARGS__)}, PY_COUNT(__VA_ARGS__))
// print(a, b, ...) in `run`: nothing while the run is quiet (a setup cell).
#define run_print(run, ...) py_print((run), (PyValue[]){PY_MAP(__VA_ARGS__)}, PY_COUNT(__VA_ARGS__))

// print_note(...): the same, even in a setup cell: a line about this run
// ("# d_out = 16 here; the book has 2"), not the notebook's output.
#define print_note(...) py_print_note((PyValue[]){PY_MAP(__VA_ARGS__)}, PY_COUNT(__VA_ARGS__))

void py_print(const Run *run, const PyValue *args, int n);
void py_print_note(const PyValue *args, int n);

#endif
