// bench_kernels: the fast kernels against the scalar ones, and the whole
// Exercise 3.3 forward against torch. Prints figures; never fails on speed
// (meson benchmark, verbose):
//
//   meson test -C build --benchmark
//   build/tests/bench_kernels [tools/bench/bench_torch.py]
//
// 1. The clock and the peak. The clock is measured (chains of dependent
//    integer adds, one per cycle; the fastest of many short windows, before
//    and after the kernel table) and /proc/cpuinfo's figure is shown beside
//    it. Peak = 2 FMA pipes x lanes x 2 flops x GHz (8 lanes AVX2, 16 lanes
//    AVX-512, for a core whose pipes are 512 bits wide; a core that splits a
//    512-bit instruction in two reaches the AVX2 figure). The matmul never
//    fuses: it issues a mul and an add per product, which on a core with
//    2 FMA/FMUL pipes and 2 FADD pipes can still reach that many flops per
//    cycle.
// 2. Per kernel and shape (book size, GPT-2 size): GFLOP/s or ns/element for
//    scalar, AVX2, AVX-512, AVX-512 with AVX2's tile and NEON, one and two threads
//    (best of a few runs: on a shared machine the best is the one least
//    disturbed).
// 3. Exercise 3.3's forward, MultiHeadAttention(768, 768, 1024, 0.0, 12) on
//    (1, 1024, 768), in C (mha_forward_ex33 below) and in torch 1.13 with one
//    thread, once with the reference BLAS and once with OpenBLAS
//    (tools/bench/bench_torch.py). torch's weights, input and output are dumped
//    and the C forward's output is compared with torch's bit for bit.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attend.h"
#include "fast_path.h"
#include "fast_threads.h"
#include "gemm.h"
#include "harness.h"
#include "layout.h"
#include "noise.h"
#include "pcg32.h"
#include "rows.h"

// Seconds per call of fn(ctx), the median of the runs (and *best, if not
// NULL, the fastest): at least 3 runs (1 if one run takes over a second),
// more while under `budget` seconds, at most 15.
static double time_median(void (*fn)(void *), void *ctx, double budget, double *best) {
    double t[15];
    int n = 0;
    const double start = harness_seconds();
    do {
        const double t0 = harness_seconds();
        fn(ctx);
        t[n++] = harness_seconds() - t0;
    } while (n < 15 && (harness_seconds() - start < budget || (n < 3 && t[0] < 1.0)));
    const double median = harness_median(t, n);  // (t sorted)
    if (best) *best = t[0];
    return median;
}

static float *new_floats(long n) {
    float *p = malloc((size_t)n * sizeof(float));
    if (!p) {
        fprintf(stderr, "bench_kernels: out of memory\n");
        exit(1);
    }
    return p;
}

static pcg32_random_t rng;

static void fill_uniform(float *x, long n, float lo, float hi) {
    for (long i = 0; i < n; i++) x[i] = lo + (hi - lo) * (float)pcg32_double_r(&rng);
}

// ---------------------------------------------------------------------------
// 1. clock and peak
// ---------------------------------------------------------------------------

// GHz from chains of dependent integer adds (one per cycle): the fastest
// of 50 windows of 64 x 100000 adds (~2 ms each). On a shared VM a longer
// window is often partly preempted (steal time is invisible to the guest),
// so the fastest short window is the best estimate; it is a lower bound.
// The addend is a register, never an immediate: a core that folds
// immediate adds as it renames them (Intel's Golden Cove) would run a chain
// of `add $1` several to a cycle.
static double measure_ghz(void) {
    const long passes = 100000;
    double best = 0;
    for (int rep = 0; rep < 50; rep++) {
        unsigned long x = 0, one = 1;
        const double t0 = harness_seconds();
        for (long i = 0; i < passes; i++) {
#if defined(__x86_64__)
#define ADD1 "add %1, %0\n\t"
#elif defined(__aarch64__)
#define ADD1 "add %0, %0, %1\n\t"
#endif
#ifdef ADD1
#define ADD8 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1
            __asm__ volatile(ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 : "+r"(x) : "r"(one));
#undef ADD8
#undef ADD1
#else
            x = one;  // no dependent-add loop for this architecture: the clock is not measured
            return 0;
#endif
        }
        const double ghz = 64.0 * (double)passes / (harness_seconds() - t0) * 1e-9;
        if (ghz > best) best = ghz;
    }
    return best;
}


static double cpuinfo_mhz(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[256];
    double mhz = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "cpu MHz : %lf", &mhz) == 1) break;
    fclose(f);
    return mhz;
}

// ---------------------------------------------------------------------------
// 2. kernels
// ---------------------------------------------------------------------------
typedef struct {
    const char *kernel, *shape;
    int what;  // which call, below
    long batch;
    int M, K, N;
    float *a, *b, *bias, *out;
    TorchGenerator g;
} Job;

enum { MATMUL, LINEAR, BMM, BMM_WT, MATMUL_AT, BMM_AT, SOFTMAX, SOFTMAX_BW, SUM, EXP, DROPOUT, SPLIT };

static void run_job(void *p) {
    Job *j = p;
    switch (j->what) {
    case MATMUL: gemm_fast_matmul(j->out, j->a, j->b, j->M, j->K, j->N); break;
    case LINEAR: gemm_fast_matmul_wt_bias(j->out, j->a, j->b, j->bias, j->M, j->K, j->N); break;
    case BMM: gemm_fast_bmm(j->out, j->a, j->b, j->batch, j->M, j->K, j->N); break;
    case BMM_WT: gemm_fast_bmm_wt(j->out, j->a, j->b, j->batch, j->M, j->K, j->N); break;
    // (M, K, N) of the product out = a^T @ b: a is stored (K, M)
    case MATMUL_AT: gemm_fast_matmul_at(j->out, j->a, j->b, j->K, j->M, j->N); break;
    case BMM_AT: gemm_fast_bmm_at(j->out, j->a, j->b, j->batch, j->K, j->M, j->N); break;
    case SOFTMAX_BW: rows_fast_softmax_rows_backward(j->out, j->a, j->b, j->batch * j->M, j->N); break;
    case SOFTMAX: rows_fast_softmax_rows(j->out, j->a, j->batch * j->M, j->N); break;
    case SUM: rows_fast_sum_rows(j->out, j->a, j->batch * j->M, j->N); break;
    case EXP: rows_fast_exp(j->out, j->a, j->batch * j->M * j->N); break;
    case DROPOUT: noise_fast_dropout(j->out, j->batch * j->M * j->N, 0.9, &j->g); break;
    case SPLIT: layout_fast_split_heads(j->out, j->a, 1, j->M, (int)j->batch, j->N); break;
    }
}

// One table row: the figure for every path and thread count, also left in
// fig[path][threads - 1] (0 where the path is missing).
static void bench_row(Job *j, double fig[FAST_PATHS][2]) {
    const int is_mm = j->what <= BMM_AT;
    const double elems = (double)j->batch * j->M * (is_mm ? j->N : j->N);
    const double flops = 2.0 * (double)j->batch * j->M * j->K * j->N;
    const long n_in = is_mm ? j->batch * j->M * j->K : j->batch * j->M * j->N;
    const long n_b = j->what == SOFTMAX_BW ? j->batch * j->M * j->N
                   : j->what == BMM || j->what == BMM_WT || j->what == BMM_AT ? j->batch * j->K * j->N
                                                                               : (long)j->K * j->N;
    j->a = new_floats(n_in > 0 ? n_in : 1);
    j->b = new_floats(is_mm || j->what == SOFTMAX_BW ? n_b : 1);
    j->bias = new_floats(j->N);
    j->out = new_floats(j->batch * j->M * j->N);
    fill_uniform(j->a, n_in, -4.0f, 4.0f);
    if (is_mm || j->what == SOFTMAX_BW) fill_uniform(j->b, n_b, is_mm ? -1.0f : 0.0f, 1.0f);
    fill_uniform(j->bias, j->N, -1.0f, 1.0f);
    torch_manual_seed(&j->g, 123);
    printf("%-15s %-29s %-8s", j->kernel, j->shape, is_mm ? "GFLOP/s" : "ns/elem");
    for (int p = FAST_PATH_SCALAR; p < FAST_PATHS; p++) {
        for (int t = 1; t <= 2; t++) {
            fig[p][t - 1] = 0;
            if (!fast_path_runs(p)) {
                printf(" %10s", "-");
                continue;
            }
            fast_path_force(p);
            fast_threads_set(t);
            // the scalar matmuls of GPT-2 size take seconds: one run each
            double s;
            (void)time_median(run_job, j, p == FAST_PATH_SCALAR && flops > 1e8 ? 0.0 : 0.4, &s);
            fig[p][t - 1] = is_mm ? flops / s * 1e-9 : s / elems * 1e9;
            printf(is_mm ? " %10.2f" : " %10.3f", fig[p][t - 1]);
            fflush(stdout);
        }
    }
    printf("\n");
    free(j->a), free(j->b), free(j->bias), free(j->out);
}

static void bench_kernels(int best, int chosen, double ghz) {
    printf("\nPer kernel: the best of a few runs (1 run for the GPT-2-size scalar products); 2t = 2 threads;\n"
           "a512-ymm = avx512 with avx2's 6 x 16 tile for the products\n");
    printf("%-15s %-29s %-8s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "kernel", "shape", "unit", "scalar",
           "scalar 2t", "avx2", "avx2 2t", "avx512", "avx512 2t", "a512-ymm", "a-ymm 2t", "neon", "neon 2t");
    Job jobs[] = {
        {"matmul a@b", "(6,3) @ (3,2)", MATMUL, 1, 6, 3, 2, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"matmul a@b", "(1024,768) @ (768,768)", MATMUL, 1, 1024, 768, 768, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"linear x@W.T+b", "(6,3) @ (2,3).T", LINEAR, 1, 6, 3, 2, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"linear x@W.T+b", "(1024,768) @ (768,768).T", LINEAR, 1, 1024, 768, 768, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bmm q@k.T", "4 x (6,1) @ (1,6)", BMM_WT, 4, 6, 1, 6, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bmm q@k.T", "12 x (1024,64) @ (64,1024)", BMM_WT, 12, 1024, 64, 1024, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bmm w@v", "4 x (6,6) @ (6,1)", BMM, 4, 6, 6, 1, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bmm w@v", "12 x (1024,1024) @ (1024,64)", BMM, 12, 1024, 1024, 64, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"softmax rows", "(6,6)", SOFTMAX, 1, 6, 0, 6, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"softmax rows", "(12,1024,1024)", SOFTMAX, 12, 1024, 0, 1024, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"sum rows", "(6,6)", SUM, 1, 6, 0, 6, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"sum rows", "(12*1024,1024)", SUM, 12, 1024, 0, 1024, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"exp", "(12,1024,1024)", EXP, 12, 1024, 0, 1024, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"dropout noise", "(12,1024,1024)", DROPOUT, 12, 1024, 0, 1024, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"split heads", "(1024,12,64)", SPLIT, 12, 1024, 0, 64, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        // the backward's own shapes; dx = dy @ W is "matmul a@b" above, d(w) = dctx @ v.T is
        // "bmm q@k.T" and dq = ds @ k is "bmm w@v"
        {"bw dW=dy.T@x", "(1024,768).T @ (1024,768)", MATMUL_AT, 1, 768, 1024, 768, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bw dv=w.T@dctx", "12 x (1024,1024).T @ (1024,64)", BMM_AT, 12, 1024, 1024, 64, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bw softmax", "(12,1024,1024)", SOFTMAX_BW, 12, 1024, 0, 1024, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        // ... and as attend_fast_backward runs them: one (T, T) matrix at a
        // time, which the matrix before it left in the caches
        {"bw dw=dctx@v.T", "(1024,64) @ (64,1024)", BMM_WT, 1, 1024, 64, 1024, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bw dv=w.T@dctx", "(1024,1024).T @ (1024,64)", BMM_AT, 1, 1024, 1024, 64, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
        {"bw dq=ds@k", "(1024,1024) @ (1024,64)", BMM, 1, 1024, 1024, 64, NULL, NULL, NULL, NULL, {{0}, 0, 0, 0, 0.0}},
    };
    double fig[FAST_PATHS][2], mm[FAST_PATHS][2] = {{0}}, products[sizeof jobs / sizeof jobs[0]] = {0};
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        bench_row(&jobs[i], fig);
        if (i == 1) memcpy(mm, fig, sizeof mm);  // a @ b at GPT-2 size
        products[i] = fig[chosen][0];             // the path chosen at start, one thread
    }
    const double ghz_after = measure_ghz();
    printf("\nclock measured again after the table: %.2f GHz", ghz_after);
    if (ghz_after > ghz) ghz = ghz_after;
    printf("; the peak below assumes the higher, %.2f GHz (on a shared or virtual host the clock moves with the host's load)\n", ghz);
    printf("matmul (1024,768) @ (768,768), 1 thread, against the peak at %.2f GHz:", ghz);
    if (mm[1][0] > 0) printf(" avx2 %.0f GFLOP/s = %.0f%% of %.0f;", mm[1][0], 100 * mm[1][0] / (32 * ghz), 32 * ghz);
    if (mm[2][0] > 0) printf(" avx512 %.0f GFLOP/s = %.0f%% of %.0f", mm[2][0], 100 * mm[2][0] / (64 * ghz), 64 * ghz);
    printf("\n");
    // the backward's products against the measured mul + add peak of the
    // path chosen at start (zmm for AVX-512, ymm for AVX2; both printed: on a
    // core that splits 512-bit instructions in two they are the same)
    const double peak_ymm = harness_mul_add_peak(0), peak_zmm = best == FAST_PATH_AVX512 ? harness_mul_add_peak(1) : 0;
    const double peak = chosen == FAST_PATH_AVX512 ? peak_zmm : peak_ymm;
    if (peak_ymm > 0) printf("\nmul + add peak measured (independent vmulps + vaddps chains): ymm %.0f GFLOP/s", peak_ymm);
    else printf("\nmul + add peak not measured on this architecture (an x86-64 loop of vmulps + vaddps)");
    if (peak_zmm > 0) printf(", zmm %.0f GFLOP/s", peak_zmm);
    printf("\nbackward products at Exercise 3.3's size, on the path chosen at start (%s), 1 thread,\n"
           "against the %s peak; the attention's products one (T, T) matrix at a time, as the backward runs them:\n",
           fast_path_name_of(chosen), chosen == FAST_PATH_AVX512 ? "zmm" : "ymm");
    static const struct {
        int job;
        const char *what;
    } backward[] = {{1, "dx = dy @ W         (1024,768) @ (768,768)"},
                    {15, "dW = dy.T @ x       (768,1024) @ (1024,768)"},
                    {18, "dw = dctx @ v.T     (1024,64) @ (64,1024), per head"},
                    {19, "dv = w.T @ dctx     (1024,1024).T @ (1024,64), per head"},
                    {20, "dq = ds @ k         (1024,1024) @ (1024,64), per head"},
                    {19, "dk = ds.T @ q       (1024,1024).T @ (1024,64), per head"}};
    for (size_t i = 0; peak > 0 && i < sizeof backward / sizeof backward[0]; i++)
        printf("  %-58s %7.1f GFLOP/s  %5.1f%% of the peak\n", backward[i].what, products[backward[i].job],
               100 * products[backward[i].job] / peak);
    printf("  (the softmax's backward, dx = y * (dy - sum(dy * y)), is no product: 3 flops per element read from\n"
           "   two (T, T) tensors, bound by memory; its time per element is the table's \"bw softmax\" row)\n");
}

// ---------------------------------------------------------------------------
// 3. Exercise 3.3: MultiHeadAttention(768, 768, 1024, 0.0, 12), forward
// ---------------------------------------------------------------------------
typedef struct {
    int d_in, d_out, heads;
    const float *w_query, *w_key, *w_value;  // (d_out, d_in) each, nn.Linear layout, no bias
    const float *w_out, *b_out;              // (d_out, d_out) and (d_out): out_proj
} Mha;

typedef struct {
    float *queries, *keys, *values;  // (T, d_out)
    float *q, *k, *v;                // (heads, T, head_dim)
    float *scores, *weights;         // (heads, T, T)
    float *context_h;                // (heads, T, head_dim)
    float *context;                  // (T, d_out)
} MhaScratch;

// out (T, d_out) = the book's MultiHeadAttention.forward(x (1, T, d_in)) with
// dropout 0 (in training mode p = 0 returns its input: no draws), written on
// the fast kernels. Each line is the torch statement it stands for; the
// module library will replace this function.
static void mha_forward_ex33(float *out, const Mha *m, MhaScratch *s, const float *x, int T) {
    const int H = m->heads, hd = m->d_out / m->heads;
    // keys = self.W_key(x) etc.: F.linear without bias, one sgemm over the T rows
    gemm_fast_matmul_wt_bias(s->keys, x, m->w_key, NULL, T, m->d_in, m->d_out);
    gemm_fast_matmul_wt_bias(s->queries, x, m->w_query, NULL, T, m->d_in, m->d_out);
    gemm_fast_matmul_wt_bias(s->values, x, m->w_value, NULL, T, m->d_in, m->d_out);
    // .view(b, T, H, hd).transpose(1, 2): the heads split (matmul copies it contiguous)
    layout_fast_split_heads(s->k, s->keys, 1, T, H, hd);
    layout_fast_split_heads(s->q, s->queries, 1, T, H, hd);
    layout_fast_split_heads(s->v, s->values, 1, T, H, hd);
    // attn_scores = queries @ keys.transpose(2, 3): per head (T, hd) @ (hd, T)
    gemm_fast_bmm_wt(s->scores, s->q, s->k, H, T, hd, T);
    // masked_fill_(triu(ones, 1).bool(), -inf), then / keys.shape[-1]**0.5,
    // a float division by (float)8.0 for every element (-inf / 8 = -inf)
    const float scale = (float)pow((double)hd, 0.5);
    for (long r = 0; r < (long)H * T; r++) {
        float *row = s->scores + r * T;
        const int i = (int)(r % T);
        for (int j = i + 1; j < T; j++) row[j] = -INFINITY;
        for (int j = 0; j < T; j++) row[j] = row[j] / scale;
    }
    // torch.softmax(..., dim=-1); self.dropout(p = 0) is the identity
    rows_fast_softmax_rows(s->weights, s->scores, (long)H * T, T);
    // context_vec = attn_weights @ values: per head (T, T) @ (T, hd)
    gemm_fast_bmm(s->context_h, s->weights, s->v, H, T, T, hd);
    // .transpose(1, 2).contiguous().view(b, T, d_out): the heads merged
    layout_fast_merge_heads(s->context, s->context_h, 1, H, T, hd);
    // self.out_proj(context_vec): F.linear with bias, the bias added last
    gemm_fast_matmul_wt_bias(out, s->context, m->w_out, m->b_out, T, m->d_out, m->d_out);
}

typedef struct {
    const Mha *m;
    MhaScratch *s;
    const float *x;
    float *out;
    int T;
} ForwardJob;

static void run_forward(void *p) {
    ForwardJob *f = p;
    mha_forward_ex33(f->out, f->m, f->s, f->x, f->T);
}

// Reads n float32 from dir/name.f32; 0 if it is not there or is short.
static int read_f32(const char *dir, const char *name, float *x, long n) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.f32", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    const size_t got = fread(x, sizeof(float), (size_t)n, f);
    fclose(f);
    return got == (size_t)n;
}

// Runs bench_torch.py once, passing its lines through; returns the median
// seconds of its RESULT line, or -1 (torch not importable, or no result).
static double run_torch(const char *script, const char *env, const char *dump_dir, const char *label) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s /usr/bin/python3 '%s' --runs %d %s%s%s 2>&1", env, script, dump_dir ? 3 : 5,
             dump_dir ? "--dump '" : "", dump_dir ? dump_dir : "", dump_dir ? "'" : "");
    printf("[%s] %s\n", label, cmd);
    fflush(stdout);
    FILE *p = popen(cmd, "r");
    if (!p) {
        printf("[%s] could not run python3\n", label);
        return -1;
    }
    char line[1024];
    double seconds = -1;
    while (fgets(line, sizeof line, p)) {
        double s;
        if (sscanf(line, "RESULT %lf", &s) == 1) seconds = s;
        else if (strncmp(line, "RESULT", 6) != 0) printf("[%s] %s", label, line);
    }
    if (pclose(p) != 0 && seconds < 0) printf("[%s] python3 failed\n", label);
    return seconds;
}

static void bench_forward(const char *script, int chosen) {
    enum { T = 1024, D = 768, H = 12 };
    printf("\nExercise 3.3 forward: MultiHeadAttention(768, 768, 1024, 0.0, 12) on (1, 1024, 768)\n");
    float *x = new_floats((long)T * D), *w[5], *b_out = new_floats(D), *out = new_floats((long)T * D),
          *want = new_floats((long)T * D);
    for (int i = 0; i < 4; i++) w[i] = new_floats((long)D * D);
    MhaScratch s;
    float **bufs[] = {&s.queries, &s.keys, &s.values, &s.q, &s.k, &s.v, &s.context_h, &s.context};
    for (int i = 0; i < 8; i++) *bufs[i] = new_floats((long)T * D);
    s.scores = new_floats((long)H * T * T);
    s.weights = new_floats((long)H * T * T);

    // torch first, with the reference BLAS: it dumps its weights, input and output
    char dir[] = "/tmp/litattn_bench_XXXXXX";
    const int have_dir = mkdtemp(dir) != NULL;
    double t_ref = -1, t_open = -1;
    if (script) {
        // the reference BLAS by its directory: Debian's alternatives make
        // OpenBLAS the default libblas.so.3 once it is installed
        t_ref = run_torch(script, "LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack",
                          have_dir ? dir : NULL, "torch reference BLAS");
        if (access("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", R_OK) == 0)
            t_open = run_torch(script,
                               "OPENBLAS_NUM_THREADS=1 LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread",
                               NULL, "torch OpenBLAS");
        else
            printf("[torch OpenBLAS] /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 is missing "
                   "(apt-get install libopenblas0-pthread)\n");
    } else {
        printf("torch: no bench_torch.py given, torch not run\n");
    }
    static const char *const names[] = {"W_query", "W_key", "W_value", "out_proj_weight"};
    int from_torch = have_dir && read_f32(dir, "x", x, (long)T * D) && read_f32(dir, "out_proj_bias", b_out, D) &&
                     read_f32(dir, "out", want, (long)T * D);
    for (int i = 0; i < 4; i++) from_torch = from_torch && read_f32(dir, names[i], w[i], (long)D * D);
    if (!from_torch) {  // no torch: nn.Linear-like weights drawn here
        fill_uniform(x, (long)T * D, 0.0f, 1.0f);
        for (int i = 0; i < 4; i++) fill_uniform(w[i], (long)D * D, -0.036f, 0.036f);
        fill_uniform(b_out, D, -0.036f, 0.036f);
    }
    if (have_dir) {
        static const char *const all[] = {"x", "W_query", "W_key", "W_value", "out_proj_weight", "out_proj_bias", "out"};
        for (int i = 0; i < 7; i++) {
            char path[1100];
            snprintf(path, sizeof path, "%s/%s.f32", dir, all[i]);
            remove(path);
        }
        rmdir(dir);
    }

    const Mha m = {D, D, H, w[0], w[1], w[2], w[3], b_out};
    ForwardJob job = {&m, &s, x, out, T};
    double t_c[FAST_PATHS][3];
    for (int p = FAST_PATH_SCALAR; p < FAST_PATHS; p++) {
        t_c[p][0] = t_c[p][1] = t_c[p][2] = -1;
        for (int t = 1; t <= 2 && fast_path_runs(p); t++) {
            if (p == FAST_PATH_SCALAR && t == 2) continue;
            fast_path_force(p);
            fast_threads_set(t);
            double best_run;
            t_c[p][t] = time_median(run_forward, &job, p == FAST_PATH_SCALAR ? 0.0 : 1.5, &best_run);
            printf("C forward, %-10s %d thread%s: median %7.1f ms, best %7.1f ms", fast_path_name(), t,
                   t > 1 ? "s" : " ", t_c[p][t] * 1e3, best_run * 1e3);
            if (from_torch) {
                long diff = 0, first = -1;
                for (long i = 0; i < (long)T * D; i++) {
                    uint32_t g, e;
                    memcpy(&g, &out[i], sizeof g);
                    memcpy(&e, &want[i], sizeof e);
                    if (g != e && !(isnan(out[i]) && isnan(want[i]))) diff++, first = first < 0 ? i : first;
                }
                if (diff == 0) printf("   output bit-identical to torch's reference forward (%d values)", T * D);
                else printf("   output DIFFERS from torch's in %ld of %d values (first at %ld)", diff, T * D, first);
            }
            printf("\n");
            fflush(stdout);
        }
    }
    fast_path_force(chosen);  // the summary: the path a chapter takes here
    fast_threads_set(1);
    const double c1 = t_c[chosen][1], c2 = t_c[chosen][2];
    char fast1[64], fast2[64];
    snprintf(fast1, sizeof fast1, "C, fast kernels (%s), 1 thread", fast_path_name());
    snprintf(fast2, sizeof fast2, "C, fast kernels (%s), 2 threads", fast_path_name());
    printf("\n%-44s %10s   %-26s\n", "Exercise 3.3 forward, median time", "ms", "torch time / C time");
    printf("%-44s %10s   %12s %12s\n", "", "", "C 1 thread", "C 2 threads");
    printf("%-44s %10.1f\n", "C, scalar kernels, 1 thread", t_c[0][1] * 1e3);
    printf("%-44s %10.1f\n", fast1, c1 * 1e3);
    printf("%-44s %10.1f\n", fast2, c2 * 1e3);
    const char *torch_rows[] = {"torch 1.13 + reference BLAS, 1 thread", "torch 1.13 + OpenBLAS, 1 thread"};
    const double torch_t[] = {t_ref, t_open};
    for (int i = 0; i < 2; i++) {
        if (torch_t[i] > 0)
            printf("%-44s %10.1f   %11.2fx %11.2fx\n", torch_rows[i], torch_t[i] * 1e3, torch_t[i] / c1, torch_t[i] / c2);
        else printf("%-44s %10s\n", torch_rows[i], "n/a");
    }
    if (!from_torch) printf("(torch's weights not available: the C forward ran on weights drawn in C, not compared)\n");

    free(x), free(b_out), free(out), free(want), free(s.scores), free(s.weights);
    for (int i = 0; i < 4; i++) free(w[i]);
    for (int i = 0; i < 8; i++) free(*bufs[i]);
}

int main(int argc, char **argv) {
    pcg32_srandom_r(&rng, 42u, 54u);
    const char *chosen = fast_path_name();  // by the CPU and LITATTN_KERNELS
    const int chosen_path = fast_path_get();
    fast_path_force(FAST_PATH_AVX512);      // clamps to the best the CPU has
    const int best = fast_path_get();
    const double ghz = measure_ghz(), mhz = cpuinfo_mhz();
    printf("fast kernels: this CPU's best path %s; chosen at start: %s (the table runs every path)\n",
           fast_path_name(), chosen);
    printf("clock: %.2f GHz measured (dependent integer adds), /proc/cpuinfo says %.0f MHz\n", ghz, mhz);
    printf("peak per core at %.2f GHz: AVX2 %.0f GFLOP/s (2 FMA pipes x 8 lanes x 2 flops), "
           "AVX-512 %.0f GFLOP/s (x 16 lanes)\n", ghz, 2 * 8 * 2 * ghz, 2 * 16 * 2 * ghz);
    bench_kernels(best, chosen_path, ghz);
    bench_forward(argc > 1 ? argv[1] : NULL, chosen_path);
    return 0;
}
