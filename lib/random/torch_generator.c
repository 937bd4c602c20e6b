// torch_generator.c: MT19937 as PyTorch's CPU generator runs it. See
// torch_generator.h for where each rule comes from.
#include "torch_generator.h"

#include <stddef.h>

#include "torch_generator_isa.h"

enum { MT_M = 397 };                     // the twist's second tap: word i mixes with word i + M
#define MT_MATRIX_A UINT32_C(0x9908b0df) // the twist matrix's last row
#define MT_UPPER UINT32_C(0x80000000)    // the top bit of word i ...
#define MT_LOWER UINT32_C(0x7fffffff)    // ... joins the low 31 bits of word i + 1

void torch_manual_seed(TorchGenerator *g, uint64_t seed) {
    g->seed = seed;
    // init_genrand: only the low 32 bits enter; this is why s and s + 2^32
    // seed the same stream.
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    // Knuth's multiplier 1812433253 spreads the seed over all N words; the
    // arithmetic is mod 2^32 (uint32_t wraps, no UB).
    for (int j = 1; j < TORCH_MT_N; j++) {
        uint32_t prev = g->state[j - 1];
        g->state[j] = UINT32_C(1812433253) * (prev ^ (prev >> 30)) + (uint32_t)j;
    }
    // The state is not twisted yet: the first draw twists all N words first,
    // as ATen does (left_ = 1 after seeding).
    g->next = TORCH_MT_N;
    // set_current_seed: next_double_normal_sample_ = c10::optional<double>()
    g->has_next_normal = 0;
    g->next_normal = 0.0;
}

// The twist: regenerate all N words in place. Word i takes the top bit of
// word i and the low 31 of word i + 1, shifts that right by one, XORs in A if
// the dropped bit was 1, and XORs with word i + M (indices mod N). Words
// i + 1 and i + M are read before they are overwritten, except at the wrap,
// where they are already the new ones: that is MT19937's definition.
static void mt_twist(uint32_t *mt) {
    for (int i = 0; i < TORCH_MT_N; i++) {
        uint32_t y = (mt[i] & MT_UPPER) | (mt[(i + 1) % TORCH_MT_N] & MT_LOWER);
        uint32_t mag = (y & 1u) ? MT_MATRIX_A : 0u;
        mt[i] = mt[(i + MT_M) % TORCH_MT_N] ^ (y >> 1) ^ mag;
    }
}

// Tempering: an invertible bit mix that fixes the raw words' poor
// equidistribution in the high bits (standard MT19937 constants).
static uint32_t mt_temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & UINT32_C(0x9d2c5680);
    y ^= (y << 15) & UINT32_C(0xefc60000);
    y ^= y >> 18;
    return y;
}

uint32_t torch_random(TorchGenerator *g) {
    if (g->next >= TORCH_MT_N) {
        mt_twist(g->state);
        g->next = 0;
    }
    return mt_temper(g->state[g->next++]);
}

#ifdef LITATTN_RANDOM_X86
// __builtin_cpu_supports also checks that the OS saves the AVX registers.
static int have_avx2(void) { return __builtin_cpu_supports("avx2"); }
#else
static int have_avx2(void) { return 0; }
#endif

int torch_words_path_available(TorchWordsPath path) { return path != TORCH_WORDS_AVX2 || have_avx2(); }

// The twist and the tempering of one path (the AVX2 ones only on x86-64).
typedef struct {
    void (*twist)(uint32_t *state);
    void (*temper)(uint32_t *out, const uint32_t *state, long n);
} WordsKernels;

static void temper_portable(uint32_t *out, const uint32_t *state, long n) {
    for (long i = 0; i < n; i++) out[i] = mt_temper(state[i]);
}

void torch_random_words_with_path(TorchGenerator *g, uint32_t *out, long n, TorchWordsPath path) {
    static const WordsKernels portable = {mt_twist, temper_portable};
    const WordsKernels *k = &portable;
#ifdef LITATTN_RANDOM_X86
    static const WordsKernels avx2 = {torch_mt_twist_avx2, torch_mt_temper_avx2};
    if (path != TORCH_WORDS_PORTABLE && have_avx2()) k = &avx2;
#else
    (void)path;
#endif
    while (n > 0) {
        if (g->next >= TORCH_MT_N) {
            k->twist(g->state);
            g->next = 0;
        }
        // the untempered words left in this twist, at most n of them
        long take = TORCH_MT_N - g->next;
        if (take > n) take = n;
        k->temper(out, g->state + g->next, take);
        g->next += (int)take;
        out += take;
        n -= take;
    }
}

void torch_random_words(TorchGenerator *g, uint32_t *out, long n) {
    torch_random_words_with_path(g, out, n, TORCH_WORDS_AUTO);
}

uint64_t torch_random64(TorchGenerator *g) {
    // Two statements, so the order of the draws is fixed (within one
    // expression C leaves it unspecified).
    uint64_t hi = torch_random(g);
    uint64_t lo = torch_random(g);
    return (hi << 32) | lo;
}

static uint32_t torch_next_u32(void *state) {
    return torch_random((TorchGenerator *)state);
}

RandomSource torch_generator_source(TorchGenerator *g) {
    RandomSource rs = {torch_next_u32, g};
    return rs;
}

int torch_parse_seed(const char *text, uint64_t *out) {
    if (text == NULL) return 0;
    const char *p = text;
    int negative = 0;
    if (*p == '+' || *p == '-') {
        negative = (*p == '-');
        p++;
    }
    if (*p == '\0') return 0;  // "" or a lone sign
    // Accumulate the magnitude in uint64, refusing any step past 2^64 - 1.
    uint64_t mag = 0;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') return 0;
        uint64_t d = (uint64_t)(*p - '0');
        if (mag > (UINT64_MAX - d) / 10) return 0;
        mag = mag * 10 + d;
    }
    if (negative) {
        // Python's side: a negative int must fit int64, so |s| <= 2^63.
        if (mag > (UINT64_C(1) << 63)) return 0;
        // 2^64 + s = 2^64 - |s|, which is 0 - |s| in uint64 (and "-0" is 0).
        *out = 0u - mag;
    } else {
        *out = mag;
    }
    return 1;
}
