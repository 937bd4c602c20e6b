// §3.4.1 Computing the attention weights step by step
//
// Read beside ch03.ipynb, In [15] to In [22]. Transcript 004 shows the same
// steps with more printed (the weight matrices, tuples of results), 000 the
// same seed, 001 seed 42; their own cells are marked with their numbers.
#include <math.h>

#include "chapter.h"

int main(int argc, char **argv) {
    chapter_begin(argc, argv);

    Setup(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));

    Transcript("004 In [3]", "inputs.shape");
    print(shape(inputs));

    In(15, "x_2 = inputs[1] # second input element");
    Tensor x_2 = sel(inputs, 1);
    int d_in = dim(inputs, 1);     // the input embedding size, d=3
    int d_out = setting_int("d_out", 2);  // the output embedding size, d=2

    In(16, "torch.manual_seed(123)");
    manual_seed(123);
    // torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    Tensor W_query = draw_rand("W_query", SIZE(d_in, d_out), "weight");
    Tensor W_key = draw_rand("W_key", SIZE(d_in, d_out), "weight");
    Tensor W_value = draw_rand("W_value", SIZE(d_in, d_out), "weight");

    Transcript("004 In [6]", "W_query");
    print(param(W_query));
    Transcript("004 In [7]", "W_key");
    print(param(W_key));
    Transcript("004 In [8]", "W_value");
    print(param(W_value));

    In(17, "query_2 = x_2 @ W_query # _2 because it's with respect to the 2nd input element");
    Tensor query_2 = torch_matmul(x_2, W_query);
    Tensor key_2 = torch_matmul(x_2, W_key);
    Tensor value_2 = torch_matmul(x_2, W_value);
    print(query_2);
    KEEP(query_2);
    KEEP(key_2);
    KEEP(value_2);

    Transcript("004 In [9]", "# computing for only the second in the input x_2");
    print(TUPLE(query_2, key_2, value_2));

    In(18, "keys = inputs @ W_key ");
    Tensor keys = torch_matmul(inputs, W_key);
    Tensor values = torch_matmul(inputs, W_value);
    print("keys.shape:", shape(keys));
    print("values.shape:", shape(values));
    KEEP(keys);
    KEEP(values);

    Transcript("004 In [10]", "# computing key value for all");
    Tensor queries = torch_matmul(inputs, W_query);
    print(TUPLE(shape(queries), shape(keys), shape(values)));
    KEEP(queries);

    In(19, "keys_2 = keys[1] # Python starts index at 0");
    Tensor keys_2 = sel(keys, 1);
    Tensor attn_score_22 = torch_dot(query_2, keys_2);
    print(attn_score_22);
    KEEP(attn_score_22);

    In(20, "attn_scores_2 = query_2 @ keys.T # All attention scores for given query");
    Tensor attn_scores_2 = torch_matmul(query_2, torch_T(keys));
    print(attn_scores_2);
    KEEP(attn_scores_2);

    Transcript("004 In [13]", "attn_scores = queries @ keys.T # 6x2 @ 2x6 -> omega");
    Tensor attn_scores = torch_matmul(queries, torch_T(keys));
    print(attn_scores);
    KEEP(attn_scores);

    In(21, "d_k = keys.shape[1]");
    int d_k = dim(keys, 1);
    Tensor attn_weights_2 = torch_softmax(torch_div_scalar(attn_scores_2, pow(d_k, 0.5)), -1);
    print(attn_weights_2);
    KEEP(attn_weights_2);

    Transcript("004 In [14]", "d_k = keys.shape[-1] # dimension of keys matrix");
    print(TUPLE(attn_weights_2, d_k));

    In(22, "context_vec_2 = attn_weights_2 @ values");
    Tensor context_vec_2 = torch_matmul(attn_weights_2, values);
    print(context_vec_2);
    KEEP(context_vec_2);

    return chapter_end();
}
