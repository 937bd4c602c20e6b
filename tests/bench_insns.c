// bench_insns: bench_kernels' products at Exercise 3.3's size, and its
// softmax, exp, row sum, softmax backward and dropout rows, each called once
// on the path chosen at start (LITATTN_KERNELS), 1 thread, between two calls
// of bench_insns_mark. Under qemu-user with the plugin
// tools/build/cross/insn_count.c, each window between two marks is one
// kernel's instruction count: tools/build/cross/count.sh runs it on the
// NEON and the scalar path and prints both. Natively it only runs them.
//
// usage: bench_insns     prints "window W LABEL" for each kernel's window
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fast_path.h"
#include "fast_threads.h"
#include "gemm.h"
#include "harness.h"
#include "noise.h"
#include "pcg32.h"
#include "rows.h"
#include "torch_generator.h"

// The plugin takes the totals each time the block at this function's start
// runs (mark=bench_insns_mark). Never inlined, never merged: one block.
static int marks;
__attribute__((noinline)) static void bench_insns_mark(void) {
    __asm__ volatile("" ::: "memory");
    marks++;
}

static pcg32_random_t rng;

static float *uniform(long n, float lo, float hi) { return harness_uniform_floats(&rng, n, lo, hi, "bench_insns"); }

enum { MATMUL, LINEAR, BMM, BMM_WT, MATMUL_AT, BMM_AT, SOFTMAX, SOFTMAX_BW, SUM, EXP, DROPOUT };

typedef struct {
    const char *label;
    int what;
    long batch;
    int M, K, N;  // the product out (M, N) = (M, K) @ (K, N); the others (batch * M, N)
} Job;

// One kernel between two marks; its window is the second mark's - 1.
static void run(const Job *j) {
    const int is_mm = j->what <= BMM_AT;
    const long n_a = is_mm ? j->batch * j->M * j->K : j->batch * j->M * j->N;
    const long n_b = j->what == BMM || j->what == BMM_WT || j->what == BMM_AT ? j->batch * j->K * j->N
                   : j->what == SOFTMAX_BW                                  ? j->batch * j->M * j->N
                                                                            : (long)j->K * j->N;
    float *a = uniform(n_a, -4.0f, 4.0f), *b = uniform(n_b > 0 ? n_b : 1, 0.0f, 1.0f);
    float *bias = uniform(j->N, -1.0f, 1.0f), *out = calloc((size_t)(j->batch * j->M * j->N), sizeof(float));
    if (!out) {
        fprintf(stderr, "bench_insns: out of memory\n");
        exit(3);
    }
    TorchGenerator g;
    torch_manual_seed(&g, 123);
    bench_insns_mark();
    switch (j->what) {
    case MATMUL: gemm_fast_matmul(out, a, b, j->M, j->K, j->N); break;
    case LINEAR: gemm_fast_matmul_wt_bias(out, a, b, bias, j->M, j->K, j->N); break;
    case BMM: gemm_fast_bmm(out, a, b, j->batch, j->M, j->K, j->N); break;
    case BMM_WT: gemm_fast_bmm_wt(out, a, b, j->batch, j->M, j->K, j->N); break;
    // (M, K, N) of the product out = a^T @ b: a is stored (K, M)
    case MATMUL_AT: gemm_fast_matmul_at(out, a, b, j->K, j->M, j->N); break;
    case BMM_AT: gemm_fast_bmm_at(out, a, b, j->batch, j->K, j->M, j->N); break;
    case SOFTMAX: rows_fast_softmax_rows(out, a, j->batch * j->M, j->N); break;
    case SOFTMAX_BW: rows_fast_softmax_rows_backward(out, a, b, j->batch * j->M, j->N); break;
    case SUM: rows_fast_sum_rows(out, a, j->batch * j->M, j->N); break;
    case EXP: rows_fast_exp(out, a, j->batch * j->M * j->N); break;
    case DROPOUT: noise_fast_dropout(out, j->batch * j->M * j->N, 0.9, &g); break;
    }
    bench_insns_mark();
    printf("window %d %s %s %ld x (%d, %d, %d)\n", marks - 2, fast_path_name(), j->label, j->batch, j->M, j->K,
           j->N);
    fflush(stdout);
    free(a), free(b), free(bias), free(out);
}

int main(void) {
    pcg32_srandom_r(&rng, 42u, 54u);
    fast_threads_set(1);
    // bench_kernels' rows at Exercise 3.3's size (GPT-2's: T 1024, d 768, 12 heads of 64)
    static const Job jobs[] = {
        {"matmul a@b", MATMUL, 1, 1024, 768, 768},
        {"linear x@W.T+b", LINEAR, 1, 1024, 768, 768},
        {"bmm q@k.T", BMM_WT, 12, 1024, 64, 1024},
        {"bmm w@v", BMM, 12, 1024, 1024, 64},
        {"bw dW=dy.T@x", MATMUL_AT, 1, 768, 1024, 768},
        {"bw dv=w.T@dctx", BMM_AT, 12, 1024, 1024, 64},
        {"softmax rows", SOFTMAX, 12, 1024, 0, 1024},
        {"bw softmax", SOFTMAX_BW, 12, 1024, 0, 1024},
        {"sum rows", SUM, 12, 1024, 0, 1024},
        {"exp", EXP, 12, 1024, 0, 1024},
        {"dropout noise", DROPOUT, 12, 1024, 0, 1024},
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) run(&jobs[i]);
    return 0;
}
