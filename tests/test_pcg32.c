// test_pcg32.c: lib/random/pcg32.h against PCG32's published known answers, and the
// distributions of pcg32_double_r and pcg32_normal_r.
//
// Known answers (lib/NUMERICS.md#pcg32): the output of pcg-c-basic's
// pcg32-demo (imneme/pcg-c-basic, pcg32-demo.c; its expected output is printed
// on pcg-random.org's "Using the pcg-c-basic library" page and recorded in
// imneme/pcg-c test-high/expected/check-pcg32.out). The demo seeds with
// pcg32_srandom_r(&rng, 42u, 54u) and each round draws, in this order:
// six pcg32_random_r outputs ("32bit:"), 65 coins
// (pcg32_boundedrand_r(2) ? 'H' : 'T'), 33 dice (pcg32_boundedrand_r(6) + 1)
// and a 52-card Fisher-Yates shuffle (for i = 52 down to 2: swap card
// boundedrand(i) with card i - 1). Round 1 is checked below.
// The "next six" values are the 7th to 12th outputs of the raw stream from
// the same seed (not round 2 of the demo, which begins after the coins, dice
// and cards of round 1).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pcg32.h"

static int failures;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

static void test_seeding_state(void) {
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 42u, 54u);
    printf("after seeding (42, 54): state 0x%016llx inc 0x%llx; want 0x185706b82c2e03f8, 0x6d\n",
           (unsigned long long)rng.state, (unsigned long long)rng.inc);
    check(rng.state == UINT64_C(0x185706b82c2e03f8), "state after pcg32_srandom_r(42, 54)");
    check(rng.inc == UINT64_C(0x6d), "inc after pcg32_srandom_r(42, 54) is (54 << 1) | 1");
}

static void test_first_twelve(void) {
    static const uint32_t want[12] = {
        0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e,  // demo round 1 "32bit:"
        0xbfc6a3ad, 0x812fff6d, 0xe61f305a, 0xf9384b90, 0x32db86fe, 0x1dc035f9,  // raw outputs 7..12
    };
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 42u, 54u);
    int bad = 0;
    for (int i = 0; i < 12; i++) {
        uint32_t got = pcg32_random_r(&rng);
        if (got != want[i]) {
            printf("  output %d: got 0x%08x want 0x%08x\n", i + 1, got, want[i]);
            bad++;
        }
    }
    check(bad == 0, "first twelve pcg32_random_r outputs for (42, 54)");
}

static void test_demo_round1(void) {
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 42u, 54u);
    for (int i = 0; i < 6; i++) (void)pcg32_random_r(&rng);  // the "32bit:" line, checked above

    static const char want_coins[] = "HHTTTHTHHHTHTTTHHHHHTTTHHHTHTHTHTTHTTTHHHHHHTTTTHHTTTTTHTTTTTTTHT";
    char coins[66];
    for (int i = 0; i < 65; i++) coins[i] = pcg32_boundedrand_r(&rng, 2) ? 'H' : 'T';
    coins[65] = '\0';
    printf("  coins got  %s\n  coins want %s\n", coins, want_coins);
    check(strcmp(coins, want_coins) == 0, "round 1: 65 coin flips, boundedrand(2)");

    static const int want_dice[33] = {3, 4, 1, 1, 2, 2, 3, 2, 4, 3, 2, 4, 3, 3, 5, 2, 3,
                                      1, 3, 1, 5, 1, 4, 1, 5, 6, 4, 6, 6, 2, 6, 3, 3};
    int bad = 0;
    for (int i = 0; i < 33; i++) {
        int d = (int)pcg32_boundedrand_r(&rng, 6) + 1;
        if (d != want_dice[i]) {
            printf("  die %d: got %d want %d\n", i + 1, d, want_dice[i]);
            bad++;
        }
    }
    check(bad == 0, "round 1: 33 dice, boundedrand(6) + 1");

    // Cards: bounds 52 down to 2 exercise rejection thresholds other than 0.
    static const char *want_cards =
        "Qd Ks 6d 3s 3d 4c 3h Td Kc 5c Jh Kd Jd As 4s 4h Ad Th Ac Jc 7s Qs "
        "2s 7h Kh 2d 6c Ah 4d Qh 9h 6s 5s 2c 9c Ts 8d 9s 3c 8c Js 5d 2h 6h "
        "7d 8s 9d 5h 8h Qc 7c Tc";
    static const char number[] = "A23456789TJQK";
    static const char suit[] = "hcds";
    int cards[52];
    for (int i = 0; i < 52; i++) cards[i] = i;
    for (int i = 52; i > 1; i--) {
        int chosen = (int)pcg32_boundedrand_r(&rng, (uint32_t)i);
        int card = cards[chosen];
        cards[chosen] = cards[i - 1];
        cards[i - 1] = card;
    }
    char got[52 * 3 + 1];
    for (int i = 0; i < 52; i++) {
        got[3 * i] = number[cards[i] / 4];
        got[3 * i + 1] = suit[cards[i] % 4];
        got[3 * i + 2] = ' ';
    }
    got[52 * 3 - 1] = '\0';
    printf("  cards got  %s\n  cards want %s\n", got, want_cards);
    check(strcmp(got, want_cards) == 0, "round 1: 52-card shuffle, boundedrand(52 .. 2)");
}

static void test_rotation_edge(void) {
    // A state whose top five bits are 0 makes rot == 0, the case a naive
    // x << (32 - rot) gets wrong (undefined; UBSan would flag it). The
    // expected value is the XSH part alone, computed from its definition.
    pcg32_random_t rng = {UINT64_C(0x0123456789abcdef), 1};
    uint64_t s = rng.state;
    uint32_t want = (uint32_t)(((s >> 18) ^ s) >> 27);
    check(pcg32_random_r(&rng) == want, "rot == 0 returns the unrotated xorshift");
}

// Sample mean and variance against their exact values. For n independent
// draws with variance v and fourth central moment m4, the sample mean has
// standard error sqrt(v / n) and the sample variance sqrt((m4 - v^2) / n)
// (to first order in 1/n). We allow 5 standard errors: by the central limit
// theorem a correct generator passes with probability > 0.99999, while a
// wrong scale or offset is many errors away. The seed is fixed, so the test
// is deterministic; the bounds say how far from exact a right answer can be.
static void check_moments(const char *name, const double *x, int n, double mean, double var, double m4) {
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++) s += x[i];
    double m = s / n;
    for (int i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    double v = ss / (n - 1);
    double se_mean = sqrt(var / n), se_var = sqrt((m4 - var * var) / n);
    char what[160];
    printf("  %s: n %d mean %.6f (want %.6f +- %.6f) variance %.6f (want %.6f +- %.6f)\n", name, n, m, mean,
           5 * se_mean, v, var, 5 * se_var);
    snprintf(what, sizeof what, "%s sample mean within 5 standard errors", name);
    check(fabs(m - mean) < 5 * se_mean, what);
    snprintf(what, sizeof what, "%s sample variance within 5 standard errors", name);
    check(fabs(v - var) < 5 * se_var, what);
}

enum { NSAMPLES = 200000 };
static double samples[NSAMPLES];

static void test_double_distribution(void) {
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 2024u, 7u);
    int in_range = 1;
    for (int i = 0; i < NSAMPLES; i++) {
        samples[i] = pcg32_double_r(&rng);
        if (!(samples[i] >= 0.0 && samples[i] < 1.0)) in_range = 0;
    }
    check(in_range, "pcg32_double_r in [0, 1)");
    // U(0, 1): mean 1/2, variance 1/12, fourth central moment 1/80.
    check_moments("pcg32_double_r", samples, NSAMPLES, 0.5, 1.0 / 12, 1.0 / 80);
    // The 53-bit construction: first draw is the high half.
    pcg32_random_t a, b;
    pcg32_srandom_r(&a, 42u, 54u);
    b = a;
    uint64_t hi = pcg32_random_r(&b), lo = pcg32_random_r(&b);
    check(pcg32_double_r(&a) == (double)(((hi << 32) | lo) >> 11) / 9007199254740992.0,
          "pcg32_double_r = top 53 bits of (first << 32 | second) / 2^53");
}

static void test_normal_distribution(void) {
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 2024u, 8u);
    int finite = 1;
    for (int i = 0; i < NSAMPLES; i++) {
        samples[i] = pcg32_normal_r(&rng);
        if (!isfinite(samples[i])) finite = 0;
    }
    check(finite, "pcg32_normal_r finite");
    // N(0, 1): mean 0, variance 1, fourth central moment 3.
    check_moments("pcg32_normal_r", samples, NSAMPLES, 0.0, 1.0, 3.0);
    // Tails: P(|Z| > 2) = 0.0455003; a binomial count has standard error
    // sqrt(p (1 - p) / n). Catches a right variance with a wrong shape.
    int tail = 0;
    for (int i = 0; i < NSAMPLES; i++) tail += fabs(samples[i]) > 2.0;
    double p = 0.0455003, frac = (double)tail / NSAMPLES, se = sqrt(p * (1 - p) / NSAMPLES);
    printf("  P(|Z| > 2): %.5f (want %.5f +- %.5f)\n", frac, p, 5 * se);
    check(fabs(frac - p) < 5 * se, "pcg32_normal_r tail mass P(|Z| > 2) within 5 standard errors");
}

static void test_source(void) {
    pcg32_random_t a, b;
    pcg32_srandom_r(&a, 42u, 54u);
    pcg32_srandom_r(&b, 42u, 54u);
    RandomSource rs = pcg32_source(&a);
    int same = 1;
    for (int i = 0; i < 100; i++) same &= rs.next_u32(rs.state) == pcg32_random_r(&b);
    check(same, "pcg32_source draws the same stream as pcg32_random_r");
}

int main(void) {
    test_seeding_state();
    test_first_twelve();
    test_demo_round1();
    test_rotation_edge();
    test_double_distribution();
    test_normal_distribution();
    test_source();
    if (failures) printf("test_pcg32: %d check(s) FAILED\n", failures);
    else printf("test_pcg32: all checks passed\n");
    return failures != 0;
}
