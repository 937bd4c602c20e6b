// noise.h: nn.Dropout's noise and its gradient. The scalar reference
// (noise.c: torch's definition, one draw at a time) and the fast version
// (noise_fast.c: the generator's words in bulk, compared 8 at a time by
// noise_simd.c), the same bits and the generator left in the same state.
#ifndef LITATTN_NOISE_H
#define LITATTN_NOISE_H

#include "torch_generator.h"

// --- reference ---
// noise (n,): nn.Dropout(p)'s training-mode noise with keep = 1 - p (double):
// per element in order, r = torch_random64(g), u = (r & (2^53 - 1)) * 2^-53,
// noise = (u < keep ? 1.0f : 0.0f) / (float)keep. g ends as after n calls of
// torch_random64.
void noise_dropout(float *noise, long n, double keep, TorchGenerator *g);
// dy, noise, dx (n,): dropout's x * noise -> dx = dy * noise
void noise_dropout_backward(float *dx, const float *dy, const float *noise, long n);

// --- fast (noise_fast.c) ---
// noise_dropout, its arguments and bits
void noise_fast_dropout(float *noise, long n, double keep, TorchGenerator *g);

#endif
