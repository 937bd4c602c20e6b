// gemm_fast.c: the products of gemm.h (gemm_fast_matmul, gemm_fast_matmul_wt_bias,
// gemm_fast_bmm, gemm_fast_bmm_wt; the backward's gemm_fast_matmul_at, gemm_fast_bmm_at), with
// the bits of gemm.c's matmul (and gemm_matmul_backward_b):
// out[i][j] = ((+0 + a[i][0]*b[0][j]) + a[i][1]*b[1][j]) + ..., each product
// rounded then added (no FMA), k ascending; a Linear's bias added last.
//
// The matmul is blocked as in GotoBLAS/BLIS, with one twist: the depth (k)
// blocks only pause each output's chain. The first block starts every output
// at +0, each later block reloads the stored float32 and continues, the last
// one adds the bias: the additions happen in exactly netlib's order. The
// register tiles are the path's (simd_isa.h, gemm_simd.c); threads split rows of
// the output, never a sum. Small products, and those whose tiles would be
// mostly padding, run the scalar kernels.
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "fast_path.h"
#include "fast_threads.h"
#include "fast_util.h"
#include "gemm_fast.h"

// Products below this many multiply-adds run the scalar kernels: the fixed
// cost of the fast path (an allocation, packing, edge tiles) is more than it
// saves. The threshold lies between 8x8x8 (512: as fast either way) and
// 12x12x12 (the fast path ahead); the timings are in tests/BENCHMARKS.md.
// The book's 6x3 @ 3x2 is 36.
#define GEMM_FAST_MIN_MACS 1024.0
// ... and so do products whose register tiles would be mostly padding: a
// tile computes mr x nr outputs, so (M, K, 1) costs 16-32 times its work
// (64x64x1 runs slower on the fast path). Fast only if the padded work is
// at most this many times the real one.
#define GEMM_MAX_PADDING 8.0

// Depths up to this many run as one block (kc = K): each tile then sums its
// whole depth in registers, storing c once, and reads its rows of a front to
// back. For the projections' (16384, 768) @ (768, 768)^T that is faster than
// blocks of 256 (paired runs of the whole process: tests/BENCHMARKS.md).
#define GEMM_WHOLE_DEPTH 768

// The depth block of a product of depth K: all of it, or the path's kc.
static int depth_block(const SimdIsa *isa, int K) { return K <= GEMM_WHOLE_DEPTH ? K : isa->kc; }

// Floats of one thread's pa, pb and tile, each rounded up to 64 bytes.
static void pack_sizes(const SimdIsa *isa, int K, int N, long size[3]) {
    const long kc = min_l(depth_block(isa, K), K);
    size[0] = round_up(round_up(isa->mc, isa->mr) * kc, 16);  // a whole (mc, kc) block of a^T, or an edge
    size[1] = round_up(round_up(min_l(isa->nc, N), isa->nr) * kc, 16);
    size[2] = round_up((long)isa->mr * isa->nr, 16);
}

// pb (panels of nr columns, each (kc, nr)) = columns [jc, jc+nc) of rows
// [pc, pc+kc) of b (K, N), or of w^T for w (N, K) when b_wt; columns past
// the end are zero. w^T is packed by 8 x 8 register transposes (8 rows of w
// = 8 columns of the panel), its ragged edges element by element.
void gemm_fast_pack_b(float *pb, const Gemm *g, const float *b, int pc, int kc, int jc, int nc, int nr) {
    if (!g->b_wt) {
        // row by row: each row of b read once, front to back, and dealt out
        // to the panels (constant-size copies, which the compiler inlines)
        const int full = nc / nr * nr;
        for (int k = 0; k < kc; k++) {
            const float *b_row = b + (long)(pc + k) * g->N + jc;
            float *dst = pb + (long)k * nr;
            for (int j0 = 0; j0 < full; j0 += nr, dst += (long)kc * nr) {
                if (nr == 16) memcpy(dst, b_row + j0, 16 * sizeof(float));
                else if (nr == 32) memcpy(dst, b_row + j0, 32 * sizeof(float));
                else memcpy(dst, b_row + j0, (size_t)nr * sizeof(float));
            }
            if (full < nc) {
                memcpy(dst, b_row + full, (size_t)(nc - full) * sizeof(float));
                memset(dst + (nc - full), 0, (size_t)(nr - (nc - full)) * sizeof(float));
            }
        }
        return;
    }
    for (int j0 = 0; j0 < nc; j0 += nr) {
        const int width = (int)min_l(nr, nc - j0);
        float *panel = pb + (long)(j0 / nr) * kc * nr;
        const float *w_rows = b + (long)(jc + j0) * g->K + pc;  // row j of w: column j of the panel
        int j = 0;
        for (; j + 8 <= width; j += 8) {
            int k = 0;
            for (; k + 8 <= kc; k += 8)
                (g->isa)->transpose_8x8(panel + (long)k * nr + j, nr, w_rows + (long)j * g->K + k, g->K);
            for (; k < kc; k++)
                for (int jj = j; jj < j + 8; jj++) panel[(long)k * nr + jj] = w_rows[(long)jj * g->K + k];
        }
        for (; j < nr; j++) {
            for (int k = 0; k < kc; k++) panel[(long)k * nr + j] = j < width ? w_rows[(long)j * g->K + k] : 0.0f;
        }
    }
}

// pa (mr, kc), rows kc apart = rows [i, i+height) of columns [pc, pc+kc) of
// a (M, K), the rows past height zero: the bottom edge of the row range,
// where the tile would otherwise read past a's last row.
void gemm_fast_pack_a_edge(float *pa, const Gemm *g, const float *a, int i, int height, int pc, int kc, int mr) {
    for (int r = 0; r < mr; r++) {
        if (r < height) memcpy(pa + (long)r * kc, a + (long)(i + r) * g->K + pc, (size_t)kc * sizeof(float));
        else memset(pa + (long)r * kc, 0, (size_t)kc * sizeof(float));
    }
}

// pa = rows [i, i+height) of columns [pc, pc+kc) of the product's a^T, a
// stored (K, M), as panels of mr rows, each k-major: row t mr + r, column k
// at pa[t mr kc + k mr + r] (the _at tile reads a panel's columns, lda = mr);
// the rows past height zero. Each of a's rows gives mr floats side by side
// to each panel: copies, no transposes. The rows PACK_PREFETCH_ROWS ahead
// are fetched as it goes: a is read once, often from beyond L2.
enum { PACK_PREFETCH_ROWS = 8 };
static void pack_a_t(float *pa, const Gemm *g, const float *a, int i, int height, int pc, int kc, int mr) {
    const long M = g->M, full = height / mr * mr;
    for (int k = 0; k < kc; k++) {
        const float *row = a + (long)(pc + k) * M + i;
        if (pc + k + PACK_PREFETCH_ROWS < g->K)  // (a^T's depth is a's rows)
            for (int l = 0; l < height; l += 16) __builtin_prefetch(row + PACK_PREFETCH_ROWS * M + l);
        float *dst = pa + (long)k * mr;
        for (long r = 0; r < full; r += mr, dst += (long)mr * kc) {
            if (mr == 6) memcpy(dst, row + r, 6 * sizeof(float));
            else if (mr == 8) memcpy(dst, row + r, 8 * sizeof(float));
            else memcpy(dst, row + r, (size_t)mr * sizeof(float));
        }
        if (full < height) {
            memcpy(dst, row + full, (size_t)(height - full) * sizeof(float));
            memset(dst + (height - full), 0, (size_t)(mr - (height - full)) * sizeof(float));
        }
    }
}

// One register tile at c (height x width valid, rows ldc apart), a read by
// rows (a_cols 0: the gemm_tile) or by columns (1: the gemm_tile_at). A
// full tile runs in place; an edge tile runs on the scratch tile (loaded
// from c unless it is the first depth block) and only its valid part is
// copied back.
void gemm_fast_run_tile(const Gemm *g, PackBuffers *buf, float *c, long ldc, int height, int width, const float *a,
                        long lda, int a_cols, const float *pb, int kc, int first, const float *bias) {
    const SimdIsa *isa = g->isa;
    void (*const tile_fn)(float *, long, const float *, long, const float *, int, int, const float *) =
        a_cols ? isa->gemm_tile_at : isa->gemm_tile;
#ifdef LITATTN_PLANT_SLOWDOWN
    // The benchmarks' proof only (tools/bench/bench_pairs.py): a build made
    // with -Dc_args=-DLITATTN_PLANT_SLOWDOWN runs every 20th tile a second
    // time into the scratch tile, 5 % more work for the products, the same bits.
    static _Thread_local unsigned planted;
    if (++planted % 20 == 0) tile_fn(buf->tile, isa->nr, a, lda, pb, kc, 1, NULL);
#endif
    if (height == isa->mr && width == isa->nr) {
        tile_fn(c, ldc, a, lda, pb, kc, first, bias);
        return;
    }
    float *tile = buf->tile;
    if (!first) {
        for (int r = 0; r < height; r++) memcpy(tile + r * isa->nr, c + r * ldc, (size_t)width * sizeof(float));
    }
    tile_fn(tile, isa->nr, a, lda, pb, kc, first, bias);
    for (int r = 0; r < height; r++) memcpy(c + r * ldc, tile + r * isa->nr, (size_t)width * sizeof(float));
}

// out rows [m0, m1) of product p, blocked: column blocks of nc, depth blocks
// of kc (depth_block: the whole depth up to GEMM_WHOLE_DEPTH; b's block
// packed, (kc, nc): L2), row blocks of mc (a's (mc, kc)
// block stays in L2 while the column panels (kc, nr: L1) sweep past it),
// then mr x nr register tiles. The tiles read a's rows in place (rows K
// apart); only a bottom edge of fewer than mr rows is copied, zero-padded,
// into pa. The depth blocks run in order and each tile continues from what
// the previous block stored (first: from +0; last: then the bias).
static void gemm_rows_fast(const Gemm *g, PackBuffers *buf, long p, int m0, int m1) {
    const SimdIsa *isa = g->isa;
    const int M = g->M, K = g->K, N = g->N, mr = isa->mr, nr = isa->nr, kcb = depth_block(isa, K);
    const float *a = g->a + p * M * K, *b = g->b + p * K * N;
    float *out = g->out + p * M * N;
    const int m_full = m0 + (m1 - m0) / mr * mr;  // rows from m_full on are the bottom edge
    for (int jc = 0; jc < N; jc += isa->nc) {
        const int nc = (int)min_l(isa->nc, N - jc);
        for (int pc = 0; pc < K; pc += kcb) {
            const int kc = (int)min_l(kcb, K - pc);
            const int last = pc + kc == K;
            // (a depth block none of these rows needs: nothing to pack)
            if ((g->zeros == GEMM_ZEROS_ABOVE && pc >= m1) || (g->zeros == GEMM_ZEROS_BELOW && pc + kc <= m0)) continue;
            gemm_fast_pack_b(buf->pb, g, b, pc, kc, jc, nc, nr);
            if (m_full < m1 && !g->a_t) gemm_fast_pack_a_edge(buf->pa, g, a, m_full, m1 - m_full, pc, kc, mr);
            const int mcb = isa->mc;
            for (int ic = m0; ic < m1; ic += mcb) {
                const int mc = (int)min_l(mcb, m1 - ic);
                if (g->a_t) pack_a_t(buf->pa, g, a, ic, mc, pc, kc, mr);
                for (int jr = 0; jr < nc; jr += nr) {
                    const float *pb = buf->pb + (long)(jr / nr) * kc * nr;
                    const float *bias = last && buf->bias_pad ? buf->bias_pad + jc + jr : NULL;
                    const int width = (int)min_l(nr, nc - jr);
                    for (int ir = 0; ir < mc; ir += mr) {
                        const int i = ic + ir, edge = i >= m_full, height = (int)min_l(mr, m1 - i);
                        // the depth blocks this tile's rows need, and the one it starts in
                        if (g->zeros == GEMM_ZEROS_ABOVE && pc >= i + height) continue;
                        if (g->zeros == GEMM_ZEROS_BELOW && pc + kc <= i) continue;
                        const int first = pc == (g->zeros == GEMM_ZEROS_BELOW ? i / kcb * kcb : 0);
                        // a^T's rows: panel ir / mr of pa, read by columns
                        const float *a_rows = g->a_t ? buf->pa + (long)ir * kc : edge ? buf->pa : a + (long)i * K + pc;
                        float *c = out + (long)i * N + jc + jr;
                        gemm_fast_run_tile(g, buf, c, N, height, width, a_rows, g->a_t ? mr : edge ? kc : K, g->a_t, pb,
                                           kc, first, bias);
                    }
                }
            }
        }
    }
}

// out rows [m0, m1) of product p with the reference kernels (gemm.c)
static void gemm_rows_scalar(const Gemm *g, long p, int m0, int m1) {
    const long M = g->M, K = g->K, N = g->N;
    float *out_rows = g->out + p * M * N + m0 * N;
    const float *a_rows = g->a + p * M * K + m0 * K, *b = g->b + p * K * N;
    if (g->a_t) gemm_matmul_backward_b_rows(out_rows, g->a + p * M * K, b, g->K, g->M, g->N, m0, m1);
    else if (g->b_wt) gemm_matmul_wt_bias(out_rows, a_rows, b, g->bias, m1 - m0, g->K, g->N);
    else gemm_matmul(out_rows, a_rows, b, m1 - m0, g->K, g->N);
}

// Work items [begin, end) on thread `thread`: item i is rows [t r, (t+1) r)
// of product i / items_per_product, t = i mod items_per_product,
// r = rows_per_item.
static void gemm_items(void *ctx, int thread, long begin, long end) {
    const Gemm *g = ctx;
    PackBuffers buf = {NULL, NULL, NULL, g->bias_pad};
    if (g->isa) {
        long size[3];
        pack_sizes(g->isa, g->K, g->N, size);
        buf.pa = g->buffers + thread * g->buffer_floats;
        buf.pb = buf.pa + size[0];
        buf.tile = buf.pb + size[1];
    }
    for (long item = begin; item < end;) {
        const long p = item / g->items_per_product, t0 = item % g->items_per_product;
        const long t1 = min_l(g->items_per_product, t0 + (end - item));
        const int m0 = (int)(t0 * g->rows_per_item), m1 = (int)min_l(g->M, t1 * g->rows_per_item);
        if (g->isa) gemm_rows_fast(g, &buf, p, m0, m1);
        else gemm_rows_scalar(g, p, m0, m1);
        item += t1 - t0;
    }
}

void gemm_fast_product_zeros(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K,
                     int N, int b_wt, int a_t, int zeros) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    const double macs = (double)M * K * N;
    const SimdIsa *isa = K > 0 ? fast_path_isa() : NULL;
    if (isa && !fast_path_thresholds_ignored()) {
        const double padded = (double)round_up(M, isa->mr) * (double)round_up(N, isa->nr) * K;
        if (macs < GEMM_FAST_MIN_MACS || padded > GEMM_MAX_PADDING * macs) isa = NULL;
    }
    Gemm g = {isa, out, a, b, bias, batch, M, K, N, b_wt, a_t, M == K ? zeros : 0, isa ? isa->mr : 16, 0, NULL, 0,
              NULL};
    g.items_per_product = (M + g.rows_per_item - 1) / g.rows_per_item;
    int threads = fast_threads_plan(batch * g.items_per_product, macs * (double)batch, GEMM_THREAD_MIN_MACS);
    if (isa) {
        // one block for every thread's pa, pb and tile (64-byte aligned
        // pieces), and the padded bias
        long size[3];
        pack_sizes(isa, K, N, size);
        g.buffer_floats = size[0] + size[1] + size[2];
        const long n_pad = round_up(N, isa->nr);
        g.buffers = alloc_floats(threads * g.buffer_floats + (bias ? n_pad : 0), "the product's packed blocks");
        if (bias) {
            g.bias_pad = g.buffers + threads * g.buffer_floats;
            memcpy(g.bias_pad, bias, (size_t)N * sizeof(float));
            memset(g.bias_pad + N, 0, (size_t)(n_pad - N) * sizeof(float));
        }
    }
    fast_threads_run(threads, batch * g.items_per_product, gemm_items, &g);
    free(g.buffers);
}

void gemm_fast_product(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K, int N,
               int b_wt, int a_t) {
    gemm_fast_product_zeros(out, a, b, bias, batch, M, K, N, b_wt, a_t, GEMM_ZEROS_NONE);
}

void gemm_fast_matmul(float *out, const float *a, const float *b, int M, int K, int N) {
    gemm_fast_product(out, a, b, NULL, 1, M, K, N, 0, 0);
}

void gemm_fast_matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K, int N) {
    gemm_fast_product(out, x, w, bias, 1, M, K, N, 1, 0);
}

void gemm_fast_bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    gemm_fast_product(out, a, b, NULL, batch, M, K, N, 0, 0);
}

void gemm_fast_bmm_wt(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    gemm_fast_product(out, a, b, NULL, batch, M, K, N, 1, 0);
}

void gemm_fast_matmul_at(float *out, const float *a, const float *b, int M, int K, int N) {
    // out[k][n] = +0 + sum_m a[m][k] * b[m][n], m ascending: the matmul of
    // a^T (K, M), packed from a as it is read
    gemm_fast_product(out, a, b, NULL, 1, K, M, N, 0, 1);
}

void gemm_fast_bmm_at(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    gemm_fast_product(out, a, b, NULL, batch, K, M, N, 0, 1);
}
