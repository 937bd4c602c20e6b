// test_fast_kernels.c: every fast kernel of lib/tensor/ (each family's *_fast.c) against the scalar
// reference (each family's gemm.c, rows.c, noise.c, layout.c, attend.c, and
// the definitions written out below for what they do not have), bit for bit, on every path this CPU runs;
// and every entry of every path table built (simd_isa.h), whether this CPU runs the path or not.
//
// usage: test_fast_kernels [--full]
//        test_fast_kernels --path   (prints the path chosen at start: for
//                                    the LITATTN_KERNELS check)
//
// For each case the reference is computed once; then every run compares with
// it: for each path (scalar; avx2, avx512, avx512-ymm or neon where the CPU
// has them) three runs,
//   t1       1 thread, the normal size thresholds (small sizes go scalar),
//   t1 all   1 thread, thresholds off: every size takes the path's kernels,
//   t2 all   2 threads, thresholds off: any work of two pieces is split
// (the scalar path skips "t1 all", which is "t1" again). By default the
// scalar path runs "t1" alone and the avx512-ymm path "t1 all" alone:
// threads split work the same way on every path, and the SIMD paths run
// 2 threads; avx512-ymm's kernels are avx2's tile and avx512's rows, each
// run three ways on its own path. --full (or LITATTN_TESTS=full, which
// `meson test --setup full` sets) runs every run.
// Values are compared as uint32 bit patterns; any NaN equals any NaN, +0 and
// -0 differ. One line per kernel and path with the number of comparisons;
// the first difference of each kernel and run is printed with its case,
// index and both values in hex, and the exit status is then 1.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attend.h"
#include "fast_path.h"
#include "fast_threads.h"
#include "gemm.h"
#include "harness.h"
#include "layout.h"
#include "noise.h"
#include "pcg32.h"
#include "rows.h"
#include "torch_generator.h"
#include "ulp.h"

// ---------------------------------------------------------------------------
// runs and tallies
// ---------------------------------------------------------------------------
enum { PATHS = FAST_PATHS, MAX_RUNS = 3 * PATHS };

typedef struct {
    int path, threads, all_sizes;
    char name[32];
} Run;

static Run runs[MAX_RUNS];
static int n_runs;

// In the generated sweeps of cases only every `sweep_period`-th case runs on
// 2 threads (4 for the matmul sweeps, 2 for the others): each threaded call
// creates a thread, which costs about a millisecond under ASan, and the
// split (whole rows, tiles of rows, planes, chunks) works the same way for
// every shape. The named edge cases run every run.
static int sweep_case, sweep_period;

static int skip_run(const Run *r) { return r->threads > 1 && sweep_case && sweep_case % sweep_period != 0; }

static void sweep(int period) { sweep_case = period ? sweep_case + 1 : 0, sweep_period = period; }

static void select_run(const Run *r) {
    fast_path_force(r->path);
    fast_threads_set(r->threads);
    fast_path_ignore_thresholds(r->all_sizes);
}

typedef struct {
    const char *name;
    long cases[PATHS], values[PATHS];
    int reported[MAX_RUNS];  // first difference already printed for this run
} Tally;

static int failures;
static char case_name[160];  // the current case, for the failure message

// got (n,) against want (n,) for run r: counts the values, prints the first
// difference of this kernel and run
static void compare(Tally *t, int r, const float *got, const float *want, long n) {
    const int p = runs[r].path;
    t->cases[p]++;
    t->values[p] += n;
    for (long i = 0; i < n; i++) {
        if (same_bits(got[i], want[i])) continue;
        failures++;
        if (!t->reported[r]) {
            uint32_t g, w;
            memcpy(&g, &got[i], sizeof g);
            memcpy(&w, &want[i], sizeof w);
            printf("FAIL %s [%s] %s: index %ld: fast 0x%08x (%a), reference 0x%08x (%a)\n", t->name, runs[r].name,
                   case_name, i, g, (double)got[i], w, (double)want[i]);
            t->reported[r] = 1;
        }
        return;
    }
}

static void report(const Tally *t) {
    for (int p = 0; p < PATHS; p++) {
        if (t->cases[p] == 0) continue;
        int bad = 0;
        for (int r = 0; r < n_runs; r++) bad |= runs[r].path == p && t->reported[r];
        printf("%s %-14s %-10s %10ld values compared in %5ld case runs (1 thread; all sizes; 2 threads)\n",
               bad ? "FAIL" : "ok  ", t->name, fast_path_name_of(p), t->values[p], t->cases[p]);
    }
}

// ---------------------------------------------------------------------------
// inputs
// ---------------------------------------------------------------------------
static pcg32_random_t rng;

static int rand_int(int lo, int hi) { return lo + (int)pcg32_boundedrand_r(&rng, (uint32_t)(hi - lo + 1)); }
static float uniform(float lo, float hi) { return lo + (hi - lo) * (float)pcg32_double_r(&rng); }


// A value that tests the edges: +-0, subnormals, 1e30, -1e30, tiny, big.
static float special_value(void) {
    switch (pcg32_boundedrand_r(&rng, 8)) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return bits_float(1u + pcg32_boundedrand_r(&rng, 0x7fffffu));                // +subnormal
    case 3: return bits_float(0x80000000u | (1u + pcg32_boundedrand_r(&rng, 0x7fffffu)));  // -subnormal
    case 4: return 1e30f;
    case 5: return -1e30f;
    case 6: return uniform(-1e-30f, 1e-30f);
    default: return uniform(-1e6f, 1e6f);
    }
}

// x (n,): uniform in [-1, 1], about 1 in `special_rate` a special value, and
// (if with_nonfinite) about 1 in 500 an inf, -inf or NaN
static void fill(float *x, long n, int special_rate, int with_nonfinite) {
    for (long i = 0; i < n; i++) {
        x[i] = uniform(-1.0f, 1.0f);
        if (special_rate && pcg32_boundedrand_r(&rng, (uint32_t)special_rate) == 0) x[i] = special_value();
        if (with_nonfinite && pcg32_boundedrand_r(&rng, 500) == 0) {
            const float nonfinite[] = {INFINITY, -INFINITY, NAN};
            x[i] = nonfinite[pcg32_boundedrand_r(&rng, 3)];
        }
    }
}

static float *new_floats(long n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!p) {
        fprintf(stderr, "test_fast_kernels: out of memory\n");
        exit(2);
    }
    return p;
}

// ---------------------------------------------------------------------------
// matmul, gemm_matmul_wt_bias, bmm, bmm_wt
// ---------------------------------------------------------------------------
static Tally t_matmul = {"matmul", {0}, {0}, {0}}, t_linear = {"matmul_wt_bias", {0}, {0}, {0}},
             t_bmm = {"bmm", {0}, {0}, {0}}, t_bmm_wt = {"bmm_wt", {0}, {0}, {0}};

// One (M, K, N): a @ b, x @ w^T + bias, x @ w^T (no bias), against matmul and
// gemm_matmul_wt_bias. Every 7th case has inf/NaN in its inputs.
static void matmul_case(int M, int K, int N) {
    static int count;
    const int nonfinite = ++count % 7 == 0;
    float *a = new_floats((long)M * K), *b = new_floats((long)K * N), *w = new_floats((long)N * K),
          *bias = new_floats(N), *want = new_floats((long)M * N), *want_wt = new_floats((long)M * N),
          *want_nb = new_floats((long)M * N), *got = new_floats((long)M * N);
    fill(a, (long)M * K, 20, nonfinite);
    fill(b, (long)K * N, 20, nonfinite);
    fill(w, (long)N * K, 20, nonfinite);
    fill(bias, N, 10, 0);
    gemm_matmul(want, a, b, M, K, N);
    gemm_matmul_wt_bias(want_wt, a, w, bias, M, K, N);
    gemm_matmul_wt_bias(want_nb, a, w, NULL, M, K, N);
    snprintf(case_name, sizeof case_name, "M=%d K=%d N=%d%s", M, K, N, nonfinite ? " (inf/NaN inputs)" : "");
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        gemm_fast_matmul(got, a, b, M, K, N);
        compare(&t_matmul, r, got, want, (long)M * N);
        gemm_fast_matmul_wt_bias(got, a, w, bias, M, K, N);
        compare(&t_linear, r, got, want_wt, (long)M * N);
        gemm_fast_matmul_wt_bias(got, a, w, NULL, M, K, N);
        compare(&t_linear, r, got, want_nb, (long)M * N);
    }
    free(a), free(b), free(w), free(bias), free(want), free(want_wt), free(want_nb), free(got);
}

static void bmm_case(int batch, int M, int K, int N) {
    const long sa = (long)M * K, sb = (long)K * N, so = (long)M * N;
    float *a = new_floats(batch * sa), *b = new_floats(batch * sb), *want = new_floats(batch * so),
          *want_wt = new_floats(batch * so), *got = new_floats(batch * so);
    fill(a, batch * sa, 30, 0);
    fill(b, batch * sb, 30, 0);
    for (int i = 0; i < batch; i++) {
        gemm_matmul(want + i * so, a + i * sa, b + i * sb, M, K, N);
        gemm_matmul_wt_bias(want_wt + i * so, a + i * sa, b + i * sb, NULL, M, K, N);  // b_i read as (N, K)
    }
    snprintf(case_name, sizeof case_name, "batch=%d M=%d K=%d N=%d", batch, M, K, N);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        gemm_fast_bmm(got, a, b, batch, M, K, N);
        compare(&t_bmm, r, got, want, batch * so);
        gemm_fast_bmm_wt(got, a, b, batch, M, K, N);
        compare(&t_bmm_wt, r, got, want_wt, batch * so);
    }
    free(a), free(b), free(want), free(want_wt), free(got);
}

static void test_matmul(void) {
    // each dimension 1..70 with the other two drawn from 1..40
    for (int d = 1; d <= 70; d++) {
        sweep(4), matmul_case(d, rand_int(1, 40), rand_int(1, 40));
        sweep(4), matmul_case(rand_int(1, 40), d, rand_int(1, 40));
        sweep(4), matmul_case(rand_int(1, 40), rand_int(1, 40), d);
    }
    for (int i = 0; i < 100; i++) sweep(4), matmul_case(rand_int(1, 70), rand_int(1, 70), rand_int(1, 70));
    // register tiles (6x16 AVX2, 8x32 AVX-512) and depth blocks (256): each
    // side of their edges
    static const int Ms[] = {1, 5, 6, 7, 8, 9, 12, 13, 17};
    static const int Ks[] = {1, 3, 257};
    static const int Ns[] = {1, 15, 16, 17, 31, 32, 33};
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 7; k++) sweep(4), matmul_case(Ms[i], Ks[j], Ns[k]);
    sweep(0);
    // row blocks (96), large depth, column blocks (1024)
    matmul_case(95, 7, 33);
    matmul_case(96, 9, 17);
    matmul_case(97, 3, 31);
    matmul_case(193, 11, 9);
    matmul_case(13, 1024, 37);
    matmul_case(2, 513, 65);
    matmul_case(7, 5, 1023);
    matmul_case(7, 3, 1025);
    matmul_case(3, 2, 2100);
    matmul_case(1, 300, 1024);
    matmul_case(200, 300, 1);
    matmul_case(8, 8, 16);   // the scalar threshold, 1024 MACs, each side
    matmul_case(8, 8, 15);
    matmul_case(32, 64, 4);  // tiles of 8x32 at 8 times the work (fast), at 32 times (scalar)
    matmul_case(32, 64, 3);
    matmul_case(32, 64, 1);
    matmul_case(6, 3, 2);  // the book's size
    // batches
    for (int i = 0; i < 40; i++) sweep(2), bmm_case(rand_int(1, 5), rand_int(1, 40), rand_int(1, 40), rand_int(1, 40));
    sweep(0);
    bmm_case(12, 33, 16, 33);
    bmm_case(12, 64, 64, 32);
    bmm_case(3, 41, 257, 33);
    report(&t_matmul);
    report(&t_linear);
    report(&t_bmm);
    report(&t_bmm_wt);
}

// ---------------------------------------------------------------------------
// softmax rows
// ---------------------------------------------------------------------------
static Tally t_softmax = {"softmax_rows", {0}, {0}, {0}};

// Row pattern k of a case with n columns (row index i within the case).
static void softmax_pattern(float *x, int n, int k, int i) {
    for (int j = 0; j < n; j++) {
        switch (k) {
        case 0: x[j] = uniform(-5.0f, 5.0f); break;                           // plain
        case 1: x[j] = j > i ? -INFINITY : uniform(-3.0f, 3.0f) / 8.0f; break;  // causal row i
        case 2: x[j] = -INFINITY; break;                                      // all masked: NaN
        case 3: x[j] = j == n / 2 ? INFINITY : uniform(-1.0f, 1.0f); break;  // +inf: NaN row
        case 4: x[j] = j == n - 1 ? NAN : uniform(-1.0f, 1.0f); break;       // NaN
        case 5: x[j] = (float[]){1e30f, -1e30f, 3e38f, -3e38f, 0.0f}[rand_int(0, 4)]; break;  // huge
        case 6: x[j] = pcg32_boundedrand_r(&rng, 2) ? special_value() : uniform(-1e-30f, 1e-30f); break;
        case 7: x[j] = pcg32_boundedrand_r(&rng, 2) ? 0.0f : -0.0f; break;  // signed zeros only
        case 8: x[j] = uniform(-200.0f, 200.0f); break;                    // exp under- and overflow
        default: x[j] = j % 3 == 0 ? -INFINITY : uniform(-90.0f, 10.0f); break;  // sparse mask
        }
    }
}

static void softmax_case(int n) {
    enum { PATTERNS = 10 };
    const long rows = 2 * PATTERNS;
    float *x = new_floats(rows * n), *want = new_floats(rows * n), *got = new_floats(rows * n);
    for (long i = 0; i < rows; i++) softmax_pattern(x + i * n, n, (int)(i % PATTERNS), (int)(i / PATTERNS * 7));
    for (long i = 0; i < rows; i++) rows_softmax_row(want + i * n, x + i * n, n);
    snprintf(case_name, sizeof case_name, "%ld rows of n=%d (row i has pattern i %% %d)", rows, n, PATTERNS);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        rows_fast_softmax_rows(got, x, rows, n);
        compare(&t_softmax, r, got, want, rows * n);
    }
    free(x), free(want), free(got);
}

static void test_softmax(void) {
    for (int n = 1; n <= 70; n++) sweep(2), softmax_case(n);
    sweep(0);
    for (int n = 127; n <= 129; n++) softmax_case(n);
    softmax_case(1024);
    softmax_case(1031);
    report(&t_softmax);
}

// ---------------------------------------------------------------------------
// row sums
// ---------------------------------------------------------------------------
static Tally t_sum = {"sum_rows", {0}, {0}, {0}};

static void sum_case(long rows, int n) {
    float *x = new_floats(rows * n), *want = new_floats(rows), *got = new_floats(rows);
    fill(x, rows * n, 15, 0);
    if (rows > 2) fill(x + 2L * n, n, 3, 1);  // row 2 with more specials and some inf/NaN
    for (long i = 0; i < rows; i++) want[i] = rows_sum(x + i * n, n);
    snprintf(case_name, sizeof case_name, "%ld rows of n=%d", rows, n);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        rows_fast_sum_rows(got, x, rows, n);
        compare(&t_sum, r, got, want, rows);
    }
    free(x), free(want), free(got);
}

static void test_sum(void) {
    for (int n = 1; n <= 70; n++) sweep(2), sum_case(9, n);
    sweep(0);
    static const int ns[] = {127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 5000};
    for (int i = 0; i < 11; i++) sum_case(9, ns[i]);
    sum_case(3, 8 * 4 * 16 * 16 + 13);  // the cascade's level 2 (256 steps)
    sum_case(1, 140001);                 // level 3 (4096 steps)
    sum_case(1, 0);
    report(&t_sum);
}

// ---------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------
static Tally t_exp = {"exp", {0}, {0}, {0}};

static void exp_case(const float *x, long n, const char *what) {
    float *want = new_floats(n), *got = new_floats(n);
    rows_exp(want, x, (int)n);
    snprintf(case_name, sizeof case_name, "%s, n=%ld", what, n);
    for (int r = 0; r < n_runs; r++) {
        select_run(&runs[r]);
        rows_fast_exp(got, x, n);
        compare(&t_exp, r, got, want, n);
    }
    free(want), free(got);
}

static void test_exp(void) {
    float x[1100];
    for (int n = 0; n <= 70; n++) {
        fill(x, n, 4, 1);
        exp_case(x, n, "uniform with specials");
    }
    // the clamps and the range: -104 and 100 and their neighbours, +-0, +-inf, NaN
    const float edges[] = {-104.0f, nextafterf(-104.0f, 0), nextafterf(-104.0f, -200), 100.0f,
                           nextafterf(100.0f, 0), nextafterf(100.0f, 200), 88.72f, -87.3f, -103.9f,
                           0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 0x1p-30f, 3e38f, -3e38f};
    exp_case(edges, sizeof edges / sizeof edges[0], "edges");
    for (int i = 0; i < 1100; i++) x[i] = uniform(-110.0f, 105.0f);
    exp_case(x, 1100, "uniform [-110, 105]");
    // every float of [-104, -87]: e^d subnormal, where the scaling by 2^q
    // rounds (AVX-512 does it in one vscalefps, SLEEF in two multiplies)
    const uint32_t lo = 0xc2ae0000u /* -87 */, hi = 0xc2d00000u /* -104 */;
    float *sub = new_floats(hi - lo + 1);
    for (uint32_t b = lo; b <= hi; b++) sub[b - lo] = bits_float(b);
    exp_case(sub, hi - lo + 1, "every float of [-104, -87]");
    free(sub);
    // random bit patterns: every exponent, subnormals, NaNs
    enum { BITS = 1 << 17 };
    float *bits = new_floats(BITS);
    for (long i = 0; i < BITS; i++) bits[i] = bits_float(pcg32_random_r(&rng));
    exp_case(bits, BITS, "random bit patterns");
    free(bits);
    report(&t_exp);
}

// ---------------------------------------------------------------------------
// dropout noise
// ---------------------------------------------------------------------------
static Tally t_dropout = {"dropout_noise", {0}, {0}, {0}}, t_generator = {"generator", {0}, {0}, {0}};

// the definition (lib/NUMERICS.md#dropout): per element,
// bernoulli_(keep) on r = random64(), then div_ by (float)keep
static void dropout_reference(float *noise, long n, double keep, TorchGenerator *g) {
    for (long i = 0; i < n; i++) {
        const uint64_t r = torch_random64(g);
        const double u = (double)(r & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
        noise[i] = (u < keep ? 1.0f : 0.0f) / (float)keep;
    }
}

// The generator after the call, as floats for compare(): the next four
// draws, and whether the whole state (words and position) is equal.
static void generator_summary(float out[5], TorchGenerator *g, const TorchGenerator *want) {
    out[0] = memcmp(g->state, want->state, sizeof g->state) == 0 && g->next == want->next ? 1.0f : 0.0f;
    for (int i = 1; i < 5; i++) out[i] = (float)(torch_random(g) >> 8);
}

static void dropout_case(uint64_t seed, long skip, long n, double keep) {
    TorchGenerator start, g_want, g_got;
    torch_manual_seed(&start, seed);
    for (long i = 0; i < skip; i++) (void)torch_random(&start);
    float *want = new_floats(n), *got = new_floats(n), sum_want[5], sum_got[5];
    g_want = start;
    dropout_reference(want, n, keep, &g_want);
    const TorchGenerator after = g_want;
    generator_summary(sum_want, &g_want, &after);
    snprintf(case_name, sizeof case_name, "seed %llu, %ld draws skipped, n=%ld, keep=%.17g", (unsigned long long)seed,
             skip, n, keep);
    for (int r = 0; r < n_runs; r++) {
        select_run(&runs[r]);
        g_got = start;
        noise_fast_dropout(got, n, keep, &g_got);
        compare(&t_dropout, r, got, want, n);
        generator_summary(sum_got, &g_got, &after);
        compare(&t_generator, r, sum_got, sum_want, 5);
    }
    free(want), free(got);
}

static void test_dropout(void) {
    static const long ns[] = {1, 7, 8, 9, 15, 16, 17, 311, 312, 313, 511, 512, 513, 624, 1000, 1250, 5000};
    // 0.975 and 0.877 (p = 0.025, 0.123): 1.0f / (float)keep differs there
    // from (float)(1.0 / keep), a scale rounded once in double.
    static const double keeps[] = {0.5, 0.9, 0.8, 0.1, 1.0 / 3.0, 0.7, 0.95, 0.975, 0.877};
    static const uint64_t seeds[] = {123, 42, 0, 789, 0xffffffffu};
    for (int s = 0; s < 5; s++)
        for (int i = 0; i < 17; i++) dropout_case(seeds[s], (s * 311 + i) % 700, ns[i], keeps[(s + i) % 9]);
    // keep at the ends: 1 (all kept), 0 and below (none kept: 1/0 and 0/0),
    // a keep just below 1, a tiny keep (all dropped at float 0), NaN
    static const double odd_keeps[] = {1.0, 0.0, -0.5, 1.5, 0.99999999999999989, 1e-300, 0x1p-53, NAN};
    for (int k = 0; k < 8; k++) dropout_case(123, k, 777, odd_keeps[k]);
    dropout_case(123, 0, 36, 0.5);  // the book's Dropout(0.5)(ones(6, 6))
    // keep on the boundary: u of element j is R 2^-53 (R = its 53-bit draw);
    // keep = u exactly drops it (u < keep is false), the next double above
    // keeps it, the one below drops it. Elements with R < 2^52 make
    // keep 2^53 a non-integer, where a threshold rounded the wrong way shows.
    for (uint64_t seed = 1; seed <= 6; seed++) {
        TorchGenerator g;
        torch_manual_seed(&g, seed);
        uint64_t R = 0;
        int j = -1;
        for (int i = 0; i < 50 && j < 0; i++) {
            R = torch_random64(&g) & ((UINT64_C(1) << 53) - 1);
            if (R < (UINT64_C(1) << 52) && R > 0) j = i;
        }
        const double u = (double)R * 0x1p-53;
        dropout_case(seed, 0, 64, u);
        dropout_case(seed, 0, 64, nextafter(u, 2.0));
        dropout_case(seed, 0, 64, nextafter(u, 0.0));
    }
    report(&t_dropout);
    report(&t_generator);
}

// ---------------------------------------------------------------------------
// layout copies
// ---------------------------------------------------------------------------
static Tally t_transpose = {"transpose", {0}, {0}, {0}}, t_split = {"split_heads", {0}, {0}, {0}},
             t_merge = {"merge_heads", {0}, {0}, {0}};

static void transpose_case(int M, int N) {
    float *a = new_floats((long)M * N), *want = new_floats((long)M * N), *got = new_floats((long)M * N);
    fill(a, (long)M * N, 5, 1);
    layout_transpose(want, a, M, N);
    snprintf(case_name, sizeof case_name, "M=%d N=%d", M, N);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        layout_fast_transpose(got, a, M, N);
        compare(&t_transpose, r, got, want, (long)M * N);
    }
    free(a), free(want), free(got);
}

// x (B, T, H, D) -> (B, H, T, D) by index, and back
static void heads_case(int B, int T, int H, int D) {
    const long n = (long)B * T * H * D;
    float *x = new_floats(n), *split = new_floats(n), *got = new_floats(n);
    fill(x, n, 5, 1);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++)
                for (int d = 0; d < D; d++)
                    split[(((long)b * H + h) * T + t) * D + d] = x[(((long)b * T + t) * H + h) * D + d];
    snprintf(case_name, sizeof case_name, "B=%d T=%d H=%d D=%d", B, T, H, D);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        layout_fast_split_heads(got, x, B, T, H, D);
        compare(&t_split, r, got, split, n);
        layout_fast_merge_heads(got, split, B, H, T, D);
        compare(&t_merge, r, got, x, n);
    }
    free(x), free(split), free(got);
}

static void test_layout(void) {
    for (int i = 0; i < 150; i++) sweep(2), transpose_case(rand_int(1, 70), rand_int(1, 70));
    sweep(0);
    transpose_case(64, 96);
    transpose_case(100, 37);
    transpose_case(33, 1000);
    transpose_case(768, 1);
    for (int i = 0; i < 60; i++) sweep(2), heads_case(rand_int(1, 3), rand_int(1, 9), rand_int(1, 4), rand_int(1, 9));
    sweep(0);
    heads_case(2, 33, 12, 64);
    report(&t_transpose);
    report(&t_split);
    report(&t_merge);
}

// ---------------------------------------------------------------------------
// fused attention against the composed kernels
// ---------------------------------------------------------------------------
static Tally t_attention = {"attention", {0}, {0}, {0}};

// What attend_fast fuses, one op at a time as the modules compose them:
// s = q @ k^T; s[j > i] = -inf; w = softmax(s / scale); w *= noise; out = w @ v
static void attention_reference(float *out, const float *q, const float *k, const float *v, const float *noise,
                                int batch, int T, int D, float scale, int causal) {
    float *s = new_floats((long)T * T), *w = new_floats((long)T * T);
    for (long p = 0; p < batch; p++) {
        const long o = p * T * D;
        gemm_matmul_wt_bias(s, q + o, k + o, NULL, T, D, T);
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T && causal; j++) s[i * T + j] = -INFINITY;
        rows_div_scalar(s, s, scale, (long)T * T);
        rows_softmax_rows(w, s, T, T);
        if (noise) rows_mul(w, w, noise + p * T * T, (long)T * T);
        gemm_matmul(out + o, w, v + o, T, T, D);
    }
    free(s), free(w);
}

// kind: 0 plain, 1 inf/NaN here and there (some rows all NaN, some masked
// keys' values inf: the product cannot stop early there), 2 dropout noise
static void attention_case(int batch, int T, int D, int causal, int kind) {
    const long n = (long)batch * T * D;
    float *q = new_floats(n), *k = new_floats(n), *v = new_floats(n), *want = new_floats(n), *got = new_floats(n);
    float *noise = kind == 2 ? new_floats((long)batch * T * T) : NULL;
    fill(q, n, 50, 0);
    fill(k, n, 50, 0);
    fill(v, n, 50, 0);
    if (kind == 1) {
        // one value inf: every earlier row meets it masked (0 * inf = NaN in
        // that column); and one query NaN: its row is NaN
        const long item = rand_int(0, batch - 1), i = rand_int(0, T - 1), j = rand_int(0, T - 1);
        v[(item * T + j) * D + rand_int(0, D - 1)] = INFINITY;
        q[(item * T + i) * D + rand_int(0, D - 1)] = NAN;
    }
    for (long i = 0; noise && i < (long)batch * T * T; i++) noise[i] = pcg32_boundedrand_r(&rng, 10) ? 1.0f / 0.9f : 0.0f;
    const float scale = sqrtf((float)D);
    attention_reference(want, q, k, v, noise, batch, T, D, scale, causal);
    snprintf(case_name, sizeof case_name, "batch=%d T=%d D=%d%s%s", batch, T, D, causal ? " causal" : "",
             kind == 1 ? " (inf/NaN inputs)" : kind == 2 ? " (dropout)" : "");
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        attend_fast(got, q, k, v, noise, batch, T, D, scale, causal);
        compare(&t_attention, r, got, want, n);
    }
    free(q), free(k), free(v), free(want), free(got), free(noise);
}

static void test_attention(void) {
    for (int i = 0; i < 60; i++)
        sweep(2), attention_case(rand_int(1, 3), rand_int(1, 140), rand_int(1, 40), i % 4 != 3, i % 3);
    sweep(0);
    attention_case(1, 6, 2, 1, 0);      // the book's CausalAttention, one item of its batch
    attention_case(12, 64, 64, 1, 0);   // one block of rows, GPT-2's heads
    attention_case(2, 129, 64, 1, 2);   // three blocks, the last of one row
    attention_case(2, 300, 64, 1, 1);
    attention_case(1, 1024, 16, 1, 0);  // context_length 1024
    report(&t_attention);
}

// ---------------------------------------------------------------------------
// backward: the products, the softmax's rows, attention (attend.h)
// ---------------------------------------------------------------------------
static Tally t_matmul_at = {"matmul_at", {0}, {0}, {0}}, t_softmax_bw = {"softmax_backward", {0}, {0}, {0}},
             t_attention_bw = {"attention_backward", {0}, {0}, {0}};

static void matmul_at_case(int M, int K, int N) {
    float *a = new_floats((long)M * K), *b = new_floats((long)M * N), *want = new_floats((long)K * N),
          *got = new_floats((long)K * N);
    fill(a, (long)M * K, 20, M % 5 == 0);
    fill(b, (long)M * N, 20, 0);
    gemm_matmul_backward_b(want, a, b, M, K, N);
    snprintf(case_name, sizeof case_name, "a^T @ b: M=%d K=%d N=%d", M, K, N);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        gemm_fast_matmul_at(got, a, b, M, K, N);
        compare(&t_matmul_at, r, got, want, (long)K * N);
    }
    free(a), free(b), free(want), free(got);
}

static void bmm_at_case(int batch, int M, int K, int N) {
    const long sa = (long)M * K, sb = (long)M * N, so = (long)K * N;
    float *a = new_floats(batch * sa), *b = new_floats(batch * sb), *want = new_floats(batch * so),
          *got = new_floats(batch * so);
    fill(a, batch * sa, 20, 0);
    fill(b, batch * sb, 20, 0);
    for (long i = 0; i < batch; i++) gemm_matmul_backward_b(want + i * so, a + i * sa, b + i * sb, M, K, N);
    snprintf(case_name, sizeof case_name, "batched a^T @ b: batch=%d M=%d K=%d N=%d", batch, M, K, N);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        gemm_fast_bmm_at(got, a, b, batch, M, K, N);
        compare(&t_matmul_at, r, got, want, batch * so);
    }
    free(a), free(b), free(want), free(got);
}

static void softmax_backward_case(long rows, int n) {
    float *dy = new_floats(rows * n), *y = new_floats(rows * n), *want = new_floats(rows * n),
          *got = new_floats(rows * n);
    fill(dy, rows * n, 20, n % 3 == 0);
    for (long i = 0; i < rows; i++) softmax_pattern(y + i * n, n, (int)(i % 10), (int)i);
    rows_softmax_rows(y, y, rows, n);  // a softmax's output, with its zeros and NaN rows
    rows_softmax_rows_backward(want, dy, y, rows, n);
    snprintf(case_name, sizeof case_name, "softmax backward: %ld rows of n=%d", rows, n);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        rows_fast_softmax_rows_backward(got, dy, y, rows, n);
        compare(&t_softmax_bw, r, got, want, rows * n);
    }
    free(dy), free(y), free(want), free(got);
}

// softmax_dim: -1, 1 or 0, as attend_ref_backward takes it
// odd: 0-3 an inf in q, k or dctx, or a NaN row of w (see below); 8 none; -1 drawn
static void attention_backward_case(int batch, int T, int D, int causal, int dropout, int softmax_dim, int odd) {
    const long n = (long)batch * T * D, nn = (long)batch * T * T;
    float *q = new_floats(n), *k = new_floats(n), *v = new_floats(n), *dctx = new_floats(n), *w = new_floats(nn);
    float *noise = dropout ? new_floats(nn) : NULL, *want = new_floats(3 * n), *got = new_floats(3 * n);
    fill(q, n, 50, 0), fill(k, n, 50, 0), fill(v, n, 50, 0), fill(dctx, n, 50, 0);
    for (long i = 0; i < nn; i++) w[i] = uniform(0.0f, 1.0f);
    if (causal)
        for (long i = 0; i < nn; i++) w[i] = i % T > i / T % T ? 0.0f : w[i];
    // every third case: one inf in q, k or dctx, or a NaN row of w, where
    // the causal products must not skip the dead triangle
    if (odd < 0) odd = causal && T > 1 ? rand_int(0, 8) : 8;
    // q, dctx and w in row 1 of the first matrix (the rows of every later
    // depth block may start after it), k in its last row (the rows of the
    // first depth block may stop before it)
    const long at = (odd == 1 ? T - 1L : 1L) * D + rand_int(0, D - 1);
    if (odd == 0) q[at] = INFINITY;
    if (odd == 1) k[at] = -INFINITY;
    if (odd == 2) dctx[at] = INFINITY;
    for (long j = 0; odd == 3 && j < T; j++) w[T + j] = NAN;  // row 1 of the first matrix
    for (long i = 0; noise && i < nn; i++) noise[i] = pcg32_boundedrand_r(&rng, 10) ? 1.0f / 0.9f : 0.0f;
    const float scale = sqrtf((float)D);
    attend_ref_backward(want, want + n, want + 2 * n, dctx, q, k, v, w, noise, batch, T, D, scale, causal,
                       softmax_dim);
    snprintf(case_name, sizeof case_name, "attention backward: batch=%d T=%d D=%d%s%s, softmax dim %d%s", batch, T,
             D, causal ? " causal" : "", dropout ? " dropout" : "", softmax_dim,
             (const char *[]){" (inf in q)", " (inf in k)", " (inf in dctx)", " (a NaN row of w)", "", "", "", "", ""}[odd]);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        attend_fast_backward(got, got + n, got + 2 * n, dctx, q, k, v, w, noise, batch, T, D, scale, causal,
                                softmax_dim);
        compare(&t_attention_bw, r, got, want, 3 * n);
    }
    free(q), free(k), free(v), free(dctx), free(w), free(noise), free(want), free(got);
}

// The same without w: attend_fast_backward computes each matrix's weights
// again from q and k; the reference is given them composed by the scalar
// kernels, as the forward makes them
static void attention_backward_recompute_case(int batch, int T, int D, int causal, int dropout) {
    const long n = (long)batch * T * D, nn = (long)batch * T * T;
    float *q = new_floats(n), *k = new_floats(n), *v = new_floats(n), *dctx = new_floats(n), *w = new_floats(nn);
    float *s = new_floats((long)T * T), *noise = dropout ? new_floats(nn) : NULL, *want = new_floats(3 * n),
          *got = new_floats(3 * n);
    fill(q, n, 50, 0), fill(k, n, 50, 0), fill(v, n, 50, 0), fill(dctx, n, 50, 0);
    for (long i = 0; noise && i < nn; i++) noise[i] = pcg32_boundedrand_r(&rng, 10) ? 1.0f / 0.9f : 0.0f;
    const float scale = sqrtf((float)D);
    for (long p = 0; p < batch; p++) {
        gemm_matmul_wt_bias(s, q + p * T * D, k + p * T * D, NULL, T, D, T);
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T && causal; j++) s[i * T + j] = -INFINITY;
        rows_div_scalar(s, s, scale, (long)T * T);
        rows_softmax_rows(w + p * T * T, s, T, T);
    }
    attend_ref_backward(want, want + n, want + 2 * n, dctx, q, k, v, w, noise, batch, T, D, scale, causal, -1);
    snprintf(case_name, sizeof case_name, "attention backward, weights computed again: batch=%d T=%d D=%d%s%s", batch,
             T, D, causal ? " causal" : "", dropout ? " dropout" : "");
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        attend_fast_backward(got, got + n, got + 2 * n, dctx, q, k, v, NULL, noise, batch, T, D, scale, causal,
                                -1);
        compare(&t_attention_bw, r, got, want, 3 * n);
    }
    free(q), free(k), free(v), free(dctx), free(w), free(s), free(noise), free(want), free(got);
}

// The causal backward's fused path (attend_fast.c: every value small enough
// that no product of depth hd can overflow, q, k, v, dctx and noise finite,
// a given w +0 above its diagonal), and each case its checks must send to
// the other path. odd: 8 none; 3 a NaN row of the given w (its dropped
// weights past the diagonal are NaN, which dv must add); 4 a dctx @ v^T
// that overflows from finite values; 5 the same for q @ k^T (a row of
// weights all NaN); 6 a noise whose product with g overflows; 7 a scale
// of 1e-30 and one q of 1e10, so that a row of scores / scale overflows;
// 9 a scale of +inf (-inf / inf is NaN: every row but the last NaN).
// given_w: the weights given, else computed again (the reference composes
// them).
static void attention_backward_fused_case(int batch, int T, int D, int dropout, int given_w, int odd) {
    const long n = (long)batch * T * D, nn = (long)batch * T * T;
    float *q = new_floats(n), *k = new_floats(n), *v = new_floats(n), *dctx = new_floats(n), *w = new_floats(nn);
    float *s = new_floats((long)T * T), *noise = dropout || odd == 6 ? new_floats(nn) : NULL,
          *want = new_floats(3 * n), *got = new_floats(3 * n);
    float *const operands[] = {q, k, v, dctx};
    for (int o = 0; o < 4; o++) {
        fill(operands[o], n, 50, 0);
        for (long i = 0; i < n; i++)
            if (fabsf(operands[o][i]) > 1e6f) operands[o][i] = uniform(-1e6f, 1e6f);  // no 1e30
    }
    for (long i = 0; noise && i < nn; i++) noise[i] = pcg32_boundedrand_r(&rng, 10) ? 1.0f / 0.9f : 0.0f;
    const long at = (long)(T / 2) * D + rand_int(0, D - 1);  // a row of the first matrix past its first block
    if (odd == 4) dctx[at] = 3e19f, v[(long)(T - 1) * D + at % D] = 3e19f;  // one key past the row's diagonal
    if (odd == 5) q[at] = 3e19f, k[at % D] = 3e19f;
    if (odd == 6) {  // past the row's diagonal, where g is about 1e6
        noise[(T / 2) * (long)T + T - 1] = FLT_MAX;
        dctx[(long)(T / 2) * D] = 1e3f, v[(long)(T - 1) * D] = 1e3f;
    }
    if (odd == 7) q[at] = 1e10f;
    const float scale = odd == 7 ? 1e-30f : odd == 9 ? INFINITY : sqrtf((float)D);
    for (long p = 0; p < batch; p++) {  // the forward's weights, composed by the scalar kernels
        gemm_matmul_wt_bias(s, q + p * T * D, k + p * T * D, NULL, T, D, T);
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T; j++) s[i * T + j] = -INFINITY;
        rows_div_scalar(s, s, scale, (long)T * T);
        rows_softmax_rows(w + p * T * T, s, T, T);
    }
    for (long j = 0; odd == 3 && j < T; j++) w[(long)(T / 2) * T + j] = NAN;
    attend_ref_backward(want, want + n, want + 2 * n, dctx, q, k, v, w, noise, batch, T, D, scale, 1, -1);
    snprintf(case_name, sizeof case_name, "attention backward, fused: batch=%d T=%d D=%d causal%s, weights %s%s", batch,
             T, D, noise ? " dropout" : "", given_w ? "given" : "computed again",
             (const char *[]){"", "", "", " (a NaN row of w)", " (dctx @ v^T overflows)", " (q @ k^T overflows)",
                              " (noise * g overflows)", " (scores / scale overflow)", "", " (a scale of inf)"}[odd]);
    for (int r = 0; r < n_runs; r++) {
        if (skip_run(&runs[r])) continue;
        select_run(&runs[r]);
        attend_fast_backward(got, got + n, got + 2 * n, dctx, q, k, v, given_w ? w : NULL, noise, batch, T, D, scale,
                             1, -1);
        compare(&t_attention_bw, r, got, want, 3 * n);
    }
    free(q), free(k), free(v), free(dctx), free(w), free(s), free(noise), free(want), free(got);
}

static void test_backward(void) {
    for (int i = 0; i < 60; i++) sweep(4), matmul_at_case(rand_int(1, 70), rand_int(1, 70), rand_int(1, 70));
    for (int i = 0; i < 20; i++) sweep(2), bmm_at_case(rand_int(1, 4), rand_int(1, 50), rand_int(1, 50), rand_int(1, 50));
    for (int n = 1; n <= 40; n++) sweep(2), softmax_backward_case(rand_int(1, 12), n);
    for (int i = 0; i < 30; i++)
        sweep(2), attention_backward_case(rand_int(1, 3), rand_int(1, 40), rand_int(1, 20), i % 3 != 0, i % 2,
                                          i % 5 == 4 ? i % 2 : -1, -1);
    sweep(0);
    matmul_at_case(1024, 96, 64);  // dW of a Linear: the rows are the contraction
    matmul_at_case(300, 257, 33);
    softmax_backward_case(20, 1024);
    attention_backward_case(12, 64, 64, 1, 0, -1, 8);
    attention_backward_case(2, 130, 16, 1, 1, -1, 8);
    // depth blocks of 256 (and 192) on both sides of each row tile: the
    // dead triangle skipped, and not where a value there is not finite
    for (int odd = 0; odd <= 3; odd++) attention_backward_case(1, 520, 4, 1, 0, -1, odd);
    attention_backward_case(1, 520, 24, 1, 1, -1, 8);
    // past every depth block (four of 256, six of 192), with a non-finite
    // value in each operand in turn: the skip must see it at any depth
    for (int odd = 0; odd <= 3; odd++) attention_backward_case(1, 1030, 3, 1, 0, -1, odd);
    // T - 1 a multiple of a depth block (256, 192): the last row alone in
    // its block, where a skip one block off drops or keeps a whole block
    static const int block_edges[] = {193, 257, 385, 513, 577, 769, 1025};
    for (size_t i = 0; i < sizeof block_edges / sizeof *block_edges; i++)
        attention_backward_case(1, block_edges[i], 16, 1, (int)i % 2, -1, 8);
    for (int i = 0; i < 12; i++)
        sweep(2), attention_backward_recompute_case(rand_int(1, 3), rand_int(1, 40), rand_int(1, 20), i % 3 != 0, i % 2);
    sweep(0);
    attention_backward_recompute_case(2, 300, 16, 1, 1);
    // the fused path: blocks of rows (12 with the thresholds ignored, up to
    // 96) on both sides of T, batches of 1 and 2 (two threads split them)
    for (int i = 0; i < 16; i++)
        sweep(2), attention_backward_fused_case(rand_int(1, 2), rand_int(16, 120), rand_int(1, 20), i % 2, i % 4 < 2, 8);
    sweep(0);
    attention_backward_fused_case(2, 200, 64, 0, 0, 8);
    attention_backward_fused_case(2, 97, 16, 1, 1, 8);
    attention_backward_fused_case(1, 300, 64, 1, 0, 8);
    for (int odd = 3; odd <= 9; odd++)
        if (odd != 8) attention_backward_fused_case(2, 100, 8, odd == 6, odd == 3, odd);
    report(&t_matmul_at);
    report(&t_softmax_bw);
    report(&t_attention_bw);
}

// ---------------------------------------------------------------------------
// the path tables: every kernel of every table built, the tables of paths
// this CPU cannot run too (CI's CPU may have no AVX-512: its tables are
// checked here, never run)
// ---------------------------------------------------------------------------
static void test_tables(void) {
    int tables = 0, entries = 0, wrong = 0;
    for (const SimdIsa *const *t = simd_isa_tables; *t; t++, tables++) {
        const SimdIsa *isa = *t;
        // a table is its path's: the path of its name has it as its kernels
        int path = -1;
        for (int p = 0; p < PATHS; p++)
            if (strcmp(fast_path_name_of(p), isa->name) == 0) path = p;
        if (path < 0 || fast_path_isa_of(path) != isa) {
            printf("FAIL table %s: not the kernels of the path of that name\n", isa->name);
            wrong++;
        }
        if (isa->mr <= 0 || isa->nr <= 0 || isa->kc <= 0 || isa->mc % isa->mr != 0 || isa->nc % isa->nr != 0 ||
            isa->mc <= 0 || isa->nc <= 0) {
            printf("FAIL table %s: blocks mr %d nr %d kc %d mc %d nc %d\n", isa->name, isa->mr, isa->nr, isa->kc,
                   isa->mc, isa->nc);
            wrong++;
        }
#define CHECK_ENTRY(field, type, fn, build)                                 \
    entries++;                                                              \
    if (!isa->field) {                                                      \
        printf("FAIL table %s: no kernel %s (%s)\n", isa->name, #field, #build); \
        wrong++;                                                            \
    }
        SIMD_ISA_KERNELS(CHECK_ENTRY)
#undef CHECK_ENTRY
    }
    // every path with kernels has its table in the list, and the best path
    // this CPU has (scalar aside) has kernels
    for (int p = 0; p < PATHS; p++) {
        const SimdIsa *isa = fast_path_isa_of(p);
        int listed = 0;
        for (const SimdIsa *const *t = simd_isa_tables; *t; t++) listed |= *t == isa;
        if (isa && !listed) {
            printf("FAIL path %s: its table is not in simd_isa_tables\n", fast_path_name_of(p));
            wrong++;
        }
        if (!isa && p != FAST_PATH_SCALAR && fast_path_runs(p)) {
            printf("FAIL path %s: this CPU runs it, and it has no kernels\n", fast_path_name_of(p));
            wrong++;
        }
    }
    printf("%s tables                 %d entries of %d kernels in %d tables checked\n", wrong ? "FAIL" : "ok  ",
           entries, SIMD_ISA_KERNEL_COUNT, tables);
    failures += wrong;
}

// ---------------------------------------------------------------------------
// LITATTN_KERNELS: this program run again with each value prints its path
// ---------------------------------------------------------------------------
static void test_environment(const char *self, int best) {
    static const struct {
        const char *value;
        int want;  // the path asked for; -1: the preferred one (not a path name)
    } cases[] = {{"scalar", FAST_PATH_SCALAR}, {"avx2", FAST_PATH_AVX2}, {"avx512", FAST_PATH_AVX512},
                 {"avx512-ymm", FAST_PATH_AVX512_YMM}, {"neon", FAST_PATH_NEON}, {"AVX2", -1}};
    const int preferred = fast_path_preferred();
    int checked = 0, wrong = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        // a path the CPU lacks gives its best
        const int want = cases[i].want < 0 ? preferred : fast_path_runs(cases[i].want) ? cases[i].want : best;
        char *argv[] = {(char *)self, (char *)"--path", NULL};
        RunResult res;
        setenv("LITATTN_KERNELS", cases[i].value, 1);
        const int ran = run_program(argv, RUN_LIMIT_SECONDS, &res);
        unsetenv("LITATTN_KERNELS");
        char got[32] = "";
        if (ran) sscanf(res.out, "%31s", got);
        if (!ran || res.exit_code != 0 || strcmp(got, fast_path_name_of(want)) != 0) {
            printf("FAIL LITATTN_KERNELS=\"%s\": path %s, want %s\n", cases[i].value, got, fast_path_name_of(want));
            wrong++;
        }
        if (ran) run_result_free(&res);
        checked++;
    }
    printf("%s LITATTN_KERNELS        %d values checked (scalar, avx2, avx512, avx512-ymm, neon on a CPU whose best is "
           "%s; unknown: %s)\n",
           wrong ? "FAIL" : "ok  ", checked, fast_path_name_of(best), fast_path_name_of(preferred));
    failures += wrong;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--path") == 0) {
        printf("%s\n", fast_path_name());
        return 0;
    }
    const int full = harness_full_selection("test_fast_kernels", argc, argv);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--full") != 0) {
            fprintf(stderr, "test_fast_kernels: %s: expected --full or --path\n", argv[i]);
            return 2;
        }
    pcg32_srandom_r(&rng, 20240611u, 7u);
    const clock_t t0 = clock();
    test_tables();
    // the runs: every path the CPU has (force_path clamps to the best one)
    for (int p = 0; p < PATHS; p++) {
        fast_path_force(p);
        if (fast_path_get() != p) {
            printf("skip path %s: this CPU does not run it\n", fast_path_name_of(p));
            continue;
        }
        // (the scalar path has no size threshold but the threads': it runs
        // 1 thread, and 2 threads on every size)
        static const int threads[] = {1, 1, 2}, all_sizes[] = {0, 1, 1};  // (MAX_RUNS: 3 a path)
        for (int k = 0; k < 3; k++) {
            if (p == FAST_PATH_SCALAR && k == 1) continue;
            if (p == FAST_PATH_AVX512_YMM && !full && k != 1) continue;
            if (p == FAST_PATH_SCALAR && !full && k != 0) continue;
            Run *r = &runs[n_runs++];
            r->path = p, r->threads = threads[k], r->all_sizes = all_sizes[k];
            snprintf(r->name, sizeof r->name, "%s, %d thread%s%s", fast_path_name(), threads[k],
                     threads[k] > 1 ? "s" : "", all_sizes[k] ? ", all sizes" : "");
        }
    }
    void (*const sections[])(void) = {test_matmul, test_softmax, test_sum, test_exp, test_dropout, test_layout,
                                               test_attention, test_backward};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        const clock_t t = clock();
        sections[i]();
        if (getenv("TEST_FAST_KERNELS_TIMES")) printf("(%.2f s)\n", (double)(clock() - t) / CLOCKS_PER_SEC);
    }
    fast_path_ignore_thresholds(0);
    fast_threads_set(1);
    fast_path_force(FAST_PATH_AVX512);
    test_environment(argv[0], fast_path_get());
    if (!full)
        printf("(the default selection: the scalar path at 1 thread alone, avx512-ymm at 1 thread, all sizes, "
               "alone; --full runs every run)\n");
    printf("%s: %d difference%s, %.1f s of CPU\n", failures ? "FAIL" : "ok", failures, failures == 1 ? "" : "s",
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    return failures ? 1 : 0;
}
