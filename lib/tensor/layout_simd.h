// layout_simd.h: the 8 x 8 register transpose (layout_simd.c), compiled at
// width 8 only: AVX2's for every x86 path, and NEON's.
#ifndef LITATTN_LAYOUT_SIMD_H
#define LITATTN_LAYOUT_SIMD_H

// out (8, 8), rows ldo apart = a (8, 8), rows lda apart, transposed
void layout_simd_transpose_8x8_avx2(float *out, long ldo, const float *a, long lda);
void layout_simd_transpose_8x8_neon(float *out, long ldo, const float *a, long lda);

#endif
