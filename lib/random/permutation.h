// permutation.h: torch's integer draws on the CPU, bit for bit (torch 1.13):
// randperm and the unbounded int64 random_(), the two draws a shuffling
// DataLoader makes.
//
// Sources (torch 1.13.1):
//   aten/src/ATen/native/TensorFactories.cpp           randperm_cpu, randperm_out_cpu
//   aten/src/ATen/native/cpu/DistributionTemplates.h   random_kernel
//   aten/src/ATen/core/DistributionsHelper.h           uniform_int_distribution
//   aten/src/ATen/core/TransformationHelper.h          uniform_int
//
// A DataLoader(dataset of n items, shuffle=True, num_workers=0,
// generator=None) epoch (torch/utils/data/dataloader.py, sampler.py) is, in
// these terms: iter(loader) draws _base_seed = torch_random_int64(default);
// the first next() draws seed = torch_random_int64(default), seeds a new
// generator with it (torch_manual_seed: only its low 32 bits matter) and
// takes torch_randperm(n) from that one; the batches are consecutive slices
// of the permutation (a short last one dropped if drop_last). Each epoch is
// a new iterator: 2 + 2 words from the default generator.
#ifndef LITATTN_PERMUTATION_H
#define LITATTN_PERMUTATION_H

#include <stdint.h>

#include "torch_generator.h"

// torch.empty((), dtype=torch.int64).random_(): random64() (two words, the
// first the high half) % (INT64_MAX + 1), i.e. its low 63 bits: [0, 2^63 - 1].
int64_t torch_random_int64(TorchGenerator *g);

// torch.randperm(n, generator=g) (int64): out (n,) = 0..n-1, then Fisher-Yates
// from the front: for i = 0 .. n-2, z = (int64)random() % (n - i) (one word),
// swap out[i] and out[i + z]. n - 1 words for n >= 1, none for n = 0; one
// algorithm for every n in 1.13.
void torch_randperm(int64_t *out, int64_t n, TorchGenerator *g);

#endif
