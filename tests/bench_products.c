// bench_products: the products of Exercise 3.3's forward and backward, at
// its size, on the path the process chose (LITATTN_KERNELS), each timed in
// wall and CPU time; the subject that tools/bench/bench_pairs.py runs from
// two builds in alternating processes. Figures only: it never fails on speed.
//
//   bench_products [--threads N] [--budget SECONDS] [--only NAME,...]
//
// Each product runs once untimed, then again and again (at least 5 times,
// at most 60, until `budget` seconds of CPU time, 0.3 by default). Each run
// is timed by the wall clock (CLOCK_MONOTONIC) and by the process's CPU
// time (getrusage(RUSAGE_SELF): user + system), which a busy machine
// stretches far less than wall time. It prints, per product, the fastest and
// the median run of each, the GFLOP/s of the fastest CPU time and its share
// of the mul + add peak measured in the same process (independent vmulps +
// vaddps chains: ymm on the AVX2 path and with AVX2's tile, zmm on the
// AVX-512 path; the fastest of the windows before and after the table), and
// one line per product for the driver:
//
//   RESULT <name> <flops> <wall min> <wall median> <cpu min> <cpu median>
//
// (seconds). The flops count every product of the full operands, 2 M K N,
// but for the two rows that time a whole fused step (attn, attn_bw), which
// count what the causal result needs.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attend.h"
#include "fast_path.h"
#include "fast_threads.h"
#include "gemm.h"
#include "harness.h"
#include "pcg32.h"

enum { T = 1024, D = 768, H = 12, HD = 64 };

static pcg32_random_t rng;

static float *new_floats(long n, float lo, float hi) {
    return harness_uniform_floats(&rng, n, lo, hi, "bench_products");
}

// The operands, (T, D) and (D, D) for the projections, (T, HD) per head and
// (T, T) for one head's weights (causal: +0 above the diagonal, as the
// backward's products see them).
static float *x, *w, *dy, *out_td, *out_dd;
static float *q, *k, *v, *dctx, *wts, *out_tt, *out_th, *ctx_all, *dq, *dk, *dv, *q_all, *k_all, *v_all, *dctx_all;

enum { FWD, DX, DW, QK, DWTS, DV, DQ, DK, ATTN, ATTN_BW, PRODUCTS };

static const struct {
    const char *name, *what;
} products[PRODUCTS] = {
    [FWD] = {"fwd", "x @ W.T       (1024,768) @ (768,768).T: the projections"},
    [DX] = {"dx", "dx = dy @ W   (1024,768) @ (768,768)"},
    [DW] = {"dW", "dW = dy.T @ x (768,1024) @ (1024,768)"},
    [QK] = {"qk", "q @ k.T       (1024,64) @ (64,1024), per head"},
    [DWTS] = {"dwts", "dw = dctx @ v.T (1024,64) @ (64,1024), per head"},
    [DV] = {"dv", "dv = w.T @ dctx (1024,1024).T @ (1024,64), per head"},
    [DQ] = {"dq", "dq = ds @ k   (1024,1024) @ (1024,64), per head"},
    [DK] = {"dk", "dk = ds.T @ q (1024,1024).T @ (1024,64), per head"},
    [ATTN] = {"attn", "fused causal attention, 12 heads, forward (products + softmax)"},
    [ATTN_BW] = {"attn_bw", "its backward, 12 heads (weights again, 5 products, softmax's)"},
};

static double product_flops(int p) {
    const double causal = 2.0 * H * HD * (double)T * (T + 1) / 2;  // one causal product over the heads
    switch (p) {
    case FWD: case DX: case DW: return 2.0 * T * D * D;
    case ATTN: return 2 * causal;
    case ATTN_BW: return 5 * causal;
    default: return 2.0 * T * T * HD;
    }
}

static void run_product(int p) {
    switch (p) {
    case FWD: gemm_fast_matmul_wt_bias(out_td, x, w, NULL, T, D, D); break;
    case DX: gemm_fast_matmul(out_td, dy, w, T, D, D); break;
    case DW: gemm_fast_matmul_at(out_dd, dy, x, T, D, D); break;
    case QK: gemm_fast_bmm_wt(out_tt, q, k, 1, T, HD, T); break;
    case DWTS: gemm_fast_bmm_wt(out_tt, dctx, v, 1, T, HD, T); break;
    case DV: gemm_fast_bmm_at(out_th, wts, dctx, 1, T, T, HD); break;
    case DQ: gemm_fast_bmm(out_th, wts, k, 1, T, T, HD); break;
    case DK: gemm_fast_bmm_at(out_th, wts, q, 1, T, T, HD); break;
    case ATTN: attend_fast(ctx_all, q_all, k_all, v_all, NULL, H, T, HD, 8.0f, 1); break;
    case ATTN_BW:
        attend_fast_backward(dq, dk, dv, dctx_all, q_all, k_all, v_all, NULL, NULL, H, T, HD, 8.0f, true, -1);
        break;
    }
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int threads = 1;
    double budget = 0.3;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_products [--threads N] [--budget SECONDS] [--only NAME,...]\n");
            return 2;
        }
    }
    if (threads < 1 || threads > 64 || !(budget > 0 && budget < 100)) {
        fprintf(stderr, "bench_products: --threads takes 1 to 64, --budget more than 0 and less than 100 seconds\n");
        return 2;
    }
    fast_threads_set(threads);
    pcg32_srandom_r(&rng, 42u, 54u);
    x = new_floats((long)T * D, 0.0f, 1.0f), w = new_floats((long)D * D, -0.036f, 0.036f);
    dy = new_floats((long)T * D, -1.0f, 1.0f), out_td = new_floats((long)T * D, 0, 0);
    out_dd = new_floats((long)D * D, 0, 0);
    q = new_floats((long)T * HD, -1, 1), k = new_floats((long)T * HD, -1, 1), v = new_floats((long)T * HD, -1, 1);
    dctx = new_floats((long)T * HD, -1, 1), wts = new_floats((long)T * T, 0, 1.0f / 64);
    for (long i = 0; i < T; i++)
        for (long j = i + 1; j < T; j++) wts[i * T + j] = 0.0f;
    out_tt = new_floats((long)T * T, 0, 0), out_th = new_floats((long)T * HD, 0, 0);
    const long heads = (long)H * T * HD;
    q_all = new_floats(heads, -1, 1), k_all = new_floats(heads, -1, 1), v_all = new_floats(heads, -1, 1);
    dctx_all = new_floats(heads, -1, 1), ctx_all = new_floats(heads, 0, 0);
    dq = new_floats(heads, 0, 0), dk = new_floats(heads, 0, 0), dv = new_floats(heads, 0, 0);

    const int path = fast_path_get();
    const int zmm = path == FAST_PATH_AVX512;
    double peak = harness_mul_add_peak(zmm);
    printf("bench_products: Exercise 3.3's products on the %s path, %d thread%s, budget %.2f s of CPU each\n",
           fast_path_name(), threads, threads > 1 ? "s" : "", budget);
    printf("%-66s %9s %9s %9s %9s %8s\n", "product", "wall min", "wall med", "cpu min", "cpu med", "GFLOP/s");
    char results[PRODUCTS][160];
    double gflops[PRODUCTS] = {0};
    int done[PRODUCTS] = {0};
    for (int p = 0; p < PRODUCTS; p++) {
        if (only) {
            const size_t n = strlen(products[p].name);
            const char *s = strstr(only, products[p].name);
            while (s && !((s == only || s[-1] == ',') && (s[n] == ',' || s[n] == '\0'))) s = strstr(s + 1, products[p].name);
            if (!s) continue;
        }
        enum { MAX_RUNS = 60 };
        double wall[MAX_RUNS], cpu[MAX_RUNS], cpu_total = 0;
        int n = 0;
        run_product(p);  // untimed: the pages faulted in, the caches warm
        while (n < MAX_RUNS && (n < 5 || cpu_total < budget)) {
            const double c0 = harness_cpu_seconds(), w0 = harness_seconds();
            run_product(p);
            wall[n] = harness_seconds() - w0;
            cpu[n] = harness_cpu_seconds() - c0;
            cpu_total += cpu[n++];
        }
        qsort(wall, (size_t)n, sizeof wall[0], by_value);
        qsort(cpu, (size_t)n, sizeof cpu[0], by_value);
        const double wall_med = n % 2 ? wall[n / 2] : (wall[n / 2 - 1] + wall[n / 2]) / 2;
        const double cpu_med = n % 2 ? cpu[n / 2] : (cpu[n / 2 - 1] + cpu[n / 2]) / 2;
        // a CPU time below the clock's resolution says nothing: the wall time then
        const double best = cpu[0] > 1e-4 ? cpu[0] : wall[0];
        gflops[p] = product_flops(p) / best * 1e-9;
        snprintf(results[p], sizeof results[p], "RESULT %s %.6g %.6g %.6g %.6g %.6g", products[p].name,
                 product_flops(p), wall[0], wall_med, cpu[0], cpu_med);
        done[p] = 1;
        printf("%-66s %7.2fms %7.2fms %7.2fms %7.2fms %8.1f\n", products[p].what, wall[0] * 1e3, wall_med * 1e3,
               cpu[0] * 1e3, cpu_med * 1e3, gflops[p]);
        fflush(stdout);
    }
    const double peak_after = harness_mul_add_peak(zmm);
    if (peak_after > peak) peak = peak_after;
    if (peak > 0) {
        printf("against the mul + add peak measured (%s; the faster of before and after the table): %.1f GFLOP/s\n",
               zmm ? "zmm" : "ymm", peak);
        for (int p = 0; p < PRODUCTS; p++)
            if (done[p]) printf("  %-8s %6.1f GFLOP/s %6.1f %%\n", products[p].name, gflops[p], 100 * gflops[p] / peak);
    } else {
        printf("mul + add peak not measured on this architecture\n");
    }
    printf("RESULT peak %.6g\n", peak * 1e9);
    for (int p = 0; p < PRODUCTS; p++)
        if (done[p]) printf("%s\n", results[p]);
    return 0;
}
