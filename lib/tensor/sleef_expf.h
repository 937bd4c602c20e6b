// sleef_expf.h: expf exactly as PyTorch 1.13's AVX2 kernels compute it.
//
// torch.exp and the exp inside softmax call Vectorized<float>::exp(), which is
// SLEEF 3.5's Sleef_expf8_u10; on an AVX2 machine SLEEF dispatches to its AVX2
// build (every multiply-add fused). glibc's expf is correctly rounded and so
// differs from it in the last bit for some inputs; this scalar port gives the
// same bits as SLEEF for every float32 input (checked over all 2^32 patterns).
#ifndef LITATTN_SLEEF_EXPF_H
#define LITATTN_SLEEF_EXPF_H

// e^d within 1 ulp; d < -104 gives +0, d > 100 gives +inf, NaN stays NaN.
float sleef_expf(float d);

#endif
