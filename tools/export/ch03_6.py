"""ch03_6.py: §3.6, multi-head attention: MultiHeadAttentionWrapper,
MultiHeadAttention, Exercises 3.2 and 3.3 (ch03.ipynb In [35]-[38],
exercise-solutions.ipynb).

The notebook's classes are copied unchanged (comments shortened), and so is
CausalAttention as it was when Exercise 3.2's output was recorded.
"""

import torch
import torch.nn as nn

from .ch03_5 import CausalAttention, stacked_batch

def book_a():
    # ch03.ipynb In [37]: (b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4)
    return torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573],
                           [0.8993, 0.0390, 0.9268, 0.7388],
                           [0.7179, 0.7058, 0.9156, 0.4340]],

                          [[0.0772, 0.3565, 0.1479, 0.5331],
                           [0.4066, 0.2318, 0.4545, 0.9737],
                           [0.4606, 0.5159, 0.4220, 0.5786]]]])


class MultiHeadAttentionWrapper(nn.Module):
    # ch03.ipynb In [35]

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    # ch03.ipynb In [36]
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert (d_out % num_heads == 0), \
            "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads # Reduce the projection dim to match desired output dim

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # Linear layer to combine head outputs
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length),
                       diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x) # Shape: (b, num_tokens, d_out)
        queries = self.W_query(x)
        values = self.W_value(x)

        # Unroll last dim: (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        # Transpose: (b, num_tokens, num_heads, head_dim) -> (b, num_heads, num_tokens, head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        # Compute scaled dot-product attention (aka self-attention) with a causal mask
        attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head

        # Original mask truncated to the number of tokens and converted to boolean
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]

        # Use the mask to fill attention scores
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # Shape: (b, num_tokens, num_heads, head_dim)
        context_vec = (attn_weights @ values).transpose(1, 2)

        # Combine heads, where self.d_out = self.num_heads * self.head_dim
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec) # optional projection

        return context_vec


class CausalAttention_c400f77(nn.Module):
    # CausalAttention as it was when exercise-solutions.ipynb's Exercise 3.2
    # output was recorded (rasbt/LLMs-from-scratch c400f77, January 2024):
    # the same class with torch.softmax(..., dim=1), normalising over the
    # queries. softmax_dim = 1 is that class; the sweep also tries other dims.

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False, softmax_dim=1):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.softmax_dim = softmax_dim

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=self.softmax_dim)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


class MultiHeadAttentionWrapper_c400f77(nn.Module):
    # The wrapper of In [35] over those heads.

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, softmax_dim=1):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention_c400f77(d_in, d_out, context_length, dropout, qkv_bias, softmax_dim)
             for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def ch03_6_1_multihead_wrapper(run, ins):
    batch = stacked_batch(run, ins)
    # In [35]
    run.manual_seed(None, 123)
    context_length = run.setting_int("context_length", batch.shape[1]) # This is the number of tokens
    d_in, d_out = batch.shape[2], run.setting_int("d_out", 2)
    mha = run.module("mha", MultiHeadAttentionWrapper(
        d_in, d_out, context_length, run.setting_float("dropout", 0.0),
        num_heads=run.setting_int("num_heads", 2), qkv_bias=run.setting_bool("qkv_bias", False)))
    if not run.setting_bool("training", True):
        mha.eval()
    with run:
        context_vecs = mha(batch)
    run.keep("context_vecs", context_vecs)
    # litattn's cell: batch.requires_grad_(); context_vecs = mha(batch); loss = context_vecs.sum(); loss.backward()
    run.backward_sum("mha", mha, batch, "batch")

    # Exercise 3.2: d_out = 1, two heads. The recorded variant runs the class
    # its recorded output came from (softmax over dim=1).
    run.manual_seed("exercise_3_2", 123)
    ex_d_out = run.setting_int("exercise_3_2.d_out", 1)
    softmax_dim = run.setting_int("exercise_3_2.softmax_dim", -1)
    if softmax_dim == -1:
        ex_mha = MultiHeadAttentionWrapper(d_in, ex_d_out, context_length, 0.0, num_heads=2)
    else:
        ex_mha = MultiHeadAttentionWrapper_c400f77(d_in, ex_d_out, context_length, 0.0, num_heads=2,
                                                   softmax_dim=softmax_dim)
    run.module("exercise_3_2.mha", ex_mha)
    with run:
        context_vecs = ex_mha(batch)
    run.keep("exercise_3_2.context_vecs", context_vecs)
    # litattn's cell: batch.grad = None; batch.requires_grad_(); context_vecs = mha(batch);
    # loss = context_vecs.sum(); loss.backward()
    run.backward_sum("exercise_3_2.mha", ex_mha, batch, "exercise_3_2.batch")


def ch03_6_2_multihead_attention(run, ins):
    batch = stacked_batch(run, ins)
    # In [36]
    run.manual_seed(None, 123)
    context_length, d_in = run.setting_int("context_length", batch.shape[1]), batch.shape[2]
    d_out = run.setting_int("d_out", 2)
    mha = run.module("mha", MultiHeadAttention(
        d_in, d_out, context_length, run.setting_float("dropout", 0.0),
        num_heads=run.setting_int("num_heads", 2), qkv_bias=run.setting_bool("qkv_bias", False)))
    if not run.setting_bool("training", True):
        mha.eval()
    with run:
        context_vecs = mha(batch)
    run.keep("context_vecs", context_vecs)
    # litattn's cell: batch.requires_grad_(); context_vecs = mha(batch); loss = context_vecs.sum(); loss.backward()
    run.backward_sum("mha", mha, batch, "batch")

    # In [37]
    a = run.input("a", ins["a"])
    run.keep("a @ a.transpose(2, 3)", a @ a.transpose(2, 3))

    # In [38]
    first_head = a[0, 0, :, :]
    first_res = first_head @ first_head.T
    second_head = a[0, 1, :, :]
    second_res = second_head @ second_head.T
    run.keep("first_res", first_res)
    run.keep("second_res", second_res)

    # Exercise 3.3: the module at GPT-2's size; beyond the book, it also runs
    # forward on x = torch.rand(1, context_length, d_in) drawn next.
    run.manual_seed("exercise_3_3", 123)
    context_length = run.setting_int("exercise_3_3.context_length", 1024)
    d_in, d_out = run.setting_int("exercise_3_3.d_in", 768), run.setting_int("exercise_3_3.d_out", 768)
    num_heads = run.setting_int("exercise_3_3.num_heads", 12)
    ex_mha = run.module("exercise_3_3.mha", MultiHeadAttention(
        d_in, d_out, context_length, run.setting_float("exercise_3_3.dropout", 0.0), num_heads,
        qkv_bias=run.setting_bool("exercise_3_3.qkv_bias", False)))
    batch_size = run.setting_int("exercise_3_3.batch_size", 1)
    num_tokens = run.setting_int("exercise_3_3.tokens", context_length)
    x = run.draw_rand("exercise_3_3.x", (batch_size, num_tokens, d_in), "random")
    if not run.setting_bool("exercise_3_3.training", True):
        ex_mha.eval()
    run.beyond("x = torch.rand(1, context_length, d_in); context_vecs = mha(x)",
               {"mha": ex_mha, "context_length": context_length, "d_in": d_in, "drawn": "exercise_3_3.x"})
    with run:
        context_vecs = ex_mha(x)
    run.keep("exercise_3_3.context_vecs", context_vecs)
    # litattn's cell: x.requires_grad_(); context_vecs = mha(x); loss = context_vecs.sum(); loss.backward()
    run.backward_sum("exercise_3_3.mha", ex_mha, x, "exercise_3_3.x")
