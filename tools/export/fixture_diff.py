#!/usr/bin/python3
"""fixture_diff.py: are two sets of fixtures the same, bit for bit?

    /usr/bin/python3 tools/export/fixture_diff.py [--only A,B] [--except A,B] COMMITTED_DIR REGENERATED_DIR

Compares every .h5 file of COMMITTED_DIR (fixtures/) with the file of the
same name that an export wrote into REGENERATED_DIR, and reports a file
that only one of them has. Files with the same bytes are the same (exports
are byte for byte reproducible); otherwise every group, dataset and
attribute is compared, floats by their bits with the worst distance in ulps.
Exit status 1 on any difference. The `regen` test runs this on the build's
own export (tests/meson.build); `export_fixtures.py --check` on one made in a
temporary directory.

Needs only h5py and numpy, not torch.
"""

import filecmp
import os
import sys

# h5py and numpy are imported only where two files differ (load_h5py):
# byte-identical files, the usual answer, need neither.
h5py = np = UINT = SINT = None


def load_h5py():
    global h5py, np, UINT, SINT
    import h5py
    import numpy as np
    UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
    SINT = {2: np.int16, 4: np.int32, 8: np.int64}


def ordered_key(a):
    """Float bits mapped to Python ints whose difference counts ulps
    (negative floats mirrored below zero, so -0.0 and +0.0 are 0 apart)."""
    bits = a.dtype.itemsize * 8
    return [i if i >= 0 else -(2**(bits - 1)) - i for i in a.view(SINT[a.dtype.itemsize]).tolist()]


def hexbits(x):
    return "0x%0*x" % (2 * x.dtype.itemsize, int(x.view(UINT[x.dtype.itemsize])))


def compare_values(label, a, b):
    """Problems (list of str) between committed a and regenerated b (same dtype/shape)."""
    if a.dtype.kind == "f":
        fa, fb = a.reshape(-1), b.reshape(-1)
        same_bits = fa.view(UINT[a.dtype.itemsize]) == fb.view(UINT[a.dtype.itemsize])
        if same_bits.all():
            return []
        nan = np.isnan(fa) | np.isnan(fb)
        ulps = [0 if s else (None if n else abs(int(x) - int(y)))
                for s, n, x, y in zip(same_bits, nan, ordered_key(fa), ordered_key(fb))]
        differing = [i for i in range(len(ulps)) if not same_bits[i]]
        k = next((i for i in differing if ulps[i] is None), None)
        if k is None:
            k = max(differing, key=lambda i: ulps[i])
        where = np.unravel_index(k, a.shape) if a.shape else ()
        worst = "NaN vs number" if ulps[k] is None else f"{ulps[k]} ulp"
        return [f"{label}: {int((~same_bits).sum())} of {fa.size} values differ, worst {worst} "
                f"at {list(map(int, where))}: committed {fa[k]!r} ({hexbits(fa[k])}), "
                f"regenerated {fb[k]!r} ({hexbits(fb[k])})"]
    if a.dtype.kind in "OSU" or h5py.check_string_dtype(a.dtype):
        la, lb = a.reshape(-1).tolist(), b.reshape(-1).tolist()
        bad = [i for i, (x, y) in enumerate(zip(la, lb)) if x != y]
        if bad:
            return [f"{label}: {len(bad)} of {len(la)} strings differ, first at flat index {bad[0]}: "
                    f"committed {la[bad[0]]!r}, regenerated {lb[bad[0]]!r}"]
        return []
    if a.tobytes() != b.tobytes():
        ne = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
        first = f" first at flat index {ne[0]}: committed {a.reshape(-1)[ne[0]]!r}, " \
                f"regenerated {b.reshape(-1)[ne[0]]!r}" if len(ne) else ""
        return [f"{label}: values differ ({len(ne)} of {a.size});{first}"]
    return []


def attr_type(obj, name):
    aid = obj.attrs.get_id(name)
    dt = aid.dtype
    s = h5py.check_string_dtype(dt)
    if s is not None:
        return f"string({s.encoding}, {'variable' if s.length is None else s.length})", aid.shape
    return str(dt), aid.shape


def compare_attrs(label, a, b):
    problems = []
    na, nb = set(a.attrs.keys()), set(b.attrs.keys())
    for n in sorted(na - nb):
        problems.append(f"{label}: attribute {n!r} only in the committed file")
    for n in sorted(nb - na):
        problems.append(f"{label}: attribute {n!r} missing from the committed file")
    for n in sorted(na & nb):
        ta, tb = attr_type(a, n), attr_type(b, n)
        if ta != tb:
            problems.append(f"{label}: attribute {n!r} type {ta} committed, {tb} regenerated")
            continue
        va, vb = np.asarray(a.attrs[n]), np.asarray(b.attrs[n])
        if va.dtype.kind == "f":
            problems += compare_values(f"{label}: attribute {n!r}", va, vb)
        elif va.dtype.kind == "O" or va.dtype.kind in "SU":
            if va.tolist() != vb.tolist():
                sa, sb = str(va.tolist()), str(vb.tolist())
                i = next((i for i, (x, y) in enumerate(zip(sa, sb)) if x != y), min(len(sa), len(sb)))
                problems.append(f"{label}: attribute {n!r} differs at character {i}: committed "
                                f"{sa[max(0, i - 20):i + 40]!r}, regenerated {sb[max(0, i - 20):i + 40]!r}")
        elif va.tobytes() != vb.tobytes():
            problems.append(f"{label}: attribute {n!r} committed {va.tolist()!r}, regenerated {vb.tolist()!r}")
    return problems


def walk(f):
    objs = {"/": f}
    f.visititems(lambda name, obj: objs.__setitem__("/" + name, obj))
    return objs


def compare_file(committed, regenerated):
    """(problems, number of datasets compared)."""
    load_h5py()
    problems = []
    ndatasets = 0
    with h5py.File(committed, "r") as fa, h5py.File(regenerated, "r") as fb:
        oa, ob = walk(fa), walk(fb)
        for p in sorted(set(oa) - set(ob)):
            problems.append(f"{p}: only in the committed file (regeneration does not make it)")
        for p in sorted(set(ob) - set(oa)):
            problems.append(f"{p}: missing from the committed file")
        for p in sorted(set(oa) & set(ob)):
            a, b = oa[p], ob[p]
            if isinstance(a, h5py.Dataset) != isinstance(b, h5py.Dataset):
                problems.append(f"{p}: a {type(a).__name__} committed, a {type(b).__name__} regenerated")
                continue
            problems += compare_attrs(p, a, b)
            if isinstance(a, h5py.Dataset):
                ndatasets += 1
                if a.dtype != b.dtype or a.shape != b.shape:
                    problems.append(f"{p}: committed {a.dtype} {a.shape}, regenerated {b.dtype} {b.shape}")
                    continue
                if a.id.get_space().get_simple_extent_type() != b.id.get_space().get_simple_extent_type():
                    problems.append(f"{p}: dataspace class differs (scalar vs simple)")
                    continue
                problems += compare_values(p, a[()], b[()])
    return problems, ndatasets


def count_objects(path):
    load_h5py()
    n = [0, 0]

    def visit(_, obj):
        n[isinstance(obj, h5py.Group)] += 1
    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return n  # [datasets, groups]


def compare_dirs(committed_dir, regenerated_dir, names=None, exclude=None):
    """Prints one line per file and a summary; returns the number of files that
    differ. `names`: only these files (default: all); `exclude`: not these."""
    committed = sorted(n for n in os.listdir(committed_dir) if n.endswith(".h5")) \
        if os.path.isdir(committed_dir) else []
    regenerated = sorted(n for n in os.listdir(regenerated_dir) if n.endswith(".h5"))
    if names is not None:
        committed = [n for n in committed if n in names]
        regenerated = [n for n in regenerated if n in names]
    if exclude:
        committed = [n for n in committed if n not in exclude]
        regenerated = [n for n in regenerated if n not in exclude]
    failures = 0
    for n in sorted(set(committed) | set(regenerated)):
        if n not in regenerated:
            print(f"FAIL {n}: committed but not regenerated (stale file, or its helper is missing)")
            failures += 1
            continue
        if n not in committed:
            print(f"FAIL {n}: regenerated but not committed")
            failures += 1
            continue
        a, b = os.path.join(committed_dir, n), os.path.join(regenerated_dir, n)
        if filecmp.cmp(a, b, shallow=False):
            print(f"ok   {n}: byte-identical file ({os.path.getsize(a)} bytes)")
            continue
        problems, nds = compare_file(a, b)
        if problems:
            failures += 1
            print(f"FAIL {n}: {len(problems)} difference(s) in {nds} datasets")
            for p in problems[:200]:
                print(f"    {p}")
            if len(problems) > 200:
                print(f"    ... and {len(problems) - 200} more")
        else:
            print(f"ok   {n}: {nds} datasets, every value bit-identical, attributes equal")
    print(f"compared: {len(set(committed) | set(regenerated))} files, {failures} with differences")
    return failures


def main(argv):
    # --only A,B / --except A,B: those files of the two directories alone, or all but those.
    only = exclude = None
    while argv and argv[0] in ("--only", "--except") and len(argv) > 1:
        names = [n for n in argv[1].split(",") if n]
        if argv[0] == "--only":
            only = names
        else:
            exclude = names
        argv = argv[2:]
    if len(argv) != 2 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for d in argv:
        if not os.path.isdir(d):
            print(f"fixture_diff: {d}: expected a directory of fixtures, found none", file=sys.stderr)
            return 2
    return 1 if compare_dirs(argv[0], argv[1], only, exclude) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
