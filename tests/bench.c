// bench: how fast the kernels and a whole self-attention forward run.
// Prints figures; never fails on a slow machine (meson benchmark, not test).
//
//   meson test -C build --benchmark
#include <stdio.h>
#include <time.h>

#include "init.h"
#include "kernels.h"
#include "pcg32.h"
#include "self_attention.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Runs fn until at least 0.2 s have passed; returns seconds per call.
static double time_it(void (*fn)(void *), void *ctx) {
    long calls = 0;
    double t0 = now(), t;
    do {
        fn(ctx);
        calls++;
    } while ((t = now()) - t0 < 0.2);
    return (t - t0) / (double)calls;
}

typedef struct {
    int T, d_in, d_out;
    float *a, *b, *out;
    SelfAttentionV2 *sa;
    Tensor x;
} Ctx;

static void run_matmul(void *p) {
    Ctx *c = p;
    matmul(c->out, c->a, c->b, c->T, c->d_in, c->d_out);
}

static void run_softmax(void *p) {
    Ctx *c = p;
    for (int r = 0; r < c->T; r++) softmax_row(c->out + r * c->T, c->a + r * c->T, c->T);
}

static void run_forward(void *p) {
    Ctx *c = p;
    (void)self_attention_v2_forward(c->sa, c->x);
}

int main(void) {
    pcg32_random_t pcg;
    pcg32_srandom_r(&pcg, 42u, 54u);
    RandomSource rs = pcg32_source(&pcg);
    static const int sizes[][3] = {{6, 3, 2}, {33, 64, 16}, {128, 256, 64}};
    printf("%-16s %12s %12s %14s\n", "T, d_in, d_out", "matmul", "softmax", "v2 forward");
    for (int s = 0; s < 3; s++) {
        Ctx c = {sizes[s][0], sizes[s][1], sizes[s][2], NULL, NULL, NULL, NULL, {0}};
        Tensor a = tensor_matrix(c.T, c.d_in > c.T ? c.d_in : c.T), b = tensor_matrix(c.d_in, c.d_out),
               out = tensor_matrix(c.T, c.d_out > c.T ? c.d_out : c.T);
        rand_fill(a.data, tensor_numel(a), &rs);
        rand_fill(b.data, tensor_numel(b), &rs);
        c.a = a.data, c.b = b.data, c.out = out.data;
        ParamSource params = params_drawn(&rs, NULL);
        SelfAttentionV2 sa = self_attention_v2_new(c.d_in, c.d_out, 0, &params);
        c.sa = &sa;
        c.x = tensor_matrix(c.T, c.d_in);
        rand_fill(c.x.data, tensor_numel(c.x), &rs);
        double t_mm = time_it(run_matmul, &c), t_sm = time_it(run_softmax, &c);
        double flops = 2.0 * c.T * c.d_in * c.d_out;
        char label[32];
        snprintf(label, sizeof label, "%d, %d, %d", c.T, c.d_in, c.d_out);
        // The forward allocates into the tensor pool, so it is timed in one
        // fixed batch and the pool is emptied only afterwards.
        double t0 = now();
        int calls = s == 2 ? 20 : 2000;
        for (int i = 0; i < calls; i++) run_forward(&c);
        double t_fw = (now() - t0) / calls;
        printf("%-16s %7.3f GF/s %7.1f Mrow/s %9.1f us\n", label, flops / t_mm * 1e-9, c.T / t_sm * 1e-6, t_fw * 1e6);
        tensor_release_all();
    }
    return 0;
}
