"""printer_cases.py: what PyTorch 1.13 prints, for tests/test_print.c.

Writes fixtures/printer_cases.h5: one group per case, holding
  tensor   float32 dataset, the exact values (rank 0 as a scalar dataspace,
           0-element cases as empty datasets); ranks 0 to 4
  repr     string attribute: repr() of the tensor, from real torch, with its
           suffix if any (see grad_fn and requires_grad)
  size     string attribute: str(tensor.shape)
  kind     "tensor", or "parameter" when repr is that of
           torch.nn.Parameter(t, requires_grad=bool(requires_grad))
  grad_fn  string attribute: the name torch prints in the repr's
           "grad_fn=<...>" suffix ("SoftmaxBackward0"), "" for none
  requires_grad  integer attribute: 1 if the tensor requires grad (a leaf
           with no grad_fn then prints "requires_grad=True"), else 0
  ndim, dim0, dim1, dim2, dim3   integer attributes: the shape (dims past
           ndim are 0), so a reader that refuses empty datasets can still
           build them
The root attribute "cases" lists the group names, one per line, in order.

A suffix goes on the repr's last line after ", ", or on a new line indented
like the rows when that line would pass 80 columns (torch's _add_suffixes);
the suffix cases exercise both. Where autograd makes the values easily, the
case is real autograd (torch.softmax of a tensor that requires grad); for
other grad_fn names the tensor gets that node from an operation that leaves
every value's bits as they are (x * 1.0, x.view(shape), ...), checked.

Import has no side effects; run as
    /usr/bin/python3 tools/export/printer_cases.py fixtures/printer_cases.h5
"""

import os
import struct
import sys

if not __package__:  # run as a script: tools/, where the package `export` is, first on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from export import case_files  # noqa: E402  (provenance, groups and datasets, as every case file writes them)
import h5py
import numpy as np
import torch


def _f32(bits):
    """The float32 with the given bit pattern (for a nan with its sign bit set)."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _book_inputs():
    # "Your journey starts with one step", the book's six 3-d embeddings.
    return torch.tensor(
        [[0.43, 0.15, 0.89],
         [0.55, 0.87, 0.66],
         [0.57, 0.85, 0.64],
         [0.22, 0.58, 0.33],
         [0.77, 0.25, 0.10],
         [0.05, 0.80, 0.55]]
    )


def _book_cases():
    """The tensors the notebooks print (sections 3.3 and 3.4), computed the book's way."""
    inputs = _book_inputs()
    cases = {}
    cases["book_inputs"] = inputs
    cases["book_inputs_row"] = inputs[1]

    # 3.3: attention without trainable weights
    scores_2 = inputs @ inputs[1]
    tmp = scores_2 / scores_2.sum()
    cases["book_attn_scores_2"] = scores_2
    cases["book_naive_weights_2"] = tmp
    cases["book_naive_sum"] = tmp.sum()                      # tensor(1.0000)
    cases["book_softmax_sum"] = torch.softmax(scores_2, dim=0).sum()  # tensor(1.)
    attn_scores = inputs @ inputs.T
    attn_weights = torch.softmax(attn_scores, dim=-1)
    cases["book_attn_scores"] = attn_scores
    cases["book_attn_weights"] = attn_weights
    cases["book_context_vecs"] = attn_weights @ inputs

    # 3.4 with torch.manual_seed(123): W_query, W_key, W_value as printed parameters
    torch.manual_seed(123)
    w_query = torch.rand(3, 2)
    w_key = torch.rand(3, 2)
    w_value = torch.rand(3, 2)
    x_2 = inputs[1]
    query_2, key_2 = x_2 @ w_query, x_2 @ w_key
    keys, values = inputs @ w_key, inputs @ w_value
    scores = query_2 @ keys.T
    weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
    cases["book_query_2"] = query_2
    cases["book_attn_score_22"] = query_2.dot(key_2)        # tensor(1.8524)
    cases["book_attn_scores_query_2"] = scores
    cases["book_attn_weights_2"] = weights
    cases["book_context_vec_2"] = weights @ values
    cases["book_keys"] = keys

    # SelfAttention_v2 with torch.manual_seed(789): nn.Linear weights, negatives
    torch.manual_seed(789)
    lin = [torch.nn.Linear(3, 2, bias=False) for _ in range(3)]  # query, key, value
    with torch.no_grad():
        q, k, v = (l(inputs) for l in lin)
        w = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1)
        cases["book_v2_context_vecs"] = w @ v                 # [[-0.0739,  0.0713], ...]
    return cases, {"parameter": w_query, "parameter_w_key": w_key, "parameter_w_value": w_value}


def _cases():
    """(name, tensor, kind) for every case, in a fixed order."""
    g = torch.Generator().manual_seed(20240611)
    nan, inf = float("nan"), float("inf")
    t = torch.tensor
    cases = {
        # integer mode: "%.0f" plus '.', width counts the '.'
        "int_scalar_one": t(1.0),
        "int_one_zero": t([1.0, 0.0]),
        "int_mixed_signs": t([-3.0, 12.0, 0.0, 7.0]),
        "int_matrix": t([[1.0, -20.0, 300.0], [4.0, 5.0, -6.0]]),
        "int_ratio_1000": t([1.0, 1000.0]),                  # ratio not > 1000: stays int
        "int_ratio_1001_sci": t([1.0, 1001.0]),              # ratio > 1000: sci
        "int_1e8": t([1.0e8, 2.0e5]),                        # max == 1e8 exactly: stays int
        "int_above_1e8_sci": t([123456792.0, 2.0e5]),        # max > 1e8: sci
        "int_big_float32_sci": t([3.0e38, -1.0e37]),
        "int_tiny_ints_not_sci": t([1.0, 2.0, 3.0]),
        # fixed "%.4f"
        "fixed_rand": torch.rand(3, 4, generator=g),
        "fixed_rounding_ties": t([0.12345, 1.99995, -2.00005, 0.99995, 0.5, 0.03125]),
        "fixed_wide_1e8": t([100000.5, 1.0e8]),              # ratio 999.995, max == 1e8: fixed
        "fixed_ratio_edge": t([0.5, 500.0]),                 # ratio exactly 1000: fixed
        # scientific "%.4e"
        "sci_min_small": t([1.0e-5, 0.5]),
        "sci_ratio": t([0.001, 2.5]),                        # ratio 2500
        "sci_ratio_edge": t([0.5, 500.25]),                  # ratio 1000.5
        "sci_max_big": t([1.5e8, 2.0e8 + 0.5]),
        "sci_negative": t([[-1.0e-6, 2.0e-3], [3.5, -4.25e2]]),
        "sci_min_float32_1e4": t([1.0e-4, 0.05]),            # float32(1e-4) < 1e-4 in double
        "sci_subnormal": t([1.0e-45, -1.0e-40, 1.0]),
        # negatives right-aligned to the widest value
        "neg_right_aligned": t([[-0.0739, 0.0713], [0.0748, -10.0703]]),
        # wrapping: 1-d at (80 - 7) // (width + 2) per line, 2-d rows at (80 - 8) // (width + 2)
        "wrap_1d_fixed": torch.randn(40, generator=g),
        "wrap_1d_sci": torch.randn(25, generator=g) * 1.0e-6,
        "wrap_1d_int": torch.arange(100.0),
        "wrap_1d_exact_line": torch.rand(8, generator=g),    # 73 // 8 = 9 per line: no wrap at 8
        "wrap_1d_one_more": torch.rand(10, generator=g),     # 9 then 1
        "wrap_2d_rows": torch.randn(3, 20, generator=g),
        "wrap_2d_sci_rows": torch.randn(2, 9, generator=g) * 1.0e9,
        "wrap_2d_one_col": torch.randn(5, 1, generator=g),
        # rank 0
        "scalar_pos": t(1.8524),
        "scalar_neg": t(-0.0739),
        "scalar_neg_int": t(-5.0),
        "scalar_sci": t(1.5e-7),
        "scalar_nan": t(nan),
        "scalar_inf": t(inf),
        "scalar_neg_inf": t(-inf),
        "scalar_zero": t(0.0),
        "scalar_neg_zero": t(-0.0),
        # nan / inf: never counted in the width, no '.' in int mode
        "nonfinite_fixed": t([nan, 1.5, inf, -inf, -2.25]),
        "nonfinite_int": t([nan, 1.0, inf, -inf]),
        "nonfinite_sci": t([[nan, 1.0e-6], [-inf, 3.0]]),
        "nonfinite_only": t([nan, inf, -inf]),
        "nonfinite_neg_nan_bits": t([_f32(0xFFC00000), 0.25]),  # glibc would print "-nan"
        "nonfinite_wide_int": t([inf, -inf, 1.0, 2.0]),       # "-inf" wider than max_width 2
        # zeros
        "zeros_matrix": torch.zeros(2, 3),
        "zeros_vector": torch.zeros(4),
        "neg_zero_int": t([-0.0, 0.0, 1.0]),
        "neg_zero_fixed": t([-0.0, 0.5]),
        "neg_zero_sci": t([-0.0, 1.0e-5]),
        # summarised: more than 1000 elements, 3 edge items, format from shown values only
        "summarised_1d": torch.randn(2000, generator=g),
        "summarised_2d": torch.randn(40, 40, generator=g),
        "summarised_cols_only": torch.randn(2, 600, generator=g),
        "summarised_rows_only": torch.randn(1001, 1, generator=g),
        "summarised_int_arange_sci": torch.arange(2000.0),   # shown 0..2, 1997..1999: ratio 1999
        "summarised_1d_sci": torch.randn(2000, generator=g) * 1.0e-5,
        "not_summarised_1000": torch.randn(1000, generator=g),
        "summarised_hidden_tiny": torch.cat([torch.full((3,), 0.5), torch.full((1000,), 1.0e-7),
                                             torch.full((3,), 0.25)]),  # hidden 1e-7 ignored
        "summarised_hidden_nan": torch.cat([torch.full((3,), 2.0), torch.full((1000,), nan),
                                            torch.full((3,), -1.0)]),
        # empty
        "empty_1d": torch.zeros(0),
        "empty_0x3": torch.zeros(0, 3),
        "empty_3x0": torch.zeros(3, 0),
        "empty_0x0": torch.zeros(0, 0),
    }
    book, params = _book_cases()
    cases.update(book)
    out = [(name, ten, "tensor") for name, ten in cases.items()]
    out += [(name, ten, "parameter") for name, ten in params.items()]
    out.append(("parameter_summarised", torch.randn(50, 30, generator=g), "parameter"))
    out += [(name, ten, "tensor") for name, ten in _nd_cases().items()]
    out += _suffix_cases()
    return out


def _nd_cases():
    """3-D and 4-D tensors: blocks separated by blank lines, rows indented by depth."""
    g = torch.Generator().manual_seed(20250101)
    nan, inf = float("nan"), float("inf")
    t = torch.tensor
    causal = torch.softmax(torch.randn(2, 6, 6, generator=g).masked_fill(
        torch.triu(torch.ones(6, 6), diagonal=1).bool(), -inf), dim=-1)
    scores = torch.randn(1, 2, 4, 4, generator=g).masked_fill(
        torch.triu(torch.ones(4, 4), diagonal=1).bool(), -inf)
    negzero = torch.randn(2, 3, 4, generator=g)
    negzero[0, 1] = -0.0
    negzero[1, :, 2] = 0.0
    cases = {
        "nd3_fixed": torch.rand(2, 6, 2, generator=g),
        "nd3_neg": torch.randn(2, 3, 4, generator=g),
        "nd3_causal_weights": causal,                        # zeros above the diagonal
        "nd3_ninf_scores": torch.randn(2, 5, 5, generator=g).masked_fill(
            torch.triu(torch.ones(5, 5), diagonal=1).bool(), -inf),
        "nd3_nan": t([[[nan, 1.5], [0.25, -2.0]], [[inf, -inf], [nan, 0.0]]]),
        "nd3_negzero": negzero,
        "nd3_negzero_int": t([[[-0.0, 2.0], [0.0, 1.0]], [[-0.0, -0.0], [3.0, 0.0]]]),
        "nd3_int": torch.arange(24.0).reshape(2, 3, 4) - 7,
        "nd3_sci": torch.randn(2, 2, 3, generator=g) * 1.0e-6,
        "nd3_sci_big": torch.randn(3, 2, 2, generator=g) * 1.0e9,
        "nd3_wrap_rows": torch.randn(2, 2, 14, generator=g),   # rows wrap at 80 - 9
        "nd3_wrap_sci": torch.randn(2, 1, 9, generator=g) * 1.0e-7,
        "nd3_one_each": t([[[0.5]]]),
        "nd3_dropout_like": (torch.rand(2, 6, 6, generator=g) < 0.5).to(torch.float32) * 2.0,
        "nd3_mask_zero_rows": torch.zeros(2, 3, 3),
        "nd4_fixed": torch.rand(1, 2, 3, 4, generator=g),    # ch03 In [37]'s shape
        "nd4_heads": torch.randn(2, 2, 6, 1, generator=g),
        "nd4_scores_ninf": scores,
        "nd4_weights": torch.softmax(scores, dim=-1),
        "nd4_int": torch.arange(36.0).reshape(1, 3, 3, 4),
        "nd4_sci": torch.randn(2, 2, 2, 2, generator=g) * 1.0e5,
        "nd4_nan_negzero": t([[[[nan, -0.0], [0.125, -inf]]], [[[-0.0, 0.0], [inf, -1.5]]]]),
        "nd4_wrap_rows": torch.randn(1, 2, 2, 13, generator=g),  # rows wrap at 80 - 10
        "nd4_wrap_int": torch.arange(2 * 2 * 30.0).reshape(1, 2, 2, 30) * 1000,
        # summarised: more than 1000 elements, 3 edge items on every axis
        "nd3_summarised": torch.randn(2, 30, 30, generator=g),
        "nd3_summarised_tokens": torch.randn(1, 1024, 8, generator=g),
        "nd3_summarised_int": torch.arange(3 * 20 * 20.0).reshape(3, 20, 20),
        "nd3_summarised_sci": torch.randn(4, 17, 17, generator=g) * 1.0e-5,
        "nd3_summarised_ninf": torch.softmax(torch.randn(1, 40, 40, generator=g).masked_fill(
            torch.triu(torch.ones(40, 40), diagonal=1).bool(), -inf), dim=-1),
        "nd4_summarised": torch.randn(4, 3, 10, 10, generator=g),
        "nd4_summarised_heads": torch.randn(1, 12, 9, 10, generator=g),  # 1080 elements
        "nd4_not_summarised": torch.randn(1, 12, 9, 9, generator=g),     # 972 elements
        "nd4_summarised_nan": torch.cat([torch.full((1, 2, 6, 100), nan), torch.ones(1, 2, 6, 1)], dim=-1),
        "nd4_summarised_wide": torch.randn(2, 2, 2, 200, generator=g),
    }
    return cases


def _value_preserving(name):
    """An operation giving a tensor the grad_fn `name` without changing any bit."""
    return {
        "MulBackward0": lambda x: x * 1.0,
        "DivBackward0": lambda x: x / 1.0,
        "AddBackward0": lambda x: x + (-0.0),
        "MaskedFillBackward0": lambda x: x.masked_fill(torch.zeros(x.shape, dtype=torch.bool), 0.0),
        "CatBackward0": lambda x: torch.cat([x], dim=-1),
        "ViewBackward0": lambda x: x.view(x.shape),
        "UnsafeViewBackward0": lambda x: torch.ops.aten._unsafe_view(x, list(x.shape)),
    }[name]


def _with_grad_fn(values, name):
    leaf = values.clone().requires_grad_()
    out = _value_preserving(name)(leaf)
    got = type(out.grad_fn).__name__
    assert got == name, (name, got)
    assert torch.equal(out.detach().view(torch.int32), values.view(torch.int32)), name
    return out


def _suffix_cases():
    """(name, tensor with its autograd state, kind); repr(tensor) carries the suffix."""
    g = torch.Generator().manual_seed(20250202)
    inf = float("inf")
    out = []
    # Real autograd, as the chapters print them.
    x = torch.randn(2, 6, 6, generator=g).requires_grad_()
    out.append(("grad_softmax_3d", torch.softmax(x.masked_fill(
        torch.triu(torch.ones(6, 6), diagonal=1).bool(), -inf), dim=-1), "tensor"))
    w = torch.randn(2, 3, generator=g).requires_grad_()
    inputs = torch.tensor(_book_inputs().tolist())
    out.append(("grad_mm_book", inputs @ w.T, "tensor"))                     # MmBackward0
    b = torch.randn(2, generator=g).requires_grad_()
    out.append(("grad_addmm", torch.nn.functional.linear(inputs, w, b), "tensor"))
    out.append(("grad_linear_1d_bias", torch.nn.functional.linear(inputs[1], w, b), "tensor"))  # AddBackward0
    out.append(("grad_linear_1d", torch.nn.functional.linear(inputs[1], w), "tensor"))         # SqueezeBackward3
    batch = torch.stack((inputs, inputs), dim=0)
    out.append(("grad_linear_3d", torch.nn.functional.linear(batch, w), "tensor"))             # UnsafeViewBackward0
    out.append(("grad_linear_3d_bias", torch.nn.functional.linear(batch, w, b), "tensor"))     # ViewBackward0
    out.append(("grad_cat", torch.cat([torch.nn.functional.linear(batch, w)] * 2, dim=-1), "tensor"))
    out.append(("grad_softmax_1d", torch.softmax(torch.randn(6, generator=g).requires_grad_(), dim=0),
                "tensor"))
    out.append(("grad_sum_0d", torch.randn(6, generator=g).requires_grad_().sum(), "tensor"))  # SumBackward0
    out.append(("grad_dot_0d", torch.dot(inputs[0], w[0]), "tensor"))                         # DotBackward0
    mha = torch.randn(2, 2, 6, 1, generator=g).requires_grad_()
    out.append(("grad_softmax_4d", torch.softmax(mha @ mha.transpose(2, 3), dim=-1), "tensor"))
    # requires_grad=True on a leaf
    out.append(("leaf_requires_grad", torch.randn(3, 2, generator=g).requires_grad_(), "tensor"))
    out.append(("leaf_requires_grad_0d", torch.tensor(1.5).requires_grad_(), "tensor"))
    out.append(("leaf_requires_grad_3d", torch.rand(2, 2, 3, generator=g).requires_grad_(), "tensor"))
    out.append(("parameter_requires_grad", torch.nn.Parameter(torch.rand(3, 2, generator=g)), "parameter"))
    out.append(("parameter_requires_grad_2x768",
                torch.nn.Parameter(torch.rand(2, 768, generator=g) * 0.07 - 0.035), "parameter"))
    # Value-preserving nodes, and the suffix's line: each name on short and on
    # full last lines. The last line's length + 1 (torch counts the newline)
    # + ", " + the suffix is compared with 80.
    names = ["MulBackward0", "DivBackward0", "AddBackward0", "MaskedFillBackward0", "CatBackward0",
             "ViewBackward0", "UnsafeViewBackward0"]
    for i, name in enumerate(names):
        out.append((f"grad_{name}_short", _with_grad_fn(torch.randn(2, 3, generator=g), name), "tensor"))
        out.append((f"grad_{name}_full_1d", _with_grad_fn(-torch.rand(9, generator=g) - 0.5, name), "tensor"))
        out.append((f"grad_{name}_3d", _with_grad_fn(torch.randn(2, 2, 5 + i, generator=g), name), "tensor"))
        out.append((f"grad_{name}_4d", _with_grad_fn(torch.randn(1, 2, 2, 4 + i, generator=g), name), "tensor"))
    # Around the limit: a 1-D tensor whose single line grows by one element.
    for n in range(1, 10):
        v = _with_grad_fn(torch.rand(n, generator=g) + 1.0, "MulBackward0")
        out.append((f"grad_boundary_mul_n{n}", v, "tensor"))
        v = _with_grad_fn(torch.rand(n, generator=g) + 1.0, "MaskedFillBackward0")
        out.append((f"grad_boundary_maskedfill_n{n}", v, "tensor"))
    # Last lines of every length from 40 to 79 before the suffix: a 2-D
    # tensor whose last row ends in a value of chosen width.
    for n in range(3, 10):
        for name in ("SoftmaxBackward0", "UnsafeViewBackward0"):
            x = torch.rand(2, n, generator=g) * 9
            if name == "SoftmaxBackward0":
                v = torch.softmax(x.requires_grad_(), dim=-1)
            else:
                v = _with_grad_fn(x, name)
            out.append((f"grad_rows_{name}_n{n}", v, "tensor"))
    # Exactly at the limit: torch puts the suffix on the same line when
    # (last line's length + 2) + 2 + len(suffix) <= 80. One case each with
    # that sum 79, 80 (same line) and 81 (new line), for every name, on one
    # line and on the last of several.
    # Values of printed widths 2 ("3.") to 11 ("-1.5000e-06").
    widths = [3.0, 30.0, 300.0, -300.0, -3000.0, 0.125, -0.125, -10.5, -100.5, 1.5e-6, -1.5e-6]
    last = {}  # (rows, value, n) -> torch's last_line_len of the repr without suffix
    for rows in (1, 3):
        for value in widths:
            for n in range(1, 30):
                base = repr(torch.full((n,), value) if rows == 1 else torch.full((rows, n), value))[:-1]
                last[rows, value, n] = len(base) - base.rfind("\n") + 1
    for name in names:
        suffix = len(f"grad_fn=<{name}>")
        for target in (79, 80, 81):
            found = 0
            for rows in (1, 3):
                for value in widths:
                    hit = None
                    for n in range(1, 30):
                        if last[rows, value, n] + suffix + 2 == target:
                            hit = torch.full((n,), value) if rows == 1 else torch.full((rows, n), value)
                            break
                    if hit is not None:
                        out.append((f"grad_limit{target}_{name}_{rows}row", _with_grad_fn(hit, name), "tensor"))
                        found += 1
                        break
            assert found, (name, target)
    out.append(("grad_summarised", _with_grad_fn(torch.randn(1, 40, 40, generator=g), "MulBackward0"), "tensor"))
    out.append(("grad_nonfinite", _with_grad_fn(torch.tensor([[float("nan"), -inf, -0.0]]), "MaskedFillBackward0"),
                "tensor"))
    # Both placements must be there.
    reprs = [repr(t) for _, t, _ in out]
    assert any("\n" + " " * 7 + "grad_fn" in r or "\n       grad_fn" in r for r in reprs)
    assert any(", grad_fn=<" in r for r in reprs)
    return out


def export(path):
    """Writes every case to the HDF5 file at path (overwriting it)."""
    entries = _cases()
    names = [name for name, _, _ in entries]
    assert len(set(names)) == len(names), "duplicate case names"
    with h5py.File(path, "w", libver="earliest") as f:
        for name, shown, kind in entries:
            ten = shown.detach().to(torch.float32).contiguous()
            assert ten.dim() <= 4, name
            if kind == "parameter" and not isinstance(shown, torch.nn.Parameter):
                shown = torch.nn.Parameter(ten.clone(), requires_grad=False)
            grad_fn = type(shown.grad_fn).__name__ if shown.grad_fn is not None else ""
            grp = case_files.group(f, name)
            grp.create_dataset("tensor", data=ten.numpy(), dtype="<f4", track_times=False)
            grp.attrs["repr"] = repr(shown)
            grp.attrs["size"] = str(ten.shape)
            grp.attrs["kind"] = kind
            grp.attrs["grad_fn"] = grad_fn
            grp.attrs["requires_grad"] = np.int64(shown.requires_grad)
            dims = list(ten.shape) + [0, 0, 0, 0]
            grp.attrs["ndim"] = np.int64(ten.dim())
            for i in range(4):
                grp.attrs[f"dim{i}"] = np.int64(dims[i])
        f.attrs["cases"] = "\n".join(names)
        f.attrs["torch_version"] = str(torch.__version__)
    return len(entries)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: printer_cases.py OUT.h5")
    print(f"{sys.argv[1]}: {export(sys.argv[1])} cases")
