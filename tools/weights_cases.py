#!/usr/bin/python3
"""Writes the cases of the `weights` suite into a folder (fixtures/weights).

    /usr/bin/python3 tools/weights_cases.py fixtures/weights
    /usr/bin/python3 tools/weights_cases.py --check fixtures/weights   (regen / weights_cases)

For each case, a chapter and one of its modules (by the name its tensors
have in --dump): the module is made as the notebook makes it, then a
state_dict other than the book's (each parameter drawn uniform in [-1, 1)
after torch.manual_seed(7); the buffers as the module made them) is saved
by torch.save into NAME.pth and loaded back with
`module.load_state_dict(torch.load(NAME.pth))`; the chapter runs on, and
NAME.h5 is its fixture as tools/export_fixtures.py writes one (the same
dataset names as the chapter's --dump): the inputs and the draws the
notebook made (what the chapter reads without --seed), and the outputs and
gradients torch computed with the loaded state_dict. cases.tsv lists them:
`NAME CHAPTER MODULE ARG`, ARG the chapter's --weights value (FILE for the
chapter's first module, MODULE=FILE for another).

Deterministic: torch.save's zip archive (torch 1.13) and the HDF5 files are
the same bytes every run; --check writes them into a temporary folder and
compares every file with the committed one (exit 77, SKIP, without torch).
"""
import filecmp
import os
import sys
import tempfile

sys.dont_write_bytecode = True
TOOLS = os.path.dirname(os.path.abspath(__file__))
# The reference BLAS, whatever Debian's alternatives say (tools/reference_blas.py).
sys.path.insert(0, TOOLS)
from reference_blas import use_reference_blas  # noqa: E402

use_reference_blas()

try:
    import torch
    import h5py  # noqa: F401  (export.write)
except ImportError:
    print("SKIP: no torch or h5py for /usr/bin/python3 (Debian's python3-torch, python3-h5py)")
    sys.exit(77)

sys.path.insert(0, TOOLS)
from export.run import Run  # noqa: E402
from export.variants import default_inputs, run_chapter  # noqa: E402
from export.write import new_file, write_fixture  # noqa: E402

# NAME, chapter, module, and whether --weights names it (MODULE=FILE) or not.
CASES = [
    ("sa_v1", "ch03_4_2_self_attention_v1", "sa_v1", False),
    ("sa_v2", "ch03_4_2_self_attention_v2", "sa_v2", False),
    ("ca", "ch03_5_3_causal_attention", "ca", False),
    ("wrapper", "ch03_6_1_multihead_wrapper", "mha", False),
    ("wrapper_exercise_3_2", "ch03_6_1_multihead_wrapper", "exercise_3_2.mha", True),
    ("mha", "ch03_6_2_multihead_attention", "mha", False),
]

CHECK = len(sys.argv) > 2 and sys.argv[1] == "--check"
COMMITTED = sys.argv[2] if CHECK else None
OUT = tempfile.mkdtemp() if CHECK else (sys.argv[1] if len(sys.argv) > 1 else "fixtures/weights")
os.makedirs(OUT, exist_ok=True)


def other_state_dict(m):
    """m.state_dict() with every parameter drawn anew (uniform in [-1, 1),
    after torch.manual_seed(7)), the buffers as they are; the generator's
    state is left as it was, so the chapter's later draws are the notebook's."""
    state = torch.get_rng_state()
    torch.manual_seed(7)
    params = dict(m.named_parameters())
    sd = m.state_dict()
    for key in sd:
        if key in params:
            sd[key] = torch.empty_like(sd[key]).uniform_(-1.0, 1.0)
    torch.set_rng_state(state)
    return sd


def make(name, chapter, module, named):
    pth = os.path.join(OUT, name + ".pth")
    original = Run.module
    loaded = []

    def module_then_load(run, mname, m, **kw):
        m = original(run, mname, m, **kw)  # the draws, as the notebook made them
        if mname == module:
            torch.save(other_state_dict(m), pth)
            m.load_state_dict(torch.load(pth))  # strict
            loaded.append(mname)
        return m

    Run.module = module_then_load
    try:
        run = run_chapter(chapter, default_inputs(chapter))
    finally:
        Run.module = original
    assert loaded == [module], (name, loaded)
    arg = f"{module}={name}.pth" if named else f"{name}.pth"
    command = f"tools/weights_cases.py: {chapter} --weights {arg}"
    with new_file(os.path.join(OUT, name + ".h5")) as f:
        write_fixture(f, run, "weights", f"no transcript: {chapter} with {module}.load_state_dict(torch.load("
                      f"\"{name}.pth\"))", command)
    return f"{name} {chapter} {module} {arg}\n"


def bad_cases():
    """State_dicts that CausalAttention(3, 2, 6, 0.0) refuses, each saved by
    torch.save as bad_NAME.pth; bad.tsv says what the refusal must say: the
    words of torch's own load_state_dict error (its lines joined with
    blanks), or, for a mask other than the module's (torch takes it, litattn
    makes the mask itself), litattn's."""
    import re
    from export.ch03_5 import CausalAttention
    torch.manual_seed(7)
    ca = CausalAttention(3, 2, 6, 0.0)
    biased = CausalAttention(3, 2, 6, 0.0, qkv_bias=True)
    wide = CausalAttention(4, 2, 6, 0.0)
    sd = ca.state_dict()
    missing = sd.copy()
    del missing["W_key.weight"]
    wrong_shape = sd.copy()
    wrong_shape["W_query.weight"] = wide.state_dict()["W_query.weight"]
    other_mask = sd.copy()
    other_mask["mask"] = torch.tril(torch.ones(6, 6), diagonal=-1)
    out = []
    for name, bad in (("missing_key", missing), ("unexpected_key", biased.state_dict()),
                      ("wrong_shape", wrong_shape), ("other_mask", other_mask)):
        torch.save(bad, os.path.join(OUT, f"bad_{name}.pth"))
        try:
            CausalAttention(3, 2, 6, 0.0).load_state_dict(torch.load(os.path.join(OUT, f"bad_{name}.pth")))
            words = "expected the causal mask the module makes"
            assert name == "other_mask", name
        except RuntimeError as e:
            words = re.sub(r"\s*\n\t", " ", str(e)).strip()
        out.append(f"bad_{name}\t{words}\n")
    with open(os.path.join(OUT, "bad.tsv"), "w") as f:
        f.write("# tools/weights_cases.py: NAME<tab>WORDS: what ch03_5_3_causal_attention --weights NAME.pth must "
                "say (tests/error_check_weights.c)\n")
        f.writelines(out)


bad_cases()
lines = [make(*c) for c in CASES]
with open(os.path.join(OUT, "cases.tsv"), "w") as f:
    f.write("# NAME CHAPTER MODULE ARG: tools/weights_cases.py (tests/meson.build's `weights` suite)\n")
    f.writelines(lines)

if CHECK:
    names = sorted(os.listdir(OUT))
    committed = sorted(n for n in os.listdir(COMMITTED))
    bad = [n for n in sorted(set(names) | set(committed))
           if n not in names or n not in committed or not filecmp.cmp(os.path.join(OUT, n), os.path.join(COMMITTED, n),
                                                                        shallow=False)]
    for n in bad:
        print(f"FAIL {n}: not the bytes tools/weights_cases.py makes")
    print(f"{len(names)} files made again, {len(bad)} differ")
    sys.exit(1 if bad else 0)
print(f"wrote {len(lines)} cases into {OUT}")
