// §3.4.1, box "The rationale behind scaled-dot product attention"
// ("why divide by sqrt(dimension)")
//
// Read beside transcript 004, cells In [15] and In [16]: ch03.ipynb has no such cells.
//
// Reason 1: softmax of large scores becomes "peaky". Reason 2: the variance of
// q . k grows with the dimension, and dividing by sqrt(dim) brings it back to
// about 1. The notebook draws q and k with NumPy without a seed, so its
// variances cannot be reproduced digit for digit; here they are drawn from
// our PCG32 with a fixed seed, and the test checks them against the theory.
#include <stdio.h>

#include "chapter.h"  // also PCG32 (pcg32.h)

// 004 In [16]: def compute_variance(dim, num_trials=1000): the variance of q . k
// over num_trials pairs of standard normal vectors, before and after dividing
// by sqrt(dim). np.var is the population variance (it divides by n); here it
// is accumulated in one pass with Welford's update, which needs no list.
static void compute_variance(int dim, int num_trials, pcg32_random_t *rng, double *before, double *after) {
    double mean = 0.0, m2 = 0.0;
    for (int t = 1; t <= num_trials; t++) {
        double dot_product = 0.0;
        for (int i = 0; i < dim; i++) {
            double q = pcg32_normal_r(rng);  // q = np.random.randn(dim) ...
            double k = pcg32_normal_r(rng);  // ... k = np.random.randn(dim), drawn in turn
            dot_product += q * k;
        }
        double delta = dot_product - mean;
        mean += delta / t;
        m2 += delta * (dot_product - mean);
    }
    *before = m2 / num_trials;
    *after = *before / dim;  // Var(x / sqrt(dim)) = Var(x) / dim
}

int main(int argc, char **argv) {
    chapter_begin(argc, argv);

    Transcript("004 In [15]", "# define the tensor");
    Tensor tensor = input_tensor("tensor", SIZE(SIZE_ANY));
    Tensor softmax_result = torch_softmax(tensor, -1);
    print("Softmax without scaling:", softmax_result);
    KEEP(softmax_result);
    Tensor scaled_tensor = torch_mul_scalar(tensor, 8);
    Tensor softmax_scaled_result = torch_softmax(scaled_tensor, -1);
    print("Softmax after scaling (tensor * 8):", softmax_scaled_result);
    KEEP(scaled_tensor);
    KEEP(softmax_scaled_result);

    Transcript("004 In [16]", "import numpy as np");
    // PCG32 seeded as the reference demo seeds it (initstate 42, initseq 54).
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 42u, 54u);
    static const int dims[] = {5, 100};
    for (int i = 0; i < 2; i++) {
        const int d = dims[i];
        double before, after;
        compute_variance(d, 1000, &rng, &before, &after);
        char label[64], name[64];
        snprintf(label, sizeof label, "Variance before scaling (dim=%d):", d);
        print(label, before);
        snprintf(label, sizeof label, "Variance after scaling (dim=%d):", d);
        print(label, after);
        snprintf(name, sizeof name, "variance_before_%d", d);
        keep(name, tensor_scalar((float)before));
        snprintf(name, sizeof name, "variance_after_%d", d);
        keep(name, tensor_scalar((float)after));
    }

    return chapter_end();
}
