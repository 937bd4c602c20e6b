#!/usr/bin/python3
"""Export litattn's fixtures: what real PyTorch computes for each chapter.

Every number a litattn test expects comes from here, computed by PyTorch
running the notebooks' own code (ch03.ipynb and exercise-solutions.ipynb,
their classes copied below unchanged), never retyped and never computed by
our C code. The schema is fixtures/README.md; the chapters and their variants
are chapters/chapters.txt (read through tools/chapters.py).

    /usr/bin/python3 tools/export_fixtures.py                 # regenerate fixtures/
    /usr/bin/python3 tools/export_fixtures.py --out DIR       # write them elsewhere
    /usr/bin/python3 tools/export_fixtures.py --check         # regenerate and compare
    /usr/bin/python3 tools/export_fixtures.py --check --only sweep.h5 ch03_3_simplified_attention.book.h5
    /usr/bin/python3 tools/export_fixtures.py --regenerate DIR --depfile DIR.d   # the build's export (regen test)
    /usr/bin/python3 tools/export_fixtures.py --custom my.h5 --chapter ch03_6_2_multihead_attention \\
        --seed 7 [--seed exercise_3_3=8] [--skip K] [--tokens T --d-in D [--batch B] --inputs-seed S] \\
        [--set NAME=VALUE]...  (e.g. --set num_heads=4 --set dropout=0.1 --set exercise_3_3.tokens=16)

How a fixture is made. A chapter's function below runs the notebook's cells
in PyTorch, in the order the C chapter runs them, through a `Run`:
  - settings (d_out, num_heads, dropout, ...) come from Run.setting_*(name,
    book value), which records each as an attribute, so a fixture holds
    exactly the settings its chapter reads (lib/runtime/config.c);
  - torch.manual_seed(book seed) is Run.manual_seed(site, book seed), which
    seeds with the configuration's seed and records `seed` / `<site>.seed`;
  - a module assigned to a notebook variable is registered (Run.module): its
    parameters are recorded as drawn (role weight, `<variable>.<state_dict
    key>`); every forward() of it or of its submodules then has its locals
    recorded at return (sys.setprofile; role output, `<module path>.<local>`),
    and every mask its Dropout modules draw is re-drawn from the saved
    generator state (role random, `<dropout path>.noise[.k]`);
  - Run.keep(name, tensor) records what a cell prints or the C keeps by name.
A name recorded again replaces the earlier value, as a notebook variable does.
Tensors of more than 2^18 elements are stored as a digest (README).

Transcripts (../shared/book/) are named by their file prefix:
  000 = 000_efa2f07078f272d9.txt   seed-123 notebook, builds V1 without re-seeding
  001 = 001_0f0553d38278198f.txt   sections 3.3 and 3.4 with seed 42
  002 = 002_264268caed6f9ca7.txt   lecture notes: seed 123 / 789 code, prints nothing
  003 = 003_bf56d3c9ab88b228.txt   the book's own text of 3.4.1 (no cells)
  004 = 004_e8e336bf22e41ef3.txt   seed-123 notebook, In [15] scaling demo

Needs only torch, h5py and numpy (Debian's python3-torch and python3-h5py).
"""

import argparse
import hashlib
import importlib.util
import multiprocessing
import os
import re
import shlex
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # loading the helpers must not litter tools/ with __pycache__

import h5py
import numpy as np
import torch
import torch.nn as nn

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TOOLS_DIR)
FIXTURES_DIR = os.path.join(REPO_ROOT, "fixtures")
SCRIPT = "tools/export_fixtures.py"  # the `command` attribute of the standard fixtures

sys.path.insert(0, TOOLS_DIR)
import chapters as chapter_table  # noqa: E402  (tools/chapters.py: chapters/chapters.txt)
import fixture_diff  # noqa: E402  (tools/fixture_diff.py: comparing two sets of fixtures)

T000 = "000_efa2f07078f272d9.txt"
T001 = "001_0f0553d38278198f.txt"
T002 = "002_264268caed6f9ca7.txt"
T003 = "003_bf56d3c9ab88b228.txt"
T004 = "004_e8e336bf22e41ef3.txt"

# A tensor with more elements than this is stored as a digest (README: "Large tensors").
LARGE = 2 ** 18


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


def book_a():
    # ch03.ipynb In [37]: (b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4)
    return torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573],
                           [0.8993, 0.0390, 0.9268, 0.7388],
                           [0.7179, 0.7058, 0.9156, 0.4340]],

                          [[0.0772, 0.3565, 0.1479, 0.5331],
                           [0.4066, 0.2318, 0.4545, 0.9737],
                           [0.4606, 0.5159, 0.4220, 0.5786]]]])


# --------------------------------------------------------------------------
# The notebooks' classes, copied unchanged (comments shortened).

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


# --------------------------------------------------------------------------
# A run of one chapter: what it reads (settings, seeds) and what it records.

def bits_equal(a, b):
    """Same shape and the same float32 bit patterns (NaN payloads and zero signs included)."""
    a, b = a.detach().contiguous(), b.detach().contiguous()
    return a.shape == b.shape and torch.equal(a.view(torch.int32), b.view(torch.int32))


class Digest:
    """A tensor of more than LARGE elements as the fixture holds it: the
    SHA-256 of its float32 little-endian C-order bytes, its shape, and its
    first and last rows along the last axis."""

    def __init__(self, a):
        assert a.dtype == np.float32 and a.flags["C_CONTIGUOUS"] and a.ndim >= 2
        assert sys.byteorder == "little" and a.dtype.byteorder in "=<"
        self.shape = tuple(a.shape)
        self.sha256 = hashlib.sha256(a).hexdigest()
        rows = a.reshape(-1, a.shape[-1])
        self.first_row, self.last_row = rows[0].copy(), rows[-1].copy()


class Run:
    """One configuration of one chapter: its settings, its seeds, and the
    datasets and attributes it produces.

    settings: {attribute name: value} overriding the book's values;
    seeds: {site: seed}, site None for the chapter's main torch.manual_seed;
    skip: draws discarded after the first seeding (the continuing stream)."""

    def __init__(self, chapter, settings=None, seeds=None, skip=0):
        self.chapter = chapter
        self.settings = dict(settings or {})
        self.seeds = dict(seeds or {})
        self.skip = skip
        self.attrs = {}       # attribute name -> str or int, in the order read
        self.data = {}        # dataset name -> (float32 C-order ndarray, role)
        self.modules = {}     # id(module) -> its notebook path ("mha.heads.0")
        self.noise_calls = {}
        self._hooked = set()
        self._seeded = False
        self._unused_seeds = set(self.seeds)

    # -- datasets --
    def keep(self, name, t, role="output"):
        assert role in ("input", "weight", "random", "output"), role
        t = t.detach()
        if t.dtype != torch.float32:
            raise TypeError(f"{self.chapter}: {name!r} is {t.dtype}, not float32")
        if t.numel() > LARGE:
            # Too large to store: its digest and rows, taken now (no copy).
            self.data[name] = (Digest(t.contiguous().numpy()), role)
            return
        a = np.array(t.contiguous().numpy(), dtype=np.float32, order="C", copy=True)
        assert a.shape == tuple(t.shape)
        self.data[name] = (a, role)

    def input(self, name, t):
        self.keep(name, t, "input")
        return t

    # -- settings (lib/runtime/config.c's setting_*; every one read is an attribute) --
    def _setting(self, name, book):
        return self.settings.get(name, book)

    def setting_int(self, name, book):
        v = self._setting(name, book)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"setting {name!r}: expected an int, found {v!r}")
        self.attrs[name] = int(v)
        return v

    def setting_bool(self, name, book):
        v = self._setting(name, book)
        if v not in (0, 1, True, False):
            raise TypeError(f"setting {name!r}: expected 0 or 1, found {v!r}")
        self.attrs[name] = int(bool(v))
        return bool(v)

    def setting_float(self, name, book):
        v = self._setting(name, book)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"setting {name!r}: expected a float, found {v!r}")
        v = float(v)
        self.attrs[name] = repr(v)  # the C parses Python's repr() with strtod
        return v

    def unread_settings(self):
        return sorted(set(self.settings) - set(self.attrs))

    # -- the generator --
    def manual_seed(self, site, book_seed):
        """torch.manual_seed(book_seed) at `site` (None: the chapter's main
        seeding), with this configuration's seed; the first seeding of the
        chapter also discards `skip` draws (lib/runtime/draws.c does the same)."""
        seed = self.seeds.get(site, book_seed)
        self._unused_seeds.discard(site)
        self.attrs["seed" if site is None else f"{site}.seed"] = str(int(seed))
        torch.manual_seed(seed)
        if not self._seeded:
            self._seeded = True
            self.attrs["skip"] = int(self.skip)
            if self.skip:
                # float32 torch.rand takes exactly one 32-bit draw per element.
                torch.rand(self.skip)

    def draw_rand(self, name, shape, role):
        """torch.rand(*shape), recorded as drawn."""
        t = torch.rand(*shape)
        self.keep(name, t, role)
        return t

    # -- modules --
    def module(self, name, m):
        """`name = m` in the notebook: records m's parameters as drawn and
        names m and its submodules for what their forward() computes."""
        for key, p in m.named_parameters():
            self.keep(f"{name}.{key}", p, "weight")
        for sub, mod in m.named_modules():
            self.modules[id(mod)] = f"{name}.{sub}" if sub else name
            if isinstance(mod, nn.Dropout) and id(mod) not in self._hooked:
                self._hooked.add(id(mod))
                mod.register_forward_pre_hook(self._dropout_before)
                mod.register_forward_hook(self._dropout_after)
        return m

    def _dropout_before(self, mod, inputs):
        mod._litattn_state = torch.get_rng_state()

    def _dropout_after(self, mod, inputs, output):
        # nn.Dropout in training mode with 0 < p < 1 draws
        # noise = empty_like(x).bernoulli_(1 - p).div_(1 - p) and returns
        # x * noise; otherwise it draws nothing. Re-draw the noise from the
        # saved state with torch itself and check both facts.
        x = inputs[0]
        before, after = mod._litattn_state, torch.get_rng_state()
        del mod._litattn_state
        p = mod.p
        if not (mod.training and 0 < p < 1 and x.numel() > 0):
            assert torch.equal(before, after), f"{self.modules[id(mod)]}: drew with p={p} training={mod.training}"
            return
        torch.set_rng_state(before)
        with torch.no_grad():
            noise = torch.empty_like(x).bernoulli_(1 - p).div_(1 - p)
        assert torch.equal(torch.get_rng_state(), after), f"{self.modules[id(mod)]}: noise re-draw out of step"
        assert bits_equal(output, x * noise), f"{self.modules[id(mod)]}: output is not x * noise"
        path = self.modules[id(mod)]
        k = self.noise_calls[path] = self.noise_calls.get(path, 0) + 1
        self.keep(f"{path}.noise" if k == 1 else f"{path}.noise.{k}", noise, "random")

    def _profile(self, frame, event, arg):
        # At the return of a registered module's forward(): its float32
        # tensor locals, the arguments excluded.
        if event != "return" or frame.f_code.co_name != "forward":
            return
        loc = frame.f_locals
        path = self.modules.get(id(loc.get("self")))
        if path is None:
            return
        code = frame.f_code
        nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
        args = set(code.co_varnames[:nargs])
        for k, v in loc.items():
            if k not in args and isinstance(v, torch.Tensor) and v.dtype == torch.float32:
                self.keep(f"{path}.{k}", v)

    def __enter__(self):
        self._old_profile = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._old_profile)
        return False


# --------------------------------------------------------------------------
# The chapters: each runs its notebook cells in the order the C chapter
# (chapters/<program>.c) runs them. `ins` holds the fixture's inputs:
# "inputs" always, "batch" (a sweep's own batch), "a" (In [37]), "tensor".

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


def ch03_4_2_self_attention_v2(run, ins):
    inputs = run.input("inputs", ins["inputs"])
    d_in = inputs.shape[1]
    d_out = run.setting_int("d_out", 2)

    # In [24]
    run.manual_seed(None, 789)
    sa_v2 = run.module("sa_v2", SelfAttention_v2(d_in, d_out, qkv_bias=run.setting_bool("qkv_bias", False)))
    with run:
        run.keep("sa_v2(inputs)", sa_v2(inputs))

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
    run.keep("exercise_3_1.torch.equal(sa_v1(inputs), sa_v2(inputs))",
             torch.tensor(1.0 if torch.equal(v1_out, v2_out) else 0.0))


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
    with run:
        context_vecs = ex_mha(x)
    run.keep("exercise_3_3.context_vecs", context_vecs)


RUNNERS = {f.__name__: f for f in (
    ch03_3_simplified_attention, ch03_4_1_trainable_weights, ch03_4_1_scaling_rationale,
    ch03_4_2_self_attention_v1, ch03_4_2_self_attention_v2, ch03_5_1_causal_mask, ch03_5_2_dropout,
    ch03_5_3_causal_attention, ch03_6_1_multihead_wrapper, ch03_6_2_multihead_attention)}


def run_chapter(chapter, ins, settings=None, seeds=None, skip=0, **kw):
    run = Run(chapter, settings, seeds, skip)
    RUNNERS[chapter](run, ins, **kw)
    if run.unread_settings():
        raise SystemExit(f"export_fixtures: {chapter} reads no setting {', '.join(run.unread_settings())}")
    if run._unused_seeds:
        raise SystemExit(f"export_fixtures: {chapter} has no seeding site "
                         f"{', '.join(s or '(main)' for s in sorted(run._unused_seeds, key=str))}")
    return run


# --------------------------------------------------------------------------
# The book's variants: one fixture per (chapter, variant) of chapters.txt.
# For each: the transcript cells it mirrors, and how it differs from the
# book's own settings, seeds and inputs.

def _v(mirrors, inputs=None, settings=None, seeds=None, skip=0, **kw):
    return dict(mirrors=mirrors, inputs=inputs or {}, settings=settings or {}, seeds=seeds or {},
                skip=skip, kw=kw)


NB = "ch03.ipynb"
EX = "exercise-solutions.ipynb"

VARIANTS = {
    ("ch03_3_simplified_attention", "book"): _v(
        f"section 3.3.1-3.3.2 (self-attention without trainable weights): {NB} In [2]-In [14]; "
        f"{T001} In [6], In [10], In [14] (retrieval practice: attn_scores_1, attn_weights_1, context_vec_1); "
        "scaled_scores_2 and the two softmaxes of it are litattn's own cell (the book's remark on extreme values)"),
    ("ch03_4_1_trainable_weights", "seed123"): _v(
        f"section 3.4.1 with torch.manual_seed(123): {NB} In [15]-In [22]; {T004} In [2]-In [14], In [17] "
        f"(queries, attn_scores); {T000} In [22]-In [31]; {T003} (the book's text)"),
    ("ch03_4_1_trainable_weights", "seed42"): _v(
        f"section 3.4.1 with torch.manual_seed(42): {T001} In [48]-In [68]", seeds={None: 42}),
    ("ch03_4_1_scaling_rationale", "book"): _v(
        f"section 3.4.1, the rationale behind scaled dot-product attention: {T004} In [15] "
        "(In [16]'s unseeded NumPy variance demo is not exported)"),
    ("ch03_4_2_self_attention_v1", "seed123"): _v(
        f"section 3.4.2 SelfAttention_v1 after torch.manual_seed(123): {NB} In [23]; {T004} In [None] "
        f"(line 233); {T002} has the same code but prints nothing"),
    ("ch03_4_2_self_attention_v1", "seed123_continued"): _v(
        f"section 3.4.2 SelfAttentionV1 built without re-seeding: {T000} In [32]-In [33], after In [25]'s "
        "torch.manual_seed(123) and three torch.rand(3, 2) (18 draws)", skip=18, continued=True),
    ("ch03_4_2_self_attention_v1", "seed42"): _v(
        f"section 3.4.2 SelfAttention_v1 after torch.manual_seed(42): {T001} In [69]-In [70]", seeds={None: 42}),
    ("ch03_4_2_self_attention_v2", "seed789"): _v(
        f"section 3.4.2 SelfAttention_v2 after torch.manual_seed(789): {NB} In [24]; {T000} In [40]-In [41]; "
        f"{T004} In [None] (line 260), In [24]; Exercise 3.1: {EX} In [2]-In [7] (seed 123); "
        "exercise_3_1.torch.equal(...) is litattn's own cell"),
    ("ch03_4_2_self_attention_v2", "seed42"): _v(
        f"section 3.4.2 SelfAttention_v2 after torch.manual_seed(42): {T001} In [92]-In [95]; "
        f"Exercise 3.1 as in {EX} In [2]-In [7] (seed 123)", seeds={None: 42}),
    ("ch03_5_1_causal_mask", "seed789"): _v(
        f"section 3.5.1 (causal attention mask): {NB} In [25]-In [30], on In [24]'s SelfAttention_v2 "
        "(torch.manual_seed(789))"),
    ("ch03_5_2_dropout", "seed123"): _v(
        f"section 3.5.2 (dropout): {NB} In [31]-In [32], nn.Dropout(0.5) after torch.manual_seed(123), "
        "on In [30]'s causal attention weights (In [24]'s SelfAttention_v2, torch.manual_seed(789))"),
    ("ch03_5_3_causal_attention", "seed123"): _v(
        f"section 3.5.3 (CausalAttention): {NB} In [33]-In [34]"),
    ("ch03_6_1_multihead_wrapper", "seed123"): _v(
        f"section 3.6.1 (MultiHeadAttentionWrapper): {NB} In [35]; Exercise 3.2 ({EX}, markdown): "
        "the current CausalAttention (softmax over dim=-1) with d_out = 1"),
    ("ch03_6_1_multihead_wrapper", "recorded"): _v(
        f"section 3.6.1: {NB} In [35]; Exercise 3.2's recorded output block in {EX}: CausalAttention as it "
        "was when that output was recorded (rasbt/LLMs-from-scratch c400f77, softmax over dim=1)",
        settings={"exercise_3_2.softmax_dim": 1}),
    ("ch03_6_2_multihead_attention", "seed123"): _v(
        f"section 3.6.2 (MultiHeadAttention): {NB} In [36]-In [38]; Exercise 3.3 ({EX}, markdown): "
        "MultiHeadAttention(768, 768, 1024, 0.0, 12) after torch.manual_seed(123), count_parameters "
        "2360064; beyond the book, forward on x = torch.rand(1, 1024, 768) drawn next"),
    ("ch03_6_2_multihead_attention", "gpt2_dropout"): _v(
        f"section 3.6.2: {NB} In [36]-In [38]; Exercise 3.3 as in the seed123 variant but with dropout 0.1 "
        "in training mode: MultiHeadAttention(768, 768, 1024, 0.1, 12), forward on x = "
        "torch.rand(1, 1024, 768)", settings={"exercise_3_3.dropout": 0.1}),
}


def default_inputs(chapter):
    """The book's inputs of a chapter."""
    if chapter == "ch03_4_1_scaling_rationale":
        return {"tensor": torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5])}  # 004 In [15]
    ins = {"inputs": book_inputs()}
    if chapter == "ch03_6_2_multihead_attention":
        ins["a"] = book_a()
    return ins


def book_fixtures():
    """[(chapter, variant, spec)] in chapters.txt's order; every variant known."""
    out = []
    for c in chapter_table.table():
        if c.program not in RUNNERS:
            raise SystemExit(f"export_fixtures: chapters.txt lists {c.program}, which this exporter does not run")
        for v in c.variants:
            if (c.program, v) not in VARIANTS:
                raise SystemExit(f"export_fixtures: chapters.txt lists variant {v} of {c.program}, "
                                 "which this exporter does not make")
            out.append((c.program, v, VARIANTS[(c.program, v)]))
    listed = {(p, v) for p, v, _ in out}
    for key in VARIANTS:
        if key not in listed:
            raise SystemExit(f"export_fixtures: variant {key[1]} of {key[0]} is not in chapters.txt")
    for p in RUNNERS:
        if p not in chapter_table.programs():
            raise SystemExit(f"export_fixtures: {p} is not in chapters.txt")
    return out


def run_variant(chapter, spec):
    ins = default_inputs(chapter)
    ins.update(spec["inputs"])
    return run_chapter(chapter, ins, spec["settings"], spec["seeds"], spec["skip"], **spec["kw"])


# --------------------------------------------------------------------------
# Writing HDF5 deterministically: no timestamps anywhere (datasets with
# track_times=False, groups through a creation property list that says the
# same), so two runs give byte-identical files.

def new_file(path):
    return h5py.File(path, "w", libver="earliest")


def new_group(parent, name):
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    return h5py.Group(h5py.h5g.create(parent.id, name.encode(), gcpl=gcpl))


def set_attrs(g, attrs):
    for k, v in attrs.items():
        if isinstance(v, str):
            # A plain str (torch.__version__ is a str subclass that h5py would
            # turn into a fixed-length NumPy string): h5py then writes a
            # variable-length UTF-8 string.
            g.attrs[k] = str.__str__(v)
        elif isinstance(v, (bool, int, np.integer)):
            g.attrs[k] = np.int64(v)
        else:
            raise TypeError((k, v))


def put_dataset(g, name, a, role):
    if name in g:
        raise SystemExit(f"export_fixtures: dataset {name!r} written twice")
    # A 0-d array is stored as a SCALAR dataspace.
    ds = g.create_dataset(name, data=a, dtype="<f4", track_times=False)
    ds.attrs["role"] = role


def write_data(g, run):
    """The run's datasets into group g; a tensor of more than LARGE elements
    as its digest and its first and last rows (README: "Large tensors")."""
    samples = {}
    for name in sorted(run.data):
        a, role = run.data[name]
        if not isinstance(a, Digest):
            put_dataset(g, name, a, role)
            continue
        samples[f"{name}.sha256"] = a.sha256
        samples[f"{name}.shape"] = str(a.shape)
        samples[f"{name}.role"] = role
        put_dataset(g, f"{name}.first_row", a.first_row, "sample")
        put_dataset(g, f"{name}.last_row", a.last_row, "sample")
    set_attrs(g, samples)


_PROVENANCE = None


def provenance():
    """Attributes describing the PyTorch that computed the numbers."""
    global _PROVENANCE
    if _PROVENANCE is None:
        config = torch.__config__.show()
        m = re.search(r"CPU capability usage: (\S+)", config)
        cpu_capability = m.group(1) if m else "unknown"
        m = re.search(r"BLAS_INFO=([^,\s]+)", config)
        blas_info = m.group(1) if m else "unknown"
        # The BLAS is a shared library chosen at run time (Debian alternatives),
        # so record the one this process really mapped after a matmul.
        a = torch.ones(2, 2)
        a @ a
        libs = []
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and os.path.basename(parts[-1]).startswith("libblas.so"):
                    p = os.path.realpath(parts[-1])
                    if p not in libs:
                        libs.append(p)
        blas = f"BLAS_INFO={blas_info}; libblas.so.3 loaded: {', '.join(libs) if libs else 'none'}"
        _PROVENANCE = dict(torch_version=torch.__version__, torch_config=config,
                           blas=blas, cpu_capability=cpu_capability)
    return _PROVENANCE


def write_fixture(g, run, variant, mirrors, command, extra=None):
    """A complete fixture of one chapter into g (a file's root or a sweep group)."""
    set_attrs(g, dict(chapter=run.chapter, variant=variant, mirrors=mirrors, **provenance(), command=command))
    set_attrs(g, run.attrs)
    if extra:
        set_attrs(g, extra)
    write_data(g, run)


# --------------------------------------------------------------------------
# The sweep: every chapter beyond the book's shapes, seeds and inputs. One
# group per configuration, each a complete fixture of one chapter.

# v1 / v2 (the 77 configurations of the earlier schema, same inputs).
SWEEP_SEEDS = [0, 1, 42, 123, 789, 2**32 + 123, -1, 2**63 - 1]
SWEEP_T = [1, 2, 6, 7, 8, 9, 16, 17, 33]
SWEEP_DIN = [1, 3, 8, 17, 64]
SWEEP_DOUT = [1, 2, 4, 16]

CH_V1, CH_V2 = "ch03_4_2_self_attention_v1", "ch03_4_2_self_attention_v2"
CH_MASK, CH_DROP = "ch03_5_1_causal_mask", "ch03_5_2_dropout"
CH_CA, CH_WRAP, CH_MHA = "ch03_5_3_causal_attention", "ch03_6_1_multihead_wrapper", "ch03_6_2_multihead_attention"


def v1_v2_configs():
    """(chapter, seed, T, d_in, d_out, qkv_bias or None) in file order.

    Cyclic with pairwise different periods (8 seeds, 9 token counts, 5 input
    sizes, 4 output sizes) so every value of every axis appears several
    times in changing company, then a few hand-picked meetings of the extremes.
    """
    v1, v2 = [], []
    for i in range(48):
        v2.append((SWEEP_SEEDS[i % 8], SWEEP_T[i % 9], SWEEP_DIN[i % 5],
                   SWEEP_DOUT[(i // 3) % 4], (i // 8) % 2))
    v2 += [
        (123, 33, 64, 16, 0), (789, 33, 64, 16, 1),  # the biggest shapes meet
        (0, 1, 1, 1, 0), (2**63 - 1, 1, 1, 1, 1),  # the smallest
        (789, 6, 3, 2, 0), (42, 6, 3, 2, 1),  # the book's shapes, random inputs
        (-1, 17, 17, 16, 0), (2**32 + 123, 9, 64, 1, 1), (1, 33, 1, 16, 0), (42, 16, 64, 4, 0),
    ]
    for i in range(18):  # every token count twice
        v1.append((SWEEP_SEEDS[i % 8], SWEEP_T[(4 * i) % 9], SWEEP_DIN[i % 5],
                   SWEEP_DOUT[(i + i // 4) % 4]))
    v1 += [(123, 33, 64, 16), (123, 6, 3, 2)]  # the biggest shapes; the book's
    configs = [(CH_V1, s, t, di, do, None) for s, t, di, do in v1]
    configs += [(CH_V2, s, t, di, do, b) for s, t, di, do, b in v2]
    return configs


def _cfg(chapter, name, seeds, settings, T, d_in, inputs_seed, b=None, special=None, a=None):
    return dict(chapter=chapter, name=name, seeds=seeds, settings=settings,
                inputs=dict(T=T, d_in=d_in, inputs_seed=inputs_seed, b=b, special=special, a=a))


# Seeds of the new classes' configurations: negative, 0, >= 2^32 among them.
NEW_SEEDS = [123, 0, -1, 2**32 + 123, 42, -12345, 789, 2**40 + 7, 1, 2**63 - 1, -(2**63)]


def new_class_configs():
    """CausalAttention, the wrapper, MultiHeadAttention (and the 3.5.1/3.5.2
    steps) over batch 1-4, 1-1024 tokens, 1-12 heads, head_dim 1-128, d_in up
    to 768, dropout 0 / 0.1 / 0.5 in training mode, eval mode, qkv_bias, and
    inputs with zero rows, all-negative rows and NaN."""
    out = []
    k = [20000]

    def seed_of(i):
        return NEW_SEEDS[i % len(NEW_SEEDS)]

    def nxt():
        k[0] += 1
        return k[0]

    def bname(b):
        return "stack" if b is None else str(b)

    def suffix(special):
        return f"_{special}" if special else ""

    # ---- CausalAttention (3.5.3)
    def ca(seed, b, T, ctx, d_in, d_out, p, training, bias, special=None):
        name = (f"ca_seed{seed}_b{bname(b)}_T{T}_ctx{ctx}_din{d_in}_dout{d_out}_p{p}_train{training}"
                f"_bias{bias}{suffix(special)}")
        st = dict(d_out=d_out, context_length=ctx, dropout=p, training=training, qkv_bias=bias)
        out.append(_cfg(CH_CA, name, {None: seed}, st, T, d_in, nxt(), b, special))

    Ts = [1, 2, 3, 5, 6, 7, 8, 9, 12, 16, 17, 24, 33, 48, 64]
    for i in range(22):
        T = Ts[i % len(Ts)]
        ca(seed_of(i), [None, 1, 2, 3, 4][(i + i // 5) % 5], T, T + [0, 0, 3, 0, 1, 9][i % 6],
           [1, 3, 4, 8, 17, 32, 64][i % 7], [1, 2, 3, 4, 8, 16, 64][(3 * i) % 7], [0.0, 0.1, 0.5][i % 3],
           0 if i % 5 == 4 else 1, (i // 2) % 2)
    ca(123, None, 6, 6, 3, 2, 0.0, 1, 0, "zerorows")       # the book's shapes
    ca(-1, 3, 7, 9, 1, 3, 0.5, 1, 0, "zerorows")           # d_in 1: every product of a zero row is 0 * w
    ca(0, 2, 9, 9, 3, 4, 0.1, 1, 1, "negrows")
    ca(2**32 + 123, 2, 6, 8, 3, 2, 0.5, 1, 0, "nan")
    ca(42, 1, 5, 5, 768, 16, 0.1, 1, 1)                   # GPT-2's d_in
    ca(7, 1, 1024, 1024, 4, 4, 0.1, 1, 0)                 # the longest context

    # ---- MultiHeadAttentionWrapper (3.6.1) and Exercise 3.2
    def wrap(seed, ex_seed, b, T, ctx, d_in, d_out, heads, p, training, bias, ex_d_out, softmax_dim,
             special=None):
        name = (f"wrapper_seed{seed}_b{bname(b)}_T{T}_ctx{ctx}_din{d_in}_dout{d_out}_h{heads}_p{p}"
                f"_train{training}_bias{bias}_ex{ex_d_out}dim{softmax_dim}{suffix(special)}")
        st = {"d_out": d_out, "context_length": ctx, "dropout": p, "training": training, "qkv_bias": bias,
              "num_heads": heads, "exercise_3_2.d_out": ex_d_out, "exercise_3_2.softmax_dim": softmax_dim}
        out.append(_cfg(CH_WRAP, name, {None: seed, "exercise_3_2": ex_seed}, st, T, d_in, nxt(), b, special))

    Tw = [1, 2, 4, 6, 7, 8, 9, 13, 16, 17, 24, 32]
    for i in range(18):
        T = Tw[i % len(Tw)]
        wrap(seed_of(i + 3), seed_of(i + 7), [None, 1, 2, 3, 4][(i + i // 5) % 5], T, T + [0, 2, 0, 5][i % 4],
             [1, 3, 5, 8, 16, 32][i % 6], [1, 2, 3, 4, 8][i % 5], [1, 2, 3, 4, 5, 6, 8, 12][i % 8],
             [0.0, 0.1, 0.5][(i + 1) % 3], 0 if i % 6 == 5 else 1, (i // 3) % 2, [1, 2, 3][i % 3],
             [-1, -1, 1, -1, 0, 2, -2, -3, 1][i % 9])
    wrap(123, 123, None, 6, 6, 3, 2, 2, 0.0, 1, 0, 1, 1, "zerorows")
    wrap(-1, 0, 2, 8, 8, 3, 2, 3, 0.5, 1, 1, 1, -1, "nan")
    wrap(11, 12, 1, 520, 640, 8, 2, 2, 0.5, 1, 0, 1, -1)  # long, fewer tokens than the context

    # ---- MultiHeadAttention (3.6.2) and Exercise 3.3 (its own small module)
    def mha(seed, b, T, ctx, d_in, heads, head_dim, p, training, bias, ex, special=None, a="book"):
        d_out = heads * head_dim
        name = (f"mha_seed{seed}_b{bname(b)}_T{T}_ctx{ctx}_din{d_in}_dout{d_out}_h{heads}_p{p}"
                f"_train{training}_bias{bias}{suffix(special)}")
        ex_seed, ex_ctx, ex_tokens, ex_d_in, ex_heads, ex_hd, ex_p, ex_training, ex_bias, ex_b = ex
        st = {"d_out": d_out, "context_length": ctx, "dropout": p, "training": training, "qkv_bias": bias,
              "num_heads": heads,
              "exercise_3_3.context_length": ex_ctx, "exercise_3_3.d_in": ex_d_in,
              "exercise_3_3.d_out": ex_heads * ex_hd, "exercise_3_3.num_heads": ex_heads,
              "exercise_3_3.dropout": ex_p, "exercise_3_3.qkv_bias": ex_bias,
              "exercise_3_3.training": ex_training, "exercise_3_3.batch_size": ex_b,
              "exercise_3_3.tokens": ex_tokens}
        out.append(_cfg(CH_MHA, name, {None: seed, "exercise_3_3": ex_seed}, st, T, d_in, nxt(), b, special, a))

    Tm = [1, 2, 3, 4, 6, 7, 8, 9, 11, 16, 17, 25, 33, 64]
    for i in range(24):
        heads = [1, 2, 3, 4, 6, 8, 12][i % 7]
        T = Tm[i % len(Tm)] if heads < 8 else min(Tm[i % len(Tm)], 17)
        hd = [1, 2, 3, 4, 8, 16, 5][(i + i // 7) % 7]
        while heads * hd > 64:
            hd //= 2
        ex_ctx = [4, 8, 5, 16, 1, 9][i % 6]
        ex = (seed_of(i + 5), ex_ctx, max(1, ex_ctx - [0, 1, 3][i % 3]), [3, 8, 16, 5][i % 4],
              [1, 2, 4, 3][i % 4], [1, 2, 4, 8][(i // 2) % 4], [0.0, 0.1, 0.5][(i + 2) % 3],
              0 if i % 7 == 3 else 1, i % 2, [1, 2, 3, 4][(i // 3) % 4])
        a = "book" if i % 3 == 0 else ([1, 2, 3][i % 3], [2, 3, 4][i % 3], [1, 3, 5, 8][i % 4], [1, 4, 7][i % 3])
        mha(seed_of(i + 1), [None, 1, 2, 3, 4][(i + i // 5) % 5], T, T + [0, 1, 0, 4, 7][i % 5],
            [1, 2, 3, 8, 16, 32, 64][(2 * i) % 7], heads, hd, [0.0, 0.1, 0.5][i % 3], 0 if i % 5 == 2 else 1,
            (i // 4) % 2, ex, a=a)
    small_ex = (123, 8, 8, 8, 2, 4, 0.0, 1, 0, 1)
    mha(123, None, 6, 6, 3, 2, 1, 0.0, 1, 0, small_ex, "zerorows")
    mha(2**32 + 123, 2, 5, 7, 1, 2, 2, 0.1, 1, 0, small_ex, "zerorows")
    mha(-5, 3, 6, 6, 4, 2, 3, 0.5, 1, 1, small_ex, "negrows")
    mha(0, 2, 7, 9, 3, 3, 2, 0.5, 1, 0, small_ex, "nan")
    mha(99, 1, 16, 16, 64, 1, 128, 0.1, 1, 1, small_ex)                 # head_dim 128
    mha(123, 2, 8, 8, 768, 12, 4, 0.0, 0, 0, small_ex)                  # GPT-2's d_in, 12 heads
    mha(123, None, 6, 6, 3, 2, 1, 0.0, 1, 0,
        (123, 32, 16, 768, 12, 64, 0.1, 1, 1, 1))                       # GPT-2's module, 16 tokens
    mha(5, 1, 1024, 1024, 16, 2, 8, 0.1, 1, 0, small_ex)                # the longest context
    mha(6, None, 9, 12, 8, 4, 2, 0.0, 0, 1,
        (-7, 1024, 600, 32, 4, 8, 0.5, 1, 0, 1))                        # Exercise 3.3 at 600 of 1024 tokens

    # ---- the causal mask steps (3.5.1) and dropout (3.5.2) on other inputs
    def mask(seed, T, d_in, d_out, bias, special=None):
        name = f"mask_seed{seed}_T{T}_din{d_in}_dout{d_out}_bias{bias}{suffix(special)}"
        out.append(_cfg(CH_MASK, name, {None: seed}, dict(d_out=d_out, qkv_bias=bias), T, d_in, nxt(),
                        special=special))

    mask(789, 1, 3, 2, 0)
    mask(-1, 17, 8, 4, 1)
    mask(2**32 + 789, 9, 1, 3, 0, "zerorows")
    mask(0, 7, 3, 2, 0, "negrows")
    mask(42, 6, 3, 2, 1, "nan")

    def drop(seed, sa_seed, T, d_in, d_out, p, special=None):
        name = f"dropout_seed{seed}_sa{sa_seed}_T{T}_din{d_in}_dout{d_out}_p{p}{suffix(special)}"
        out.append(_cfg(CH_DROP, name, {None: seed, "sa_v2": sa_seed}, dict(d_out=d_out, dropout=p), T, d_in,
                        nxt(), special=special))

    drop(123, 789, 9, 3, 2, 0.1)
    drop(0, -1, 33, 8, 4, 0.5)
    drop(2**32 + 1, 7, 4, 3, 2, 0.0)
    drop(-3, 789, 6, 3, 2, 0.5, "nan")
    # p = 0.025, 0.123: the kept scale 1.0f / (float)(1 - p) differs in its
    # last bit from (float)(1.0 / (1 - p)), a scale rounded in double.
    drop(11, 789, 12, 3, 2, 0.025)
    ca(5, 2, 9, 9, 3, 4, 0.123, 1, 0)
    return out


def sweep_configs():
    out = []
    seen = set()
    for k, (chapter, seed, T, d_in, d_out, qkv_bias) in enumerate(v1_v2_configs()):
        name = f"{'v1' if chapter == CH_V1 else 'v2'}_seed{seed}_T{T}_din{d_in}_dout{d_out}"
        st = dict(d_out=d_out)
        if qkv_bias is not None:
            name += f"_bias{qkv_bias}"
            st["qkv_bias"] = qkv_bias
        if name in seen:
            continue
        seen.add(name)
        # one private input stream per configuration
        out.append(_cfg(chapter, name, {None: seed}, st, T, d_in, 10000 + k))
    # Signs of zero and NaN in v1 / v2.
    for chapter, seed, T, d_in, d_out, bias, special, inputs_seed in [
            (CH_V1, 123, 9, 1, 4, None, "zerorows", 10101), (CH_V1, 0, 7, 3, 2, None, "negrows", 10102),
            (CH_V2, 789, 9, 1, 4, 0, "zerorows", 10103), (CH_V2, 789, 9, 3, 4, 1, "zerorows", 10104),
            (CH_V2, 42, 7, 3, 2, 0, "negrows", 10105), (CH_V2, 123, 6, 3, 2, 0, "nan", 10106),
            (CH_V2, 1, 9, 17, 4, 0, "nan", 10107)]:
        name = f"{'v1' if chapter == CH_V1 else 'v2'}_seed{seed}_T{T}_din{d_in}_dout{d_out}"
        st = dict(d_out=d_out)
        if bias is not None:
            name += f"_bias{bias}"
            st["qkv_bias"] = bias
        out.append(_cfg(chapter, f"{name}_{special}", {None: seed}, st, T, d_in, inputs_seed, special=special))
    # §3.3's dot products (torch.dot, sdot) on a zero query (inputs[1]) and
    # all-negative rows: every product is -0, and +0 + -0 + ... is +0, which
    # a sum started at the first product would print as -0.
    for T, d_in, inputs_seed in [(3, 3, 10201), (6, 1, 10202), (9, 5, 10203)]:
        out.append(_cfg("ch03_3_simplified_attention", f"simple_T{T}_din{d_in}_zeroquery", {}, {}, T, d_in,
                        inputs_seed, special="zeroquery"))
    out += new_class_configs()
    names = [c["name"] for c in out]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, dup
    return out


def apply_special(x, special):
    """Rows of zeros, rows of negative values, or one NaN, in a (T, d) or
    (b, T, d) input; the rest stays uniform in [-1, 1)."""
    T = x.shape[-2]
    rows = sorted({0, T // 2, T - 1}) if T > 1 else [0]
    if special == "zerorows":
        x[..., rows[:2], :] = 0.0
    elif special == "negrows":
        x[..., rows[-2:], :] = -x[..., rows[-2:], :].abs() - 0.125
    elif special == "zeroquery":  # row 1 (the query of §3.3) zero, the others all negative
        x[...] = -x.abs() - 0.125
        x[..., 1, :] = 0.0
    elif special == "nan":
        x[..., T // 2, x.shape[-1] // 2] = float("nan")
    elif special:
        raise ValueError(special)
    return x


def sweep_inputs(spec):
    """The inputs of a configuration, from a private generator seeded with
    inputs_seed (the default generator, the weights' stream, is untouched)."""
    g = torch.Generator().manual_seed(spec["inputs_seed"])
    T, d_in, b = spec["T"], spec["d_in"], spec["b"]
    ins = {}
    if b is None:
        ins["inputs"] = apply_special(torch.rand(T, d_in, generator=g) * 2 - 1, spec["special"])
    else:
        ins["batch"] = apply_special(torch.rand(b, T, d_in, generator=g) * 2 - 1, spec["special"])
        ins["inputs"] = ins["batch"][0].clone()
    a = spec["a"]
    if a == "book":
        ins["a"] = book_a()
    elif a is not None:
        ins["a"] = torch.rand(*a, generator=g)
    return ins


def sweep_group(g, cfg, command):
    ins = sweep_inputs(cfg["inputs"])
    if cfg["chapter"] == CH_MHA and "a" not in ins:
        ins["a"] = book_a()
    run = run_chapter(cfg["chapter"], ins, cfg["settings"], cfg["seeds"])
    spec = cfg["inputs"]
    what = (f"torch.rand({spec['T']}, {spec['d_in']})" if spec["b"] is None else
            f"a batch torch.rand({spec['b']}, {spec['T']}, {spec['d_in']})")
    what += " * 2 - 1" + (f", {spec['special']}" if spec["special"] else "")
    write_fixture(g, run, "sweep", f"no transcript: {cfg['chapter']} beyond the book's sizes, seeds and "
                  f"inputs (sweep configuration {cfg['name']}; inputs {what})", command,
                  dict(inputs_seed=spec["inputs_seed"]))


def write_sweep(path):
    configs = sweep_configs()
    chapters_in = []
    for c in configs:
        if c["chapter"] not in chapters_in:
            chapters_in.append(c["chapter"])
    with new_file(path) as f:
        set_attrs(f, dict(chapter=",".join(chapters_in), variant="sweep",
                          mirrors="no transcript: the chapters beyond the book's shapes, seeds and inputs; "
                                  "one group per configuration, each a complete fixture of one chapter",
                          **provenance(), command=SCRIPT))
        for cfg in configs:
            sweep_group(new_group(f, cfg["name"]), cfg, SCRIPT)
    return len(configs)


# --------------------------------------------------------------------------
# Every file, as independent jobs (one file each), run in parallel.

HELPERS = ("kernel_cases", "printer_cases")  # tools/<stem>.py, each writing <stem>.h5


def load_helper(stem):
    """tools/<stem>.py's module, or None if that helper is not written yet."""
    path = os.path.join(TOOLS_DIR, stem + ".py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("litattn_" + stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _write_book_fixture(chapter, variant, spec):
    def write(path):
        run = run_variant(chapter, spec)
        with new_file(path) as f:
            write_fixture(f, run, variant, spec["mirrors"], SCRIPT)
    return write


def jobs():
    """{file name: function writing it to a path}, in a fixed order."""
    out = {}
    for chapter, variant, spec in book_fixtures():
        out[f"{chapter}.{variant}.h5"] = _write_book_fixture(chapter, variant, spec)
    out["sweep.h5"] = write_sweep
    for stem in HELPERS:
        out[stem + ".h5"] = (lambda s: lambda path: load_helper(s).export(path))(stem)
    return out


# Longest first, so that two workers finish together.
SLOW_FIRST = ["ch03_6_2_multihead_attention.seed123.h5", "ch03_6_2_multihead_attention.gpt2_dropout.h5",
              "sweep.h5", "kernel_cases.h5", "printer_cases.h5"]


def _job(args):
    name, out_dir = args
    torch.set_num_threads(1)
    t0 = time.time()
    path = os.path.join(out_dir, name)
    # Written beside the target, then renamed over it: a reader that has the
    # old file open keeps its copy, and an interrupted run never leaves a
    # truncated fixture behind.
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        jobs()[name](tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    nds, ngroups = fixture_diff.count_objects(path)
    return name, nds, ngroups, os.path.getsize(path), time.time() - t0


def parallel_map(fn, args, workers):
    """[fn(a) for a in args], on up to `workers` forked processes (they
    inherit torch already imported, one thread each); in this process when
    one worker is asked for or no process pool can be made here."""
    if workers > 1 and len(args) > 1:
        try:
            pool = multiprocessing.get_context("fork").Pool(min(workers, len(args)))
        except OSError as e:  # no /dev/shm for its semaphores, or no fork
            print(f"export_fixtures: no worker processes ({e}); running in one", file=sys.stderr)
        else:
            with pool:
                return pool.map(fn, args, chunksize=1)
    return [fn(a) for a in args]


def export_files(out_dir, names, workers, quiet=False):
    os.makedirs(out_dir, exist_ok=True)
    order = [n for n in SLOW_FIRST if n in names] + [n for n in names if n not in SLOW_FIRST]
    args = [(n, out_dir) for n in order]
    results = parallel_map(_job, args, workers)
    if not quiet:
        for name, nds, ngroups, size, secs in sorted(results, key=lambda r: names.index(r[0])):
            groups = f"{ngroups} groups, " if ngroups else ""
            print(f"wrote {os.path.relpath(os.path.join(out_dir, name))} ({groups}{nds} datasets, "
                  f"{size / 1024:.0f} KiB, {secs:.1f} s)")
    return [r[0] for r in results]


# --------------------------------------------------------------------------
# --check: regenerate into a temporary directory and compare (fixture_diff.py).

def check(committed_dir, only, workers):
    """Regenerates the files (all, or `only`) and compares them with committed_dir."""
    every = list(jobs())
    if only:
        names = [n if n.endswith(".h5") else n + ".h5" for n in only]
        unknown = [n for n in names if n not in every]
        if unknown:
            print(f"check: no such fixture: {', '.join(unknown)} (known: {', '.join(every)})")
            return 2
    else:
        names = every
    with tempfile.TemporaryDirectory(prefix="litattn_check_") as tmp:
        export_files(tmp, names, workers, quiet=True)
        failures = fixture_diff.compare_dirs(committed_dir, tmp, names if only else None)
    return 1 if failures else 0


# --------------------------------------------------------------------------
# --regenerate: the build's own export, which the regen test compares with
# fixtures/ (tests/meson.build). Ninja redoes it only when a file it read
# changes: the depfile names them all.

def files_read():
    """Every file this export depends on: its Python modules (torch's too),
    every shared library mapped (the BLAS among them), the chapter table, the
    helpers the workers load, and /etc/alternatives, where Debian chooses
    which libblas.so.3 is loaded."""
    paths = {sys.executable, chapter_table.TABLE_PATH, "/etc/alternatives"}
    paths.update(os.path.join(TOOLS_DIR, stem + ".py") for stem in HELPERS)
    paths.update(os.path.abspath(m.__file__) for m in list(sys.modules.values())
                 if isinstance(getattr(m, "__file__", None), str))
    with open("/proc/self/maps") as f:
        paths.update(line.split()[-1] for line in f if line.split()[-1].startswith("/"))
    return sorted(p for p in paths if os.path.exists(p))


def regenerate(out_dir, depfile, workers):
    """Every fixture into out_dir, made afresh (out_dir is replaced once all
    are written), and the depfile naming what it read, for out_dir."""
    tmp = out_dir.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    export_files(tmp, list(jobs()), workers, quiet=True)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    if depfile:
        def esc(path):
            return path.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")
        with open(depfile + ".tmp", "w") as f:
            f.write(esc(out_dir) + ": \\\n" + " \\\n".join("  " + esc(p) for p in files_read()) + "\n")
        os.replace(depfile + ".tmp", depfile)


# --------------------------------------------------------------------------
# --custom: one fixture of the same schema for parameters of your choosing.

def parse_value(text):
    """--set NAME=VALUE: an int, a float (a '.' or an exponent), or true/false."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return int(t.lower() == "true")
    try:
        return int(t, 0)
    except ValueError:
        return float(t)


def export_custom(args, argv):
    chapter = args.chapter
    if chapter not in RUNNERS:
        raise SystemExit(f"export_fixtures: --chapter must be one of {', '.join(chapter_table.programs())}")
    draws = chapter_table.get(chapter).draws
    seeds = {}
    for s in args.seed or []:
        site, _, value = s.rpartition("=")
        try:
            seeds[site or None] = int(value, 0)
        except ValueError:
            raise SystemExit(f"export_fixtures: --seed {s}: expected N or SITE=N with N an integer")
    if not draws and (seeds or args.skip):
        raise SystemExit(f"export_fixtures: {chapter} draws nothing at random: no --seed or --skip")
    if draws and None not in seeds:
        raise SystemExit(f"export_fixtures: {chapter} draws at random: give --seed N")
    if args.skip < 0:
        raise SystemExit("export_fixtures: --skip must not be negative")
    settings = {}
    for s in args.set or []:
        name, eq, value = s.partition("=")
        if not eq or not name:
            raise SystemExit(f"export_fixtures: --set {s}: expected NAME=VALUE")
        try:
            settings[name] = parse_value(value)
        except ValueError:
            raise SystemExit(f"export_fixtures: --set {s}: expected a number, true or false")
    if args.d_out is not None:
        settings["d_out"] = args.d_out
    if args.qkv_bias:
        settings["qkv_bias"] = 1
    if (args.tokens is None) != (args.d_in is None):
        raise SystemExit("export_fixtures: give --tokens and --d-in together (or neither for the book's inputs)")
    if args.batch is not None and args.tokens is None:
        raise SystemExit("export_fixtures: --batch needs --tokens and --d-in")
    ins = default_inputs(chapter)
    extra = {}
    what = "the book's inputs"
    if args.tokens is not None:
        if chapter == "ch03_4_1_scaling_rationale":
            raise SystemExit(f"export_fixtures: {chapter} reads no inputs of tokens")
        if args.tokens < 1 or args.d_in < 1 or (args.batch is not None and args.batch < 1):
            raise SystemExit("export_fixtures: --tokens, --d-in and --batch must be positive")
        if args.batch is not None and chapter not in (CH_CA, CH_WRAP, CH_MHA):
            raise SystemExit(f"export_fixtures: {chapter} reads no batch")
        spec = dict(T=args.tokens, d_in=args.d_in, inputs_seed=args.inputs_seed, b=args.batch, special=None,
                    a=None)
        ins.update(sweep_inputs(spec))
        extra["inputs_seed"] = args.inputs_seed
        what = (f"torch.rand({args.tokens}, {args.d_in}" if args.batch is None else
                f"a batch torch.rand({args.batch}, {args.tokens}, {args.d_in}") + \
            f", generator=manual_seed({args.inputs_seed})) * 2 - 1"
    if chapter in ("ch03_3_simplified_attention", "ch03_4_1_trainable_weights") and ins["inputs"].shape[0] < 2:
        raise SystemExit(f"export_fixtures: {chapter} uses inputs[1]: --tokens must be at least 2")
    command = " ".join([SCRIPT] + [shlex.quote(a) for a in argv])
    try:
        run = run_chapter(chapter, ins, settings, seeds, args.skip)
    except SystemExit:
        raise
    except Exception as e:  # what torch (or the notebook's assert) says of these settings
        raise SystemExit(f"export_fixtures: {chapter} with these settings fails in PyTorch: "
                         f"{type(e).__name__}: {e}")
    tmp = f"{args.custom}.{os.getpid()}.tmp"
    try:
        with new_file(tmp) as f:
            write_fixture(f, run, "custom", f"no transcript: {chapter} on {what}", command, extra)
        os.replace(tmp, args.custom)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print(f"wrote {args.custom} ({fixture_diff.count_objects(args.custom)[0]} datasets)")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", metavar="DIR", help="write the fixtures into DIR instead of fixtures/")
    p.add_argument("--check", action="store_true",
                   help="regenerate into a temporary directory and compare with fixtures/ (or --out DIR)")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="with --check or an export: only these files (e.g. sweep.h5; the .h5 may be left out)")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per CPU); the bits do not depend on it")
    p.add_argument("--list", action="store_true", help="list the files an export writes, and exit")
    p.add_argument("--regenerate", metavar="DIR",
                   help="the build's export (tests/meson.build): every fixture into DIR, made afresh")
    p.add_argument("--depfile", metavar="FILE",
                   help="with --regenerate: a make depfile naming every file the export read")
    c = p.add_argument_group("a custom fixture (variant \"custom\")")
    c.add_argument("--custom", metavar="OUT.h5", help="write one custom fixture to OUT.h5")
    c.add_argument("--chapter", help="the chapter program (chapters/chapters.txt)")
    c.add_argument("--seed", action="append", metavar="[SITE=]N",
                   help="torch.manual_seed argument (any Python int) of the chapter's main seeding, or of "
                        "SITE (exercise_3_1, exercise_3_2, exercise_3_3, sa_v2); repeatable")
    c.add_argument("--skip", type=int, default=0, help="32-bit draws to consume after the first seeding (default 0)")
    c.add_argument("--tokens", type=int, help="T: random inputs of T tokens (default: the book's 6)")
    c.add_argument("--d-in", type=int, help="d_in of the random inputs")
    c.add_argument("--batch", type=int, help="b: a random batch (b, T, d_in) instead of stacking inputs twice")
    c.add_argument("--inputs-seed", type=int, default=0, help="seed of the random inputs' generator (default 0)")
    c.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a setting other than the book's (d_out, num_heads, context_length, dropout, training, "
                        "qkv_bias, exercise_3_3.tokens, ...); repeatable")
    c.add_argument("--d-out", type=int, help="the same as --set d_out=N")
    c.add_argument("--qkv-bias", action="store_true", help="the same as --set qkv_bias=1")
    args = p.parse_args(argv)

    # One thread: this rules out any thread-count dependence of the bits.
    torch.set_num_threads(1)

    if args.list:
        print("\n".join(jobs()))
        return 0
    if args.custom:
        if args.check or args.out or args.only:
            p.error("--custom does not combine with --check, --out or --only")
        if not args.chapter:
            p.error("--custom needs --chapter")
        export_custom(args, argv)
        return 0
    if args.chapter or args.seed or args.tokens is not None or args.d_in is not None or args.set \
            or args.d_out is not None or args.qkv_bias or args.batch is not None:
        p.error("--chapter/--seed/--tokens/--d-in/--batch/--set/--d-out/--qkv-bias need --custom OUT.h5")
    workers = max(1, args.jobs)
    if args.regenerate:
        if args.check or args.out or args.only:
            p.error("--regenerate does not combine with --check, --out or --only")
        regenerate(args.regenerate, args.depfile, workers)
        return 0
    if args.depfile:
        p.error("--depfile needs --regenerate DIR")
    out_dir = os.path.abspath(args.out) if args.out else FIXTURES_DIR
    t0 = time.time()
    if args.check:
        rc = check(out_dir, args.only, workers)
        print(f"check took {time.time() - t0:.1f} s")
        return rc
    names = list(jobs())
    if args.only:
        wanted = [n if n.endswith(".h5") else n + ".h5" for n in args.only]
        bad = [n for n in wanted if n not in names]
        if bad:
            p.error(f"no such fixture: {', '.join(bad)}")
        names = [n for n in names if n in wanted]
    files = export_files(out_dir, names, workers)
    print(f"{len(files)} files in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
