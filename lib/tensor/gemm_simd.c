// gemm_simd.c: the products' register tile over the lane-width layer
// (simd.h), compiled once per instruction set: 6 x 16 on AVX2 (12 __m256
// accumulators), 8 x 32 on AVX-512 (16 __m512).
//
// Reference order (gemm.c's gemm_matmul / gemm_matmul_wt_bias, netlib sgemm):
// each output is one chain s = s + round(a*b) in k order from +0, the bias
// added last. The tile's mr x 2W outputs are that many independent chains,
// held as acc[r][h] = row r, columns hW .. hW+W-1; per k, one mul and one
// add each (no FMA).
// Operands (gemm_fast.c): a, mr rows of kc floats, read in place, each
// a[r][k] broadcast from memory to W lanes, either by rows (gemm_simd_tile:
// row r at a + r lda, a's rows as they are) or by columns (gemm_simd_tile_at:
// column k at a + k lda, the mr floats of a^T's row k side by side: a^T read
// in place, or a panel packed k-major); pb (kc, 2W): the packed panel,
// pb[k * 2W + j] = b[k][col j], two vectors per k. One body, two strides.
#include "gemm_simd.h"

#include "simd.h"

enum { MR = SIMD_TILE_MR, NR = 2 * SIMD_LANES };

// a[r][k] at a[r * rs + k * ks]; inlined into each entry point, whose
// strides are then its own (a call less per tile)
static inline __attribute__((always_inline)) void tile(float *c, long ldc, const float *a, long rs, long ks,
                                                       const float *pb, int kc, int first, const float *bias) {
    vf acc[MR][2];
    SIMD_UNROLL(SIMD_TILE_MR)
    for (int r = 0; r < MR; r++) {
        acc[r][0] = first ? vf_zero() : vf_load(c + r * ldc);
        acc[r][1] = first ? vf_zero() : vf_load(c + r * ldc + SIMD_LANES);
    }
    for (int k = 0; k < kc; k++, a += ks, pb += NR) {
        const vf b_lo = vf_load(pb), b_hi = vf_load(pb + SIMD_LANES);
        SIMD_UNROLL(SIMD_TILE_MR)
        for (int r = 0; r < MR; r++) {
            const vf a_r = vf_broadcast(a + r * rs);
            acc[r][0] = vf_add(acc[r][0], vf_mul(a_r, b_lo));
            acc[r][1] = vf_add(acc[r][1], vf_mul(a_r, b_hi));
        }
    }
    if (bias) {
        const vf bias_lo = vf_load(bias), bias_hi = vf_load(bias + SIMD_LANES);
        SIMD_UNROLL(SIMD_TILE_MR)
        for (int r = 0; r < MR; r++) {
            acc[r][0] = vf_add(acc[r][0], bias_lo);
            acc[r][1] = vf_add(acc[r][1], bias_hi);
        }
    }
    SIMD_UNROLL(SIMD_TILE_MR)
    for (int r = 0; r < MR; r++) {
        vf_store(c + r * ldc, acc[r][0]);
        vf_store(c + r * ldc + SIMD_LANES, acc[r][1]);
    }
}

void SIMD_FN(gemm_simd_tile)(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                             const float *bias) {
    tile(c, ldc, a, lda, 1, pb, kc, first, bias);
}

void SIMD_FN(gemm_simd_tile_at)(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                                const float *bias) {
    tile(c, ldc, a, 1, lda, pb, kc, first, bias);
}
