// test_kernels.c: every scalar reference kernel of lib/tensor/ (gemm.h, rows.h,
// noise.h, layout.h) against PyTorch's results.
//
// usage: test_kernels fixtures/kernel_cases.h5
//
// The fixture (written by tools/export/kernel_cases.py from real torch 1.13) holds
// one group per case: the inputs, torch's output "out", and which kernel the
// case is for. Each case runs the C kernel on the inputs and compares every
// value with torch's in ulps; the kernels promise the same bits, so anything
// but 0 ulp fails (NaN matches only NaN). One line per case:
//   ok|FAIL <case>: worst N ulp at [i]
// and the exit status is 1 if any case fails or any kernel has no case.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropout.h"
#include "error.h"
#include "fixture.h"
#include "gemm.h"
#include "harness.h"
#include "init.h"
#include "layout.h"
#include "ops.h"
#include "param_source.h"
#include "rows.h"
#include "tensor.h"
#include "torch_generator.h"
#include "ulp.h"

static int failures;

// Reads a float32 dataset of exactly the given shape; a missing or misshapen
// dataset is a broken fixture, which fails the test on the spot.
static Tensor need(Fixture *fx, const char *name, int ndim, int d0, int d1) {
    Size want = {ndim, {d0, d1}};
    Tensor t;
    char err[FIXTURE_ERR_LEN];
    if (!fixture_read(fx, name, want, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    return t;
}

static int need_int(Fixture *fx, const char *attr) {
    long long v;
    char err[FIXTURE_ERR_LEN];
    if (!fixture_attr_int(fx, attr, &v, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (v < 1 || v > 1 << 24) die(EXIT_BAD_INPUT, "%s: attribute '%s' = %lld is not a size", fixture_path(fx), attr, v);
    return (int)v;
}

// A 1-D input where the size is 1 in the other place: x_2 @ W and W @ x use
// rank-1 tensors where the kernel sees one row.
static int is_rank1(Fixture *fx, const char *name, int n) {
    Tensor t;
    char err[FIXTURE_ERR_LEN];
    Size want = {1, {n, 0}};
    return fixture_read(fx, name, want, &t, err);
}

// got vs torch's want, value by value: prints the case's line and counts it.
static void compare(const char *name, const float *got, Tensor want) {
    const int n = (int)numel(want);
    uint32_t worst = 0;
    int at = -1;
    for (int i = 0; i < n; i++) {
        if (same_bits(got[i], want.data[i])) continue;
        const uint32_t d = ulp_distance(got[i], want.data[i]);
        if (at < 0 || d > worst) worst = d, at = i;
    }
    char where[48];
    if (want.ndim == 2) snprintf(where, sizeof where, "[%d, %d]", at / want.shape[1], at % want.shape[1]);
    else if (want.ndim == 1) snprintf(where, sizeof where, "[%d]", at);
    else snprintf(where, sizeof where, "[]");
    if (at < 0) {
        printf("ok %s: identical bits\n", name);
        return;
    }
    failures++;
    if (worst == UINT32_MAX)
        printf("FAIL %s: worst NaN-vs-number at %s: C %a, torch %a\n", name, where, got[at], want.data[at]);
    else
        printf("FAIL %s: worst %u ulp%s at %s: C %a, torch %a\n", name, worst, worst ? "" : " (the sign of zero)", where,
               got[at], want.data[at]);
}

static void test_matmul(Fixture *fx, const char *name) {
    const int M = need_int(fx, "M"), K = need_int(fx, "K"), N = need_int(fx, "N");
    const int row = M == 1 && is_rank1(fx, "a", K);  // x (K,) @ W (K, N) -> (N,)
    Tensor a = row ? need(fx, "a", 1, K, 0) : need(fx, "a", 2, M, K);
    Tensor b = need(fx, "b", 2, K, N);
    Tensor want = row ? need(fx, "out", 1, N, 0) : need(fx, "out", 2, M, N);
    Tensor got = tensor_copy(want);
    gemm_matmul(got.data, a.data, b.data, M, K, N);
    compare(name, got.data, want);
}

static void test_matmul_wt_bias(Fixture *fx, const char *name) {
    const int M = need_int(fx, "M"), K = need_int(fx, "K"), N = need_int(fx, "N");
    const int row = M == 1 && is_rank1(fx, "x", K);  // W @ x, or x @ W.T, with x (K,)
    Tensor x = row ? need(fx, "x", 1, K, 0) : need(fx, "x", 2, M, K);
    Tensor w = need(fx, "w", 2, N, K);
    const float *bias = fixture_has(fx, "bias") ? need(fx, "bias", 1, N, 0).data : NULL;
    Tensor want = row ? need(fx, "out", 1, N, 0) : need(fx, "out", 2, M, N);
    Tensor got = tensor_copy(want);
    gemm_matmul_wt_bias(got.data, x.data, w.data, bias, M, K, N);
    compare(name, got.data, want);
}

static void test_transpose(Fixture *fx, const char *name) {
    const int M = need_int(fx, "M"), N = need_int(fx, "N");
    Tensor a = need(fx, "a", 2, M, N), want = need(fx, "out", 2, N, M);
    Tensor got = tensor_copy(want);
    layout_transpose(got.data, a.data, M, N);
    compare(name, got.data, want);
}

static void test_dot(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor a = need(fx, "a", 1, n, 0), b = need(fx, "b", 1, n, 0), want = need(fx, "out", 0, 0, 0);
    const float got = gemm_dot(a.data, b.data, n);
    compare(name, &got, want);
}

static void test_sum(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), want = need(fx, "out", 0, 0, 0);
    const float got = rows_sum(x.data, n);
    compare(name, &got, want);
}

// x.sum(dim=-1): the same kernel on every row.
static void test_sum_rows(Fixture *fx, const char *name) {
    const int rows = need_int(fx, "rows"), n = need_int(fx, "n");
    Tensor x = need(fx, "x", 2, rows, n), want = need(fx, "out", 1, rows, 0);
    Tensor got = tensor_copy(want);
    for (int r = 0; r < rows; r++) got.data[r] = rows_sum(x.data + (size_t)r * n, n);
    compare(name, got.data, want);
}

static void test_div_scalar(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), s = need(fx, "s", 0, 0, 0), want = need(fx, "out", 1, n, 0);
    Tensor got = tensor_copy(want);
    rows_div_scalar(got.data, x.data, s.data[0], n);
    compare(name, got.data, want);
}

static void test_mul_scalar(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), s = need(fx, "s", 0, 0, 0), want = need(fx, "out", 1, n, 0);
    Tensor got = tensor_copy(want);
    rows_mul_scalar(got.data, x.data, s.data[0], n);
    compare(name, got.data, want);
}

static void test_exp(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), want = need(fx, "out", 1, n, 0);
    Tensor got = tensor_copy(want);
    rows_exp(got.data, x.data, n);
    compare(name, got.data, want);
}

// context_vec = zeros(d); for i: context_vec += attn_weights[i] * x_i
static void test_add_scaled(Fixture *fx, const char *name) {
    const int T = need_int(fx, "T"), d = need_int(fx, "d");
    Tensor w = need(fx, "w", 1, T, 0), x = need(fx, "x", 2, T, d), want = need(fx, "out", 1, d, 0);
    // `+=` of `attn_weights[i] * x_i`: a product tensor (rounded), then an add.
    Tensor got = tensor_zeros(SIZE(d)), product = tensor_zeros(SIZE(d));
    for (int i = 0; i < T; i++) {
        rows_mul_scalar(product.data, x.data + (size_t)i * d, w.data[i], d);
        rows_add(got.data, got.data, product.data, d);
    }
    compare(name, got.data, want);
}

// torch.softmax(x, dim=-1) on every row; a 1-D x is one row.
static void test_softmax_rows(Fixture *fx, const char *name) {
    const int rows = need_int(fx, "rows"), n = need_int(fx, "n");
    const int one = rows == 1 && is_rank1(fx, "x", n);
    Tensor x = one ? need(fx, "x", 1, n, 0) : need(fx, "x", 2, rows, n);
    Tensor want = one ? need(fx, "out", 1, n, 0) : need(fx, "out", 2, rows, n);
    Tensor got = tensor_copy(want);
    for (int r = 0; r < rows; r++) rows_softmax_row(got.data + (size_t)r * n, x.data + (size_t)r * n, n);
    compare(name, got.data, want);
}

// --- the N-D kernels of sections 3.5-3.6, through the ops that use them ------------

// A dataset whose shape the case gives as <prefix>ndim, <prefix>dim0, ...
static Tensor need_shaped(Fixture *fx, const char *name, const char *prefix) {
    char key[32], err[FIXTURE_ERR_LEN];
    long long v;
    snprintf(key, sizeof key, "%sndim", prefix);
    if (!fixture_attr_int(fx, key, &v, err)) die(EXIT_BAD_INPUT, "%s", err);
    Size s = {(int)v, {0}};
    for (int i = 0; i < s.ndim && i < TENSOR_MAX_DIMS; i++) {
        snprintf(key, sizeof key, "%sdim%d", prefix, i);
        s.dims[i] = need_int(fx, key);
    }
    Tensor t;
    if (!fixture_read(fx, name, s, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    return t;
}

static Tensor need_as(Fixture *fx, const char *name, Size s) {
    Tensor t;
    char err[FIXTURE_ERR_LEN];
    if (!fixture_read(fx, name, s, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    return t;
}

static void test_bmm(Fixture *fx, const char *name) {
    const int B = need_int(fx, "B"), M = need_int(fx, "M"), K = need_int(fx, "K"), N = need_int(fx, "N");
    Tensor a = need_as(fx, "a", SIZE(B, M, K)), b = need_as(fx, "b", SIZE(B, K, N));
    Tensor want = need_as(fx, "out", SIZE(B, M, N)), got = tensor_copy(want);
    gemm_bmm(got.data, a.data, b.data, B, M, K, N);
    compare(name, got.data, want);
}

// torch.matmul's batch broadcasting, then one product per matrix.
static void test_matmul_nd(Fixture *fx, const char *name) {
    Tensor a = need_shaped(fx, "a", "a_"), b = need_shaped(fx, "b", "b_");
    Tensor got = torch_matmul(a, b);
    compare(name, got.data, need_as(fx, "out", shape(got)));
}

static void test_softmax_dim(Fixture *fx, const char *name) {
    const int outer = need_int(fx, "outer"), n = need_int(fx, "n"), inner = need_int(fx, "inner");
    Tensor x = need_as(fx, "x", SIZE(outer, n, inner)), want = need_as(fx, "out", SIZE(outer, n, inner));
    Tensor got = tensor_copy(want);
    rows_softmax_dim(got.data, x.data, outer, n, inner);
    compare(name, got.data, want);
}

static void test_softmax_rows_nd(Fixture *fx, const char *name) {
    Tensor x = need_shaped(fx, "x", "");
    Tensor got = torch_softmax(x, -1);
    compare(name, got.data, need_as(fx, "out", shape(x)));
}

// a (rows, n) op b, b shaped as the case's "broadcast" attribute says.
static void test_broadcast(Fixture *fx, const char *name, Tensor (*op)(Tensor, Tensor)) {
    const int rows = need_int(fx, "rows"), n = need_int(fx, "n");
    char how[32], err[FIXTURE_ERR_LEN];
    if (!fixture_attr_string(fx, "broadcast", how, sizeof how, err)) die(EXIT_BAD_INPUT, "%s", err);
    Size bs = !strcmp(how, "column") ? SIZE(rows, 1) : !strcmp(how, "row") ? SIZE(1, n)
            : !strcmp(how, "scalar") ? SIZE_SCALAR : SIZE(rows, n);
    Tensor a = need_as(fx, "a", SIZE(rows, n)), b = need_as(fx, "b", bs);
    Tensor got = op(a, b);
    compare(name, got.data, need_as(fx, "out", SIZE(rows, n)));
}
static void test_mul_broadcast(Fixture *fx, const char *name) { test_broadcast(fx, name, torch_mul); }
static void test_div_broadcast(Fixture *fx, const char *name) { test_broadcast(fx, name, torch_div); }

static void test_masked_fill(Fixture *fx, const char *name) {
    const int T = need_int(fx, "T");
    Tensor x = need_shaped(fx, "x", ""), mask = need_as(fx, "mask", SIZE(T, T));
    Tensor got = torch_masked_fill(x, torch_bool(mask), -INFINITY);
    compare(name, got.data, need_as(fx, "out", shape(x)));
}

static void test_sum_rows_keepdim(Fixture *fx, const char *name) {
    Tensor x = need_shaped(fx, "x", "");
    Tensor got = torch_sum_dim(x, -1, true);
    compare(name, got.data, need_as(fx, "out", shape(got)));
}

// A dropout case's generator, seeded as its `seed` attribute says, the
// parameter source that draws from it, and its module: nn.Dropout(p) with
// the `p` attribute (in training mode), drawing its masks from that source.
static Dropout dropout_case(Fixture *fx, TorchGenerator *g, RandomSource *rs, ParamSource *ps) {
    char seed_text[64], p_text[64], err[FIXTURE_ERR_LEN];
    uint64_t seed;
    if (!fixture_attr_string(fx, "seed", seed_text, sizeof seed_text, err) ||
        !fixture_attr_string(fx, "p", p_text, sizeof p_text, err))
        die(EXIT_BAD_INPUT, "%s", err);
    if (!torch_parse_seed(seed_text, &seed)) die(EXIT_BAD_INPUT, "%s: seed '%s'", fixture_path(fx), seed_text);
    torch_manual_seed(g, seed);
    *rs = torch_generator_source(g);
    *ps = param_source_random(rs);
    return dropout_new(ps, "dropout", strtod(p_text, NULL));
}

// Where the case left the generator: the next torch.rand(1) against torch's.
static void compare_next_draw(Fixture *fx, const char *name, RandomSource *rs) {
    const float next = uniform01(rs);
    char label[160];
    snprintf(label, sizeof label, "%s (the next draw)", name);
    compare(label, &next, need_as(fx, "next", SIZE(1)));
}

// torch.manual_seed(seed); nn.Dropout(p)(x) in training mode; then torch.rand(1):
// the mask, the output, and where the generator stands afterwards.
static void test_dropout(Fixture *fx, const char *name) {
    TorchGenerator g;
    RandomSource rs;
    ParamSource ps;
    Dropout dropout = dropout_case(fx, &g, &rs, &ps);
    Tensor x = need_shaped(fx, "x", "");
    Tensor noise = dropout_noise(&dropout, shape(x));
    char label[160];
    snprintf(label, sizeof label, "%s (noise)", name);
    compare(label, noise.data, need_as(fx, "noise", shape(x)));
    compare(name, torch_mul(x, noise).data, need_as(fx, "out", shape(x)));
    compare_next_draw(fx, name, &rs);
}

// torch.manual_seed(seed); d = nn.Dropout(p); d.train(training); d(x); then
// torch.rand(1): the module as a whole. At p = 1 in training mode it returns
// x * 0 and draws nothing; at p = 0 and in eval mode it returns x itself.
static void test_dropout_module(Fixture *fx, const char *name) {
    TorchGenerator g;
    RandomSource rs;
    ParamSource ps;
    Dropout dropout = dropout_case(fx, &g, &rs, &ps);
    char err[FIXTURE_ERR_LEN];
    long long training;
    if (!fixture_attr_int_in(fx, "training", 0, 1, &training, err)) die(EXIT_BAD_INPUT, "%s", err);
    dropout.training = training != 0;
    Tensor x = need_shaped(fx, "x", "");
    Tensor out = dropout_forward(&dropout, x);
    compare(name, out.data, need_as(fx, "out", shape(x)));
    compare_next_draw(fx, name, &rs);
}

static CaseKind kernels[] = {
    {"matmul", test_matmul, 0},         {"matmul_wt_bias", test_matmul_wt_bias, 0},
    {"transpose", test_transpose, 0},   {"dot", test_dot, 0},
    {"sum", test_sum, 0},               {"sum_rows", test_sum_rows, 0},
    {"div_scalar", test_div_scalar, 0}, {"mul_scalar", test_mul_scalar, 0},
    {"exp", test_exp, 0},               {"add_scaled", test_add_scaled, 0},
    {"softmax_rows", test_softmax_rows, 0},
    {"bmm", test_bmm, 0},               {"matmul_nd", test_matmul_nd, 0},
    {"softmax_dim", test_softmax_dim, 0},               {"softmax_rows_nd", test_softmax_rows_nd, 0},
    {"mul_broadcast", test_mul_broadcast, 0},           {"div_broadcast", test_div_broadcast, 0},
    {"masked_fill", test_masked_fill, 0},               {"sum_rows_keepdim", test_sum_rows_keepdim, 0},
    {"dropout", test_dropout, 0},       {"dropout_module", test_dropout_module, 0},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

int main(int argc, char **argv) {
    error_set_program(argv[0]);
    if (argc != 2) die(EXIT_USAGE, "usage: %s fixtures/kernel_cases.h5", argv[0]);
    int missing;
    const int n = run_case_file(argv[1], "kernel", kernels, NKERNELS, &missing);
    failures += missing;
    printf("%d cases, %d failed\n", n, failures);
    return failures ? 1 : 0;
}
