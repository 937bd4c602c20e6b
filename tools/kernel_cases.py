"""kernel_cases.py: what PyTorch 1.13 computes for each kernel of lib/kernels.h,
for tests/test_kernels.c.

Writes fixtures/kernel_cases.h5: one group per case, holding
  float32 datasets, shaped like the torch tensors (0-d as a SCALAR dataspace),
           each with a string attribute "role": "input" or "output"; the
           output is always "out", torch's result
  kernel   string attribute: which C kernel the case exercises (see KERNELS)
  M, K, N, n, rows, T, d
           int64 attributes: the sizes the kernel is called with
  bias     int64 attribute of matmul_wt_bias cases: 1 if a "bias" dataset is there
  expr     string attribute: the torch expression that made "out"
The root attribute "cases" lists the group names, one per line, in order;
the root also records the torch version, config, BLAS and CPU capability.

Sizes: every n (or K) from 1 to 70 for the kernels whose order depends on
the length (sum, dot, softmax, matmul's K), plus longer sums that reach the
cascade's carries; numeric extremes for softmax and exp. Each case draws
its inputs from its own torch.Generator, seeded from the case name, so a
case does not change when others are added.

Import has no side effects; run as
    /usr/bin/python3 tools/kernel_cases.py fixtures/kernel_cases.h5
"""

import os
import re
import sys
import zlib

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


def _cases():
    return _matmul_cases() + _reduction_cases() + _elementwise_cases() + _softmax_cases()


def _provenance():
    config = torch.__config__.show()
    m = re.search(r"CPU capability usage: (\S+)", config)
    blas = re.search(r"BLAS_INFO=([^,\s]+)", config)
    return {"torch_version": str(torch.__version__), "torch_config": config,
            "cpu_capability": m.group(1) if m else "unknown",
            "blas": f"BLAS_INFO={blas.group(1) if blas else 'unknown'}"}


def _group(parent, name):
    # No creation times anywhere, so two runs give byte-identical files.
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    return h5py.Group(h5py.h5g.create(parent.id, name.encode(), gcpl=gcpl))


def _put(grp, name, tensor, role):
    a = np.array(tensor.detach().to(torch.float32).contiguous().numpy(), dtype=np.float32, order="C")
    ds = grp.create_dataset(name, data=a, track_times=False)
    ds.attrs["role"] = role


def export(path):
    """Writes every case to the HDF5 file at path (overwriting it); returns the count."""
    cases = _cases()
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    with h5py.File(path, "w", libver="earliest") as f:
        for k, v in _provenance().items():
            f.attrs[k] = v
        f.attrs["command"] = "tools/kernel_cases.py"
        for c in cases:
            grp = _group(f, c.name)
            grp.attrs["kernel"] = c.kernel
            grp.attrs["expr"] = c.expr
            for k, v in c.sizes.items():
                grp.attrs[k] = np.int64(v)
            for k, t in c.inputs.items():
                _put(grp, k, t, "input")
            _put(grp, "out", c.out, "output")
        f.attrs["cases"] = "\n".join(names)
    return len(cases)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: kernel_cases.py OUT.h5")
    print(f"{sys.argv[1]}: {export(os.path.abspath(sys.argv[1]))} cases")
