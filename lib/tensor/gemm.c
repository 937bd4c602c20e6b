// gemm.c: the products' scalar reference, forward and backward (gemm.h).
// Each kernel copies the order of float operations of the PyTorch 1.13.1 CPU
// code path named above it (Debian's build: reference netlib BLAS 3.11, one
// thread): every output one chain from +0 over the contracted index in
// increasing order, each product rounded before it is added (netlib is built
// without FMA; this project with -ffp-contract=off). Checked against torch
// by tests/test_kernels.c (kernel_cases.h5) and tests/test_backward.c
// (backward_cases.h5); gemm_fast.c gives the same bits faster and falls back
// to these.
#include "gemm.h"

// --- forward --------------------------------------------------------------------------


// a (M, K) @ b (K, N) -> out (M, N): out[m][n] = sum_k a[m][k] * b[k][n]
// torch.mm / @ (and 1-D @ 2-D, which is mm on one row) -> netlib sgemm,
// case 'N','N': C is zeroed (beta = 0), then for k = 0..K-1 in order
// C += a[m][k] * b[k][n], each product rounded before the add (netlib is
// built without FMA). Starting from +0 matters only for the sign of a zero.
void gemm_matmul(float *out, const float *a, const float *b, int M, int K, int N) {
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
void gemm_matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K,
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
void gemm_bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    for (long i = 0; i < batch; i++)
        gemm_matmul(out + i * M * N, a + i * M * K, b + i * K * N, M, K, N);
}

// a (n,) . b (n,) -> sum_i a[i] * b[i]
// torch.dot -> netlib sdot: unrolled by 5, but each line adds its products
// to the running sum left to right, so the order is plain: 0 + p0 + p1 + ...
float gemm_dot(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

// --- backward -------------------------------------------------------------------------
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
void gemm_matmul_backward_a(float *da, const float *g, const float *b, int M, int K, int N) {
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
void gemm_matmul_backward_b(float *db, const float *a, const float *g, int M, int K, int N) {
    gemm_matmul_backward_b_rows(db, a, g, M, K, N, 0, K);
}

// rows [k0, k1) of that db, into db_rows (k1 - k0, N): every element the same
// chain (gemm_fast.c's scalar fallback, which splits the rows over threads)
void gemm_matmul_backward_b_rows(float *db_rows, const float *a, const float *g, int M, int K, int N, int k0, int k1) {
    for (long i = 0; i < (long)(k1 - k0) * N; i++) db_rows[i] = 0.0f;
    for (long m = 0; m < M; m++) {
        const float *grow = g + m * N;
        for (long k = k0; k < k1; k++) {
            const float av = a[m * K + k];
            float *row = db_rows + (k - k0) * N;
            for (long n = 0; n < N; n++) row[n] += av * grow[n];
        }
    }
}

// BmmBackward0 (tools/autograd/derivatives.yaml `bmm`: grad.bmm(mat2.mH),
// self.mH.bmm(grad)); matmul's expand / reshape / _unsafe_view around bmm only
// move data (_matmul_impl, LinearAlgebra.cpp).
void gemm_bmm_backward(float *da, float *db, const float *g, const float *a, const float *b, long batch, int M, int K,
                  int N) {
    for (long i = 0; i < batch; i++) {
        const float *gi = g + i * M * N;
        if (da) gemm_matmul_backward_a(da + i * M * K, gi, b + i * K * N, M, K, N);
        if (db) gemm_matmul_backward_b(db + i * K * N, a + i * M * K, gi, M, K, N);
    }
}

// --- nn.Linear ------------------------------------------------------------------------
// Forward (gemm_matmul_wt_bias above): F.linear -> addmm(bias, x, w.t()), or
// mm / matmul without a bias, over all rows at once (aten/src/ATen/native/Linear.cpp).

// dx (rows, in_f) = dy @ w: dx[r][k] = +0 + sum_n dy[r][n] * w[n][k], n ascending
// (mm_mat1_backward, general branch)
void gemm_linear_backward_x(float *dx, const float *dy, const float *w, long rows, int in_f, int out_f) {
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
// That is gemm_matmul_backward_b with a = dy (rows, out_f) and g = x (rows, in_f).
void gemm_linear_backward_w(float *dw, const float *dy, const float *x, long rows, int in_f, int out_f) {
    gemm_matmul_backward_b(dw, dy, x, (int)rows, out_f, in_f);
}

