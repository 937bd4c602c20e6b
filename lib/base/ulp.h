// ulp.h: how far apart two floats are, in units in the last place.
#ifndef LITATTN_ULP_H
#define LITATTN_ULP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

// A float's IEEE bits, and back (memcpy: no aliasing questions).
static inline uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float bits_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

// Whether a and b are the same float32 bits: +0 and -0 differ (torch prints
// "0." and "-0."), and every NaN matches every NaN, its payload aside.
bool same_bits(float a, float b);

// The number of float32 values between a and b, for reporting how far apart
// two different values are: 0 when equal (and for +0 vs -0, which same_bits
// tells apart, and for NaN vs NaN), UINT32_MAX when exactly one is NaN.
uint32_t ulp_distance(float a, float b);

#endif
