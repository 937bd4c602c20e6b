// gemm_fast.h (internal to the dispatchers): the blocked product of
// gemm_fast.c, which the fused attention and its backward (attend_fast.c)
// run on too: its job, its packing and its register tiles.
#ifndef LITATTN_GEMM_FAST_H
#define LITATTN_GEMM_FAST_H

#include "simd_isa.h"

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
    const SimdIsa *isa;  // NULL: the reference kernels of gemm.c
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
                            // a_t a block of rows of a^T (mc rounded up to mr, zero-padded) as
                            // panels of mr rows, each k-major (kc, mr)
    float *pb;              // (nc / nr panels, kc, nr): panel j holds columns j*nr.. of the block, k-major
    float *tile;            // (mr, nr): an edge tile, computed whole then copied in part
    const float *bias_pad;  // Gemm.bias_pad
} PackBuffers;

// pb (panels of nr columns, each (kc, nr)) = columns [jc, jc+nc) of rows
// [pc, pc+kc) of b (K, N), or of w^T for w (N, K) when b_wt; columns past
// the end are zero.
void gemm_fast_pack_b(float *pb, const Gemm *g, const float *b, int pc, int kc, int jc, int nc, int nr);
// pa (mr, kc), rows kc apart = rows [i, i+height) of columns [pc, pc+kc) of
// a (M, K), the rows past height zero.
void gemm_fast_pack_a_edge(float *pa, const Gemm *g, const float *a, int i, int height, int pc, int kc, int mr);
// One register tile at c (height x width valid, rows ldc apart), continuing
// c's sums unless first; bias (nr) added last if not NULL. a: mr rows lda
// apart, or with a_cols kc columns lda apart (the path's gemm_tile_at).
void gemm_fast_run_tile(const Gemm *g, PackBuffers *buf, float *c, long ldc, int height, int width, const float *a,
                        long lda, int a_cols, const float *pb, int kc, int first, const float *bias);
// out (batch, M, N) = a @ b (+ bias), a (batch, M, K) or, with a_t, a^T of
// a (batch, K, M); b (batch, K, N) or, with b_wt, b^T of b (batch, N, K);
// each output one chain from +0 in k order (netlib's), the bias last.
// zeros (GEMM_ZEROS_*, M = K): where a is known to hold +-0, which the
// sums may skip (the caller has checked that b is finite).
void gemm_fast_product_zeros(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K,
                     int N, int b_wt, int a_t, int zeros);
// gemm_fast_product_zeros with GEMM_ZEROS_NONE
void gemm_fast_product(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K, int N,
               int b_wt, int a_t);

#endif
