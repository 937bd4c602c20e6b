// fast_kernels_internal.h (internal to the fast_*.c units of tensor/): what
// the dispatchers of fast_kernels.h share. A dispatcher cuts a call's work
// into independent pieces (rows, heads, batch items, tiles), each a set of
// whole outputs, hands them to threads (fast_threads.c), and runs the
// innermost kernels of the instruction set fast_path.c chose
// (fast_kernels_isa.h) or the scalar kernels of kernels.h: neither the path
// nor the thread count changes any bit. The blocked product, its packing
// and its register tiles (fast_gemm.c) serve the fused attention
// (fast_attention.c) and the attention's backward too; the division by the
// attention's scale is fast_rows.c's.
#ifndef LITATTN_FAST_KERNELS_INTERNAL_H
#define LITATTN_FAST_KERNELS_INTERNAL_H

#include <math.h>
#include <stddef.h>

#include "fast_kernels_isa.h"
#include "pages.h"

// --- the path (fast_path.c) ----------------------------------------------------

// The active instruction set's kernels, or NULL for the scalar path.
const FastIsa *fast_active_isa(void);
// 1 when fast_kernels_ignore_thresholds(1) asked every size to take the
// path and every work of two or more pieces to be split over the threads.
int fast_thresholds_ignored(void);

// An AVX-512 entry left NULL is served by the AVX2 kernel (the AVX-512 path
// implies AVX2).
#ifdef LITATTN_FAST_X86
#define ISA_FN(isa, fn) ((isa)->fn ? (isa)->fn : fast_isa_avx2.fn)
#else
#define ISA_FN(isa, fn) ((isa)->fn)
#endif

// --- threads (fast_threads.c) --------------------------------------------------

// Work items [begin, end) on thread `thread` (0: the caller).
typedef void (*RangeFn)(void *ctx, int thread, long begin, long end);
// How many threads n items are worth: min(threads, n, work / min_work),
// where `work` is what the n items cost and min_work what pays for one
// thread.
int fast_plan_threads(long n, double work, double min_work);
// Runs fn over items [0, n) on k threads: thread t takes [n t / k,
// n (t+1) / k), the caller being thread 0.
void fast_run_threads(int k, long n, RangeFn fn, void *ctx);
// fast_run_threads on fast_plan_threads(n, work, min_work) threads.
void fast_parallel_for(long n, double work, double min_work, RangeFn fn, void *ctx);

// --- helpers -------------------------------------------------------------------

static inline long min_l(long a, long b) { return a < b ? a : b; }
static inline long round_up(long a, long b) { return (a + b - 1) / b * b; }

// n floats, 64-byte aligned (on huge pages from 2 MiB: pages.h); given back
// with free()
static inline float *alloc_floats(long n, const char *what) {
    return pages_alloc((size_t)round_up(n > 0 ? n : 1, 16) * sizeof(float), what);
}

// Whether every one of x's n floats is finite.
static inline int all_finite(const float *x, long n) {
    for (long i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

// --- the blocked product (fast_gemm.c) -----------------------------------------

// Multiply-adds that pay for one more thread (a fraction of a millisecond of
// one core's work).
#define GEMM_THREAD_MIN_MACS (1 << 24)

// Skipping the products with a's known zeros keeps every bit where b is
// finite (the caller checks): a skipped term is 0 * b = +-0, and a sum from
// +0 is never -0, so adding +-0 changes nothing, at the start or the end.
enum {
    GEMM_ZEROS_NONE = 0,
    GEMM_ZEROS_ABOVE = 1,  // a[i][k] = 0 for k > i: row i's sum may stop after k = i
    GEMM_ZEROS_BELOW = 2,  // a[i][k] = 0 for k < i: row i's sum may start at k = i
};

typedef struct {
    const FastIsa *isa;  // NULL: the scalar kernels of kernels.h
    float *out;          // (batch, M, N)
    const float *a;      // (batch, M, K), or (batch, K, M) if a_t: the product reads a^T
    const float *b;      // (batch, K, N), or (batch, N, K) if b_wt
    const float *bias;   // (N) or NULL; only with batch 1
    long batch;
    int M, K, N, b_wt, a_t;
    int zeros;           // GEMM_ZEROS_*: where a (M = K) is known to hold +-0, the sums may skip it
    int rows_per_item;   // rows of one work item
    long items_per_product;
    float *buffers;      // the packing buffers of every thread, one block
    long buffer_floats;  // floats per thread in `buffers`
    float *bias_pad;     // (N rounded up to nr): the bias, zero-padded, or NULL
} Gemm;

// The packing buffers of one thread, carved from Gemm.buffers.
typedef struct {
    float *pa;              // (mr, kc): the bottom edge rows of a, zero-padded to mr rows; or with
                            // a_t (mc rounded up to mr, kc): a block of rows of a^T, zero-padded
    float *pb;              // (nc / nr panels, kc, nr): panel j holds columns j*nr.. of the block, k-major
    float *tile;            // (mr, nr): an edge tile, computed whole then copied in part
    const float *bias_pad;  // Gemm.bias_pad
} PackBuffers;

// pb (panels of nr columns, each (kc, nr)) = columns [jc, jc+nc) of rows
// [pc, pc+kc) of b (K, N), or of w^T for w (N, K) when b_wt; columns past
// the end are zero.
void fast_pack_b(float *pb, const Gemm *g, const float *b, int pc, int kc, int jc, int nc, int nr);
// pa (mr, kc), rows kc apart = rows [i, i+height) of columns [pc, pc+kc) of
// a (M, K), the rows past height zero.
void fast_pack_a_edge(float *pa, const Gemm *g, const float *a, int i, int height, int pc, int kc, int mr);
// One register tile at c (height x width valid, rows ldc apart), continuing
// c's sums unless first; bias (nr) added last if not NULL.
void fast_run_tile(const Gemm *g, PackBuffers *buf, float *c, long ldc, int height, int width, const float *a,
                   long lda, const float *pb, int kc, int first, const float *bias);
// out (batch, M, N) = a @ b (+ bias), a (batch, M, K) or, with a_t, a^T of
// a (batch, K, M); b (batch, K, N) or, with b_wt, b^T of b (batch, N, K);
// each output one chain from +0 in k order (netlib's), the bias last.
// zeros (GEMM_ZEROS_*, M = K): where a is known to hold +-0, which the
// sums may skip (the caller has checked that b is finite).
void fast_gemm_zeros(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K,
                     int N, int b_wt, int a_t, int zeros);
// fast_gemm_zeros with GEMM_ZEROS_NONE
void fast_gemm(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K, int N,
               int b_wt, int a_t);

// --- rows (fast_rows.c) --------------------------------------------------------

// Whether x / s = x * (1 / s) for every float x (s a power of two whose
// reciprocal is a normal float).
int fast_exact_reciprocal(float s);
// out (n,) = x (n,) / s on isa's vectors (NULL: the scalar kernel), one
// thread; the cheaper multiply where it gives every bit.
void fast_div_scalar_isa(const FastIsa *isa, float *out, const float *x, float s, long n);

#endif
