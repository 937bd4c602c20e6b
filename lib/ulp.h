// ulp.h: how far apart two floats are, in units in the last place.
#ifndef LITATTN_ULP_H
#define LITATTN_ULP_H

#include <stdint.h>

// The number of float32 values between a and b: 0 when equal (and for +0 vs
// -0, and for NaN vs NaN), UINT32_MAX when exactly one of them is NaN.
uint32_t ulp_distance(float a, float b);

#endif
