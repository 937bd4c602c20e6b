// rows_simd.h: the row kernels of rows_simd.c, per instruction set, for the
// tables of simd_isa.c. Contracts: simd_isa.h's SimdIsa fields of the same
// names.
#ifndef LITATTN_ROWS_SIMD_H
#define LITATTN_ROWS_SIMD_H

// compiled at both widths
void rows_simd_exp_avx2(float *out, const float *x, long n);
void rows_simd_exp_avx512(float *out, const float *x, long n);
void rows_simd_softmax_row_avx2(float *out, const float *x, int n);
void rows_simd_softmax_row_avx512(float *out, const float *x, int n);
void rows_simd_softmax_row_scaled_avx2(float *out, const float *x, int n, float s, int by_reciprocal);
void rows_simd_softmax_row_scaled_avx512(float *out, const float *x, int n, float s, int by_reciprocal);
float rows_simd_sum_row_avx2(const float *x, int n);
float rows_simd_sum_row_avx512(const float *x, int n);
// compiled at width 8 only (every x86 path's)
void rows_simd_softmax_backward_row_avx2(float *dx, const float *dy, const float *y, int n);
void rows_simd_div_scalar_avx2(float *out, const float *x, float s, long n);
void rows_simd_mul_scalar_avx2(float *out, const float *x, float s, long n);
// NEON: every kernel, at its one width (8)
void rows_simd_exp_neon(float *out, const float *x, long n);
void rows_simd_softmax_row_neon(float *out, const float *x, int n);
void rows_simd_softmax_row_scaled_neon(float *out, const float *x, int n, float s, int by_reciprocal);
float rows_simd_sum_row_neon(const float *x, int n);
void rows_simd_softmax_backward_row_neon(float *dx, const float *dy, const float *y, int n);
void rows_simd_div_scalar_neon(float *out, const float *x, float s, long n);
void rows_simd_mul_scalar_neon(float *out, const float *x, float s, long n);

#endif
