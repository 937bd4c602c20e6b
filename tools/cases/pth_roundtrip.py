#!/usr/bin/python3
"""The .pth round trip with torch (unit / pth torch round trip).

    /usr/bin/python3 tools/cases/pth_roundtrip.py TEST_PTH CASES_DIR

For every good case of CASES_DIR/cases.tsv (files torch 1.13 saved), the C
reads it and writes it again (`TEST_PTH --copy IN OUT`); then torch.load
(with weights_only=True, and without) reads the C's file: the same keys in
the same order, every tensor float32, contiguous, of the same shape and the
same bits as torch's own load of the original (torch.equal, NaNs compared by
their bits; a bool tensor, which the C reads as float32 0.0 and 1.0, as its
.float()). And the C's file is the one torch.save writes for that dict:
its data.pkl byte for byte, the same records in the same order (under the
file's base name), each record's data at a multiple of 64 bytes. Exit 77
(SKIP) without torch.
"""
import collections
import io
import os
import shlex
import subprocess
import sys
import tempfile
import zipfile

try:
    import torch
except ImportError:
    print("SKIP: no torch for /usr/bin/python3 (Debian's python3-torch)")
    sys.exit(77)

exe, cases_dir = sys.argv[1], sys.argv[2]
# good NAME [KEY]: KEY names the checkpoint's entry that holds the state_dict.
names = [(line.rstrip("\n").split("\t") + [None])[1:3] for line in open(os.path.join(cases_dir, "cases.tsv"))
         if line.startswith("good\t")]
failures = 0



# A cross build's C programs run through its exe_wrapper (qemu-user), which
# meson's test setups pass as LITATTN_EXE_WRAPPER (tests/meson.build); empty here.
WRAPPER = shlex.split(os.environ.get("LITATTN_EXE_WRAPPER", ""))

def fail(name, msg):
    global failures
    failures += 1
    print("FAIL %s: %s" % (name, msg))


def bits(t):
    return t.contiguous().view(torch.int32)


with tempfile.TemporaryDirectory() as tmp:
    for name, key in names:
        src = os.path.join(cases_dir, name + ".pth")
        out = os.path.join(tmp, name + ".pth")
        r = subprocess.run(WRAPPER + [exe, "--copy", src, out] + ([key] if key else []), capture_output=True, text=True)
        if r.returncode != 0:
            fail(name, "the C could not copy it: " + r.stderr.strip())
            continue
        loaded = torch.load(src)
        want = collections.OrderedDict((k, (v.float() if v.dtype == torch.bool else v).detach())
                                       for k, v in (loaded[key] if key else loaded).items())
        for weights_only in (True, False):
            got = torch.load(out, weights_only=weights_only)
            if list(got.keys()) != list(want.keys()):
                fail(name, "keys differ or are out of order (weights_only=%s)" % weights_only)
                continue
            for k in want:
                g, w = got[k], want[k]
                if g.dtype != torch.float32 or not g.is_contiguous() or g.shape != w.shape:
                    fail(name, "%s: dtype, layout or shape" % k)
                elif not torch.equal(bits(g), bits(w)) or not (torch.equal(g, w) or torch.isnan(w).any()):
                    fail(name, "%s: values differ" % k)
        # What torch.save writes for the same dict (no _metadata, contiguous tensors).
        plain = collections.OrderedDict((k, v.contiguous().clone()) for k, v in want.items())
        ref = os.path.join(tmp, "ref", name + ".pth")
        os.makedirs(os.path.dirname(ref), exist_ok=True)
        torch.save(plain, ref)
        with zipfile.ZipFile(out) as zc, zipfile.ZipFile(ref) as zt:
            cn = [i.filename for i in zc.infolist()]
            tn = [i.filename for i in zt.infolist()]
            if cn != tn:
                fail(name, "records differ: C %s, torch %s" % (cn[:4], tn[:4]))
            elif zc.read(name + "/data.pkl") != zt.read(name + "/data.pkl"):
                fail(name, "data.pkl differs from torch.save's")
            raw = open(out, "rb").read()
            for i in zc.infolist():
                h = i.header_offset
                start = h + 30 + int.from_bytes(raw[h + 26:h + 28], "little") + int.from_bytes(raw[h + 28:h + 30], "little")
                if start % 64:
                    fail(name, "%s's data at %d, not a multiple of 64" % (i.filename, start))
                    break
        if not failures:
            print("ok   %s: %d tensors: torch.load reads the C's file bit for bit, keys in order; "
                  "data.pkl and records as torch.save writes them" % (name, len(want)))

print("%d cases, %d failures" % (len(names), failures))
sys.exit(1 if failures else 0)
