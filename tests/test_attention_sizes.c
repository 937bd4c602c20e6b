// test_attention_sizes.c: the exact fused attention (attend_fast, which
// never holds a (T, T) tensor) against the same attention composed of the
// kernels chapter 3's MultiHeadAttention materialises (implementation 2 of
// mha-implementations.ipynb), bit for bit, at every T of a list: 1 to 16384,
// primes included, causal, with and without dropout's factor, 1 and 2 threads.
//
//   test_attention_sizes [--full]   (or LITATTN_TESTS=full)
//
// The composed side is one head of `mha`'s passes 3-5:
//   s = q @ k^T; s[j > i] = -inf; w = softmax(s / sqrt(hd)); w = w * noise; out = w @ v
// on the fast products, division, softmax and noise, which
// unit / fast_kernels proves equal to the scalar reference kernels. It
// holds (T, T) scores, weights and noise: 3 GiB at T = 16384, so the sizes
// past 1024 run only with --full (seconds each), the others always.
// q, k, v are uniform in [-2, 2] (pcg32); the noise is nn.Dropout(0.1)'s
// factor from torch.manual_seed(T). Prints one line per case; exit 1 on any
// difference (the first index and both values in hex).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "fast_path.h"
#include "fast_threads.h"
#include "gemm.h"
#include "harness.h"
#include "noise.h"
#include "pcg32.h"
#include "rows.h"
#include "torch_generator.h"

enum { HEAD_DIM = 64 };

static pcg32_random_t rng;

static float *floats(long n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!p) {
        fprintf(stderr, "test_attention_sizes: out of memory for %ld floats\n", n);
        exit(2);
    }
    return p;
}

// out (T, hd) = the composed attention of one head, q, k, v (T, hd), noise (T, T) or NULL
static void composed(float *out, const float *q, const float *k, const float *v, const float *noise, int T,
                     float scale) {
    float *s = floats((long)T * T), *w = floats((long)T * T);
    gemm_fast_bmm_wt(s, q, k, 1, T, HEAD_DIM, T);  // q @ k.transpose(-2, -1)
    for (long i = 0; i < T; i++)              // masked_fill_(mask_bool, -inf)
        for (long j = i + 1; j < T; j++) s[i * T + j] = -INFINITY;
    rows_fast_div_scalar(s, s, scale, (long)T * T);  // / keys.shape[-1] ** 0.5
    rows_fast_softmax_rows(w, s, T, T);              // torch.softmax(dim=-1)
    if (noise)                                  // self.dropout(attn_weights)
        for (long i = 0; i < (long)T * T; i++) w[i] = w[i] * noise[i];
    gemm_fast_bmm(out, w, v, 1, T, T, HEAD_DIM);  // attn_weights @ values
    free(s), free(w);
}

// 0 if got and want have the same bits (any NaN equals any NaN), else 1, printed
static int differs(const char *what, const float *got, const float *want, long n) {
    for (long i = 0; i < n; i++) {
        uint32_t g, w;
        memcpy(&g, &got[i], 4), memcpy(&w, &want[i], 4);
        if (g == w || (got[i] != got[i] && want[i] != want[i])) continue;
        printf("FAIL %s: index %ld: fused 0x%08x, composed 0x%08x\n", what, i, g, w);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const int full = harness_full_selection("test_attention_sizes", argc, argv);
    static const int sizes[] = {1, 2, 3, 7, 8, 63, 64, 65, 127, 257, 1021, 1024, 4099, 8191, 16384};
    const int limit = full ? 16384 : 1024;
    const float scale = sqrtf((float)HEAD_DIM);  // pow(64, 0.5) in double, then float: exactly 8
    pcg32_srandom_r(&rng, 20241126u, 3u);
    int failures = 0, cases = 0;
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const int T = sizes[c];
        if (T > limit) {
            printf("skip T = %d: with --full (its composed side holds 3 GiB of (T, T) tensors)\n", T);
            continue;
        }
        const long n = (long)T * HEAD_DIM;
        float *q = floats(n), *k = floats(n), *v = floats(n), *want = floats(n), *got = floats(n);
        for (long i = 0; i < n; i++) {
            q[i] = (float)(4.0 * pcg32_double_r(&rng) - 2.0);
            k[i] = (float)(4.0 * pcg32_double_r(&rng) - 2.0);
            v[i] = (float)(4.0 * pcg32_double_r(&rng) - 2.0);
        }
        float *noise = floats((long)T * T);
        TorchGenerator g;
        torch_manual_seed(&g, (uint64_t)T);
        noise_fast_dropout(noise, (long)T * T, 0.9, &g);
        for (int dropout = 0; dropout <= 1; dropout++) {
            const float *nz = dropout ? noise : NULL;
            fast_threads_set(1);
            composed(want, q, k, v, nz, T, scale);
            for (int threads = 1; threads <= 2; threads++) {
                fast_threads_set(threads);
                attend_fast(got, q, k, v, nz, 1, T, HEAD_DIM, scale, 1);
                char what[96];
                snprintf(what, sizeof what, "T = %d, %s, %d thread%s", T, dropout ? "dropout 0.1" : "no dropout",
                         threads, threads > 1 ? "s" : "");
                const int bad = differs(what, got, want, n);
                if (!bad) printf("ok   %s: %ld values\n", what, n);
                failures += bad, cases++;
            }
        }
        free(q), free(k), free(v), free(want), free(got), free(noise);
    }
    printf("%s: %d cases on the %s path, %d with differences%s\n", failures ? "FAIL" : "ok", cases,
           fast_path_name(), failures, full ? "" : " (T up to 1024; --full adds 4099, 8191 and 16384)");
    return failures ? 1 : 0;
}
