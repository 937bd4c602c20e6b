// bench_bonus: the C side of the bonus notebook's timing sections
// (mha-implementations.ipynb, sections 10 and 11), for tools/bench/bench_bonus.py,
// which runs it, times torch beside it and prints the tables
// (meson test -C build --benchmark bonus). Figures only: it never fails on speed.
//
//   bench_bonus times [B T]        each implementation's forward at (B, T, 768), one thread
//                                  (default: the notebook's (8, 1024, 768)), and the forward +
//                                  backward (x.requires_grad_(); m(x).sum().backward()) of 1, 3,
//                                  4, 7, 8 and chapter 3's MultiHeadAttention with its forward fused
//   bench_bonus machine            the mul + add peak (independent vmulps + vaddps chains on the
//                                  path the kernels chose), and the fused forward's GFLOP/s at
//                                  (8, 1024, 768) and (1, 16384, 768), after a warm-up (the
//                                  first run, on fresh pages, printed apart)
//   bench_bonus memory MODE T      one forward of chapter 3's MultiHeadAttention(768, 768, T, 0.0, 12)
//                                  on (1, T, 768) in this process, MODE fused (ops_fused_attention:
//                                  no (T, T) tensor) or materialised (the (1, 12, T, T) tensors made,
//                                  as torch does; the library refuses them past 2^26 elements, at
//                                  T > 2048) or materialised-raw (the same steps on the fast kernels
//                                  with malloc'd buffers, at any T), then its own peak RSS
//                                  (getrusage(RUSAGE_SELF))
//
// Every figure is also a line "RESULT <key> <value>" for the driver; each
// time is wall time, with the process's CPU time (getrusage) beside it.
//
// The modules are the chapter's (lib/nn/: causal_heads, mha_combined_qkv,
// mha_einsum, torch_multihead_attention, multihead_attention), made as
// chapters/ch03_bonus_mha_implementations.c makes them, from torch's
// generator seeded with 123 (the draws' values do not change the time), and
// set to materialise their (T, T) tensors as torch does, one batch item at a
// time, as the chapter's Ch03_MHA(...) and friends do (runtime/materialise.h).
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include "fast_path.h"
#include "fast_threads.h"
#include "gemm.h"
#include "harness.h"
#include "init.h"
#include "layout.h"
#include "mha_combined_qkv.h"
#include "mha_einsum.h"
#include "multihead_attention.h"
#include "normal.h"
#include "param_source.h"
#include "rows.h"
#include "torch_generator.h"
#include "torch_multihead_attention.h"

enum { EMBED = 768, HEADS = 12 };

// ---------------------------------------------------------------------------
// parameters: torch's generator, with normal_ (MHAEinsum draws torch.randn)
// ---------------------------------------------------------------------------
typedef struct {
    TorchGenerator g;
    RandomSource rs;
    ParamSource inner;  // param_source_random(&rs): uniform_, rand, dropout noise
} Draws;

static void d_uniform_(void *ctx, const char *name, Tensor t, double from, double to) {
    Draws *d = ctx;
    d->inner.uniform_(d->inner.ctx, name, t, from, to);
}
static void d_rand(void *ctx, const char *name, Tensor t) {
    Draws *d = ctx;
    d->inner.rand(d->inner.ctx, name, t);
}
static void d_dropout_noise(void *ctx, const char *name, Tensor noise, double p) {
    Draws *d = ctx;
    d->inner.dropout_noise(d->inner.ctx, name, noise, p);
}
static void d_normal_(void *ctx, const char *name, Tensor t, double mean, double std) {
    (void)name;
    Draws *d = ctx;
    normal_fill(t.data, numel(t), mean, std, &d->g);
}

// d must stay where it is while the source is used
static ParamSource draws_init(Draws *d, uint64_t seed) {
    torch_manual_seed(&d->g, seed);
    d->rs = torch_generator_source(&d->g);
    d->inner = param_source_random(&d->rs);
    return (ParamSource){d_uniform_, d_rand, d_dropout_noise, d_normal_, d};
}

// ---------------------------------------------------------------------------
// the implementations, as the chapter makes them
// ---------------------------------------------------------------------------
typedef struct {
    MultiHeadAttentionWrapper wrapper;          // 1. Ch03_MHA_Wrapper
    MultiHeadAttention ch03;                    // 2. Ch03_MHA, materialised
    MultiHeadAttentionCombinedQKV combined;     // 3. MultiHeadAttentionCombinedQKV, materialised
    MHAEinsum einsum;                           // 4. MHAEinsum, materialised
    MultiHeadAttentionCombinedQKV sdpa;         // 5/6/9: MHAPyTorchScaledDotProduct, the exact fused attention
    MHAPyTorchClass pytorch_default;            // 7. MHAPyTorchClass(need_weights=True)
    MHAPyTorchClass pytorch_noweights;          // 8. MHAPyTorchClass(need_weights=False)
    MultiHeadAttention ch03_fused;              // chapter 3's class with its attention fused
    Tensor x;                                   // embeddings (B, T, 768)
} Impls;

static void impls_new(Impls *m, Draws *d, int B, int T) {
    const ParamSource ps = draws_init(d, 123);
    const Recorder none = {0};
    // embeddings = torch.randn(batch_size, context_len, embed_dim), then the
    // classes in the notebook's order
    m->x = tensor_empty(SIZE(B, T, EMBED));
    randn_fill(m->x.data, numel(m->x), &d->g);
    const ComputeMode as_torch = {.attention = ATTENTION_MATERIALISED}, fused = {.attention = ATTENTION_FUSED};
    m->wrapper = multihead_attention_wrapper_out_proj_new(&ps, &none, as_torch, "mha_ch03_wrapper", EMBED,
                                                          EMBED / HEADS, T, 0.0, HEADS, false);
    m->ch03 = multihead_attention_new(&ps, &none, as_torch, "mha_ch03", EMBED, EMBED, T, 0.0, HEADS, false);
    m->combined = mha_combined_qkv_new(&ps, &none, as_torch, "mha_combined_qkv", EMBED, EMBED, HEADS, T, 0.0, false);
    m->einsum = mha_einsum_new(&ps, &none, as_torch, "mha_einsum", EMBED, EMBED, T, 0.0, HEADS, false);
    m->sdpa = mha_sdpa_new(&ps, &none, fused, "mha_pytorch_scaled", EMBED, EMBED, HEADS, T, 0.0, false);
    m->pytorch_default = mha_pytorch_class_new(&ps, &none, as_torch, "mha_pytorch_class_default", EMBED, EMBED, HEADS,
                                               T, 0.0, false, true);
    m->pytorch_noweights = mha_pytorch_class_new(&ps, &none, as_torch, "mha_pytorch_class_noweights", EMBED, EMBED,
                                                 HEADS, T, 0.0, false, false);
    m->ch03_fused = m->ch03;
    m->ch03_fused.mode = fused;
}

enum { I_WRAPPER, I_CH03, I_COMBINED, I_EINSUM, I_FUSED, I_PYTORCH_DEFAULT, I_PYTORCH_NOWEIGHTS, I_CH03_FUSED,
       I_CH03_FUSED_BACKWARD, I_WRAPPER_BACKWARD, I_COMBINED_BACKWARD, I_EINSUM_BACKWARD,
       I_PYTORCH_DEFAULT_BACKWARD, I_PYTORCH_NOWEIGHTS_BACKWARD, N_JOBS };
static const char *const job_key[N_JOBS] = {"1", "2", "3", "4", "fused", "7", "8", "2f", "2f_backward",
                                            "1_backward", "3_backward", "4_backward", "7_backward", "8_backward"};
static const char *const job_name[N_JOBS] = {
    "1 Ch03_MHA_Wrapper", "2 Ch03_MHA", "3 MultiHeadAttentionCombinedQKV", "4 MHAEinsum",
    "5/6/9 exact fused (MHAPyTorchScaledDotProduct's stand-in)", "7 MHAPyTorchClass", "8 MHAPyTorchClass, no weights",
    "2 Ch03_MHA, attention fused", "2 Ch03_MHA fused: forward + backward", "1 Ch03_MHA_Wrapper: forward + backward",
    "3 MultiHeadAttentionCombinedQKV: forward + backward", "4 MHAEinsum: forward + backward",
    "7 MHAPyTorchClass: forward + backward", "8 MHAPyTorchClass, no weights: forward + backward"};

typedef struct {
    Impls *m;
    int which;
} Job;

static void free_grads(Gradients *g) {
    for (int i = 0; i < g->n; i++) tensor_free(g->param[i].grad);
    tensor_free(g->x);
}

static void run_job(Job *j) {
    Impls *m = j->m;
    Tensor out = {0};
    switch (j->which) {
    case I_WRAPPER: out = multihead_attention_wrapper_forward(&m->wrapper, m->x); break;
    case I_CH03: out = multihead_attention_forward(&m->ch03, m->x); break;
    case I_COMBINED: out = mha_combined_qkv_forward(&m->combined, m->x); break;
    case I_EINSUM: out = mha_einsum_forward(&m->einsum, m->x); break;
    case I_FUSED: out = mha_combined_qkv_forward(&m->sdpa, m->x); break;
    case I_PYTORCH_DEFAULT: out = mha_pytorch_class_forward(&m->pytorch_default, m->x); break;
    case I_PYTORCH_NOWEIGHTS: out = mha_pytorch_class_forward(&m->pytorch_noweights, m->x); break;
    case I_CH03_FUSED: out = multihead_attention_forward(&m->ch03_fused, m->x); break;
    case I_CH03_FUSED_BACKWARD: {
        // x.requires_grad_(); mha_ch03(x).sum().backward(): the forward (fused,
        // keeping q, k, v and the dropout factor) and the backward
        static Gradients g;
        g = multihead_attention_sum_backward(&m->ch03_fused, m->x);
        free_grads(&g);
        return;
    }
    case I_WRAPPER_BACKWARD:
    case I_COMBINED_BACKWARD:
    case I_EINSUM_BACKWARD:
    case I_PYTORCH_DEFAULT_BACKWARD:
    case I_PYTORCH_NOWEIGHTS_BACKWARD: {
        // x.requires_grad_(); m(x).sum().backward(), as the chapter's cells run it
        Gradients g = j->which == I_WRAPPER_BACKWARD    ? multihead_attention_wrapper_sum_backward(&m->wrapper, m->x)
                      : j->which == I_COMBINED_BACKWARD ? mha_combined_qkv_sum_backward(&m->combined, m->x)
                      : j->which == I_EINSUM_BACKWARD   ? mha_einsum_sum_backward(&m->einsum, m->x)
                      : j->which == I_PYTORCH_DEFAULT_BACKWARD
                          ? mha_pytorch_class_sum_backward(&m->pytorch_default, m->x)
                          : mha_pytorch_class_sum_backward(&m->pytorch_noweights, m->x);
        free_grads(&g);
        return;
    }
    }
    tensor_free(out);
}

// Seconds per run: a warm-up run (the tensors' pages), then the median of
// at least `runs`, more while under `budget` seconds, at most 9; all kept in
// t[], and each run's CPU time in c[] (*cpu: their median).
static double time_job(Job *j, int runs, double budget, double *t, double *c, int *n, double *cpu) {
    run_job(j);
    *n = 0;
    const double start = harness_seconds();
    do {
        const double t0 = harness_seconds(), c0 = harness_cpu_seconds();
        run_job(j);
        c[*n] = harness_cpu_seconds() - c0;
        t[(*n)++] = harness_seconds() - t0;
    } while (*n < 9 && (*n < runs || harness_seconds() - start < budget));
    double sorted[9];
    memcpy(sorted, c, (size_t)*n * sizeof c[0]);
    *cpu = harness_median(sorted, *n);
    memcpy(sorted, t, (size_t)*n * sizeof t[0]);
    return harness_median(sorted, *n);
}

static int times(int B, int T) {
    fast_threads_set(1);
    printf("C: the fast kernels' path chosen at start: %s; 1 thread; (%d, %d, %d); a warm-up run, then the median "
           "of at least 3 runs\n", fast_path_name(), B, T, EMBED);
    printf("RESULT path %s\n", fast_path_name());
    static Draws d;
    static Impls m;
    impls_new(&m, &d, B, T);
    for (int i = 0; i < N_JOBS; i++) {
        Job j = {&m, i};
        double t[9], c[9], cpu;
        int n;
        const double med = time_job(&j, 3, 2.0, t, c, &n, &cpu);
        printf("  %-58s median %8.1f ms  (", job_name[i], med * 1e3);
        for (int k = 0; k < n; k++) printf("%s%.0f", k ? ", " : "", t[k] * 1e3);
        printf(" ms), CPU median %8.1f ms\n", cpu * 1e3);
        printf("RESULT time.%s %.6f\n", job_key[i], med);
        printf("RESULT cpu.%s %.6f\n", job_key[i], cpu);
        fflush(stdout);
    }
    return 0;
}


// The flops the causal result needs, counting a multiply-add as 2: the four
// projections (queries, keys, values, out_proj), 2 * B * T * d * d each, and
// per head the products q . k and w . v over the causal triangle only,
// 2 * B * h * hd * T (T + 1) / 2 each (the mask's -inf and the softmax's
// exp, sum and scale not counted).
static double causal_flops(int B, int T) {
    const double d = EMBED, hd = EMBED / HEADS, tri = (double)T * (T + 1) / 2;
    return 4 * 2.0 * B * T * d * d + 2 * 2.0 * B * HEADS * hd * tri;
}

static int machine(void) {
    fast_threads_set(1);
    const int path = fast_path_get();
    const double peak = path == FAST_PATH_SCALAR ? 0 : harness_mul_add_peak(path == FAST_PATH_AVX512);
    printf("mul + add peak measured on the chosen path (%s: independent vmulps + vaddps chains, %s): %.1f GFLOP/s\n",
           fast_path_name(), path == FAST_PATH_AVX512 ? "zmm" : "ymm", peak);
    printf("RESULT path %s\nRESULT peak %.3f\n", fast_path_name(), peak);
    static const int sizes[2][2] = {{8, 1024}, {1, 16384}};
    for (int s = 0; s < 2; s++) {
        const int B = sizes[s][0], T = sizes[s][1];
        Draws d;
        const ParamSource ps = draws_init(&d, 123);
        const Recorder none = {0};
        Tensor x = tensor_empty(SIZE(B, T, EMBED));
        randn_fill(x.data, numel(x), &d.g);
        MultiHeadAttention m = multihead_attention_new(&ps, &none, (ComputeMode){.attention = ATTENTION_FUSED},
                                                       "mha_ch03", EMBED, EMBED, T, 0.0, HEADS, false);
        // a warm-up first (its fresh pages cost the kernel's zeroing, not
        // arithmetic: printed apart), then 5 runs: their median, and the
        // fastest, the run least disturbed by the rest of the machine (as
        // the peak is the fastest of its windows; on a shared or virtual
        // host one run at 16384 tokens moves by several per cent from one
        // call to the next)
        enum { RUNS = 5 };
        double t[RUNS], c[RUNS];
        const double t_first = harness_seconds();
        tensor_free(multihead_attention_forward(&m, x));
        const double first = harness_seconds() - t_first;
        for (int r = 0; r < RUNS; r++) {
            const double t0 = harness_seconds(), c0 = harness_cpu_seconds();
            Tensor out = multihead_attention_forward(&m, x);
            c[r] = harness_cpu_seconds() - c0;
            t[r] = harness_seconds() - t0;
            tensor_free(out);
        }
        const double flop = causal_flops(B, T), sec = harness_median(t, RUNS), gf = flop / sec * 1e-9;
        const double fastest = t[0];  // (harness_median sorted t)
        const double cpu = harness_median(c, RUNS), cpu_fastest = c[0];
#define OF_PEAK(seconds) (peak > 0 ? 100 * flop / (seconds) * 1e-9 / peak : 0.0)
        printf("fused forward (%d, %d, %d): %.1f GFLOP counted; %d runs after a warm-up: median %.3f s, %.1f GFLOP/s = "
               "%.1f%% of the peak; fastest %.3f s = %.1f%% (the first run, on fresh pages: %.3f s, %.1f%%)\n",
               B, T, EMBED, flop * 1e-9, RUNS, sec, gf, OF_PEAK(sec), fastest, OF_PEAK(fastest), first,
               OF_PEAK(first));
#undef OF_PEAK
        printf("  in CPU time (getrusage): median %.3f s = %.1f%% of the peak, fastest %.3f s = %.1f%%\n", cpu,
               peak > 0 ? 100 * flop / cpu * 1e-9 / peak : 0.0, cpu_fastest,
               peak > 0 ? 100 * flop / cpu_fastest * 1e-9 / peak : 0.0);
        printf("RESULT fused.%d.%d %.6f %.3f %.3f %.6f %.6f\n", B, T, sec, flop * 1e-9, gf, first, fastest);
        printf("RESULT fusedcpu.%d.%d %.6f %.6f\n", B, T, cpu, cpu_fastest);
        fflush(stdout);
        tensor_free(x);
    }
    return 0;
}

// ---------------------------------------------------------------------------
// memory: one forward at (1, T, 768), then this process's peak RSS
// ---------------------------------------------------------------------------

static float *floats(long n) {
    float *p = malloc((size_t)n * sizeof(float));
    if (!p) {
        fprintf(stderr, "bench_bonus: out of memory (%ld floats)\n", n);
        exit(1);
    }
    return p;
}

// Chapter 3's forward with every (1, 12, T, T) tensor torch holds at once
// (attn_scores, attn_scores / sqrt(hd), attn_weights), written on
// the fast kernels with malloc'd buffers, past the library's 2^26-element
// limit: the module's materialised path (attention_heads in
// multihead_attention.c), step for step, at any T memory allows.
// out (T, d), x (T, d), w_q, w_k, w_v, w_o (d, d) nn.Linear layout, b_o (d)
static void materialised_raw(float *out, const float *x, const float *w_q, const float *w_k, const float *w_v,
                             const float *w_o, const float *b_o, int T) {
    const int d = EMBED, H = HEADS, hd = EMBED / HEADS;
    const long td = (long)T * d, htt = (long)H * T * T;
    float *keys = floats(td), *queries = floats(td), *values = floats(td);  // (T, d)
    float *k = floats(td), *q = floats(td), *v = floats(td), *ctx_h = floats(td), *ctx = floats(td);  // (H, T, hd)
    float *scores = floats(htt), *scaled = floats(htt), *weights = floats(htt);  // (H, T, T)
    gemm_fast_matmul_wt_bias(keys, x, w_k, NULL, T, d, d);
    gemm_fast_matmul_wt_bias(queries, x, w_q, NULL, T, d, d);
    gemm_fast_matmul_wt_bias(values, x, w_v, NULL, T, d, d);
    layout_fast_split_heads(k, keys, 1, T, H, hd);
    layout_fast_split_heads(q, queries, 1, T, H, hd);
    layout_fast_split_heads(v, values, 1, T, H, hd);
    gemm_fast_bmm_wt(scores, q, k, H, T, hd, T);  // queries @ keys.transpose(2, 3)
    const float scale = (float)pow((double)hd, 0.5);
    for (long r = 0; r < (long)H * T; r++) {  // masked_fill_(mask_bool, -inf), then / sqrt(hd)
        float *row = scores + r * T, *srow = scaled + r * T;
        const long i = r % T;
        for (long j = i + 1; j < T; j++) row[j] = -INFINITY;
        for (long j = 0; j < T; j++) srow[j] = row[j] / scale;
    }
    rows_fast_softmax_rows(weights, scaled, (long)H * T, T);
    gemm_fast_bmm(ctx_h, weights, v, H, T, T, hd);  // attn_weights @ values
    layout_fast_merge_heads(ctx, ctx_h, 1, H, T, hd);
    gemm_fast_matmul_wt_bias(out, ctx, w_o, b_o, T, d, d);
    float *all[] = {keys, queries, values, k, q, v, ctx_h, ctx, scores, scaled, weights};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

static int memory(const char *mode, int T) {
    const bool materialise = strcmp(mode, "materialised") == 0, raw = strcmp(mode, "materialised-raw") == 0;
    if (!materialise && !raw && strcmp(mode, "fused") != 0) {
        fprintf(stderr, "bench_bonus memory: expected fused, materialised or materialised-raw, found %s\n", mode);
        return 2;
    }
    fast_threads_set(1);
    Draws d;
    const ParamSource ps = draws_init(&d, 123);
    const Recorder none = {0};
    Tensor x = tensor_empty(SIZE(1, T, EMBED));
    randn_fill(x.data, numel(x), &d.g);
    const ComputeMode as = {.attention = materialise ? ATTENTION_MATERIALISED : ATTENTION_FUSED};
    MultiHeadAttention m = multihead_attention_new(&ps, &none, as, "mha_ch03", EMBED, EMBED, T, 0.0, HEADS, false);
    struct rusage ru;
    if (raw) {
        float *out = floats((long)T * EMBED);
        const double t0 = harness_seconds();
        materialised_raw(out, x.data, m.W_query.weight.data, m.W_key.weight.data, m.W_value.weight.data,
                         m.out_proj.weight.data, m.out_proj.bias.data, T);
        const double sec = harness_seconds() - t0;
        // the same bits as the module's fused forward (a check that this is chapter 3's forward)
        Tensor want = multihead_attention_forward(&m, x);
        const bool same = memcmp(want.data, out, (size_t)T * EMBED * sizeof(float)) == 0;
        getrusage(RUSAGE_SELF, &ru);
        printf("materialised (raw fast kernels) forward (1, %d, %d): %.3f s, peak RSS %.1f MiB, %s the module's bits\n",
               T, EMBED, sec, (double)ru.ru_maxrss / 1024, same ? "the same as" : "NOT");
        printf("RESULT memory %ld %.6f %s\n", ru.ru_maxrss, sec, same ? "same_bits" : "differs");
        free(out);
        return 0;
    }
    const double t0 = harness_seconds();
    Tensor out = multihead_attention_forward(&m, x);
    const double sec = harness_seconds() - t0;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s forward (1, %d, %d): %.3f s, peak RSS %.1f MiB\n", mode, T, EMBED, sec, (double)ru.ru_maxrss / 1024);
    printf("RESULT memory %ld %.6f\n", ru.ru_maxrss, sec);
    tensor_free(out);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "times") == 0 && (argc == 2 || argc == 4))
        return times(argc == 4 ? atoi(argv[2]) : 8, argc == 4 ? atoi(argv[3]) : 1024);
    if (argc == 2 && strcmp(argv[1], "machine") == 0) return machine();
    if (argc == 4 && strcmp(argv[1], "memory") == 0) return memory(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: bench_bonus times [B T] | machine | memory fused|materialised|materialised-raw T\n");
    return 2;
}
