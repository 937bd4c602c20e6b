// §3.5.2 Masking additional attention weights with dropout
//
// Read beside ch03.ipynb, In [31] and In [32]: nn.Dropout(0.5) in training
// mode on a matrix of ones, then on the causal attention weights of In [30],
// each time right after torch.manual_seed(123), so both draw the same mask.
// The mask is drawn as the CPU build draws it (lib/nn/dropout.c); the book's
// own output shows that build's masks, not MKL's.
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

    // In [30]'s causal attention weights, made as §3.5.1 makes them.
    Setup(24, "class SelfAttention_v2(nn.Module):");
    manual_seed_at("sa_v2", 789);
    SelfAttentionV2 sa_v2 = self_attention_v2("sa_v2", d_in, d_out, false);
    Setup(25, "# Reuse the query and key weight matrices of the");
    Tensor queries = linear_forward(&sa_v2.W_query, inputs);
    Tensor keys = linear_forward(&sa_v2.W_key, inputs);
    Tensor attn_scores = torch_matmul(queries, torch_T(keys));
    Setup(29, "mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)");
    int context_length = dim(attn_scores, 0);
    Tensor mask = torch_triu(torch_ones(SIZE(context_length, context_length)), 1);
    Tensor masked = torch_masked_fill(attn_scores, torch_bool(mask), -INFINITY);
    Setup(30, "attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)");
    Tensor attn_weights = torch_softmax(torch_div_scalar(masked, pow(dim(keys, -1), 0.5)), -1);
    KEEP(attn_weights);

    In(31, "torch.manual_seed(123)");
    manual_seed(123);
    Dropout dropout = nn_dropout("dropout", setting_float("dropout", 0.5));  // dropout rate of 50%
    Tensor example = torch_ones(SIZE(6, 6));  // create a matrix of ones
    Tensor dropped_example = dropout_forward(&dropout, example);
    print(dropped_example);
    keep("dropout(example)", dropped_example);

    In(32, "torch.manual_seed(123)");
    manual_seed(123);
    Tensor dropped_weights = dropout_forward(&dropout, attn_weights);
    print(dropped_weights);
    keep("dropout(attn_weights)", dropped_weights);

    return chapter_end();
}
