// torch_generator.h: PyTorch's CPU generator, bit for bit (torch 1.13 and 2.x).
//
// torch.manual_seed(s) seeds a plain MT19937 (ATen's mt19937_engine in
// ATen/core/MT19937RNGEngine.h): N = 624 words, M = 397, matrix A 0x9908b0df,
// the standard tempering, state filled by Matsumoto and Nishimura's
// init_genrand recurrence from the LOW 32 BITS of the seed. Its stream is the
// one C++'s std::mt19937((uint32_t)s) gives.
//
// How a Python seed arrives (torch/csrc/Generator.cpp, THPGenerator_manualSeed
// in 1.13): torch.manual_seed does int(seed); the C++ side first reads the
// int as an unsigned 64-bit value and, only if that overflows, as a signed
// 64-bit value reinterpreted as unsigned. So the accepted range is
// [-2^63, 2^64 - 1] (anything else raises), and a negative s arrives as
// 2^64 + s: manual_seed(-1) is manual_seed(2^64 - 1), whose low 32 bits are
// 0xffffffff. (torch.manual_seed's docstring says 0xffff_ffff_ffff_ffff + seed,
// which is one less; torch.initial_seed() after manual_seed(-1) prints
// 18446744073709551615 = 2^64 - 1, confirming 2^64 + s.)
// Since only the low 32 bits seed the state, s and s + k * 2^32 (any k, any
// sign) give one stream.
#ifndef LITATTN_TORCH_GENERATOR_H
#define LITATTN_TORCH_GENERATOR_H

#include <stdint.h>

#include "random_source.h"

#define TORCH_MT_N 624

// The generator is ATen's CPUGeneratorImpl (ATen/CPUGeneratorImpl.h): the
// MT19937 engine plus next_double_normal_sample_, the second Box-Muller
// normal that the scalar normal path (normal.h, n < 16) keeps for its next
// element. No other draw reads or writes the cache, so every draw but
// normal_'s scalar path is a function of state and next alone.
// (CPUGeneratorImpl's float cache, next_float_normal_sample_, is used by no
// CPU kernel in 1.13 and is not kept.)
typedef struct {
    uint32_t state[TORCH_MT_N];  // the MT19937 state words
    int next;                    // index of the next word to temper; N means "twist first"
    uint64_t seed;               // the seed as given (torch.initial_seed())
    int has_next_normal;         // next_normal holds a cached normal
    double next_normal;          // next_double_normal_sample_
} TorchGenerator;

// torch.manual_seed(seed) with seed already mapped to uint64 (see above and
// torch_parse_seed). Also what a freshly made torch.Generator() holds after
// manual_seed, and what torch's default generator holds in a fresh process
// whose torch.initial_seed() is seed. Empties the cached normal, as
// set_current_seed does.
void torch_manual_seed(TorchGenerator *g, uint64_t seed);

// One 32-bit draw: the generator's random(), what torch.rand and uniform_ on
// float tensors consume, one per element.
uint32_t torch_random(TorchGenerator *g);

// random64(): two 32-bit draws, the first one the HIGH half (what float64
// uniform_ and randn's doubles consume).
uint64_t torch_random64(TorchGenerator *g);

// out (n,) = the next n torch_random(g) draws, in order, leaving g exactly as
// n calls of torch_random would (bulk: the state twisted and a run of words
// tempered at a time, with AVX2 where the CPU has it: the same words). The
// cached normal is not touched.
void torch_random_words(TorchGenerator *g, uint32_t *out, long n);
// The same with the twist and tempering chosen: portable C, or AVX2
// (torch_generator_avx2.c, x86-64 only). For the tests and normal_fill's paths.
typedef enum { TORCH_WORDS_AUTO = 0, TORCH_WORDS_PORTABLE = 1, TORCH_WORDS_AVX2 = 2 } TorchWordsPath;
void torch_random_words_with_path(TorchGenerator *g, uint32_t *out, long n, TorchWordsPath path);
// Whether this CPU runs `path` (AUTO and PORTABLE always).
int torch_words_path_available(TorchWordsPath path);

// RandomSource adapter (random_source.h); g must outlive the source.
RandomSource torch_generator_source(TorchGenerator *g);

// Parses a seed as written for torch.manual_seed(int(text)): an optional '+'
// or '-' and one or more decimal digits (leading zeros allowed, as int()
// allows them), nothing else. Accepts exactly the range manual_seed accepts,
// [-2^63, 2^64 - 1]; a negative value is stored as 2^64 + value. Returns 1 on
// success; 0 (and *out untouched) for NULL, empty, a lone sign, any other
// character or a value out of range. Stricter than Python's int() on
// purpose: surrounding whitespace, '_' digit separators and non-ASCII digits
// are rejected, since a seed on a command line has no reason to carry them.
int torch_parse_seed(const char *text, uint64_t *out);

#endif
