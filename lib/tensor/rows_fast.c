// rows_fast.c: the row-wise kernels of rows.h with the reference's
// bits (rows.c): rows_fast_softmax_rows (softmax_row per row: an
// 8-lane max, exp(x - max), an 8-lane sum, times 1/sum), rows_fast_sum_rows
// (torch's cascade sum per row), rows_fast_exp (SLEEF's expf), rows_fast_div_scalar
// (a true division per element, or the multiply by 1/s where s is a power
// of two and that is the same rounding), rows_fast_softmax_rows_backward
// (rows_softmax_rows_backward per row, torch's 8 AVX2 lanes with explicit FMA).
// Vectors run across a row's elements only where the reference's own order
// is lanes (softmax, sum, exp); rows shorter than 8 take the scalar kernels.
// Threads split rows, never one.
#include "rows.h"

#include <math.h>

#include "fast_path.h"
#include "fast_threads.h"
#include "fast_util.h"
#include "rows_fast.h"

// Elements that pay for one more thread.
#define ROWS_THREAD_MIN_ELEMS (1 << 16)

typedef struct {
    const SimdIsa *isa;
    float *out;
    const float *x;
    int n;
} Rows;

// softmax of rows [begin, end): n < 8 rows are the reference's scalar case
static void softmax_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const Rows *r = ctx;
    for (long i = begin; i < end; i++) {
        float *out_row = r->out + i * r->n;
        const float *x_row = r->x + i * r->n;
        if (r->isa && r->n >= 8) r->isa->softmax_row(out_row, x_row, r->n);
        else rows_softmax_row(out_row, x_row, r->n);
    }
}

void rows_fast_softmax_rows(float *out, const float *x, long rows, int n) {
    if (n <= 0) return;
    Rows r = {fast_path_isa(), out, x, n};
    fast_threads_parallel_for(rows, (double)rows * n, ROWS_THREAD_MIN_ELEMS, softmax_items, &r);
}

static void sum_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const Rows *r = ctx;
    for (long i = begin; i < end; i++) {
        const float *x_row = r->x + i * r->n;
        r->out[i] = r->isa && r->n >= 8 ? r->isa->sum_row(x_row, r->n) : rows_sum(x_row, r->n);
    }
}

void rows_fast_sum_rows(float *out, const float *x, long rows, int n) {
    Rows r = {fast_path_isa(), out, x, n < 0 ? 0 : n};
    fast_threads_parallel_for(rows, (double)rows * (n > 1 ? n : 1), ROWS_THREAD_MIN_ELEMS, sum_items, &r);
}

// exp over chunks of 4096 elements: item i is [4096 i, 4096 (i+1))
enum { EXP_CHUNK = 4096 };

typedef struct {
    const SimdIsa *isa;
    float *out;
    const float *x;
    long n;
} ExpJob;

static void exp_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const ExpJob *e = ctx;
    const long i0 = begin * EXP_CHUNK, i1 = min_l(e->n, end * EXP_CHUNK);
    if (e->isa) {
        e->isa->exp(e->out + i0, e->x + i0, i1 - i0);
    } else {
        for (long i = i0; i < i1; i += EXP_CHUNK) rows_exp(e->out + i, e->x + i, (int)min_l(EXP_CHUNK, i1 - i));
    }
}

void rows_fast_exp(float *out, const float *x, long n) {
    ExpJob e = {fast_path_isa(), out, x, n};
    fast_threads_parallel_for((n + EXP_CHUNK - 1) / EXP_CHUNK, (double)n, ROWS_THREAD_MIN_ELEMS, exp_items, &e);
}

// Whether x / s = x * (1 / s) for every float x: where s is a power of two
// whose reciprocal is a normal float (sqrt(64) = 8, head_dim 64's scale),
// both are the one rounding of the same real number.
int rows_fast_exact_reciprocal(float s) {
    int e;
    return fabsf(frexpf(s, &e)) == 0.5f && isnormal(s) && isnormal(1.0f / s);
}

// out = x / s on the path's vectors (one thread: a pass over memory); the
// cheaper multiply where it gives every bit
void rows_fast_div_scalar_isa(const SimdIsa *isa, float *out, const float *x, float s, long n) {
    if (isa && rows_fast_exact_reciprocal(s)) (isa)->mul_scalar(out, x, 1.0f / s, n);
    else if (isa) (isa)->div_scalar(out, x, s, n);
    else rows_div_scalar(out, x, s, n);
}

void rows_fast_div_scalar(float *out, const float *x, float s, long n) {
    rows_fast_div_scalar_isa(fast_path_isa(), out, x, s, n);
}

typedef struct {
    const SimdIsa *isa;
    float *dx;
    const float *dy, *y;
    int n;
} SoftmaxBackwardJob;

static void softmax_backward_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const SoftmaxBackwardJob *j = ctx;
    for (long i = begin; i < end; i++) {
        const long o = i * j->n;
        if (j->isa && j->n >= 8) (j->isa)->softmax_backward_row(j->dx + o, j->dy + o, j->y + o, j->n);
        else rows_softmax_rows_backward(j->dx + o, j->dy + o, j->y + o, 1, j->n);
    }
}

void rows_fast_softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n) {
    if (n <= 0) return;
    SoftmaxBackwardJob j = {fast_path_isa(), dx, dy, y, n};
    fast_threads_parallel_for(rows, (double)rows * n, ROWS_THREAD_MIN_ELEMS, softmax_backward_items, &j);
}
