// torch_generator_isa.h (internal to torch_generator*.c): MT19937's twist
// and tempering 8 words at a time, in their own file so that only it is
// compiled with -mavx2 (torch_generator_avx2.c; call only where the CPU has AVX2).
#ifndef LITATTN_TORCH_GENERATOR_ISA_H
#define LITATTN_TORCH_GENERATOR_ISA_H

#include <stdint.h>

// state (624,) twisted in place: the same words as torch_generator.c's mt_twist.
void torch_mt_twist_avx2(uint32_t *state);
// out (n,) = the tempering of state (n,), word by word.
void torch_mt_temper_avx2(uint32_t *out, const uint32_t *state, long n);

#endif
