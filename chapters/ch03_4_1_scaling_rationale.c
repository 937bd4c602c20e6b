// §3.4.1, box "The rationale behind scaled-dot product attention"
// ("why divide by sqrt(dimension)")
//
// Read beside transcript 004, cells In [15] and In [16].
//
// Reason 1: softmax of large scores becomes "peaky". Reason 2: the variance of
// q . k grows with the dimension, and dividing by sqrt(dim) brings it back to
// about 1. The notebook draws q and k with NumPy without a seed, so its
// variances cannot be reproduced digit for digit; here they are drawn from
// our PCG32 with a fixed seed, and the test checks them against the theory.
#include <stdio.h>

#include "chapter.h"
#include "pcg32.h"

// In [16]: def compute_variance(dim, num_trials=1000): the variance of q . k
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
    chapter_begin(argc, argv, &(ChapterSpec){
        .name = "ch03_4_1_scaling_rationale",
        .variant = "book",
        .about = "Book §3.4.1 box: why the attention scores are divided by sqrt(d_k).",
    });

    // In [15]: tensor = torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5])
    cell("tensor = torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5]); softmax_result = torch.softmax(tensor, dim=-1)");
    Tensor tensor = fixture_input("tensor", (Shape){1, {SHAPE_ANY}});
    Tensor softmax_result = torch_softmax(tensor, -1);
    show("Softmax without scaling: %T\n", softmax_result);
    KEEP(softmax_result);

    cell("scaled_tensor = tensor * 8; softmax_scaled_result = torch.softmax(scaled_tensor, dim=-1)");
    Tensor scaled_tensor = torch_mul(tensor, 8.0f);
    Tensor softmax_scaled_result = torch_softmax(scaled_tensor, -1);
    show("Softmax after scaling (tensor * 8): %T\n", softmax_scaled_result);
    KEEP(scaled_tensor);
    KEEP(softmax_scaled_result);

    // In [16]: compute_variance(5), compute_variance(100)
    // PCG32 seeded as the reference demo seeds it (initstate 42, initseq 54).
    pcg32_random_t rng;
    pcg32_srandom_r(&rng, 42u, 54u);
    static const int dims[] = {5, 100};
    for (int i = 0; i < 2; i++) {
        int dim = dims[i];
        double before, after;
        cell("variance_before_%d, variance_after_%d = compute_variance(%d)", dim, dim, dim);
        compute_variance(dim, 1000, &rng, &before, &after);
        show("Variance before scaling (dim=%d): %r\n", dim, before);
        show("Variance after scaling (dim=%d): %r\n", dim, after);
        char name[64];
        snprintf(name, sizeof name, "variance_before_%d", dim);
        keep(name, tensor_scalar((float)before));
        snprintf(name, sizeof name, "variance_after_%d", dim);
        keep(name, tensor_scalar((float)after));
    }

    return chapter_end();
}
