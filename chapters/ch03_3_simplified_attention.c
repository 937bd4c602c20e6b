// §3.3 Attending to different parts of the input with self-attention
//   3.3.1 A simple self-attention mechanism without trainable weights
//   3.3.2 Computing attention weights for all input tokens
//
// Read beside transcript 001 (cells In [6] to In [32]) or the book: each
// `// In [N]:` line below is that notebook cell; the book cells the transcript
// skipped are marked `// Book:`. The names are the book's.
#include "chapter.h"

int main(int argc, char **argv) {
    chapter_begin(argc, argv, &(ChapterSpec){
        .name = "ch03_3_simplified_attention",
        .variant = "book",
        .about = "Book §3.3.1-3.3.2: simplified self-attention without trainable weights.",
    });

    // In [6]: inputs = torch.tensor([[0.43, 0.15, 0.89], ...])  # Your journey starts with one step
    cell("inputs");
    Tensor inputs = fixture_inputs(2);
    show("%T\n", inputs);
    int T = inputs.rows;

    // In [7]: attn_scores_2[i] = torch.dot(x_i, query)
    cell("query = inputs[1]; attn_scores_2 = [torch.dot(x_i, query) for x_i in inputs]");
    Tensor query = tensor_row(inputs, 1);
    Tensor attn_scores_2 = tensor_vector(T);
    for (int i = 0; i < T; i++) attn_scores_2.data[i] = tensor_item(torch_dot(tensor_row(inputs, i), query));
    SHOW(attn_scores_2);

    // In [8]: attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
    cell("attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()");
    Tensor attn_weights_2_tmp = torch_div(attn_scores_2, tensor_item(torch_sum(attn_scores_2)));
    show("Attention weights: %T\n", attn_weights_2_tmp);
    show("Sum: %T\n", torch_sum(attn_weights_2_tmp));
    KEEP(attn_weights_2_tmp);
    keep("attn_weights_2_tmp.sum()", torch_sum(attn_weights_2_tmp));

    // Book: softmax_naive(x) = torch.exp(x) / torch.exp(x).sum(dim=0)
    cell("attn_weights_2_naive = torch.exp(attn_scores_2) / torch.exp(attn_scores_2).sum(dim=0)");
    Tensor exp_scores = torch_exp(attn_scores_2);
    Tensor attn_weights_2_naive = torch_div(exp_scores, tensor_item(torch_sum(exp_scores)));
    show("Attention weights: %T\n", attn_weights_2_naive);
    show("Sum: %T\n", torch_sum(attn_weights_2_naive));
    KEEP(attn_weights_2_naive);
    keep("attn_weights_2_naive.sum()", torch_sum(attn_weights_2_naive));

    // In [9]: attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
    cell("attn_weights_2 = torch.softmax(attn_scores_2, dim=0)");
    Tensor attn_weights_2 = torch_softmax(attn_scores_2, 0);
    show("Attention weights: %T\n", attn_weights_2);
    show("Sum: %T\n", torch_sum(attn_weights_2));
    KEEP(attn_weights_2);
    keep("attn_weights_2.sum()", torch_sum(attn_weights_2));

    // Book: softmax is "better at handling extreme values". Scaled up, the
    // scores overflow exp() in float32 (beyond about 88.7): the naive softmax
    // divides inf by inf, while torch.softmax subtracts the row's maximum first.
    cell("scaled_scores_2 = attn_scores_2 * 100; softmax_naive(scaled_scores_2), torch.softmax(scaled_scores_2, dim=0)");
    Tensor scaled_scores_2 = torch_mul(attn_scores_2, 100.0f);
    Tensor exp_scaled = torch_exp(scaled_scores_2);
    Tensor naive_scaled = torch_div(exp_scaled, tensor_item(torch_sum(exp_scaled)));
    Tensor softmax_scaled = torch_softmax(scaled_scores_2, 0);
    show("(%T, %T)\n", naive_scaled, softmax_scaled);
    KEEP(scaled_scores_2);
    keep("softmax_naive(scaled_scores_2)", naive_scaled);
    keep("torch.softmax(scaled_scores_2, dim=0)", softmax_scaled);

    // In [10]: context_vec_2 += attn_weights_2[i] * x_i
    cell("context_vec_2 = torch.zeros(query.shape); context_vec_2 += attn_weights_2[i] * x_i for each i");
    Tensor context_vec_2 = tensor_vector(query.cols);
    for (int i = 0; i < T; i++) {
        Tensor x_i = tensor_row(inputs, i);
        show("%d | %.2f * %T\n", i, (double)attn_weights_2.data[i], x_i);
        torch_add_scaled_(context_vec_2, attn_weights_2.data[i], x_i);
    }
    SHOW(context_vec_2);

    // In [14]: retrieval practice: the same three steps for query x(1)
    cell("query = inputs[0]; attn_scores_1 -> attn_weights_1 -> context_vec_1");
    query = tensor_row(inputs, 0);
    Tensor attn_scores_1 = tensor_vector(T);
    for (int i = 0; i < T; i++) attn_scores_1.data[i] = tensor_item(torch_dot(query, tensor_row(inputs, i)));
    Tensor attn_weights_1 = torch_softmax(attn_scores_1, 0);
    Tensor context_vec_1 = tensor_vector(query.cols);
    for (int i = 0; i < T; i++) torch_add_scaled_(context_vec_1, attn_weights_1.data[i], tensor_row(inputs, i));
    KEEP(attn_scores_1);
    KEEP(attn_weights_1);
    SHOW(context_vec_1);

    // In [17]: attn_scores[i, j] = torch.dot(x_i, x_j)
    cell("attn_scores[i, j] = torch.dot(x_i, x_j) for every i, j");
    Tensor attn_scores = tensor_matrix(T, T);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            attn_scores.data[i * T + j] = tensor_item(torch_dot(tensor_row(inputs, i), tensor_row(inputs, j)));
    SHOW(attn_scores);

    // In [20]: attn_scores = inputs @ inputs.T
    cell("attn_scores = inputs @ inputs.T");
    attn_scores = torch_matmul(inputs, torch_transpose(inputs));
    SHOW(attn_scores);

    // In [29]: attn_weights = torch.softmax(attn_scores, dim=-1)
    cell("attn_weights = torch.softmax(attn_scores, dim=-1)");
    Tensor attn_weights = torch_softmax(attn_scores, -1);
    SHOW(attn_weights);

    // Book: print("All row sums:", attn_weights.sum(dim=-1))
    cell("attn_weights.sum(dim=-1)");
    show("All row sums: %T\n", torch_sum_rows(attn_weights));
    keep("attn_weights.sum(dim=-1)", torch_sum_rows(attn_weights));

    // In [32]: context_vecs = attn_weights @ inputs
    cell("context_vecs = attn_weights @ inputs");
    Tensor context_vecs = torch_matmul(attn_weights, inputs);
    SHOW(context_vecs);

    return chapter_end();
}
