// test_simd_layer.c: the lane-width layer (lib/tensor/simd.h) at 8 lanes
// against the x86 instructions' definitions, written below in scalar C,
// name by name, on the edges where NEON's nearest instruction answers
// otherwise: max (signed zeros, NaN), cvtps2dq (ties, NaN, overflow), the
// masked loads and stores (a partial vector at the end of a mapping: a
// lane read or written past it faults), blends and compares with NaN,
// sleef's clamp and scaling, the reductions' tree order, the transpose's
// moves, dropout's 53-bit compares. Built on x86-64 over the AVX2 section
// (-mavx2 -mfma), where it proves the definitions are the hardware's, and
// on AArch64 over the NEON section, where it proves NEON gives x86's bits.
// Values are compared as bits (NaN payloads included).
//
// usage: test_simd_layer
#define _DEFAULT_SOURCE  // MAP_ANONYMOUS
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pcg32.h"
#include "simd.h"
#include "ulp.h"

static int failures, checks;
static pcg32_random_t rng;


// got (8,) against want (8,), bit for bit
static void expect(const char *what, int item, const float *got, const float *want) {
    checks++;
    for (int l = 0; l < 8; l++) {
        if (float_bits(got[l]) == float_bits(want[l])) continue;
        if (failures++ < 20)
            printf("FAIL %s, case %d, lane %d: 0x%08x (%a), want 0x%08x (%a)\n", what, item, l, float_bits(got[l]),
                   (double)got[l], float_bits(want[l]), (double)want[l]);
        return;
    }
}

// a float that tests the edges, or a plain one
static float any_float(void) {
    static const float edges[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1.5f, 2.5f, -2.5f, INFINITY, -INFINITY, NAN,
                                  -NAN, 0x1p31f, -0x1p31f, 0x1p-149f, 3e38f, -3e38f};
    const uint32_t k = pcg32_boundedrand_r(&rng, 4);
    if (k == 0) return edges[pcg32_boundedrand_r(&rng, sizeof edges / sizeof edges[0])];
    if (k == 1) return bits_float(pcg32_random_r(&rng));
    return (float)(pcg32_double_r(&rng) * 8.0 - 4.0);
}

static void fill(float *x, int n) {
    for (int i = 0; i < n; i++) x[i] = any_float();
}

// --- the x86 definitions -------------------------------------------------
// _mm256_max_ps | unordered: b unless a > b; all ones where either is NaN
static float x86_max(float a, float b) {
    if (isnan(a) || isnan(b)) return bits_float(0xffffffffu);
    return a > b ? a : b;
}
// _mm256_cvtps_epi32 under MXCSR's default: nearest, ties to even; NaN and
// out of range give INT32_MIN
static int32_t x86_cvt(float x) {
    if (isnan(x) || x >= 0x1p31f || x < -0x1p31f) return INT32_MIN;
    return (int32_t)nearbyintf(x);
}
// SLEEF's scaling: u * 2^(q>>1) * 2^(q - (q>>1)), the powers made from bits
static float x86_scale(float u, int32_t q) {
    const int32_t half = q >> 1;
    const float s1 = bits_float((uint32_t)(half + 0x7f) << 23), s2 = bits_float((uint32_t)(q - half + 0x7f) << 23);
    const float t = u * s1;
    return t * s2;
}

// --- the checks -----------------------------------------------------------
static void test_arithmetic(void) {
    for (int i = 0; i < 2000; i++) {
        float a[8], b[8], c[8], got[8], want[8];
        fill(a, 8), fill(b, 8), fill(c, 8);
        const v8 va = v8_load(a), vb = v8_load(b), vc = v8_load(c);
        v8_store(got, v8_max(va, vb));
        for (int l = 0; l < 8; l++) want[l] = x86_max(a[l], b[l]);
        expect("v8_max", i, got, want);
        // arithmetic: NaN operands give NaN payloads by the machine's rule, so only non-NaN lanes
        // are compared by value (an invalid operation's default NaN differs between the two)
        v8_store(got, v8_fmadd(va, vb, vc));
        for (int l = 0; l < 8; l++) want[l] = fmaf(a[l], b[l], c[l]);
        for (int l = 0; l < 8; l++)
            if (isnan(want[l]) && isnan(got[l])) got[l] = want[l];
        expect("v8_fmadd", i, got, want);
        v8_store(got, v8_div(va, vb));
        for (int l = 0; l < 8; l++) want[l] = a[l] / b[l];
        for (int l = 0; l < 8; l++)
            if (isnan(want[l]) && isnan(got[l])) got[l] = want[l];
        expect("v8_div", i, got, want);
        // vf_cmp_gt and vf_blend: b where a > b (false for NaN), else a
        v8_store(got, vf_blend(va, vf_cmp_gt(va, vb), vb));
        for (int l = 0; l < 8; l++) want[l] = a[l] > b[l] ? b[l] : a[l];
        expect("vf_blend(vf_cmp_gt)", i, got, want);
        // sleef's clamp: +0 where a < -104, else b (NaN a keeps b)
        v8_store(got, vf_zero_below(va, -104.0f, vb));
        for (int l = 0; l < 8; l++) want[l] = a[l] < -104.0f ? 0.0f : b[l];
        expect("vf_zero_below", i, got, want);
        // the broadcast
        v8_store(got, vf_broadcast(a + 3));
        for (int l = 0; l < 8; l++) want[l] = a[3];
        expect("vf_broadcast", i, got, want);
    }
}

static void test_conversions(void) {
    static const float edges[] = {0.5f,          1.5f,         2.5f,          -0.5f,  -1.5f,     -2.5f,     3.49999976f,
                                  0x1p31f,       -0x1p31f,     0x1.fffffep30f, -0x1.000002p31f, NAN, -NAN, INFINITY,
                                  -INFINITY,     1e10f,        -1e10f,        0.0f,   -0.0f,     8388609.5f, 0x1p-149f,
                                  -150.5f};
    enum { N = sizeof edges / sizeof edges[0] };
    for (int i = 0; i < N + 2000; i++) {
        float x[8], got[8], want[8];
        int32_t q[8];
        for (int l = 0; l < 8; l++) x[l] = i < N ? edges[(i + l) % N] : any_float();
        vi vq = vf_cvt_i32(v8_load(x));
        v8_store(got, vi_cvt_f32(vq));  // the integers back as floats, each exact below 2^24 and rounded above
        for (int l = 0; l < 8; l++) want[l] = (float)x86_cvt(x[l]);
        expect("vf_cvt_i32 (then vi_cvt_f32)", i, got, want);
        // vf_scale_pow2 on |q| <= 150
        for (int l = 0; l < 8; l++) q[l] = (int32_t)pcg32_boundedrand_r(&rng, 301) - 150;
        float qf[8];
        for (int l = 0; l < 8; l++) qf[l] = (float)q[l];
        vq = vf_cvt_i32(v8_load(qf));
        v8_store(got, vf_scale_pow2(v8_load(x), vq, v8_load(qf)));
        for (int l = 0; l < 8; l++) want[l] = x86_scale(x[l], q[l]);
        for (int l = 0; l < 8; l++)
            if (isnan(want[l]) && isnan(got[l])) got[l] = want[l];
        expect("vf_scale_pow2", i, got, want);
    }
}

// ((a0 op a4) op (a2 op a6)) op ((a1 op a5) op (a3 op a7)), lane 0's operands first
static float tree(const float *a, float (*op)(float, float)) {
    return op(op(op(a[0], a[4]), op(a[2], a[6])), op(op(a[1], a[5]), op(a[3], a[7])));
}
static float add(float a, float b) { return a + b; }

static void test_reductions(void) {
    for (int i = 0; i < 4000; i++) {
        float a[8], got[8] = {0}, want[8] = {0};
        // magnitudes far apart, so that another order rounds otherwise; and signed zeros and NaN
        for (int l = 0; l < 8; l++)
            a[l] = i % 2 ? any_float() : ldexpf((float)pcg32_double_r(&rng) - 0.5f, (int)pcg32_boundedrand_r(&rng, 60) - 30);
        got[0] = v8_tree_add(v8_load(a));
        want[0] = tree(a, add);
        if (isnan(want[0]) && isnan(got[0])) got[0] = want[0];
        got[1] = v8_tree_max(v8_load(a));
        want[1] = tree(a, x86_max);
        expect("v8_tree_add, v8_tree_max", i, got, want);
    }
}

// The masked loads and stores on t lanes (0 < t < 8) of a row that ends
// where a mapping ends: the page after it is mapped PROT_NONE, so a lane read
// or written past the row's end faults.
static void test_masks(void) {
    const long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + page, (size_t)page, PROT_NONE) != 0) {
        printf("FAIL the masks: no mapping for the guard page\n");
        failures++;
        return;
    }
    for (int t = 0; t < 8; t++) {
        float *row = (float *)(map + page) - t, got[8], want[8], init[8];
        fill(row, t);
        fill(init, 8);
        const vf_lanes m = vf_first(t);
        v8_store(got, vf_maskload(row, m));
        for (int l = 0; l < 8; l++) want[l] = l < t ? row[l] : 0.0f;
        expect("vf_maskload", t, got, want);
        // maskstore: lanes 0..t-1 of v, nothing past them
        float v[8], before[8];
        fill(v, 8);
        float *dst = (float *)(map + page) - 8;  // 8 - t lanes before the row stay
        memcpy(before, dst, sizeof before);
        vf_maskstore(dst + (8 - t), m, v8_load(v));
        for (int l = 0; l < 8; l++) want[l] = l < 8 - t ? before[l] : v[l - (8 - t)];
        memcpy(got, dst, sizeof got);
        expect("vf_maskstore", t, got, want);
        // blend_lanes and the partial block's add: lanes below t take b (a + b)
        v8_store(got, vf_blend_lanes(v8_load(init), m, v8_load(v)));
        for (int l = 0; l < 8; l++) want[l] = l < t ? v[l] : init[l];
        expect("vf_blend_lanes", t, got, want);
        if (t > 0) {
            v8_store(got, v8_add_blocks_first(v8_load(init), v8_load(v), t, m));
            for (int l = 0; l < 8; l++) want[l] = l < t ? init[l] + v[l] : init[l];
            for (int l = 0; l < 8; l++)
                if (isnan(want[l]) && isnan(got[l])) got[l] = want[l];
            expect("v8_add_blocks_first", t, got, want);
        }
    }
    munmap(map, (size_t)(2 * page));
}

// _mm256_unpacklo_ps, _mm256_unpackhi_ps, _mm256_shuffle_ps,
// _mm256_permute2f128_ps: per 128-bit half h (lanes 4h .. 4h + 3)
static void test_moves(void) {
    float a[8], b[8], got[8], want[8];
    for (int l = 0; l < 8; l++) a[l] = (float)l, b[l] = (float)(10 + l);
    const v8 va = v8_load(a), vb = v8_load(b);
    v8_store(got, v8_unpacklo(va, vb));
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 4; l++) want[4 * h + l] = (l % 2 ? b : a)[4 * h + l / 2];
    expect("v8_unpacklo", 0, got, want);
    v8_store(got, v8_unpackhi(va, vb));
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 4; l++) want[4 * h + l] = (l % 2 ? b : a)[4 * h + 2 + l / 2];
    expect("v8_unpackhi", 0, got, want);
#define SHUFFLE(imm)                                                                     \
    v8_store(got, v8_shuffle(va, vb, imm));                                              \
    for (int h = 0; h < 2; h++)                                                          \
        for (int l = 0; l < 4; l++) want[4 * h + l] = (l < 2 ? a : b)[4 * h + ((imm) >> (2 * l) & 3)]; \
    expect("v8_shuffle " #imm, 0, got, want);
    SHUFFLE(0x44)
    SHUFFLE(0xee)
    SHUFFLE(0x4e)
    SHUFFLE(0xb1)
    SHUFFLE(0x1b)
#undef SHUFFLE
#define HALVES(imm)                                                                   \
    v8_store(got, v8_halves(va, vb, imm));                                            \
    for (int h = 0; h < 2; h++)                                                       \
        for (int l = 0; l < 4; l++) {                                                 \
            const int s = (imm) >> (4 * h) & 3;                                       \
            want[4 * h + l] = (s < 2 ? a : b)[4 * (s & 1) + l];                       \
        }                                                                             \
    expect("v8_halves " #imm, 0, got, want);
    HALVES(0x20)
    HALVES(0x31)
    HALVES(0x01)
    HALVES(0x13)
#undef HALVES
}

// draws_below8: lane i all ones iff (w[2i] << 32 | w[2i+1]) & (2^53 - 1) < thr
static void test_draws(void) {
    const uint64_t mask53 = (UINT64_C(1) << 53) - 1;
    for (int i = 0; i < 2000; i++) {
        uint32_t w[16];
        for (int k = 0; k < 16; k++) w[k] = pcg32_random_r(&rng);
        // the threshold: one element's own value (not below it), one more (below), or any
        const uint64_t r0 = ((uint64_t)w[2 * (i % 8)] << 32 | w[2 * (i % 8) + 1]) & mask53;
        const uint64_t thr = i % 3 == 0 ? r0 : i % 3 == 1 ? r0 + 1 : (uint64_t)pcg32_random_r(&rng) << 21;
        float got[8], want[8];
        v8_store(got, v8_blend(v8_set1(0.0f), draws_below8(w, draws_set1(mask53), draws_set1(thr)), v8_set1(1.0f)));
        for (int l = 0; l < 8; l++) want[l] = (((uint64_t)w[2 * l] << 32 | w[2 * l + 1]) & mask53) < thr ? 1.0f : 0.0f;
        expect("draws_below8", i, got, want);
    }
}

int main(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("this CPU has no AVX2 + FMA: the layer's x86 section cannot run here\n");
        return 77;
    }
    const char *section = "AVX2";
#else
    const char *section = "NEON";
#endif
    pcg32_srandom_r(&rng, 20250611u, 3u);
    test_arithmetic();
    test_conversions();
    test_reductions();
    test_masks();
    test_moves();
    test_draws();
    printf("%s: simd.h's %s section at 8 lanes, %d checks of 8 lanes against the x86 definitions, %d failed\n",
           failures ? "FAIL" : "ok", section, checks, failures);
    return failures ? 1 : 0;
}
