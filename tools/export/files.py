"""files.py: every file as an independent job, run in parallel; --check; --regenerate."""

import importlib
import multiprocessing
import os
import shutil
import sys
import tempfile
import time

import torch

from . import chapters as chapter_table  # chapters/chapters.txt
from . import fixture_diff  # comparing two sets of fixtures
from . import SCRIPT
from .ch03_mha import js_tiktoken_status, node_inputs
from .sweep import write_data_sweep, write_sweep
from .variants import book_fixtures, run_variant
from .write import new_file, write_fixture

# --------------------------------------------------------------------------
# Every file, as independent jobs (one file each), run in parallel.

# The data-loading chapter's files take their token ids from js-tiktoken
# under node (tools/export/ch03_mha.py): made only where that runs.
DATA_SWEEP = "sweep_data_loading.h5"
NEEDS_NODE = ("ch03_mha_data_loading.book.h5", DATA_SWEEP)
SKIPPED_NODE = "SKIPPED_NODE"  # in a --regenerate directory: why NEEDS_NODE were not made
# Exported once and committed, never by the build: the bonus notebook at its
# own size, (8, 1024, 768), six forwards of about 64 GFLOP each and six
# backward passes, takes torch with the reference BLAS minutes (the figures:
# tests/BENCHMARKS.md). The build's export (--regenerate, the regen test)
# leaves it out; the default export and --check make it
# (tools/export/export_fixtures.py --check --only <it>).
EXPORTED_ONCE = ("ch03_bonus_mha_implementations.book.h5",)

# The unit tests' case files, each written by its module here, export.<stem>
# (tools/export/<stem>.py), to <stem>.h5. Loaded when a worker writes one.
HELPERS = ("kernel_cases", "backward_cases", "printer_cases", "random_cases")


def load_helper(stem):
    """The module export.<stem>, which writes <stem>.h5."""
    return importlib.import_module(f"{__package__}.{stem}")


def _write_book_fixture(chapter, variant, spec):
    def write(path):
        run = run_variant(chapter, spec)
        with new_file(path) as f:
            write_fixture(f, run, variant, spec["mirrors"], SCRIPT)
    return write


def jobs():
    """{file name: function writing it to a path}, in a fixed order."""
    out = {}
    for chapter, variant, spec in book_fixtures():
        out[f"{chapter}.{variant}.h5"] = _write_book_fixture(chapter, variant, spec)
    out["sweep.h5"] = write_sweep
    out[DATA_SWEEP] = write_data_sweep
    for stem in HELPERS:
        out[stem + ".h5"] = (lambda s: lambda path: load_helper(s).export(path))(stem)
    return out


# Longest first, so that two workers finish together.
SLOW_FIRST = ["ch03_bonus_mha_implementations.book.h5", "ch03_6_2_multihead_attention.seed123.h5", "ch03_6_2_multihead_attention.gpt2_dropout.h5",
              "sweep.h5", "kernel_cases.h5", "backward_cases.h5", "printer_cases.h5", "random_cases.h5"]


def _job(args):
    name, out_dir = args
    torch.set_num_threads(1)
    t0 = time.time()
    path = os.path.join(out_dir, name)
    # Written beside the target, then renamed over it: a reader that has the
    # old file open keeps its copy, and an interrupted run never leaves a
    # truncated fixture behind.
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        jobs()[name](tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    nds, ngroups = fixture_diff.count_objects(path)
    return name, nds, ngroups, os.path.getsize(path), time.time() - t0


def parallel_map(fn, args, workers):
    """[fn(a) for a in args], on up to `workers` forked processes (they
    inherit torch already imported, one thread each); in this process when
    one worker is asked for or no process pool can be made here."""
    if workers > 1 and len(args) > 1:
        try:
            pool = multiprocessing.get_context("fork").Pool(min(workers, len(args)))
        except OSError as e:  # no /dev/shm for its semaphores, or no fork
            print(f"export_fixtures: no worker processes ({e}); running in one", file=sys.stderr)
        else:
            with pool:
                return pool.map(fn, args, chunksize=1)
    return [fn(a) for a in args]


def export_files(out_dir, names, workers, quiet=False):
    why = js_tiktoken_status()
    if why and any(n in NEEDS_NODE for n in names):
        raise SystemExit(f"export_fixtures: cannot make {', '.join(n for n in names if n in NEEDS_NODE)}: {why}")
    os.makedirs(out_dir, exist_ok=True)
    order = [n for n in SLOW_FIRST if n in names] + [n for n in names if n not in SLOW_FIRST]
    args = [(n, out_dir) for n in order]
    results = parallel_map(_job, args, workers)
    if not quiet:
        for name, nds, ngroups, size, secs in sorted(results, key=lambda r: names.index(r[0])):
            groups = f"{ngroups} groups, " if ngroups else ""
            print(f"wrote {os.path.relpath(os.path.join(out_dir, name))} ({groups}{nds} datasets, "
                  f"{size / 1024:.0f} KiB, {secs:.1f} s)")
    return [r[0] for r in results]


# --------------------------------------------------------------------------
# --check: regenerate into a temporary directory and compare (fixture_diff.py).

def check(committed_dir, only, workers):
    """Regenerates the files (all, or `only`) and compares them with committed_dir."""
    every = list(jobs())
    if only:
        names = [n if n.endswith(".h5") else n + ".h5" for n in only]
        unknown = [n for n in names if n not in every]
        if unknown:
            print(f"check: no such fixture: {', '.join(unknown)} (known: {', '.join(every)})")
            return 2
    else:
        names = every
    with tempfile.TemporaryDirectory(prefix="litattn_check_") as tmp:
        export_files(tmp, names, workers, quiet=True)
        failures = fixture_diff.compare_dirs(committed_dir, tmp, names if only else None)
    return 1 if failures else 0


# --------------------------------------------------------------------------
# --regenerate: the build's own export, which the regen test compares with
# fixtures/ (tests/meson.build). Ninja redoes it only when a file it read
# changes: the depfile names them all.

def files_read():
    """Every file this export depends on: its Python modules (torch's too),
    every shared library mapped (the BLAS among them), the chapter table, the
    helpers the workers load, and /etc/alternatives, where Debian chooses
    which libblas.so.3 is loaded."""
    paths = {sys.executable, chapter_table.TABLE_PATH, "/etc/alternatives"}
    for stem in HELPERS:  # the workers load them: their own imports (case_files) count too
        load_helper(stem)
    paths.update(os.path.abspath(m.__file__) for m in list(sys.modules.values())
                 if isinstance(getattr(m, "__file__", None), str))
    with open("/proc/self/maps") as f:
        paths.update(line.split()[-1] for line in f if line.split()[-1].startswith("/"))
    # The data-loading chapter's: its text, and the reference tokenizer node runs.
    paths.update(node_inputs())
    return sorted(p for p in paths if os.path.exists(p))


def regenerate(out_dir, depfile, workers):
    """Every fixture into out_dir, made afresh (out_dir is replaced once all
    are written), and the depfile naming what it read, for out_dir."""
    tmp = out_dir.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    names, why = [n for n in jobs() if n not in EXPORTED_ONCE], js_tiktoken_status()
    if why:
        names = [n for n in names if n not in NEEDS_NODE]
    export_files(tmp, names, workers, quiet=True)
    if why:
        with open(os.path.join(tmp, SKIPPED_NODE), "w") as f:
            f.write(f"SKIP: {', '.join(NEEDS_NODE)} not exported again: {why}\n")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    if depfile:
        def esc(path):
            return path.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")
        with open(depfile + ".tmp", "w") as f:
            f.write(esc(out_dir) + ": \\\n" + " \\\n".join("  " + esc(p) for p in files_read()) + "\n")
        os.replace(depfile + ".tmp", depfile)
