// simd_isa.c: the tables of simd_isa.h, one per path. Each family's SIMD
// body is compiled at width 8 (AVX2) and, where the width can change
// without changing a bit, at 16 (AVX-512); the kernels whose lanes are the
// reference's order on every path (the softmax's backward: torch's 8 AVX2
// lanes), the 8 x 8 transpose, and the division and multiplication by a
// scalar are compiled at width 8 only, and the AVX-512 tables take them.
#include "simd_isa.h"

#include "gemm_simd.h"
#include "layout_simd.h"
#include "noise_simd.h"
#include "rows_simd.h"

const SimdIsa simd_isa_avx2 = {
    .name = "avx2",
    .mr = GEMM_AVX2_MR,
    .nr = GEMM_AVX2_NR,
    .kc = GEMM_AVX2_KC,
    .mc = GEMM_AVX2_MC,
    .nc = GEMM_AVX2_NC,
    .gemm_tile = gemm_simd_tile_avx2,
    .gemm_tile_at = gemm_simd_tile_at_avx2,
    .softmax_row = rows_simd_softmax_row_avx2,
    .softmax_row_scaled = rows_simd_softmax_row_scaled_avx2,
    .softmax_backward_row = rows_simd_softmax_backward_row_avx2,
    .sum_row = rows_simd_sum_row_avx2,
    .exp = rows_simd_exp_avx2,
    .dropout_block = noise_simd_block_avx2,
    .transpose_8x8 = layout_simd_transpose_8x8_avx2,
    .div_scalar = rows_simd_div_scalar_avx2,
    .mul_scalar = rows_simd_mul_scalar_avx2,
};

const SimdIsa simd_isa_avx512 = {
    .name = "avx512",
    .mr = GEMM_AVX512_MR,
    .nr = GEMM_AVX512_NR,
    .kc = GEMM_AVX2_KC,
    .mc = GEMM_AVX2_MC,
    .nc = GEMM_AVX2_NC,
    .gemm_tile = gemm_simd_tile_avx512,
    .gemm_tile_at = gemm_simd_tile_at_avx512,
    .softmax_row = rows_simd_softmax_row_avx512,
    .softmax_row_scaled = rows_simd_softmax_row_scaled_avx512,
    .softmax_backward_row = rows_simd_softmax_backward_row_avx2,  // 8 lanes: the order
    .sum_row = rows_simd_sum_row_avx512,
    .exp = rows_simd_exp_avx512,
    .dropout_block = noise_simd_block_avx512,
    .transpose_8x8 = layout_simd_transpose_8x8_avx2,
    .div_scalar = rows_simd_div_scalar_avx2,
    .mul_scalar = rows_simd_mul_scalar_avx2,
};

// The path for a core that runs a 512-bit instruction as two 256-bit halves
// (AMD's Zen 4). There a 512-bit mul or add takes two slots of the FP pipes,
// so the 8 x 32 tile computes no more flops per cycle than AVX2's 6 x 16 and
// runs slower; but a 512-bit instruction takes one slot of the scheduler, so
// a chain as long as exp's keeps twice the elements in flight, and the
// softmax runs faster. The products take AVX2's tile; everything else is
// AVX-512's. (The timings of both: tests/BENCHMARKS.md.)
const SimdIsa simd_isa_avx512_ymm = {
    .name = "avx512-ymm",
    .mr = GEMM_AVX2_MR,
    .nr = GEMM_AVX2_NR,
    .kc = GEMM_AVX2_KC,
    .mc = GEMM_AVX2_MC,
    .nc = GEMM_AVX2_NC,
    .gemm_tile = gemm_simd_tile_avx2,
    .gemm_tile_at = gemm_simd_tile_at_avx2,
    .softmax_row = rows_simd_softmax_row_avx512,
    .softmax_row_scaled = rows_simd_softmax_row_scaled_avx512,
    .softmax_backward_row = rows_simd_softmax_backward_row_avx2,
    .sum_row = rows_simd_sum_row_avx512,
    .exp = rows_simd_exp_avx512,
    .dropout_block = noise_simd_block_avx512,
    .transpose_8x8 = layout_simd_transpose_8x8_avx2,
    .div_scalar = rows_simd_div_scalar_avx2,
    .mul_scalar = rows_simd_mul_scalar_avx2,
};
