"""ch03_5.py: §3.5, causal attention: the mask, dropout, CausalAttention
(ch03.ipynb In [25]-[34]).

The notebook's class is copied unchanged (comments shortened).
"""

import torch
import torch.nn as nn

from .ch03_4 import SelfAttention_v2

class CausalAttention(nn.Module):
    # ch03.ipynb In [34]

    def __init__(self, d_in, d_out, context_length,
                 dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout) # New
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1)) # New

    def forward(self, x):
        b, num_tokens, d_in = x.shape # New batch dimension b
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2) # Changed transpose
        attn_scores.masked_fill_(  # New, _ ops are in-place
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # `:num_tokens` to account for shorter inputs
        attn_weights = torch.softmax(
            attn_scores / keys.shape[-1]**0.5, dim=-1
        )
        attn_weights = self.dropout(attn_weights) # New

        context_vec = attn_weights @ values
        return context_vec


def ch03_5_1_causal_mask(run, ins):
    inputs = run.input("inputs", ins["inputs"])
    d_in = inputs.shape[1]
    d_out = run.setting_int("d_out", 2)
    # In [24] (setup: the module only)
    run.manual_seed(None, 789)
    sa_v2 = run.module("sa_v2", SelfAttention_v2(d_in, d_out, qkv_bias=run.setting_bool("qkv_bias", False)))

    with run:
        # In [25]
        queries = sa_v2.W_query(inputs)
        keys = sa_v2.W_key(inputs)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
    run.keep("queries", queries)
    run.keep("keys", keys)
    run.keep("attn_scores", attn_scores)

    # In [26]
    context_length = attn_scores.shape[0]
    mask_simple = torch.tril(torch.ones(context_length, context_length))
    run.keep("mask_simple", mask_simple)
    # In [27]
    masked_simple = attn_weights*mask_simple
    run.keep("masked_simple", masked_simple)
    # In [28]
    row_sums = masked_simple.sum(dim=-1, keepdim=True)
    masked_simple_norm = masked_simple / row_sums
    run.keep("row_sums", row_sums)
    run.keep("masked_simple_norm", masked_simple_norm)
    # In [29]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    run.keep("mask", mask)
    run.keep("masked", masked)
    # In [30]
    attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)
    run.keep("attn_weights", attn_weights)


def ch03_5_2_dropout(run, ins):
    inputs = run.input("inputs", ins["inputs"])
    d_in = inputs.shape[1]
    d_out = run.setting_int("d_out", 2)
    # In [24], [25], [29], [30] (setup): the causal attention weights
    run.manual_seed("sa_v2", 789)
    sa_v2 = run.module("sa_v2", SelfAttention_v2(d_in, d_out))
    with run:
        queries = sa_v2.W_query(inputs)
        keys = sa_v2.W_key(inputs)
    attn_scores = queries @ keys.T
    context_length = attn_scores.shape[0]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)
    run.keep("attn_weights", attn_weights)

    # In [31]
    run.manual_seed(None, 123)
    dropout = run.module("dropout", torch.nn.Dropout(run.setting_float("dropout", 0.5))) # dropout rate of 50%
    example = torch.ones(6, 6) # create a matrix of ones
    with run:
        run.keep("dropout(example)", dropout(example))

    # In [32]
    run.manual_seed(None, 123)
    with run:
        run.keep("dropout(attn_weights)", dropout(attn_weights))


def stacked_batch(run, ins):
    # In [33]; a sweep configuration may bring its own batch instead
    inputs = run.input("inputs", ins["inputs"])
    batch = torch.stack((inputs, inputs), dim=0)
    if "batch" in ins:
        batch = run.input("batch", ins["batch"])
    return batch


def ch03_5_3_causal_attention(run, ins):
    d_out = run.setting_int("d_out", 2)
    batch = stacked_batch(run, ins)
    d_in = batch.shape[2]
    # In [34]
    run.manual_seed(None, 123)
    context_length = run.setting_int("context_length", batch.shape[1])
    ca = run.module("ca", CausalAttention(d_in, d_out, context_length, run.setting_float("dropout", 0.0),
                                          run.setting_bool("qkv_bias", False)))
    if not run.setting_bool("training", True):
        ca.eval()
    with run:
        context_vecs = ca(batch)
    run.keep("context_vecs", context_vecs)
    # litattn's cell: batch.requires_grad_(); context_vecs = ca(batch); loss = context_vecs.sum(); loss.backward()
    run.backward_sum("ca", ca, batch, "batch")
