// layout.c: the layout copies' scalar reference (layout.h): transpose, the
// heads split and merged, the gradients of cat and stack. No arithmetic:
// each output is one input's float, moved. layout_fast.c gives the same
// bits faster and falls back to these.
#include "layout.h"

#include <string.h>

// a (M, N) -> out (N, M): out[n][m] = a[m][n]; no arithmetic
void layout_transpose(float *out, const float *a, int M, int N) {
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) out[n * M + m] = a[m * N + n];
    }
}

// CatBackward0: cat_tensors_backward (FunctionsManual.cpp) gives input i
// grad.narrow(dim, offset, width)
void layout_cat_lastdim_backward(float *dpart, const float *dout, long rows, int total, int offset, int width) {
    for (long r = 0; r < rows; r++)
        memcpy(dpart + r * width, dout + r * total + offset, (size_t)width * sizeof(float));
}

// StackBackward0: stack_tensors_backward (FunctionsManual.cpp) gives input i grad.select(dim, i)
void layout_stack_backward(float *dpart, const float *dout, int i, long m) {
    memcpy(dpart, dout + (long)i * m, (size_t)m * sizeof(float));
}

// (b, T, h * hd) -> (b, h, T, hd)
void layout_heads_split(float *out, const float *in, int b, int T, int h, int hd) {
    for (long i = 0; i < b; i++)
        for (long t = 0; t < T; t++)
            for (long k = 0; k < h; k++)
                memcpy(out + ((i * h + k) * T + t) * hd, in + ((i * T + t) * h + k) * hd,
                       (size_t)hd * sizeof(float));
}

// (b, h, T, hd) -> (b, T, h * hd)
void layout_heads_merge(float *out, const float *in, int b, int T, int h, int hd) {
    for (long i = 0; i < b; i++)
        for (long t = 0; t < T; t++)
            for (long k = 0; k < h; k++)
                memcpy(out + ((i * T + t) * h + k) * hd, in + ((i * h + k) * T + t) * hd,
                       (size_t)hd * sizeof(float));
}
