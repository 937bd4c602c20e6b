#!/usr/bin/python3
"""Writes the cases of the `weights` suite into a folder (fixtures/weights).

    /usr/bin/python3 tools/cases/weights_cases.py fixtures/weights
    /usr/bin/python3 tools/cases/weights_cases.py --check fixtures/weights   (regen / weights_cases, --setup full)
    /usr/bin/python3 tools/cases/weights_cases.py --check --only ca fixtures/weights   (regen / weights_cases: one case)
    /usr/bin/python3 tools/cases/weights_cases.py --check-node fixtures/weights   (regen / weights_cases_node)

For each case, a chapter and one or more of its modules (by the names
their tensors have in --dump): each module is made as the notebook makes
it, then a state_dict other than the book's (each parameter drawn uniform
in [-1, 1) after torch.manual_seed(7); the buffers as the module made them)
is saved by torch.save into FILE.pth and loaded back with
`module.load_state_dict(torch.load(FILE.pth))`; the chapter runs on, and
NAME.h5 is its fixture as tools/export/export_fixtures.py writes one (the
same dataset names as the chapter's --dump): the inputs and the draws the
notebook made (what the chapter reads without --seed), and the outputs and
gradients torch computed with the loaded state_dicts. cases.tsv lists the
runs: `TEST CHAPTER NAME ARG...`, each ARG a --weights value, @ standing for
this folder (`@/ca.pth`, `exercise_3_2.mha=@/wrapper_exercise_3_2.pth`).
Two runs load two modules, NAME=FILE and the plain FILE in either order (the
NAME=FILE takes its module whichever comes first). Two more take a file
that torch.load reads as the same state_dict in another form: a training
checkpoint's entry (`@/training_checkpoint.pth:model_state_dict`) and the
dict of a module's named_parameters() (Parameters, not tensors).

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

# NAME (its fixture NAME.h5), chapter, {module: FILE} (each loaded from
# FILE.pth), settings.
WRAPPER = "ch03_6_1_multihead_wrapper"
CASES = [
    ("sa_v1", "ch03_4_2_self_attention_v1", {"sa_v1": "sa_v1"}, None),
    ("sa_v2", "ch03_4_2_self_attention_v2", {"sa_v2": "sa_v2"}, None),
    ("ca", "ch03_5_3_causal_attention", {"ca": "ca"}, None),
    ("wrapper", WRAPPER, {"mha": "wrapper"}, None),
    ("wrapper_exercise_3_2", WRAPPER, {"exercise_3_2.mha": "wrapper_exercise_3_2"}, None),
    ("wrapper_both", WRAPPER, {"mha": "wrapper", "exercise_3_2.mha": "wrapper_exercise_3_2"}, None),
    ("mha", "ch03_6_2_multihead_attention", {"mha": "mha"}, None),
    ("data_loading_variant_a", DATA, {"variant_a.mha": "data_loading_variant_a"}, DATA_SIZE),
    ("data_loading_variant_b", DATA, {"variant_b.mha": "data_loading_variant_b"}, DATA_SIZE),
] + [(f"bonus_{m}", BONUS, {m: f"bonus_{m}"}, BONUS_SIZE) for m in (
    "mha_ch03_wrapper", "mha_ch03", "mha_combined_qkv", "mha_einsum", "mha_pytorch_scaled",
    "mha_pytorch_sdpa_no_flash", "mha_pytorch_class_default", "mha_pytorch_class_noweights")]

# The chapters whose first module (chapter_begin's first name) a case loads
# by the plain --weights FILE; every other case names its module (NAME=FILE).
FIRST = {"ch03_4_2_self_attention_v1": "sa_v1", "ch03_4_2_self_attention_v2": "sa_v2",
         "ch03_5_3_causal_attention": "ca", WRAPPER: "mha", "ch03_6_2_multihead_attention": "mha"}


def runs():
    """[(TEST, CHAPTER, NAME, [ARG...])]: one run per case, FILE for its
    chapter's first module and MODULE=FILE for another; the case of two
    modules in both orders; and the other forms of a state_dict (a training
    checkpoint's entry, named_parameters()), on the fixtures of the cases
    whose state_dicts they hold."""
    out = []
    for name, chapter, modules, _ in CASES:
        args = [f"@/{f}.pth" if m == FIRST.get(chapter) and len(modules) == 1 else f"{m}=@/{f}.pth"
                for m, f in modules.items()]
        if len(modules) == 1:
            out.append((name, chapter, name, args))
        else:  # NAME=FILE for the first module, and the other by the plain FILE, in both orders
            plain = [f"@/{f}.pth" for m, f in modules.items() if m != FIRST[chapter]]
            named = [a for a in args if a.split("=")[0] == FIRST[chapter]]
            out.append((name, chapter, name, named + plain))
            out.append((f"{name}_reversed", chapter, name, plain + named))
    out.append(("training_checkpoint", "ch03_5_3_causal_attention", "ca", ["@/training_checkpoint.pth:model_state_dict"]))
    out.append(("sa_v2_named_parameters", "ch03_4_2_self_attention_v2", "sa_v2", ["@/sa_v2_named_parameters.pth"]))
    return out


# The cases whose chapter needs node and js-tiktoken (--check-node).
NODE_CHAPTERS = (DATA,)

# --check --only NAME DIR: the case NAME alone, with the refusals' cases and
# cases.tsv (tests/meson.build's default run: one case; --setup full, all).
ONLY = None
if len(sys.argv) == 5 and sys.argv[1] == "--check" and sys.argv[2] == "--only":
    ONLY = sys.argv[3]
    del sys.argv[2:4]
    if ONLY not in [c[0] for c in CASES] or ONLY in {c[0] for c in CASES if c[1] in NODE_CHAPTERS}:
        print(f"weights_cases.py: --only {ONLY}: expected a case of CASES without node, found none", file=sys.stderr)
        sys.exit(2)
if len(sys.argv) > 3 or (len(sys.argv) > 1 and sys.argv[1].startswith("-")
                         and not (len(sys.argv) == 3 and sys.argv[1] in ("--check", "--check-node"))):
    print("usage:\n" + __doc__.split("\n\n")[1], file=sys.stderr)
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


WRITTEN = {}  # FILE.pth -> its bytes, for a file that two cases write


def save(obj, stem):
    """torch.save(obj, FILE.pth); a file written twice must be the same bytes."""
    path = os.path.join(OUT, stem + ".pth")
    torch.save(obj, path)
    with open(path, "rb") as f:
        data = f.read()
    assert WRITTEN.setdefault(stem, data) == data, f"{stem}.pth written twice with other bytes"
    return path


def make(name, chapter, modules, settings):
    original = Run.module
    loaded = []

    def module_then_load(run, mname, m, **kw):
        m = original(run, mname, m, **kw)  # the draws, as the notebook made them
        if mname in modules:
            sd = other_state_dict(m)
            pth = save(sd, modules[mname])
            m.load_state_dict(torch.load(pth))  # strict
            loaded.append(mname)
            extra_files(name, m, sd)
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
    assert loaded == list(modules), (name, loaded)
    first_run = next(r for r in runs() if r[2] == name)
    command = f"tools/cases/weights_cases.py: {chapter} " + " ".join(f"--weights {a.replace('@/', '')}"
                                                                     for a in first_run[3])
    files = ", ".join(f"{m}.load_state_dict(torch.load(\"{f}.pth\"))" for m, f in modules.items())
    with new_file(os.path.join(OUT, name + ".h5")) as f:
        write_fixture(f, run, "weights", f"no transcript: {chapter} with {files}", command)


def extra_files(name, m, sd):
    """The same state_dict in the forms torch.load reads but the .pth reader
    does not take today: CausalAttention's inside a training checkpoint
    (chapter 5's {"model_state_dict", "optimizer_state_dict"}, and an epoch),
    and SelfAttention_v2's as dict(model.named_parameters())."""
    if name == "ca":
        from export.ch03_5 import CausalAttention
        state = torch.get_rng_state()
        model = CausalAttention(m.W_query.in_features, m.d_out, m.mask.shape[0], 0.0)
        model.load_state_dict(sd)
        opt = torch.optim.AdamW(model.parameters(), lr=0.0004, weight_decay=0.1)
        model(torch.rand(1, m.mask.shape[0], m.W_query.in_features)).sum().backward()
        opt.step()
        torch.set_rng_state(state)
        save({"model_state_dict": sd, "optimizer_state_dict": opt.state_dict(), "epoch": 3}, "training_checkpoint")
    if name == "sa_v2":
        save(dict(m.named_parameters()), "sa_v2_named_parameters")


def bad_cases():
    """State_dicts that a module refuses, each saved by torch.save as
    bad_NAME.pth; bad.tsv says, for each, the chapter, the --weights value
    (@ standing for the file), the fixture it runs on (- for the chapter's
    own; else a file of this folder), whose words the refusal must say and
    the words: torch's own load_state_dict error (its lines joined with
    blanks), or, where torch takes the file or says nothing to the point,
    litattn's. CausalAttention(3, 2, 6, 0.0): a missing key, unexpected
    keys, a wrong shape, a transposed weight (the same element count), every
    key with DataParallel's prefix `module.` and with torch.compile's
    `_orig_mod.`, another mask. The bonus notebook's MHAPyTorchClass at the
    size of its cases above: the state_dict of its nn.MultiheadAttention alone
    (multihead_attn.state_dict(), keys without the prefix);
    MHAPyTorchSDPAWithoutFlash: a bool mask other than triu(ones, 1).
    And what torch.load reads but a module cannot take as it is: a training
    checkpoint without its KEY (the reader names the key that holds the
    state_dict), `torch.save(model)` (the module's class,
    __main__.CausalAttention as a notebook's: the reader says to save its
    state_dict), and dict(model.named_parameters()) (Parameters:
    CausalAttention's mask is then missing, in torch's words)."""
    import __main__
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
    transposed = sd.copy()
    transposed["W_query.weight"] = sd["W_query.weight"].t().contiguous()  # (3, 2) where (2, 3) is expected
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

    def causal():
        return CausalAttention(3, 2, 6, 0.0)
    ch = "ch03_5_3_causal_attention"
    bonus_class = ("mha_pytorch_class_default=@", "bonus_mha_pytorch_class_default.h5")
    bonus_sdpa = ("mha_pytorch_sdpa_no_flash=@", "bonus_mha_pytorch_sdpa_no_flash.h5")
    # NAME, the object torch.save writes (None: a file made elsewhere), chapter, ARG, FIXTURE, the
    # module torch loads it into, and litattn's or the reader's words (None: torch's).
    cases = (
        ("missing_key", missing, ch, "@", "-", causal, None),
        ("unexpected_key", biased.state_dict(), ch, "@", "-", causal, None),
        ("wrong_shape", wrong_shape, ch, "@", "-", causal, None),
        ("transposed", transposed, ch, "@", "-", causal, None),
        ("module_prefix", {"module." + k: v for k, v in sd.items()}, ch, "@", "-", causal,
         ("litattn", "every key starting with 'module.' (a DataParallel model's state_dict)&strip the prefix"
                     "&model.module.state_dict()")),
        ("orig_mod_prefix", {"_orig_mod." + k: v for k, v in sd.items()}, ch, "@", "-", causal,
         ("litattn", "every key starting with '_orig_mod.' (a torch.compile'd model's state_dict)&strip the prefix"
                     "&model._orig_mod.state_dict()")),
        ("other_mask", other_mask, ch, "@", "-", causal, ("litattn", "expected the causal mask the module makes")),
        ("mha_pytorch_class_inner_keys", pytorch_class().multihead_attn.state_dict(), BONUS, *bonus_class,
         pytorch_class, None),
        ("mha_pytorch_sdpa_no_flash_mask", bool_mask, BONUS, *bonus_sdpa, sdpa_no_flash,
         ("litattn", "expected the causal mask the module makes")),
        ("training_checkpoint", None, ch, "@", "-", None,
         ("reader", "(a training checkpoint)&select it by its key&training_checkpoint.pth:model_state_dict")),
        ("whole_model", ca, ch, "@", "-", None,
         ("reader", "found __main__.CausalAttention&torch.save(model.state_dict(), PATH)")),
        ("named_parameters", dict(ca.named_parameters()), ch, "@", "-", causal, None),
    )
    out = []
    for name, obj, chapter, arg, fixture, make_module, words in cases:
        file = "training_checkpoint" if name.startswith("training_checkpoint") else f"bad_{name}"
        if name == "whole_model":  # pickled by reference, as a notebook's class: __main__.CausalAttention
            module = CausalAttention.__module__
            CausalAttention.__module__, __main__.CausalAttention = "__main__", CausalAttention
            try:
                save(obj, file)
            finally:
                CausalAttention.__module__ = module
                del __main__.CausalAttention
        elif obj is not None:
            save(obj, file)
        torch_words = None
        if make_module:
            try:
                make_module().load_state_dict(torch.load(os.path.join(OUT, f"{file}.pth")))
            except RuntimeError as e:
                torch_words = re.sub(r"\s*\n\t", " ", str(e)).strip()
        if words is None:
            assert torch_words, name  # torch refuses it
            words = ("torch", torch_words)
        out.append(f"bad_{name}\t{chapter}\t{file}\t{arg}\t{fixture}\t{words[0]}\t{words[1]}\n")
    with open(os.path.join(OUT, "bad.tsv"), "w") as f:
        f.write("# tools/cases/weights_cases.py: NAME<tab>CHAPTER<tab>FILE<tab>ARG<tab>FIXTURE<tab>WHOSE<tab>WORDS: "
                "CHAPTER --weights ARG (@: FILE.pth) [--fixture FIXTURE] is refused, saying WORDS (A&B: both, A|B: "
                "either), in torch's words, litattn's, or the .pth reader's (lib/io) (tests/error_check_weights.c)\n")
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


node_files = {f for c in CASES if c[1] in NODE_CHAPTERS for f in [f"{c[0]}.h5"] + [f"{m}.pth" for m in c[2].values()]}
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
    f.write("# TEST CHAPTER NAME ARG...: tools/cases/weights_cases.py (tests/meson.build's `weights` suite): CHAPTER "
            "--weights ARG... on the fixture NAME.h5, @ standing for this folder\n")
    f.writelines(f"{test} {chapter} {name} {' '.join(args)}\n" for test, chapter, name, args in runs())
if ONLY:
    print(f"(--only {ONLY}: 1 of the {len(CASES)} cases; without --only, every one but node's)")
    check(lambda n: n.startswith("bad") or n == "cases.tsv" or n in (ONLY + ".h5", ONLY + ".pth"))
if CHECK:
    check(lambda n: n not in node_files)
print(f"wrote {len(CASES)} cases, {len(runs())} runs, into {OUT}")
