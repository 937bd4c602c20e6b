#!/usr/bin/python3
"""Writes the cases of the `weights` suite into a folder (fixtures/weights).

    /usr/bin/python3 tools/cases/weights_cases.py fixtures/weights
    /usr/bin/python3 tools/cases/weights_cases.py --check fixtures/weights   (regen / weights_cases)
    /usr/bin/python3 tools/cases/weights_cases.py --check-node fixtures/weights   (regen / weights_cases_node)

For each case, a chapter and one of its modules (by the name its tensors
have in --dump): the module is made as the notebook makes it, then a
state_dict other than the book's (each parameter drawn uniform in [-1, 1)
after torch.manual_seed(7); the buffers as the module made them) is saved
by torch.save into NAME.pth and loaded back with
`module.load_state_dict(torch.load(NAME.pth))`; the chapter runs on, and
NAME.h5 is its fixture as tools/export/export_fixtures.py writes one (the same
dataset names as the chapter's --dump): the inputs and the draws the
notebook made (what the chapter reads without --seed), and the outputs and
gradients torch computed with the loaded state_dict. cases.tsv lists them:
`NAME CHAPTER MODULE ARG`, ARG the chapter's --weights value (FILE for the
chapter's first module, MODULE=FILE for another).

Deterministic: torch.save's zip archive (torch 1.13) and the HDF5 files are
the same bytes every run; --check writes them into a temporary folder and
compares every file with the committed one (exit 77, SKIP, without torch),
but the data-loading chapter's cases, which need node and js-tiktoken (their
token ids): --check-node makes and compares those (exit 77, SKIP, saying
why, without them).
"""
import filecmp
import os
import sys
import tempfile

sys.dont_write_bytecode = True
TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tools/: the packages export and cases
sys.path[0] = TOOLS
# The reference BLAS, whatever Debian's alternatives say (tools/export/reference_blas.py).
from export.reference_blas import use_reference_blas  # noqa: E402

use_reference_blas()

try:
    import torch
    import h5py  # noqa: F401  (export.write)
except ImportError:
    print("SKIP: no torch or h5py for /usr/bin/python3 (Debian's python3-torch, python3-h5py)")
    sys.exit(77)

from export.run import Digest, Run  # noqa: E402
from export.variants import default_inputs, run_chapter  # noqa: E402
from export.write import new_file, write_fixture  # noqa: E402

# The bonus notebook at a size that keeps each file a few KiB: embed_dim 24
# in 4 heads (head_dim 6: sqrt(6) is no power of two), 7 tokens, a batch of 2.
BONUS = "ch03_bonus_mha_implementations"
BONUS_SIZE = {"batch_size": 2, "context_len": 7, "embed_dim": 24, "num_heads": 4}
# The data-loading notebook with 8 features (its two nn.Embedding tables stay
# digests), 2 heads.
DATA = "ch03_mha_data_loading"
DATA_SIZE = {"output_dim": 8, "num_heads": 2}

# NAME, chapter, module, whether --weights names it (MODULE=FILE) or not, settings.
CASES = [
    ("sa_v1", "ch03_4_2_self_attention_v1", "sa_v1", False, None),
    ("sa_v2", "ch03_4_2_self_attention_v2", "sa_v2", False, None),
    ("ca", "ch03_5_3_causal_attention", "ca", False, None),
    ("wrapper", "ch03_6_1_multihead_wrapper", "mha", False, None),
    ("wrapper_exercise_3_2", "ch03_6_1_multihead_wrapper", "exercise_3_2.mha", True, None),
    ("mha", "ch03_6_2_multihead_attention", "mha", False, None),
    ("data_loading_variant_a", DATA, "variant_a.mha", True, DATA_SIZE),
    ("data_loading_variant_b", DATA, "variant_b.mha", True, DATA_SIZE),
] + [(f"bonus_{m}", BONUS, m, True, BONUS_SIZE) for m in (
    "mha_ch03_wrapper", "mha_ch03", "mha_combined_qkv", "mha_einsum", "mha_pytorch_scaled",
    "mha_pytorch_sdpa_no_flash", "mha_pytorch_class_default", "mha_pytorch_class_noweights")]

# The cases whose chapter needs node and js-tiktoken (--check-node).
NODE_CHAPTERS = (DATA,)

# --check --only NAME DIR: the case NAME alone, with the refusals' cases and
# cases.tsv (tests/meson.build's default run: one case; --setup full, all).
ONLY = None
if len(sys.argv) > 4 and sys.argv[1] == "--check" and sys.argv[2] == "--only":
    ONLY = sys.argv[3]
    del sys.argv[2:4]
    if ONLY not in [c[0] for c in CASES] or ONLY in {c[0] for c in CASES if c[1] in NODE_CHAPTERS}:
        print(f"weights_cases.py: --only {ONLY}: expected a case of CASES without node, found none", file=sys.stderr)
        sys.exit(2)
CHECK = len(sys.argv) > 2 and sys.argv[1] in ("--check", "--check-node")
NODE_ONLY = CHECK and sys.argv[1] == "--check-node"
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


def make(name, chapter, module, named, settings):
    pth = os.path.join(OUT, name + ".pth")
    original = Run.module
    loaded = []

    def module_then_load(run, mname, m, **kw):
        m = original(run, mname, m, **kw)  # the draws, as the notebook made them
        if mname == module:
            torch.save(other_state_dict(m), pth)
            m.load_state_dict(torch.load(pth))  # strict
            loaded.append(mname)
            # A parameter the fixture holds as a digest (the chapter draws it
            # itself) is the one the run uses: the file's.
            for key, p in m.named_parameters():
                if isinstance(run.data[f"{mname}.{key}"][0], Digest):
                    run.keep(f"{mname}.{key}", p, "weight", digest=True)
        return m

    Run.module = module_then_load
    try:
        run = run_chapter(chapter, default_inputs(chapter), settings)
    finally:
        Run.module = original
    assert loaded == [module], (name, loaded)
    command = f"tools/cases/weights_cases.py: {chapter} --weights {arg_of(name, module, named)}"
    with new_file(os.path.join(OUT, name + ".h5")) as f:
        write_fixture(f, run, "weights", f"no transcript: {chapter} with {module}.load_state_dict(torch.load("
                      f"\"{name}.pth\"))", command)


def arg_of(name, module, named):
    """The chapter's --weights value."""
    return f"{module}={name}.pth" if named else f"{name}.pth"


def bad_cases():
    """State_dicts that a module refuses, each saved by torch.save as
    bad_NAME.pth; bad.tsv says, for each, the chapter, the module (- for
    the chapter's first: --weights FILE), the fixture it runs on (- for the
    chapter's own; else a file of this folder) and what the refusal must
    say: the words of torch's own load_state_dict error (its lines joined
    with blanks), or, for a mask other than the module's (torch takes it,
    litattn makes the mask itself), litattn's. CausalAttention(3, 2, 6, 0.0):
    a missing key, unexpected keys, a wrong shape, another mask. The bonus
    notebook's MHAPyTorchClass at the size of its cases above: the state_dict
    of its nn.MultiheadAttention alone (multihead_attn.state_dict(), keys
    without the prefix); MHAPyTorchSDPAWithoutFlash: a bool mask other than
    triu(ones, 1)."""
    import re
    from export.ch03_5 import CausalAttention
    from export.ch03_bonus import MHAPyTorchClass, MHAPyTorchSDPAWithoutFlash
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
    E, H, T = BONUS_SIZE["embed_dim"], BONUS_SIZE["num_heads"], BONUS_SIZE["context_len"]

    def pytorch_class():
        return MHAPyTorchClass(d_in=E, d_out=E, num_heads=H, context_length=T, dropout=0.0, qkv_bias=False)

    def sdpa_no_flash():
        return MHAPyTorchSDPAWithoutFlash(d_in=E, d_out=E, num_heads=H, context_length=T, dropout=0.0,
                                          qkv_bias=False)
    bool_mask = sdpa_no_flash().state_dict()
    assert bool_mask["mask"].dtype == torch.bool
    bool_mask["mask"] = torch.tril(torch.ones(T, T), diagonal=-1).bool()
    ch = "ch03_5_3_causal_attention"
    cases = (
        ("missing_key", missing, ch, "-", "-", lambda: CausalAttention(3, 2, 6, 0.0)),
        ("unexpected_key", biased.state_dict(), ch, "-", "-", lambda: CausalAttention(3, 2, 6, 0.0)),
        ("wrong_shape", wrong_shape, ch, "-", "-", lambda: CausalAttention(3, 2, 6, 0.0)),
        ("other_mask", other_mask, ch, "-", "-", lambda: CausalAttention(3, 2, 6, 0.0)),
        ("mha_pytorch_class_inner_keys", pytorch_class().multihead_attn.state_dict(), BONUS,
         "mha_pytorch_class_default", "bonus_mha_pytorch_class_default.h5", pytorch_class),
        ("mha_pytorch_sdpa_no_flash_mask", bool_mask, BONUS, "mha_pytorch_sdpa_no_flash",
         "bonus_mha_pytorch_sdpa_no_flash.h5", sdpa_no_flash),
    )
    out = []
    for name, bad, chapter, module, fixture, make_module in cases:
        torch.save(bad, os.path.join(OUT, f"bad_{name}.pth"))
        try:
            make_module().load_state_dict(torch.load(os.path.join(OUT, f"bad_{name}.pth")))
            words = "expected the causal mask the module makes"
            assert name.endswith("mask"), name
        except RuntimeError as e:
            words = re.sub(r"\s*\n\t", " ", str(e)).strip()
        out.append(f"bad_{name}\t{chapter}\t{module}\t{fixture}\t{words}\n")
    with open(os.path.join(OUT, "bad.tsv"), "w") as f:
        f.write("# tools/cases/weights_cases.py: NAME<tab>CHAPTER<tab>MODULE<tab>FIXTURE<tab>WORDS: what CHAPTER "
                "--weights [MODULE=]NAME.pth [--fixture FIXTURE] must say (tests/error_check_weights.c)\n")
        f.writelines(out)


def check(mine):
    """Compares the files made (those `mine` says are this check's) with the committed ones."""
    names = sorted(n for n in os.listdir(OUT) if mine(n))
    committed = sorted(n for n in os.listdir(COMMITTED) if mine(n))
    bad = [n for n in sorted(set(names) | set(committed))
           if n not in names or n not in committed or not filecmp.cmp(os.path.join(OUT, n), os.path.join(COMMITTED, n),
                                                                        shallow=False)]
    for n in bad:
        print(f"FAIL {n}: not the bytes tools/cases/weights_cases.py makes")
    print(f"{len(names)} files made again, {len(bad)} differ")
    sys.exit(1 if bad else 0)


node_files = {f"{c[0]}.{ext}" for c in CASES if c[1] in NODE_CHAPTERS for ext in ("h5", "pth")}
if NODE_ONLY:
    from export.ch03_mha import JsTiktokenMissing
    try:
        for c in CASES:
            if c[1] in NODE_CHAPTERS:
                make(*c)
    except JsTiktokenMissing as e:
        print(f"SKIP: the data-loading chapter's cases need node and js-tiktoken: {e}")
        sys.exit(77)
    check(lambda n: n in node_files)

bad_cases()
for c in CASES:
    if (not CHECK or c[1] not in NODE_CHAPTERS) and ONLY in (None, c[0]):
        make(*c)
with open(os.path.join(OUT, "cases.tsv"), "w") as f:
    f.write("# NAME CHAPTER MODULE ARG: tools/cases/weights_cases.py (tests/meson.build's `weights` suite)\n")
    f.writelines(f"{name} {chapter} {module} {arg_of(name, module, named)}\n"
                 for name, chapter, module, named, _ in CASES)
if ONLY:
    print(f"(--only {ONLY}: 1 of the {len(CASES)} cases; without --only, every one but node's)")
    check(lambda n: n.startswith("bad") or n == "cases.tsv" or n in (ONLY + ".h5", ONLY + ".pth"))
if CHECK:
    check(lambda n: n not in node_files)
print(f"wrote {len(CASES)} cases into {OUT}")
