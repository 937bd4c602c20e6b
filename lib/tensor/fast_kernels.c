// fast_kernels.c: the dispatcher of fast_kernels.h. It picks the path once,
// cuts the work into independent pieces (rows, heads, batch items, tiles),
// hands the pieces to threads, and runs the innermost kernels of the chosen
// instruction set (fast_kernels_avx2.c, fast_kernels_avx512.c) or the scalar
// kernels of kernels.h. A piece is always a set of whole outputs, so neither
// the path nor the thread count changes any bit.
//
// The matmul is blocked as in GotoBLAS/BLIS, with one twist: the depth (k)
// blocks only pause each output's chain. The first block starts every output
// at +0, each later block reloads the stored float32 and continues, the last
// one adds the bias: the additions happen in exactly netlib's order.
#include "fast_kernels.h"

#include <math.h>
#ifdef LITATTN_FAST_X86
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backward_kernels.h"
#include "error.h"
#include "fast_kernels_isa.h"
#include "kernels.h"
#include "pages.h"
#include "tensor.h"

// ---------------------------------------------------------------------------
// dispatch and thread count: the only global state
// ---------------------------------------------------------------------------
enum { MAX_THREADS = 64 };

static pthread_once_t path_once = PTHREAD_ONCE_INIT;
static atomic_int active_path = FAST_PATH_SCALAR;
static atomic_int thread_count = 1;
static atomic_int ignore_thresholds = 0;  // tests: every size is fast and split

// The best path this CPU (and OS: __builtin_cpu_supports checks XCR0) runs.
static int best_path(void) {
#ifdef LITATTN_FAST_X86
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (avx2 && avx512) return FAST_PATH_AVX512;
    if (avx2) return FAST_PATH_AVX2;
#endif
    return FAST_PATH_SCALAR;
}

// The path to take when none is asked for: the best one, except on a core
// that runs 512-bit instructions as two 256-bit halves, AMD's Zen 4 (family
// 19h; Zen 3, the same family, has no AVX-512). There AVX-512's register
// tile is the slower and its exp the faster, so the path is AVX-512 with
// AVX2's tile (fast_isa_avx512_ymm). The bits are the same either way.
static int preferred_path(int best) {
#ifdef LITATTN_FAST_X86
    unsigned int eax, ebx, ecx, edx;
    if (best == FAST_PATH_AVX512 && __get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == 0x68747541u /* "Auth" */ &&
        edx == 0x69746e65u /* "enti" */ && ecx == 0x444d4163u /* "cAMD" */ && __get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        const unsigned int base = (eax >> 8) & 0xf, family = base == 0xf ? base + ((eax >> 20) & 0xff) : base;
        if (family == 0x19) return FAST_PATH_AVX512_YMM;
    }
#endif
    return best;
}

// The instruction set a path needs, as the path that is the best with it:
// AVX-512 with AVX2's tile needs what AVX-512 needs.
static int needs(int path) { return path == FAST_PATH_AVX512_YMM ? FAST_PATH_AVX512 : path; }

// path if this CPU runs it, else the best path it has (below the first
// path: the scalar one)
static int clamp_path(int path, int best) {
    if (path < FAST_PATH_SCALAR) return FAST_PATH_SCALAR;
    return path < FAST_PATHS && needs(path) <= best ? path : best;
}

int fast_kernels_preferred_path(void) { return preferred_path(best_path()); }

static void choose_path(void) {
    const int best = best_path();
    int want = preferred_path(best);
    const char *env = getenv("LITATTN_KERNELS");
    if (env && strcmp(env, "scalar") == 0) want = FAST_PATH_SCALAR;
    if (env && strcmp(env, "avx2") == 0) want = FAST_PATH_AVX2;
    if (env && strcmp(env, "avx512") == 0) want = FAST_PATH_AVX512;
    if (env && strcmp(env, "avx512-ymm") == 0) want = FAST_PATH_AVX512_YMM;
    atomic_store(&active_path, clamp_path(want, best));
}

int fast_kernels_path(void) {
    pthread_once(&path_once, choose_path);
    return atomic_load(&active_path);
}

const char *fast_kernels_path_name_of(int path) {
    static const char *const names[FAST_PATHS] = {"scalar", "avx2", "avx512", "avx512-ymm"};
    return path >= FAST_PATH_SCALAR && path < FAST_PATHS ? names[path] : "none";
}

const char *fast_kernels_path_name(void) { return fast_kernels_path_name_of(fast_kernels_path()); }

bool fast_kernels_runs_path(int path) {
    return path >= FAST_PATH_SCALAR && path < FAST_PATHS && needs(path) <= best_path();
}

void fast_kernels_force_path(int path) {
    pthread_once(&path_once, choose_path);
    atomic_store(&active_path, clamp_path(path, best_path()));
}

void fast_kernels_set_threads(int n) {
    atomic_store(&thread_count, n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n);
}

int fast_kernels_threads(void) { return atomic_load(&thread_count); }

void fast_kernels_ignore_thresholds(int on) { atomic_store(&ignore_thresholds, on != 0); }

// The active instruction set's kernels, or NULL for the scalar path.
static const FastIsa *active_isa(void) {
#ifdef LITATTN_FAST_X86
    switch (fast_kernels_path()) {
    case FAST_PATH_AVX2: return &fast_isa_avx2;
    case FAST_PATH_AVX512: return &fast_isa_avx512;
    case FAST_PATH_AVX512_YMM: return &fast_isa_avx512_ymm;
    default: break;
    }
#endif
    return NULL;
}

// An AVX-512 entry left NULL is served by the AVX2 kernel (the AVX-512 path
// implies AVX2).
#ifdef LITATTN_FAST_X86
#define ISA_FN(isa, fn) ((isa)->fn ? (isa)->fn : fast_isa_avx2.fn)
#else
#define ISA_FN(isa, fn) ((isa)->fn)
#endif

// ---------------------------------------------------------------------------
// threads: a contiguous range of work items per thread
// ---------------------------------------------------------------------------
typedef void (*RangeFn)(void *ctx, int thread, long begin, long end);

typedef struct {
    RangeFn fn;
    void *ctx;
    int thread;
    long begin, end;
} Chunk;

static void *chunk_main(void *p) {
    const Chunk *c = p;
    c->fn(c->ctx, c->thread, c->begin, c->end);
    return NULL;
}

// How many threads n items are worth: min(threads, n, work / min_work),
// where `work` is what the n items cost and min_work what pays for one
// thread (creating and joining one costs some tens of microseconds).
static int plan_threads(long n, double work, double min_work) {
    long k = fast_kernels_threads();
    if (k > n) k = n;
    if (k > 1 && !atomic_load(&ignore_thresholds) && work / min_work < (double)k) k = (long)(work / min_work);
    return k < 1 ? 1 : (int)k;
}

// Runs fn over items [0, n) on k threads: thread t takes [n t / k,
// n (t+1) / k), the caller being thread 0. A thread that cannot be created
// leaves its range to the caller.
static void run_threads(int k, long n, RangeFn fn, void *ctx) {
    if (n <= 0) return;
    if (k <= 1) {
        fn(ctx, 0, 0, n);
        return;
    }
    pthread_t tid[MAX_THREADS];
    Chunk chunk[MAX_THREADS];
    int started[MAX_THREADS];
    for (int t = 0; t < k; t++) chunk[t] = (Chunk){fn, ctx, t, n * t / k, n * (t + 1) / k};
    // The workers need little stack (the kernels' buffers are on the heap).
    pthread_attr_t attr;
    const int have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr) pthread_attr_setstacksize(&attr, 1 << 20);
    for (int t = 1; t < k; t++)
        started[t] = pthread_create(&tid[t], have_attr ? &attr : NULL, chunk_main, &chunk[t]) == 0;
    if (have_attr) pthread_attr_destroy(&attr);
    chunk_main(&chunk[0]);
    for (int t = 1; t < k; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else chunk_main(&chunk[t]);
    }
}

static void parallel_for(long n, double work, double min_work, RangeFn fn, void *ctx) {
    if (n > 0) run_threads(plan_threads(n, work, min_work), n, fn, ctx);
}

static long min_l(long a, long b) { return a < b ? a : b; }
static long round_up(long a, long b) { return (a + b - 1) / b * b; }

// n floats, 64-byte aligned (on huge pages from 2 MiB: pages.h); given back
// with free()
static float *alloc_floats(long n, const char *what) {
    return pages_alloc((size_t)round_up(n > 0 ? n : 1, 16) * sizeof(float), what);
}

// ---------------------------------------------------------------------------
// matmul: blocking, packing and work items
// ---------------------------------------------------------------------------

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

// Depths up to this many run as one block (kc = K): each tile then sums its
// whole depth in registers, storing c once, and reads its rows of a front to
// back. For the projections' (16384, 768) @ (768, 768)^T that is faster than
// blocks of 256 (paired runs of the whole process: tests/BENCHMARKS.md).
#define GEMM_WHOLE_DEPTH 768

// The depth block of a product of depth K: all of it, or the path's kc.
static int depth_block(const FastIsa *isa, int K) { return K <= GEMM_WHOLE_DEPTH ? K : isa->kc; }

// Floats of one thread's pa, pb and tile, each rounded up to 64 bytes.
static void pack_sizes(const FastIsa *isa, int K, int N, long size[3]) {
    const long kc = min_l(depth_block(isa, K), K);
    size[0] = round_up(round_up(isa->mc, isa->mr) * kc, 16);  // a whole (mc, kc) block of a^T, or an edge
    size[1] = round_up(round_up(min_l(isa->nc, N), isa->nr) * kc, 16);
    size[2] = round_up((long)isa->mr * isa->nr, 16);
}

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
// the end are zero. w^T is packed by 8 x 8 register transposes (8 rows of w
// = 8 columns of the panel), its ragged edges element by element.
static void pack_b(float *pb, const Gemm *g, const float *b, int pc, int kc, int jc, int nc, int nr) {
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
                ISA_FN(g->isa, transpose_8x8)(panel + (long)k * nr + j, nr, w_rows + (long)j * g->K + k, g->K);
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
static void pack_a_edge(float *pa, const Gemm *g, const float *a, int i, int height, int pc, int kc, int mr) {
    for (int r = 0; r < mr; r++) {
        if (r < height) memcpy(pa + (long)r * kc, a + (long)(i + r) * g->K + pc, (size_t)kc * sizeof(float));
        else memset(pa + (long)r * kc, 0, (size_t)kc * sizeof(float));
    }
}

// pa (rows rounded up to mr, kc), rows kc apart = rows [i, i+height) of
// columns [pc, pc+kc) of the product's a^T, a stored (K, M); the rows past
// height zero. By 8 x 8 register transposes, two side by side where they
// fit (so that each row of a is read as whole 64-byte lines, which speeds
// up w^T @ dctx: tests/BENCHMARKS.md), the ragged edges by element.
static void pack_a_t(float *pa, const Gemm *g, const float *a, int i, int height, int pc, int kc, int mr) {
    const long M = g->M, rows = round_up(height, mr);
    int r = 0;
    // 16 rows of a^T at a time: each 8 rows of a read as whole 64-byte lines
    for (; r + 16 <= height && kc % 8 == 0; r += 16)
        for (int k = 0; k < kc; k += 8) {
            const float *a_block = a + (long)(pc + k) * M + i + r;
            ISA_FN(g->isa, transpose_8x8)(pa + (long)r * kc + k, kc, a_block, M);
            ISA_FN(g->isa, transpose_8x8)(pa + (long)(r + 8) * kc + k, kc, a_block + 8, M);
        }
    for (; r + 8 <= height; r += 8) {
        int k = 0;
        for (; k + 8 <= kc; k += 8)
            ISA_FN(g->isa, transpose_8x8)(pa + (long)r * kc + k, kc, a + (long)(pc + k) * M + i + r, M);
        for (; k < kc; k++)
            for (int rr = r; rr < r + 8; rr++) pa[(long)rr * kc + k] = a[(long)(pc + k) * M + i + rr];
    }
    for (; r < rows; r++)
        for (int k = 0; k < kc; k++) pa[(long)r * kc + k] = r < height ? a[(long)(pc + k) * M + i + r] : 0.0f;
}

// One register tile at c (height x width valid, rows ldc apart). A full tile
// runs in place; an edge tile runs on the scratch tile (loaded from c unless
// it is the first depth block) and only its valid part is copied back.
static void run_tile(const Gemm *g, PackBuffers *buf, float *c, long ldc, int height, int width, const float *a,
                     long lda, const float *pb, int kc, int first, const float *bias) {
    const FastIsa *isa = g->isa;
    if (height == isa->mr && width == isa->nr) {
        isa->gemm_tile(c, ldc, a, lda, pb, kc, first, bias);
        return;
    }
    float *tile = buf->tile;
    if (!first) {
        for (int r = 0; r < height; r++) memcpy(tile + r * isa->nr, c + r * ldc, (size_t)width * sizeof(float));
    }
    isa->gemm_tile(tile, isa->nr, a, lda, pb, kc, first, bias);
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
    const FastIsa *isa = g->isa;
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
            pack_b(buf->pb, g, b, pc, kc, jc, nc, nr);
            if (m_full < m1 && !g->a_t) pack_a_edge(buf->pa, g, a, m_full, m1 - m_full, pc, kc, mr);
            for (int ic = m0; ic < m1; ic += isa->mc) {
                const int mc = (int)min_l(isa->mc, m1 - ic);
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
                        const float *a_rows = g->a_t ? buf->pa + (long)ir * kc : edge ? buf->pa : a + (long)i * K + pc;
                        float *c = out + (long)i * N + jc + jr;
                        run_tile(g, buf, c, N, height, width, a_rows, g->a_t || edge ? kc : K, pb, kc, first, bias);
                    }
                }
            }
        }
    }
}

// out rows [m0, m1) of product p with the scalar kernels
static void gemm_rows_scalar(const Gemm *g, long p, int m0, int m1) {
    const long M = g->M, K = g->K, N = g->N;
    float *out_rows = g->out + p * M * N + m0 * N;
    const float *a_rows = g->a + p * M * K + m0 * K, *b = g->b + p * K * N;
    if (g->a_t) {
        // out[m][n] = +0 + sum_k a[k][m] * b[k][n], k ascending: matmul_backward_b's order
        const float *a_t = g->a + p * M * K;
        for (long m = m0; m < m1; m++)
            for (long n = 0; n < N; n++) {
                float s = 0.0f;
                for (long k = 0; k < K; k++) s += a_t[k * M + m] * b[k * N + n];
                out_rows[(m - m0) * N + n] = s;
            }
    } else if (g->b_wt) {
        matmul_wt_bias(out_rows, a_rows, b, g->bias, m1 - m0, g->K, g->N);
    } else {
        matmul(out_rows, a_rows, b, m1 - m0, g->K, g->N);
    }
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

static void gemm_zeros(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K,
                       int N, int b_wt, int a_t, int zeros) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    const double macs = (double)M * K * N;
    const FastIsa *isa = K > 0 ? active_isa() : NULL;
    if (isa && !atomic_load(&ignore_thresholds)) {
        const double padded = (double)round_up(M, isa->mr) * (double)round_up(N, isa->nr) * K;
        if (macs < GEMM_FAST_MIN_MACS || padded > GEMM_MAX_PADDING * macs) isa = NULL;
    }
    Gemm g = {isa, out, a, b, bias, batch, M, K, N, b_wt, a_t, M == K ? zeros : 0, isa ? isa->mr : 16, 0, NULL, 0,
              NULL};
    g.items_per_product = (M + g.rows_per_item - 1) / g.rows_per_item;
    int threads = plan_threads(batch * g.items_per_product, macs * (double)batch, GEMM_THREAD_MIN_MACS);
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
    run_threads(threads, batch * g.items_per_product, gemm_items, &g);
    free(g.buffers);
}

static void gemm(float *out, const float *a, const float *b, const float *bias, long batch, int M, int K, int N,
                 int b_wt, int a_t) {
    gemm_zeros(out, a, b, bias, batch, M, K, N, b_wt, a_t, GEMM_ZEROS_NONE);
}

void fast_matmul(float *out, const float *a, const float *b, int M, int K, int N) {
    gemm(out, a, b, NULL, 1, M, K, N, 0, 0);
}

void fast_matmul_wt_bias(float *out, const float *x, const float *w, const float *bias, int M, int K, int N) {
    gemm(out, x, w, bias, 1, M, K, N, 1, 0);
}

void fast_bmm(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    gemm(out, a, b, NULL, batch, M, K, N, 0, 0);
}

void fast_bmm_wt(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    gemm(out, a, b, NULL, batch, M, K, N, 1, 0);
}

// ---------------------------------------------------------------------------
// row-wise kernels: softmax, sums, exp
// ---------------------------------------------------------------------------

// Elements that pay for one more thread.
#define ROWS_THREAD_MIN_ELEMS (1 << 16)

typedef struct {
    const FastIsa *isa;
    float *out;
    const float *x;
    int n;
} Rows;

// softmax of rows [begin, end): n < 8 rows are the reference's scalar case
static void softmax_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const Rows *r = ctx;
    for (long i = begin; i < end; i++) {
        float *out_row = r->out + i * r->n;
        const float *x_row = r->x + i * r->n;
        if (r->isa && r->n >= 8) r->isa->softmax_row(out_row, x_row, r->n);
        else softmax_row(out_row, x_row, r->n);
    }
}

void fast_softmax_rows(float *out, const float *x, long rows, int n) {
    if (n <= 0) return;
    Rows r = {active_isa(), out, x, n};
    parallel_for(rows, (double)rows * n, ROWS_THREAD_MIN_ELEMS, softmax_items, &r);
}

static void sum_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const Rows *r = ctx;
    for (long i = begin; i < end; i++) {
        const float *x_row = r->x + i * r->n;
        r->out[i] = r->isa && r->n >= 8 ? r->isa->sum_row(x_row, r->n) : sum(x_row, r->n);
    }
}

void fast_sum_rows(float *out, const float *x, long rows, int n) {
    Rows r = {active_isa(), out, x, n < 0 ? 0 : n};
    parallel_for(rows, (double)rows * (n > 1 ? n : 1), ROWS_THREAD_MIN_ELEMS, sum_items, &r);
}

// exp over chunks of 4096 elements: item i is [4096 i, 4096 (i+1))
enum { EXP_CHUNK = 4096 };

typedef struct {
    const FastIsa *isa;
    float *out;
    const float *x;
    long n;
} ExpJob;

static void exp_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const ExpJob *e = ctx;
    const long i0 = begin * EXP_CHUNK, i1 = min_l(e->n, end * EXP_CHUNK);
    if (e->isa) {
        e->isa->exp(e->out + i0, e->x + i0, i1 - i0);
    } else {
        for (long i = i0; i < i1; i += EXP_CHUNK) exp_elementwise(e->out + i, e->x + i, (int)min_l(EXP_CHUNK, i1 - i));
    }
}

void fast_exp(float *out, const float *x, long n) {
    ExpJob e = {active_isa(), out, x, n};
    parallel_for((n + EXP_CHUNK - 1) / EXP_CHUNK, (double)n, ROWS_THREAD_MIN_ELEMS, exp_items, &e);
}

// Whether x / s = x * (1 / s) for every float x: where s is a power of two
// whose reciprocal is a normal float (sqrt(64) = 8, head_dim 64's scale),
// both are the one rounding of the same real number.
static int exact_reciprocal(float s) {
    int e;
    return fabsf(frexpf(s, &e)) == 0.5f && isnormal(s) && isnormal(1.0f / s);
}

// out = x / s on the path's vectors (one thread: a pass over memory); the
// cheaper multiply where it gives every bit
static void div_scalar_isa(const FastIsa *isa, float *out, const float *x, float s, long n) {
    if (isa && exact_reciprocal(s)) ISA_FN(isa, mul_scalar)(out, x, 1.0f / s, n);
    else if (isa) ISA_FN(isa, div_scalar)(out, x, s, n);
    else div_scalar(out, x, s, n);
}

void fast_div_scalar(float *out, const float *x, float s, long n) { div_scalar_isa(active_isa(), out, x, s, n); }

// ---------------------------------------------------------------------------
// dropout noise: MT19937 words in bulk (random/torch_generator.h, torch_random_words)
// ---------------------------------------------------------------------------

void fast_dropout_noise(float *noise, long n, double keep, TorchGenerator *g) {
    const float keep_f = (float)keep;
    const float kept = 1.0f / keep_f, dropped = 0.0f / keep_f;  // noise.div_(1 - p) on 1s and 0s
    const FastIsa *isa = active_isa();
    if (!isa) {
        // the definition: bernoulli_(keep) then div_, one element at a time
        for (long i = 0; i < n; i++) {
            const uint64_t r = torch_random64(g);
            const double u = (double)(r & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
            noise[i] = u < keep ? kept : dropped;
        }
        return;
    }
    // u < keep with u = r53 2^-53 exactly, so u < keep <=> r53 < keep 2^53
    // (an exact scaling) <=> r53 < ceil(keep 2^53) for the integer r53.
    const double limit = keep * 0x1p53;
    uint64_t threshold = 0;  // keep <= 0 or NaN: nothing kept
    if (limit >= 0x1p53) threshold = UINT64_C(1) << 53;
    else if (limit > 0) {
        threshold = (uint64_t)limit;
        if ((double)threshold < limit) threshold++;
    }
    enum { CHUNK = 512 };
    uint32_t words[2 * CHUNK];
    for (long i = 0; i < n; i += CHUNK) {
        const int count = (int)min_l(CHUNK, n - i);
        torch_random_words(g, words, 2L * count);  // random/: AVX2 where the CPU has it
        isa->dropout_block(noise + i, words, count, threshold, kept, dropped);
    }
}

// ---------------------------------------------------------------------------
// layout copies
// ---------------------------------------------------------------------------
enum { TRANSPOSE_BLOCK = 32 };  // a (32, 32) block of a and of out stay in L1 together
// Elements of a copy that pay for one more thread: copies are bound by
// memory, so a second thread helps only big ones (the heads split of
// (1024, 12, 64), a fraction of a millisecond, is slower with two).
#define COPY_THREAD_MIN_ELEMS (1 << 21)

typedef struct {
    const FastIsa *isa;
    float *out;
    const float *a;
    int M, N;
} TransposeJob;

// rows [32 begin, 32 end) of a (M, N) into columns of out (N, M), in 32 x 32
// blocks made of 8 x 8 register transposes; the ragged edges by element
static void transpose_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const TransposeJob *t = ctx;
    const long M = t->M, N = t->N;
    for (long i0 = begin * TRANSPOSE_BLOCK; i0 < min_l(M, end * TRANSPOSE_BLOCK); i0 += TRANSPOSE_BLOCK) {
        const long i1 = min_l(M, i0 + TRANSPOSE_BLOCK);
        for (long j0 = 0; j0 < N; j0 += TRANSPOSE_BLOCK) {
            const long j1 = min_l(N, j0 + TRANSPOSE_BLOCK);
            for (long i = i0; i < i1; i += 8) {
                for (long j = j0; j < j1; j += 8) {
                    if (t->isa && i + 8 <= i1 && j + 8 <= j1) {
                        ISA_FN(t->isa, transpose_8x8)(t->out + j * M + i, M, t->a + i * N + j, N);
                        continue;
                    }
                    for (long ii = i; ii < min_l(i + 8, i1); ii++)
                        for (long jj = j; jj < min_l(j + 8, j1); jj++) t->out[jj * M + ii] = t->a[ii * N + jj];
                }
            }
        }
    }
}

void fast_transpose(float *out, const float *a, int M, int N) {
    if (M <= 0 || N <= 0) return;
    TransposeJob t = {active_isa(), out, a, M, N};
    if (!t.isa) {
        transpose(out, a, M, N);
        return;
    }
    parallel_for((M + TRANSPOSE_BLOCK - 1) / TRANSPOSE_BLOCK, (double)M * N, COPY_THREAD_MIN_ELEMS,
                 transpose_items, &t);
}

// Swapping axes 1 and 2 of (B, P, Q, D) into (B, Q, P, D): the D floats of
// one (b, p, q) stay together, so the copy is one memcpy of D floats per
// output row, written in output order (reads are D floats each, Q D apart).
typedef struct {
    float *out;
    const float *x;
    long P, Q, D;
} SwapJob;

// items: output planes (b, q) [begin, end), each out[b][q] (P, D)
static void swap_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const SwapJob *s = ctx;
    for (long bq = begin; bq < end; bq++) {
        const long b = bq / s->Q, q = bq % s->Q;
        float *out_plane = s->out + bq * s->P * s->D;
        const float *x_b = s->x + b * s->P * s->Q * s->D;
        for (long p = 0; p < s->P; p++)
            memcpy(out_plane + p * s->D, x_b + (p * s->Q + q) * s->D, (size_t)s->D * sizeof(float));
    }
}

static void swap_axes12(float *out, const float *x, int B, int P, int Q, int D) {
    if (B <= 0 || P <= 0 || Q <= 0 || D <= 0) return;
    SwapJob s = {out, x, P, Q, D};
    parallel_for((long)B * Q, (double)B * P * Q * D, COPY_THREAD_MIN_ELEMS, swap_items, &s);
}

void fast_split_heads(float *out, const float *x, int B, int T, int H, int D) { swap_axes12(out, x, B, T, H, D); }

void fast_merge_heads(float *out, const float *x, int B, int H, int T, int D) { swap_axes12(out, x, B, H, T, D); }

// ---------------------------------------------------------------------------
// fused causal attention: a block of query rows at a time, never T x T
// ---------------------------------------------------------------------------
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
    const FastIsa *isa;
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
    const FastIsa *isa = at->isa;
    const long mr = isa ? isa->mr : 1, nr = isa ? isa->nr : 1;
    size[0] = round_up(mr * at->D, 16);
    size[1] = round_up(mr * nr, 16);
    size[2] = isa ? round_up(round_up(at->T, nr) * at->D, 16) : 0;
    size[3] = isa ? round_up(round_up(at->D, nr) * at->T, 16) : 0;
    size[4] = round_up((long)at->block_rows * at->ld, 16);
}

static int all_finite(const float *x, long n) {
    for (long i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

// Packs matrix p's k^T and v into the panels the tiles read, and finds
// where v's finite tail starts.
static void attention_pack(const Attention *at, AttentionScratch *sc, long p) {
    const long T = at->T, D = at->D;
    const float *k = at->k + p * T * D, *v = at->v + p * T * D;
    if (at->isa) {
        const Gemm gk = {.isa = at->isa, .b = k, .K = (int)D, .N = (int)T, .b_wt = 1};
        pack_b(sc->pk, &gk, k, 0, (int)D, 0, (int)T, at->isa->nr);
        const Gemm gv = {.isa = at->isa, .b = v, .K = (int)T, .N = (int)D};
        pack_b(sc->pv, &gv, v, 0, (int)T, 0, (int)D, at->isa->nr);
    }
    long f = T;
    while (f > 0 && all_finite(v + (f - 1) * D, D)) f--;
    sc->finite_from = f;
    sc->p = p;
}

// Row r of a block: its scores s_row (the keys [0, n) computed) become its
// weights, in place, over [0, n_soft); +0 from there to `zero_to`.
static void attention_row(const Attention *at, float *s_row, const float *noise_row, long n, long zero_to) {
    const long T = at->T;
    const int vec = at->isa && T >= 8;  // the path's softmax takes 8 or more
    const long n_soft = vec ? min_l(n < 8 ? 8 : n, T) : T;
    for (long j = n; j < n_soft; j++) s_row[j] = -INFINITY;  // (-inf / scale = -inf)
    if (vec) {
        ISA_FN(at->isa, softmax_row_scaled)(s_row, s_row, (int)n_soft, at->scale, exact_reciprocal(at->scale));
    } else {
        div_scalar_isa(at->isa, s_row, s_row, at->scale, n);
        softmax_row(s_row, s_row, (int)n_soft);
    }
    if (noise_row) mul_elementwise(s_row, s_row, noise_row, n_soft);
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
    const FastIsa *isa = at->isa;
    const long T = at->T, D = at->D, ld = at->ld, mr = isa->mr, nr = isa->nr;
    const long rows = i1 - i0, tiles_rows = round_up(rows, mr);
    const long keys = at->causal ? i1 : T;  // the keys any row of the block sees
    const float *q = at->q + (p * T + i0) * D;
    float *s = sc->s, *out = at->out + (p * T + i0) * D;
    // 1. s (rows, keys) = q_rows @ k^T, a panel of nr keys at a time; a tile
    //    of rows skips the panels past its last row's key
    if (rows % mr)
        pack_a_edge(sc->buf.pa, &(Gemm){.K = (int)D}, q, (int)(tiles_rows - mr), (int)(rows % mr), 0, (int)D,
                    (int)mr);
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
        attention_row(at, s_row, at->noise ? at->noise + (p * T + i) * T : NULL, n, zero_to);
    }
    // 3. out rows = w @ v: depth blocks of kc keys, each tile continuing its sums
    const Gemm g = {.isa = isa};
    for (long pc = 0; pc < depth; pc += isa->kc) {
        for (long j0 = 0; j0 < D; j0 += nr) {
            const float *panel = sc->pv + j0 * T + pc * nr;
            for (long r0 = 0; r0 < rows; r0 += mr) {
                const long end = tile_keys(at, sc, i0, r0, mr);
                if (pc >= end) continue;
                run_tile(&g, &sc->buf, out + r0 * D + j0, D, (int)min_l(mr, rows - r0), (int)min_l(nr, D - j0),
                         s + r0 * ld + pc, ld, panel, (int)min_l(isa->kc, end - pc), pc == 0, NULL);
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
        matmul_wt_bias(s_row, at->q + (p * T + i) * D, k, NULL, 1, (int)D, (int)n);
        attention_row(at, s_row, at->noise ? at->noise + (p * T + i) * T : NULL, n, end);
        matmul(at->out + (p * T + i) * D, s_row, v, 1, (int)end, (int)D);
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

void fast_attention(float *out, const float *q, const float *k, const float *v, const float *noise, long batch,
                    int T, int D, float scale, int causal) {
    if (batch <= 0 || T <= 0 || D <= 0) return;
    Attention at = {active_isa(), out, q, k, v, noise, T, D, causal != 0, scale, ATTN_BLOCK_ROWS, 0, 0, NULL, 0};
    // rows 16 floats past a multiple of 16 apart: never a power of two apart
    at.ld = round_up(T, 16) + 16;
    if (at.isa) {
        // (tests ignoring the thresholds: the smallest blocks at every T)
        const long budget = atomic_load(&ignore_thresholds) ? 0 : ATTN_BLOCK_BYTES;
        const long mr = at.isa->mr, fit = budget / (long)sizeof(float) / at.ld;
        at.block_rows = (int)round_up(fit < 2 * mr ? 2 * mr : min_l(fit, ATTN_BLOCK_ROWS), mr);
    }
    at.blocks_per_matrix = (T + at.block_rows - 1) / at.block_rows;
    long size[5];
    attention_sizes(&at, size);
    for (int i = 0; i < 5; i++) at.buffer_floats += size[i];
    const long items = batch * at.blocks_per_matrix;
    const double macs = 2.0 * batch * (double)T * T * D;
    const int threads = plan_threads(items, macs, GEMM_THREAD_MIN_MACS);
    at.buffers = alloc_floats(threads * at.buffer_floats, "the attention's scratch");
    run_threads(threads, items, attention_items, &at);
    free(at.buffers);
}


// ---------------------------------------------------------------------------
// backward: the products of backward_kernels.h as the matmul above, the
// softmax's backward row by row; every order of operations the reference's
// ---------------------------------------------------------------------------

void fast_matmul_at(float *out, const float *a, const float *b, int M, int K, int N) {
    // out[k][n] = +0 + sum_m a[m][k] * b[m][n], m ascending: the matmul of
    // a^T (K, M), packed from a as it is read
    gemm(out, a, b, NULL, 1, K, M, N, 0, 1);
}

void fast_bmm_at(float *out, const float *a, const float *b, long batch, int M, int K, int N) {
    gemm(out, a, b, NULL, batch, K, M, N, 0, 1);
}

typedef struct {
    const FastIsa *isa;
    float *dx;
    const float *dy, *y;
    int n;
} SoftmaxBackwardJob;

static void softmax_backward_items(void *ctx, int thread, long begin, long end) {
    (void)thread;
    const SoftmaxBackwardJob *j = ctx;
    for (long i = begin; i < end; i++) {
        const long o = i * j->n;
        if (j->isa && j->n >= 8) ISA_FN(j->isa, softmax_backward_row)(j->dx + o, j->dy + o, j->y + o, j->n);
        else softmax_rows_backward(j->dx + o, j->dy + o, j->y + o, 1, j->n);
    }
}

void fast_softmax_rows_backward(float *dx, const float *dy, const float *y, long rows, int n) {
    if (n <= 0) return;
    SoftmaxBackwardJob j = {active_isa(), dx, dy, y, n};
    parallel_for(rows, (double)rows * n, ROWS_THREAD_MIN_ELEMS, softmax_backward_items, &j);
}

// Whether every matrix of w (batch, T, T) is 0 above its diagonal
static int zero_above(const float *w, long batch, int T) {
    for (long p = 0; p < batch; p++)
        for (long i = 0; i < T; i++)
            for (long j = i + 1; j < T; j++)
                if (w[(p * T + i) * T + j] != 0.0f) return 0;
    return 1;
}

// attention_backward (backward_kernels.c), its passes in the same order on
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
        mul_elementwise(dropped, w, noise, n);
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
    fast_bmm_wt(dw, dctx, v, batch, T, hd, T);
    gemm_zeros(dv, wd, dctx, NULL, batch, T, T, hd, 0, 1, w_zero_above ? GEMM_ZEROS_BELOW : GEMM_ZEROS_NONE);
    // 4.
    if (noise) dropout_backward(dw, dw, noise, n);
    // 3.
    if (dim == 2) fast_softmax_rows_backward(dz, dw, w, batch * T, T);
    else if (dim == 1) softmax_dim_backward(dz, dw, w, batch, T, T);
    else softmax_dim_backward(dz, dw, w, 1, (int)batch, (long)T * T);
    // 2.
    fast_div_scalar(dz, dz, scale, n);  // div_scalar_backward: dz / scale
    if (causal) masked_fill_causal_backward(dz, batch, T);
    // 1. dq = dscores @ k; dk = dscores^T @ q
    gemm_zeros(dq, dz, k, NULL, batch, T, T, hd, 0, 0,
               dead && all_finite(k, batch * T * hd) ? GEMM_ZEROS_ABOVE : GEMM_ZEROS_NONE);
    gemm_zeros(dk, dz, q, NULL, batch, T, T, hd, 0, 1,
               dead && all_finite(q, batch * T * hd) ? GEMM_ZEROS_BELOW : GEMM_ZEROS_NONE);
    tensor_free(dw_t), tensor_free(dz_t);
    if (noise) tensor_free(dropped_t);
}

// w (T, T) = softmax((q @ k^T)[j > i: -inf if causal] / scale, dim=-1) of
// one matrix, q, k (T, hd): the forward's weights again, by the forward's
// kernels in its order (the same bits as its composed ops and as
// fast_attention)
static void attention_weights(float *w, float *scores, const float *q, const float *k, int T, int hd, float scale,
                              bool causal) {
    gemm(scores, q, k, NULL, 1, T, hd, T, 1, 0);
    for (long i = 0; causal && i < T; i++)
        for (long j = i + 1; j < T; j++) scores[i * T + j] = -INFINITY;
    fast_div_scalar(scores, scores, scale, (long)T * T);
    fast_softmax_rows(w, scores, T, T);
}

void fast_attention_backward(float *dq, float *dk, float *dv, const float *dctx, const float *q, const float *k,
                             const float *v, const float *w, const float *noise, long batch, int T, int hd,
                             float scale, bool causal, int softmax_dim) {
    // One (T, T) matrix at a time (4 MiB of temporaries at Exercise 3.3's
    // size, not 48), unless the softmax ran over the batch axis (dim 0),
    // which ties the matrices together. Without w (a forward that kept no
    // (T, T) tensor: softmax over the last dim only) each matrix's weights
    // are computed again from q and k.
    const int dim = softmax_dim < 0 ? softmax_dim + 3 : softmax_dim;
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
