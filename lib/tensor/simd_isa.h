// simd_isa.h (internal to the dispatchers): one instruction set's SIMD
// kernels, as a table (simd_isa.c) of the bodies each family compiles once
// per width (gemm_simd.c, rows_simd.c, noise_simd.c, layout_simd.c). The
// dispatchers own the loops over blocks, batches and threads; a table's
// kernels are the innermost loops.
//
// The kernels are one list, SIMD_ISA_KERNELS: SimdIsa's fields and every
// table's entries are made from it, so no table can leave a kernel out (a
// field written by hand fails the static_assert below; tests/
// test_fast_kernels.c checks every entry of every table built, the tables
// of paths this CPU cannot run included).
#ifndef LITATTN_SIMD_ISA_H
#define LITATTN_SIMD_ISA_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

// c (mr, nr), rows ldc apart: c[r][j] = (first ? +0 : c[r][j]) +
// a[r][k] * pb[k][j] for k in order, each product rounded then added;
// then c = c + bias (nr) if bias. a: mr rows lda apart (kc floats each);
// pb (kc, nr): packed columns of b.
typedef void SimdGemmTile(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                          const float *bias);
// gemm_tile_at: the same with a[r][k] at a[k lda + r]: a's kc columns lda
// apart, each mr floats side by side (a^T read in place, or a panel packed
// k-major)
// out (n,) = softmax_row(x (n,)), n >= 8
typedef void SimdSoftmaxRow(float *out, const float *x, int n);
// out (n,) = softmax_row(x (n,) / s), n >= 8: each x / s rounded first
// (by_reciprocal: computed as x * (1 / s), which the caller knows to be
// the same rounding); out may be x
typedef void SimdSoftmaxRowScaled(float *out, const float *x, int n, float s, int by_reciprocal);
// dx (n,) = rows_softmax_rows_backward of one row dy, y (n,), n >= 8
// (8 lanes on every path: the lanes are torch's AVX2 order)
typedef void SimdSoftmaxBackwardRow(float *dx, const float *dy, const float *y, int n);
// sum(x (n,)), n >= 8
typedef float SimdSumRow(const float *x, int n);
// out (n,) = sleef_expf(x (n,))
typedef void SimdExp(float *out, const float *x, long n);
// noise (n,) from words (2n,): r = words[2i] << 32 | words[2i + 1];
// noise[i] = (r & (2^53 - 1)) < threshold ? kept : dropped
typedef void SimdDropoutBlock(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                              float dropped);
// out (8, 8), rows ldo apart = a (8, 8), rows lda apart, transposed
typedef void SimdTranspose8x8(float *out, long ldo, const float *a, long lda);
// out (n,) = x (n,) / s, a true division per element (out may be x)
typedef void SimdDivScalar(float *out, const float *x, float s, long n);
// out (n,) = x (n,) * s, each element rounded once (out may be x)
typedef void SimdMulScalar(float *out, const float *x, float s, long n);

// X(field, type, body function, build): every kernel of a table, in
// SimdIsa's order. The body function's name gets the suffix of the build
// the table names for it (simd_isa.c): TILE, the product's register tile;
// WIDE, the path's widest vectors; EIGHT, its 8-lane build (the kernels
// whose lanes are torch's order, and the 8 x 8 transpose).
#define SIMD_ISA_KERNELS(X)                                                        \
    X(gemm_tile, SimdGemmTile, gemm_simd_tile, TILE)                               \
    X(gemm_tile_at, SimdGemmTile, gemm_simd_tile_at, TILE)                         \
    X(softmax_row, SimdSoftmaxRow, rows_simd_softmax_row, WIDE)                    \
    X(softmax_row_scaled, SimdSoftmaxRowScaled, rows_simd_softmax_row_scaled, WIDE) \
    X(softmax_backward_row, SimdSoftmaxBackwardRow, rows_simd_softmax_backward_row, EIGHT) \
    X(sum_row, SimdSumRow, rows_simd_sum_row, WIDE)                                \
    X(exp, SimdExp, rows_simd_exp, WIDE)                                           \
    X(dropout_block, SimdDropoutBlock, noise_simd_block, WIDE)                     \
    X(transpose_8x8, SimdTranspose8x8, layout_simd_transpose_8x8, EIGHT)           \
    X(div_scalar, SimdDivScalar, rows_simd_div_scalar, EIGHT)                      \
    X(mul_scalar, SimdMulScalar, rows_simd_mul_scalar, EIGHT)

#define SIMD_ISA_COUNT_ONE_(field, type, fn, build) +1
enum { SIMD_ISA_KERNEL_COUNT = 0 SIMD_ISA_KERNELS(SIMD_ISA_COUNT_ONE_) };
// (as ggml's GGML_OP_COUNT check) a kernel added to the list: give it a body
// for every build, a dispatcher, and a case in tests/test_fast_kernels.c,
// then change the count
static_assert(SIMD_ISA_KERNEL_COUNT == 11, "SIMD_ISA_KERNELS has a kernel more or less: see above");

typedef struct {
    const char *name;  // the path's LITATTN_KERNELS name
    // The matmul's register tile is mr rows x nr columns; the cache blocks
    // are kc (depth), mc (rows, a multiple of mr) and nc (columns, a multiple of nr).
    int mr, nr, kc, mc, nc;
    // the kernels, one field each
#define SIMD_ISA_FIELD_(field, type, fn, build) type *field;
    SIMD_ISA_KERNELS(SIMD_ISA_FIELD_)
#undef SIMD_ISA_FIELD_
} SimdIsa;
// nothing after the kernels but the kernels: a field added by hand, not
// through SIMD_ISA_KERNELS, is a table entry no table is made to give
static_assert(sizeof(SimdIsa) == offsetof(SimdIsa, gemm_tile) + SIMD_ISA_KERNEL_COUNT * sizeof(SimdGemmTile *),
              "every kernel of SimdIsa comes from SIMD_ISA_KERNELS");

// The tables built for this architecture, each its path's (fast_path.h):
// x86-64 avx2, avx512 and avx512-ymm (AVX-512's kernels with AVX2's register
// tile for the products: the path for a core that runs a 512-bit
// instruction as two 256-bit halves); AArch64 neon. simd_isa_tables lists
// them, NULL last.
#if defined(__x86_64__)
extern const SimdIsa simd_isa_avx2;
extern const SimdIsa simd_isa_avx512;
extern const SimdIsa simd_isa_avx512_ymm;
#elif defined(__aarch64__)
extern const SimdIsa simd_isa_neon;
#endif
extern const SimdIsa *const simd_isa_tables[];

#endif
