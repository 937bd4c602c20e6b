// backward_kernels.c: the arithmetic of backward_kernels.h. Each kernel
// copies the order of float operations of the PyTorch 1.13.1 CPU code path
// named above it (Debian's build: reference netlib BLAS 3.11, AVX2 kernels
// compiled by GCC with its default FMA contraction, one thread). Source
// locations are those of Debian's pytorch_1.13.1+dfsg tree (aten/src/ATen/...,
// torch/csrc/autograd/...). Every kernel is checked against torch's autograd
// by tests/test_backward.c on fixtures/backward_cases.h5.
//
// Why a file of its own rather than beside each forward in kernels.c: the
// forwards are checked by one fixture (kernel_cases.h5) and the backwards by
// another (backward_cases.h5); keeping each file tested by one fixture keeps
// it reviewable as a whole. Each backward names the forward it differentiates,
// and where the backward IS a forward kernel (sum, mul, div, add) it calls it.
//
// Build with -ffp-contract=off (global in this project): the products below
// are rounded before they are added, as netlib does. The one place torch
// fuses (softmax's backward, where GCC contracted the AVX2 build's
// `acc + x * y`) is written as fmaf.
#include "backward_kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "tensor.h"

// AVX2 Vectorized<float> holds 8 lanes.
#define LANES 8

// --- products -----------------------------------------------------------------------
// Every gradient product of mm, addmm, bmm and matmul ends in netlib sgemm
// with alpha = 1, beta = 0, or, for a bmm with k*n*p < 400, in
// baddbmm_cpu_kernel's naive loop (aten/src/ATen/native/LinearAlgebra.cpp
// bmm_out_or_baddbmm_). Which operand is transposed is chosen from the strides
// (mm_mat1_backward / mm_mat2_backward in
// torch/csrc/autograd/FunctionsManual.cpp, addmm_impl_cpu_ in LinearAlgebra.cpp),
// but netlib's four cases (sgemm.f: 'N' columns updated C += temp * A,
// 'T' dot products temp += A * B) give the same bits at alpha 1 / beta 0:
// each element is +0 + p_0 + p_1 + ... over the contraction index in
// increasing order, products rounded, no FMA, no zero skipped. The loops
// below are row updates for speed; no element's order changes.

// out = a (M, K) @ b (K, N); g (M, N) -> da (M, K) = g @ b^T:
// da[m][k] = +0 + sum_n g[m][n] * b[k][n], n ascending (MmBackward0's mat1 grad)
void matmul_backward_a(float *da, const float *g, const float *b, int M, int K, int N) {
    for (long m = 0; m < M; m++) {
        const float *grow = g + m * N;
        for (long k = 0; k < K; k++) {
            const float *brow = b + k * N;
            float s = 0.0f;
            for (long n = 0; n < N; n++) s += grow[n] * brow[n];
            da[m * K + k] = s;
        }
    }
}

// out = a (M, K) @ b (K, N); g (M, N) -> db (K, N) = a^T @ g:
// db[k][n] = +0 + sum_m a[m][k] * g[m][n], m ascending (MmBackward0's mat2 grad)
void matmul_backward_b(float *db, const float *a, const float *g, int M, int K, int N) {
    for (long i = 0; i < (long)K * N; i++) db[i] = 0.0f;
    for (long m = 0; m < M; m++) {
        const float *grow = g + m * N;
        for (long k = 0; k < K; k++) {
            const float av = a[m * K + k];
            float *row = db + k * N;
            for (long n = 0; n < N; n++) row[n] += av * grow[n];
        }
    }
}

// BmmBackward0 (tools/autograd/derivatives.yaml `bmm`: grad.bmm(mat2.mH),
// self.mH.bmm(grad)); matmul's expand / reshape / _unsafe_view around bmm only
// move data (_matmul_impl, LinearAlgebra.cpp).
void bmm_backward(float *da, float *db, const float *g, const float *a, const float *b, long batch, int M, int K,
                  int N) {
    for (long i = 0; i < batch; i++) {
        const float *gi = g + i * M * N;
        if (da) matmul_backward_a(da + i * M * K, gi, b + i * K * N, M, K, N);
        if (db) matmul_backward_b(db + i * K * N, a + i * M * K, gi, M, K, N);
    }
}

// --- nn.Linear ------------------------------------------------------------------------
// Forward (kernels.c matmul_wt_bias): F.linear -> addmm(bias, x, w.t()), or
// mm / matmul without a bias, over all rows at once (aten/src/ATen/native/Linear.cpp).

// dx (rows, in_f) = dy @ w: dx[r][k] = +0 + sum_n dy[r][n] * w[n][k], n ascending
// (mm_mat1_backward, general branch)
void linear_backward_x(float *dx, const float *dy, const float *w, long rows, int in_f, int out_f) {
    for (long r = 0; r < rows; r++) {
        float *row = dx + r * in_f;
        for (long k = 0; k < in_f; k++) row[k] = 0.0f;
        for (long n = 0; n < out_f; n++) {
            const float gv = dy[r * out_f + n];
            const float *wrow = w + n * in_f;
            for (long k = 0; k < in_f; k++) row[k] += gv * wrow[k];
        }
    }
}

// dw (out_f, in_f) = dy^T @ x: dw[n][k] = +0 + sum_r dy[r][n] * x[r][k], rows ascending
// over all rows (mm_mat2_backward sees w.t() column-major and returns
// (grad.t().mm(x)).t(); TBackward0 transposes it back)
// That is matmul_backward_b with a = dy (rows, out_f) and g = x (rows, in_f).
void linear_backward_w(float *dw, const float *dy, const float *x, long rows, int in_f, int out_f) {
    matmul_backward_b(dw, dy, x, (int)rows, out_f, in_f);
}

// db (out_f,) = dy summed over the rows: AddmmBackward0 passes grad through for
// `self` (beta 1), and the engine's validate_outputs
// (torch/csrc/autograd/engine.cpp) reduces it to the bias shape with
// at::sum_to (aten/src/ATen/ExpandUtils.h), i.e. grad.sum(0): the order of the
// sums below. For a 3-D input with a batch of one, torch holds the key
// projection's grad as a transposed view (it came back through
// keys.transpose(1, 2)), which makes the reduced axis the contiguous one.
void linear_backward_bias(float *db, const float *dy, long rows, int out_f, bool dy_colmajor) {
    if (dy_colmajor) sum_dim0_cols(db, dy, rows, out_f);
    else sum_dim0_rows(db, dy, rows, out_f);
}

// --- reductions -----------------------------------------------------------------------
// sum(0) is cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp), the same
// kernel as kernels.c sum, here on an outer reduction.

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
// - N == 1: the column is contiguous: kernels.c sum;
// - N >= 8, vectorized_outer_sum: columns in groups of 32 (four AVX2 vectors)
//   each summed by multi_row_sum over all M rows, then groups of 8 and the
//   last N % 8 columns by row_sum;
// - N = 2..7, scalar_outer_sum: groups of 4 columns by multi_row_sum, the
//   rest by row_sum.
// Each result is added to the zero-filled output: 0 + s (a -0 becomes +0).
void sum_dim0_rows(float *out, const float *g, long M, int N) {
    if (N == 1) {
        out[0] = sum(g, (int)M);
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
// Tensor.sum() of M contiguous floats (kernels.c sum), read with stride N here.
void sum_dim0_cols(float *out, const float *g, long M, int N) {
    Tensor col = tensor_empty(SIZE((int)M));
    for (int j = 0; j < N; j++) {
        for (long i = 0; i < M; i++) col.data[i] = g[i * N + j];
        out[j] = sum(col.data, (int)M);
    }
    tensor_free(col);
}

// x.sum() -> SumBackward0: grad.expand(sizes) (derivatives.yaml `sum`): every
// element sees the upstream scalar (1 for loss.backward()); no arithmetic.
void sum_backward(float *dx, float g, long n) {
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
void softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n) {
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
void softmax_dim_backward(float *dx, const float *dy, const float *y, long outer, int n, long inner) {
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
void masked_fill_causal_backward(float *g, long batch, int T) {
    for (long b = 0; b < batch; b++)
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T; j++) g[(b * T + i) * T + j] = 0.0f;
}

// DivBackward0 for `t / python_float`: div_tensor_self_backward
// (FunctionsManual.cpp) = grad / other, the forward's div_true_kernel
// (native/cpu/BinaryOpsKernel.cpp): a true division by the float32 divisor.
void div_scalar_backward(float *dx, const float *dy, float s, long n) { div_scalar(dx, dy, s, n); }

// Dropout in training mode is input * noise (_dropout_impl,
// native/Dropout.cpp: noise = bernoulli_(1 - p).div_(1 - p)), so its node is
// MulBackward0: mul_tensor_backward (FunctionsManual.cpp) = grad * noise, one
// rounding. Eval mode and p = 0 return the input itself: no node at all.
void dropout_backward(float *dx, const float *dy, const float *noise, long n) { mul_elementwise(dx, dy, noise, n); }

// InputBuffer::accumulate (torch/csrc/autograd/input_buffer.cpp): a second
// gradient for one tensor is added as old + new. The first is assigned
// (AccumulateGrad steals or copies it, never adds it to zeros).
void accumulate_grad(float *acc, const float *g, long n) { add_elementwise(acc, acc, g, n); }

// --- data movement --------------------------------------------------------------------

// CatBackward0: cat_tensors_backward (FunctionsManual.cpp) gives input i
// grad.narrow(dim, offset, width)
void cat_lastdim_backward(float *dpart, const float *dout, long rows, int total, int offset, int width) {
    for (long r = 0; r < rows; r++)
        memcpy(dpart + r * width, dout + r * total + offset, (size_t)width * sizeof(float));
}

// StackBackward0: stack_tensors_backward (FunctionsManual.cpp) gives input i grad.select(dim, i)
void stack_backward(float *dpart, const float *dout, int i, long m) {
    memcpy(dpart, dout + (long)i * m, (size_t)m * sizeof(float));
}

// (b, T, h * hd) -> (b, h, T, hd)
void heads_split(float *out, const float *in, int b, int T, int h, int hd) {
    for (long i = 0; i < b; i++)
        for (long t = 0; t < T; t++)
            for (long k = 0; k < h; k++)
                memcpy(out + ((i * h + k) * T + t) * hd, in + ((i * T + t) * h + k) * hd,
                       (size_t)hd * sizeof(float));
}

// (b, h, T, hd) -> (b, T, h * hd)
void heads_merge(float *out, const float *in, int b, int T, int h, int hd) {
    for (long i = 0; i < b; i++)
        for (long t = 0; t < T; t++)
            for (long k = 0; k < h; k++)
                memcpy(out + ((i * T + t) * h + k) * hd, in + ((i * h + k) * T + t) * hd,
                       (size_t)hd * sizeof(float));
}

// --- attention ------------------------------------------------------------------------
// Backward of the part every attention module shares, in reverse:
//   5. ctx = dropped @ v:  d_dropped = dctx @ v^T (sum over hd), dv = dropped^T @ dctx
//      (sum over the query rows); dropped = w * noise, recomputed by the forward's kernel
//   4. dropped = w * noise: dw = d_dropped * noise
//   3. w = softmax(z, dim): dz (last dim, or dim 1 / 0 of the (batch, T, T) scores)
//   2. z = scores / scale: dscores = dz / scale; then +0 where the mask wrote -inf
//   1. scores = q @ k^T: dq = dscores @ k (sum over keys), dk = dscores^T @ q (sum over queries)
static void attention_backward_all(float *dq, float *dk, float *dv, const float *dctx, const float *q,
                                   const float *k, const float *v, const float *w, const float *noise, long batch,
                                   int T, int hd, float scale, bool causal, int softmax_dim) {
    const long n = batch * T * T;
    Tensor dw = tensor_empty(SIZE((int)n)), dz = tensor_empty(SIZE((int)n));
    Tensor dropped = {0};
    const float *wd = w;
    if (noise) {
        dropped = tensor_empty(SIZE((int)n));
        mul_elementwise(dropped.data, w, noise, n);
        wd = dropped.data;
    }
    // 5.
    bmm_backward(dw.data, dv, dctx, wd, v, batch, T, T, hd);
    // 4.
    if (noise) dropout_backward(dw.data, dw.data, noise, n);
    // 3.
    if (softmax_dim == -1 || softmax_dim == 2) softmax_rows_backward(dz.data, dw.data, w, batch * T, T);
    else if (softmax_dim == 1) softmax_dim_backward(dz.data, dw.data, w, batch, T, T);
    else softmax_dim_backward(dz.data, dw.data, w, 1, (int)batch, (long)T * T);
    // 2.
    div_scalar_backward(dz.data, dz.data, scale, n);
    if (causal) masked_fill_causal_backward(dz.data, batch, T);
    // 1. scores = q @ k^T, k^T (hd, T): dq = dscores @ (k^T)^T, d(k^T) = q^T @ dscores, dk its transpose
    for (long i = 0; i < batch; i++) {
        const long m = i * T * hd;
        const float *ds = dz.data + i * T * T;
        // dq[t][c] = sum_s ds[t][s] * k[s][c], s ascending
        for (long t = 0; t < T; t++)
            for (long c = 0; c < hd; c++) {
                float s = 0.0f;
                for (long u = 0; u < T; u++) s += ds[t * T + u] * k[m + u * hd + c];
                dq[m + t * hd + c] = s;
            }
        // dk[s][c] = sum_t ds[t][s] * q[t][c], t ascending
        matmul_backward_b(dk + m, ds, q + m, T, T, hd);
    }
    if (noise) tensor_free(dropped);
    tensor_free(dw);
    tensor_free(dz);
}

// Every step above but a softmax over the batch axis (dim 0 of the scores)
// works on one (T, T) matrix at a time, in the same order: so the matrices
// go one by one, and the temporaries are (T, T), not (batch, T, T) (at
// Exercise 3.3's size 4 MiB each instead of 48 MiB).
void attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                        const float *v, const float *w, const float *noise, long batch, int T, int hd, float scale,
                        bool causal, int softmax_dim) {
    // The (batch, T, T) scores' dims counted from the end, as torch counts them (-2 is 1, -3 is 0).
    if (softmax_dim < -1) softmax_dim += 3;
    if (!(softmax_dim == -1 || softmax_dim == 1 || softmax_dim == 2)) {
        attention_backward_all(dq, dk, dv, dctx, q, k, v, w, noise, batch, T, hd, scale, causal, softmax_dim);
        return;
    }
    const long m = (long)T * hd, s = (long)T * T;
    for (long i = 0; i < batch; i++)
        attention_backward_all(dq + i * m, dk + i * m, dv + i * m, dctx + i * m, q + i * m, k + i * m, v + i * m,
                               w + i * s, noise ? noise + i * s : NULL, 1, T, hd, scale, causal, softmax_dim);
}
