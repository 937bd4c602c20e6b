"""Export litattn's fixtures: what real PyTorch computes for each chapter.

cli.py: the command line of tools/export/export_fixtures.py (its docstring says
what each option does), and --custom, one fixture for parameters of your
choosing.
"""

import argparse
import os
import shlex
import time

import torch

from . import chapters as chapter_table  # chapters/chapters.txt
from . import fixture_diff  # comparing two sets of fixtures
from . import FIXTURES_DIR, SCRIPT
from .files import check, export_files, jobs, regenerate
from .sweep import CH_CA, CH_MHA, CH_WRAP, sweep_inputs
from .variants import RUNNERS, default_inputs, run_chapter
from .write import new_file, write_fixture

# --------------------------------------------------------------------------
# --custom: one fixture of the same schema for parameters of your choosing.

def parse_value(text):
    """--set NAME=VALUE: an int, a float (a '.' or an exponent), or true/false."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return int(t.lower() == "true")
    try:
        return int(t, 0)
    except ValueError:
        return float(t)


def export_custom(args, argv):
    chapter = args.chapter
    if chapter not in RUNNERS:
        raise SystemExit(f"export_fixtures: --chapter must be one of {', '.join(chapter_table.programs())}")
    draws = chapter_table.get(chapter).draws
    seeds = {}
    for s in args.seed or []:
        site, _, value = s.rpartition("=")
        try:
            seeds[site or None] = int(value, 0)
        except ValueError:
            raise SystemExit(f"export_fixtures: --seed {s}: expected N or SITE=N with N an integer")
    if not draws and (seeds or args.skip):
        raise SystemExit(f"export_fixtures: {chapter} draws nothing at random: no --seed or --skip")
    if draws and None not in seeds:
        raise SystemExit(f"export_fixtures: {chapter} draws at random: give --seed N")
    if args.skip < 0:
        raise SystemExit("export_fixtures: --skip must not be negative")
    settings = {}
    for s in args.set or []:
        name, eq, value = s.partition("=")
        if not eq or not name:
            raise SystemExit(f"export_fixtures: --set {s}: expected NAME=VALUE")
        try:
            settings[name] = parse_value(value)
        except ValueError:
            raise SystemExit(f"export_fixtures: --set {s}: expected a number, true or false")
    if args.d_out is not None:
        settings["d_out"] = args.d_out
    if args.qkv_bias:
        settings["qkv_bias"] = 1
    if (args.tokens is None) != (args.d_in is None):
        raise SystemExit("export_fixtures: give --tokens and --d-in together (or neither for the book's inputs)")
    if args.batch is not None and args.tokens is None:
        raise SystemExit("export_fixtures: --batch needs --tokens and --d-in")
    ins = default_inputs(chapter)
    extra = {}
    what = "the book's inputs"
    if args.tokens is not None:
        if chapter == "ch03_4_1_scaling_rationale":
            raise SystemExit(f"export_fixtures: {chapter} reads no inputs of tokens")
        if args.tokens < 1 or args.d_in < 1 or (args.batch is not None and args.batch < 1):
            raise SystemExit("export_fixtures: --tokens, --d-in and --batch must be positive")
        if args.batch is not None and chapter not in (CH_CA, CH_WRAP, CH_MHA):
            raise SystemExit(f"export_fixtures: {chapter} reads no batch")
        spec = dict(T=args.tokens, d_in=args.d_in, inputs_seed=args.inputs_seed, b=args.batch, special=None,
                    a=None)
        ins.update(sweep_inputs(spec))
        extra["inputs_seed"] = args.inputs_seed
        what = (f"torch.rand({args.tokens}, {args.d_in}" if args.batch is None else
                f"a batch torch.rand({args.batch}, {args.tokens}, {args.d_in}") + \
            f", generator=manual_seed({args.inputs_seed})) * 2 - 1"
    if chapter in ("ch03_3_simplified_attention", "ch03_4_1_trainable_weights") and ins["inputs"].shape[0] < 2:
        raise SystemExit(f"export_fixtures: {chapter} uses inputs[1]: --tokens must be at least 2")
    kw = {}
    if args.text is not None:
        if chapter != "ch03_mha_data_loading":
            raise SystemExit(f"export_fixtures: {chapter} reads no text")
        kw["text"] = open(args.text, "rb").read()
        if len(kw["text"]) > 64 * 1024 or b"\0" in kw["text"]:
            raise SystemExit("export_fixtures: --text: a fixture holds a text of at most 64 KiB, without NUL bytes "
                             "(run the chapter with --text FILE for a longer one)")
        kw["text"].decode("utf-8")  # the notebook's open(..., encoding="utf-8") would raise too
        what = f"the text of {args.text}"
    command = " ".join([SCRIPT] + [shlex.quote(a) for a in argv])
    try:
        run = run_chapter(chapter, ins, settings, seeds, args.skip, **kw)
    except SystemExit:
        raise
    except Exception as e:  # what torch (or the notebook's assert) says of these settings
        raise SystemExit(f"export_fixtures: {chapter} with these settings fails in PyTorch: "
                         f"{type(e).__name__}: {e}")
    tmp = f"{args.custom}.{os.getpid()}.tmp"
    try:
        with new_file(tmp) as f:
            write_fixture(f, run, "custom", f"no transcript: {chapter} on {what}", command, extra)
        os.replace(tmp, args.custom)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print(f"wrote {args.custom} ({fixture_diff.count_objects(args.custom)[0]} datasets)")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", metavar="DIR", help="write the fixtures into DIR instead of fixtures/")
    p.add_argument("--check", action="store_true",
                   help="regenerate into a temporary directory and compare with fixtures/ (or --out DIR)")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="with --check or an export: only these files (e.g. sweep.h5; the .h5 may be left out)")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per CPU); the bits do not depend on it")
    p.add_argument("--list", action="store_true", help="list the files an export writes, and exit")
    p.add_argument("--regenerate", metavar="DIR",
                   help="the build's export (tests/meson.build): every fixture into DIR, made afresh")
    p.add_argument("--depfile", metavar="FILE",
                   help="with --regenerate: a make depfile naming every file the export read")
    c = p.add_argument_group("a custom fixture (variant \"custom\")")
    c.add_argument("--custom", metavar="OUT.h5", help="write one custom fixture to OUT.h5")
    c.add_argument("--chapter", help="the chapter program (chapters/chapters.txt)")
    c.add_argument("--seed", action="append", metavar="[SITE=]N",
                   help="torch.manual_seed argument (any Python int) of the chapter's main seeding, or of "
                        "SITE (exercise_3_1, exercise_3_2, exercise_3_3, sa_v2); repeatable")
    c.add_argument("--skip", type=int, default=0, help="32-bit draws to consume after the first seeding (default 0)")
    c.add_argument("--tokens", type=int, help="T: random inputs of T tokens (default: the book's 6)")
    c.add_argument("--d-in", type=int, help="d_in of the random inputs")
    c.add_argument("--batch", type=int, help="b: a random batch (b, T, d_in) instead of stacking inputs twice")
    c.add_argument("--inputs-seed", type=int, default=0, help="seed of the random inputs' generator (default 0)")
    c.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a setting other than the book's (d_out, num_heads, context_length, dropout, training, "
                        "qkv_bias, exercise_3_3.tokens, ...); repeatable")
    c.add_argument("--text", metavar="FILE", help="ch03_mha_data_loading: this UTF-8 text (at most 64 KiB, kept "
                   "in the fixture as its `text`) instead of the book's small-text-sample.txt")
    c.add_argument("--d-out", type=int, help="the same as --set d_out=N")
    c.add_argument("--qkv-bias", action="store_true", help="the same as --set qkv_bias=1")
    args = p.parse_args(argv)

    # One thread: this rules out any thread-count dependence of the bits.
    torch.set_num_threads(1)

    if args.list:
        print("\n".join(jobs()))
        return 0
    if args.custom:
        if args.check or args.out or args.only:
            p.error("--custom does not combine with --check, --out or --only")
        if not args.chapter:
            p.error("--custom needs --chapter")
        export_custom(args, argv)
        return 0
    if args.chapter or args.seed or args.tokens is not None or args.d_in is not None or args.set \
            or args.d_out is not None or args.qkv_bias or args.batch is not None:
        p.error("--chapter/--seed/--tokens/--d-in/--batch/--set/--d-out/--qkv-bias need --custom OUT.h5")
    workers = max(1, args.jobs)
    if args.regenerate:
        if args.check or args.out or args.only:
            p.error("--regenerate does not combine with --check, --out or --only")
        regenerate(args.regenerate, args.depfile, workers)
        return 0
    if args.depfile:
        p.error("--depfile needs --regenerate DIR")
    out_dir = os.path.abspath(args.out) if args.out else FIXTURES_DIR
    t0 = time.time()
    if args.check:
        rc = check(out_dir, args.only, workers)
        print(f"check took {time.time() - t0:.1f} s")
        return rc
    names = list(jobs())
    if args.only:
        wanted = [n if n.endswith(".h5") else n + ".h5" for n in args.only]
        bad = [n for n in wanted if n not in names]
        if bad:
            p.error(f"no such fixture: {', '.join(bad)}")
        names = [n for n in names if n in wanted]
    files = export_files(out_dir, names, workers)
    print(f"{len(files)} files in {time.time() - t0:.1f} s")
    return 0
