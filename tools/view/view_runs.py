"""view_runs.py: runs each chapter once per variant with --dump, and turns the
run into what the view shows: the printed text, every computed tensor
against PyTorch's (worst ulp distance), and the small arrays the heatmaps
are drawn from.

A run's result is kept in a cache keyed by the chapter's executable, the
fixture and the command line (their contents, not their dates), so that a
second build, or the `view` test after `ninja book-view`, does not run the
GPT-2-size forward of Exercise 3.3 again. The dump itself (up to a few
hundred MB for that chapter) is read once and deleted.
"""

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np

with open(__file__, "rb") as _f:  # a run recorded by other code is recorded again
    CACHE_VERSION = hashlib.sha256(_f.read()).hexdigest()
ROLES_COMPARED = ("output", "weight", "random")

# Which tensors a reader would rather see than read: attention scores and
# weights, masks and masked weights, dropout masks, matched on the last part
# of the dataset's name ("sa_v2.attn_weights", "mha.heads.0.attn_weights",
# "attn_scores (In [9])", "dropout(example)", "dropout.noise.2"); and the
# gradients of a Beyond cell ("ca.W_query.weight.grad", "batch.grad"), each
# weight's drawn beside the weight itself (which is kept for that).
HEATMAP_NAME = re.compile(
    r"(?:^|\.)(?:attn_scores|attn_weights|mask|mask_simple|masked|masked_simple|masked_simple_norm)"
    r"(?:_\d+)?(?: \(In \[\d+\]\))?$"
    r"|^dropout\(.*\)$"
    r"|(?:^|\.)noise(?:\.\d+)?$"
    r"|\.grad$")
CROP = 16        # a heatmap of more tokens than MAX_SIDE shows the first CROP x CROP
MAX_SIDE = 32
MAX_PANELS = 12  # heads per figure (of a cropped, GPT-2-size tensor: CROPPED_PANELS)
CROPPED_PANELS = 4


# --- running -----------------------------------------------------------------------------------

def file_digest(path, h=None):
    h = h or hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h


def seed_args(fixture):
    """--seed/--skip arguments that make a chapter draw everything in C,
    seeded as the fixture records (tests/harness.c fixture_seed_args)."""
    args = []
    with h5py.File(fixture, "r") as f:
        for name, value in f.attrs.items():
            value = value.decode() if isinstance(value, bytes) else value
            if name == "seed":
                args[:0] = ["--seed", str(value)]
            elif name.endswith(".seed"):
                args += ["--seed", f"{name[:-5]}={value}"]
        if args:
            args += ["--skip", str(int(f.attrs.get("skip", 0)))]
    return args


def run_once(exe, args, dump, timeout):
    """(exit code, stdout, stderr, seconds) of one run; a run past the time
    limit is killed and reported as such, not waited for."""
    start = time.monotonic()
    try:
        p = subprocess.run([exe, *args, "--dump", dump], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return -9, out, f"killed after {timeout:.0f} s", time.monotonic() - start


def run_chapter(exe, program, variant, fixture, cache_dir, timeout=300):
    """The record of one chapter on one variant (see record keys below),
    from the cache when the executable, fixture and arguments are unchanged.

    Fixture mode first, as a reader runs it. A fixture of an older schema
    makes the chapter stop with a one-line error; then the run is repeated
    with everything drawn in C (--seed as the fixture records), and the
    tensors are compared with whatever the fixture has under the same names.
    No fixture at all: there are no inputs, so the chapter cannot run."""
    record = {"program": program, "variant": variant, "fixture": fixture, "mode": None, "args": [],
              "exit": None, "stdout": "", "stderr": "", "seconds": 0.0, "tensors": {}, "arrays": {},
              "inputs": None, "first_error": None}
    if not fixture or not os.path.exists(fixture):
        record["mode"] = "no fixture"
        return record
    key = hashlib.sha256(CACHE_VERSION.encode())
    file_digest(exe, key)
    file_digest(fixture, key)
    key.update(f"{program}\0{variant}".encode())
    cache = os.path.join(cache_dir, f"{program}.{variant}.{key.hexdigest()[:20]}.json")
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            return json.load(f)

    with tempfile.TemporaryDirectory(prefix="litattn-view-") as tmp:
        dump = os.path.join(tmp, "dump.h5")
        args = ["--fixture", fixture]
        rc, out, err, secs = run_once(exe, args, dump, timeout)
        mode = "fixture"
        if rc == 1 and seed_args(fixture):
            # Perhaps a fixture of an older schema: draw everything in C instead.
            seeded = args + seed_args(fixture)
            rc2, out2, err2, secs2 = run_once(exe, seeded, dump, timeout)
            if rc2 == 0:
                record["first_error"] = err.strip()
                args, rc, out, err, secs, mode = seeded, rc2, out2, err2, secs2, "seed"
        record.update(mode=mode, args=args, exit=rc, stdout=out, stderr=err.strip(), seconds=round(secs, 3))
        if rc == 0 and os.path.exists(dump):  # a failed run's dump is removed, or unfinished
            try:
                record["tensors"], record["arrays"], record["inputs"], record["first_ids"] = read_dump(dump, fixture)
            except OSError as e:
                record["stderr"] += f"\n(the view could not read the --dump file: {e})"
    os.makedirs(cache_dir, exist_ok=True)
    for old in os.listdir(cache_dir):  # one cached record per chapter and variant
        if old.startswith(f"{program}.{variant}.") and old.endswith(".json"):
            os.remove(os.path.join(cache_dir, old))
    tmp = f"{cache}.{os.getpid()}.tmp"  # whole or not at all, for a reader in another process
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f)
    os.replace(tmp, cache)
    return record


def run_all(jobs, cache_dir, workers=2):
    """Runs [(exe, program, variant, fixture)] on `workers` threads (each run
    is a process); returns {(program, variant): record}. The slowest runs
    are started first."""
    slow_first = sorted(jobs, key=lambda j: -os.path.getsize(j[3]) if j[3] and os.path.exists(j[3]) else 0)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = pool.map(lambda j: run_chapter(*j, cache_dir), slow_first)
        return {(r["program"], r["variant"]): r for r in done}


# --- the dump against the fixture -------------------------------------------------------------

def ordered(bits):
    """float32 bit patterns -> integers in float order (tests: lib/base/ulp.c)."""
    bits = bits.astype(np.int64)
    return np.where(bits & 0x80000000, -(bits & 0x7FFFFFFF), bits)


def compare_values(got, want):
    """(values that differ, worst ulp, a sign of zero differs) of two float32
    arrays of one shape. Same bits is equal; every NaN equals every NaN; one
    NaN against a number is 2^32 - 1 ulp, as lib/base/ulp.c counts it."""
    if np.asarray(got).dtype.kind in "iu":  # token ids: equal or not
        differ = np.asarray(got).reshape(-1) != np.asarray(want).reshape(-1)
        return int(differ.sum()), 0, False
    g = np.ascontiguousarray(got, dtype="<f4").reshape(-1)
    w = np.ascontiguousarray(want, dtype="<f4").reshape(-1)
    gb, wb = g.view("<u4"), w.view("<u4")
    gn, wn = np.isnan(g), np.isnan(w)
    differ = (gb != wb) & ~(gn & wn)
    if not differ.any():
        return 0, 0, False
    d = np.abs(ordered(gb) - ordered(wb))
    d = np.where(gn != wn, 2**32 - 1, np.where(gn & wn, 0, d))
    zero_sign = bool((differ & (d == 0)).any())
    return int(differ.sum()), int(d[differ].max()), zero_sign


def attr_str(obj, name):
    v = obj.attrs.get(name)
    return v.decode() if isinstance(v, bytes) else v


def shape_text(shape):
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def compare_one(name, ds, fx):
    """A dumped dataset against the fixture: {role, shape, verdict, worst_ulp, differ, note}."""
    role = attr_str(ds, "role") or "output"
    entry = {"role": role, "shape": list(ds.shape), "verdict": "no fixture value", "worst_ulp": None,
             "differ": 0, "note": ""}
    if name in fx and isinstance(fx[name], h5py.Dataset):
        want = fx[name]
        if tuple(want.shape) != tuple(ds.shape):
            entry.update(verdict="shape differs", note=f"PyTorch's is {shape_text(want.shape)}")
            return entry
        differ, worst, zero_sign = compare_values(ds[()], want[()])
        entry.update(verdict="identical" if not differ else "differs", worst_ulp=worst, differ=differ,
                     note="a sign of zero differs" if zero_sign else "")
        return entry
    digest = attr_str(fx, f"{name}.sha256")
    if digest:
        # Too large for the fixture: its SHA-256 and its first and last rows.
        got = np.ascontiguousarray(ds[()], dtype="<f4")
        same_shape = attr_str(fx, f"{name}.shape") == str(tuple(ds.shape))
        same = same_shape and hashlib.sha256(got.tobytes()).hexdigest() == digest
        worst, differ = 0, 0
        rows = got.reshape(-1, got.shape[-1]) if got.ndim else got.reshape(1, 1)
        for which, row in (("first_row", rows[0]), ("last_row", rows[-1])):
            key = f"{name}.{which}"
            if same_shape and key in fx and fx[key].shape == row.shape:
                n, w, _ = compare_values(row, fx[key][()])
                differ, worst = differ + n, max(worst, w)
        entry.update(verdict="identical" if same else "differs", worst_ulp=worst, differ=differ,
                     note="SHA-256 of all values" + ("" if same else " differs") + ", first and last rows compared")
    return entry


def read_dump(dump, fixture):
    """(tensors, arrays, inputs, first_ids) of a run: every dumped tensor
    compared with the fixture, the fixture's tensors the run did not dump,
    the arrays of the tensors worth a heatmap (cropped when large), the
    inputs, and the token ids of the first batch item (`x[0]`, the
    data-loading chapter's) that label its heatmaps, or None."""
    tensors, arrays, inputs, first_ids = {}, {}, None, None
    with h5py.File(dump, "r") as d, h5py.File(fixture, "r") as fx:
        for name, ds in d.items():
            if not isinstance(ds, h5py.Dataset):
                continue
            role = attr_str(ds, "role") or "output"
            if name == "inputs":
                inputs = ds[()].astype(float).tolist()
            if name == "x" and ds.dtype.kind == "i" and ds.ndim == 2:
                first_ids = [int(i) for i in ds[0]]
            if role not in ROLES_COMPARED:
                continue
            tensors[name] = compare_one(name, ds, fx)
            if (HEATMAP_NAME.search(name) or (role == "weight" and name + ".grad" in d)) and ds.ndim >= 1:
                arrays[name] = heatmap_array(ds)
        for name, ds in fx.items():
            if isinstance(ds, h5py.Dataset) and name not in tensors and attr_str(ds, "role") in ROLES_COMPARED:
                tensors[name] = {"role": attr_str(ds, "role"), "shape": list(ds.shape), "verdict": "not dumped",
                                 "worst_ulp": None, "differ": 0, "note": ""}
    return tensors, arrays, inputs, first_ids


def heatmap_array(ds):
    """The part of a dataset a heatmap shows: the whole of a small one; of a
    batch, the first item; of a multi-head tensor (b, heads, T, T), every
    head of the first item (at most MAX_PANELS); of more than MAX_SIDE tokens
    a side, the first CROP x CROP. Values as floats, -inf and NaN kept."""
    shape = list(ds.shape)
    if ds.ndim == 1:
        sel, panels = (slice(None),), False
    elif ds.ndim == 2:
        sel, panels = (slice(None), slice(None)), False
    elif ds.ndim == 3:
        sel, panels = (0, slice(None), slice(None)), False
    else:
        sel, panels = (0,) * (ds.ndim - 3) + (slice(0, MAX_PANELS), slice(None), slice(None)), True
    rows, cols = (shape[-2] if ds.ndim >= 2 else 1), shape[-1]
    cropped = rows > MAX_SIDE or cols > MAX_SIDE
    if cropped:
        sel = sel[:-2] + (slice(0, CROP), slice(0, CROP)) if ds.ndim >= 2 else (slice(0, CROP),)
        if panels:
            sel = sel[:-3] + (slice(0, CROPPED_PANELS),) + sel[-2:]
    values = np.asarray(ds[sel], dtype=np.float64)
    return {"shape": shape, "panels": panels, "cropped": cropped, "batch_item": ds.ndim >= 3,
            "values": [[None if np.isnan(v) else (str(v) if np.isinf(v) else float(v)) for v in row]
                       for row in np.atleast_2d(values).reshape(-1, values.shape[-1])],
            "panel_shape": list(values.shape)}


def array_values(entry):
    """The numpy array of a heatmap entry (NaN and +-inf restored), shaped
    (panels, rows, cols)."""
    flat = [[np.nan if v is None else float(v) for v in row] for row in entry["values"]]
    a = np.array(flat, dtype=np.float64).reshape(entry["panel_shape"])
    if a.ndim == 1:
        a = a.reshape(1, 1, -1)
    elif a.ndim == 2:
        a = a.reshape(1, *a.shape)
    return a
