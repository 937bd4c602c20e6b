// test_kernels.c: every kernel of lib/kernels.h against PyTorch's results.
//
// usage: test_kernels fixtures/kernel_cases.h5
//
// The fixture (written by tools/kernel_cases.py from real torch 1.13) holds
// one group per case: the inputs, torch's output "out", and which kernel the
// case is for. Each case runs the C kernel on the inputs and compares every
// value with torch's in ulps; the kernels promise the same bits, so anything
// but 0 ulp fails (NaN matches only NaN). One line per case:
//   ok|FAIL <case>: worst N ulp at [i]
// and the exit status is 1 if any case fails or any kernel has no case.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fixture.h"
#include "kernels.h"
#include "tensor.h"
#include "ulp.h"

static int failures;

// Reads a float32 dataset of exactly the given shape; a missing or misshapen
// dataset is a broken fixture, which fails the test on the spot.
static Tensor need(Fixture *fx, const char *name, int ndim, int d0, int d1) {
    Shape want = {ndim, {d0, d1}};
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
    Shape want = {1, {n, 0}};
    return fixture_read(fx, name, want, &t, err);
}

// got vs torch's want, value by value: prints the case's line and counts it.
static void compare(const char *name, const float *got, Tensor want) {
    const int n = tensor_numel(want);
    uint32_t worst = 0;
    int at = 0;
    for (int i = 0; i < n; i++) {
        const uint32_t d = ulp_distance(got[i], want.data[i]);
        if (d > worst) worst = d, at = i;
    }
    char where[48];
    if (want.ndim == 2) snprintf(where, sizeof where, "[%d, %d]", at / want.cols, at % want.cols);
    else if (want.ndim == 1) snprintf(where, sizeof where, "[%d]", at);
    else snprintf(where, sizeof where, "[]");
    if (worst == 0) {
        printf("ok %s: worst 0 ulp at %s\n", name, where);
        return;
    }
    failures++;
    if (worst == UINT32_MAX)
        printf("FAIL %s: worst NaN-vs-number at %s: C %a, torch %a\n", name, where, got[at], want.data[at]);
    else
        printf("FAIL %s: worst %u ulp at %s: C %a, torch %a\n", name, worst, where, got[at], want.data[at]);
}

static void test_matmul(Fixture *fx, const char *name) {
    const int M = need_int(fx, "M"), K = need_int(fx, "K"), N = need_int(fx, "N");
    const int row = M == 1 && is_rank1(fx, "a", K);  // x (K,) @ W (K, N) -> (N,)
    Tensor a = row ? need(fx, "a", 1, K, 0) : need(fx, "a", 2, M, K);
    Tensor b = need(fx, "b", 2, K, N);
    Tensor want = row ? need(fx, "out", 1, N, 0) : need(fx, "out", 2, M, N);
    Tensor got = tensor_copy(want);
    matmul(got.data, a.data, b.data, M, K, N);
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
    matmul_wt_bias(got.data, x.data, w.data, bias, M, K, N);
    compare(name, got.data, want);
}

static void test_transpose(Fixture *fx, const char *name) {
    const int M = need_int(fx, "M"), N = need_int(fx, "N");
    Tensor a = need(fx, "a", 2, M, N), want = need(fx, "out", 2, N, M);
    Tensor got = tensor_copy(want);
    transpose(got.data, a.data, M, N);
    compare(name, got.data, want);
}

static void test_dot(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor a = need(fx, "a", 1, n, 0), b = need(fx, "b", 1, n, 0), want = need(fx, "out", 0, 0, 0);
    const float got = dot(a.data, b.data, n);
    compare(name, &got, want);
}

static void test_sum(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), want = need(fx, "out", 0, 0, 0);
    const float got = sum(x.data, n);
    compare(name, &got, want);
}

// x.sum(dim=-1): the same kernel on every row.
static void test_sum_rows(Fixture *fx, const char *name) {
    const int rows = need_int(fx, "rows"), n = need_int(fx, "n");
    Tensor x = need(fx, "x", 2, rows, n), want = need(fx, "out", 1, rows, 0);
    Tensor got = tensor_copy(want);
    for (int r = 0; r < rows; r++) got.data[r] = sum(x.data + (size_t)r * n, n);
    compare(name, got.data, want);
}

static void test_div_scalar(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), s = need(fx, "s", 0, 0, 0), want = need(fx, "out", 1, n, 0);
    Tensor got = tensor_copy(want);
    div_scalar(got.data, x.data, s.data[0], n);
    compare(name, got.data, want);
}

static void test_mul_scalar(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), s = need(fx, "s", 0, 0, 0), want = need(fx, "out", 1, n, 0);
    Tensor got = tensor_copy(want);
    mul_scalar(got.data, x.data, s.data[0], n);
    compare(name, got.data, want);
}

static void test_exp(Fixture *fx, const char *name) {
    const int n = need_int(fx, "n");
    Tensor x = need(fx, "x", 1, n, 0), want = need(fx, "out", 1, n, 0);
    Tensor got = tensor_copy(want);
    exp_elementwise(got.data, x.data, n);
    compare(name, got.data, want);
}

// context_vec = zeros(d); for i: context_vec += attn_weights[i] * x_i
static void test_add_scaled(Fixture *fx, const char *name) {
    const int T = need_int(fx, "T"), d = need_int(fx, "d");
    Tensor w = need(fx, "w", 1, T, 0), x = need(fx, "x", 2, T, d), want = need(fx, "out", 1, d, 0);
    Tensor got = tensor_vector(d);
    for (int i = 0; i < T; i++) add_scaled(got.data, w.data[i], x.data + (size_t)i * d, d);
    compare(name, got.data, want);
}

// torch.softmax(x, dim=-1) on every row; a 1-D x is one row.
static void test_softmax_rows(Fixture *fx, const char *name) {
    const int rows = need_int(fx, "rows"), n = need_int(fx, "n");
    const int one = rows == 1 && is_rank1(fx, "x", n);
    Tensor x = one ? need(fx, "x", 1, n, 0) : need(fx, "x", 2, rows, n);
    Tensor want = one ? need(fx, "out", 1, n, 0) : need(fx, "out", 2, rows, n);
    Tensor got = tensor_copy(want);
    for (int r = 0; r < rows; r++) softmax_row(got.data + (size_t)r * n, x.data + (size_t)r * n, n);
    compare(name, got.data, want);
}

static struct {
    const char *kernel;
    void (*run)(Fixture *fx, const char *name);
    int cases;
} kernels[] = {
    {"matmul", test_matmul, 0},         {"matmul_wt_bias", test_matmul_wt_bias, 0},
    {"transpose", test_transpose, 0},   {"dot", test_dot, 0},
    {"sum", test_sum, 0},               {"sum_rows", test_sum_rows, 0},
    {"div_scalar", test_div_scalar, 0}, {"mul_scalar", test_mul_scalar, 0},
    {"exp", test_exp, 0},               {"add_scaled", test_add_scaled, 0},
    {"softmax_rows", test_softmax_rows, 0},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

typedef struct {
    char (*names)[128];
    int len, cap;
} Names;

static void collect(const char *name, const char *role, void *ctx) {
    (void)role;
    Names *n = ctx;
    if (n->len == n->cap) {
        n->cap = n->cap ? 2 * n->cap : 256;
        n->names = realloc(n->names, (size_t)n->cap * sizeof *n->names);
        if (!n->names) die(EXIT_BAD_INPUT, "out of memory listing cases");
    }
    snprintf(n->names[n->len++], sizeof *n->names, "%s", name);
}

// One case: its group, from the snapshot of the whole file.
static void run_case(Fixture *all, const char *name) {
    char err[FIXTURE_ERR_LEN], kernel[64];
    Fixture *fx = fixture_group(all, name, err);
    if (!fx) die(EXIT_BAD_INPUT, "%s", err);
    if (!fixture_attr_string(fx, "kernel", kernel, sizeof kernel, err)) die(EXIT_BAD_INPUT, "%s", err);
    int k = 0;
    while (k < NKERNELS && strcmp(kernels[k].kernel, kernel) != 0) k++;
    if (k == NKERNELS) die(EXIT_BAD_INPUT, "%s: unknown kernel '%s'", fixture_path(fx), kernel);
    kernels[k].run(fx, name);
    kernels[k].cases++;
    fixture_close(fx);
    tensor_release_all();
}

int main(int argc, char **argv) {
    error_set_program(argv[0]);
    if (argc != 2) die(EXIT_USAGE, "usage: %s fixtures/kernel_cases.h5", argv[0]);
    char err[FIXTURE_ERR_LEN];
    // Every group read in one child process: one snapshot, not one per case.
    Fixture *fx = fixture_open_all(argv[1], err);
    if (!fx) die(EXIT_BAD_INPUT, "%s", err);
    Names cases = {0};
    if (!fixture_each_group(fx, collect, &cases, err)) die(EXIT_BAD_INPUT, "%s", err);

    for (int i = 0; i < cases.len; i++) run_case(fx, cases.names[i]);
    fixture_close(fx);
    // A fixture that lost a kernel's cases must not pass by testing nothing.
    for (int k = 0; k < NKERNELS; k++) {
        if (kernels[k].cases == 0) {
            printf("FAIL %s: no case in %s\n", kernels[k].kernel, argv[1]);
            failures++;
        }
    }
    printf("%d cases, %d failed\n", cases.len, failures);
    free(cases.names);
    return failures ? 1 : 0;
}
