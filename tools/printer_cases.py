"""printer_cases.py: what PyTorch 1.13 prints, for tests/test_print.c.

Writes fixtures/printer_cases.h5: one group per case, holding
  tensor   float32 dataset, the exact values (rank 0 as a scalar dataspace,
           0-element cases as empty datasets)
  repr     string attribute: repr() of the tensor, from real torch
  size     string attribute: str(tensor.shape)
  kind     "tensor", or "parameter" when repr is that of
           torch.nn.Parameter(t, requires_grad=False)
  ndim, dim0, dim1   integer attributes: the shape (dims past ndim are 0),
           so a reader that refuses empty datasets can still build them
The root attribute "cases" lists the group names, one per line, in order.

Import has no side effects; run as
    /usr/bin/python3 tools/printer_cases.py fixtures/printer_cases.h5
"""

import struct
import sys

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
    return out


def export(path):
    """Writes every case to the HDF5 file at path (overwriting it)."""
    entries = _cases()
    with h5py.File(path, "w") as f:
        for name, ten, kind in entries:
            ten = ten.detach().to(torch.float32).contiguous()
            assert ten.dim() <= 2, name
            shown = torch.nn.Parameter(ten.clone(), requires_grad=False) if kind == "parameter" else ten
            grp = f.create_group(name)
            grp.create_dataset("tensor", data=ten.numpy(), dtype="<f4")
            grp.attrs["repr"] = repr(shown)
            grp.attrs["size"] = str(ten.shape)
            grp.attrs["kind"] = kind
            dims = list(ten.shape) + [0, 0]
            grp.attrs["ndim"] = np.int64(ten.dim())
            grp.attrs["dim0"] = np.int64(dims[0])
            grp.attrs["dim1"] = np.int64(dims[1])
        f.attrs["cases"] = "\n".join(name for name, _, _ in entries)
        f.attrs["torch_version"] = str(torch.__version__)
    return len(entries)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: printer_cases.py OUT.h5")
    print(f"{sys.argv[1]}: {export(sys.argv[1])} cases")
