#!/usr/bin/python3
"""Export litattn's fixtures: what real PyTorch computes for each chapter.

Every number a litattn test expects comes from here, computed by PyTorch with
the notebook's own expressions (same ops, so the same float32 bits), never
retyped and never computed by our C code. The schema is fixtures/README.md.

    /usr/bin/python3 tools/export_fixtures.py            # regenerate fixtures/
    /usr/bin/python3 tools/export_fixtures.py --out DIR  # write them elsewhere
    /usr/bin/python3 tools/export_fixtures.py --check    # regenerate and compare
    /usr/bin/python3 tools/export_fixtures.py --custom my.h5 \\
        --chapter ch03_4_2_self_attention_v2 --seed 7 [--skip K] \\
        [--tokens T --d-in D --inputs-seed S] [--d-out N] [--qkv-bias]

Transcripts (../shared/book/) are named by their file prefix below:
  000 = 000_efa2f07078f272d9.txt   seed-123 notebook, builds V1 without re-seeding
  001 = 001_0f0553d38278198f.txt   sections 3.3 and 3.4 with seed 42
  002 = 002_264268caed6f9ca7.txt   lecture notes: seed 123 / 789 code, prints nothing
  003 = 003_bf56d3c9ab88b228.txt   the book's own text of 3.4.1 (no cells)
  004 = 004_e8e336bf22e41ef3.txt   seed-123 notebook, In [15] scaling demo

Needs only torch, h5py and numpy (Debian's python3-torch and python3-h5py).
"""

import argparse
import importlib.util
import os
import re
import shlex
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

T000 = "000_efa2f07078f272d9.txt"
T001 = "001_0f0553d38278198f.txt"
T002 = "002_264268caed6f9ca7.txt"
T003 = "003_bf56d3c9ab88b228.txt"
T004 = "004_e8e336bf22e41ef3.txt"

CH_SIMPLE = "ch03_3_simplified_attention"
CH_TRAIN = "ch03_4_1_trainable_weights"
CH_SCALE = "ch03_4_1_scaling_rationale"
CH_V1 = "ch03_4_2_self_attention_v1"
CH_V2 = "ch03_4_2_self_attention_v2"


def book_inputs():
    # In [6] (001), In [22] (000), In [2] (004): "Your journey starts with one step"
    return torch.tensor(
        [[0.43, 0.15, 0.89],  # Your     (x^1)
         [0.55, 0.87, 0.66],  # journey  (x^2)
         [0.57, 0.85, 0.64],  # starts   (x^3)
         [0.22, 0.58, 0.33],  # with     (x^4)
         [0.77, 0.25, 0.10],  # one      (x^5)
         [0.05, 0.80, 0.55]]  # step     (x^6)
    )


def random_inputs(tokens, d_in, inputs_seed):
    # Uniform in [-1, 1) so the sweep sees negative values too. A private
    # generator: it leaves the default one (the weights' stream) untouched.
    g = torch.Generator().manual_seed(inputs_seed)
    return torch.rand(tokens, d_in, generator=g) * 2 - 1


def seed_and_skip(seed, skip):
    torch.manual_seed(seed)
    if skip:
        # float32 torch.rand takes exactly one 32-bit draw per element
        # (reference doc section 2), so this consumes `skip` draws.
        torch.rand(skip)


# --------------------------------------------------------------------------
# The notebooks' classes, with their forward's expressions unchanged. The one
# addition, `self.trace`, keeps forward's locals so they can be exported.

class SelfAttention_v1(nn.Module):
    # In [69] (001), In [None] at line 209 (004); 000 In [32] spells it SelfAttentionV1
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        context_vec = attn_weights @ values
        self.trace = dict(keys=keys, queries=queries, values=values, attn_scores=attn_scores,
                          attn_weights=attn_weights, context_vec=context_vec)
        return context_vec


class SelfAttention_v2(nn.Module):
    # In [92] (001), In [None] at line 260 (004); 000 In [40] spells it SelfAttentionV2
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        context_vec = attn_weights @ values
        self.trace = dict(keys=keys, queries=queries, values=values, attn_scores=attn_scores,
                          attn_weights=attn_weights, context_vec=context_vec)
        return context_vec


TRACE_ORDER = ["keys", "queries", "values", "attn_scores", "attn_weights", "context_vec"]


# --------------------------------------------------------------------------
# Writing HDF5 deterministically: no timestamps anywhere (datasets with
# track_times=False, groups through a creation property list that says the
# same), so two runs give byte-identical files.

class Out:
    """One HDF5 group (or file root) that tensors are written into."""

    def __init__(self, group):
        self.g = group

    def put(self, name, tensor, role):
        assert role in ("input", "weight", "output"), role
        if name in self.g:
            raise SystemExit(f"export_fixtures: dataset {name!r} written twice")
        t = tensor.detach()
        assert t.dtype == torch.float32, (name, t.dtype)
        # A contiguous float32 copy shaped exactly like the tensor; a 0-d
        # tensor becomes a 0-d array, which h5py stores as a SCALAR dataspace.
        a = np.array(t.contiguous().numpy(), dtype=np.float32, order="C", copy=True)
        assert a.shape == tuple(t.shape)
        ds = self.g.create_dataset(name, data=a, track_times=False)
        ds.attrs["role"] = role

    def attrs(self, **kv):
        for k, v in kv.items():
            if isinstance(v, str):
                # A plain str (torch.__version__ is a str subclass that h5py
                # would turn into a fixed-length NumPy string): h5py then
                # writes a variable-length UTF-8 string.
                self.g.attrs[k] = str.__str__(v)
            elif isinstance(v, (bool, int, np.integer)):
                self.g.attrs[k] = np.int64(v)
            else:
                raise TypeError((k, v))

    def group(self, name):
        gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
        gcpl.set_obj_track_times(False)
        gid = h5py.h5g.create(self.g.id, name.encode(), gcpl=gcpl)
        return Out(h5py.Group(gid))


def new_file(path):
    return h5py.File(path, "w", libver="earliest")


_PROVENANCE = None


def provenance():
    """Root attributes describing the PyTorch that computed the numbers."""
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


def root_attrs(out, chapter, variant, mirrors, command, **extra):
    out.attrs(chapter=chapter, variant=variant, mirrors=mirrors, **provenance(),
              command=command, **extra)


# --------------------------------------------------------------------------
# Chapter 1: section 3.3, simplified self-attention (no trainable weights).

def softmax_naive(x):
    # The book's naive softmax (3.3.1); 001 skips it and goes to torch.softmax.
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def export_simplified_attention(out, inputs):
    out.put("inputs", inputs, "input")  # In [6] (001)

    # In [7] (001): scores of the query "journey" against every token
    query = inputs[1]
    attn_scores_2 = torch.empty(inputs.shape[0])
    for i, x_i in enumerate(inputs):
        attn_scores_2[i] = torch.dot(query, x_i)  # the book writes dot(x_i, query): same products, same order
    out.put("attn_scores_2", attn_scores_2, "output")

    # In [8] (001): normalise by the sum
    attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
    out.put("attn_weights_2_tmp", attn_weights_2_tmp, "output")
    out.put("attn_weights_2_tmp.sum()", attn_weights_2_tmp.sum(), "output")

    # Book 3.3.1: attn_weights_2_naive = softmax_naive(attn_scores_2)
    attn_weights_2_naive = softmax_naive(attn_scores_2)
    out.put("attn_weights_2_naive", attn_weights_2_naive, "output")
    out.put("attn_weights_2_naive.sum()", attn_weights_2_naive.sum(), "output")

    # In [9] (001): attention_weights_2 = torch.softmax(attention_scores_2, dim=0)
    attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
    out.put("attn_weights_2", attn_weights_2, "output")
    out.put("attn_weights_2.sum()", attn_weights_2.sum(), "output")

    # Book 3.3.1's remark that softmax "handles extreme values better", shown:
    # scaled up, the scores overflow exp() in float32 (past about 88.7), so the
    # naive softmax divides inf by inf; torch.softmax subtracts the maximum first.
    scaled_scores_2 = attn_scores_2 * 100
    out.put("scaled_scores_2", scaled_scores_2, "output")
    out.put("softmax_naive(scaled_scores_2)", softmax_naive(scaled_scores_2), "output")
    out.put("torch.softmax(scaled_scores_2, dim=0)", torch.softmax(scaled_scores_2, dim=0), "output")

    # In [10] (001): context_vec_2 += attention_weights_2[i] * x_i
    query = inputs[1]
    context_vec_2 = torch.zeros(query.shape)
    for i, x_i in enumerate(inputs):
        context_vec_2 += attn_weights_2[i] * x_i
    out.put("context_vec_2", context_vec_2, "output")

    # In [14] (001): retrieval practice with the query "Your"
    query = inputs[0]
    attn_scores_1 = torch.zeros(inputs.shape[0])
    for i, x_i in enumerate(inputs):
        attn_scores_1[i] = torch.dot(query, x_i)
    attn_weights_1 = torch.softmax(attn_scores_1, dim=0)
    context_vec_1 = torch.zeros(query.shape)
    for i, x_i in enumerate(inputs):
        context_vec_1 += attn_weights_1[i] * x_i
    out.put("attn_scores_1", attn_scores_1, "output")
    out.put("attn_weights_1", attn_weights_1, "output")
    out.put("context_vec_1", context_vec_1, "output")

    # In [20] (001): attn_scores = inputs @ inputs.T  (In [17]'s double loop prints the same)
    attn_scores = inputs @ inputs.T
    out.put("attn_scores", attn_scores, "output")
    # In [29] (001)
    attn_weights = torch.softmax(attn_scores, dim=-1)
    out.put("attn_weights", attn_weights, "output")
    # Book 3.3.2: print("All row sums:", attn_weights.sum(dim=-1))
    out.put("attn_weights.sum(dim=-1)", attn_weights.sum(dim=-1), "output")
    # In [32] (001)
    context_vecs = attn_weights @ inputs
    out.put("context_vecs", context_vecs, "output")


# --------------------------------------------------------------------------
# Chapter 2: section 3.4.1, trainable weights step by step.

def export_trainable_weights(out, inputs, seed, skip, d_out):
    out.put("inputs", inputs, "input")
    # In [24] (000), In [4] (004), In [48] (001)
    x_2 = inputs[1]
    d_in = inputs.shape[1]

    # In [25] (000), In [5] (004), In [49] (001)
    seed_and_skip(seed, skip)
    W_query = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    W_key = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    W_value = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    out.put("W_query", W_query, "weight")  # In [6] (004)
    out.put("W_key", W_key, "weight")      # In [7] (004)
    out.put("W_value", W_value, "weight")  # In [8] (004)

    # In [9] (004), In [26] (000), In [99] (001)
    query_2 = x_2 @ W_query
    key_2 = x_2 @ W_key
    value_2 = x_2 @ W_value
    out.put("query_2", query_2, "output")
    out.put("key_2", key_2, "output")
    out.put("value_2", value_2, "output")

    # In [10] (004), In [27] (000), In [53] (001)
    queries = inputs @ W_query
    keys = inputs @ W_key
    values = inputs @ W_value
    out.put("queries", queries, "output")
    out.put("keys", keys, "output")
    out.put("values", values, "output")

    # In [11] (004), In [28] (000), In [54] (001)
    keys_2 = keys[1]
    attn_score_22 = query_2.dot(keys_2)
    out.put("attn_score_22", attn_score_22, "output")

    # In [12] (004), In [29] (000), In [55] (001)
    attn_scores_2 = query_2 @ keys.T
    out.put("attn_scores_2", attn_scores_2, "output")

    # In [13] (004)
    attn_scores = queries @ keys.T
    out.put("attn_scores", attn_scores, "output")

    # In [14] (004), In [30] (000), In [57] (001)
    d_k = keys.shape[-1]
    attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
    out.put("attn_weights_2", attn_weights_2, "output")

    # In [17] (004), In [31] (000), In [68] (001)
    context_vec_2 = attn_weights_2 @ values
    out.put("context_vec_2", context_vec_2, "output")


# --------------------------------------------------------------------------
# Chapter 3: the scaling demo of 004 In [15].

def export_scaling_rationale(out):
    # In [15] (004)
    tensor = torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5])
    out.put("tensor", tensor, "input")
    softmax_result = torch.softmax(tensor, dim=-1)
    out.put("softmax_result", softmax_result, "output")
    scaled_tensor = tensor * 8
    out.put("scaled_tensor", scaled_tensor, "output")
    softmax_scaled_result = torch.softmax(scaled_tensor, dim=-1)
    out.put("softmax_scaled_result", softmax_scaled_result, "output")
    # In [16] (004), the variance demo, draws from NumPy's unseeded global
    # generator: not reproducible, so not exported.


# --------------------------------------------------------------------------
# Chapters 4 and 5: section 3.4.2, the compact classes.

def export_v1(out, inputs, seed, skip, d_out, continued=False):
    out.put("inputs", inputs, "input")
    d_in = inputs.shape[1]
    if continued:
        # 000 In [25]: torch.manual_seed(123) and three torch.rand(d_in, d_out)
        # for the step-by-step matrices; In [33] then builds SelfAttentionV1
        # without re-seeding, so its weights continue the stream.
        assert skip == 3 * d_in * d_out
        torch.manual_seed(seed)
        for _ in range(3):
            torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    else:
        # In [70] (001), In [None] at line 233 (004): torch.manual_seed(...)
        seed_and_skip(seed, skip)
    sa_v1 = SelfAttention_v1(d_in, d_out)
    out.put("W_query", sa_v1.W_query, "weight")
    out.put("W_key", sa_v1.W_key, "weight")
    out.put("W_value", sa_v1.W_value, "weight")
    sa_v1(inputs)
    for name in TRACE_ORDER:
        out.put(name, sa_v1.trace[name], "output")


def export_v2(out, inputs, seed, skip, d_out, qkv_bias):
    out.put("inputs", inputs, "input")
    d_in = inputs.shape[1]
    # In [41] (000), In [24] (004), In [95] (001): torch.manual_seed(...);
    # SelfAttention_v2(d_in, d_out) draws W_query, W_key, W_value in that
    # order, each Linear its weight then its bias.
    seed_and_skip(seed, skip)
    sa_v2 = SelfAttention_v2(d_in, d_out, qkv_bias=bool(qkv_bias))
    for lin in ("W_query", "W_key", "W_value"):
        layer = getattr(sa_v2, lin)
        out.put(f"{lin}.weight", layer.weight, "weight")
        if qkv_bias:
            out.put(f"{lin}.bias", layer.bias, "weight")
    sa_v2(inputs)
    for name in TRACE_ORDER:
        out.put(name, sa_v2.trace[name], "output")

    if not qkv_bias:
        # Exercise 3.1 (the commented lines of 001 In [95], reversed as the
        # book's solution does it): V1 given V2's weights gives V2's output.
        sa_v1 = SelfAttention_v1(d_in, d_out)  # its own draws are replaced below
        sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)
        sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)
        sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)
        out.put("sa_v1(inputs)", sa_v1(inputs), "output")


# --------------------------------------------------------------------------
# The fixture list: (file stem, function writing it).

def book_fixtures():
    """The fixtures mirroring the transcripts, as (chapter, variant, mirrors, attrs, body)."""
    B = book_inputs
    return [
        (CH_SIMPLE, "book",
         f"section 3.3.1-3.3.2 (simplified self-attention): {T001} In [6]-In [32]. "
         "attn_weights_2_naive is the book's softmax_naive(attn_scores_2), which 001 does not print",
         {}, lambda o: export_simplified_attention(o, B())),
        (CH_TRAIN, "seed123",
         f"section 3.4.1 with torch.manual_seed(123): {T000} In [22]-In [31]; {T003} (the book's text, "
         f"no cells); {T004} In [2]-In [14], In [17]; {T002} has the same code but prints nothing",
         dict(seed="123", skip=0, d_out=2),
         lambda o: export_trainable_weights(o, B(), 123, 0, 2)),
        (CH_TRAIN, "seed42",
         f"section 3.4.1 with torch.manual_seed(42): {T001} In [48]-In [68]",
         dict(seed="42", skip=0, d_out=2),
         lambda o: export_trainable_weights(o, B(), 42, 0, 2)),
        (CH_SCALE, "book",
         f"section 3.4.1, the rationale behind scaled-dot product attention: {T004} In [15] "
         "(In [16]'s unseeded NumPy variance demo is not exported)",
         {}, export_scaling_rationale),
        (CH_V1, "seed123",
         f"section 3.4.2 SelfAttention_v1 after torch.manual_seed(123): {T004} In [None] (line 233); "
         f"{T002} has the same code but prints nothing",
         dict(seed="123", skip=0, d_out=2),
         lambda o: export_v1(o, B(), 123, 0, 2)),
        (CH_V1, "seed123_continued",
         f"section 3.4.2 SelfAttentionV1 built without re-seeding: {T000} In [32]-In [33], after "
         "In [25]'s torch.manual_seed(123) and three torch.rand(3, 2) (18 draws)",
         dict(seed="123", skip=18, d_out=2),
         lambda o: export_v1(o, B(), 123, 18, 2, continued=True)),
        (CH_V1, "seed42",
         f"section 3.4.2 SelfAttention_v1 after torch.manual_seed(42): {T001} In [69]-In [70]",
         dict(seed="42", skip=0, d_out=2),
         lambda o: export_v1(o, B(), 42, 0, 2)),
        (CH_V2, "seed789",
         f"section 3.4.2 SelfAttention_v2 after torch.manual_seed(789): {T000} In [40]-In [41]; "
         f"{T004} In [None] (line 260), In [24]; {T002} has the same code but prints nothing. "
         "sa_v1(inputs) is Exercise 3.1",
         dict(seed="789", skip=0, d_out=2, qkv_bias=0),
         lambda o: export_v2(o, B(), 789, 0, 2, 0)),
        (CH_V2, "seed42",
         f"section 3.4.2 SelfAttention_v2 after torch.manual_seed(42): {T001} In [92]-In [95]. "
         "sa_v1(inputs) is Exercise 3.1 (In [95]'s commented lines)",
         dict(seed="42", skip=0, d_out=2, qkv_bias=0),
         lambda o: export_v2(o, B(), 42, 0, 2, 0)),
    ]


# The sweep: SelfAttention_v1 / _v2 beyond the book's shapes and seeds.
SWEEP_SEEDS = [0, 1, 42, 123, 789, 2**32 + 123, -1, 2**63 - 1]
SWEEP_T = [1, 2, 6, 7, 8, 9, 16, 17, 33]
SWEEP_DIN = [1, 3, 8, 17, 64]
SWEEP_DOUT = [1, 2, 4, 16]


def sweep_configs():
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


def sweep_group_name(chapter, seed, T, d_in, d_out, qkv_bias):
    name = f"{'v1' if chapter == CH_V1 else 'v2'}_seed{seed}_T{T}_din{d_in}_dout{d_out}"
    return name if qkv_bias is None else name + f"_bias{qkv_bias}"


def export_sweep(out):
    seen = set()
    n = 0
    for k, (chapter, seed, T, d_in, d_out, qkv_bias) in enumerate(sweep_configs()):
        name = sweep_group_name(chapter, seed, T, d_in, d_out, qkv_bias)
        if name in seen:
            continue
        seen.add(name)
        inputs_seed = 10000 + k  # one private input stream per configuration
        g = out.group(name)
        extra = dict(chapter=chapter, seed=str(seed), skip=0, d_out=d_out)
        if qkv_bias is not None:
            extra["qkv_bias"] = qkv_bias
        extra["inputs_seed"] = inputs_seed
        g.attrs(**extra)
        inputs = random_inputs(T, d_in, inputs_seed)
        if chapter == CH_V1:
            export_v1(g, inputs, seed, 0, d_out)
        else:
            export_v2(g, inputs, seed, 0, d_out, qkv_bias)
        n += 1
    return n


def load_helper(stem):
    """tools/<stem>.py's module, or None if that helper is not written yet."""
    path = os.path.join(TOOLS_DIR, stem + ".py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("litattn_" + stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def count_datasets(path):
    n = [0, 0]

    def visit(_, obj):
        n[isinstance(obj, h5py.Group)] += 1
    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return n  # [datasets, groups]


def export_all(out_dir, quiet=False):
    os.makedirs(out_dir, exist_ok=True)
    written = []

    def say(msg):
        if not quiet:
            print(msg)

    def rel(path):
        return os.path.relpath(path)

    def publish(path, write):
        # Write beside the target, then rename over it: a reader that has the
        # old file open (HDF5 locks it) keeps its copy, and an interrupted run
        # never leaves a truncated fixture behind.
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            write(tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        written.append(path)

    for chapter, variant, mirrors, extra, body in book_fixtures():
        def write(p):
            with new_file(p) as f:
                o = Out(f)
                root_attrs(o, chapter, variant, mirrors, SCRIPT, **extra)
                body(o)
        path = os.path.join(out_dir, f"{chapter}.{variant}.h5")
        publish(path, write)
        say(f"wrote {rel(path)} ({count_datasets(path)[0]} datasets)")

    ngroups = []

    def write_sweep(p):
        with new_file(p) as f:
            o = Out(f)
            root_attrs(o, f"{CH_V1},{CH_V2}", "sweep",
                       "no transcript: section 3.4.2's SelfAttention_v1 and SelfAttention_v2 over "
                       "seeds, token counts and sizes beyond the book's; one group per configuration",
                       SCRIPT)
            ngroups.append(export_sweep(o))
    path = os.path.join(out_dir, "sweep.h5")
    publish(path, write_sweep)
    say(f"wrote {rel(path)} ({ngroups[0]} groups, {count_datasets(path)[0]} datasets)")

    for stem in ("kernel_cases", "printer_cases"):
        mod = load_helper(stem)
        path = os.path.join(out_dir, stem + ".h5")
        if mod is None or not hasattr(mod, "export"):
            say(f"skipped {rel(path)}: tools/{stem}.py {'has no export()' if mod else 'is not present'}")
            continue
        publish(path, mod.export)
        say(f"wrote {rel(path)} ({count_datasets(path)[0]} datasets) via tools/{stem}.py")
    return written


# --------------------------------------------------------------------------
# --check: regenerate into a temporary directory and compare.

UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
SINT = {2: np.int16, 4: np.int32, 8: np.int64}


def ordered_key(a):
    """Float bits mapped to Python ints whose difference counts ulps
    (negative floats mirrored below zero, so -0.0 and +0.0 are 0 apart)."""
    bits = a.dtype.itemsize * 8
    return [i if i >= 0 else -(2**(bits - 1)) - i for i in a.view(SINT[a.dtype.itemsize]).tolist()]


def hexbits(x):
    return "0x%0*x" % (2 * x.dtype.itemsize, int(x.view(UINT[x.dtype.itemsize])))


def compare_values(label, a, b):
    """Problems (list of str) between committed a and regenerated b (same dtype/shape)."""
    if a.dtype.kind == "f":
        fa, fb = a.reshape(-1), b.reshape(-1)
        same_bits = fa.view(UINT[a.dtype.itemsize]) == fb.view(UINT[a.dtype.itemsize])
        if same_bits.all():
            return []
        nan = np.isnan(fa) | np.isnan(fb)
        ulps = [0 if s else (None if n else abs(int(x) - int(y)))
                for s, n, x, y in zip(same_bits, nan, ordered_key(fa), ordered_key(fb))]
        differing = [i for i in range(len(ulps)) if not same_bits[i]]
        k = next((i for i in differing if ulps[i] is None), None)
        if k is None:
            k = max(differing, key=lambda i: ulps[i])
        where = np.unravel_index(k, a.shape) if a.shape else ()
        worst = "NaN vs number" if ulps[k] is None else f"{ulps[k]} ulp"
        return [f"{label}: {int((~same_bits).sum())} of {fa.size} values differ, worst {worst} "
                f"at {list(map(int, where))}: committed {fa[k]!r} ({hexbits(fa[k])}), "
                f"regenerated {fb[k]!r} ({hexbits(fb[k])})"]
    if a.dtype.kind in "OSU" or h5py.check_string_dtype(a.dtype):
        la, lb = a.reshape(-1).tolist(), b.reshape(-1).tolist()
        bad = [i for i, (x, y) in enumerate(zip(la, lb)) if x != y]
        if bad:
            return [f"{label}: {len(bad)} of {len(la)} strings differ, first at flat index {bad[0]}: "
                    f"committed {la[bad[0]]!r}, regenerated {lb[bad[0]]!r}"]
        return []
    if a.tobytes() != b.tobytes():
        ne = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
        first = f" first at flat index {ne[0]}: committed {a.reshape(-1)[ne[0]]!r}, " \
                f"regenerated {b.reshape(-1)[ne[0]]!r}" if len(ne) else ""
        return [f"{label}: values differ ({len(ne)} of {a.size});{first}"]
    return []


def attr_type(obj, name):
    aid = obj.attrs.get_id(name)
    dt = aid.dtype
    s = h5py.check_string_dtype(dt)
    if s is not None:
        return f"string({s.encoding}, {'variable' if s.length is None else s.length})", aid.shape
    return str(dt), aid.shape


def compare_attrs(label, a, b):
    problems = []
    na, nb = set(a.attrs.keys()), set(b.attrs.keys())
    for n in sorted(na - nb):
        problems.append(f"{label}: attribute {n!r} only in the committed file")
    for n in sorted(nb - na):
        problems.append(f"{label}: attribute {n!r} missing from the committed file")
    for n in sorted(na & nb):
        ta, tb = attr_type(a, n), attr_type(b, n)
        if ta != tb:
            problems.append(f"{label}: attribute {n!r} type {ta} committed, {tb} regenerated")
            continue
        va, vb = np.asarray(a.attrs[n]), np.asarray(b.attrs[n])
        if va.dtype.kind == "f":
            problems += compare_values(f"{label}: attribute {n!r}", va, vb)
        elif va.dtype.kind == "O" or va.dtype.kind in "SU":
            if va.tolist() != vb.tolist():
                sa, sb = str(va.tolist()), str(vb.tolist())
                i = next((i for i, (x, y) in enumerate(zip(sa, sb)) if x != y), min(len(sa), len(sb)))
                problems.append(f"{label}: attribute {n!r} differs at character {i}: committed "
                                f"{sa[max(0, i - 20):i + 40]!r}, regenerated {sb[max(0, i - 20):i + 40]!r}")
        elif va.tobytes() != vb.tobytes():
            problems.append(f"{label}: attribute {n!r} committed {va.tolist()!r}, regenerated {vb.tolist()!r}")
    return problems


def walk(f):
    objs = {"/": f}
    f.visititems(lambda name, obj: objs.__setitem__("/" + name, obj))
    return objs


def compare_file(committed, regenerated):
    """(problems, number of datasets compared)."""
    problems = []
    ndatasets = 0
    with h5py.File(committed, "r") as fa, h5py.File(regenerated, "r") as fb:
        oa, ob = walk(fa), walk(fb)
        for p in sorted(set(oa) - set(ob)):
            problems.append(f"{p}: only in the committed file (regeneration does not make it)")
        for p in sorted(set(ob) - set(oa)):
            problems.append(f"{p}: missing from the committed file")
        for p in sorted(set(oa) & set(ob)):
            a, b = oa[p], ob[p]
            if isinstance(a, h5py.Dataset) != isinstance(b, h5py.Dataset):
                problems.append(f"{p}: a {type(a).__name__} committed, a {type(b).__name__} regenerated")
                continue
            problems += compare_attrs(p, a, b)
            if isinstance(a, h5py.Dataset):
                ndatasets += 1
                if a.dtype != b.dtype or a.shape != b.shape:
                    problems.append(f"{p}: committed {a.dtype} {a.shape}, regenerated {b.dtype} {b.shape}")
                    continue
                if a.id.get_space().get_simple_extent_type() != b.id.get_space().get_simple_extent_type():
                    problems.append(f"{p}: dataspace class differs (scalar vs simple)")
                    continue
                problems += compare_values(p, a[()], b[()])
    return problems, ndatasets


def check(committed_dir):
    with tempfile.TemporaryDirectory(prefix="litattn_check_") as tmp:
        export_all(tmp, quiet=True)
        committed = sorted(n for n in os.listdir(committed_dir) if n.endswith(".h5")) \
            if os.path.isdir(committed_dir) else []
        regenerated = sorted(n for n in os.listdir(tmp) if n.endswith(".h5"))
        failures = 0
        for n in sorted(set(committed) | set(regenerated)):
            if n not in regenerated:
                print(f"FAIL {n}: committed but not regenerated (stale file, or its helper is missing)")
                failures += 1
                continue
            if n not in committed:
                print(f"FAIL {n}: regenerated but not committed")
                failures += 1
                continue
            problems, nds = compare_file(os.path.join(committed_dir, n), os.path.join(tmp, n))
            if problems:
                failures += 1
                print(f"FAIL {n}: {len(problems)} difference(s) in {nds} datasets")
                for p in problems:
                    print(f"    {p}")
            else:
                print(f"ok   {n}: {nds} datasets, every value bit-identical, attributes equal")
    print(f"check: {len(set(committed) | set(regenerated))} files, {failures} with differences")
    return 1 if failures else 0


# --------------------------------------------------------------------------
# --custom: one fixture of the same schema for parameters of your choosing.

CUSTOM_CHAPTERS = [CH_SIMPLE, CH_TRAIN, CH_V1, CH_V2]


def export_custom(args, argv):
    if args.chapter not in CUSTOM_CHAPTERS:
        raise SystemExit(f"export_fixtures: --chapter must be one of {', '.join(CUSTOM_CHAPTERS)}"
                         f" ({CH_SCALE} has nothing to vary)")
    if (args.tokens is None) != (args.d_in is None):
        raise SystemExit("export_fixtures: give --tokens and --d-in together (or neither for the book's inputs)")
    random = args.tokens is not None
    if random:
        if args.tokens < 1 or args.d_in < 1:
            raise SystemExit("export_fixtures: --tokens and --d-in must be positive")
        inputs = random_inputs(args.tokens, args.d_in, args.inputs_seed)
    else:
        inputs = book_inputs()
    if args.chapter in (CH_SIMPLE, CH_TRAIN) and inputs.shape[0] < 2:
        raise SystemExit(f"export_fixtures: {args.chapter} uses inputs[1]: --tokens must be at least 2")
    if args.chapter != CH_SIMPLE and args.seed is None:
        raise SystemExit(f"export_fixtures: {args.chapter} draws weights: give --seed")
    if args.d_out < 1 or args.skip < 0:
        raise SystemExit("export_fixtures: --d-out must be positive and --skip not negative")

    what = "the book's inputs" if not random else \
        f"torch.rand({args.tokens}, {args.d_in}, generator=manual_seed({args.inputs_seed})) * 2 - 1"
    extra = {}
    if args.chapter != CH_SIMPLE:
        extra = dict(seed=str(args.seed), skip=args.skip, d_out=args.d_out)
        if args.chapter == CH_V2:
            extra["qkv_bias"] = int(args.qkv_bias)
    if random:
        extra["inputs_seed"] = args.inputs_seed
    command = " ".join([SCRIPT] + [shlex.quote(a) for a in argv])
    with new_file(args.custom) as f:
        o = Out(f)
        root_attrs(o, args.chapter, "custom", f"no transcript: {args.chapter} on {what}", command, **extra)
        if args.chapter == CH_SIMPLE:
            export_simplified_attention(o, inputs)
        elif args.chapter == CH_TRAIN:
            export_trainable_weights(o, inputs, args.seed, args.skip, args.d_out)
        elif args.chapter == CH_V1:
            export_v1(o, inputs, args.seed, args.skip, args.d_out)
        else:
            export_v2(o, inputs, args.seed, args.skip, args.d_out, int(args.qkv_bias))
    print(f"wrote {args.custom} ({count_datasets(args.custom)[0]} datasets)")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", metavar="DIR", help="write the fixtures into DIR instead of fixtures/")
    p.add_argument("--check", action="store_true",
                   help="regenerate into a temporary directory and compare with fixtures/ (or --out DIR)")
    c = p.add_argument_group("a custom fixture (variant \"custom\")")
    c.add_argument("--custom", metavar="OUT.h5", help="write one custom fixture to OUT.h5")
    c.add_argument("--chapter", help=", ".join(CUSTOM_CHAPTERS))
    c.add_argument("--seed", type=lambda s: int(s, 0), help="torch.manual_seed argument (any Python int)")
    c.add_argument("--skip", type=int, default=0, help="32-bit draws to consume after seeding (default 0)")
    c.add_argument("--tokens", type=int, help="T: random inputs of T tokens (default: the book's 6)")
    c.add_argument("--d-in", type=int, help="d_in of the random inputs")
    c.add_argument("--inputs-seed", type=int, default=0, help="seed of the random inputs' generator (default 0)")
    c.add_argument("--d-out", type=int, default=2, help="d_out (default 2)")
    c.add_argument("--qkv-bias", action="store_true", help="SelfAttention_v2(..., qkv_bias=True)")
    args = p.parse_args(argv)

    # One thread: nothing here is large enough for PyTorch to split, and this
    # rules out any thread-count dependence of the bits.
    torch.set_num_threads(1)

    if args.custom:
        if args.check or args.out:
            p.error("--custom does not combine with --check or --out")
        export_custom(args, argv)
        return 0
    if any(v is not None for v in (args.chapter, args.seed, args.tokens, args.d_in)) or args.qkv_bias:
        p.error("--chapter/--seed/--tokens/--d-in/--qkv-bias need --custom OUT.h5")
    out_dir = os.path.abspath(args.out) if args.out else FIXTURES_DIR
    t0 = time.time()
    if args.check:
        rc = check(out_dir)
        print(f"check took {time.time() - t0:.1f} s")
        return rc
    files = export_all(out_dir)
    print(f"{len(files)} files in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
