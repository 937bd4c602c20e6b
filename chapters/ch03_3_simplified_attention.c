// §3.3 Attending to different parts of the input with self-attention
//   3.3.1 A simple self-attention mechanism without trainable weights
//   3.3.2 Computing attention weights for all input tokens
//
// Read beside ch03.ipynb, In [2] to In [14]. Cells that transcript 001 shows
// and the notebook does not are marked with the transcript's own number.
#include "chapter.h"

int main(int argc, char **argv) {
    chapter_begin(argc, argv);

    In(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));  // "Your journey starts with one step"
    const int num_tokens = dim(inputs, 0);

    Transcript("001 In [6]", "inputs");
    print(inputs);

    In(3, "query = inputs[1]  # 2nd input token is the query");
    Tensor query = sel(inputs, 1);
    Tensor attn_scores_2 = tensor_empty(SIZE(num_tokens));
    for (int i = 0; i < num_tokens; i++) {
        Tensor x_i = sel(inputs, i);
        AT(attn_scores_2, i) = item(torch_dot(x_i, query));  // dot product (transpose not necessary here ...)
    }
    print(attn_scores_2);
    KEEP(attn_scores_2);

    In(4, "res = 0.");
    // A Python float; the first `+=` with a 0-d tensor makes it one.
    Tensor res = tensor_scalar(0.0f);
    for (int idx = 0; idx < dim(inputs, 1); idx++)
        res = torch_add(res, torch_mul(sel2(inputs, 0, idx), sel(query, idx)));
    print(res);
    print(torch_dot(sel(inputs, 0), query));
    KEEP(res);

    In(5, "attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()");
    Tensor attn_weights_2_tmp = torch_div(attn_scores_2, torch_sum(attn_scores_2));
    print("Attention weights:", attn_weights_2_tmp);
    print("Sum:", torch_sum(attn_weights_2_tmp));
    KEEP(attn_weights_2_tmp);
    keep("attn_weights_2_tmp.sum()", torch_sum(attn_weights_2_tmp));

    In(6, "def softmax_naive(x):");
    // return torch.exp(x) / torch.exp(x).sum(dim=0)
    Tensor exp_scores = torch_exp(attn_scores_2);
    Tensor attn_weights_2_naive = torch_div(exp_scores, torch_sum(exp_scores));
    print("Attention weights:", attn_weights_2_naive);
    print("Sum:", torch_sum(attn_weights_2_naive));
    KEEP(attn_weights_2_naive);
    keep("attn_weights_2_naive.sum()", torch_sum(attn_weights_2_naive));

    In(7, "attn_weights_2 = torch.softmax(attn_scores_2, dim=0)");
    Tensor attn_weights_2 = torch_softmax(attn_scores_2, 0);
    print("Attention weights:", attn_weights_2);
    print("Sum:", torch_sum(attn_weights_2));
    KEEP(attn_weights_2);
    keep("attn_weights_2.sum()", torch_sum(attn_weights_2));

    // The book: softmax is "better at handling extreme values". Scaled up, the
    // scores overflow exp() in float32 (beyond about 88.7): the naive softmax
    // divides inf by inf, while torch.softmax subtracts the row's maximum first.
    Beyond("scaled_scores_2 = attn_scores_2 * 100; softmax_naive(scaled_scores_2), torch.softmax(scaled_scores_2, dim=0)");
    Tensor scaled_scores_2 = torch_mul_scalar(attn_scores_2, 100);
    Tensor exp_scaled = torch_exp(scaled_scores_2);
    Tensor naive_scaled = torch_div(exp_scaled, torch_sum(exp_scaled));
    Tensor softmax_scaled = torch_softmax(scaled_scores_2, 0);
    print(TUPLE(naive_scaled, softmax_scaled));
    KEEP(scaled_scores_2);
    keep("softmax_naive(scaled_scores_2)", naive_scaled);
    keep("torch.softmax(scaled_scores_2, dim=0)", softmax_scaled);

    In(8, "query = inputs[1] # 2nd input token is the query");
    Tensor context_vec_2 = tensor_zeros(shape(query));
    for (int i = 0; i < num_tokens; i++) torch_add_(context_vec_2, torch_mul(sel(attn_weights_2, i), sel(inputs, i)));
    print(context_vec_2);
    KEEP(context_vec_2);

    // The same loop, printing each step: print(f"{i} | {attention_weights_2[i]:.2f} * {x_i}")
    Transcript("001 In [10]", "query = inputs[1]");
    for (int i = 0; i < num_tokens; i++) print(i, "|", fixed(item(sel(attn_weights_2, i)), 2), "*", sel(inputs, i));

    // Retrieval practice: the same three steps for the query "Your".
    Transcript("001 In [14]", "# Compute attention scores");
    query = sel(inputs, 0);
    Tensor attn_scores_1 = tensor_zeros(SIZE(num_tokens));
    for (int i = 0; i < num_tokens; i++) AT(attn_scores_1, i) = item(torch_dot(query, sel(inputs, i)));
    Tensor attn_weights_1 = torch_softmax(attn_scores_1, 0);
    Tensor context_vec_1 = tensor_zeros(shape(query));
    for (int i = 0; i < num_tokens; i++) torch_add_(context_vec_1, torch_mul(sel(attn_weights_1, i), sel(inputs, i)));
    print(context_vec_1);
    KEEP(attn_scores_1);
    KEEP(attn_weights_1);
    KEEP(context_vec_1);

    In(9, "attn_scores = torch.empty(6, 6)");  // 6: the book's number of tokens
    Tensor attn_scores = tensor_empty(SIZE(num_tokens, num_tokens));
    for (int i = 0; i < num_tokens; i++)
        for (int j = 0; j < num_tokens; j++)
            AT(attn_scores, i, j) = item(torch_dot(sel(inputs, i), sel(inputs, j)));
    print(attn_scores);
    keep("attn_scores (In [9])", attn_scores);

    In(10, "attn_scores = inputs @ inputs.T");
    attn_scores = torch_matmul(inputs, torch_T(inputs));
    print(attn_scores);
    KEEP(attn_scores);

    In(11, "attn_weights = torch.softmax(attn_scores, dim=-1)");
    Tensor attn_weights = torch_softmax(attn_scores, -1);
    print(attn_weights);
    KEEP(attn_weights);

    In(12, "row_2_sum = sum([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])");
    // The list is row 2 of attn_weights as In [11] printed it, typed back in:
    // Python's sum() of those six doubles, left to right.
    double row_2_sum = 0;
    for (int j = 0; j < num_tokens; j++) row_2_sum += as_printed(AT(attn_weights, 1, j));
    print("Row 2 sum:", row_2_sum);
    print("All row sums:", torch_sum_dim(attn_weights, -1, false));
    keep("attn_weights.sum(dim=-1)", torch_sum_dim(attn_weights, -1, false));

    In(13, "all_context_vecs = attn_weights @ inputs");
    Tensor all_context_vecs = torch_matmul(attn_weights, inputs);
    print(all_context_vecs);
    KEEP(all_context_vecs);

    In(14, "print(\"Previous 2nd context vector:\", context_vec_2)");
    print("Previous 2nd context vector:", context_vec_2);

    return chapter_end();
}
