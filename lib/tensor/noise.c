// noise.c: dropout's scalar reference (noise.h): nn.Dropout's noise from
// torch's generator, and its backward. noise_fast.c gives the same bits
// faster and falls back to these.
#include "noise.h"

#include <stdint.h>

#include "rows.h"

// noise (n,) = torch.empty(n).bernoulli_(keep).div_(keep) (_dropout_impl,
// aten/src/ATen/native/Dropout.cpp: nn.Dropout(p) in training mode, keep =
// 1 - p): bernoulli_ draws, per element in order, r = random64() of torch's MT19937 and compares u =
// (r & (2^53 - 1)) * 2^-53 (a double) with keep; div_ divides the 1s and 0s
// by (float)keep, one rounding each.
void noise_dropout(float *noise, long n, double keep, TorchGenerator *g) {
    const float keep_f = (float)keep;
    const float kept = 1.0f / keep_f, dropped = 0.0f / keep_f;
    for (long i = 0; i < n; i++) {
        const uint64_t r = torch_random64(g);
        const double u = (double)(r & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
        noise[i] = u < keep ? kept : dropped;
    }
}

// native/Dropout.cpp: noise = bernoulli_(1 - p).div_(1 - p)), so its node is
// MulBackward0: mul_tensor_backward (FunctionsManual.cpp) = grad * noise, one
// rounding. Eval mode and p = 0 return the input itself: no node at all.
void noise_dropout_backward(float *dx, const float *dy, const float *noise, long n) { rows_mul(dx, dy, noise, n); }
