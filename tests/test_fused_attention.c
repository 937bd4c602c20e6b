// test_fused_attention.c: CausalAttention and MultiHeadAttention give the
// same bits on each path of their ComputeMode (nn/mode.h): ATTENTION_RECORDED
// (every (T, T) tensor made for the whole batch and reported: the path of
// --dump, which the fixtures check against PyTorch), ATTENTION_MATERIALISED
// (made one batch item at a time: the bonus notebook's classes) and
// ATTENTION_FUSED (passes 3-5 a block of rows at a time: a chapter run
// without --dump; ops.h, ops_fused_attention).
//
// Each case makes the module three times from the same torch.manual_seed,
// once on each path, runs each forward on the same input, in training mode
// (dropout draws its mask) and in eval mode, with 1 and 2 threads, and
// compares every value of the fused and the materialised output with the
// recorded one as uint32 bits (any NaN equals any NaN). And that each path
// is the one asked for: only the recorded forward reports its attn_scores,
// and in training mode with 0 < p < 1 the fused and the recorded forward
// draw one dropout mask of the whole batch, the materialised one a mask per
// batch item.
//
// And MultiHeadAttention's rows_sum_backward, which reuses what a forward that
// drew nothing kept (multihead_attention.h: last) instead of running it
// again: its gradients after a forward of the same input, and after a
// forward of another input of the same shape in the same block of memory,
// against those of a module that ran no forward before (in eval mode, and
// in training mode at p = 0).
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "causal_attention.h"
#include "fast_threads.h"
#include "init.h"
#include "multihead_attention.h"
#include "param_source.h"
#include "rows.h"
#include "torch_generator.h"

static int failures, compared;

// Counts the attn_scores a forward reports.
static void count_scores(void *ctx, const char *name, Tensor t) {
    (void)t;
    const char *dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".attn_scores") == 0) ++*(int *)ctx;
}

// The path a forward took, as seen from outside: what it reported, what it drew.
static void check_path(const char *what, AttentionPath path, int batch, bool draws, int scores, int masks) {
    const int want_scores = path == ATTENTION_RECORDED ? 1 : 0;
    const int want_masks = !draws ? 0 : path == ATTENTION_MATERIALISED ? batch : 1;
    if (scores == want_scores && masks == want_masks) return;
    printf("FAIL %s: %d attn_scores reported (expected %d), %d dropout masks drawn (expected %d)\n", what, scores,
           want_scores, masks, want_masks);
    failures++;
}

static void compare(const char *what, Tensor got, Tensor want) {
    for (long i = 0; i < numel(want); i++) {
        uint32_t g, w;
        memcpy(&g, &got.data[i], 4), memcpy(&w, &want.data[i], 4);
        if (g == w || (got.data[i] != got.data[i] && want.data[i] != want.data[i])) continue;
        printf("FAIL %s: index %ld: 0x%08x, recorded 0x%08x\n", what, i, g, w);
        failures++;
        return;
    }
    compared += (int)numel(want);
}

typedef struct {
    const char *name;
    int batch, tokens, d_in, d_out, context_length, heads;  // heads 0: CausalAttention
    double dropout;
} Case;

// The module made from seed 123 (parameters, then the input, then
// forward's dropout mask): its output on `path`, the path checked.
static Tensor run(const Case *c, int training, AttentionPath path, const char *what) {
    TorchGenerator g;
    torch_manual_seed(&g, 123);
    RandomSource rs = torch_generator_source(&g);
    const ParamSource ps = param_source_random(&rs);
    int scores = 0;
    const Recorder rec = {count_scores, &scores};
    const ComputeMode mode = {.attention = path};
    Tensor x = tensor_empty(SIZE(c->batch, c->tokens, c->d_in));
    rand_fill(x.data, numel(x), &rs);
    const bool draws = training && c->dropout > 0.0 && c->dropout < 1.0;
    Tensor out;
    if (c->heads == 0) {
        CausalAttention m = causal_attention_new(&ps, &rec, mode, "ca", c->d_in, c->d_out, c->context_length, c->dropout,
                                                 false);
        if (!training) causal_attention_eval(&m);
        out = causal_attention_forward(&m, x);
        check_path(what, path, c->batch, draws, scores, m.dropout.calls);
        return out;
    }
    MultiHeadAttention m = multihead_attention_new(&ps, &rec, mode, "mha", c->d_in, c->d_out, c->context_length,
                                                   c->dropout, c->heads, true);
    if (!training) multihead_attention_eval(&m);
    out = multihead_attention_forward(&m, x);
    check_path(what, path, c->batch, draws, scores, m.dropout.calls);
    return out;
}

// The gradients of loss = mha(x).sum() from seed 123, the module having
// run `before` forwards first: 0; 1 on x itself; 2 on other values in x's
// block (x is then drawn again into it, so the kept input's address is x's)
static Gradients run_backward(const Case *c, int training, int before) {
    TorchGenerator g;
    torch_manual_seed(&g, 123);
    RandomSource rs = torch_generator_source(&g);
    const ParamSource ps = param_source_random(&rs);
    const Recorder rec = {NULL, NULL};
    Tensor x = tensor_empty(SIZE(c->batch, c->tokens, c->d_in));
    MultiHeadAttention m = multihead_attention_new(&ps, &rec, (ComputeMode){.attention = ATTENTION_FUSED}, "mha",
                                                   c->d_in, c->d_out, c->context_length, c->dropout, c->heads, true);
    if (!training) multihead_attention_eval(&m);
    TorchGenerator gx;
    torch_manual_seed(&gx, 7);
    RandomSource rsx = torch_generator_source(&gx);
    rand_fill(x.data, numel(x), &rsx);
    if (before == 2) {
        for (long i = 0; i < numel(x); i++) x.data[i] = -x.data[i];
        tensor_free(multihead_attention_forward(&m, x));
        torch_manual_seed(&gx, 7);
        rand_fill(x.data, numel(x), &rsx);
    } else if (before == 1) {
        tensor_free(multihead_attention_forward(&m, x));
    }
    return multihead_attention_sum_backward(&m, x);
}

static void compare_grads(const char *what, Gradients got, Gradients want) {
    char name[400];
    for (int i = 0; i < want.n; i++) {
        snprintf(name, sizeof name, "%s: %s", what, want.param[i].key);
        compare(name, got.param[i].grad, want.param[i].grad);
    }
    snprintf(name, sizeof name, "%s: x.grad", what);
    compare(name, got.x, want.x);
}

int main(void) {
    static const Case cases[] = {
        {"the book's CausalAttention", 2, 6, 3, 2, 6, 0, 0.0},
        {"the book's CausalAttention, dropout 0.5", 2, 6, 3, 2, 6, 0, 0.5},
        {"the book's MultiHeadAttention", 2, 6, 3, 2, 6, 2, 0.0},
        {"three blocks of rows, 4 heads, dropout 0.1", 2, 150, 32, 64, 160, 4, 0.1},
        {"dropout 1.0", 1, 70, 8, 16, 70, 2, 1.0},
        {"five blocks of rows, 12 heads", 1, 300, 64, 192, 1024, 12, 0.1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int threads = 1; threads <= 2; threads++) {
            fast_threads_set(threads);
            for (int training = 1; training >= 0; training--) {
                char what[200];
                static const AttentionPath paths[] = {ATTENTION_RECORDED, ATTENTION_FUSED, ATTENTION_MATERIALISED};
                static const char *const path_name[] = {"recorded", "fused", "materialised a batch item at a time"};
                Tensor want = {0};
                for (int p = 0; p < 3; p++) {
                    snprintf(what, sizeof what, "%s, %s, %d thread%s, %s", cases[i].name,
                             training ? "training" : "eval", threads, threads > 1 ? "s" : "", path_name[p]);
                    const Tensor got = run(&cases[i], training, paths[p], what);
                    if (p == 0) want = got;
                    else compare(what, got, want);
                }
                tensor_release_all();
            }
        }
    }
    for (size_t i = 2; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].heads == 0) continue;
        for (int training = 1; training >= 0; training--)
            for (int before = 1; before <= 2 && !(training && cases[i].dropout > 0.0); before++) {
                // (a forward that draws a mask moves the generator: the
                // backward's forward then draws the next mask, as torch's does)
                char what[200];
                snprintf(what, sizeof what, "%s, %s, backward after a forward of %s", cases[i].name,
                         training ? "training" : "eval", before == 1 ? "the same input" : "other values");
                const Gradients want = run_backward(&cases[i], training, 0);
                const Gradients got = run_backward(&cases[i], training, before);
                compare_grads(what, got, want);
                tensor_release_all();
            }
    }
    printf("%s: %d values compared, %d difference%s\n", failures ? "FAIL" : "ok", compared, failures,
           failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
