// §3.5.1 Applying a causal attention mask
//
// Read beside ch03.ipynb, In [25] to In [30]: the attention weights of
// SelfAttention_v2 (In [24]), masked above the diagonal twice over: by
// zeroing and renormalising (In [26]-[28]), and by -inf before the softmax
// (In [29]-[30]). The two print the same digits but are not the same bits
// (lib/NUMERICS.md#softmax), so each is computed its own way.
#include <math.h>

#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "sa_v2");

    Setup(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));

    Setup(15, "x_2 = inputs[1] # second input element");
    int d_in = dim(inputs, 1);
    int d_out = setting_int("d_out", 2);

    Setup(24, "class SelfAttention_v2(nn.Module):");
    manual_seed(789);
    SelfAttentionV2 sa_v2 = self_attention_v2("sa_v2", d_in, d_out, setting_bool("qkv_bias", false));

    In(25, "# Reuse the query and key weight matrices of the");
    // SelfAttention_v2 object from the previous section for convenience
    Tensor queries = linear_forward(&sa_v2.W_query, inputs);
    Tensor keys = linear_forward(&sa_v2.W_key, inputs);
    Tensor attn_scores = torch_matmul(queries, torch_T(keys));
    Tensor attn_weights = torch_softmax(torch_div_scalar(attn_scores, pow(dim(keys, -1), 0.5)), -1);
    print(attn_weights);
    KEEP(queries);
    KEEP(keys);
    KEEP(attn_scores);

    In(26, "context_length = attn_scores.shape[0]");
    int context_length = dim(attn_scores, 0);
    Tensor mask_simple = torch_tril(torch_ones(SIZE(context_length, context_length)));
    print(mask_simple);
    KEEP(mask_simple);

    In(27, "masked_simple = attn_weights*mask_simple");
    Tensor masked_simple = torch_mul(attn_weights, mask_simple);
    print(masked_simple);
    KEEP(masked_simple);

    In(28, "row_sums = masked_simple.sum(dim=-1, keepdim=True)");
    Tensor row_sums = torch_sum_dim(masked_simple, -1, true);
    Tensor masked_simple_norm = torch_div(masked_simple, row_sums);
    print(masked_simple_norm);
    KEEP(row_sums);
    KEEP(masked_simple_norm);

    In(29, "mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)");
    Tensor mask = torch_triu(torch_ones(SIZE(context_length, context_length)), 1);
    Tensor masked = torch_masked_fill(attn_scores, torch_bool(mask), -INFINITY);
    print(masked);
    KEEP(mask);
    KEEP(masked);

    In(30, "attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)");
    attn_weights = torch_softmax(torch_div_scalar(masked, pow(dim(keys, -1), 0.5)), -1);
    print(attn_weights);
    KEEP(attn_weights);

    return chapter_end();
}
