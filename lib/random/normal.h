// normal.h: Tensor.normal_(mean, std) and torch.randn on float32 CPU tensors,
// bit for bit as PyTorch 1.13 (Debian's python3-torch, x86-64, the AVX2
// kernel) draws them.
//
// Where it comes from (torch 1.13.1, aten/src/ATen/...):
//   native/cpu/DistributionTemplates.h   normal_kernel, normal_fill_AVX2,
//                                        normal_fill_16_AVX2 (n >= 16)
//   native/cpu/avx_mathfun.h             log256_ps, sincos256_ps (Cephes polynomials)
//   core/DistributionsHelper.h           normal_distribution<double> (n < 16, the cache)
//   CPUGeneratorImpl.cpp                 next_double_normal_sample_, set_current_seed
//   native/cpu/DistributionKernels.cpp   normal_stub: never AVX-512 (REGISTER_NO_AVX512_DISPATCH)
// and the machine code of libtorch_cpu.so.1.13.0 for which multiply-adds GCC
// fused into FMAs (written here as fmaf; every other step is rounded on its
// own: the library builds with -ffp-contract=off).
//
// n >= 16 (contiguous float32; the capability torch picks on any x86-64 with
// AVX2 and FMA):
//   1. data[i] = (r_i & 0xFFFFFF) * 2^-24 for i = 0..n-1 (n 32-bit draws);
//   2. each full block of 16 at 16k, lane j < 8: u1 = 1 - data[j],
//      u2 = data[j+8]; radius = sqrt(-2 * log(u1)); theta = 2pi_f * u2 with
//      2pi_f = (float)(2 pi) = 0x1.921fb6p+2; data[j] = fma(radius*cos, std, mean),
//      data[j+8] = fma(radius*sin, std, mean); float throughout, log and
//      sincos the Cephes polynomials of avx_mathfun.h (not libm);
//   3. if n % 16 != 0: the LAST 16 positions (n-16..n-1, overlapping the last
//      full block) get 16 fresh uniforms and are transformed again.
//   Draws: n, plus 16 if n % 16 != 0. The cached normal is neither read nor
//   cleared. mean and std enter as floats.
// n < 16: per element, normal_distribution<double>(mean, std): with a cached
//   normal c in the generator: (float)fma(c, std, mean), cache emptied, no
//   draw; else u1 = (random64() & (2^53-1)) * 2^-53, u2 the same (4 words),
//   r = sqrt(-2 log(1 - u2)), theta = 2pi * u1 (double; glibc log and
//   sincos), cache = r*sin(theta), element = (float)fma(r*cos(theta), std, mean).
//
// Not provided: the DEFAULT-capability kernel (ATEN_CPU_CAPABILITY=default or
// a CPU without AVX2/FMA: glibc logf/sincosf, no FMA), and non-contiguous
// tensors (scalar path at any size). normal_fill gives the AVX2 kernel's
// bits on every CPU.
#ifndef LITATTN_NORMAL_H
#define LITATTN_NORMAL_H

#include "torch_generator.h"

// Tensor.normal_(mean, std) on out (n,), row-major. std >= 0 (torch checks it).
void normal_fill(float *out, long n, double mean, double std, TorchGenerator *g);

// torch.randn(*shape) with n elements = normal_fill(out, n, 0, 1, g);
// nn.init.normal_(w) (nn.Embedding's reset_parameters) is the same.
void randn_fill(float *out, long n, TorchGenerator *g);

// How normal_fill draws its words and computes the blocks of 16 (the bits are
// the same): portable C for both, or AVX2 (+ FMA) for both (normal_avx2.c,
// torch_random_words; x86-64 only). NORMAL_AUTO takes AVX2 when this CPU and
// OS run it. For the tests and the benchmark.
typedef enum { NORMAL_AUTO = 0, NORMAL_PORTABLE = 1, NORMAL_AVX2 = 2 } NormalPath;
void normal_fill_with_path(float *out, long n, double mean, double std, TorchGenerator *g, NormalPath path);
// Whether this CPU runs `path` (AUTO and PORTABLE always).
int normal_path_available(NormalPath path);

// One lane of avx_mathfun.h's log256_ps and sincos256_ps, as torch's build
// computes them (for tests: any float in, the kernel's bits out).
float torch_cephes_logf(float x);
void torch_cephes_sincosf(float x, float *s, float *c);

#endif
