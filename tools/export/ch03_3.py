"""ch03_3.py: §3.3, self-attention without trainable weights (ch03.ipynb In [2]-[14]).

The chapters' functions run their notebook cells in the order the C chapter
(chapters/<program>.c) runs them. `ins` holds the fixture's inputs:
"inputs" always, "batch" (a sweep's own batch), "a" (In [37]), "tensor".
"""

import torch

def book_inputs():
    # ch03.ipynb In [2], exercise-solutions In [2]: "Your journey starts with one step"
    return torch.tensor(
        [[0.43, 0.15, 0.89],  # Your     (x^1)
         [0.55, 0.87, 0.66],  # journey  (x^2)
         [0.57, 0.85, 0.64],  # starts   (x^3)
         [0.22, 0.58, 0.33],  # with     (x^4)
         [0.77, 0.25, 0.10],  # one      (x^5)
         [0.05, 0.80, 0.55]]  # step     (x^6)
    )


def softmax_naive(x):
    # ch03.ipynb In [6]
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def ch03_3_simplified_attention(run, ins):
    inputs = run.input("inputs", ins["inputs"])  # In [2]

    # In [3]
    query = inputs[1]  # 2nd input token is the query
    attn_scores_2 = torch.empty(inputs.shape[0])
    for i, x_i in enumerate(inputs):
        attn_scores_2[i] = torch.dot(x_i, query)
    run.keep("attn_scores_2", attn_scores_2)

    # In [4]
    res = 0.
    for idx, element in enumerate(inputs[0]):
        res += inputs[0][idx] * query[idx]
    run.keep("res", res)

    # In [5]
    attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
    run.keep("attn_weights_2_tmp", attn_weights_2_tmp)
    run.keep("attn_weights_2_tmp.sum()", attn_weights_2_tmp.sum())

    # In [6]
    attn_weights_2_naive = softmax_naive(attn_scores_2)
    run.keep("attn_weights_2_naive", attn_weights_2_naive)
    run.keep("attn_weights_2_naive.sum()", attn_weights_2_naive.sum())

    # In [7]
    attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
    run.keep("attn_weights_2", attn_weights_2)
    run.keep("attn_weights_2.sum()", attn_weights_2.sum())

    # litattn's own cell: the book's remark that softmax handles extreme
    # values better, shown. Scaled up, the scores overflow exp() in float32.
    run.beyond("scaled_scores_2 = attn_scores_2 * 100; softmax_naive(scaled_scores_2), "
               "torch.softmax(scaled_scores_2, dim=0)", {"attn_scores_2": attn_scores_2, "softmax_naive": softmax_naive})
    scaled_scores_2 = attn_scores_2 * 100
    run.keep("scaled_scores_2", scaled_scores_2)
    run.keep("softmax_naive(scaled_scores_2)", softmax_naive(scaled_scores_2))
    run.keep("torch.softmax(scaled_scores_2, dim=0)", torch.softmax(scaled_scores_2, dim=0))

    # In [8]
    query = inputs[1] # 2nd input token is the query
    context_vec_2 = torch.zeros(query.shape)
    for i, x_i in enumerate(inputs):
        context_vec_2 += attn_weights_2[i]*x_i
    run.keep("context_vec_2", context_vec_2)

    # 001 In [14]: retrieval practice with the query "Your"
    query = inputs[0]
    attn_scores_1 = torch.zeros(inputs.shape[0])
    for i, x_i in enumerate(inputs):
        attn_scores_1[i] = torch.dot(query, x_i)
    attn_weights_1 = torch.softmax(attn_scores_1, dim=0)
    context_vec_1 = torch.zeros(query.shape)
    for i, x_i in enumerate(inputs):
        context_vec_1 += attn_weights_1[i] * x_i
    run.keep("attn_scores_1", attn_scores_1)
    run.keep("attn_weights_1", attn_weights_1)
    run.keep("context_vec_1", context_vec_1)

    # In [9] (torch.empty(6, 6): 6 is the book's number of tokens)
    attn_scores = torch.empty(inputs.shape[0], inputs.shape[0])
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            attn_scores[i, j] = torch.dot(x_i, x_j)
    run.keep("attn_scores (In [9])", attn_scores)

    # In [10]
    attn_scores = inputs @ inputs.T
    run.keep("attn_scores", attn_scores)

    # In [11]
    attn_weights = torch.softmax(attn_scores, dim=-1)
    run.keep("attn_weights", attn_weights)

    # In [12] (row_2_sum is a Python float)
    run.keep("attn_weights.sum(dim=-1)", attn_weights.sum(dim=-1))

    # In [13]
    all_context_vecs = attn_weights @ inputs
    run.keep("all_context_vecs", all_context_vecs)
