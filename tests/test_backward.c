// test_backward.c: every reference backward of lib/tensor/ (gemm.h, rows.h, ...) and of
// lib/nn/'s modules against PyTorch 1.13's autograd.
//
// usage: test_backward fixtures/backward_cases.h5
//
// The fixture (tools/export/backward_cases.py) holds one group per case: the inputs
// (for a module: x, its parameters under their state_dict names, dropout's
// noise), the upstream gradient, and every gradient torch computed, named
// "<tensor>.grad". A module case builds the module from those parameters (a
// ParamSource that reads the group), runs its forward keeping its
// activations, then its backward. Every gradient is compared bit for bit,
// the sign of zero included, with the project's rule for NaN (ulp.h
// same_bits): a NaN matches a NaN whatever its payload. Which NaN's payload a
// float operation passes on depends on its operand order, which a C compiler
// may commute; the payloads that differ are counted and printed, not failed.
// One line per tensor:
//   ok|FAIL <case> <tensor>: worst N ulp (...)
// and the exit status is 1 if any tensor differs or any op has no case.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "causal_attention.h"
#include "error.h"
#include "fast_path.h"
#include "fast_threads.h"
#include "fixture.h"
#include "gemm.h"
#include "harness.h"
#include "layout.h"
#include "multihead_attention.h"
#include "noise.h"
#include "param_source.h"
#include "recorder.h"
#include "rows.h"
#include "self_attention.h"
#include "tensor.h"
#include "torch_multihead_attention.h"
#include "ulp.h"

static int failures, tensors;
static long nan_payloads;
static uint32_t worst_overall;

static Tensor need(Fixture *fx, const char *name, Size want) {
    Tensor t;
    char err[FIXTURE_ERR_LEN];
    if (!fixture_read(fx, name, want, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    return t;
}

static int need_int(Fixture *fx, const char *attr) {
    long long v;
    char err[FIXTURE_ERR_LEN];
    if (!fixture_attr_int_in(fx, attr, 0, 1 << 24, &v, err)) die(EXIT_BAD_INPUT, "%s", err);
    return (int)v;
}

// got against torch's dataset `name` (of got's shape), every bit.
static void check(Fixture *fx, const char *cname, const char *name, Tensor got) {
    Tensor want = need(fx, name, shape(got));
    const long n = numel(want);
    uint32_t worst = 0;
    long at = -1, payloads = 0;
    for (long i = 0; i < n; i++) {
        if (float_bits(got.data[i]) == float_bits(want.data[i])) continue;
        if (same_bits(got.data[i], want.data[i])) {  // two NaNs
            payloads++;
            continue;
        }
        uint32_t d = ulp_distance(got.data[i], want.data[i]);
        if (d == 0) d = 1;  // -0 vs +0: counted as 1
        if (at < 0 || d > worst) worst = d, at = i;
    }
    tensors++;
    nan_payloads += payloads;
    if (at < 0) {
        if (payloads)
            printf("ok %s %s: worst 0 ulp (%ld values; %ld NaNs with another payload)\n", cname, name, n, payloads);
        else
            printf("ok %s %s: worst 0 ulp (%ld values, identical bits)\n", cname, name, n);
        return;
    }
    failures++;
    if (worst > worst_overall) worst_overall = worst;
    if (worst == UINT32_MAX)
        printf("FAIL %s %s: worst NaN-vs-number at [%ld]: C %a, torch %a\n", cname, name, at, got.data[at],
               want.data[at]);
    else
        printf("FAIL %s %s: worst %u ulp at [%ld]: C %a (0x%08x), torch %a (0x%08x)\n", cname, name, worst, at,
               got.data[at], float_bits(got.data[at]), want.data[at], float_bits(want.data[at]));
}

// --- op-level cases ---------------------------------------------------------------------

static void test_linear(Fixture *fx, const char *name) {
    const int rows = need_int(fx, "rows"), in = need_int(fx, "in"), out = need_int(fx, "out");
    const int bias = need_int(fx, "bias"), col = need_int(fx, "colmajor");
    Tensor x = need(fx, "x", SIZE(rows, in)), w = need(fx, "weight", SIZE(out, in)), dy = need(fx, "dy", SIZE(rows, out));
    Tensor dx = tensor_empty(SIZE(rows, in)), dw = tensor_empty(SIZE(out, in)), db = tensor_empty(SIZE(out));
    gemm_linear_backward_x(dx.data, dy.data, w.data, rows, in, out);
    gemm_linear_backward_w(dw.data, dy.data, x.data, rows, in, out);
    check(fx, name, "x.grad", dx);
    check(fx, name, "weight.grad", dw);
    if (bias) {
        rows_linear_backward_bias(db.data, dy.data, rows, out, col);
        check(fx, name, "bias.grad", db);
    }
}

static void test_bmm(Fixture *fx, const char *name) {
    const int B = need_int(fx, "B"), M = need_int(fx, "M"), K = need_int(fx, "K"), N = need_int(fx, "N");
    Tensor a = need(fx, "a", SIZE(B, M, K)), b = need(fx, "b", SIZE(B, K, N)), g = need(fx, "dout", SIZE(B, M, N));
    Tensor da = tensor_empty(shape(a)), db = tensor_empty(shape(b));
    gemm_bmm_backward(da.data, db.data, g.data, a.data, b.data, B, M, K, N);
    check(fx, name, "a.grad", da);
    check(fx, name, "b.grad", db);
}

static void test_softmax_rows(Fixture *fx, const char *name) {
    const int rows = need_int(fx, "rows"), n = need_int(fx, "n");
    Tensor y = need(fx, "y", SIZE(rows, n)), dy = need(fx, "dy", SIZE(rows, n)), dx = tensor_empty(SIZE(rows, n));
    rows_softmax_rows_backward(dx.data, dy.data, y.data, rows, n);
    check(fx, name, "x.grad", dx);
}

static void test_softmax_dim(Fixture *fx, const char *name) {
    const int outer = need_int(fx, "outer"), n = need_int(fx, "n"), inner = need_int(fx, "inner");
    const Size s = {3, {SIZE_ANY, SIZE_ANY, SIZE_ANY}};
    Tensor y = need(fx, "y", s), dy = need(fx, "dy", s), dx = tensor_empty(shape(y));
    if (numel(y) != (long)outer * n * inner) die(EXIT_BAD_INPUT, "%s: y's size is not outer * n * inner", name);
    rows_softmax_dim_backward(dx.data, dy.data, y.data, outer, n, inner);
    check(fx, name, "x.grad", dx);
}

// s -> masked_fill_(causal, -inf) -> / d**0.5 -> dropout: backward in reverse
static void test_pointwise(Fixture *fx, const char *name) {
    const int B = need_int(fx, "B"), T = need_int(fx, "T"), d = need_int(fx, "d"), has_noise = need_int(fx, "noise");
    const long n = (long)B * T * T;
    Tensor dy = need(fx, "dy", SIZE(B, T, T)), dx = tensor_empty(SIZE(B, T, T));
    if (has_noise) noise_dropout_backward(dx.data, dy.data, need(fx, "noise", SIZE(B, T, T)).data, n);
    else memcpy(dx.data, dy.data, (size_t)n * sizeof(float));
    rows_div_scalar_backward(dx.data, dx.data, (float)pow((double)d, 0.5), n);
    rows_masked_fill_causal_backward(dx.data, B, T);
    check(fx, name, "x.grad", dx);
}

static void test_sum(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor dx = tensor_empty(SIZE(n));
    rows_sum_backward(dx.data, 1.0f, n);
    check(fx, name, "x.grad", dx);
}

// torch.stack((x, x)): both slices reach x's AccumulateGrad: dout[0] + dout[1]
static void test_stack(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor dout = need(fx, "dout", SIZE(2, 6, 3)), dx = tensor_empty(SIZE(6, 3)), part = tensor_empty(SIZE(6, 3));
    if (n != 18) die(EXIT_BAD_INPUT, "%s: expected n = 18", name);
    layout_stack_backward(dx.data, dout.data, 0, n);
    layout_stack_backward(part.data, dout.data, 1, n);
    rows_accumulate_grad(dx.data, part.data, n);
    check(fx, name, "x.grad", dx);
}

// The causal attention of one head, its backward by attend_fast_backward
// from q, k, v and dctx (the weights computed again by the C forward), on
// every path this CPU runs, 1 and 2 threads, every size on the path (no
// scalar fallback for the narrow products of D = 2): the products that skip the dead
// triangle must not skip it where the other operand is not finite, nor skip
// a depth block a row needs. The cases marked "full" run with the full
// selection only.
static int full_selection;

static void test_attention(Fixture *fx, const char *name) {
    const int B = need_int(fx, "B"), T = need_int(fx, "T"), D = need_int(fx, "D");
    if (need_int(fx, "full") && !full_selection) {
        printf("-- %s: with the full selection only\n", name);
        return;
    }
    Tensor q = need(fx, "q", SIZE(B, T, D)), k = need(fx, "k", SIZE(B, T, D)), v = need(fx, "v", SIZE(B, T, D));
    Tensor dctx = need(fx, "dctx", SIZE(B, T, D));
    Tensor dq = tensor_empty(SIZE(B, T, D)), dk = tensor_empty(SIZE(B, T, D)), dv = tensor_empty(SIZE(B, T, D));
    const int path = fast_path_get(), threads_before = fast_threads_get();
    fast_path_ignore_thresholds(1);
    for (int p = 0; p < 4; p++) {
        if (!fast_path_runs(p)) continue;
        for (int threads = 1; threads <= 2; threads++) {
            char label[200];
            snprintf(label, sizeof label, "%s [%s, %d thread%s]", name, fast_path_name_of(p), threads,
                     threads > 1 ? "s" : "");
            fast_path_force(p);
            fast_threads_set(threads);
            attend_fast_backward(dq.data, dk.data, dv.data, dctx.data, q.data, k.data, v.data, NULL, NULL, B, T,
                                    D, (float)pow((double)D, 0.5), true, -1);
            check(fx, label, "q.grad", dq);
            check(fx, label, "k.grad", dk);
            check(fx, label, "v.grad", dv);
        }
    }
    fast_path_force(path);
    fast_threads_set(threads_before);
    fast_path_ignore_thresholds(0);
}

// --- module cases -----------------------------------------------------------------------

// Parameters and dropout noise read from the case's group, by the name the
// module asks for without its "m." prefix: the state_dict key.
static void fill(void *ctx, const char *name, Tensor t) {
    Fixture *fx = ctx;
    if (strncmp(name, "m.", 2) != 0) die(EXIT_BAD_INPUT, "%s: unexpected parameter name %s", fixture_path(fx), name);
    Tensor v = need(fx, name + 2, shape(t));
    memcpy(t.data, v.data, (size_t)numel(t) * sizeof(float));
}
static void fill_uniform(void *ctx, const char *name, Tensor t, double from, double to) {
    (void)from, (void)to;
    fill(ctx, name, t);
}
static void fill_noise(void *ctx, const char *name, Tensor t, double p) {
    (void)p;
    fill(ctx, name, t);
}

static void check_linear(Fixture *fx, const char *cname, const char *prefix, LinearGrad g) {
    char key[128];
    snprintf(key, sizeof key, "%s.weight.grad", prefix);
    check(fx, cname, key, g.weight);
    if (g.bias.data) {
        snprintf(key, sizeof key, "%s.bias.grad", prefix);
        check(fx, cname, key, g.bias);
    } else {
        snprintf(key, sizeof key, "%s.bias.grad", prefix);
        if (fixture_has(fx, key)) die(EXIT_BAD_INPUT, "%s: torch has %s, the C module no bias", cname, key);
    }
}

static void check_qkv(Fixture *fx, const char *cname, const char *prefix, LinearGrad q, LinearGrad k, LinearGrad v) {
    char key[96];
    snprintf(key, sizeof key, "%sW_query", prefix);
    check_linear(fx, cname, key, q);
    snprintf(key, sizeof key, "%sW_key", prefix);
    check_linear(fx, cname, key, k);
    snprintf(key, sizeof key, "%sW_value", prefix);
    check_linear(fx, cname, key, v);
}

static void test_module(Fixture *fx, const char *name) {
    char module[64], err[FIXTURE_ERR_LEN];
    if (!fixture_attr_string(fx, "module", module, sizeof module, err)) die(EXIT_BAD_INPUT, "%s", err);
    const int d_in = need_int(fx, "d_in"), d_out = need_int(fx, "d_out"), b = need_int(fx, "b"), T = need_int(fx, "T");
    const int ctx_len = need_int(fx, "context_length"), heads = need_int(fx, "num_heads");
    const bool bias = need_int(fx, "qkv_bias"), training = need_int(fx, "training");
    double p;
    if (!fixture_attr_double(fx, "dropout", &p, err)) die(EXIT_BAD_INPUT, "%s", err);
    long long softmax_dim;
    if (!fixture_attr_int_in(fx, "softmax_dim", -1, 2, &softmax_dim, err)) die(EXIT_BAD_INPUT, "%s", err);
    // The forward that keeps its activations must still give torch's output.
    ParamSource ps = {.uniform_ = fill_uniform, .rand = fill, .dropout_noise = fill_noise, .ctx = fx};
    Recorder rec = {0};
    const ComputeMode keeping = {ATTENTION_FUSED, .keep = true};  // the forward keeps what the backward reads
    if (strcmp(module, "SelfAttention_v1") == 0) {
        Tensor x = need(fx, "x", SIZE(T, d_in)), dout = need(fx, "dout", SIZE(T, d_out));
        SelfAttentionV1 m = self_attention_v1_new(&ps, &rec, keeping, "m", d_in, d_out);
        check(fx, name, "out", self_attention_v1_forward(&m, x));
        SelfAttentionV1Grads g = self_attention_v1_backward(&m, dout);
        check(fx, name, "W_query.grad", g.W_query);
        check(fx, name, "W_key.grad", g.W_key);
        check(fx, name, "W_value.grad", g.W_value);
        check(fx, name, "x.grad", g.x);
    } else if (strcmp(module, "SelfAttention_v2") == 0) {
        Tensor x = need(fx, "x", SIZE(T, d_in)), dout = need(fx, "dout", SIZE(T, d_out));
        SelfAttentionV2 m = self_attention_v2_new(&ps, &rec, keeping, "m", d_in, d_out, bias);
        m.softmax_dim = (int)softmax_dim;
        check(fx, name, "out", self_attention_v2_forward(&m, x));
        SelfAttentionV2Grads g = self_attention_v2_backward(&m, dout);
        check_qkv(fx, name, "", g.W_query, g.W_key, g.W_value);
        check(fx, name, "x.grad", g.x);
    } else if (strcmp(module, "CausalAttention") == 0) {
        Tensor x = need(fx, "x", SIZE(b, T, d_in)), dout = need(fx, "dout", SIZE(b, T, d_out));
        CausalAttention m = causal_attention_new(&ps, &rec, keeping, "m", d_in, d_out, ctx_len, p, bias);
        if (!training) causal_attention_eval(&m);
        m.softmax_dim = (int)softmax_dim;
        check(fx, name, "out", causal_attention_forward(&m, x));
        CausalAttentionGrads g = causal_attention_backward(&m, dout);
        check_qkv(fx, name, "", g.W_query, g.W_key, g.W_value);
        check(fx, name, "x.grad", g.x);
    } else if (strcmp(module, "MultiHeadAttentionWrapper") == 0) {
        Tensor x = need(fx, "x", SIZE(b, T, d_in)), dout = need(fx, "dout", SIZE(b, T, heads * d_out));
        static MultiHeadAttentionWrapper m;  // 64 heads: too large for the stack
        m = multihead_attention_wrapper_new(&ps, &rec, keeping, "m", d_in, d_out, ctx_len, p, heads, bias);
        for (int h = 0; h < heads; h++) {
            if (!training) causal_attention_eval(&m.heads[h]);
            m.heads[h].softmax_dim = (int)softmax_dim;
        }
        check(fx, name, "out", multihead_attention_wrapper_forward(&m, x));
        static MultiHeadAttentionWrapperGrads g;
        g = multihead_attention_wrapper_backward(&m, dout);
        for (int h = 0; h < heads; h++) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "heads.%d.", h);
            check_qkv(fx, name, prefix, g.heads[h].W_query, g.heads[h].W_key, g.heads[h].W_value);
        }
        check(fx, name, "x.grad", g.x);
    } else if (strcmp(module, "MultiHeadAttention") == 0) {
        Tensor x = need(fx, "x", SIZE(b, T, d_in)), dout = need(fx, "dout", SIZE(b, T, d_out));
        MultiHeadAttention m = multihead_attention_new(&ps, &rec, keeping, "m", d_in, d_out, ctx_len, p, heads, bias);
        if (!training) multihead_attention_eval(&m);
        if (softmax_dim != -1) die(EXIT_BAD_INPUT, "%s: MultiHeadAttention has no softmax_dim", name);
        check(fx, name, "out", multihead_attention_forward(&m, x));
        MultiHeadAttentionGrads g = multihead_attention_backward(&m, dout);
        check_qkv(fx, name, "", g.W_query, g.W_key, g.W_value);
        check_linear(fx, name, "out_proj", g.out_proj);
        check(fx, name, "x.grad", g.x);
    } else if (strcmp(module, "MHAPyTorchClass") == 0) {
        // The bonus notebook's class over nn.MultiheadAttention.
        Tensor x = need(fx, "x", SIZE(b, T, d_in)), dout = need(fx, "dout", SIZE(b, T, d_out));
        if (!training || bias || softmax_dim != -1)
            die(EXIT_BAD_INPUT, "%s: MHAPyTorchClass: only training mode, no bias, softmax over dim -1", name);
        MHAPyTorchClass m = mha_pytorch_class_new(&ps, &rec, keeping, "m", d_in, d_out, heads, ctx_len, p, bias,
                                                  need_int(fx, "need_weights"));
        check(fx, name, "out", mha_pytorch_class_forward(&m, x));
        MHAPyTorchClassGrads g = mha_pytorch_class_backward(&m, dout);
        check(fx, name, "multihead_attn.in_proj_weight.grad", g.in_proj_weight);
        check_linear(fx, name, "multihead_attn.out_proj", g.out_proj);
        check_linear(fx, name, "proj", g.proj);
        check(fx, name, "x.grad", g.x);
    } else {
        die(EXIT_BAD_INPUT, "%s: unknown module '%s'", fixture_path(fx), module);
    }
}

// --- driver -------------------------------------------------------------------------------

static CaseKind ops[] = {
    {"linear", test_linear, 0},       {"bmm", test_bmm, 0},       {"softmax_rows", test_softmax_rows, 0},
    {"softmax_dim", test_softmax_dim, 0}, {"pointwise", test_pointwise, 0}, {"sum", test_sum, 0},
    {"stack", test_stack, 0},         {"attention", test_attention, 0},
    {"module", test_module, 0},
};
enum { NOPS = sizeof ops / sizeof ops[0] };

int main(int argc, char **argv) {
    error_set_program(argv[0]);
    full_selection = harness_full_selection(argv[0], argc, argv);
    if (argc < 2 || argv[1][0] == '-') die(EXIT_USAGE, "usage: %s fixtures/backward_cases.h5 [--full]", argv[0]);
    int missing;
    const int n = run_case_file(argv[1], "op", ops, NOPS, &missing);
    failures += missing;
    printf("%d cases, %d tensors (gradients, and the module forwards' outputs), %d differ (worst %u ulp); %ld NaNs "
           "with another payload\n", n, tensors, failures, worst_overall, nan_payloads);
    return failures ? 1 : 0;
}
