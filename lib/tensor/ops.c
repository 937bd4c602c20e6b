// ops.c: shapes, broadcasting, allocation and grad_fn names around the
// kernels. Every float operation happens in the op families (gemm, rows,
// ...); here only indices move.
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <string.h>

#include "attend.h"
#include "error.h"
#include "gemm.h"
#include "layout.h"
#include "rows.h"

static noreturn void mismatch(const char *op, Tensor a, Tensor b) {
    char sa[96], sb[96];
    size_format(shape(a), sa, sizeof sa);
    size_format(shape(b), sb, sizeof sb);
    die(EXIT_BAD_INPUT, "%s: %s: expected inputs whose shapes fit together, found %s and %s", error_input(), op, sa, sb);
}

bool ops_needs_grad(Tensor t) { return torch_is_grad_enabled() && (t.requires_grad || t.grad_fn != NULL); }

// The result of an operation on a (and b): torch records `fn` as its grad_fn
// when an operand needs grad.
static Tensor track(Tensor out, const char *fn, Tensor a, Tensor b) {
    out.requires_grad = false;
    out.grad_fn = (ops_needs_grad(a) || ops_needs_grad(b)) ? fn : NULL;
    return out;
}

static Tensor none(void) { return (Tensor){0}; }

static int norm_dim(Tensor a, int d, const char *op) {
    int k = d < 0 ? d + a.ndim : d;
    if (k < 0 || k >= a.ndim) die(EXIT_BAD_INPUT, "%s: dimension %d of a tensor of rank %d", op, d, a.ndim);
    return k;
}

// --- making ------------------------------------------------------------------------

Tensor torch_ones(Size s) {
    Tensor t = tensor_empty(s);
    const long n = numel(t);
    for (long i = 0; i < n; i++) t.data[i] = 1.0f;
    return t;
}

// tril/triu copy the kept elements and write +0 elsewhere: no arithmetic.
static Tensor triangle(Tensor a, int diagonal, bool lower, const char *fn) {
    if (a.ndim != 2) mismatch(lower ? "tril" : "triu", a, a);
    Tensor out = tensor_zeros(shape(a));
    const int rows = a.shape[0], cols = a.shape[1];
    for (int i = 0; i < rows; i++) {
        const float *a_row = a.data + (long)i * cols;
        float *out_row = out.data + (long)i * cols;
        for (int j = 0; j < cols; j++)
            if (lower ? j - i <= diagonal : j - i >= diagonal) out_row[j] = a_row[j];
    }
    return track(out, fn, a, none());
}

Tensor torch_tril(Tensor a) { return triangle(a, 0, true, "TrilBackward0"); }
Tensor torch_triu(Tensor a, int diagonal) { return triangle(a, diagonal, false, "TriuBackward0"); }

// torch.cat along `dim`: each input contributes its slab of dim-length
// shape[dim] to every outer index, in order.
static Tensor concat(int n, const Tensor *ts, int dim, Size out_shape, const char *fn) {
    Tensor out = tensor_empty(out_shape);
    long outer = 1;
    for (int i = 0; i < dim; i++) outer *= out_shape.dims[i];
    long inner_out = numel(out) / (outer ? outer : 1);
    bool grad = false;
    long offset = 0;
    for (int k = 0; k < n; k++) {
        long inner = outer ? numel(ts[k]) / outer : 0;
        for (long o = 0; o < outer; o++)
            memcpy(out.data + o * inner_out + offset, ts[k].data + o * inner, (size_t)inner * sizeof(float));
        offset += inner;
        grad = grad || ops_needs_grad(ts[k]);
    }
    out.grad_fn = grad ? fn : NULL;
    return out;
}

Tensor torch_cat(int n, const Tensor *ts, int dim) {
    if (n < 1) die_internal("cat: expected a non-empty list of tensors");
    int d = norm_dim(ts[0], dim, "cat");
    Size s = shape(ts[0]);
    for (int k = 1; k < n; k++) {
        Size sk = shape(ts[k]);
        bool fits = sk.ndim == s.ndim;
        for (int i = 0; fits && i < s.ndim; i++) fits = i == d || sk.dims[i] == s.dims[i];
        if (!fits) mismatch("cat", ts[0], ts[k]);
        s.dims[d] += sk.dims[d];
    }
    return concat(n, ts, d, s, "CatBackward0");
}

Tensor torch_stack(int n, const Tensor *ts, int dim) {
    if (n < 1) die_internal("stack: expected a non-empty list of tensors");
    if (ts[0].ndim >= TENSOR_MAX_DIMS) mismatch("stack", ts[0], ts[0]);
    int d = dim < 0 ? dim + ts[0].ndim + 1 : dim;
    if (d < 0 || d > ts[0].ndim) die(EXIT_BAD_INPUT, "stack: dimension %d of a result of rank %d", dim, ts[0].ndim + 1);
    for (int k = 1; k < n; k++)
        if (!size_equal(shape(ts[k]), shape(ts[0]))) mismatch("stack", ts[0], ts[k]);
    // Stacking is concatenating views with a new axis of length 1.
    Size unit = {ts[0].ndim + 1, {0}};
    for (int i = 0, j = 0; i < unit.ndim; i++) unit.dims[i] = i == d ? 1 : ts[0].shape[j++];
    Tensor views[64];
    if (n > 64) die_internal("stack: at most 64 tensors");
    for (int k = 0; k < n; k++) {
        views[k] = ts[k];
        views[k].ndim = unit.ndim;
        memcpy(views[k].shape, unit.dims, sizeof views[k].shape);
    }
    Size s = unit;
    s.dims[d] = n;
    return concat(n, views, d, s, "StackBackward0");
}

// --- layout ------------------------------------------------------------------------
// The arithmetic and the large copies go through the families' fast kernels: the same
// bits as their reference kernels, vectorised and optionally threaded.

Tensor torch_transpose(Tensor a, int dim0, int dim1) {
    int d0 = norm_dim(a, dim0, "transpose"), d1 = norm_dim(a, dim1, "transpose");
    if (d0 > d1) {
        int t = d0;
        d0 = d1, d1 = t;
    }
    Size s = shape(a);
    s.dims[d0] = a.shape[d1];
    s.dims[d1] = a.shape[d0];
    Tensor out = tensor_empty(s);
    // a viewed as (outer, n0, mid, n1, inner) -> out as (outer, n1, mid, n0, inner)
    long outer = 1, mid = 1, inner = 1;
    for (int i = 0; i < d0; i++) outer *= a.shape[i];
    for (int i = d0 + 1; i < d1; i++) mid *= a.shape[i];
    for (int i = d1 + 1; i < a.ndim; i++) inner *= a.shape[i];
    const long n0 = a.shape[d0], n1 = a.shape[d1];
    if (d0 == d1) memcpy(out.data, a.data, (size_t)numel(a) * sizeof(float));
    else if (mid == 1 && inner == 1)
        for (long o = 0; o < outer; o++)  // the common case: the last two axes of a batch of matrices
            layout_fast_transpose(out.data + o * n0 * n1, a.data + o * n0 * n1, (int)n0, (int)n1);
    else if (mid == 1)  // (b, T, h, hd) -> (b, h, T, hd): heads split, or merged back
        layout_fast_split_heads(out.data, a.data, (int)outer, (int)n0, (int)n1, (int)inner);
    else
        for (long o = 0; o < outer; o++)
            for (long i = 0; i < n0; i++)
                for (long m = 0; m < mid; m++)
                    for (long j = 0; j < n1; j++)
                        memcpy(out.data + (((o * n1 + j) * mid + m) * n0 + i) * inner,
                               a.data + (((o * n0 + i) * mid + m) * n1 + j) * inner, (size_t)inner * sizeof(float));
    return track(out, "TransposeBackward0", a, none());
}

Tensor torch_T(Tensor a) {
    if (a.ndim < 2) return a;
    if (a.ndim != 2) mismatch(".T (rank 2)", a, a);
    return track(torch_transpose(a, 0, 1), "PermuteBackward0", a, none());
}

// Every tensor here is stored contiguous, so contiguous() changes nothing.
Tensor torch_contiguous(Tensor a) { return a; }

Tensor torch_slice2(Tensor a, int rows, int cols) {
    if (a.ndim != 2 || rows < 0 || cols < 0 || rows > a.shape[0] || cols > a.shape[1])
        die(EXIT_BAD_INPUT, "slice: expected [:%d, :%d] within a 2-D tensor, found rank %d of %d x %d", rows, cols,
            a.ndim, a.ndim == 2 ? a.shape[0] : 0, a.ndim == 2 ? a.shape[1] : 0);
    Tensor out = tensor_empty(SIZE(rows, cols));
    for (int i = 0; i < rows; i++) memcpy(out.data + (long)i * cols, a.data + (long)i * a.shape[1], (size_t)cols * sizeof(float));
    return track(out, "SliceBackward0", a, none());
}

Tensor torch_bool(Tensor a) {
    Tensor out = tensor_empty(shape(a));
    const long n = numel(a);
    for (long i = 0; i < n; i++) out.data[i] = a.data[i] != 0.0f ? 1.0f : 0.0f;
    return out;
}

Tensor torch_eq_scalar(Tensor a, double s) {
    const float v = (float)s;
    Tensor out = tensor_empty(shape(a));
    const long n = numel(a);
    for (long i = 0; i < n; i++) out.data[i] = a.data[i] == v ? 1.0f : 0.0f;
    return out;
}

// --- broadcasting --------------------------------------------------------------------
// Elementwise ops line up the shapes from the right; an axis of size 1 (or a
// missing one) repeats. The output is walked row by row: each row of the last
// axis is one kernel call, on a run of b or on one value of b repeated.

typedef enum { OP_MUL, OP_DIV, OP_ADD } BinOp;

static Size broadcast_shape(Tensor a, Tensor b, const char *op) {
    Size s = {a.ndim > b.ndim ? a.ndim : b.ndim, {0}};
    for (int i = 0; i < s.ndim; i++) {
        int ia = i - (s.ndim - a.ndim), ib = i - (s.ndim - b.ndim);
        int da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
        if (da != db && da != 1 && db != 1) mismatch(op, a, b);
        s.dims[i] = da == 1 ? db : da;
    }
    return s;
}

// The offset of the element of t (broadcast to s) at the output's row index `row`
// (all axes but the last), and t's step along the last axis (0 if repeated).
static long broadcast_offset(Tensor t, Size s, long row, long *step) {
    long off = 0, stride = 1;
    int last = t.ndim - 1;
    *step = (t.ndim > 0 && t.shape[last] != 1) ? 1 : 0;
    if (t.ndim > 0) stride = t.shape[last];
    for (int i = s.ndim - 2; i >= 0; i--) {
        long idx = row % s.dims[i];
        row /= s.dims[i];
        int it = i - (s.ndim - t.ndim);
        if (it >= 0) {
            if (t.shape[it] != 1) off += idx * stride;
            stride *= t.shape[it];
        }
    }
    return off;
}

static void binary_run(BinOp op, float *out, const float *a, long sa, const float *b, long sb, int n) {
    if (sa == 1 && sb == 1) {
        if (op == OP_MUL) rows_mul(out, a, b, n);
        else if (op == OP_DIV) rows_div(out, a, b, n);
        else rows_add(out, a, b, n);
    } else if (sa == 1) {  // b repeats
        if (op == OP_MUL) rows_mul_scalar(out, a, b[0], n);
        else if (op == OP_DIV) rows_div_scalar(out, a, b[0], n);
        else rows_add_scalar(out, a, b[0], n);
    } else {  // a repeats: a[0] op b[j] for each j, in that operand order
        for (int j = 0; j < n; j++) {
            const float x = a[0];
            if (op == OP_MUL) rows_mul(out + j, &x, b + j * sb, 1);
            else if (op == OP_DIV) rows_div(out + j, &x, b + j * sb, 1);
            else rows_add(out + j, &x, b + j * sb, 1);
        }
    }
}

static Tensor binary(BinOp op, Tensor a, Tensor b, const char *name, const char *fn) {
    Size s = broadcast_shape(a, b, name);
    Tensor out = tensor_empty(s);
    if (size_equal(shape(a), shape(b))) {
        long n = numel(out);
        if (op == OP_MUL) rows_mul(out.data, a.data, b.data, n);
        else if (op == OP_DIV) rows_div(out.data, a.data, b.data, n);
        else rows_add(out.data, a.data, b.data, n);
    } else {
        const int n = s.ndim ? s.dims[s.ndim - 1] : 1;
        const long rows = n ? numel(out) / n : 0;
        for (long r = 0; r < rows; r++) {
            long sa, sb;
            long oa = broadcast_offset(a, s, r, &sa), ob = broadcast_offset(b, s, r, &sb);
            if (sa == 0 && sb == 0) {  // both repeat a single value along the row
                float x;
                binary_run(op, &x, a.data + oa, 1, b.data + ob, 1, 1);
                for (int j = 0; j < n; j++) out.data[r * n + j] = x;
            } else {
                binary_run(op, out.data + r * n, a.data + oa, sa, b.data + ob, sb, n);
            }
        }
    }
    return track(out, fn, a, b);
}

Tensor torch_mul(Tensor a, Tensor b) { return binary(OP_MUL, a, b, "mul", "MulBackward0"); }
Tensor torch_div(Tensor a, Tensor b) { return binary(OP_DIV, a, b, "div", "DivBackward0"); }
Tensor torch_add(Tensor a, Tensor b) { return binary(OP_ADD, a, b, "add", "AddBackward0"); }

// A Python float operand is a 0-d "wrapped number": torch casts it to the
// tensor's dtype first, so the operation happens with (float)s.
Tensor torch_mul_scalar(Tensor a, double s) {
    Tensor out = tensor_empty(shape(a));
    rows_mul_scalar(out.data, a.data, (float)s, numel(a));
    return track(out, "MulBackward0", a, none());
}

Tensor torch_div_scalar(Tensor a, double s) {
    Tensor out = tensor_empty(shape(a));
    rows_fast_div_scalar(out.data, a.data, (float)s, numel(a));
    return track(out, "DivBackward0", a, none());
}

void torch_add_(Tensor acc, Tensor b) {
    Size s = broadcast_shape(acc, b, "add_");
    if (!size_equal(s, shape(acc))) mismatch("add_", acc, b);
    Tensor sum = torch_add(acc, b);
    memcpy(acc.data, sum.data, (size_t)numel(acc) * sizeof(float));
}

Tensor torch_exp(Tensor a) {
    Tensor out = tensor_empty(shape(a));
    rows_fast_exp(out.data, a.data, numel(a));
    return track(out, "ExpBackward0", a, none());
}

// --- reductions and products -------------------------------------------------------------

Tensor torch_dot(Tensor a, Tensor b) {
    if (a.ndim != 1 || b.ndim != 1 || a.shape[0] != b.shape[0]) mismatch("dot", a, b);
    return track(tensor_scalar(gemm_dot(a.data, b.data, a.shape[0])), "DotBackward0", a, b);
}

Tensor torch_sum(Tensor a) {
    // (torch splits a reduction of more than 32768 values between threads,
    // when it has them; the fixtures are made with one thread, as here.)
    return track(tensor_scalar(rows_sum(a.data, (int)numel(a))), "SumBackward0", a, none());
}

Tensor torch_sum_dim(Tensor a, int dim, bool keepdim) {
    if (a.ndim == 0 || norm_dim(a, dim, "sum") != a.ndim - 1) mismatch("sum over a dimension other than the last", a, a);
    const int n = a.shape[a.ndim - 1];
    Size s = shape(a);
    if (keepdim) s.dims[s.ndim - 1] = 1;
    else s.ndim--;
    Tensor out = tensor_empty(s);
    rows_fast_sum_rows(out.data, a.data, n ? numel(a) / n : 0, n);
    return track(out, "SumBackward1", a, none());
}

Tensor torch_softmax(Tensor a, int dim) {
    if (a.ndim == 0) mismatch("softmax of a 0-d tensor", a, a);
    const int d = norm_dim(a, dim, "softmax");
    Tensor out = tensor_empty(shape(a));
    long outer = 1, inner = 1;
    for (int i = 0; i < d; i++) outer *= a.shape[i];
    for (int i = d + 1; i < a.ndim; i++) inner *= a.shape[i];
    if (inner == 1) rows_fast_softmax_rows(out.data, a.data, outer, a.shape[d]);  // the last dimension
    else rows_softmax_dim(out.data, a.data, outer, a.shape[d], inner);
    return track(out, "SoftmaxBackward0", a, none());
}

// The matrix of t (its batch axes only, as t.ndim says) that batch index i
// of the broadcast batch shape reads: axes of size 1, or missing, repeat.
static long batch_index(Tensor t, Size batch, long i) {
    long index = 0, stride = 1;
    for (int k = batch.ndim - 1; k >= 0; k--) {
        const long at = i % batch.dims[k];
        i /= batch.dims[k];
        const int kt = k - (batch.ndim - t.ndim);
        if (kt < 0) continue;
        if (t.shape[kt] != 1) index += at * stride;
        stride *= t.shape[kt];
    }
    return index;
}

// torch.matmul: 1-D @ 1-D is a dot product; a 1-D operand is a one-row (or
// one-column) matrix whose axis is dropped again; otherwise the leading
// (batch) axes broadcast and each pair of matrices is one product.
Tensor torch_matmul(Tensor a, Tensor b) {
    if (a.ndim == 0 || b.ndim == 0) mismatch("matmul", a, b);
    if (a.ndim == 1 && b.ndim == 1) return torch_dot(a, b);
    const int M = a.ndim == 1 ? 1 : a.shape[a.ndim - 2], K = a.shape[a.ndim - 1];
    const int Kb = b.ndim == 1 ? b.shape[0] : b.shape[b.ndim - 2], N = b.ndim == 1 ? 1 : b.shape[b.ndim - 1];
    if (K != Kb) mismatch("matmul", a, b);
    // The batch axes: everything before the last two, broadcast.
    Tensor ab = a, bb = b;
    ab.ndim = a.ndim > 2 ? a.ndim - 2 : 0;
    bb.ndim = b.ndim > 2 ? b.ndim - 2 : 0;
    Size batch = broadcast_shape(ab, bb, "matmul");
    Size s = batch;
    if (a.ndim > 1) s.dims[s.ndim++] = M;
    if (b.ndim > 1) s.dims[s.ndim++] = N;
    Tensor out = tensor_empty(s);
    const long n_batch = size_numel(batch);
    if (n_batch == 1 || (size_equal(shape(ab), batch) && size_equal(shape(bb), batch))) {
        gemm_fast_bmm(out.data, a.data, b.data, n_batch, M, K, N);
    } else {
        for (long i = 0; i < n_batch; i++)
            gemm_fast_matmul(out.data + i * M * N, a.data + batch_index(ab, batch, i) * M * K,
                   b.data + batch_index(bb, batch, i) * K * N, M, K, N);
    }
    const char *fn = a.ndim == 2 && b.ndim == 2 ? "MmBackward0"
                   : a.ndim == 1 && b.ndim == 2 ? "SqueezeBackward3"
                   : a.ndim == 2 && b.ndim == 1 ? "MvBackward0"
                                                : "UnsafeViewBackward0";
    return track(out, fn, a, b);
}

// --- masks -----------------------------------------------------------------------------------

void torch_masked_fill_(Tensor *a, Tensor mask, float value) {
    Size s = broadcast_shape(*a, mask, "masked_fill");
    if (!size_equal(s, shape(*a))) mismatch("masked_fill", *a, mask);
    const int n = a->ndim ? a->shape[a->ndim - 1] : 1;
    const long rows = n ? numel(*a) / n : 0;
    for (long r = 0; r < rows; r++) {
        long step;
        const float *mask_row = mask.data + broadcast_offset(mask, s, r, &step);
        float *row = a->data + r * n;
        for (int j = 0; j < n; j++)
            if (mask_row[j * step] != 0.0f) row[j] = value;
    }
    if (ops_needs_grad(*a)) a->grad_fn = "MaskedFillBackward0", a->requires_grad = false;
}

Tensor torch_masked_fill(Tensor a, Tensor mask, float value) {
    Tensor out = tensor_copy(a);
    out.grad_fn = a.grad_fn, out.requires_grad = a.requires_grad;
    torch_masked_fill_(&out, mask, value);
    return out;
}

bool torch_equal(Tensor a, Tensor b) {
    if (!size_equal(shape(a), shape(b))) return false;
    const long n = numel(a);
    for (long i = 0; i < n; i++)
        if (!(a.data[i] == b.data[i])) return false;
    return true;
}

// --- attention, fused ------------------------------------------------------------------

Tensor ops_fused_attention(Tensor q, Tensor k, Tensor v, Tensor noise, bool causal, double scale) {
    if (q.ndim < 2 || !size_equal(shape(q), shape(k)) || !size_equal(shape(q), shape(v))) mismatch("attention", q, k);
    const int T = q.shape[q.ndim - 2], D = q.shape[q.ndim - 1];
    const long batch = T && D ? numel(q) / ((long)T * D) : 0;
    if (noise.data && numel(noise) != batch * T * T) mismatch("attention's dropout", q, noise);
    Tensor out = tensor_empty(shape(q));
    attend_fast(out.data, q.data, k.data, v.data, noise.data, batch, T, D, (float)scale, causal);
    return track(out, "UnsafeViewBackward0", q, v);
}
