// gemm_simd.h: the products' register tile (gemm_simd.c), once per
// instruction set, for the tables of simd_isa.c.
#ifndef LITATTN_GEMM_SIMD_H
#define LITATTN_GEMM_SIMD_H

// c (mr, nr), rows ldc apart: c[r][j] = (first ? +0 : c[r][j]) + a[r][k] *
// pb[k][j] for k in order, each product rounded then added; then + bias[j]
// if bias. a: mr rows lda apart (kc floats each), or for the _at tiles kc
// columns lda apart (mr floats each: a^T's rows, in place or packed); pb
// (kc, nr): the packed columns of b (gemm_fast.c).
// AVX2: mr x nr = 6 x 16, and its cache blocks (shared by avx512-ymm)
enum { GEMM_AVX2_MR = 6, GEMM_AVX2_NR = 16, GEMM_AVX2_KC = 256, GEMM_AVX2_MC = 96, GEMM_AVX2_NC = 1024 };
void gemm_simd_tile_avx2(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                         const float *bias);
void gemm_simd_tile_at_avx2(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                            const float *bias);
// AVX-512: 8 x 32, the same cache blocks
enum { GEMM_AVX512_MR = 8, GEMM_AVX512_NR = 32 };
void gemm_simd_tile_avx512(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                           const float *bias);
void gemm_simd_tile_at_avx512(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                              const float *bias);
// NEON: 6 x 16 in 32 registers (simd.h), AVX2's cache blocks
enum { GEMM_NEON_MR = 6, GEMM_NEON_NR = 16, GEMM_NEON_KC = 256, GEMM_NEON_MC = 96, GEMM_NEON_NC = 1024 };
void gemm_simd_tile_neon(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                         const float *bias);
void gemm_simd_tile_at_neon(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                            const float *bias);

#endif
