// init.h: the distributions PyTorch's initialisation draws from, over any
// RandomSource (random_source.h). With a TorchGenerator source they give
// PyTorch 1.13's CPU float32 bits (lib/NUMERICS.md#the-generator and
// lib/NUMERICS.md#uniform-draws-and-initialisation; ATen's uniform_real in
// ATen/core/TransformationHelper.h and uniform_kernel in
// ATen/native/cpu/DistributionTemplates.h); with PCG32 they give the same
// distributions from the library's own stream.
#ifndef LITATTN_INIT_H
#define LITATTN_INIT_H

#include "random_source.h"
#include "torch_generator.h"

// One draw r -> (r & 0xFFFFFF) * 2^-24: the LOW 24 bits (float's 24-bit
// significand), exact in float, in [0, 1 - 2^-24].
float uniform01(RandomSource *rs);

// torch.rand: out (n,) gets one draw per element in memory (row-major) order.
void rand_fill(float *out, long n, RandomSource *rs);

// Tensor.uniform_(from, to): out (n,), one draw per element in order.
// from and to are cast to float first; each value is fmaf(x, to - from, from)
// with x = uniform01: PyTorch's x86 build compiles x * (to - from) + from
// with -mfma and GCC contracts it into one fused multiply-add.
void uniform_fill(float *out, long n, double from, double to, RandomSource *rs);

// Tensor.bernoulli_(p) on a float tensor (CPU, no MKL): per element in memory
// order, r = random64() (two draws, the first the high half), u = (r & (2^53 -
// 1)) * 2^-53 in double, and the element is 1 if u < p, else 0.
void bernoulli_fill(float *out, long n, double p, RandomSource *rs);

// torch.nn.init.kaiming_uniform_(w, a=sqrt(5)) bound for fan_in = in_features,
// in double as torch.nn.init computes it: equal to 1/sqrt(fan_in) in value but
// not always in the last bit. 0 for fan_in <= 0 (torch draws nothing then).
double kaiming_uniform_bound(int fan_in);

// nn.Linear's bias bound: 1/sqrt(fan_in), 0 if fan_in == 0.
double linear_bias_bound(int fan_in);

// torch.nn.init.xavier_uniform_(w, gain) on w (fan_out, fan_in), 2-D
// (torch/nn/init.py): in double as Python computes it,
// std = gain * sqrt(2 / (fan_in + fan_out)), a = sqrt(3) * std; then
// uniform_(-a, a): fan_out * fan_in draws (uniform_fill).
// nn.MultiheadAttention's in_proj_weight (3E, E) takes it with gain 1.
double xavier_uniform_bound(long fan_in, long fan_out, double gain);
void xavier_uniform_fill(float *w, long fan_out, long fan_in, double gain, RandomSource *rs);

// torch.nn.init.xavier_normal_(w, gain): std = gain * sqrt(2 / (fan_in +
// fan_out)), then normal_(0, std) on w (n,) (normal.h: the scalar path and
// its cache below 16 elements). nn.MultiheadAttention's bias_k, bias_v.
void xavier_normal_fill(float *w, long n, long fan_in, long fan_out, double gain, TorchGenerator *g);

// nn.Embedding(num, dim, padding_idx).reset_parameters (modules/sparse.py):
// init.normal_(weight (num, dim)), i.e. normal_(0, 1) (normal.h), then row
// padding_idx set to +0 (no draw) if 0 <= padding_idx < num; pass -1 for
// None (a negative Python padding_idx p is num + p). num * dim words, plus 16
// if num * dim % 16 != 0 (or the scalar path below 16 elements).
void embedding_fill(float *w, long num, long dim, long padding_idx, TorchGenerator *g);

#endif
