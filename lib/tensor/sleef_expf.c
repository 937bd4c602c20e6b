// sleef_expf.c: a scalar port of SLEEF 3.5.1's expf (u10) as its AVX2 build
// runs it: Sleef_expf8_u10avx2, which is what Vectorized<float>::exp() reaches
// in PyTorch 1.13's AVX2 kernels. Checked against libsleef.so.3.5.1's
// disassembly: one vmulps, vcvtps2dq, ten vfmadd, one vaddps, two scaling
// vmulps, then the two range clamps. Every fused step is written as fmaf (this
// file must not depend on -ffp-contract to get them).
#include "sleef_expf.h"
#include "ulp.h"

#include <math.h>
#include <stdint.h>

// log2(e) rounded to float, and ln 2 split in two: the high part has only 16
// significant bits, so q * LN2_HI is exact for every |q| < 2^8 that matters.
#define LOG2E_F 0x1.715476p+0f
#define LN2_HI_F 0x1.62e4p-1f
#define LN2_LO_F 0x1.7f7d1cp-20f

// vcvtps2dq: round to nearest, ties to even (the MXCSR default); a NaN or a
// value outside int32 gives the "integer indefinite" 0x80000000.
static int32_t cvt_nearest_i32(float v) {
    if (!(v >= -0x1p31f && v < 0x1p31f)) return INT32_MIN;
    return (int32_t)nearbyintf(v);
}

// 2^e as a float built from its exponent bits, in unsigned arithmetic because
// the vector code wraps (e is always within a float's exponent range here).
static float pow2i(int32_t e) {
    return bits_float(((uint32_t)e + 0x7fu) << 23);
}

// u * 2^q in two steps, 2^floor(q/2) then 2^(q - floor(q/2)), so that the
// scale never overflows on its own and a subnormal result rounds only once
// the second product is taken (SLEEF's vldexp2; its shift is arithmetic).
static float ldexp2(float u, int32_t q) {
    int32_t h = (q - (q & 1)) / 2;
    return u * pow2i(h) * pow2i(q - h);
}

// e^d = 2^q * e^s with q = rint(d / ln 2) and s = d - q ln 2 (two fused
// steps), e^s from a degree-7 polynomial: 1 + s + s^2 (1/2 + s/6 + ...).
float sleef_expf(float d) {
    int32_t q = cvt_nearest_i32(d * LOG2E_F);
    float qf = (float)q;
    float s = fmaf(qf, -LN2_HI_F, d);
    s = fmaf(qf, -LN2_LO_F, s);

    float u = 0x1.a057b4p-13f;
    u = fmaf(u, s, 0x1.6d2d92p-10f);
    u = fmaf(u, s, 0x1.11114cp-7f);
    u = fmaf(u, s, 0x1.5554f4p-5f);
    u = fmaf(u, s, 0x1.555556p-3f);
    u = fmaf(u, s, 0x1p-1f);
    u = 1.0f + fmaf(s * s, u, s);

    u = ldexp2(u, q);
    // SLEEF clamps by comparison, so a NaN d falls through both tests and the
    // NaN computed above (d's payload, quietened) is returned.
    if (d < -104.0f) u = 0.0f;
    if (d > 100.0f) u = INFINITY;
    return u;
}
