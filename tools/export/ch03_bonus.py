"""ch03_bonus.py: the bonus notebook mha-implementations.ipynb, "Comparing
Efficient Multi-Head Attention Implementations": the input, then every class
made in the notebook's order from one torch.manual_seed(123) stream, the
forward of each one torch 1.13 runs, and after the forward of 1-4, 7 and 8
litattn's gradient cell (run.backward_sum: loss = out.sum(); loss.backward()).

The classes are copied from the notebook unchanged (comments shortened).
Sections 5 and 6 call nn.functional.scaled_dot_product_attention, which torch
1.13 lacks (it arrived in 2.0): their modules are made, since their
nn.Linear layers draw, but not run. Section 9's FlexAttention is guarded by
torch >= 2.5 and CUDA: it is neither made nor run.

The parameters are recorded as digests (the chapter draws them itself in
fixture mode too, from the same stream), the embeddings and the outputs
whole up to run.LARGE elements, as digests above; the gradients as digests.
"""

import math

import torch
import torch.nn as nn

# --- mha-implementations.ipynb, section 1 ---------------------------------------------------

class CausalAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)  # New
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))  # New

    def forward(self, x):
        b, num_tokens, d_in = x.shape  # New batch dimension b
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)  # Changed transpose
        attn_scores.masked_fill_(  # New, _ ops are in-place
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)  # New

        context_vec = attn_weights @ values
        return context_vec


class Ch03_MHA_Wrapper(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)]
        )
        self.out_proj = nn.Linear(d_out*num_heads, d_out*num_heads)

    def forward(self, x):
        context_vec = torch.cat([head(x) for head in self.heads], dim=-1)
        return self.out_proj(context_vec)


# --- section 2 ----------------------------------------------------------------------------

class Ch03_MHA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)

        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]

        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)

        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)

        return context_vec


# --- section 3 ----------------------------------------------------------------------------

class MultiHeadAttentionCombinedQKV(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()

        assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

        self.num_heads = num_heads
        self.context_length = context_length
        self.head_dim = d_out // num_heads

        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        batch_size, num_tokens, embed_dim = x.shape

        qkv = self.qkv(x)
        qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        queries, keys, values = qkv.unbind(0)

        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores.masked_fill(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf
        )

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        context_vec = context_vec.transpose(1, 2)
        context_vec = context_vec.contiguous().view(batch_size, num_tokens, embed_dim)

        context_vec = self.proj(context_vec)

        return context_vec


# --- section 4 ----------------------------------------------------------------------------

class MHAEinsum(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Parameter(torch.randn(d_in, d_out))
        self.W_key = nn.Parameter(torch.randn(d_in, d_out))
        self.W_value = nn.Parameter(torch.randn(d_in, d_out))

        if qkv_bias:
            self.bias_q = nn.Parameter(torch.zeros(d_out))
            self.bias_k = nn.Parameter(torch.zeros(d_out))
            self.bias_v = nn.Parameter(torch.zeros(d_out))
        else:
            self.register_parameter("bias_q", None)
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)

        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.W_query, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.W_key, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.W_value, a=math.sqrt(5))
        if self.bias_q is not None:
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.W_query)
            bound = 1 / math.sqrt(fan_in)
            nn.init.uniform_(self.bias_q, -bound, bound)
            nn.init.uniform_(self.bias_k, -bound, bound)
            nn.init.uniform_(self.bias_v, -bound, bound)

    def forward(self, x):
        b, n, _ = x.shape

        Q = torch.einsum("bnd,do->bno", x, self.W_query)
        K = torch.einsum("bnd,do->bno", x, self.W_key)
        V = torch.einsum("bnd,do->bno", x, self.W_value)

        if self.bias_q is not None:
            Q += self.bias_q
            K += self.bias_k
            V += self.bias_v

        Q = Q.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        K = K.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        V = V.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

        scores = torch.einsum("bhnd,bhmd->bhnm", Q, K) / (self.head_dim ** 0.5)

        mask = self.mask[:n, :n]
        scores = scores.masked_fill(mask.bool(), -torch.inf)

        attn_weights = torch.softmax(scores, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = torch.einsum("bhnm,bhmd->bhnd", attn_weights, V)

        context_vec = context_vec.transpose(1, 2).reshape(b, n, self.d_out)
        context_vec = self.out_proj(context_vec)

        return context_vec


# --- sections 5 and 6: made (they draw), not run: torch 1.13 has no scaled_dot_product_attention

class MHAPyTorchScaledDotProduct(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()

        assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

        self.num_heads = num_heads
        self.context_length = context_length
        self.head_dim = d_out // num_heads
        self.d_out = d_out

        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = dropout


class MHAPyTorchSDPAWithoutFlash(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()

        assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

        self.num_heads = num_heads
        self.context_length = context_length
        self.head_dim = d_out // num_heads
        self.d_out = d_out

        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = dropout
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())


# --- sections 7 and 8 ---------------------------------------------------------------------

class MHAPyTorchClass(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, need_weights=True):
        super().__init__()

        self.context_length = context_length
        self.multihead_attn = nn.MultiheadAttention(
            embed_dim=d_out,
            num_heads=num_heads,
            dropout=dropout,
            bias=qkv_bias,
            add_bias_kv=qkv_bias,
            batch_first=True,
        )

        self.need_weights = need_weights
        self.proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        batch_size, num_tokens, _ = x.shape

        if self.context_length >= num_tokens:
            attn_mask = self.mask[:num_tokens, :num_tokens]
        else:
            attn_mask = self.mask[:self.context_length, :self.context_length]

        attn_output, _ = self.multihead_attn(
            x, x, x, attn_mask=attn_mask, need_weights=self.need_weights
        )

        output = self.proj(attn_output)

        return output


# --- the chapter --------------------------------------------------------------------------

def ch03_bonus_mha_implementations(run, ins):
    # In [1]
    run.manual_seed(None, 123)
    batch_size = run.setting_int("batch_size", 8)
    context_len = run.setting_int("context_len", 1024)
    embed_dim = run.setting_int("embed_dim", 768)
    num_heads = run.setting_int("num_heads", 12)
    embeddings = torch.randn((batch_size, context_len, embed_dim))
    run.keep("embeddings", embeddings, "random")

    def made(name, m):
        return run.module(name, m, digest_weights=True)

    def forward(name, m):
        out = m(embeddings)  # out = name(embeddings), as the notebook runs it
        run.keep(f"{name}(embeddings)", out)
        return out

    # In [3]-In [6]
    mha_ch03_wrapper = made("mha_ch03_wrapper", Ch03_MHA_Wrapper(
        d_in=embed_dim, d_out=embed_dim // num_heads, context_length=context_len, dropout=0.0,
        num_heads=num_heads, qkv_bias=False))
    forward("mha_ch03_wrapper", mha_ch03_wrapper)
    # litattn's cell: embeddings.requires_grad_(); loss = mha_ch03_wrapper(embeddings).sum(); loss.backward()
    run.backward_sum("mha_ch03_wrapper", mha_ch03_wrapper, embeddings, "embeddings (mha_ch03_wrapper)", digest=True)
    mha_ch03 = made("mha_ch03", Ch03_MHA(
        d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0, num_heads=num_heads,
        qkv_bias=False))
    out = forward("mha_ch03", mha_ch03)
    # litattn's cell, the same for chapter 3's class
    run.backward_sum("mha_ch03", mha_ch03, embeddings, "embeddings (mha_ch03)", digest=True)
    mha_combined_qkv = made("mha_combined_qkv", MultiHeadAttentionCombinedQKV(
        d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0, num_heads=num_heads,
        qkv_bias=False))
    forward("mha_combined_qkv", mha_combined_qkv)
    run.backward_sum("mha_combined_qkv", mha_combined_qkv, embeddings, "embeddings (mha_combined_qkv)", digest=True)
    mha_einsum = made("mha_einsum", MHAEinsum(
        d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0, num_heads=num_heads,
        qkv_bias=False))
    forward("mha_einsum", mha_einsum)
    run.backward_sum("mha_einsum", mha_einsum, embeddings, "embeddings (mha_einsum)", digest=True)
    # sections 5 and 6: made, since they draw; torch 1.13 cannot run them. The
    # C runs the exact fused attention in their place, chapter 3's order: what
    # MultiHeadAttentionCombinedQKV computes on the same parameters.
    for name, cls in (("mha_pytorch_scaled", MHAPyTorchScaledDotProduct),
                      ("mha_pytorch_sdpa_no_flash", MHAPyTorchSDPAWithoutFlash)):
        m = made(name, cls(d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0,
                           num_heads=num_heads, qkv_bias=False))
        with torch.random.fork_rng():  # the twin's own draws leave the stream as it was
            twin = MultiHeadAttentionCombinedQKV(d_in=embed_dim, d_out=embed_dim, context_length=context_len,
                                                 dropout=0.0, num_heads=num_heads, qkv_bias=False)
        twin.load_state_dict({k: v for k, v in m.state_dict().items() if k != "mask"}, strict=False)
        forward(name, twin)
        if name == "mha_pytorch_scaled":
            # litattn's cell: mha_ch03 with its attention fused; torch's bits are the materialised ones
            run.keep("mha_ch03(embeddings), fused", out)
    # sections 7 and 8
    mha_pytorch_class_default = made("mha_pytorch_class_default", MHAPyTorchClass(
        d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0, num_heads=num_heads,
        qkv_bias=False))
    forward("mha_pytorch_class_default", mha_pytorch_class_default)
    run.backward_sum("mha_pytorch_class_default", mha_pytorch_class_default, embeddings,
                     "embeddings (mha_pytorch_class_default)", digest=True)
    mha_pytorch_class_noweights = made("mha_pytorch_class_noweights", MHAPyTorchClass(
        d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0, num_heads=num_heads,
        qkv_bias=False, need_weights=False))
    forward("mha_pytorch_class_noweights", mha_pytorch_class_noweights)
    run.backward_sum("mha_pytorch_class_noweights", mha_pytorch_class_noweights, embeddings,
                     "embeddings (mha_pytorch_class_noweights)", digest=True)
    # section 9: guarded by torch >= 2.5 and CUDA; nothing is made
    return run
