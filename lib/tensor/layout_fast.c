// layout_fast.c: the layout copies of layout.h, no arithmetic:
// layout_fast_transpose (out (N, M) = a (M, N)^T, in 32 x 32 blocks of 8 x 8
// register transposes), layout_fast_split_heads and layout_fast_merge_heads (axes 1 and 2
// of a rank-4 tensor swapped: (B, T, H, D) <-> (B, H, T, D), one memcpy of
// D floats per output row). Copies are bound by memory: a second thread
// only for big ones.
#include "layout.h"

#include <string.h>

#include "fast_path.h"
#include "fast_threads.h"
#include "fast_util.h"

enum { TRANSPOSE_BLOCK = 32 };  // a (32, 32) block of a and of out stay in L1 together
// Elements of a copy that pay for one more thread: copies are bound by
// memory, so a second thread helps only big ones (the heads split of
// (1024, 12, 64), a fraction of a millisecond, is slower with two).
#define COPY_THREAD_MIN_ELEMS (1 << 21)

typedef struct {
    const SimdIsa *isa;
    float *out;
    const float *a;
    int M, N;
} TransposeJob;

// rows [32 begin, 32 end) of a (M, N) into columns of out (N, M), in 32 x 32
// blocks made of 8 x 8 register transposes; the ragged edges by element
static void transpose_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const TransposeJob *t = ctx;
    const long M = t->M, N = t->N;
    for (long i0 = begin * TRANSPOSE_BLOCK; i0 < min_l(M, end * TRANSPOSE_BLOCK); i0 += TRANSPOSE_BLOCK) {
        const long i1 = min_l(M, i0 + TRANSPOSE_BLOCK);
        for (long j0 = 0; j0 < N; j0 += TRANSPOSE_BLOCK) {
            const long j1 = min_l(N, j0 + TRANSPOSE_BLOCK);
            for (long i = i0; i < i1; i += 8) {
                for (long j = j0; j < j1; j += 8) {
                    if (t->isa && i + 8 <= i1 && j + 8 <= j1) {
                        (t->isa)->transpose_8x8(t->out + j * M + i, M, t->a + i * N + j, N);
                        continue;
                    }
                    for (long ii = i; ii < min_l(i + 8, i1); ii++)
                        for (long jj = j; jj < min_l(j + 8, j1); jj++) t->out[jj * M + ii] = t->a[ii * N + jj];
                }
            }
        }
    }
}

void layout_fast_transpose(float *out, const float *a, int M, int N) {
    if (M <= 0 || N <= 0) return;
    TransposeJob t = {fast_path_isa(), out, a, M, N};
    if (!t.isa) {
        layout_transpose(out, a, M, N);
        return;
    }
    fast_threads_parallel_for((M + TRANSPOSE_BLOCK - 1) / TRANSPOSE_BLOCK, (double)M * N, COPY_THREAD_MIN_ELEMS,
                 transpose_items, &t);
}

// Swapping axes 1 and 2 of (B, P, Q, D) into (B, Q, P, D): the D floats of
// one (b, p, q) stay together, so the copy is one memcpy of D floats per
// output row, written in output order (reads are D floats each, Q D apart).
typedef struct {
    float *out;
    const float *x;
    long P, Q, D;
} SwapJob;

// items: output planes (b, q) [begin, end), each out[b][q] (P, D)
static void swap_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const SwapJob *s = ctx;
    for (long bq = begin; bq < end; bq++) {
        const long b = bq / s->Q, q = bq % s->Q;
        float *out_plane = s->out + bq * s->P * s->D;
        const float *x_b = s->x + b * s->P * s->Q * s->D;
        for (long p = 0; p < s->P; p++)
            memcpy(out_plane + p * s->D, x_b + (p * s->Q + q) * s->D, (size_t)s->D * sizeof(float));
    }
}

static void swap_axes12(float *out, const float *x, int B, int P, int Q, int D) {
    if (B <= 0 || P <= 0 || Q <= 0 || D <= 0) return;
    SwapJob s = {out, x, P, Q, D};
    fast_threads_parallel_for((long)B * Q, (double)B * P * Q * D, COPY_THREAD_MIN_ELEMS, swap_items, &s);
}

void layout_fast_split_heads(float *out, const float *x, int B, int T, int H, int D) { swap_axes12(out, x, B, T, H, D); }

void layout_fast_merge_heads(float *out, const float *x, int B, int H, int T, int D) { swap_axes12(out, x, B, H, T, D); }
