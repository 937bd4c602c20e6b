// fast_util.h (internal to the *_fast.c dispatchers): what they share
// besides the path and the threads: index helpers, the aligned scratch
// allocation, the finite check.
#ifndef LITATTN_FAST_UTIL_H
#define LITATTN_FAST_UTIL_H

#include <math.h>
#include <stddef.h>

#include "pages.h"

static inline long min_l(long a, long b) { return a < b ? a : b; }
static inline long round_up(long a, long b) { return (a + b - 1) / b * b; }

// n floats, 64-byte aligned (on huge pages from 2 MiB: pages.h); given back
// with free()
static inline float *alloc_floats(long n, const char *what) {
    return pages_alloc((size_t)round_up(n > 0 ? n : 1, 16) * sizeof(float), what);
}

// Whether every one of x's n floats is finite.
static inline int all_finite(const float *x, long n) {
    for (long i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

#endif
