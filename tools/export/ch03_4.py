"""ch03_4.py: §3.4, self-attention with trainable weights: the step by step
computation, the scaling rationale, SelfAttention_v1 and _v2, Exercise 3.1
(ch03.ipynb In [15]-[24], exercise-solutions.ipynb In [2]-[7]).

The notebooks' classes are copied unchanged (comments shortened).
"""

import torch
import torch.nn as nn

class SelfAttention_v1(nn.Module):
    # ch03.ipynb In [23]

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key   = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value

        attn_scores = queries @ keys.T # omega
        attn_weights = torch.softmax(
            attn_scores / keys.shape[-1]**0.5, dim=-1
        )

        context_vec = attn_weights @ values
        return context_vec


class SelfAttention_v2(nn.Module):
    # ch03.ipynb In [24]

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)

        context_vec = attn_weights @ values
        return context_vec


class Exercise31_SelfAttention_v1(nn.Module):
    # exercise-solutions.ipynb In [3] (its SelfAttention_v1 also keeps d_out)

    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key   = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value

        attn_scores = queries @ keys.T # omega
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)

        context_vec = attn_weights @ values
        return context_vec


class Exercise31_SelfAttention_v2(nn.Module):
    # exercise-solutions.ipynb In [4]: no bias, and softmax over dim=1 (the
    # last axis of its 2-D scores, so the same as dim=-1 here)

    def __init__(self, d_in, d_out):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key   = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=1)

        context_vec = attn_weights @ values
        return context_vec


def ch03_4_1_trainable_weights(run, ins):
    inputs = run.input("inputs", ins["inputs"])
    # In [15]
    x_2 = inputs[1] # second input element
    d_in = inputs.shape[1] # the input embedding size, d=3
    d_out = run.setting_int("d_out", 2) # the output embedding size, d=2

    # In [16]
    run.manual_seed(None, 123)
    W_query = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    run.keep("W_query", W_query, "weight")
    W_key   = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    run.keep("W_key", W_key, "weight")
    W_value = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    run.keep("W_value", W_value, "weight")

    # In [17]
    query_2 = x_2 @ W_query # _2 because it's with respect to the 2nd input element
    key_2 = x_2 @ W_key
    value_2 = x_2 @ W_value
    run.keep("query_2", query_2)
    run.keep("key_2", key_2)
    run.keep("value_2", value_2)

    # In [18]
    keys = inputs @ W_key
    values = inputs @ W_value
    run.keep("keys", keys)
    run.keep("values", values)

    # 004 In [10]
    queries = inputs @ W_query
    run.keep("queries", queries)

    # In [19]
    keys_2 = keys[1] # Python starts index at 0
    attn_score_22 = query_2.dot(keys_2)
    run.keep("attn_score_22", attn_score_22)

    # In [20]
    attn_scores_2 = query_2 @ keys.T # All attention scores for given query
    run.keep("attn_scores_2", attn_scores_2)

    # 004 In [13]
    attn_scores = queries @ keys.T # 6x2 @ 2x6 -> omega
    run.keep("attn_scores", attn_scores)

    # In [21]
    d_k = keys.shape[1]
    attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
    run.keep("attn_weights_2", attn_weights_2)

    # In [22]
    context_vec_2 = attn_weights_2 @ values
    run.keep("context_vec_2", context_vec_2)


def ch03_4_1_scaling_rationale(run, ins):
    # 004 In [15]
    tensor = run.input("tensor", ins["tensor"])
    softmax_result = torch.softmax(tensor, dim=-1)
    run.keep("softmax_result", softmax_result)
    scaled_tensor = tensor * 8
    run.keep("scaled_tensor", scaled_tensor)
    softmax_scaled_result = torch.softmax(scaled_tensor, dim=-1)
    run.keep("softmax_scaled_result", softmax_scaled_result)
    # 004 In [16]'s variance demo draws from NumPy's unseeded generator: not
    # reproducible, so not exported (the C's variance_* are checked against
    # theory by tests/check_variance.c).


def ch03_4_2_self_attention_v1(run, ins, continued=False):
    inputs = run.input("inputs", ins["inputs"])
    d_in = inputs.shape[1]
    d_out = run.setting_int("d_out", 2)
    # In [23]
    if continued:
        # 000 In [25]: torch.manual_seed(123) and In [16]'s three
        # torch.rand(d_in, d_out); 000 In [33] then builds SelfAttentionV1
        # without re-seeding, so its weights continue the stream.
        assert run.skip == 3 * d_in * d_out
        skip, run.skip = run.skip, 0
        run.manual_seed(None, 123)
        for _ in range(3):
            torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
        run.skip = skip
        run.attrs["skip"] = skip
    else:
        run.manual_seed(None, 123)
    sa_v1 = run.module("sa_v1", SelfAttention_v1(d_in, d_out))
    with run:
        run.keep("sa_v1(inputs)", sa_v1(inputs))
    # litattn's cell: inputs.requires_grad_(); loss = sa_v1(inputs).sum(); loss.backward()
    run.backward_sum("sa_v1", sa_v1, inputs, "inputs")


def ch03_4_2_self_attention_v2(run, ins):
    inputs = run.input("inputs", ins["inputs"])
    d_in = inputs.shape[1]
    d_out = run.setting_int("d_out", 2)

    # In [24]
    run.manual_seed(None, 789)
    sa_v2 = run.module("sa_v2", SelfAttention_v2(d_in, d_out, qkv_bias=run.setting_bool("qkv_bias", False)))
    with run:
        run.keep("sa_v2(inputs)", sa_v2(inputs))
    # litattn's cell: inputs.requires_grad_(); loss = sa_v2(inputs).sum(); loss.backward()
    run.backward_sum("sa_v2", sa_v2, inputs, "inputs")

    # Exercise 3.1: exercise-solutions In [3]-[7], on the same inputs and d_out
    run.manual_seed("exercise_3_1", 123)
    sa_v1 = run.module("exercise_3_1.sa_v1", Exercise31_SelfAttention_v1(d_in, d_out))
    run.manual_seed("exercise_3_1", 123)
    sa_v2 = run.module("exercise_3_1.sa_v2", Exercise31_SelfAttention_v2(d_in, d_out))
    # ExIn [5]: the fixture keeps sa_v1's drawn parameters, not these
    sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)
    sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)
    with run:
        v1_out = sa_v1(inputs)  # ExIn [6]
        v2_out = sa_v2(inputs)  # ExIn [7]
    run.keep("exercise_3_1.sa_v1(inputs)", v1_out)
    run.keep("exercise_3_1.sa_v2(inputs)", v2_out)
    # litattn's own cell: torch.equal(sa_v1(inputs), sa_v2(inputs)), as 1.0 / 0.0
    run.beyond("torch.equal(sa_v1(inputs), sa_v2(inputs))", {"sa_v1": sa_v1, "sa_v2": sa_v2, "inputs": inputs})
    run.keep("exercise_3_1.torch.equal(sa_v1(inputs), sa_v2(inputs))",
             torch.tensor(1.0 if torch.equal(v1_out, v2_out) else 0.0))
