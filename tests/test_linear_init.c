// test_linear_init.c: nn.Linear's initialisation drawn from PCG32 has the
// distribution nn.Linear promises: weight ~ U(-b, b) with b the
// kaiming_uniform bound for fan_in = in, bias ~ U(-1/sqrt(in), 1/sqrt(in)).
//
// No PyTorch bits here (PCG32 is not PyTorch's generator; see
// test_torch_generator.c for those): the expected values are the exact
// moments of the uniform distribution, with tolerances derived from the
// sample size (see check_uniform_moments).
#include <math.h>
#include <stdio.h>

#include "init.h"
#include "linear.h"
#include "param_source.h"
#include "pcg32.h"
#include "tensor.h"

static int failures;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

// Every value in [lo, hi]; reports the worst offender.
static void check_range(const char *name, const float *x, int n, float lo, float hi) {
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (!(x[i] >= lo && x[i] <= hi)) bad = i;
    char what[160];
    snprintf(what, sizeof what, "%s: all %d values within [%a, %a]", name, n, (double)lo, (double)hi);
    if (bad >= 0) printf("  %s[%d] = %a is outside\n", name, bad, (double)x[bad]);
    check(bad < 0, what);
}

// n independent draws from U(-b, b) have mean 0, variance v = b^2 / 3 and
// fourth central moment m4 = b^4 / 5. The sample mean then has standard
// error sqrt(v / n) and the sample variance sqrt((m4 - v^2) / n) =
// b^2 sqrt(4 / (45 n)) (to first order in 1/n). We allow 5 standard errors:
// by the central limit theorem a correct layer fails with probability below
// 1e-5, while a wrong bound (e.g. 1/in instead of 1/sqrt(in)) or a shifted
// range misses by hundreds. The seed is fixed, so the outcome is
// deterministic. Also the extremes: the chance that no value of n comes
// within b * 40 / n of an end is (1 - 20 / n)^n < e^-20, so a correct
// layer reaches both ends; a range too narrow does not.
static void check_uniform_moments(const char *name, const float *x, int n, double b) {
    double s = 0, ss = 0, lo = x[0], hi = x[0];
    for (int i = 0; i < n; i++) {
        s += x[i];
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
    }
    double mean = s / n;
    for (int i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    double var = ss / (n - 1);
    double v = b * b / 3, se_mean = sqrt(v / n), se_var = b * b * sqrt(4.0 / (45.0 * n));
    printf("  %s: n %d, b %.6f: mean %.3e (want 0 +- %.3e), variance %.6e (want %.6e +- %.3e), min %.6f max %.6f\n",
           name, n, b, mean, 5 * se_mean, var, v, 5 * se_var, lo, hi);
    char what[160];
    snprintf(what, sizeof what, "%s: sample mean within 5 standard errors of 0", name);
    check(fabs(mean) < 5 * se_mean, what);
    snprintf(what, sizeof what, "%s: sample variance within 5 standard errors of b^2/3", name);
    check(fabs(var - v) < 5 * se_var, what);
    snprintf(what, sizeof what, "%s: min and max within 40 b / n of -b and b", name);
    check(lo < -b + 40 * b / n && hi > b - 40 * b / n, what);
}

static void test_bounds(void) {
    // The kaiming bound for a = sqrt(5) equals 1/sqrt(fan_in) in value (gain
    // sqrt(1/3) times sqrt(3)); torch's order of operations may move the last
    // bit, so compare to within a few double ulps, not exactly.
    int ok = 1;
    for (int fan = 1; fan <= 4096; fan++) {
        double k = kaiming_uniform_bound(fan), want = 1.0 / sqrt((double)fan);
        ok &= fabs(k - want) <= 4 * want * 0x1p-52;
        ok &= linear_bias_bound(fan) == want;
    }
    check(ok, "kaiming_uniform_bound(n) ~ 1/sqrt(n), linear_bias_bound(n) == 1/sqrt(n), n = 1..4096");
    check(linear_bias_bound(0) == 0.0, "linear_bias_bound(0) is 0");
}

static void test_small_layer(void) {
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 42u, 54u);
    RandomSource rs = pcg32_source(&rng);
    ParamSource ps = param_source_random(&rs);
    Linear l = linear_new(&ps, "l", 3, 2, true);
    float wb = (float)kaiming_uniform_bound(3), bb = (float)linear_bias_bound(3);
    check_range("Linear(3, 2) weight", l.weight.data, 6, -wb, wb);
    check_range("Linear(3, 2) bias", l.bias.data, 2, -bb, bb);
}

static void test_large_layer(void) {
    enum { IN = 256, OUT = 256 };
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 20240601u, 3u);
    RandomSource rs = pcg32_source(&rng);
    ParamSource ps = param_source_random(&rs);
    Linear l = linear_new(&ps, "l", IN, OUT, true);
    double wb = kaiming_uniform_bound(IN), bb = linear_bias_bound(IN);
    check_range("Linear(256, 256) weight", l.weight.data, IN * OUT, (float)-wb, (float)wb);
    check_range("Linear(256, 256) bias", l.bias.data, OUT, (float)-bb, (float)bb);
    check_uniform_moments("Linear(256, 256) weight", l.weight.data, IN * OUT, wb);
    // A fill that restarted the stream per row would repeat rows; every
    // row must start with a fresh draw.
    int distinct = 0;
    for (int r = 1; r < OUT; r++) distinct += l.weight.data[r * IN] != l.weight.data[(r - 1) * IN];
    check(distinct == OUT - 1, "Linear(256, 256): consecutive rows start with different values");
}

static void test_bias_distribution(void) {
    // A bias of 4096 values (fan_in 64, b = 1/8): the bias draws are their
    // own U(-b, b), after the weight's.
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 7u, 11u);
    RandomSource rs = pcg32_source(&rng);
    ParamSource ps = param_source_random(&rs);
    Linear l = linear_new(&ps, "l", 64, 4096, true);
    check_uniform_moments("Linear(64, 4096) bias", l.bias.data, 4096, linear_bias_bound(64));
}

int main(void) {
    test_bounds();
    test_small_layer();
    test_large_layer();
    test_bias_distribution();
    tensor_release_all();
    if (failures) printf("test_linear_init: %d check(s) FAILED\n", failures);
    else printf("test_linear_init: all checks passed\n");
    return failures != 0;
}
