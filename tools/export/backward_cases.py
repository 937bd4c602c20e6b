"""backward_cases.py: what PyTorch 1.13's autograd computes for each backward
of lib/tensor/ (the families' backward references) and lib/nn/'s modules, for tests/test_backward.c.

Writes fixtures/backward_cases.h5: one group per case, holding
  float32 datasets, shaped like the torch tensors, each with a string
           attribute "role": "input" (what the C side is given: inputs,
           parameters under their state_dict names, dropout's noise, the
           upstream gradient) or "output" (an expected gradient, named
           "<tensor>.grad": "x.grad", "W_query.weight.grad", ...)
  op       string attribute: the C function the case exercises (see OPS)
  expr     string attribute: the torch code whose backward made the grads
  sizes    int64 attributes, per op (see OPS)
Module cases also hold
  module   string attribute: SelfAttention_v1, SelfAttention_v2, CausalAttention,
           MultiHeadAttentionWrapper, MultiHeadAttention, or MHAPyTorchClass (the
           bonus notebook's class over torch's nn.MultiheadAttention)
  d_in, d_out, context_length, num_heads, qkv_bias, training, b, T
           int64 attributes (b = 0 for the 2-D SelfAttention inputs)
  softmax_dim int64 attribute: the dim of the attention scores softmax runs
           over: -1, or 1 for Exercise 3.2's recorded class (CausalAttention_c400f77)
  dropout  float64 attribute: the probability
  seed     int64 attribute: torch.manual_seed before the module was made
  need_weights int64 attribute (MHAPyTorchClass only): its need_weights
and "out", the forward's output (role "output"), which the C forward that
keeps its activations must still give bit for bit.
The root attribute "cases" lists the group names, one per line, in order; the
root also records the torch version, config, BLAS and CPU capability.

Each module case seeds torch, makes the book's class (tools/export's copies,
unchanged), seeds again before the forward, and calls .backward() on the
output with ones (out.sum()) or a random upstream gradient. Dropout's noise is
read by running the same dropout on ones from the same generator state, which
is restored before the real forward. Small sizes only (the GPT-2 size
Exercise 3.3 backward is not here: it would be 90 MB).

Import has no side effects; run as
    /usr/bin/python3 tools/export/backward_cases.py fixtures/backward_cases.h5
"""

import os
import sys
import zlib

if not __package__:  # run as a script: tools/, where the package `export` is, first on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from export import case_files  # noqa: E402  (provenance, groups and datasets, as every case file writes them)
import h5py
import numpy as np
import torch
import torch.nn.functional as F

from export.ch03_4 import SelfAttention_v1, SelfAttention_v2  # noqa: E402
from export.ch03_5 import CausalAttention  # noqa: E402
from export.ch03_6 import (CausalAttention_c400f77, MultiHeadAttention, MultiHeadAttentionWrapper,  # noqa: E402
                           MultiHeadAttentionWrapper_c400f77)
from export.ch03_bonus import MHAPyTorchClass  # noqa: E402

OPS = {
    "linear": "y = F.linear(x, weight[, bias]) on x (rows, in); dy -> x.grad, weight.grad, bias.grad; sizes rows, "
              "in, out, bias, colmajor (dy reached the bias as a transposed view)",
    "bmm": "out = a @ b, a (B,M,K), b (B,K,N); dout -> a.grad, b.grad; sizes B, M, K, N",
    "softmax_rows": "y = softmax(x, -1), x (rows, n); dy -> x.grad; sizes rows, n",
    "softmax_dim": "y = softmax(x, dim) over the middle axis of (outer, n, inner); dy -> x.grad; sizes outer, n, inner",
    "pointwise": "s (B,T,T) -> masked_fill_(causal, -inf) -> / d**0.5 -> dropout (noise, if p > 0); dy -> x.grad; "
                 "sizes B, T, d, noise",
    "sum": "x.sum().backward() -> x.grad; sizes n",
    "stack": "torch.stack((x, x)) * dout, summed -> x.grad = dout[0] + dout[1]; sizes n",
    "attention": "the book's causal attention of one head, q, k, v (B,T,D): s = q @ k^T, masked_fill_(causal, "
                 "-inf), w = softmax(s / D**0.5, -1), ctx = w @ v; dctx -> q.grad, k.grad, v.grad; sizes B, T, D, "
                 "full (1: run with the full selection only)",
    "module": "a chapter-3 module's (or the bonus notebook's MHAPyTorchClass's) forward then backward(dout) -> "
              "every parameter's .grad and x.grad",
}

# The book's six 3-d embeddings ("Your journey starts with one step").
INPUTS = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
          [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]


def _gen(name):
    """each case's own generator, seeded from its name"""
    return torch.Generator().manual_seed(zlib.crc32(name.encode()))


class _Case:
    def __init__(self, name, op, expr, inputs, outputs, **attrs):
        self.name, self.op, self.expr = name, op, expr
        self.inputs, self.outputs, self.attrs = inputs, outputs, attrs


def _signed_zeros(t, g, frac=0.1):
    flat = t.view(-1)
    k = max(2, int(flat.numel() * frac))
    idx = torch.randint(0, flat.numel(), (k,), generator=g)
    flat[idx[: k // 2]] = -0.0
    flat[idx[k // 2:]] = 0.0
    return t


def _backward(m, out, upstream, name):
    """out.sum().backward(), or out.backward(dout) with a randn dout holding
    signed zeros; returns dout, the parameters under their state_dict names
    (the case's inputs) and their gradients (its outputs)."""
    if upstream == "ones":
        dout = torch.ones_like(out)
        out.sum().backward()
    else:
        dout = torch.randn(out.shape, generator=_gen(name))
        _signed_zeros(dout, _gen(name + ".zeros"), 0.05)
        out.backward(dout)
    params = dict(m.named_parameters())
    return dout, params, {key + ".grad": p.grad for key, p in params.items()}


# --- op-level cases ----------------------------------------------------------------------

def _linear_cases():
    cases = []
    shapes = [(1, 1, 1, 0, 0), (6, 3, 2, 0, 0), (6, 3, 2, 1, 0), (12, 3, 2, 1, 1), (37, 5, 9, 1, 0),
              (23, 17, 40, 1, 0), (50, 8, 33, 1, 1), (9, 40, 6, 0, 0), (64, 7, 3, 1, 0), (100, 2, 1, 1, 0),
              (257, 2, 33, 1, 0), (1100, 2, 40, 1, 0), (300, 2, 1, 1, 0), (31, 4, 7, 1, 1)]
    for rows, d_in, d_out, bias, col in shapes:
        name = f"linear_{rows}x{d_in}to{d_out}{'_bias' if bias else ''}{'_col' if col else ''}"
        g = _gen(name)
        w = torch.randn(d_out, d_in, generator=g)
        b = torch.randn(d_out, generator=g) if bias else None
        x = torch.randn(rows, d_in, generator=g) * 2
        dy = torch.randn(rows, d_out, generator=g)
        if rows > 10:
            _signed_zeros(x, g)
            _signed_zeros(dy, g)
        x.requires_grad_()
        w.requires_grad_()
        if b is not None:
            b.requires_grad_()
        y = F.linear(x, w, b)
        if col:  # the grad reaches AddmmBackward0 column-major
            y.t().backward(dy.t().contiguous())
        else:
            y.backward(dy)
        outs = {"x.grad": x.grad, "weight.grad": w.grad}
        if b is not None:
            outs["bias.grad"] = b.grad
        expr = "F.linear(x, weight, bias)" + (".t().backward(dy.t().contiguous())" if col else ".backward(dy)")
        cases.append(_Case(name, "linear", expr, {"x": x, "weight": w, "dy": dy}, outs,
                           rows=rows, **{"in": d_in, "out": d_out}, bias=bias, colmajor=col))
    return cases


def _bmm_cases():
    cases = []
    for i, (B, M, K, N) in enumerate([(1, 1, 1, 1), (2, 6, 2, 6), (2, 6, 6, 2), (3, 5, 7, 4), (1, 9, 20, 11),
                                      (4, 12, 8, 12), (2, 3, 33, 5), (1, 7, 7, 7)]):
        name = f"bmm_{B}x{M}x{K}x{N}"
        g = _gen(name)
        a = torch.randn(B, M, K, generator=g)
        bt = torch.randn(B, N, K, generator=g)
        if i % 3 == 1:  # extremes: NaN, inf, signed zeros
            a.view(-1)[0] = float("nan")
            bt.view(-1)[-1] = float("inf")
            _signed_zeros(a, g, 0.2)
        a.requires_grad_()
        bt.requires_grad_()
        b = bt.transpose(1, 2) if i % 2 else bt.transpose(1, 2).contiguous()
        b.retain_grad()
        dout = torch.randn(B, M, N, generator=g)
        (a @ b).backward(dout)
        cases.append(_Case(name, "bmm", "(a @ b).backward(dout)", {"a": a, "b": b, "dout": dout},
                           {"a.grad": a.grad, "b.grad": b.grad}, B=B, M=M, K=K, N=N))
    return cases


def _softmax_cases():
    cases = []
    for n in list(range(1, 18)) + [31, 32, 33, 64, 65]:
        name = f"softmax_rows_n{n}"
        g = _gen(name)
        rows = 3
        x = torch.randn(rows, n, generator=g) * 3
        x[1, (n + 1) // 2:] = -float("inf")  # a causal row
        x.requires_grad_()
        y = torch.softmax(x, -1)
        dy = torch.randn(rows, n, generator=g)
        if n % 5 == 0:
            dy[0, 0] = float("nan")
            dy[2, -1] = float("inf")
            dy[1, 0] = -0.0
        y.backward(dy)
        cases.append(_Case(name, "softmax_rows", "torch.softmax(x, -1).backward(dy)", {"y": y, "dy": dy},
                           {"x.grad": x.grad}, rows=rows, n=n))
    for shape, d in (((2, 6, 6), 1), ((2, 6, 6), 0), ((3, 5, 7), 1), ((2, 9, 19), 1), ((4, 3, 8), 0),
                     ((5, 40, 1), 1)):
        name = f"softmax_dim{d}_{'x'.join(map(str, shape))}"
        g = _gen(name)
        x = torch.randn(*shape, generator=g, requires_grad=True)
        y = torch.softmax(x, d)
        dy = torch.randn(*shape, generator=g)
        y.backward(dy)
        outer = int(np.prod(shape[:d]))
        inner = int(np.prod(shape[d + 1:]))
        cases.append(_Case(name, "softmax_dim", f"torch.softmax(x, {d}).backward(dy)", {"y": y, "dy": dy},
                           {"x.grad": x.grad}, outer=outer, n=shape[d], inner=inner))
    return cases


def _pointwise_cases():
    cases = []
    for (B, T, d, p, seed) in ((2, 6, 2, 0.5, 123), (3, 9, 64, 0.1, 5), (1, 1, 1, 0.2, 7), (2, 13, 7, 0.0, 0)):
        name = f"pointwise_{B}x{T}_d{d}_p{p}"
        g = _gen(name)
        s = torch.randn(B, T, T, generator=g) * 4
        s.view(-1)[0] = -0.0
        s.requires_grad_()
        a = s * 1.0
        a.masked_fill_(torch.triu(torch.ones(T, T), 1).bool(), -torch.inf)
        z = a / d ** 0.5
        torch.manual_seed(seed)
        state = torch.get_rng_state()
        noise = F.dropout(torch.ones_like(z), p, True) if p > 0 else None
        torch.set_rng_state(state)
        o = F.dropout(z, p, True)
        dy = torch.randn(B, T, T, generator=g) * 3
        dy.view(-1)[0] = -0.0
        dy.view(-1)[-1] = float("nan")
        o.backward(dy)
        ins = {"dy": dy}
        if noise is not None:
            ins["noise"] = noise
        cases.append(_Case(name, "pointwise", f"F.dropout(s.masked_fill_(causal, -inf) / {d}**0.5, {p!r}, True)"
                           ".backward(dy)", ins, {"x.grad": s.grad}, B=B, T=T, d=d, noise=int(noise is not None)))
    return cases


def _layout_cases():
    cases = []
    x = torch.randn(7, generator=_gen("sum_7"), requires_grad=True)
    x.sum().backward()
    cases.append(_Case("sum_7", "sum", "x.sum().backward()", {"x": x}, {"x.grad": x.grad}, n=7))
    x = torch.tensor(INPUTS, requires_grad=True)
    dout = torch.randn(2, 6, 3, generator=_gen("stack_inputs"))
    dout[0, 0, 0] = -0.0
    dout[1, 0, 0] = -0.0
    torch.stack((x, x), dim=0).backward(dout)
    cases.append(_Case("stack_inputs", "stack", "torch.stack((x, x), dim=0).backward(dout)", {"x": x, "dout": dout},
                       {"x.grad": x.grad}, n=18))
    return cases


# The causal attention's backward at sizes past one depth block of the
# products (256 when the depth passes 768) and at its edges: T - 1 a multiple
# of 256, so that the last row starts a depth block of its own. One value
# inf, -inf or NaN in q or dctx (row 1: the rows of every later depth block
# may start after it; NaN in q is a NaN row of the weights) or in k (the last
# row: the rows of the first depth blocks may stop before it); torch gives
# NaN where the dead triangle meets it (0 * inf), which a product skipping
# that triangle would not.
ATTENTION_SIZES = ((257, 0), (513, 0), (769, 0), (1025, 1))  # (T, full)


def _attention_case(name, T, D, where, value, full):
    g = _gen(name)
    q, k, v, dctx = (torch.rand(1, T, D, generator=g) * 2 - 1 for _ in range(4))
    col = int(torch.randint(0, D, (1,), generator=g))
    if where is not None:
        {"q": q, "k": k, "dctx": dctx}[where][0, T - 1 if where == "k" else 1, col] = value
    for t in (q, k, v):
        t.requires_grad_()
    s = q @ k.transpose(1, 2)
    s.masked_fill_(torch.triu(torch.ones(T, T), 1).bool(), -torch.inf)
    w = torch.softmax(s / k.shape[-1] ** 0.5, dim=-1)
    (w @ v).backward(dctx)
    return _Case(name, "attention", "s = q @ k.transpose(1, 2); s.masked_fill_(causal, -inf); "
                 "(torch.softmax(s / D**0.5, -1) @ v).backward(dctx)",
                 {"q": q, "k": k, "v": v, "dctx": dctx}, {"q.grad": q.grad, "k.grad": k.grad, "v.grad": v.grad},
                 B=1, T=T, D=D, full=full)


def _attention_cases():
    cases = []
    specials = (("inf", float("inf")), ("-inf", -float("inf")), ("nan", float("nan")))
    for T, full in ATTENTION_SIZES:
        cases.append(_attention_case(f"attention_T{T}", T, 2, None, 0.0, full))
        for where in ("q", "k", "dctx"):
            for label, value in specials:
                cases.append(_attention_case(f"attention_T{T}_{label}_in_{where}", T, 2, where, value, full))
    return cases


# --- module cases ------------------------------------------------------------------------

def _keep_noise(drop, store, key):
    """makes `drop` record, under store[key], the noise its next call multiplies by"""
    forward = drop.forward

    def keeping(x):
        if drop.training and 0.0 < drop.p < 1.0 and x.numel():
            state = torch.get_rng_state()
            store[key] = F.dropout(torch.ones_like(x), drop.p, True)
            torch.set_rng_state(state)
        return forward(x)
    drop.forward = keeping


def _module_case(name, cls, args, x, seed, upstream, training=True, nan_at=None):
    torch.manual_seed(seed)
    m = cls(*args)
    m.train(training)
    noises = {}
    for mod_name, mod in m.named_modules():
        if isinstance(mod, torch.nn.Dropout):
            _keep_noise(mod, noises, mod_name + ".noise")
    x = x.detach().clone()
    if nan_at is not None:
        x[nan_at] = float("nan")
    x.requires_grad_()
    torch.manual_seed(seed + 1)
    out = m(x)
    dout, params, grads = _backward(m, out, upstream, name)
    ins = {"x": x, "dout": dout, **params, **noises}
    outs = {"x.grad": x.grad, **grads}
    recorded = {CausalAttention_c400f77: CausalAttention, MultiHeadAttentionWrapper_c400f77: MultiHeadAttentionWrapper}
    softmax_dim = 1 if cls in recorded else -1
    cls_name = cls.__name__
    cls = recorded.get(cls, cls)
    three_d = cls in (CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention)
    heads = cls in (MultiHeadAttentionWrapper, MultiHeadAttention)
    first = m.heads[0] if cls is MultiHeadAttentionWrapper else m
    outs["out"] = out
    cfg = dict(module=cls.__name__, softmax_dim=softmax_dim, d_in=args[0], d_out=args[1],
               b=x.shape[0] if three_d else 0, T=x.shape[-2],
               context_length=args[2] if three_d else 0, dropout=float(args[3]) if three_d else 0.0,
               num_heads=args[4] if heads else 1,
               qkv_bias=int(cls is not SelfAttention_v1 and first.W_query.bias is not None),
               training=int(training), seed=seed)
    expr = f"torch.manual_seed({seed}); m = {cls_name}{tuple(args)}; m.train({training}); " \
           f"torch.manual_seed({seed + 1}); " + ("m(x).sum().backward()" if upstream == "ones" else "m(x).backward(dout)")
    return _Case(name, "module", expr, ins, outs, **cfg)


def _module_cases():
    inputs = torch.tensor(INPUTS)
    batch = torch.stack((inputs, inputs), dim=0)
    g = _gen("module inputs")
    x1 = torch.randn(1, 11, 3, generator=g)
    x37 = torch.randn(37, 3, generator=g)
    xz = batch.clone()
    xz[0, 0] = -0.0
    xz[1, 2, 1] = 0.0
    xz[1, 3, 0] = -0.0
    specs = [
        ("v1_book", SelfAttention_v1, (3, 2), inputs, 123, {}),
        ("v2_book", SelfAttention_v2, (3, 2), inputs, 789, {}),
        ("v2_bias", SelfAttention_v2, (3, 2, True), inputs, 789, {}),
        ("v2_bias_T37_d40", SelfAttention_v2, (3, 40, True), x37, 5, {}),
        ("ca_book", CausalAttention, (3, 2, 6, 0.0), batch, 123, {}),
        ("ca_dropout0.5", CausalAttention, (3, 2, 6, 0.5), batch, 123, {}),
        ("ca_eval", CausalAttention, (3, 2, 6, 0.5), batch, 123, {"training": False}),
        ("ca_b1_bias", CausalAttention, (3, 9, 11, 0.0, True), x1, 5, {}),
        ("ca_nan_in_x", CausalAttention, (3, 2, 6, 0.0), batch, 123, {"nan_at": (1, 3, 2)}),
        ("ca_softmax_dim1", CausalAttention_c400f77, (3, 2, 6, 0.0), batch, 123, {}),
        ("wrapper_ex3_2_recorded", MultiHeadAttentionWrapper_c400f77, (3, 1, 6, 0.0, 2), batch, 123, {}),
        ("wrapper_book", MultiHeadAttentionWrapper, (3, 2, 6, 0.0, 2), batch, 123, {}),
        ("wrapper_ex3_2", MultiHeadAttentionWrapper, (3, 1, 6, 0.0, 2), batch, 123, {}),
        ("wrapper_dropout0.5", MultiHeadAttentionWrapper, (3, 2, 6, 0.5, 2), batch, 123, {}),
        ("wrapper_b1_bias", MultiHeadAttentionWrapper, (3, 9, 11, 0.0, 3, True), x1, 5, {}),
        ("mha_book", MultiHeadAttention, (3, 2, 6, 0.0, 2), batch, 123, {}),
        ("mha_dropout0.1_bias", MultiHeadAttention, (3, 4, 6, 0.1, 2, True), batch, 123, {}),
        ("mha_b1_bias", MultiHeadAttention, (3, 12, 11, 0.0, 3, True), x1, 5, {}),
        ("mha_signed_zeros", MultiHeadAttention, (3, 4, 6, 0.2, 2, True), xz, 123, {}),
    ]
    cases = []
    for name, cls, args, x, seed, kw in specs:
        for upstream in ("ones", "randn"):
            cases.append(_module_case(f"{name}_{upstream}", cls, args, x, seed, upstream, **kw))
    return cases


MHA_PYTORCH_CLASS_PARAMS = ["multihead_attn.in_proj_weight", "multihead_attn.out_proj.weight", "proj.weight",
                            "proj.bias"]


def _mha_pytorch_class_case(name, E, num_heads, b, T, context_length, dropout, need_weights, seed, upstream):
    """MHAPyTorchClass(E, E, num_heads, context_length, dropout, False, need_weights) in training mode:
    nn.MultiheadAttention's F.dropout on the weights is no module, so its noise ((b, h, T, T), the
    forward's only draw) is read from the generator state the forward starts from."""
    torch.manual_seed(seed)
    m = MHAPyTorchClass(E, E, num_heads, context_length, dropout, False, need_weights)
    assert [k for k, _ in m.named_parameters()] == MHA_PYTORCH_CLASS_PARAMS
    x = torch.randn(b, T, E, generator=_gen(name + ".x"))
    _signed_zeros(x, _gen(name + ".x.zeros"), 0.05)
    x.requires_grad_()
    torch.manual_seed(seed + 1)
    ins = {}
    if dropout > 0:
        state = torch.get_rng_state()
        ins["multihead_attn.dropout.noise"] = F.dropout(torch.ones(b * num_heads, T, T), dropout, True).view(
            b, num_heads, T, T)
        torch.set_rng_state(state)
    out = m(x)
    dout, params, grads = _backward(m, out, upstream, name)
    ins.update({"x": x, "dout": dout, **params})
    outs = {"x.grad": x.grad, "out": out, **grads}
    expr = f"torch.manual_seed({seed}); m = MHAPyTorchClass({E}, {E}, {num_heads}, {context_length}, {dropout!r}, " \
           f"False, {need_weights}); torch.manual_seed({seed + 1}); " + \
           ("m(x).sum().backward()" if upstream == "ones" else "m(x).backward(dout)")
    return _Case(name, "module", expr, ins, outs, module="MHAPyTorchClass", softmax_dim=-1, d_in=E, d_out=E, b=b,
                 T=T, context_length=context_length, dropout=float(dropout), num_heads=num_heads, qkv_bias=0,
                 training=1, seed=seed, need_weights=int(need_weights))


def _mha_pytorch_class_cases():
    # head_dim 12 and 6: sqrt(hd) no power of two, so that dividing q before
    # or after a product gives other bits (at the notebook's head_dim 64 it
    # does not: the bonus chapter's fixtures cover both)
    specs = [
        ("mhapc_default", 24, 2, 2, 9, 9, 0.0, True, 123),
        ("mhapc_noweights", 24, 2, 2, 9, 9, 0.0, False, 123),
        ("mhapc_T5_of_8", 12, 2, 3, 5, 8, 0.0, True, 5),
        ("mhapc_dropout0.2", 24, 2, 2, 9, 9, 0.2, True, 123),
    ]
    cases = []
    for name, E, h, b, T, ctx, p, nw, seed in specs:
        for upstream in ("ones", "randn"):
            cases.append(_mha_pytorch_class_case(f"{name}_{upstream}", E, h, b, T, ctx, p, nw, seed, upstream))
    return cases


def _cases():
    torch.set_num_threads(1)
    return (_linear_cases() + _bmm_cases() + _softmax_cases() + _pointwise_cases() + _layout_cases()
            + _attention_cases()
            + _module_cases() + _mha_pytorch_class_cases())


def export(path):
    """Writes every case to the HDF5 file at path (overwriting it); returns the count."""
    cases = _cases()
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    with h5py.File(path, "w", libver="earliest") as f:
        for k, v in case_files.provenance().items():
            f.attrs[k] = v
        f.attrs["command"] = "tools/export/backward_cases.py"
        for c in cases:
            grp = case_files.group(f, c.name)
            grp.attrs["op"] = c.op
            grp.attrs["expr"] = c.expr
            for k, v in c.attrs.items():
                if isinstance(v, str):
                    grp.attrs[k] = v
                elif isinstance(v, float):
                    grp.attrs[k] = np.float64(v)
                else:
                    grp.attrs[k] = np.int64(v)
            for k, t in c.inputs.items():
                case_files.put(grp, k, t, "input")
            for k, t in c.outputs.items():
                case_files.put(grp, k, t, "output")
        f.attrs["cases"] = "\n".join(names)
    return len(cases)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: backward_cases.py OUT.h5")
    print(f"{sys.argv[1]}: {export(os.path.abspath(sys.argv[1]))} cases")
