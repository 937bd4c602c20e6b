#!/usr/bin/python3
"""pretty_cases.py: what IPython displays for a state_dict, for tests/test_pretty.c.

Writes fixtures/pretty_cases.txt: for each case an OrderedDict of float32
tensors (torch 1.13), and IPython.lib.pretty.pretty() of it: the text/plain
a notebook records for a cell whose value is a module's state_dict()
(understanding-buffers.ipynb In [12] and In [13]). Lines:

    case NAME
    entry KEY NDIM DIM... BITS...   one per tensor, in order; BITS are the
                                    float32 values' bit patterns in hex, C order
    text LINE                       one per line of IPython's text
    end

    /usr/bin/python3 tools/cases/pretty_cases.py fixtures/pretty_cases.txt
Needs Debian's python3-ipython and python3-torch.
"""

import struct
import sys
from collections import OrderedDict

import IPython
import torch
from IPython.lib.pretty import pretty


def cases():
    torch.manual_seed(123)
    lin = lambda *s: torch.rand(*s) * 2 - 1  # noqa: E731
    ca = OrderedDict([("W_query.weight", lin(2, 3)), ("W_key.weight", lin(2, 3)), ("W_value.weight", lin(2, 3))])
    mask = torch.triu(torch.ones(6, 6), diagonal=1)
    with_buffer = OrderedDict([("mask", mask)] + list(ca.items()))
    bias = OrderedDict([("W_query.weight", lin(2, 3)), ("W_query.bias", lin(2)), ("W_key.weight", lin(2, 3)),
                        ("W_key.bias", lin(2))])
    return [
        ("book_without_buffer", ca),
        ("book_with_buffer", with_buffer),
        ("qkv_bias", bias),  # a short tuple stays on its line once the list has broken
        ("short", OrderedDict([("a", torch.tensor([1.0])), ("b", torch.tensor([2.0, 3.0]))])),  # fits: one line
        ("wide_1d", OrderedDict([("W_query.bias", torch.rand(9)), ("W_key.bias", torch.rand(9))])),
        ("scalar", OrderedDict([("x", torch.tensor(1.5))])),
        ("empty", OrderedDict()),
        ("several_short", OrderedDict([(f"layer{i}.b", torch.rand(3)) for i in range(4)])),  # past 79: list breaks
        ("wide_2d", OrderedDict([("W_out.weight", torch.rand(3, 12))])),
        # One line of 79 columns fits; of 80 it breaks.
        ("fits_in_79", OrderedDict([("k" * 26, torch.tensor([0.25, 0.5, 0.75]))])),
        ("breaks_at_80", OrderedDict([("k" * 27, torch.tensor([0.25, 0.5, 0.75]))])),
    ]


def main(argv):
    out = [f"# made by tools/cases/pretty_cases.py: IPython {IPython.__version__}, torch {torch.__version__}"]
    for name, sd in cases():
        out.append(f"case {name}")
        for key, t in sd.items():
            t = t.contiguous()
            bits = [f"{struct.unpack('<I', struct.pack('<f', v))[0]:08x}" for v in t.flatten().tolist()]
            out.append(" ".join(["entry", key, str(t.dim())] + [str(d) for d in t.shape] + bits))
        out += ["text " + line for line in pretty(sd).split("\n")]
        out.append("end")
    with open(argv[0], "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
