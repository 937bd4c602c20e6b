// §3.4.1 Computing the attention weights step by step
//
// Read beside transcript 004 (cells In [3] to In [17]; 000 and 001 show the
// same cells, 001 with seed 42, and 003 is the book's own text): each `// In [N]:` line below is that
// notebook cell, and the names are the notebook's.
#include <math.h>

#include "chapter.h"

int main(int argc, char **argv) {
    chapter_begin(argc, argv, &(ChapterSpec){
        .name = "ch03_4_1_trainable_weights",
        .variant = "seed123",
        .about = "Book §3.4.1: self-attention with trainable weights, step by step, for query x(2).",
        .draws_weights = 1,
    });

    // In [3]: inputs.shape
    cell("inputs.shape");
    Tensor inputs = fixture_inputs(2);
    show("%S\n", inputs);

    // In [4]: x_2 = inputs[1]; d_in = inputs.shape[1]; d_out = 2
    int d_out = (int)fixture_int("d_out", 1, CHAPTER_MAX_DIM);
    cell("x_2 = inputs[1]; d_in = inputs.shape[1]; d_out = %d", d_out);
    Tensor x_2 = tensor_row(inputs, 1);
    int d_in = tensor_dim(inputs, 1);

    // In [5]: torch.manual_seed(123); W_query = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    cell("torch.manual_seed(%s); W_query, W_key, W_value = (torch.nn.Parameter(torch.rand(d_in, d_out), "
         "requires_grad=False) for _ in range(3))", seed_text());
    ParamSource *torch = manual_seed();
    Tensor W_query = param_rand(torch, "W_query", d_in, d_out);
    Tensor W_key = param_rand(torch, "W_key", d_in, d_out);
    Tensor W_value = param_rand(torch, "W_value", d_in, d_out);

    // In [6], In [7], In [8]: the three weight matrices
    cell("W_query");
    show("%P\n", W_query);
    cell("W_key");
    show("%P\n", W_key);
    cell("W_value");
    show("%P\n", W_value);

    // In [9]: query_2 = x_2 @ W_query; key_2 = x_2 @ W_key; value_2 = x_2 @ W_value
    cell("query_2 = x_2 @ W_query; key_2 = x_2 @ W_key; value_2 = x_2 @ W_value; query_2, key_2, value_2");
    Tensor query_2 = torch_matmul(x_2, W_query);
    Tensor key_2 = torch_matmul(x_2, W_key);
    Tensor value_2 = torch_matmul(x_2, W_value);
    show("(%T, %T, %T)\n", query_2, key_2, value_2);
    KEEP(query_2);
    KEEP(key_2);
    KEEP(value_2);

    // In [10]: queries = inputs @ W_query; keys = inputs @ W_key; values = inputs @ W_value
    cell("queries = inputs @ W_query; keys = inputs @ W_key; values = inputs @ W_value; "
         "queries.shape, keys.shape, values.shape");
    Tensor queries = torch_matmul(inputs, W_query);
    Tensor keys = torch_matmul(inputs, W_key);
    Tensor values = torch_matmul(inputs, W_value);
    show("(%S, %S, %S)\n", queries, keys, values);
    KEEP(queries);
    KEEP(keys);
    KEEP(values);

    // In [11]: keys_2 = keys[1]; attn_score_22 = query_2.dot(keys_2)
    cell("keys_2 = keys[1]; attn_score_22 = query_2.dot(keys_2)");
    Tensor attn_score_22 = torch_dot(query_2, tensor_row(keys, 1));
    SHOW(attn_score_22);

    // In [12]: attn_scores_2 = query_2 @ keys.T
    cell("attn_scores_2 = query_2 @ keys.T");
    Tensor attn_scores_2 = torch_matmul(query_2, torch_transpose(keys));
    SHOW(attn_scores_2);

    // In [13]: attn_scores = queries @ keys.T  (every query at once: omega)
    cell("attn_scores = queries @ keys.T");
    Tensor attn_scores = torch_matmul(queries, torch_transpose(keys));
    SHOW(attn_scores);

    // In [14]: d_k = keys.shape[-1]; attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
    cell("d_k = keys.shape[-1]; attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1); attn_weights_2, d_k");
    int d_k = tensor_dim(keys, -1);
    Tensor attn_weights_2 = torch_softmax(torch_div(attn_scores_2, (float)pow(d_k, 0.5)), -1);
    show("(%T, %d)\n", attn_weights_2, d_k);
    KEEP(attn_weights_2);

    // In [17]: context_vec_2 = attn_weights_2 @ values
    cell("context_vec_2 = attn_weights_2 @ values");
    Tensor context_vec_2 = torch_matmul(attn_weights_2, values);
    SHOW(context_vec_2);

    return chapter_end();
}
