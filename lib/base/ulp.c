// ulp.c: distances between floats, counted along the float line.
#include "ulp.h"

#include <math.h>

// Maps a float to an integer so that consecutive floats are consecutive
// integers: non-negative floats keep their bits, negative ones are mirrored
// below zero (IEEE bits are sign-magnitude; this makes them two's complement).
static int64_t ordered(float x) {
    const uint32_t bits = float_bits(x);
    return (bits & 0x80000000u) ? -(int64_t)(bits & 0x7fffffffu) : (int64_t)bits;
}

uint32_t ulp_distance(float a, float b) {
    if (isnan(a) || isnan(b)) return (isnan(a) && isnan(b)) ? 0 : UINT32_MAX;
    int64_t d = ordered(a) - ordered(b);
    if (d < 0) d = -d;
    return d > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

bool same_bits(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return float_bits(a) == float_bits(b);
}
