// permutation.c: see permutation.h.
#include "permutation.h"

// random_kernel -> uniform_int_distribution<int64_t>: transformation::uniform_int
// of random64() with range INT64_MAX + 1 = 2^63, which is v & (2^63 - 1).
int64_t torch_random_int64(TorchGenerator *g) { return (int64_t)(torch_random64(g) & ~(UINT64_C(1) << 63)); }

// randperm_out_cpu: `for i in 0..n-2: z = generator->random() % (n - i);
// swap(r[i], r[z + i])`, with random() a uint32 promoted to int64.
void torch_randperm(int64_t *out, int64_t n, TorchGenerator *g) {
    for (int64_t i = 0; i < n; i++) out[i] = i;
    for (int64_t i = 0; i < n - 1; i++) {
        const int64_t z = (int64_t)torch_random(g) % (n - i);
        const int64_t sav = out[i];
        out[i] = out[z + i];
        out[z + i] = sav;
    }
}
