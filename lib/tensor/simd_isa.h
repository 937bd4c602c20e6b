// simd_isa.h (internal to the dispatchers): one instruction set's SIMD
// kernels, as a table (simd_isa.c) of the bodies each family compiles once
// per width (gemm_simd.c, rows_simd.c, noise_simd.c, layout_simd.c). The
// dispatchers own the loops over blocks, batches and threads; a table's
// kernels are the innermost loops.
#ifndef LITATTN_SIMD_ISA_H
#define LITATTN_SIMD_ISA_H

#include <stdint.h>

typedef struct {
    const char *name;
    // The matmul's register tile is mr rows x nr columns; the cache blocks
    // are kc (depth), mc (rows, a multiple of mr) and nc (columns, a multiple of nr).
    int mr, nr, kc, mc, nc;
    // c (mr, nr), rows ldc apart: c[r][j] = (first ? +0 : c[r][j]) +
    // a[r][k] * pb[k][j] for k in order, each product rounded then added;
    // then c = c + bias (nr) if bias. a: mr rows lda apart (kc floats each);
    // pb (kc, nr): packed columns of b.
    void (*gemm_tile)(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                      const float *bias);
    // the same with a[r][k] at a[k lda + r]: a's kc columns lda apart, each
    // mr floats side by side (a^T read in place, or a panel packed k-major)
    void (*gemm_tile_at)(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                         const float *bias);
    // out (n,) = softmax_row(x (n,)), n >= 8
    void (*softmax_row)(float *out, const float *x, int n);
    // out (n,) = softmax_row(x (n,) / s), n >= 8: each x / s rounded first
    // (by_reciprocal: computed as x * (1 / s), which the caller knows to be
    // the same rounding); out may be x
    void (*softmax_row_scaled)(float *out, const float *x, int n, float s, int by_reciprocal);
    // dx (n,) = rows_softmax_rows_backward of one row dy, y (n,), n >= 8
    // (8 lanes on every path: the lanes are torch's AVX2 order)
    void (*softmax_backward_row)(float *dx, const float *dy, const float *y, int n);
    // sum(x (n,)), n >= 8
    float (*sum_row)(const float *x, int n);
    // out (n,) = sleef_expf(x (n,))
    void (*exp)(float *out, const float *x, long n);
    // noise (n,) from words (2n,): r = words[2i] << 32 | words[2i + 1];
    // noise[i] = (r & (2^53 - 1)) < threshold ? kept : dropped
    void (*dropout_block)(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                          float dropped);
    // out (8, 8), rows ldo apart = a (8, 8), rows lda apart, transposed
    void (*transpose_8x8)(float *out, long ldo, const float *a, long lda);
    // out (n,) = x (n,) / s, a true division per element (out may be x)
    void (*div_scalar)(float *out, const float *x, float s, long n);
    // out (n,) = x (n,) * s, each element rounded once (out may be x)
    void (*mul_scalar)(float *out, const float *x, float s, long n);
} SimdIsa;

extern const SimdIsa simd_isa_avx2;
extern const SimdIsa simd_isa_avx512;
// AVX-512's kernels with AVX2's register tile for the products: the path
// for a core that runs a 512-bit instruction as two 256-bit halves
extern const SimdIsa simd_isa_avx512_ymm;

#endif
