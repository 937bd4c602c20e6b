#!/usr/bin/python3
"""compare_dumps.py: runs the C chapters on the fixtures and compares, bit for bit.

    /usr/bin/python3 tools/cases/compare_dumps.py [--build build] [--fixtures fixtures] [--jobs N]
                                                  [--mode fixture|seed|both] [NAME.h5[:GROUP]]...

For every book fixture (and every group of sweep.h5 and sweep_data_loading.h5), runs its chapter with
--dump twice: in fixture mode (`--fixture F [--group G]`: the chapter reads
what PyTorch drew) and in seed mode (the same plus `--seed`, `--seed
SITE=N` and `--skip` from the fixture's attributes: the chapter draws
everything itself). Then every dataset the dump holds with role output,
weight or random must be in the fixture with the same role (whole, or as a
digest: `<name>.sha256`, `.shape`, `.role`, `.first_row`, `.last_row`), and
every such dataset of the fixture must be in the dump; values are compared
as uint32 bit patterns (every NaN equals every NaN; +0 and -0 differ);
int64 token ids as integers.
A difference is reported with the chapter, the dataset, the index and both
values. Exit status 1 on any difference.

The scaling chapter's variance_* are the C's own PCG32 statistics (the
notebook's NumPy demo is unseeded); no fixture holds them, so they are
skipped here and listed once.
"""

import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPARED = ("output", "weight", "random")
SWEEPS = ("sweep.h5", "sweep_data_loading.h5")  # one group per configuration
NOT_FROM_TORCH = {"ch03_4_1_scaling_rationale": ("variance_before_5", "variance_after_5",
                                                 "variance_before_100", "variance_after_100")}


def _s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def seed_args(attrs):
    args = []
    for k in sorted(attrs):
        if k == "seed":
            args = ["--seed", _s(attrs[k])] + args
        elif k.endswith(".seed"):
            args += ["--seed", f"{k[:-5]}={_s(attrs[k])}"]
    if "skip" in attrs and int(attrs["skip"]):
        args += ["--skip", str(int(attrs["skip"]))]
    return args


def first_diff(want, got):
    """(flat index, want, got) of the first differing bit pattern, NaN == NaN, or None."""
    w, g = want.reshape(-1).view(np.uint32), got.reshape(-1).view(np.uint32)
    nan = np.isnan(want.reshape(-1)) & np.isnan(got.reshape(-1))
    bad = np.flatnonzero((w != g) & ~nan)
    if not len(bad):
        return None
    i = int(bad[0])
    return i, len(bad), want.reshape(-1)[i], got.reshape(-1)[i]


def fmt(x):
    return f"{float(x)!r} (0x{int(np.float32(x).view(np.uint32)):08x})"


def compare(fx_group, dump, label):
    """Problems between a fixture group and a chapter's dump."""
    problems = []
    chapter = _s(fx_group.attrs["chapter"])
    skip = set(NOT_FROM_TORCH.get(chapter, ()))
    want = {}
    for name, ds in fx_group.items():
        if not isinstance(ds, h5py.Dataset):
            continue
        role = _s(ds.attrs.get("role", ""))
        if role in COMPARED:
            want[name] = ("whole", role)
    for k in fx_group.attrs:
        if k.endswith(".sha256"):
            name = k[:-len(".sha256")]
            want[name] = ("digest", _s(fx_group.attrs[f"{name}.role"]))
    got = {}
    for name, ds in dump.items():
        role = _s(ds.attrs.get("role", ""))
        if role in COMPARED and name not in skip:
            got[name] = role
    for name in sorted(set(want) - set(got)):
        problems.append(f"{label}: {name}: in the fixture ({want[name][1]}), not in the dump")
    for name in sorted(set(got) - set(want)):
        problems.append(f"{label}: {name}: in the dump ({got[name]}), not in the fixture")
    for name in sorted(set(want) & set(got)):
        how, role = want[name]
        if role != got[name]:
            problems.append(f"{label}: {name}: role {role} in the fixture, {got[name]} in the dump")
        g = dump[name][()]
        if how == "whole" and np.asarray(g).dtype.kind == "i":  # token ids: equal or not
            w = np.asarray(fx_group[name][()])
            if w.shape != np.asarray(g).shape or not np.array_equal(w, g):
                problems.append(f"{label}: {name}: the int64 ids differ from the fixture's (shapes {w.shape}, "
                                f"{np.asarray(g).shape})")
            continue
        g = np.asarray(g, dtype=np.float32)
        if how == "whole":
            w = np.asarray(fx_group[name][()], dtype=np.float32)
            if w.shape != g.shape:
                problems.append(f"{label}: {name}: shape {w.shape} in the fixture, {g.shape} in the dump")
                continue
            d = first_diff(w, g)
            if d:
                i, n, a, b = d
                where = list(map(int, np.unravel_index(i, w.shape))) if w.shape else []
                problems.append(f"{label}: {name}: {n} of {w.size} values differ, first at {where}: "
                                f"torch {fmt(a)}, C {fmt(b)}")
        else:
            shape = _s(fx_group.attrs[f"{name}.shape"])
            if str(tuple(g.shape)) != shape:
                problems.append(f"{label}: {name}: shape {shape} in the fixture, {tuple(g.shape)} in the dump")
                continue
            rows = g.reshape(-1, g.shape[-1])
            for which, row in (("first_row", rows[0]), ("last_row", rows[-1])):
                w = np.asarray(fx_group[f"{name}.{which}"][()], dtype=np.float32)
                d = first_diff(w, row)
                if d:
                    i, n, a, b = d
                    problems.append(f"{label}: {name}: {which}: {n} of {w.size} values differ, first at "
                                    f"[{i}]: torch {fmt(a)}, C {fmt(b)}")
            digest = hashlib.sha256(g.astype("<f4").tobytes()).hexdigest()
            if digest != _s(fx_group.attrs[f"{name}.sha256"]):
                # NaN payloads aside, the digest is of the exact bits.
                problems.append(f"{label}: {name}: sha256 differs (C {digest[:16]}..., torch "
                                f"{_s(fx_group.attrs[name + '.sha256'])[:16]}...)")
    return problems


def run_one(build, path, group, mode, tmpdir):
    with h5py.File(path, "r") as f:
        g = f[group] if group else f
        chapter = _s(g.attrs["chapter"])
        attrs = {k: g.attrs[k] for k in g.attrs}
    label = f"{os.path.basename(path)}{':' + group if group else ''} [{mode}]"
    dump = os.path.join(tmpdir, f"{os.path.basename(path)}.{group or 'root'}.{mode}.h5")
    cmd = [os.path.join(build, "chapters", chapter), "--fixture", path]
    if group:
        cmd += ["--group", group]
    if mode == "seed":
        sa = seed_args(attrs)
        if not sa:
            return label, None, []  # draws nothing: the fixture mode run is the whole check
        cmd += sa
    cmd += ["--dump", dump]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return label, r.stdout, [f"{label}: {chapter} exited {r.returncode}: {r.stderr.strip()}"]
    with h5py.File(path, "r") as f, h5py.File(dump, "r") as d:
        problems = compare(f[group] if group else f, d, label)
    os.remove(dump)
    return label, r.stdout, problems


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--fixtures", default=os.path.join(REPO, "fixtures"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--mode", choices=("fixture", "seed", "both"), default="both")
    p.add_argument("--stdout-dir", help="keep each run's stdout there")
    p.add_argument("targets", nargs="*", help="NAME.h5 or NAME.h5:GROUP (default: every fixture and sweep group)")
    args = p.parse_args(argv)
    targets = []
    if args.targets:
        for t in args.targets:
            name, _, group = t.partition(":")
            path = os.path.join(args.fixtures, name)
            if name in SWEEPS and not group:
                with h5py.File(path, "r") as f:
                    targets += [(path, gname) for gname in f]
            else:
                targets.append((path, group or None))
    else:
        for n in sorted(os.listdir(args.fixtures)):
            if not n.endswith(".h5") or n in ("kernel_cases.h5", "backward_cases.h5", "printer_cases.h5", "random_cases.h5"):
                continue
            path = os.path.join(args.fixtures, n)
            if n in SWEEPS:
                with h5py.File(path, "r") as f:
                    targets += [(path, g) for g in f]
            else:
                targets.append((path, None))
    modes = ["fixture", "seed"] if args.mode == "both" else [args.mode]
    failures = runs = 0
    with tempfile.TemporaryDirectory(prefix="litattn_dumps_") as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = [ex.submit(run_one, args.build, path, group, m, tmp) for path, group in targets for m in modes]
        for fut in futs:
            label, out, problems = fut.result()
            if out is None:
                continue
            runs += 1
            if args.stdout_dir and out is not None:
                os.makedirs(args.stdout_dir, exist_ok=True)
                with open(os.path.join(args.stdout_dir, label.replace(" ", "_").replace("/", "_") + ".txt"),
                          "w") as f:
                    f.write(out)
            if problems:
                failures += 1
                print(f"FAIL {label}")
                for pr in problems[:40]:
                    print(f"    {pr}")
    for ch, names in NOT_FROM_TORCH.items():
        print(f"note: {ch}: {', '.join(names)} are the C's own statistics, not compared")
    print(f"{runs} runs, {failures} with differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
