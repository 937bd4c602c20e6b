// rows_fast.h (internal to the dispatchers): the division by a scalar of
// rows_fast.c on a given path, which the fused attention (attend_fast.c)
// runs on too.
#ifndef LITATTN_ROWS_FAST_H
#define LITATTN_ROWS_FAST_H

#include "simd_isa.h"

// Whether x / s = x * (1 / s) for every float x (s a power of two whose
// reciprocal is a normal float).
int rows_fast_exact_reciprocal(float s);
// out (n,) = x (n,) / s on isa's vectors (NULL: the reference kernel), one
// thread; the cheaper multiply where it gives every bit.
void rows_fast_div_scalar_isa(const SimdIsa *isa, float *out, const float *x, float s, long n);

#endif
