"""kernel_cases.py: what PyTorch 1.13 computes for each kernel of lib/tensor/ (the families' scalar references),
for tests/test_kernels.c.

Writes fixtures/kernel_cases.h5: one group per case, holding
  float32 datasets, shaped like the torch tensors (0-d as a SCALAR dataspace),
           each with a string attribute "role": "input" or "output"; the
           output is always "out", torch's result
  kernel   string attribute: which C kernel the case exercises (see KERNELS)
  M, K, N, n, rows, T, d, B, outer, inner
           int64 attributes: the sizes the kernel is called with (each
           kernel's sizes are listed in KERNELS below)
  ndim, dim0..dim3, a_ndim, a_dim0.., b_ndim, b_dim0..
           int64 attributes of the N-D cases: the shape of x (or of a and b)
  bias     int64 attribute of matmul_wt_bias cases: 1 if a "bias" dataset is there
  expr     string attribute: the torch expression that made "out"
  seed, p  string attributes of dropout cases: torch.manual_seed's argument
           (decimal) and the probability as Python's repr()
  training int64 attribute of dropout_module cases: 1 in training mode, 0 in eval
  broadcast string attribute of mul_broadcast / div_broadcast cases: the
           shape of b against a (rows, n): "column" (rows, 1), "row" (1, n),
           "scalar" (), "same" (rows, n)
The root attribute "cases" lists the group names, one per line, in order;
the root also records the torch version, config, BLAS and CPU capability.

Sizes: every n (or K) from 1 to 70 for the kernels whose order depends on
the length (sum, dot, softmax, matmul's K), plus longer sums that reach the
cascade's carries; numeric extremes for softmax and exp; the signs of zero
(products whose exact value is -0, rows of zeros: torch starts every k-sum
at +0); the N-D kernels of sections 3.5-3.6 (batched products on both sides
of the small-bmm threshold K*M*N < 400, broadcast products, softmax over a
middle axis, causal -inf patterns, masked_fill, dropout masks). Each case draws
its inputs from its own torch.Generator, seeded from the case name, so a
case does not change when others are added.

Import has no side effects; run as
    /usr/bin/python3 tools/export/kernel_cases.py fixtures/kernel_cases.h5
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

# The C kernel each "kernel" attribute names, and what the case holds:
KERNELS = {
    "matmul": "a (M,K) or (K,) @ b (K,N) -> out",
    "matmul_wt_bias": "x (M,K) or (K,) @ w (N,K).T [+ bias (N,)] -> out (M,N) or (N,)",
    "transpose": "a (M,N) -> out (N,M)",
    "dot": "a (n,) . b (n,) -> out ()",
    "sum": "x (n,) -> out ()",
    "sum_rows": "x (rows,n) -> out (rows,), sum(dim=-1)",
    "div_scalar": "x (n,) / s () -> out (n,)",
    "mul_scalar": "x (n,) * s () -> out (n,)",
    "exp": "x (n,) -> out (n,)",
    "add_scaled": "out (d,) = 0; out += w[i] * x[i] for i < T; w (T,), x (T,d)",
    "softmax_rows": "x (rows,n) or (n,) -> out, softmax over the last dim",
    "bmm": "a (B,M,K) @ b (B,K,N) -> out (B,M,N); sizes B, M, K, N",
    "matmul_nd": "a @ b with a 3-D or 4-D, b 2-D, 3-D or 4-D (batch axes of 1 broadcast) -> out; "
                 "sizes M, K, N, B (matrices in out), a_ndim/a_dim*, b_ndim/b_dim*",
    "softmax_dim": "x (outer,n,inner) -> out, torch.softmax over the middle axis; sizes outer, n, inner",
    "softmax_rows_nd": "x 3-D or 4-D -> out, torch.softmax(x, dim=-1); sizes rows (all but the last axis), n, "
                       "ndim/dim*",
    "mul_broadcast": "a (rows,n) * b -> out (rows,n); b as the broadcast attribute says; sizes rows, n",
    "div_broadcast": "a (rows,n) / b -> out (rows,n); b as the broadcast attribute says; sizes rows, n",
    "masked_fill": "x (b,T,T) or (b,h,T,T), mask (T,T) of 0/1 -> out = x.masked_fill(mask.bool(), -inf); "
                   "sizes T, ndim/dim*",
    "sum_rows_keepdim": "x 2-D or 3-D -> out (..., 1) = x.sum(dim=-1, keepdim=True); sizes rows, n, ndim/dim*",
    "dropout": "torch.manual_seed(seed); out = nn.Dropout(p)(x) in training mode; noise (the mask torch drew: "
               "0 or 1/(1-p)), next (the torch.rand(1) drawn right after); sizes n, ndim/dim*; seed, p",
    "dropout_module": "torch.manual_seed(seed); d = nn.Dropout(p); d.train(training); out = d(x); next (the "
                      "torch.rand(1) drawn right after: where the module left the generator); sizes n, "
                      "ndim/dim*; seed, p, training",
}

ALL_N = list(range(1, 71))
SPECIAL = [1, 2, 3, 6, 7, 8, 9, 16, 17, 33, 64, 70]
KINDS = ("normal", "rand", "wide")

BOOK_INPUTS = [[0.43, 0.15, 0.89],  # Your     (x^1)
               [0.55, 0.87, 0.66],  # journey  (x^2)
               [0.57, 0.85, 0.64],  # starts   (x^3)
               [0.22, 0.58, 0.33],  # with     (x^4)
               [0.77, 0.25, 0.10],  # one      (x^5)
               [0.05, 0.80, 0.55]]  # step     (x^6)


def _gen(name):
    # crc32, not hash(): Python salts str hashes per process.
    return torch.Generator().manual_seed(zlib.crc32(name.encode()))


def _draw(g, shape, kind):
    """Random float32 inputs. "wide" spreads magnitudes over 2^-12..2^12 with
    random signs, so that any difference in summation order shows up."""
    if kind == "normal":
        return torch.randn(*shape, generator=g)
    if kind == "rand":
        return torch.rand(*shape, generator=g)
    e = torch.randint(-12, 13, tuple(shape), generator=g).to(torch.float32)
    return torch.randn(*shape, generator=g) * torch.pow(2.0, e)


class _Case:
    def __init__(self, name, kernel, expr, inputs, out, **sizes):
        assert kernel in KERNELS, kernel
        self.name, self.kernel, self.expr = name, kernel, expr
        self.inputs, self.out, self.sizes = inputs, out, sizes
        self.extra = {}  # more outputs besides "out" (dropout's noise and next draw)
        for k, t in inputs.items():
            # What the C reads is a fresh contiguous array; torch must have
            # computed from the same layout (its paths can depend on strides).
            assert t.stride() == torch.empty(t.shape).stride(), (name, k, t.stride())


def _matmul_cases():
    cases = []
    # K from 1 to 70 (the summation length), M and N cycling through small sizes.
    triples = [(1 + k % 7, k, 1 + (3 * k) % 9) for k in ALL_N]
    triples += [(1, 1, 1), (6, 3, 2), (6, 2, 6), (2, 6, 3), (7, 9, 8), (8, 8, 8), (9, 17, 16),
                (16, 33, 17), (17, 64, 9), (3, 70, 33), (33, 7, 64), (64, 16, 2)]
    for i, (M, K, N) in enumerate(triples):
        name = f"matmul_{M}x{K}x{N}"
        if any(c.name == name for c in cases):
            continue
        g, kind = _gen(name), KINDS[i % 3]
        a, b = _draw(g, (M, K), kind), _draw(g, (K, N), kind)
        cases.append(_Case(name, "matmul", "a @ b", {"a": a, "b": b}, a @ b, M=M, K=K, N=N))
    # x_2 @ W_query: a 1-D row times a matrix.
    for i, K in enumerate(SPECIAL):
        N = [2, 3, 1, 6, 9, 17][i % 6]
        name = f"matvec_{K}x{N}"
        g, kind = _gen(name), KINDS[i % 3]
        x, w = _draw(g, (K,), kind), _draw(g, (K, N), kind)
        cases.append(_Case(name, "matmul", "x @ W (x 1-D)", {"a": x, "b": w}, x @ w, M=1, K=K, N=N))
    # queries @ keys.T, nn.Linear without and with bias.
    for i, K in enumerate(SPECIAL):
        M, N = [6, 1, 7, 9, 2, 17][i % 6], [6, 2, 3, 8, 16, 1][i % 6]
        for variant in ("matmul_t", "linear", "linear_bias"):
            name = f"{variant}_{M}x{K}x{N}"
            g, kind = _gen(name), KINDS[i % 3]
            x, w = _draw(g, (M, K), kind), _draw(g, (N, K), kind)
            inputs = {"x": x, "w": w}
            if variant == "matmul_t":
                out, expr = x @ w.T, "x @ w.T"
            elif variant == "linear":
                out, expr = F.linear(x, w), "F.linear(x, w) (nn.Linear, bias=False)"
            else:
                inputs["bias"] = _draw(g, (N,), kind)
                out, expr = F.linear(x, w, inputs["bias"]), "F.linear(x, w, bias) (nn.Linear)"
            cases.append(_Case(name, "matmul_wt_bias", expr, inputs, out, M=M, K=K, N=N,
                               bias=int("bias" in inputs)))
    book = torch.tensor(BOOK_INPUTS)
    cases.append(_Case("matmul_book_inputs_at_inputs_T", "matmul_wt_bias", "inputs @ inputs.T",
                       {"x": book, "w": book}, book @ book.T, M=6, K=3, N=6, bias=0))
    # attn_scores_2 = inputs @ query: 2-D @ 1-D is torch.mv (sgemv 'T'), a dot
    # product per row, so the C runs it as query (1,K) @ inputs.T.
    cases.append(_Case("mv_book_inputs_at_query", "matmul_wt_bias", "inputs @ inputs[1] (2-D @ 1-D)",
                       {"x": book[1], "w": book}, book @ book[1], M=1, K=3, N=6, bias=0))
    for i, K in enumerate([1, 2, 3, 7, 8, 9, 17, 33, 70]):
        N = [6, 1, 9, 2, 17][i % 5]
        name = f"mv_{N}x{K}"
        g, kind = _gen(name), KINDS[i % 3]
        w, x = _draw(g, (N, K), kind), _draw(g, (K,), kind)
        cases.append(_Case(name, "matmul_wt_bias", "w @ x (2-D @ 1-D)", {"x": x, "w": w}, w @ x,
                           M=1, K=K, N=N, bias=0))
    for M, N in [(1, 1), (6, 2), (2, 6), (7, 9), (70, 3)]:
        name = f"transpose_{M}x{N}"
        a = _draw(_gen(name), (M, N), "normal")
        cases.append(_Case(name, "transpose", "a.T", {"a": a}, a.T, M=M, N=N))
    return cases


def _reduction_cases():
    cases = []
    for i, n in enumerate(ALL_N + [100, 1000]):
        name = f"dot_n{n}"
        g, kind = _gen(name), KINDS[i % 3]
        a, b = _draw(g, (n,), kind), _draw(g, (n,), kind)
        cases.append(_Case(name, "dot", "torch.dot(a, b)", {"a": a, "b": b}, torch.dot(a, b), n=n))
    # Past n = 512 the cascade carries level 0 into level 1, past 8192 into level 2.
    for i, n in enumerate(ALL_N + [71, 100, 127, 128, 511, 512, 513, 1000, 2049, 8200]):
        name = f"sum_n{n}"
        g, kind = _gen(name), KINDS[i % 3]
        x = _draw(g, (n,), kind)
        cases.append(_Case(name, "sum", "x.sum()", {"x": x}, x.sum(), n=n))
    for i, n in enumerate(ALL_N):
        rows = 1 + (5 * n) % 9
        name = f"sum_rows_{rows}x{n}"
        g, kind = _gen(name), KINDS[i % 3]
        x = _draw(g, (rows, n), kind)
        cases.append(_Case(name, "sum_rows", "x.sum(dim=-1)", {"x": x}, x.sum(dim=-1), rows=rows, n=n))
    book = torch.tensor(BOOK_INPUTS)
    s2 = book @ book[1]
    cases.append(_Case("sum_book_attn_scores_2", "sum", "(inputs @ inputs[1]).sum()", {"x": s2}, s2.sum(), n=6))
    w = torch.softmax(book @ book.T, dim=-1)
    cases.append(_Case("sum_rows_book_attn_weights", "sum_rows", "softmax(inputs @ inputs.T, -1).sum(dim=-1)",
                       {"x": w}, w.sum(dim=-1), rows=6, n=6))
    return cases


def _elementwise_cases():
    cases = []
    divisors = [("sqrt2", 2 ** 0.5), ("sqrt3", 3 ** 0.5), ("sqrt6", 6 ** 0.5), ("0.7", 0.7),
                ("third", 1 / 3)]
    for i, n in enumerate(SPECIAL):
        label, s = divisors[i % len(divisors)]
        name = f"div_scalar_n{n}_{label}"
        g, kind = _gen(name), KINDS[i % 3]
        x = _draw(g, (n,), kind)
        # The C kernel receives the divisor as float32: that is what torch
        # casts the Python float (a wrapped 0-d double) to.
        s32 = torch.tensor(s, dtype=torch.float32)
        cases.append(_Case(name, "div_scalar", f"x / {s!r} (Python float)", {"x": x, "s": s32}, x / s, n=n))
        name = f"div_tensor_n{n}"
        x = _draw(_gen(name), (n,), "rand")
        cases.append(_Case(name, "div_scalar", "x / x.sum() (0-d tensor)", {"x": x, "s": x.sum()},
                           x / x.sum(), n=n))
        name = f"mul_scalar_n{n}"
        x = _draw(_gen(name), (n,), KINDS[i % 3])
        factor = [8, 0.5, 3.7][i % 3]
        cases.append(_Case(name, "mul_scalar", f"x * {factor!r}",
                           {"x": x, "s": torch.tensor(factor, dtype=torch.float32)}, x * factor, n=n))
    book = torch.tensor(BOOK_INPUTS)
    scores = book @ book.T
    cases.append(_Case("div_scalar_book_scores_sqrt2", "div_scalar", "(inputs @ inputs.T)[1] / 2**0.5",
                       {"x": scores[1], "s": torch.tensor(2 ** 0.5, dtype=torch.float32)},
                       scores[1] / 2 ** 0.5, n=6))
    for i, n in enumerate(ALL_N):
        name = f"exp_n{n}"
        g = _gen(name)
        x = _draw(g, (n,), KINDS[i % 3]) * (1.0 if i % 2 else 20.0)
        cases.append(_Case(name, "exp", "torch.exp(x)", {"x": x}, torch.exp(x), n=n))
    # Every float32 range boundary of SLEEF's expf: clamps at -104 and 100, the
    # overflow and underflow thresholds, subnormals, zeros, infinities, NaN.
    b = lambda v: np.frombuffer(np.uint32(v).tobytes(), dtype=np.float32)[0]  # noqa: E731
    up = lambda v: np.nextafter(np.float32(v), np.float32(np.inf))  # noqa: E731
    dn = lambda v: np.nextafter(np.float32(v), np.float32(-np.inf))  # noqa: E731
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, b(1), b(0x807fffff), b(0x007fffff), b(0x80000001),
               -104.0, dn(-104.0), up(-104.0), 100.0, dn(100.0), up(100.0),
               88.72283, up(88.72283), dn(88.72283), -87.33655, -103.97208, -103.27893,
               1.0, -1.0, 0.5, 1e-8, -1e-8, 3e38, -3e38, 1e-30]
    x = torch.tensor(np.array(special, dtype=np.float32))
    cases.append(_Case("exp_specials", "exp", "torch.exp(x)", {"x": x}, torch.exp(x), n=x.numel()))
    grid = torch.linspace(-105.0, 101.0, 2061)
    cases.append(_Case("exp_grid_n2061", "exp", "torch.exp(torch.linspace(-105, 101, 2061))",
                       {"x": grid}, torch.exp(grid), n=grid.numel()))
    # context_vec += attn_weights[i] * x_i, from zeros.
    for i, (T, d) in enumerate([(6, 2), (6, 3), (1, 1), (2, 9), (3, 17), (7, 8), (8, 33), (9, 70),
                                (16, 6), (17, 7), (33, 2), (70, 16)]):
        name = f"add_scaled_T{T}_d{d}"
        g, kind = _gen(name), KINDS[i % 3]
        w = torch.softmax(_draw(g, (T,), kind), dim=0)
        x = _draw(g, (T, d), kind)
        ctx = torch.zeros(d)
        for j, x_j in enumerate(x):
            ctx += w[j] * x_j
        cases.append(_Case(name, "add_scaled", "ctx = zeros(d); for i: ctx += w[i] * x[i]",
                           {"w": w, "x": x}, ctx, T=T, d=d))
    return cases


def _softmax_cases():
    cases = []
    for i, n in enumerate(ALL_N + [100, 128, 1000]):
        name = f"softmax_row_n{n}"
        g, kind = _gen(name), KINDS[i % 3]
        x = _draw(g, (3, n), kind) * (1.0, 4.0, 0.25)[i % 3]
        cases.append(_Case(name, "softmax_rows", "torch.softmax(x, dim=-1)", {"x": x},
                           torch.softmax(x, dim=-1), rows=3, n=n))
    for n in [1, 6, 9]:
        name = f"softmax_1d_n{n}"
        x = _draw(_gen(name), (n,), "normal")
        cases.append(_Case(name, "softmax_rows", "torch.softmax(x, dim=0) (1-D)", {"x": x},
                           torch.softmax(x, dim=0), rows=1, n=n))
    book = torch.tensor(BOOK_INPUTS)
    s = book @ book.T
    cases.append(_Case("softmax_book_attn_scores", "softmax_rows", "torch.softmax(inputs @ inputs.T, dim=-1)",
                       {"x": s}, torch.softmax(s, dim=-1), rows=6, n=6))

    # Numeric extremes. Huge scores: differences overflow to -inf, exp gives 0.
    inf, nan = float("inf"), float("nan")
    for scale, label in [(1e4, "1e4"), (1e6, "1e6"), (1e20, "1e20"), (1e37, "1e37"), (3e38, "3e38")]:
        for n in [6, 9, 17, 70]:
            name = f"softmax_extreme_scale{label}_n{n}"
            x = (_draw(_gen(name), (4, n), "normal") * scale).clamp(-3.4e38, 3.4e38)
            x[3] = torch.tensor([(-1.0) ** j * scale for j in range(n)])
            cases.append(_Case(name, "softmax_rows", "torch.softmax(x, dim=-1)", {"x": x},
                               torch.softmax(x, dim=-1), rows=4, n=n))

    def extreme(label, rows):
        n = len(rows[0])
        x = torch.tensor(rows, dtype=torch.float32)
        cases.append(_Case(f"softmax_extreme_{label}", "softmax_rows", "torch.softmax(x, dim=-1)",
                           {"x": x}, torch.softmax(x, dim=-1), rows=len(rows), n=n))

    for n in [1, 6, 9, 17]:
        r = _draw(_gen(f"softmax_extreme_n{n}"), (3, n), "normal").tolist()
        extreme(f"pinf_n{n}", [r[0][:n // 2] + [inf] + r[0][n // 2 + 1:], [inf] * n,
                               [inf if j % 3 == 0 else v for j, v in enumerate(r[1])]])
        extreme(f"ninf_n{n}", [r[0][:n // 2] + [-inf] + r[0][n // 2 + 1:],
                               [-inf if j % 2 else v for j, v in enumerate(r[1])],
                               [-inf] * (n - 1) + [r[2][-1]]])
        extreme(f"all_neginf_n{n}", [[-inf] * n])
        extreme(f"nan_n{n}", [r[0][:n // 2] + [nan] + r[0][n // 2 + 1:], [nan] * n,
                              [nan if j == n - 1 else v for j, v in enumerate(r[2])]])
    extreme("single", [[0.0], [5.0], [-3e38], [3e38], [inf], [-inf], [nan], [-0.0]])
    extreme("mixed_n8", [[inf, -inf, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                         [-inf, -inf, -inf, -inf, -inf, -inf, -inf, 1e-45],
                         [3e38, -3e38, 3e38, -3e38, 3e38, -3e38, 3e38, -3e38]])
    extreme("const_huge_n9", [[3e38] * 9, [-3e38] * 9, [1e30] * 9])
    return cases


def _shape_attrs(prefix, shape):
    d = {f"{prefix}ndim": len(shape)}
    for i, v in enumerate(shape):
        d[f"{prefix}dim{i}"] = v
    return d


def _bmm_cases():
    cases = []
    # (M, K, N): below, at and above K*M*N = 400 (torch's naive small-bmm loop
    # against one sgemm per matrix), and sizes straddling 8.
    triples = [(1, 1, 1), (2, 3, 4), (6, 2, 6), (6, 6, 2), (9, 7, 6), (3, 7, 19), (6, 6, 11), (5, 8, 10),
               (4, 10, 10), (1, 401, 1), (12, 5, 7), (7, 8, 9), (8, 8, 8), (9, 8, 7), (8, 9, 8),
               (16, 17, 9), (33, 16, 8), (2, 64, 3), (17, 3, 33), (1, 1, 400)]
    for i, (M, K, N) in enumerate(triples):
        B = 1 + i % 4
        name = f"bmm_{B}x{M}x{K}x{N}"
        g, kind = _gen(name), KINDS[i % 3]
        a, b = _draw(g, (B, M, K), kind), _draw(g, (B, K, N), kind)
        cases.append(_Case(name, "bmm", "torch.bmm(a, b) (a @ b, 3-D)", {"a": a, "b": b}, torch.bmm(a, b),
                           B=B, M=M, K=K, N=N))
    return cases


def _matmul_nd_cases():
    cases = []

    def add(name, a, b, expr):
        out = a @ b
        M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
        sizes = dict(M=M, K=K, N=N, B=out.numel() // (M * N))
        sizes.update(_shape_attrs("a_", tuple(a.shape)))
        sizes.update(_shape_attrs("b_", tuple(b.shape)))
        cases.append(_Case(name, "matmul_nd", expr, {"a": a, "b": b}, out, **sizes))

    for i, (sa, sb) in enumerate([
            # 3-D @ 3-D (CausalAttention: queries @ keys.transpose(1, 2), weights @ values)
            ((2, 6, 2), (2, 2, 6)), ((2, 6, 6), (2, 6, 2)), ((1, 1, 1), (1, 1, 1)), ((3, 9, 8), (3, 8, 9)),
            ((4, 17, 3), (4, 3, 17)), ((2, 33, 33), (2, 33, 16)), ((3, 5, 70), (3, 70, 2)),
            # 4-D @ 4-D (MultiHeadAttention), some with a batch axis of 1 broadcast
            ((2, 2, 6, 1), (2, 2, 1, 6)), ((1, 2, 3, 4), (1, 2, 4, 3)), ((1, 12, 9, 8), (1, 12, 8, 9)),
            ((2, 3, 7, 5), (2, 3, 5, 7)), ((2, 1, 6, 4), (1, 3, 4, 6)), ((1, 4, 5, 3), (3, 1, 3, 8)),
            ((3, 2, 8, 8), (1, 2, 8, 8)), ((1, 1, 9, 17), (2, 4, 17, 9)), ((2, 4, 16, 16), (2, 1, 16, 3)),
            # 3-D @ 2-D (x @ W of a batch)
            ((2, 6, 3), (3, 2)), ((4, 9, 8), (8, 9)), ((1, 17, 64), (64, 16)), ((3, 1, 5), (5, 1))]):
        name = "matmul_nd_" + "x".join(map(str, sa)) + "_at_" + "x".join(map(str, sb))
        g, kind = _gen(name), KINDS[i % 3]
        add(name, _draw(g, sa, kind), _draw(g, sb, kind), "a @ b")
    # The book's In [37]: a @ a.transpose(2, 3)
    a = torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573], [0.8993, 0.0390, 0.9268, 0.7388],
                        [0.7179, 0.7058, 0.9156, 0.4340]],
                       [[0.0772, 0.3565, 0.1479, 0.5331], [0.4066, 0.2318, 0.4545, 0.9737],
                        [0.4606, 0.5159, 0.4220, 0.5786]]]])
    add("matmul_nd_book_a_at_a_T", a, a.transpose(2, 3).clone(memory_format=torch.contiguous_format), "a @ a.transpose(2, 3) (ch03 In [37])")
    # A product with NaN and inf: 0 * inf gives NaN, nothing is skipped.
    nan, inf = float("nan"), float("inf")
    a = torch.tensor([[[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [nan, 1.0, -1.0]]])
    b = torch.tensor([[[inf, 1.0], [inf, -2.0], [0.5, -inf]]])
    add("matmul_nd_nonfinite", a, b, "a @ b (NaN, inf, 0 * inf)")
    return cases


def _neg_zero_cases():
    """Exact -0 products and rows of zeros: torch's sums start at +0, so a
    sum of -0 products is +0 (a kernel starting from the first product gives -0)."""
    cases = []
    # matmul: a row of zeros against negative columns, a row of -0 against positive ones
    for M, K, N in [(3, 1, 2), (4, 3, 5), (2, 9, 3), (3, 17, 2)]:
        name = f"matmul_negzero_{M}x{K}x{N}"
        g = _gen(name)
        a = _draw(g, (M, K), "normal")
        b = -_draw(g, (K, N), "rand") - 0.25  # every b negative
        a[0] = 0.0
        a[-1] = -0.0
        b[:, -1] = b[:, -1].abs()              # and one positive column
        cases.append(_Case(name, "matmul", "a @ b (a row of +0 and a row of -0; b negative but one column)",
                           {"a": a, "b": b}, a @ b, M=M, K=K, N=N))
        name = f"linear_negzero_{M}x{K}x{N}"
        # Standard strides (a (N, 1) view of stride (1, N) sends torch's addmm
        # to its own gemm, which adds into the bias: not the kernel under test).
        w = b.T.clone(memory_format=torch.contiguous_format)
        cases.append(_Case(name, "matmul_wt_bias", "F.linear(x, w) (rows of +0 and -0)", {"x": a, "w": w},
                           torch.nn.functional.linear(a, w), M=M, K=K, N=N, bias=0))
        name = f"linear_bias_negzero_{M}x{K}x{N}"
        bias = torch.tensor([-0.0] * (N - 1) + [0.0])
        cases.append(_Case(name, "matmul_wt_bias", "F.linear(x, w, bias) (rows of +-0, bias of -0)",
                           {"x": a, "w": w, "bias": bias}, torch.nn.functional.linear(a, w, bias),
                           M=M, K=K, N=N, bias=1))
        B = 2
        name = f"bmm_negzero_{B}x{M}x{K}x{N}"
        ab = torch.stack([a, -a])
        bb = torch.stack([b, b])
        cases.append(_Case(name, "bmm", "torch.bmm(a, b) (rows of +0 and -0)", {"a": ab, "b": bb},
                           torch.bmm(ab, bb), B=B, M=M, K=K, N=N))
    for n in [1, 2, 5, 8, 9, 17]:
        a = torch.full((n,), -0.0)
        b = torch.linspace(1.0, 2.0, n)
        cases.append(_Case(f"dot_negzero_n{n}", "dot", "torch.dot(a, b) (every product -0)", {"a": a, "b": b},
                           torch.dot(a, b), n=n))
    # Every length from 1 to 40: below one vector (n < 8) the sum's last step
    # is 0 + s; above, whole vectors and a tail. A sum that starts from its
    # first value instead of from +0 gives -0 here.
    for n in range(1, 41):
        x = torch.full((n,), -0.0)
        cases.append(_Case(f"sum_negzero_n{n}", "sum", "x.sum() (every value -0)", {"x": x}, x.sum(), n=n))
        x = torch.tensor([[-0.0] * n, [0.0] * n, [-0.0] * (n - 1) + [0.0]])
        cases.append(_Case(f"sum_rows_negzero_n{n}", "sum_rows", "x.sum(dim=-1) (rows of -0, +0, mixed)",
                           {"x": x}, x.sum(dim=-1), rows=3, n=n))
    return cases


def _softmax_nd_cases():
    cases = []
    inf, nan = float("inf"), float("nan")

    def sdim(name, x, expr="torch.softmax(x, dim=1) of x (outer, n, inner)"):
        outer, n, inner = x.shape
        cases.append(_Case(name, "softmax_dim", expr, {"x": x}, torch.softmax(x, dim=1),
                           outer=outer, n=n, inner=inner))

    for n in range(1, 41):
        outer, inner = 1 + n % 3, [1, 2, 3, 5, 7, 8, 9, 16, 17, 24, 33, 40][n % 12]
        name = f"softmax_dim_{outer}x{n}x{inner}"
        x = _draw(_gen(name), (outer, n, inner), KINDS[n % 3]) * (1.0, 4.0, 0.25)[n % 3]
        sdim(name, x)
    for inner in range(1, 41):
        outer, n = 1 + inner % 3, [1, 2, 3, 6, 8, 9, 13, 16, 17, 32][inner % 10]
        name = f"softmax_dim_{outer}x{n}x{inner}"
        if any(c.name == name for c in cases):
            continue
        sdim(name, _draw(_gen(name), (outer, n, inner), KINDS[inner % 3]))
    for outer, n, inner in [(1, 1024, 3), (2, 100, 64), (3, 64, 100), (1, 7, 1024)]:
        name = f"softmax_dim_{outer}x{n}x{inner}"
        sdim(name, _draw(_gen(name), (outer, n, inner), "normal"))
    # Causal -inf patterns softmaxed over the queries: the recorded output of
    # Exercise 3.2 (CausalAttention with dim=1 on (b, T, T) scores).
    for b, T in [(2, 6), (1, 1), (3, 9), (2, 17), (1, 33)]:
        name = f"softmax_dim_causal_{b}x{T}x{T}"
        x = _draw(_gen(name), (b, T, T), "normal")
        x = x.masked_fill(torch.triu(torch.ones(T, T), diagonal=1).bool(), -inf)
        sdim(name, x, "torch.softmax(x.masked_fill(triu(ones(T, T), 1).bool(), -inf), dim=1)")
    # Non-finite columns: all -inf (NaN), +inf, NaN, one finite value among -inf.
    for outer, n, inner in [(1, 6, 3), (2, 9, 8), (3, 17, 9), (1, 1, 10), (2, 8, 17)]:
        name = f"softmax_dim_nonfinite_{outer}x{n}x{inner}"
        x = _draw(_gen(name), (outer, n, inner), "normal")
        x[:, :, 0] = -inf                          # a column of -inf
        if inner > 1:
            x[:, n // 2, 1] = inf                  # +inf in a column
        if inner > 2:
            x[0, 0, 2] = nan                       # NaN in a column
        if inner > 3:
            x[:, :, 3] = -inf
            x[-1, n - 1, 3] = 0.5                  # one finite value among -inf
        if inner > 4:
            x[:, :, 4] = 3e38                      # huge
        sdim(name, x)

    def rows_nd(name, x, expr):
        cases.append(_Case(name, "softmax_rows_nd", expr, {"x": x}, torch.softmax(x, dim=-1),
                           rows=x.numel() // x.shape[-1], n=x.shape[-1], **_shape_attrs("", tuple(x.shape))))

    for shape in [(2, 6, 6), (1, 1, 1), (3, 9, 9), (2, 17, 17), (4, 33, 33), (1, 2, 6, 6), (2, 2, 6, 6),
                  (1, 12, 9, 9), (2, 3, 16, 16), (1, 4, 65, 65), (2, 2, 7, 7), (3, 5, 8, 8)]:
        name = "softmax_rows_nd_causal_" + "x".join(map(str, shape))
        T = shape[-1]
        x = _draw(_gen(name), shape, "normal") * 2
        x = x.masked_fill(torch.triu(torch.ones(T, T), diagonal=1).bool(), -inf)
        rows_nd(name, x, "torch.softmax(x.masked_fill(triu(ones(T, T), 1).bool(), -inf), dim=-1)")
    for shape in [(2, 4, 9), (1, 3, 5, 40)]:
        name = "softmax_rows_nd_" + "x".join(map(str, shape))
        rows_nd(name, _draw(_gen(name), shape, "wide"), "torch.softmax(x, dim=-1)")
    # Causal with fewer tokens than the context, and a row with a NaN
    x = _draw(_gen("softmax_rows_nd_nan"), (2, 2, 5, 5), "normal")
    x = x.masked_fill(torch.triu(torch.ones(5, 5), diagonal=1).bool(), -inf)
    x[1, 0, 3, 1] = nan
    rows_nd("softmax_rows_nd_causal_nan_2x2x5x5", x, "causal softmax, dim=-1, one NaN")
    return cases


def _broadcast_cases():
    cases = []
    nan, inf = float("nan"), float("inf")
    for i, (rows, n) in enumerate([(1, 1), (6, 6), (6, 1), (1, 6), (7, 9), (9, 8), (3, 17), (33, 2),
                                   (2, 33), (16, 16)]):
        for op in ("mul", "div"):
            for bk in ("column", "row", "scalar", "same"):
                name = f"{op}_broadcast_{bk}_{rows}x{n}"
                g, kind = _gen(name), KINDS[i % 3]
                a = _draw(g, (rows, n), kind)
                bshape = {"column": (rows, 1), "row": (1, n), "scalar": (), "same": (rows, n)}[bk]
                b = _draw(g, bshape or (1,), kind).reshape(bshape)
                if op == "mul" and bk == "same" and i % 2:
                    # a dropout-like mask: zeros (x * 0 is -0 for negative x) and a factor
                    b = (torch.rand(rows, n, generator=g) < 0.5).to(torch.float32) * 2.0
                if i == 1:
                    # zeros, -0, infinities and NaN on both sides (0 / 0, x / 0, inf * 0)
                    a = a.clone()
                    a.view(-1)[:6] = torch.tensor([0.0, -0.0, inf, -inf, nan, 1.0])
                    if b.dim():
                        b = b.clone()
                        b.view(-1)[:4] = torch.tensor([0.0, -0.0, inf, -1.0])[:b.numel()]
                out = a * b if op == "mul" else a / b
                cases.append(_Case(name, f"{op}_broadcast", f"a {'*' if op == 'mul' else '/'} b (b {bk})",
                                   {"a": a, "b": b}, out, rows=rows, n=n, broadcast=bk))
    return cases


def _masked_fill_cases():
    cases = []
    nan = float("nan")
    for i, shape in enumerate([(2, 6, 6), (1, 1, 1), (3, 9, 9), (2, 17, 17), (2, 2, 6, 6), (1, 12, 9, 9),
                               (2, 3, 8, 8), (1, 1, 33, 33)]):
        T = shape[-1]
        name = "masked_fill_" + "x".join(map(str, shape))
        g = _gen(name)
        x = _draw(g, shape, KINDS[i % 3])
        if i % 2:
            mask = (torch.rand(T, T, generator=g) < 0.4).to(torch.float32)  # any pattern
            expr = "x.masked_fill(mask.bool(), -torch.inf) (a random mask)"
        else:
            mask = torch.triu(torch.ones(T, T), diagonal=1)
            expr = "x.masked_fill(torch.triu(torch.ones(T, T), diagonal=1).bool(), -torch.inf)"
        if i == 2:
            x[0, 0, 5] = nan  # masked NaN becomes -inf; unmasked stays
            x[1, 5, 0] = nan
        out = x.masked_fill(mask.bool(), -torch.inf)
        cases.append(_Case(name, "masked_fill", expr, {"x": x, "mask": mask}, out, T=T,
                           **_shape_attrs("", shape)))
    return cases


def _sum_keepdim_cases():
    cases = []
    for i, shape in enumerate([(6, 6), (1, 1), (7, 9), (3, 17), (9, 8), (2, 70), (2, 6, 6), (3, 5, 33),
                               (1, 4, 8), (2, 3, 513)]):
        name = "sum_rows_keepdim_" + "x".join(map(str, shape))
        x = _draw(_gen(name), shape, KINDS[i % 3])
        if i == 0:  # the book's masked_simple: zeros above the diagonal
            x = torch.softmax(x, dim=-1) * torch.tril(torch.ones(6, 6))
        cases.append(_Case(name, "sum_rows_keepdim", "x.sum(dim=-1, keepdim=True)", {"x": x},
                           x.sum(dim=-1, keepdim=True), rows=x.numel() // shape[-1], n=shape[-1],
                           **_shape_attrs("", shape)))
    return cases


def _dropout_cases():
    cases = []
    shapes = [(6, 6), (7,), (3, 5), (2, 6, 6), (1, 12, 9, 9), (4, 8), (1,), (17,), (33, 3), (2, 2, 6, 6)]
    seeds = [123, 0, -1, 2**32 + 5, 42, 789, 7, -(2**63), 2**64 - 1, 2024]
    ps = [0.5, 0.1, 0.2, 1 / 3, 0.025]  # 0.025: 1 / (1 - p) rounds differently in float32 and in double
    for i, shape in enumerate(shapes):
        for j, p in enumerate(ps):
            seed = seeds[(i + 3 * j) % len(seeds)]
            name = f"dropout_{'x'.join(map(str, shape))}_p{p:.4g}_seed{seed}"
            x = _draw(_gen(name), shape, KINDS[(i + j) % 3])  # negative values too: x * 0 is -0
            torch.manual_seed(seed)
            state = torch.get_rng_state()
            out = torch.nn.functional.dropout(x, p, training=True)
            nxt = torch.rand(1)
            torch.set_rng_state(state)
            noise = torch.empty_like(x).bernoulli_(1 - p).div_(1 - p)
            assert torch.equal((x * noise).view(torch.int32), out.view(torch.int32)), name
            assert torch.equal(torch.rand(1), nxt), name
            c = _Case(name, "dropout", f"torch.manual_seed({seed}); nn.Dropout({p!r})(x); torch.rand(1)",
                      {"x": x}, out, n=x.numel(), seed=str(seed), p=repr(p), **_shape_attrs("", shape))
            c.extra = {"noise": noise, "next": nxt}
            cases.append(c)
    return cases


def _dropout_module_cases():
    """The module as a whole, where it draws nothing: p = 1 in training mode
    (input * 0: signed zeros, NaN from NaN and from inf), p = 0 and eval mode
    (the input itself); and two masks, for the module's own drawing path."""
    special = torch.tensor([1.5, -2.0, 0.0, -0.0, float("nan"), float("inf"), -float("inf"), -1e-30, 3e38])
    cases = []
    for i, (shape, p, training) in enumerate([((9,), 1.0, 1), ((3, 9), 1.0, 1), ((2, 2, 9), 1.0, 1),
                                              ((1,), 1.0, 1), ((9,), 0.0, 1), ((9,), 0.5, 0), ((9,), 1.0, 0),
                                              ((3, 9), 0.5, 1), ((2, 6, 6), 0.1, 1)]):
        seed = [123, 0, -1, 42, 789, 7, 2**64 - 1, 5, 11][i]
        name = f"dropout_module_{'x'.join(map(str, shape))}_p{p:g}_train{training}_seed{seed}"
        n = 1
        for d in shape:
            n *= d
        x = _draw(_gen(name), shape, KINDS[i % 3])
        flat = x.view(-1)
        flat[: min(n, 9)] = special[: min(n, 9)]
        torch.manual_seed(seed)
        module = torch.nn.Dropout(p)
        module.train(bool(training))
        out = module(x)
        nxt = torch.rand(1)
        c = _Case(name, "dropout_module", f"torch.manual_seed({seed}); nn.Dropout({p!r}).train({bool(training)})(x);"
                  " torch.rand(1)", {"x": x}, out, n=n, seed=str(seed), p=repr(p), training=training,
                  **_shape_attrs("", shape))
        c.extra = {"next": nxt}
        cases.append(c)
    return cases


def _cases():
    return (_matmul_cases() + _reduction_cases() + _elementwise_cases() + _softmax_cases()
            + _neg_zero_cases() + _bmm_cases() + _matmul_nd_cases() + _softmax_nd_cases() + _broadcast_cases()
            + _masked_fill_cases() + _sum_keepdim_cases() + _dropout_cases() + _dropout_module_cases())


def export(path):
    """Writes every case to the HDF5 file at path (overwriting it); returns the count."""
    cases = _cases()
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    with h5py.File(path, "w", libver="earliest") as f:
        for k, v in case_files.provenance().items():
            f.attrs[k] = v
        f.attrs["command"] = "tools/export/kernel_cases.py"
        for c in cases:
            grp = case_files.group(f, c.name)
            grp.attrs["kernel"] = c.kernel
            grp.attrs["expr"] = c.expr
            for k, v in c.sizes.items():
                grp.attrs[k] = v if isinstance(v, str) else np.int64(v)
            for k, t in c.inputs.items():
                case_files.put(grp, k, t, "input")
            case_files.put(grp, "out", c.out, "output")
            for k, t in c.extra.items():
                case_files.put(grp, k, t, "output")
        f.attrs["cases"] = "\n".join(names)
    return len(cases)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: kernel_cases.py OUT.h5")
    print(f"{sys.argv[1]}: {export(os.path.abspath(sys.argv[1]))} cases")
