// kernels.c: the arithmetic of kernels.h, each kernel copying the order of
// float operations of the PyTorch 1.13 CPU code path it stands for (Debian's
// build: reference netlib BLAS 3.11, AVX2 kernels, SLEEF 3.5.1). Every kernel
// was compared with torch on random inputs of sizes 1..70 (and larger) and
// gives the same bits; see tests/test_kernels.c for the fixture-driven check.
//
// Build with -ffp-contract=off: netlib BLAS and the vector kernels copied
// here round every product before adding it, and GCC would otherwise fuse
// some of them on an FMA target. The one fused step PyTorch does take (inside
// SLEEF's exp) is written out as fmaf in sleef_expf.c.
#include "kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "sleef_expf.h"

// AVX2 Vectorized<float> holds 8 lanes; the reductions below work lane-wise.
#define LANES 8

// a (M, K) @ b (K, N) -> out (M, N): out[m][n] = sum_k a[m][k] * b[k][n]
// torch.mm / @ (and 1-D @ 2-D, which is mm on one row) -> netlib sgemm,
// case 'N','N': C is zeroed (beta = 0), then for k = 0..K-1 in order
// C += a[m][k] * b[k][n], each product rounded before the add (netlib is
// built without FMA). Starting from +0 matters only for the sign of a zero.
void matmul(float *out, const float *a, const float *b, int M, int K, int N) {
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += a[m * K + k] * b[k * N + n];
            out[m * N + n] = s;
        }
    }
}

// x (M, K) @ w^T, w (N, K), + bias (N) or NULL -> out (M, N)
// out[m][n] = (sum_k x[m][k] * w[n][k]) + bias[n]
// nn.Linear -> F.linear -> addmm(bias, x, w.t()) (or mm without bias). w.t()
// reaches sgemm as case 'T','N', whose inner loop is a dot product:
// temp = 0; temp += x[m][k] * w[n][k] in k order; then C = alpha*temp +
// beta*C with C preloaded with the bias, so the bias is added LAST, once.
// The same case serves queries @ keys.T (keys.T is w.t() for w = keys).
void matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K,
                    int N) {
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += x[m * K + k] * w[n * K + k];
            out[m * N + n] = bias ? s + bias[n] : s;
        }
    }
}

// a[i] (M, K) @ b[i] (K, N) -> out[i] (M, N), for i < batch
// matmul -> bmm_out_or_baddbmm_: small products (K*M*N < 400) run a naive
// triple loop from +0 without FMA, larger ones call sgemm per matrix; both
// give the netlib order above (lib/NUMERICS.md#matrix-products).
void bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    for (long i = 0; i < batch; i++)
        matmul(out + i * M * N, a + i * M * K, b + i * K * N, M, K, N);
}

// a (M, N) -> out (N, M): out[n][m] = a[m][n]; no arithmetic
void transpose(float *out, const float *a, int M, int N) {
    for (int m = 0; m < M; m++) {
        for (int n = 0; n < N; n++) out[n * M + m] = a[m * N + n];
    }
}

// a (n,) . b (n,) -> sum_i a[i] * b[i]
// torch.dot -> netlib sdot: unrolled by 5, but each line adds its products
// to the running sum left to right, so the order is plain: 0 + p0 + p1 + ...
float dot(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

// SumKernel.cpp's multi_row_sum with 4 columns: value (i, k) is
// x[i * row_stride + k * col_stride], and each column k is summed over the
// rows i into out[k]. It is a cascade, so that only sums of similar size
// meet: rows are added in blocks of 2^p (p = max(4, ceil(log2(rows)) / 4))
// into level 0, each full block is carried into level 1, every 2^p carries
// into level 2, and so on over 4 levels; at the end acc0 += acc1, += acc2,
// += acc3. For fewer than 16 rows this is a plain column-wise loop.
static void multi_row_sum(float out[4], const float *x, int64_t rows, int64_t row_stride,
                          int64_t col_stride) {
    enum { LEVELS = 4 };
    int64_t ceil_log2 = 1;  // utils::CeilLog2: 1 for rows <= 2
    if (rows > 2) {
        ceil_log2 = 0;
        while (((int64_t)1 << ceil_log2) < rows) ceil_log2++;
    }
    const int64_t power = ceil_log2 / LEVELS > 4 ? ceil_log2 / LEVELS : 4;
    const int64_t step = (int64_t)1 << power, mask = step - 1;
    float acc[LEVELS][4] = {{0.0f}};

    int64_t i = 0;
    while (i + step <= rows) {
        for (int64_t j = 0; j < step; j++, i++) {
            for (int k = 0; k < 4; k++) acc[0][k] += x[i * row_stride + k * col_stride];
        }
        for (int j = 1; j < LEVELS; j++) {
            for (int k = 0; k < 4; k++) {
                acc[j][k] += acc[j - 1][k];
                acc[j - 1][k] = 0.0f;
            }
            if ((i & (mask << (j * power))) != 0) break;
        }
    }
    for (; i < rows; i++) {
        for (int k = 0; k < 4; k++) acc[0][k] += x[i * row_stride + k * col_stride];
    }
    for (int j = 1; j < LEVELS; j++) {
        for (int k = 0; k < 4; k++) acc[0][k] += acc[j][k];
    }
    for (int k = 0; k < 4; k++) out[k] = acc[0][k];
}

// x: `count` items `stride` floats apart -> their sum: SumKernel.cpp's
// row_sum (ilp_factor 4). Items 4i..4i+3 feed four cascaded accumulators,
// the leftover items are added to accumulator 0, then acc0 += acc1, += acc2,
// += acc3. Used on single floats (stride 1) and on one lane of the 8-float
// vectors (stride LANES).
static float row_sum(const float *x, int64_t count, int64_t stride) {
    float part[4];
    const int64_t rows = count / 4;
    multi_row_sum(part, x, rows, 4 * stride, stride);
    for (int64_t i = rows * 4; i < count; i++) part[0] += x[i * stride];
    return ((part[0] + part[1]) + part[2]) + part[3];
}

// x (n,) -> sum_i x[i]
// Tensor.sum() and sum(dim=-1) on contiguous float rows -> cascade_sum
// (SumKernel.cpp), which is NOT a left-to-right loop:
// - n < 8 (shorter than one AVX2 vector): the scalar row_sum above, so for
//   n = 6: ((((x0 + x4) + x5) + x1) + x2) + x3;
// - n >= 8 (vectorized_inner_sum): lane l sums x[8v + l] over the n/8 whole
//   vectors with row_sum; then a scalar starts at 0, adds the tail
//   x[8(n/8)..n-1] in order, then lanes 0..7 in order.
// The result is finally added to the zero-filled output: 0 + s.
// (Sums above 32768 floats would split across threads if torch had more
// than one; the fixtures' torch runs one.)
float sum(const float *x, int n) {
    if (n < LANES) return 0.0f + row_sum(x, n, 1);
    const int nvec = n / LANES;
    float s = 0.0f;
    for (int i = nvec * LANES; i < n; i++) s += x[i];
    for (int l = 0; l < LANES; l++) s += row_sum(x + l, nvec, LANES);
    return 0.0f + s;
}

// out (n,) = a op b elementwise, a and b (n,): mul_kernel, div_true_kernel,
// add_kernel (alpha 1: a + 1 * b is a plain add). One rounding per element:
// a true IEEE division, not a multiply by 1/b.
void mul_elementwise(float *out, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) out[i] = a[i] * b[i];
}

void div_elementwise(float *out, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) out[i] = a[i] / b[i];
}

void add_elementwise(float *out, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) out[i] = a[i] + b[i];
}

// x (n,) / s -> out (n,): out[i] = x[i] / s
// div_true_kernel: a true IEEE division per element (vdivps), not a multiply
// by 1/s; a Python float divisor is first rounded to float32 (the 0-d
// "wrapped number" is cast to the tensor's dtype), so pass (float)s.
void div_scalar(float *out, const float *x, float s, long n) {
    for (long i = 0; i < n; i++) out[i] = x[i] / s;
}

// x (n,) * s -> out (n,): out[i] = x[i] * s (mul_kernel, one rounding)
void mul_scalar(float *out, const float *x, float s, long n) {
    for (long i = 0; i < n; i++) out[i] = x[i] * s;
}

// x (n,) + s -> out (n,): out[i] = x[i] + s (add_kernel, one rounding)
void add_scalar(float *out, const float *x, float s, long n) {
    for (long i = 0; i < n; i++) out[i] = x[i] + s;
}

// x (n,) -> out (n,): out[i] = e^x[i]
// torch.exp -> vml::vexp -> vec::map -> Sleef_expf8_u10 on every element,
// the tail included (it is loaded into a padded vector), hence sleef_expf.
void exp_elementwise(float *out, const float *x, long n) {
    for (long i = 0; i < n; i++) out[i] = sleef_expf(x[i]);
}

// vec::maximum on one lane: _mm256_max_ps(a, b) (b unless a > b), OR-ed with
// the unordered mask, so any NaN operand gives the all-ones NaN.
static float vec_max(float a, float b) {
    if (isnan(a) || isnan(b)) {
        const uint32_t ones = 0xffffffffu;
        float nan;
        memcpy(&nan, &ones, sizeof nan);
        return nan;
    }
    return a > b ? a : b;
}

static float vec_add(float a, float b) { return a + b; }

// x (n,) -> op over all values: vec::reduce_all (functional_base.h, AVX2).
// n < 8: lane 0 only, left to right: ((x0 op x1) op x2) ...
// n >= 8: lane l folds x[l], x[l+8], ... (the partial tail vector only
// touches its first lanes), then VecReduceAllSIMD's shuffle tree:
// ((a0 op a4) op (a2 op a6)) op ((a1 op a5) op (a3 op a7)).
static float reduce_all(float (*op)(float, float), const float *x, int n) {
    if (n < LANES) {
        float acc = x[0];
        for (int i = 1; i < n; i++) acc = op(acc, x[i]);
        return acc;
    }
    float a[LANES];
    for (int l = 0; l < LANES; l++) a[l] = x[l];
    for (int d = LANES; d < n; d += LANES) {
        for (int l = 0; l < LANES && d + l < n; l++) a[l] = op(a[l], x[d + l]);
    }
    for (int l = 0; l < 4; l++) a[l] = op(a[l], a[l + 4]);
    a[0] = op(a[0], a[2]);
    a[1] = op(a[1], a[3]);
    return op(a[0], a[1]);
}

// x (n,) -> out (n,): out[j] = e^(x[j] - max) * (1 / sum_k e^(x[k] - max))
// torch.softmax(dim=-1) -> _vec_softmax_lastdim (SoftMaxKernel.cpp): max by
// reduce_all with vec::maximum, exp(x - max) by vec::map (SLEEF), the sum by
// reduce_all with +, then ONE division 1/sum and a multiply per element.
// Extremes follow from the same steps: a +inf or NaN makes the whole row NaN
// (inf - inf), -inf entries give 0, an all -inf row is NaN.
void softmax_row(float *out, const float *x, int n) {
    if (n <= 0) return;
    const float max = reduce_all(vec_max, x, n);
    for (int j = 0; j < n; j++) out[j] = sleef_expf(x[j] - max);
    const float inv = 1.0f / reduce_all(vec_add, out, n);
    for (int j = 0; j < n; j++) out[j] = out[j] * inv;
}

// x (rows, n) -> out (rows, n): each row on its own (the rows of a (b, T, T)
// or (b, h, T, T) tensor are independent jobs of the same kernel).
void softmax_rows(float *out, const float *x, long rows, int n) {
    for (long r = 0; r < rows; r++) softmax_row(out + r * n, x + r * n, n);
}

// x (rows, n) -> out (rows,): x.sum(dim=-1), cascade_sum on every row
void sum_rows(float *out, const float *x, long rows, int n) {
    for (long r = 0; r < rows; r++) out[r] = sum(x + r * n, n);
}

// --- softmax over a dimension that is not the last ----------------------------------
// torch.softmax(x, dim) with dim not the last -> softmax_kernel ->
// _vec_softmax (SoftMaxKernel.cpp), NOT the last-dim kernel above. x is
// viewed as (outer, n, inner); each of the outer * inner columns (n values
// `inner` apart) is normalised on its own. Walking the flat columns, 8
// adjacent ones that fit within their row of `inner` go through the vector
// path; the rest, one by one, through a scalar tail (on one thread: the last
// inner % 8 of each row). The two paths differ in their max and their exp:
//
//   path    max                                exp                      scale
//   vector  vec::maximum (NaN -> all-ones NaN)   SLEEF expf (sleef_expf)  e / s
//   tail    std::max: (m < x) ? x : m          std::exp: glibc's expf   e / s
//
// Both sum s = 0 + e_0 + e_1 + ... in order and DIVIDE (no reciprocal).
// Checked against torch 1.13 on 6.9 M values of 4,847 shapes, -inf columns,
// NaN and infinities included. The tail's bits are glibc's expf's (this
// machine's, with FMA); one thread (two would move the 8-column blocks).

static float std_max(float a, float b) { return (a < b) ? b : a; }

// One column x[d * stride], d < n -> y: y_d = e_d / s, e_d = exp(x_d - m)
static void softmax_column(float *y, const float *x, int n, long stride, int vector_path) {
    float m = x[0];
    for (int d = 1; d < n; d++) m = vector_path ? vec_max(m, x[d * stride]) : std_max(m, x[d * stride]);
    float s = 0.0f;
    for (int d = 0; d < n; d++) {
        const float e = vector_path ? sleef_expf(x[d * stride] - m) : expf(x[d * stride] - m);
        y[d * stride] = e;
        s = s + e;
    }
    for (int d = 0; d < n; d++) y[d * stride] = y[d * stride] / s;
}

// x (outer, n, inner) -> out: softmax over the middle axis
void softmax_dim(float *out, const float *x, long outer, int n, long inner) {
    for (long o = 0; o < outer; o++) {
        const long row = o * (long)n * inner;
        for (long i = 0; i < inner; i++) {
            const int vector_path = i - i % LANES + LANES <= inner;  // in a whole block of 8 columns
            softmax_column(out + row + i, x + row + i, n, inner, vector_path);
        }
    }
}
