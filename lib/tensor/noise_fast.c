// noise_fast.c: noise_fast_dropout, nn.Dropout(p)'s training-mode noise
// with the bits of its definition: per element in order, r = the next
// random64() of torch's MT19937, u = (r & (2^53 - 1)) * 2^-53 (a double),
// noise = (u < 1 - p ? 1.0f : 0.0f) / (float)(1 - p). The generator's words
// are taken in bulk (random/torch_generator.h, torch_random_words) and
// compared as 53-bit integers, u < keep being r53 < ceil(keep 2^53); the
// generator ends as after n calls of torch_random64.
#include "noise.h"

#include <stdint.h>

#include "fast_path.h"
#include "fast_util.h"

void noise_fast_dropout(float *noise, long n, double keep, TorchGenerator *g) {
    const float keep_f = (float)keep;
    const float kept = 1.0f / keep_f, dropped = 0.0f / keep_f;  // noise.div_(1 - p) on 1s and 0s
    const SimdIsa *isa = fast_path_isa();
    if (!isa) {
        noise_dropout(noise, n, keep, g);
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
