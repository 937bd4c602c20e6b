"""ch03_buffers.py: understanding-buffers.ipynb, "Understanding PyTorch
Buffers" (In [1]-[16]): CausalAttention without and with
register_buffer("mask", ...) on the book's batch, state_dict(), the mask
changed in place, then torch.save / torch.load of each state_dict.

The notebook's classes are copied unchanged (comments shortened). The
notebook ran on a GPU; this runs on the CPU (`device` is torch.device("cpu"),
the notebook's own fallback), where In [4] does not raise and prints the
batch's context vectors. Every module is made from one torch.manual_seed(123)
stream, as the notebook makes them, the two made in In [15] and In [16]
included (their drawn weights are then replaced by load_state_dict).
"""

import io

import torch
import torch.nn as nn

from .ch03_3 import book_inputs  # noqa: F401  (the chapter's inputs: default_inputs)


class CausalAttentionWithoutBuffers(nn.Module):
    # understanding-buffers.ipynb In [1]

    def __init__(self, d_in, d_out, context_length,
                 dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(
            attn_scores / keys.shape[-1]**0.5, dim=-1
        )
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


class CausalAttentionWithBuffer(nn.Module):
    # understanding-buffers.ipynb In [9]

    def __init__(self, d_in, d_out, context_length,
                 dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(
            attn_scores / keys.shape[-1]**0.5, dim=-1
        )
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


def save_and_load(state_dict):
    """torch.save(state_dict, "model.pth"); torch.load("model.pth"), in memory."""
    f = io.BytesIO()
    torch.save(state_dict, f)
    f.seek(0)
    return torch.load(f)


def ch03_understanding_buffers(run, ins):
    # In [2]
    run.manual_seed(None, 123)
    inputs = run.input("inputs", ins["inputs"])
    batch = torch.stack((inputs, inputs), dim=0)
    context_length = batch.shape[1]
    d_in = inputs.shape[1]
    d_out = run.setting_int("d_out", 2)
    ca_without_buffer = run.module("ca_without_buffer", CausalAttentionWithoutBuffers(d_in, d_out, context_length, 0.0))
    with run, torch.no_grad():
        context_vecs = ca_without_buffer(batch)
    run.keep("context_vecs", context_vecs)

    # In [3]: the CPU fallback; .to() moves the parameters, not the plain attribute
    device = torch.device("cpu")
    batch = batch.to(device)
    ca_without_buffer = ca_without_buffer.to(device)
    # In [4] (on the CPU it runs) and In [8]: the same forward again
    with run, torch.no_grad():
        context_vecs = ca_without_buffer(batch)
    assert torch.equal(context_vecs, run_output(run, "context_vecs"))
    # In [7]
    ca_without_buffer.mask = ca_without_buffer.mask.to(device)

    # In [10], In [11]
    ca_with_buffer = run.module("ca_with_buffer", CausalAttentionWithBuffer(d_in, d_out, context_length, 0.0))
    ca_with_buffer.to(device)
    with run, torch.no_grad():
        context_vecs = ca_with_buffer(batch)
    run.keep("context_vecs", context_vecs)

    # In [12], In [13]: the state_dicts (their tensors are the modules' own)
    assert list(ca_without_buffer.state_dict()) == ["W_query.weight", "W_key.weight", "W_value.weight"]
    assert list(ca_with_buffer.state_dict()) == ["mask", "W_query.weight", "W_key.weight", "W_value.weight"]

    # In [14]
    ca_with_buffer.mask[ca_with_buffer.mask == 1.] = 2.
    run.keep("ca_with_buffer.mask", ca_with_buffer.mask)

    # In [15]
    loaded = save_and_load(ca_with_buffer.state_dict())
    new_ca_with_buffer = run.module("new_ca_with_buffer",
                                    CausalAttentionWithBuffer(d_in, d_out, context_length, 0.0))
    result = new_ca_with_buffer.load_state_dict(loaded)
    assert not result.missing_keys and not result.unexpected_keys
    run.keep("new_ca_with_buffer.mask", new_ca_with_buffer.mask)

    # In [16]
    ca_without_buffer.mask[ca_without_buffer.mask == 1.] = 2.
    run.keep("ca_without_buffer.mask", ca_without_buffer.mask)
    loaded = save_and_load(ca_without_buffer.state_dict())
    new_ca_without_buffer = run.module("new_ca_without_buffer",
                                       CausalAttentionWithoutBuffers(d_in, d_out, context_length, 0.0))
    result = new_ca_without_buffer.load_state_dict(loaded)
    assert not result.missing_keys and not result.unexpected_keys
    run.keep("new_ca_without_buffer.mask", new_ca_without_buffer.mask)


def run_output(run, name):
    """A tensor recorded earlier in this run, as torch."""
    return torch.from_numpy(run.data[name][0])
