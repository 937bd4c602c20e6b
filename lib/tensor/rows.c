// rows.c: the scalar reference of the row-wise arithmetic, forward and
// backward (rows.h): sums (torch's cascade_sum), elementwise and scalar
// multiplication, division and addition, exp (SLEEF's expf), the softmax
// (last dim and any other) and their backward, the bias's and masked_fill's
// gradients. Each kernel copies the order of float operations of the
// PyTorch 1.13.1 CPU code path named above it (Debian's build: AVX2 kernels
// compiled by GCC with its default FMA contraction, SLEEF 3.5.1, one
// thread). Every kernel was compared with torch on random inputs of sizes
// 1..70 (and larger); tests/test_kernels.c and tests/test_backward.c check
// them on the fixtures. rows_fast.c gives the same bits faster and falls
// back to these.
//
// Build with -ffp-contract=off: the vector kernels copied here round every
// product before adding it, and GCC would otherwise fuse some of them on an
// FMA target. The fused steps torch does take (SLEEF's exp; the softmax's
// backward, where GCC contracted the AVX2 build's `acc + x * y`) are
// written out as fmaf.
#include "rows.h"

#include <math.h>
#include <stdint.h>

#include "error.h"
#include "sleef_expf.h"
#include "tensor.h"
#include "ulp.h"

// AVX2 Vectorized<float> holds 8 lanes; the reductions below work lane-wise.
#define LANES 8

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
float rows_sum(const float *x, int n) {
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
void rows_mul(float *out, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) out[i] = a[i] * b[i];
}

void rows_div(float *out, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) out[i] = a[i] / b[i];
}

void rows_add(float *out, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) out[i] = a[i] + b[i];
}

// x (n,) / s -> out (n,): out[i] = x[i] / s
// div_true_kernel: a true IEEE division per element (vdivps), not a multiply
// by 1/s; a Python float divisor is first rounded to float32 (the 0-d
// "wrapped number" is cast to the tensor's dtype), so pass (float)s.
void rows_div_scalar(float *out, const float *x, float s, long n) {
    for (long i = 0; i < n; i++) out[i] = x[i] / s;
}

// x (n,) * s -> out (n,): out[i] = x[i] * s (mul_kernel, one rounding)
void rows_mul_scalar(float *out, const float *x, float s, long n) {
    for (long i = 0; i < n; i++) out[i] = x[i] * s;
}

// x (n,) + s -> out (n,): out[i] = x[i] + s (add_kernel, one rounding)
void rows_add_scalar(float *out, const float *x, float s, long n) {
    for (long i = 0; i < n; i++) out[i] = x[i] + s;
}

// x (n,) -> out (n,): out[i] = e^x[i]
// torch.exp -> vml::vexp -> vec::map -> Sleef_expf8_u10 on every element,
// the tail included (it is loaded into a padded vector), hence sleef_expf.
void rows_exp(float *out, const float *x, long n) {
    for (long i = 0; i < n; i++) out[i] = sleef_expf(x[i]);
}

// vec::maximum on one lane: _mm256_max_ps(a, b) (b unless a > b), OR-ed with
// the unordered mask, so any NaN operand gives the all-ones NaN.
static float vec_max(float a, float b) {
    if (isnan(a) || isnan(b)) return bits_float(0xffffffffu);
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
void rows_softmax_row(float *out, const float *x, int n) {
    if (n <= 0) return;
    const float max = reduce_all(vec_max, x, n);
    for (int j = 0; j < n; j++) out[j] = sleef_expf(x[j] - max);
    const float inv = 1.0f / reduce_all(vec_add, out, n);
    for (int j = 0; j < n; j++) out[j] = out[j] * inv;
}

// x (rows, n) -> out (rows, n): each row on its own (the rows of a (b, T, T)
// or (b, h, T, T) tensor are independent jobs of the same kernel).
void rows_softmax_rows(float *out, const float *x, long rows, int n) {
    for (long r = 0; r < rows; r++) rows_softmax_row(out + r * n, x + r * n, n);
}

// x (rows, n) -> out (rows,): x.sum(dim=-1), cascade_sum on every row
void rows_sum_rows(float *out, const float *x, long rows, int n) {
    for (long r = 0; r < rows; r++) out[r] = rows_sum(x + r * n, n);
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
void rows_softmax_dim(float *out, const float *x, long outer, int n, long inner) {
    for (long o = 0; o < outer; o++) {
        const long row = o * (long)n * inner;
        for (long i = 0; i < inner; i++) {
            const int vector_path = i - i % LANES + LANES <= inner;  // in a whole block of 8 columns
            softmax_column(out + row + i, x + row + i, n, inner, vector_path);
        }
    }
}

// --- backward -------------------------------------------------------------------------

// db (out_f,) = dy summed over the rows: AddmmBackward0 passes grad through for
// `self` (beta 1), and the engine's validate_outputs
// (torch/csrc/autograd/engine.cpp) reduces it to the bias shape with
// at::sum_to (aten/src/ATen/ExpandUtils.h), i.e. grad.sum(0): the order of the
// sums below. For a 3-D input with a batch of one, torch holds the key
// projection's grad as a transposed view (it came back through
// keys.transpose(1, 2)), which makes the reduced axis the contiguous one.
void rows_linear_backward_bias(float *db, const float *dy, long rows, int out_f, bool dy_colmajor) {
    if (dy_colmajor) rows_sum_dim0_cols(db, dy, rows, out_f);
    else rows_sum_dim0_rows(db, dy, rows, out_f);
}

// --- reductions -----------------------------------------------------------------------
// sum(0) is cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp), the same
// kernel as sum above, here on an outer reduction.

// utils::CeilLog2 (SumKernel.cpp): 1 for x <= 2, else the bit length of x - 1
static int64_t ceil_log2(int64_t x) {
    if (x <= 2) return 1;
    int64_t bits = 0;
    for (uint64_t v = (uint64_t)(x - 1); v; v >>= 1) bits++;
    return bits;
}

// multi_row_sum (SumKernel.cpp) for one column, values x[i * stride], i < rows:
// a 4-level cascade. Level 0 adds blocks of 2^p values (p = max(4,
// CeilLog2(rows) / 4)); each full block is carried into level 1, level 1 into
// level 2 every 2^p blocks, level 2 into level 3 every 2^(2p); leftovers go
// into level 0; at the end level 0 += level 1, += level 2, += level 3.
static float cascade_column(const float *x, int64_t rows, int64_t stride) {
    enum { LEVELS = 4 };
    const int64_t power = ceil_log2(rows) / LEVELS > 4 ? ceil_log2(rows) / LEVELS : 4;
    const int64_t step = (int64_t)1 << power, mask = step - 1;
    float acc[LEVELS] = {0.0f, 0.0f, 0.0f, 0.0f};
    int64_t i = 0;
    while (i + step <= rows) {
        for (int64_t j = 0; j < step; j++, i++) acc[0] += x[i * stride];
        for (int j = 1; j < LEVELS; j++) {
            acc[j] += acc[j - 1];
            acc[j - 1] = 0.0f;
            if ((i & (mask << (j * power))) != 0) break;
        }
    }
    for (; i < rows; i++) acc[0] += x[i * stride];
    for (int j = 1; j < LEVELS; j++) acc[0] += acc[j];
    return acc[0];
}

// row_sum (SumKernel.cpp, ilp 4) for one column: values 4q + k (q < rows / 4)
// feed partial k through cascade_column, the last rows % 4 go to partial 0 in
// order, then ((p0 + p1) + p2) + p3.
static float row_sum_column(const float *x, int64_t rows, int64_t stride) {
    const int64_t q = rows / 4;
    float part[4];
    for (int k = 0; k < 4; k++) part[k] = cascade_column(x + k * stride, q, 4 * stride);
    for (int64_t i = q * 4; i < rows; i++) part[0] += x[i * stride];
    return ((part[0] + part[1]) + part[2]) + part[3];
}

// g (M, N) row-major -> out (N,): out[j] = 0 + sum_i g[i][j]
// cascade_sum on an outer reduction (the reduced rows are N floats apart):
// - N == 1: the column is contiguous: sum above;
// - N >= 8, vectorized_outer_sum: columns in groups of 32 (four AVX2 vectors)
//   each summed by multi_row_sum over all M rows, then groups of 8 and the
//   last N % 8 columns by row_sum;
// - N = 2..7, scalar_outer_sum: groups of 4 columns by multi_row_sum, the
//   rest by row_sum.
// Each result is added to the zero-filled output: 0 + s (a -0 becomes +0).
void rows_sum_dim0_rows(float *out, const float *g, long M, int N) {
    if (N == 1) {
        out[0] = rows_sum(g, (int)M);
        return;
    }
    int j = 0;
    if (N >= LANES) {
        for (; j + 4 * LANES <= N; j += 4 * LANES)
            for (int c = j; c < j + 4 * LANES; c++) out[c] = 0.0f + cascade_column(g + c, M, N);
    } else {
        for (; j + 4 <= N; j += 4)
            for (int c = j; c < j + 4; c++) out[c] = 0.0f + cascade_column(g + c, M, N);
    }
    for (; j < N; j++) out[j] = 0.0f + row_sum_column(g + j, M, N);
}

// g (M, N) held column-major by torch -> out (N,): cascade_sum's inner
// reduction (vectorized_inner_sum / scalar_inner_sum): every column summed as
// Tensor.sum() of M contiguous floats (sum above), read with stride N here.
void rows_sum_dim0_cols(float *out, const float *g, long M, int N) {
    Tensor col = tensor_empty(SIZE((int)M));
    for (int j = 0; j < N; j++) {
        for (long i = 0; i < M; i++) col.data[i] = g[i * N + j];
        out[j] = rows_sum(col.data, (int)M);
    }
    tensor_free(col);
}

// x.sum() -> SumBackward0: grad.expand(sizes) (derivatives.yaml `sum`): every
// element sees the upstream scalar (1 for loss.backward()); no arithmetic.
void rows_sum_backward(float *dx, float g, long n) {
    for (long i = 0; i < n; i++) dx[i] = g;
}

// --- softmax --------------------------------------------------------------------------
// SoftmaxBackward0 -> _softmax_backward_data(grad, output, dim)
// (derivatives.yaml `_softmax`) -> softmax_backward_cpu_out
// (aten/src/ATen/native/SoftMax.cpp): dx = y * (dy - sum_j dy_j * y_j).

// Last dim: _vec_host_softmax_backward_lastdim (native/cpu/SoftMaxKernel.cpp):
// s = vec::map2_reduce_all(x * y, x + y, dy, y, n) (cpu/vec/functional_base.h),
// then dx_i = (dy_i - s) * y_i (vec::map2, two roundings).
// - n < 8: one partial vector: products rounded, added left to right:
//   s = ((p0 + p1) + p2) + ...
// - n >= 8: lane l starts at dy_l * y_l (rounded); every further element of
//   the lane (whole blocks, then the first n % 8 lanes of the tail) is added
//   as acc_l = fmaf(dy, y, acc_l): GCC contracted the AVX2 build's
//   `acc + x * y` into vfmadd. Then VecReduceAllSIMD's tree
//   ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
void rows_softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n) {
    if (n <= 0) return;
    for (long r = 0; r < rows; r++) {
        const float *g = dy + r * n, *o = y + r * n;
        float *d = dx + r * n;
        float s;
        if (n < LANES) {
            s = g[0] * o[0];
            for (int i = 1; i < n; i++) s = s + g[i] * o[i];
        } else {
            float a[LANES];
            for (int l = 0; l < LANES; l++) a[l] = g[l] * o[l];
            for (int base = LANES; base < n; base += LANES)
                for (int l = 0; l < LANES && base + l < n; l++) a[l] = fmaf(g[base + l], o[base + l], a[l]);
            s = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
        }
        for (int i = 0; i < n; i++) d[i] = (g[i] - s) * o[i];
    }
}

// Any other dim: _vec_softmax_backward (SoftMaxKernel.cpp), x viewed as
// (outer, n, inner). Every column on its own: s = +0, s = fmaf(dy_d, y_d, s)
// for d = 0..n-1, then dx_d = y_d * (dy_d - s). torch walks the columns in
// chunks, a vector path and a scalar tail, both compiled with contraction:
// the chunking does not show in the bits.
void rows_softmax_dim_backward(float *dx, const float *dy, const float *y, long outer, int n, long inner) {
    for (long o = 0; o < outer; o++) {
        const long base = o * n * inner;
        for (long i = 0; i < inner; i++) {
            float s = 0.0f;
            for (long d = 0; d < n; d++) s = fmaf(dy[base + d * inner + i], y[base + d * inner + i], s);
            for (long d = 0; d < n; d++) {
                const long at = base + d * inner + i;
                dx[at] = y[at] * (dy[at] - s);
            }
        }
    }
}

// --- pointwise ------------------------------------------------------------------------

// MaskedFillBackward0: grad.masked_fill(mask, 0) (derivatives.yaml
// `masked_fill_.Scalar`) with the forward's mask triu(ones, 1).bool()[:T, :T]
// broadcast over the batch: +0.0 at every masked entry, whatever it held.
void rows_masked_fill_causal_backward(float *g, long batch, int T) {
    for (long b = 0; b < batch; b++)
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T; j++) g[(b * T + i) * T + j] = 0.0f;
}

// DivBackward0 for `t / python_float`: div_tensor_self_backward
// (FunctionsManual.cpp) = grad / other, the forward's div_true_kernel
// (native/cpu/BinaryOpsKernel.cpp): a true division by the float32 divisor.
void rows_div_scalar_backward(float *dx, const float *dy, float s, long n) { rows_div_scalar(dx, dy, s, n); }

// InputBuffer::accumulate (torch/csrc/autograd/input_buffer.cpp): a second
// gradient for one tensor is added as old + new. The first is assigned
// (AccumulateGrad steals or copies it, never adds it to zeros).
void rows_accumulate_grad(float *acc, const float *g, long n) { rows_add(acc, acc, g, n); }
