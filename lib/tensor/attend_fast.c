// attend_fast.c: attend_fast, causal (or full) attention fused a block
// of query rows at a time, never a (T, T) tensor, with the bits of the
// composed ops:
//   s = q @ k^T; s[j > i] = -inf (if causal); w = softmax(s / scale, dim=-1);
//   w = w * noise (if noise); out = w @ v
// (the products gemm_fast.c's register tiles, the division and softmax
// rows_fast.c's kernels), and attend_fast_backward below. Threads split blocks of rows, never a sum.
#include "attend.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fast_path.h"
#include "fast_threads.h"
#include "fast_util.h"
#include "gemm.h"
#include "gemm_fast.h"
#include "noise.h"
#include "rows.h"
#include "rows_fast.h"
#include "tensor.h"

// Each output row depends only on its own row of scores, so the rows can be
// computed a block at a time with every step in the composed ops' order:
//   s = q_rows @ k^T        (each from +0, k ascending: the bmm's order)
//   s[j > i] = -inf         (masked_fill_; never computed, since it is replaced)
//   w = softmax(s / scale)  (div_scalar, then the softmax row of the path)
//   w = w * noise           (dropout's factor, when there is one)
//   out = w @ v             (each from +0, j ascending)
// What a causal row i lets us leave out, every bit kept:
//   - the scores past key i: they are -inf whatever the product gives;
//   - the division and the softmax past key i (past key 7 where i < 7: the
//     path's softmax takes 8 or more): in the full row each of the
//     softmax's 8 lanes meets only -inf past there, which moves no max, and
//     exp(-inf) = +0, which moves no sum from +0, exactly as a shorter row's
//     tail leaves its unused lanes alone; so the row's max, sum and every
//     weight up to there are the same, and each weight past it is +0 (that
//     is exp(-inf) / sum);
//   - the terms of w @ v past the last key of the tile's rows, where every
//     v past it is finite: each is w * v = +-0, which leaves a sum from +0
//     alone (a sum from +0 is never -0). Where a v past it is not finite
//     (0 * inf = NaN), the product runs over all T keys, as the composed
//     ops do. If a row's max is -inf or NaN every weight of the row is NaN,
//     and so is its output either way.
// K^T and V are packed into the tile's panels once per matrix (per thread),
// and the scores of a block are the path's register tiles over those
// panels, a tile of rows skipping the panels of keys past its last row.
// A block is at most ATTN_BLOCK_ROWS rows, and fewer where its scores would
// pass ATTN_BLOCK_BYTES, so that they stay in L2 from their product through
// the softmax to the product with v (at least two tiles of rows): 66 rows
// on the AVX2 path up to T = 2048, 12 at T = 16384. On a core with 1 MiB of
// L2, 12 rows run a head at T = 16384 faster than 66; at T = 1024 the two
// are alike (tests/BENCHMARKS.md).
enum { ATTN_BLOCK_ROWS = 64, ATTN_BLOCK_BYTES = 768 << 10 };

typedef struct {
    const SimdIsa *isa;
    float *out;                // (batch, T, D)
    const float *q, *k, *v;    // (batch, T, D)
    const float *noise;        // (batch, T, T) or NULL
    int T, D, causal;
    float scale;
    int block_rows;            // rows of a block, a multiple of the tile's mr
    long blocks_per_matrix;
    long ld;                   // floats between rows of a block's scores (>= T rounded up, not a power of 2)
    float *buffers;            // every thread's scratch, one block
    long buffer_floats;        // floats per thread
} Attention;

// One thread's scratch, carved from Attention.buffers, and the matrix whose
// K and V it holds packed.
typedef struct {
    PackBuffers buf;  // pa: (mr, D) the zero-padded last rows of q; tile: (mr, nr)
    float *pk;        // (T rounded up to nr, D) as panels of nr keys, each (D, nr): k^T's columns
    float *pv;        // (D rounded up to nr, T) as panels of nr columns, each (T, nr): v's
    float *s;         // (block_rows, ld): the block's scores, then its weights, in place
    long p;           // the matrix packed, or -1
    long finite_from; // every row of v from here on is finite
} AttentionScratch;

// Floats of each part of a thread's scratch, each a multiple of 16.
static void attention_sizes(const Attention *at, long size[5]) {
    const SimdIsa *isa = at->isa;
    const long mr = isa ? isa->mr : 1, nr = isa ? isa->nr : 1;
    size[0] = round_up(mr * at->D, 16);
    size[1] = round_up(mr * nr, 16);
    size[2] = isa ? round_up(round_up(at->T, nr) * at->D, 16) : 0;
    size[3] = isa ? round_up(round_up(at->D, nr) * at->T, 16) : 0;
    size[4] = round_up((long)at->block_rows * at->ld, 16);
}

// Packs matrix p's k^T and v into the panels the tiles read, and finds
// where v's finite tail starts.
static void attention_pack(const Attention *at, AttentionScratch *sc, long p) {
    const long T = at->T, D = at->D;
    const float *k = at->k + p * T * D, *v = at->v + p * T * D;
    if (at->isa) {
        const Gemm gk = {.isa = at->isa, .b = k, .K = (int)D, .N = (int)T, .b_wt = 1};
        gemm_fast_pack_b(sc->pk, &gk, k, 0, (int)D, 0, (int)T, at->isa->nr);
        const Gemm gv = {.isa = at->isa, .b = v, .K = (int)T, .N = (int)D};
        gemm_fast_pack_b(sc->pv, &gv, v, 0, (int)T, 0, (int)D, at->isa->nr);
    }
    long f = T;
    while (f > 0 && all_finite(v + (f - 1) * D, D)) f--;
    sc->finite_from = f;
    sc->p = p;
}

// The columns a causal row's softmax runs over (its forward and its
// backward), for a row of n keys under the mask among T: the path's
// softmax rows take 8 or more.
static long softmax_width(const SimdIsa *isa, long n, long T) { return isa && T >= 8 ? min_l(n < 8 ? 8 : n, T) : T; }

// Row r of a block: its scores s_row (the keys [0, n) computed) become its
// weights, in place, over [0, n_soft); +0 from there to `zero_to`.
static void attention_row(const SimdIsa *isa, long T, float scale, float *s_row, const float *noise_row, long n,
                          long zero_to) {
    const long n_soft = softmax_width(isa, n, T);
    for (long j = n; j < n_soft; j++) s_row[j] = -INFINITY;  // (-inf / scale = -inf)
    if (isa && T >= 8) {
        isa->softmax_row_scaled(s_row, s_row, (int)n_soft, scale, rows_fast_exact_reciprocal(scale));
    } else {
        rows_fast_div_scalar_isa(isa, s_row, s_row, scale, n);
        rows_softmax_row(s_row, s_row, (int)n_soft);
    }
    if (noise_row) rows_mul(s_row, s_row, noise_row, n_soft);
    if (zero_to > n_soft) memset(s_row + n_soft, 0, (size_t)(zero_to - n_soft) * sizeof(float));
}

// The keys the sums w @ v of rows [r0, r0 + mr) of the block at i0 run
// over: up to the last row's key under the mask, where every v past it is
// finite; else all of them.
static long tile_keys(const Attention *at, const AttentionScratch *sc, long i0, long r0, long mr) {
    const long last = at->causal ? min_l(at->T, i0 + r0 + mr) : at->T;
    return sc->finite_from <= last ? last : at->T;
}

// The block of rows [i0, i1) of matrix p on the path's tiles.
static void attention_block_fast(const Attention *at, AttentionScratch *sc, long p, long i0, long i1) {
    const SimdIsa *isa = at->isa;
    const long T = at->T, D = at->D, ld = at->ld, mr = isa->mr, nr = isa->nr;
    const long rows = i1 - i0, tiles_rows = round_up(rows, mr);
    const long keys = at->causal ? i1 : T;  // the keys any row of the block sees
    const float *q = at->q + (p * T + i0) * D;
    float *s = sc->s, *out = at->out + (p * T + i0) * D;
    // 1. s (rows, keys) = q_rows @ k^T, a panel of nr keys at a time; a tile
    //    of rows skips the panels past its last row's key
    if (rows % mr)
        gemm_fast_pack_a_edge(sc->buf.pa, &(Gemm){.K = (int)D}, q, (int)(tiles_rows - mr), (int)(rows % mr), 0,
                         (int)D, (int)mr);
    for (long j0 = 0; j0 < keys; j0 += nr) {
        const float *panel = sc->pk + j0 * D;
        for (long r0 = 0; r0 < rows; r0 += mr) {
            if (at->causal && j0 >= i0 + r0 + mr) continue;
            const float *a = r0 + mr <= rows ? q + r0 * D : sc->buf.pa;
            isa->gemm_tile(s + r0 * ld + j0, ld, a, D, panel, (int)D, 1, NULL);
        }
    }
    // 2. each row's weights: softmax(s / scale) (* noise), then +0 up to the
    //    keys its tile's sums run over
    long depth = 0;  // the most keys any tile's sums run over
    for (long r = 0; r < tiles_rows; r++) {
        float *s_row = s + r * ld;
        const long zero_to = tile_keys(at, sc, i0, r / mr * mr, mr);
        if (zero_to > depth) depth = zero_to;
        if (r >= rows) {  // past the matrix's last row: +0, read by the edge tile only
            memset(s_row, 0, (size_t)zero_to * sizeof(float));
            continue;
        }
        const long i = i0 + r, n = at->causal ? i + 1 : T;
        attention_row(at->isa, T, at->scale, s_row, at->noise ? at->noise + (p * T + i) * T : NULL, n, zero_to);
    }
    // 3. out rows = w @ v: depth blocks of kc keys, each tile continuing its sums
    const Gemm g = {.isa = isa};
    for (long pc = 0; pc < depth; pc += isa->kc) {
        for (long j0 = 0; j0 < D; j0 += nr) {
            const float *panel = sc->pv + j0 * T + pc * nr;
            for (long r0 = 0; r0 < rows; r0 += mr) {
                const long end = tile_keys(at, sc, i0, r0, mr);
                if (pc >= end) continue;
                gemm_fast_run_tile(&g, &sc->buf, out + r0 * D + j0, D, (int)min_l(mr, rows - r0), (int)min_l(nr, D - j0),
                                   s + r0 * ld + pc, ld, 0, panel, (int)min_l(isa->kc, end - pc), pc == 0, NULL);
            }
        }
    }
}

// The block of rows [i0, i1) of matrix p on the scalar kernels, row by row.
static void attention_block_scalar(const Attention *at, AttentionScratch *sc, long p, long i0, long i1) {
    const long T = at->T, D = at->D;
    const float *k = at->k + p * T * D, *v = at->v + p * T * D;
    for (long i = i0; i < i1; i++) {
        const long n = at->causal ? i + 1 : T, end = sc->finite_from <= n ? n : T;
        float *s_row = sc->s;
        gemm_matmul_wt_bias(s_row, at->q + (p * T + i) * D, k, NULL, 1, (int)D, (int)n);
        attention_row(at->isa, T, at->scale, s_row, at->noise ? at->noise + (p * T + i) * T : NULL, n, end);
        gemm_matmul(at->out + (p * T + i) * D, s_row, v, 1, (int)end, (int)D);
    }
}

static void attention_items(void *ctx, int thread, long begin, long end) {
    const Attention *at = ctx;
    long size[5];
    attention_sizes(at, size);
    AttentionScratch sc = {.p = -1};
    sc.buf.pa = at->buffers + thread * at->buffer_floats;
    sc.buf.tile = sc.buf.pa + size[0];
    sc.pk = sc.buf.tile + size[1];
    sc.pv = sc.pk + size[2];
    sc.s = sc.pv + size[3];
    const long nb = at->blocks_per_matrix;
    for (long item = begin; item < end; item++) {
        // a matrix's blocks in the order first, last, second, second last, ...:
        // under the causal mask the work of two neighbouring items is about
        // even, so a thread's range of items is about its share of the work
        const long p = item / nb, m = item % nb, block = m % 2 == 0 ? m / 2 : nb - 1 - m / 2;
        const long i0 = block * at->block_rows, i1 = min_l(at->T, i0 + at->block_rows);
        if (p != sc.p) attention_pack(at, &sc, p);
        if (at->isa) attention_block_fast(at, &sc, p, i0, i1);
        else attention_block_scalar(at, &sc, p, i0, i1);
    }
}

void attend_fast(float *out, const float *q, const float *k, const float *v, const float *noise, long batch,
                    int T, int D, float scale, int causal) {
    if (batch <= 0 || T <= 0 || D <= 0) return;
    Attention at = {fast_path_isa(), out, q, k, v, noise, T, D, causal != 0, scale, ATTN_BLOCK_ROWS, 0, 0, NULL, 0};
    // rows 16 floats past a multiple of 16 apart: never a power of two apart
    at.ld = round_up(T, 16) + 16;
    if (at.isa) {
        // (tests ignoring the thresholds: the smallest blocks at every T)
        const long budget = fast_path_thresholds_ignored() ? 0 : ATTN_BLOCK_BYTES;
        const long mr = at.isa->mr, fit = budget / (long)sizeof(float) / at.ld;
        at.block_rows = (int)round_up(fit < 2 * mr ? 2 * mr : min_l(fit, ATTN_BLOCK_ROWS), mr);
    }
    at.blocks_per_matrix = (T + at.block_rows - 1) / at.block_rows;
    long size[5];
    attention_sizes(&at, size);
    for (int i = 0; i < 5; i++) at.buffer_floats += size[i];
    const long items = batch * at.blocks_per_matrix;
    const double macs = 2.0 * batch * (double)T * T * D;
    const int threads = fast_threads_plan(items, macs, GEMM_THREAD_MIN_MACS);
    at.buffers = alloc_floats(threads * at.buffer_floats, "the attention's scratch");
    fast_threads_run(threads, items, attention_items, &at);
    free(at.buffers);
}

// ---------------------------------------------------------------------------
// the backward
// ---------------------------------------------------------------------------

// Whether every matrix of w (batch, T, T) is 0 above its diagonal
static int zero_above(const float *w, long batch, int T) {
    for (long p = 0; p < batch; p++)
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T; j++)
                if (w[(p * T + i) * T + j] != 0.0f) return 0;
    return 1;
}

// attend_ref_backward (attend.c), its passes in the same order on
// `batch` matrices at once, the products on the fast matmul, the softmax's
// backward on the fast rows. dim: the softmax's, 0-2 of (batch, T, T).
static void attention_backward_matrices(float *dq, float *dk, float *dv, const float *dctx, const float *q,
                                        const float *k, const float *v, const float *w, const float *noise,
                                        long batch, int T, int hd, float scale, bool causal, int dim) {
    // (batch, T, T) temporaries from the tensor pool, which hands back the
    // blocks freed before (the previous matrix's): memory already faulted in
    const long n = batch * T * T;
    Tensor dw_t = tensor_empty(SIZE((int)n)), dz_t = tensor_empty(SIZE((int)n));
    Tensor dropped_t = noise ? tensor_empty(SIZE((int)n)) : (Tensor){0};
    float *dw = dw_t.data, *dz = dz_t.data, *dropped = dropped_t.data;
    const float *wd = w;
    if (noise) {
        rows_mul(dropped, w, noise, n);
        wd = dropped;
    }
    // Causal: above the diagonal the weights are 0 (unless a row is NaN)
    // and the scores' gradients +0 (masked_fill's backward writes them), so
    // three products may skip the dead triangle where the other operand is
    // finite (gemm_zeros); d_dropped is needed whole (softmax's backward sums
    // over the row).
    const int dead = causal && T > 1;
    const int w_zero_above = dead && zero_above(wd, batch, T) && all_finite(dctx, batch * T * hd);
    // 5. d_dropped = dctx @ v^T; dv = dropped^T @ dctx
    gemm_fast_bmm_wt(dw, dctx, v, batch, T, hd, T);
    gemm_fast_product_zeros(dv, wd, dctx, NULL, batch, T, T, hd, 0, 1, w_zero_above ? GEMM_ZEROS_BELOW : GEMM_ZEROS_NONE);
    // 4.
    if (noise) noise_dropout_backward(dw, dw, noise, n);
    // 3.
    if (dim == 2) rows_fast_softmax_rows_backward(dz, dw, w, batch * T, T);
    else if (dim == 1) rows_softmax_dim_backward(dz, dw, w, batch, T, T);
    else rows_softmax_dim_backward(dz, dw, w, 1, (int)batch, (long)T * T);
    // 2.
    rows_fast_div_scalar(dz, dz, scale, n);  // rows_div_scalar_backward: dz / scale
    if (causal) rows_masked_fill_causal_backward(dz, batch, T);
    // 1. dq = dscores @ k; dk = dscores^T @ q
    gemm_fast_product_zeros(dq, dz, k, NULL, batch, T, T, hd, 0, 0,
               dead && all_finite(k, batch * T * hd) ? GEMM_ZEROS_ABOVE : GEMM_ZEROS_NONE);
    gemm_fast_product_zeros(dk, dz, q, NULL, batch, T, T, hd, 0, 1,
               dead && all_finite(q, batch * T * hd) ? GEMM_ZEROS_BELOW : GEMM_ZEROS_NONE);
    tensor_free(dw_t), tensor_free(dz_t);
    if (noise) tensor_free(dropped_t);
}

// w (T, T) = softmax((q @ k^T)[j > i: -inf if causal] / scale, dim=-1) of
// one matrix, q, k (T, hd): the forward's weights again, by the forward's
// kernels in its order (the same bits as its composed ops and as
// attend_fast)
static void attention_weights(float *w, float *scores, const float *q, const float *k, int T, int hd, float scale,
                              bool causal) {
    gemm_fast_product(scores, q, k, NULL, 1, T, hd, T, 1, 0);
    for (long i = 0; causal && i < T; i++)
        for (long j = i + 1; j < T; j++) scores[i * T + j] = -INFINITY;
    rows_fast_div_scalar(scores, scores, scale, (long)T * T);
    rows_fast_softmax_rows(w, scores, T, T);
}

// ---------------------------------------------------------------------------
// the causal backward, fused: a block of query rows at a time
// ---------------------------------------------------------------------------
// attention_backward_matrices' steps on one matrix of a causal attention
// (softmax over the last dim), a block of query rows [i0, i1) at a time,
// blocks in order, never a (T, T) tensor:
//   w = the block's weights, given or made again as the forward makes them
//       (its scores on the tiles, attention_row); dropped = w * noise
//   g = dctx_rows @ v^T; g = g * noise (dropout's backward)
//   g = softmax's backward of (g, w) row by row; g = g / scale; g[j > i] = +0
//   dq_rows = g @ k
//   dk += g^T @ q_rows; dv += dropped^T @ dctx_rows
// Each output of dk and dv is one sum over the query rows in order: a block
// continues the sums the blocks before it stored (gemm_fast.c's depth
// blocks), reading g and dropped by columns in place (gemm_tile_at).
// What row i lets it leave out, every bit kept, where the matrix passes the
// checks below:
//   - the scores and the softmax past key i, as the forward does: w[i][j > i]
//     is +0;
//   - g past key i (past its first multiple of 8 past i, at least 8: the
//     softmax backward's lanes): there the full row adds g[j] * +0 to a
//     lane, which leaves a lane's value as it is where g[j] is finite; at most
//     the sign of a zero lane, and so of a zero sum s, moves, and that reaches
//     dz = (g - s) * w only as the sign of a zero, which dq and dk add, as a
//     term of a sum from +0, to no effect;
//   - the terms of dq, dk and dv that the mask or the zero weights make a
//     zero times a finite k, q or dctx (GEMM_ZEROS_*).
// The checks: q, k, v, dctx and noise finite; a given w +-0 above its
// diagonal; and no score and no element of g past FLT_MAX / 2, from the
// bound hd |a|max |b|max on every partial sum of a product of depth hd (so
// every row's max is finite and its weights past key i are +0, and g is
// finite). A batch that fails one runs attention_backward_matrices.
enum { BW_BLOCK_ROWS = 96, BW_BLOCK_BYTES = 1024 << 10 };

typedef struct {
    const SimdIsa *isa;
    float *dq, *dk, *dv;
    const float *dctx, *q, *k, *v, *w, *noise;  // as attend_fast_backward's; w may be NULL
    int T, hd;
    float scale;
    int block_rows;  // a multiple of mr
    long ld;         // floats between rows of a block's buffers
    float *buffers;  // every thread's scratch
    long buffer_floats;
} Backward;

// One thread's scratch, carved from Backward.buffers.
typedef struct {
    PackBuffers buf;  // pa: (mr, hd) the zero-padded last rows of q or dctx; tile: (mr, nr)
    float *pk;        // (T rounded up to nr, hd) as panels of nr keys: k^T's columns (the scores)
    float *pvt;       // the same for v (g = dctx @ v^T)
    float *pkn;       // (hd rounded up to nr, T) as panels of nr columns, each (T, nr): k's (dq = g @ k)
    float *pq, *pdc;  // (hd rounded up to nr, block_rows) as panels: a block's rows of q and of dctx
    float *w, *d, *g; // (block_rows, ld) each: the block's weights, dropped weights (w itself
                      // without noise), and g
} BackwardScratch;

static void backward_sizes(const Backward *bw, long size[9]) {
    const long mr = bw->isa->mr, nr = bw->isa->nr, T = bw->T, hd = bw->hd, br = bw->block_rows;
    size[0] = round_up(mr * hd, 16);
    size[1] = round_up(mr * nr, 16);
    size[2] = size[3] = round_up(round_up(T, nr) * hd, 16);
    size[4] = round_up(round_up(hd, nr) * T, 16);
    size[5] = size[6] = round_up(round_up(hd, nr) * br, 16);
    size[7] = size[8] = round_up(br * bw->ld, 16);
    if (!bw->noise) size[8] = 0;  // d is w
}

// s (rows, ld) += the tiles of a_rows @ panels, a tile of rows skipping the
// panels past its last row's key (row r of the block is query i0 + r): the
// scores q @ k^T or g = dctx @ v^T of a block, keys [0, keys).
static void block_scores(const Backward *bw, BackwardScratch *sc, float *s, const float *a, const float *panels,
                         long i0, long rows, long keys) {
    const SimdIsa *isa = bw->isa;
    const long hd = bw->hd, mr = isa->mr, nr = isa->nr, ld = bw->ld, tiles_rows = round_up(rows, mr);
    if (rows % mr)
        gemm_fast_pack_a_edge(sc->buf.pa, &(Gemm){.K = (int)hd}, a, (int)(tiles_rows - mr), (int)(rows % mr), 0,
                              (int)hd, (int)mr);
    for (long j0 = 0; j0 < keys; j0 += nr)
        for (long r0 = 0; r0 < rows; r0 += mr) {
            if (j0 >= i0 + r0 + mr) continue;
            isa->gemm_tile(s + r0 * ld + j0, ld, r0 + mr <= rows ? a + r0 * hd : sc->buf.pa, hd, panels + j0 * hd,
                           (int)hd, 1, NULL);
        }
}

// c (keys rounded up to mr, hd) += a^T @ panels: a the block's (rows, ld)
// buffer read by columns (a^T's row j is column j), panels the block's
// packed rows of q or dctx; key tile [j0, j0 + mr) starts its sums in the
// block that holds query j0 and takes the rows from there (the rows before
// it hold zeros of the mask), later blocks continue them.
static void block_at(const Backward *bw, BackwardScratch *sc, float *c, const float *a, const float *panels, long i0,
                     long rows, long keys) {
    const SimdIsa *isa = bw->isa;
    const long hd = bw->hd, mr = isa->mr, nr = isa->nr, ld = bw->ld, T = bw->T;
    const Gemm g = {.isa = isa};
    for (long j0 = 0; j0 < keys; j0 += mr) {
        const long from = j0 > i0 ? j0 - i0 : 0;
        for (long c0 = 0; c0 < hd; c0 += nr)
            gemm_fast_run_tile(&g, &sc->buf, c + j0 * hd + c0, hd, (int)min_l(mr, T - j0), (int)min_l(nr, hd - c0),
                               a + from * ld + j0, ld, 1, panels + c0 * rows + from * nr, (int)(rows - from),
                               j0 >= i0, NULL);
    }
}

// The block of query rows [i0, i1) of matrix p.
static void backward_block(const Backward *bw, BackwardScratch *sc, long p, long i0, long i1) {
    const SimdIsa *isa = bw->isa;
    const long T = bw->T, hd = bw->hd, ld = bw->ld, mr = isa->mr, nr = isa->nr;
    const long rows = i1 - i0, tiles_rows = round_up(rows, mr);
    const long keys = round_up(i1, mr);  // the columns the products read: past i1, +0
    const float *q = bw->q + (p * T + i0) * hd, *dctx = bw->dctx + (p * T + i0) * hd;
    const float *w = bw->w ? bw->w + (p * T + i0) * T : NULL, *noise = bw->noise ? bw->noise + (p * T + i0) * T : NULL;
    float *wb = sc->w, *db = noise ? sc->d : sc->w, *g = sc->g;
    // 1. the weights (and the dropped weights)
    if (!w) block_scores(bw, sc, wb, q, sc->pk, i0, rows, i1);
    for (long r = 0; r < rows; r++) {
        const long i = i0 + r, n_soft = softmax_width(isa, i + 1, T);
        float *w_row = wb + r * ld;
        if (w) {
            memcpy(w_row, w + r * T, (size_t)n_soft * sizeof(float));
            memset(w_row + n_soft, 0, (size_t)(keys - n_soft) * sizeof(float));
        } else {
            attention_row(isa, T, bw->scale, w_row, NULL, i + 1, keys);
        }
        if (noise) {
            rows_mul(db + r * ld, w_row, noise + r * T, n_soft);
            memset(db + r * ld + n_soft, 0, (size_t)(keys - n_soft) * sizeof(float));
        }
    }
    // 2. g = dctx_rows @ v^T (* noise); softmax's backward; / scale; +0 past key i
    block_scores(bw, sc, g, dctx, sc->pvt, i0, rows, i1);
    for (long r = 0; r < tiles_rows; r++) {
        float *g_row = g + r * ld;
        if (r >= rows) {  // past the matrix's last row: +0, read by the edge tile only
            memset(g_row, 0, (size_t)keys * sizeof(float));
            continue;
        }
        const long i = i0 + r, n_soft = softmax_width(isa, i + 1, T);
        if (noise) noise_dropout_backward(g_row, g_row, noise + r * T, n_soft);
        isa->softmax_backward_row(g_row, g_row, wb + r * ld, (int)n_soft);
        rows_fast_div_scalar_isa(isa, g_row, g_row, bw->scale, i + 1);
        memset(g_row + i + 1, 0, (size_t)(keys - i - 1) * sizeof(float));
    }
    // 3. dq rows = g @ k, each tile of rows up to its last row's key, depth
    //    blocks of kc
    const Gemm gm = {.isa = isa};
    float *dq = bw->dq + (p * T + i0) * hd;
    for (long pc = 0; pc < i1; pc += isa->kc)
        for (long c0 = 0; c0 < hd; c0 += nr)
            for (long r0 = 0; r0 < rows; r0 += mr) {
                const long end = min_l(T, i0 + r0 + mr);
                if (pc >= end) continue;
                gemm_fast_run_tile(&gm, &sc->buf, dq + r0 * hd + c0, hd, (int)min_l(mr, rows - r0),
                                   (int)min_l(nr, hd - c0), g + r0 * ld + pc, ld, 0, sc->pkn + c0 * T + pc * nr,
                                   (int)min_l(isa->kc, end - pc), pc == 0, NULL);
            }
    // 4. dk += g^T @ q_rows, dv += dropped^T @ dctx_rows
    const Gemm gq = {.isa = isa, .b = q, .K = (int)rows, .N = (int)hd};
    gemm_fast_pack_b(sc->pq, &gq, q, 0, (int)rows, 0, (int)hd, (int)nr);
    const Gemm gd = {.isa = isa, .b = dctx, .K = (int)rows, .N = (int)hd};
    gemm_fast_pack_b(sc->pdc, &gd, dctx, 0, (int)rows, 0, (int)hd, (int)nr);
    block_at(bw, sc, bw->dk + p * T * hd, g, sc->pq, i0, rows, i1);
    block_at(bw, sc, bw->dv + p * T * hd, db, sc->pdc, i0, rows, i1);
}

static void backward_items(void *ctx, int thread, long begin, long end) {
    const Backward *bw = ctx;
    const long T = bw->T, hd = bw->hd, nr = bw->isa->nr;
    long size[9];
    backward_sizes(bw, size);
    BackwardScratch sc;
    float *at = bw->buffers + thread * bw->buffer_floats;
    float **parts[9] = {&sc.buf.pa, &sc.buf.tile, &sc.pk, &sc.pvt, &sc.pkn, &sc.pq, &sc.pdc, &sc.w, &sc.d};
    for (int i = 0; i < 9; i++) *parts[i] = at, at += size[i];
    sc.g = at;
    sc.buf.pb = NULL, sc.buf.bias_pad = NULL;
    for (long p = begin; p < end; p++) {
        const float *k = bw->k + p * T * hd, *v = bw->v + p * T * hd;
        const Gemm gk = {.isa = bw->isa, .b = k, .K = (int)hd, .N = (int)T, .b_wt = 1};
        if (!bw->w) gemm_fast_pack_b(sc.pk, &gk, k, 0, (int)hd, 0, (int)T, (int)nr);
        const Gemm gv = {.isa = bw->isa, .b = v, .K = (int)hd, .N = (int)T, .b_wt = 1};
        gemm_fast_pack_b(sc.pvt, &gv, v, 0, (int)hd, 0, (int)T, (int)nr);
        const Gemm gkn = {.isa = bw->isa, .b = k, .K = (int)T, .N = (int)hd};
        gemm_fast_pack_b(sc.pkn, &gkn, k, 0, (int)T, 0, (int)hd, (int)nr);
        for (long i0 = 0; i0 < T; i0 += bw->block_rows) backward_block(bw, &sc, p, i0, min_l(T, i0 + bw->block_rows));
    }
}

// max |x_i| over n floats, +inf if one is not finite
static double max_abs(const float *x, long n) {
    float m = 0.0f;
    for (long i = 0; i < n; i++) {
        const float a = fabsf(x[i]);
        if (!(a <= m)) m = isfinite(a) ? a : INFINITY;
        if (isinf(m)) return INFINITY;
    }
    return m;
}

// Whether the batch passes the fused backward's checks (above).
static int backward_fusable(const float *dctx, const float *q, const float *k, const float *v, const float *w,
                            const float *noise, long batch, int T, int hd, float scale) {
    const long n = batch * T * hd;
    const double limit = FLT_MAX / 2.0, m_noise = noise ? max_abs(noise, batch * (long)T * T) : 1.0;
    const double m_q = max_abs(q, n), m_k = max_abs(k, n);
    const double over_scale = fabsf(scale) < 1.0f ? 1.0 / fabsf(scale) : 1.0;  // (+inf for a scale of 0)
    if (!isfinite(scale) || !(hd * m_q * m_k * over_scale < limit)) return 0;
    if (!(hd * max_abs(dctx, n) * max_abs(v, n) * (m_noise > 1.0 ? m_noise : 1.0) < limit)) return 0;
    return !w || zero_above(w, batch, T);
}

// The fused backward over the batch, one matrix per work item.
static void backward_fused(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                           const float *v, const float *w, const float *noise, long batch, int T, int hd,
                           float scale, int threads) {
    Backward bw = {fast_path_isa(), dq, dk, dv, dctx, q, k, v, w, noise, T, hd, scale, 0, round_up(T, 16) + 16,
                   NULL, 0};
    const long mr = bw.isa->mr, per_row = (noise ? 3 : 2) * bw.ld * (long)sizeof(float);
    const long fit = (fast_path_thresholds_ignored() ? 0 : BW_BLOCK_BYTES) / per_row;
    bw.block_rows = (int)round_up(fit < 2 * mr ? 2 * mr : min_l(fit, BW_BLOCK_ROWS), mr);
    long size[9];
    backward_sizes(&bw, size);
    for (int i = 0; i < 9; i++) bw.buffer_floats += size[i];
    bw.buffer_floats += round_up((long)bw.block_rows * bw.ld, 16);  // g
    bw.buffers = alloc_floats(threads * bw.buffer_floats, "the attention backward's scratch");
    fast_threads_run(threads, batch, backward_items, &bw);
    free(bw.buffers);
}

void attend_fast_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                             const float *v, const float *w, const float *noise, long batch, int T, int hd,
                             float scale, bool causal, int softmax_dim) {
    // One (T, T) matrix at a time (4 MiB of temporaries at Exercise 3.3's
    // size, not 48), unless the softmax ran over the batch axis (dim 0),
    // which ties the matrices together. Without w (a forward that kept no
    // (T, T) tensor: softmax over the last dim only) each matrix's weights
    // are computed again from q and k.
    const int dim = softmax_dim < 0 ? softmax_dim + 3 : softmax_dim;
    // causal, over the last dim, on a path's tiles: fused, one matrix per
    // thread, where every thread has a matrix (else the products split)
    const int threads = fast_threads_plan(batch, 5.0 * batch * (double)T * T * hd, GEMM_THREAD_MIN_MACS);
    if (dim == 2 && causal && T >= 16 && fast_path_isa() && batch >= fast_threads_get() &&
        backward_fusable(dctx, q, k, v, w, noise, batch, T, hd, scale)) {
        backward_fused(dq, dk, dv, dctx, q, k, v, w, noise, batch, T, hd, scale, threads);
        return;
    }
    const long chunk = dim == 0 ? batch : 1;
    if (!w && dim != 2) die_internal("attention's backward: the weights of a softmax over dim %d must be kept", softmax_dim);
    Tensor w_again = w ? (Tensor){0} : tensor_empty(SIZE(T, T)), scores = w ? (Tensor){0} : tensor_empty(SIZE(T, T));
    for (long p = 0; p < batch; p += chunk) {
        const long m = p * T * hd, s = p * T * T;
        if (!w) attention_weights(w_again.data, scores.data, q + m, k + m, T, hd, scale, causal);
        attention_backward_matrices(dq + m, dk + m, dv + m, dctx + m, q + m, k + m, v + m, w ? w + s : w_again.data,
                                    noise ? noise + s : NULL, chunk, T, hd, scale, causal, dim);
    }
    if (!w) tensor_free(w_again), tensor_free(scores);
}
