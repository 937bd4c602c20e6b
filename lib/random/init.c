// init.c: PyTorch's uniform initialisation, to the float32 bit.
#include "init.h"

#include <math.h>

#include "normal.h"

float uniform01(RandomSource *rs) {
    uint32_t r = rs->next_u32(rs->state);
    // 24 bits fit a float's significand, so the conversion and the scaling
    // by a power of two are both exact: no rounding happens here.
    return (float)(r & UINT32_C(0xFFFFFF)) * 0x1p-24f;
}

// out (n,) = torch.rand(n): uniform_(0, 1), whose fmaf(x, 1, 0) is x itself.
void rand_fill(float *out, long n, RandomSource *rs) {
    for (long i = 0; i < n; i++) out[i] = uniform01(rs);
}

// out (n,) = U(from, to) as uniform_: one rounding per value, fmaf(x, to - from, from)
void uniform_fill(float *out, long n, double from, double to, RandomSource *rs) {
    // uniform_kernel casts the double bounds to the tensor's dtype first.
    float f = (float)from;
    float t = (float)to;
    // to - from in float, as the kernel computes it (one rounding, if any).
    float range = t - f;
    for (long i = 0; i < n; i++) {
        float x = uniform01(rs);
        // The FMA build's one rounding. The two-rounding x * range + f differs
        // wherever x * range is inexact: about half of nn.Linear(768, 768)'s
        // weights, none where the range is a power of two (d_in = 64), and
        // near 0 by many ulps (the product's rounding error is on the scale
        // of the bound, not of the small result). The build has
        // -ffp-contract=off, so the fusion is written out.
        out[i] = fmaf(x, range, f);
    }
}

void bernoulli_fill(float *out, long n, double p, RandomSource *rs) {
    for (long i = 0; i < n; i++) {
        // Two statements: the high word is drawn first.
        uint64_t hi = rs->next_u32(rs->state);
        uint64_t lo = rs->next_u32(rs->state);
        uint64_t r = (hi << 32) | lo;
        double u = (double)(r & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
        out[i] = u < p ? 1.0f : 0.0f;
    }
}

double kaiming_uniform_bound(int fan_in) {
    if (fan_in <= 0) return 0.0;
    // The same double operations, in the same order, as torch.nn.init:
    // calculate_gain('leaky_relu', a) = sqrt(2 / (1 + a ** 2)),
    // std = gain / sqrt(fan), bound = sqrt(3) * std.
    double a = sqrt(5.0);
    double gain = sqrt(2.0 / (1.0 + pow(a, 2.0)));  // Python's a ** 2 is C pow
    double std = gain / sqrt((double)fan_in);
    return sqrt(3.0) * std;
}

double linear_bias_bound(int fan_in) {
    // reset_parameters: bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    return fan_in > 0 ? 1.0 / sqrt((double)fan_in) : 0.0;
}

double xavier_uniform_bound(long fan_in, long fan_out, double gain) {
    // std = gain * math.sqrt(2.0 / float(fan_in + fan_out)); a = math.sqrt(3.0) * std
    const double std = gain * sqrt(2.0 / (double)(fan_in + fan_out));
    return sqrt(3.0) * std;
}

void xavier_uniform_fill(float *w, long fan_out, long fan_in, double gain, RandomSource *rs) {
    const double a = xavier_uniform_bound(fan_in, fan_out, gain);
    uniform_fill(w, fan_out * fan_in, -a, a, rs);
}

void xavier_normal_fill(float *w, long n, long fan_in, long fan_out, double gain, TorchGenerator *g) {
    const double std = gain * sqrt(2.0 / (double)(fan_in + fan_out));
    normal_fill(w, n, 0.0, std, g);
}

void embedding_fill(float *w, long num, long dim, long padding_idx, TorchGenerator *g) {
    randn_fill(w, num * dim, g);  // init.normal_(self.weight): mean 0, std 1
    // _fill_padding_idx_with_zero: weight[padding_idx].fill_(0)
    if (padding_idx >= 0 && padding_idx < num)
        for (long j = 0; j < dim; j++) w[padding_idx * dim + j] = 0.0f;
}
