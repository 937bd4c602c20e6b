// random_source.h: where random numbers come from, as an interface.
//
// Initialisation (torch.rand, nn.Linear's uniform_) only needs a stream of
// 32-bit draws. Any generator that can give one plugs in here: PCG32
// (pcg32.h) for the library's own randomness, the PyTorch-compatible MT19937
// (torch_generator.h) for bit-exact weights.
#ifndef LITATTN_RANDOM_SOURCE_H
#define LITATTN_RANDOM_SOURCE_H

#include <stdint.h>

typedef struct {
    uint32_t (*next_u32)(void *state);
    void *state;
} RandomSource;

#endif
