#!/usr/bin/python3
"""Writes the .pth cases of `unit / pth` (tests/test_pth.c) into a folder.

    /usr/bin/python3 tools/cases/pth_cases.py fixtures/pth
    /usr/bin/python3 tools/cases/pth_cases.py --check fixtures/pth   (regen / pth_cases)

Good cases are torch.save's own output (torch 1.13), each with NAME.txt
(one line per key: the key, its rank and sizes) and NAME.bin (every tensor's
values, t.contiguous(), float32 little-endian, in key order): what the C must
read bit for bit. Bad cases are real torch.save output broken one way each,
or pickles written by Python's own pickler over the globals torch uses. Each
line of cases.tsv is `good NAME [KEY]` (KEY: the entry that holds the
state_dict) or `bad NAME WORDS`, WORDS a part of the one-line error the
reader must give. A case that torch cannot make (a bound's far side, memo
indices no pickler writes, zip64 fields on a small file) is made here from
a torch file and loaded by torch.load here, to show it is valid where it
should be. Deterministic: run again, the same bytes,
but for legacy.pth (torch's legacy format records a random key); --check
writes them into a temporary folder and compares every other file with
the committed ones (exit 77, SKIP, without torch).
"""
import binascii
import collections
import filecmp
import io
import os
import pickle
import pickletools
import shutil
import struct
import sys
import tempfile
import zipfile

try:
    import torch
except ImportError:
    print("SKIP: no torch for /usr/bin/python3 (Debian's python3-torch)")
    sys.exit(77)

CHECK = len(sys.argv) > 2 and sys.argv[1] == "--check"
COMMITTED = sys.argv[2] if CHECK else None
OUT = tempfile.mkdtemp() if CHECK else (sys.argv[1] if len(sys.argv) > 1 else "fixtures/pth")
os.makedirs(OUT, exist_ok=True)
cases = []


def path(name):
    return os.path.join(OUT, name + ".pth")


def expect(name, sd):
    with open(os.path.join(OUT, name + ".txt"), "w") as f, open(os.path.join(OUT, name + ".bin"), "wb") as b:
        for k, t in sd.items():
            f.write("%s %d %s\n" % (k, t.dim(), " ".join(str(s) for s in t.shape)))
            b.write(t.contiguous().numpy().astype("<f4").tobytes())


def good(name, sd, obj=None, key=None, **kw):
    """torch.save(obj or sd): read (with key) it must give sd."""
    torch.save(sd if obj is None else obj, path(name), **kw)
    expect(name, sd)
    cases.append("good\t%s%s" % (name, "\t" + key if key else ""))


def good_made(name, sd):
    """A file made here: torch.load must read it as sd, bit for bit."""
    back = torch.load(path(name))
    assert list(back) == list(sd) and all(torch.equal(back[k], sd[k]) for k in sd), name
    expect(name, sd)
    cases.append("good\t%s" % name)


def bad(name, words):
    cases.append("bad\t%s\t%s" % (name, words))


def records(p):
    with zipfile.ZipFile(p) as z:
        return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def write_zip(p, recs, compress=zipfile.ZIP_STORED):
    with zipfile.ZipFile(p, "w") as z:
        for name, data in recs:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compress
            z.writestr(info, data)


class Storage:
    """A storage as torch.save's persistent id names it."""
    def __init__(self, key, numel, type_=torch.FloatStorage):
        self.key, self.numel, self.type = key, numel, type_


class Tensor:
    """Reduces as torch 1.13 reduces a tensor, to _rebuild_tensor_v2."""
    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, tuple(size), tuple(stride), False, collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", obj.type, obj.key, "cpu", obj.numel)
        return None


def crafted(name, entries, data, words):
    """A state_dict pickled by Python's pickler (protocol 2), storages given."""
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(collections.OrderedDict(entries))
    write_zip(path(name), [("archive/data.pkl", buf.getvalue())] +
              [("archive/data/%s" % k, v) for k, v in data.items()] + [("archive/version", b"3\n")])
    bad(name, words)


torch.manual_seed(123)
# --- good: torch.save's own files --------------------------------------------------------
lin = torch.nn.Linear(3, 2)
good("linear", lin.state_dict())  # with _metadata (BUILD)


class MultiHeadAttention(torch.nn.Module):  # chapter 3's, at GPT-2's width
    def __init__(self, d_in, d_out, context_length, num_heads):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=False)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=False)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=False)
        self.out_proj = torch.nn.Linear(d_out, d_out)
        self.dropout = torch.nn.Dropout(0.0)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


good("mha", MultiHeadAttention(6, 4, 5, 2).state_dict())
x = torch.arange(24, dtype=torch.float32)
layouts = collections.OrderedDict()
layouts["transposed"] = torch.randn(3, 4).t()          # strides (1, 4)
layouts["offset_view"] = x[5:17].view(3, 4)            # storage offset 5, shared with "whole"
layouts["whole"] = x
layouts["every_other"] = x[1::2]                         # stride 2
layouts["scalar"] = torch.tensor(-0.0)
layouts["empty"] = torch.empty(0, 3)
layouts["rank4"] = torch.randn(2, 1, 3, 2)
layouts["specials"] = torch.tensor([float("inf"), float("-inf"), float("nan"), 1e-45, -0.0])
layouts["tied"] = layouts["rank4"]                       # the same tensor under two keys
good("layouts", layouts)
many = collections.OrderedDict(("t%04d" % i, torch.full((2,), float(i))) for i in range(1100))
good("many", many)  # two SETITEMS batches, LONG_BINPUT past memo 255
# bool tensors (a mask registered with .bool(): MHAPyTorchClass), read as 0.0
# and 1.0: one storage, whole and through a transposed view of it
mask = torch.triu(torch.ones(5, 5), diagonal=1).bool()
good("bool_mask", collections.OrderedDict([("mask", mask), ("mask_t", mask.t()), ("w", torch.ones(2))]))

# torch 2.x's layout: the records it adds beside those of torch 1.13.
recs = [(n.replace("linear/", "archive/"), d) for n, d in records(path("linear"))]
recs.insert(1, ("archive/byteorder", b"little"))
recs += [("archive/.data/version", b"3\n"), ("archive/.data/serialization_id", b"1234567890123456789012345678901234567890"),
         ("archive/.format_version", b"1"), ("archive/.storage_alignment", b"64")]
write_zip(path("torch2_layout"), recs)
expect("torch2_layout", lin.state_dict())
cases.append("good\ttorch2_layout")

# --- bad ---------------------------------------------------------------------------------
lin_bytes = open(path("linear"), "rb").read()
with open(path("not_zip"), "wb") as f:
    f.write(b"\x89HDF\r\n\x1a\n" + bytes(64))
bad("not_zip", "expected a zip archive")
open(path("empty_file"), "wb").close()
bad("empty_file", "found an empty file")
torch.save(lin.state_dict(), path("legacy"), _use_new_zipfile_serialization=False)
bad("legacy", "legacy format")
with open(path("truncated"), "wb") as f:
    f.write(lin_bytes[: len(lin_bytes) // 2])
bad("truncated", "truncated")

# A flipped bit in the weight's data: its CRC-32 no longer matches.
with zipfile.ZipFile(path("linear")) as z:
    info = z.getinfo("linear/data/0")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    hdr = lin_bytes[info.header_offset: info.header_offset + 30]
    start = info.header_offset + 30 + struct.unpack("<H", hdr[26:28])[0] + struct.unpack("<H", hdr[28:30])[0]
b = bytearray(lin_bytes)
b[start] ^= 0x01
open(path("crc"), "wb").write(b)
bad("crc", "CRC-32")

# The central directory declares data/0 far larger than the file.
b = bytearray(lin_bytes)
cd = b.rfind(b"PK\x01\x02" + b"\x00" * 0, 0)
i = b.find(b"PK\x01\x02")
while i >= 0:
    name_len = struct.unpack("<H", b[i + 28:i + 30])[0]
    if b[i + 46:i + 46 + name_len] == b"linear/data/0":
        b[i + 20:i + 28] = struct.pack("<II", 0x7FFFFFF0, 0x7FFFFFF0)
    i = b.find(b"PK\x01\x02", i + 4)
open(path("huge_record"), "wb").write(b)
bad("huge_record", "found one declaring 2147483632")

# Storages shorter than their tensors: a record cut short; a view past the end.
recs = records(path("linear"))
recs = [(n, d[:-4] if n == "linear/data/0" else d) for n, d in recs]
write_zip(path("short_record"), recs)
bad("short_record", "expected 24 bytes, found a record of 20")
f6 = struct.pack("<6f", *range(6))
crafted("past_storage", [("w", Tensor(Storage("0", 6), 0, (3, 3), (3, 1)))], {"0": f6},
        "reaches element 8")
crafted("bad_stride", [("w", Tensor(Storage("0", 6), 0, (2, 3), (1, 4)))], {"0": f6}, "reaches element 9")
crafted("bad_offset", [("w", Tensor(Storage("0", 6), 7, (), ()))], {"0": f6}, "at offset 7")
crafted("missing_record", [("w", Tensor(Storage("1", 6), 0, (6,), (1,)))], {"0": f6}, "archive/data/1")
crafted("rank5", [("w", Tensor(Storage("0", 1), 0, (1, 1, 1, 1, 1), (1, 1, 1, 1, 1)))],
        {"0": struct.pack("<f", 1)}, "at most 4 axes")
crafted("half", [("w", Tensor(Storage("0", 2, torch.HalfStorage), 0, (2,), (1,)))], {"0": bytes(4)},
        "torch.HalfStorage (float16)")
crafted("newline_key", [("a\nb", Tensor(Storage("0", 2, torch.HalfStorage), 0, (2,), (1,)))], {"0": bytes(4)},
        "'a\\x0ab': expected a float32 tensor")  # the key's newline escaped: one line
crafted("bool_byte", [("mask", Tensor(Storage("0", 3, torch.BoolStorage), 0, (3,), (1,)))], {"0": bytes([1, 0, 2])},
        "expected bytes 0 or 1, found 2 at element 2")
torch.save({"w": torch.zeros(2, dtype=torch.float64)}, path("float64"))
bad("float64", "torch.DoubleStorage (float64)")


def with_pickle(name, pkl, words, compress=zipfile.ZIP_STORED):
    recs = [(n, pkl if n.endswith("data.pkl") else d) for n, d in records(path("linear"))]
    write_zip(path(name), recs, compress)
    bad(name, words)


pkl = dict(records(path("linear")))["linear/data.pkl"]
with_pickle("os_system", b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.",
            "found os.system: refused")
with_pickle("builtins_eval", pkl.replace(b"ccollections\nOrderedDict\n", b"cbuiltins\neval\n"),
            "found builtins.eval: refused")
with_pickle("no_stop", pkl[:-1], "expected STOP, found the pickle's end")
with_pickle("endless", b"\x80\x02" + b"(" * (1 << 21), "at byte 2097154: expected STOP, found the pickle's end",
            zipfile.ZIP_DEFLATED)  # 2 MiB of MARK, deflated
with_pickle("list_top", b"\x80\x02]q\x00.", "expected a state_dict (a dict of tensors), found a list")
with_pickle("dup_opcode", b"\x80\x02}2.", "found DUP (0x32): refused")
b = bytearray(records(path("linear"))[0][1])
recs = records(path("linear")) + [("linear/byteorder", b"big")]
write_zip(path("big_endian"), recs)
bad("big_endian", "expected 'little'")


# --- pickle protocols 1 to 5: torch.save(sd, f, pickle_protocol=N) -------------------------
for proto in range(1, 6):
    good("protocol%d" % proto, lin.state_dict(), pickle_protocol=proto)

# --- what torch.save saves besides a state_dict ------------------------------------------
# dict(model.named_parameters()): Parameters, read as their tensors.
good("parameters", collections.OrderedDict((k, v.detach()) for k, v in lin.named_parameters()),
     obj=dict(lin.named_parameters()))
# A training checkpoint as the book's chapter 5 saves it (AdamW after one step:
# its state has int keys, tensors, floats, lists, None and bools).
ck_model = torch.nn.Linear(3, 2)
opt = torch.optim.AdamW(ck_model.parameters(), lr=0.0004, weight_decay=0.1)
ck_model(torch.ones(1, 3)).sum().backward()
opt.step()
checkpoint = {"model_state_dict": ck_model.state_dict(), "optimizer_state_dict": opt.state_dict(), "epoch": 3}
good("checkpoint", ck_model.state_dict(), obj=checkpoint, key="model_state_dict")
good("checkpoint_p1", ck_model.state_dict(), obj=checkpoint, key="model_state_dict", pickle_protocol=1)
good("checkpoint_p4", ck_model.state_dict(), obj=checkpoint, key="model_state_dict", pickle_protocol=4)
shutil.copyfile(path("checkpoint"), path("checkpoint_nokey"))
bad("checkpoint_nokey", "found a dict whose entry 'model_state_dict' holds one (a training checkpoint)")
shutil.copyfile(path("checkpoint"), path("checkpoint_optimizer"))
cases.append("badkey\tcheckpoint_optimizer\toptimizer_state_dict\t"
             "expected the value of 'state' to be a tensor, found a dict")
shutil.copyfile(path("checkpoint"), path("checkpoint_nosuchkey"))
cases.append("badkey\tcheckpoint_nosuchkey\tmodel\texpected an entry 'model', found none; "
             "the entries holding a state_dict: 'model_state_dict'")

cases.append("badkey\tlinear\tmodel_state_dict\texpected a dict with an entry 'model_state_dict', "
             "found a state_dict itself (a dict of tensors): read it without a key")
# Two entries that hold a state_dict: both named, either selected.
ema = torch.nn.Linear(3, 2)
two = {"model": ck_model.state_dict(), "ema": ema.state_dict(), "step": 10}
good("two_state_dicts", ema.state_dict(), obj=two, key="ema")
shutil.copyfile(path("two_state_dicts"), path("two_state_dicts_nokey"))
bad("two_state_dicts_nokey", "found a dict whose entries 'model', 'ema' hold one (a training checkpoint): select one by "
                             "its key: ")
# A view that repeats one element 2^26 times (stride 0) under five keys: each
# would be made whole, 1.25 GiB from a storage of 4 bytes.
expanded = torch.ones(1).expand(1 << 26)
torch.save(collections.OrderedDict(("e%d" % i, expanded) for i in range(5)), path("expanded"))
bad("expanded", "'e4': expected tensors of at most 2^28 elements in all, found more by this one")
# A refusal of a Parameter says it is one (float64: not read).
torch.save(dict(torch.nn.Linear(2, 1).double().named_parameters()), path("parameters_float64"))
bad("parameters_float64", "'weight' (a Parameter saved with requires_grad): expected a float32 tensor")


class CausalAttention(torch.nn.Module):  # saved whole: torch.save(model)
    def __init__(self):
        super().__init__()
        self.W_query = torch.nn.Linear(2, 2, bias=False)


CausalAttention.__module__ = "__main__"
torch.save(CausalAttention(), path("whole_model"))
bad("whole_model", "found __main__.CausalAttention: refused, nothing is imported or run; an object saved whole "
                   "(torch.save(model)) is not read: save its weights with torch.save(model.state_dict(), PATH)")
torch.save(CausalAttention(), path("whole_model_p1"), pickle_protocol=1)
bad("whole_model_p1", "torch.save(model.state_dict(), PATH)")
# 150 Linear layers (GPT-2 has about as many modules): _metadata's 150 LONG_BINGETs.
torch.manual_seed(150)
seq = torch.nn.Sequential(*[torch.nn.Linear(1, 1) for _ in range(150)])
good("sequential150", seq.state_dict())
seq_pkl = dict(records(path("sequential150")))["sequential150/data.pkl"]
assert sum(op.name == "LONG_BINGET" for op, _, _ in pickletools.genops(seq_pkl)) >= 150

# --- zip64 -----------------------------------------------------------------------------------
# Python's zipfile with force_zip64: zip64 fields in each local header.
with zipfile.ZipFile(path("linear")) as src, zipfile.ZipFile(path("zip64_python"), "w") as z:
    for i in src.infolist():
        with z.open(zipfile.ZipInfo(i.filename, date_time=(1980, 1, 1, 0, 0, 0)), "w", force_zip64=True) as f:
            f.write(src.read(i.filename))
good_made("zip64_python", lin.state_dict())


def zip64_directory(src, dst):
    """torch's file with every central directory entry's sizes and offset in a zip64
    extra field (0xffffffff in the 32-bit fields), and the zip64 end records, as
    an archive past 4 GiB has them."""
    b = open(src, "rb").read()
    e = b.rfind(b"PK\x05\x06")
    n, cd_size, cd_off = struct.unpack("<HII", b[e + 10:e + 20])
    out, p = bytearray(b[:cd_off]), cd_off
    for _ in range(n):
        h = bytearray(b[p:p + 46])
        nl, xl, cl = struct.unpack("<HHH", h[28:34])
        rest = b[p + 46:p + 46 + nl + xl + cl]
        csize, usize = struct.unpack("<II", h[20:28])
        z64 = struct.pack("<HHQQQ", 1, 24, usize, csize, struct.unpack("<I", h[42:46])[0])
        h[20:28] = struct.pack("<II", 0xFFFFFFFF, 0xFFFFFFFF)
        h[42:46] = struct.pack("<I", 0xFFFFFFFF)
        h[30:32] = struct.pack("<H", xl + len(z64))
        out += h + rest[:nl] + z64 + rest[nl:]
        p += 46 + nl + xl + cl
    size, at = len(out) - cd_off, len(out)
    out += b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, n, n, size, cd_off)
    out += b"PK\x06\x07" + struct.pack("<IQI", 0, at, 1)
    out += b"PK\x05\x06" + struct.pack("<HHHHII", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF) + b"\x00\x00"
    open(dst, "wb").write(out)


zip64_directory(path("linear"), path("zip64_torch"))
good_made("zip64_torch", lin.state_dict())

# --- bounds at their exact edge ----------------------------------------------------------------
x6 = torch.arange(6, dtype=torch.float32)
edge = collections.OrderedDict([("tail", x6[1:]), ("empty_end", x6[6:])])
good("edge_last", edge)  # "tail" ends at element 5 of 6; "empty_end" is empty at offset 6
crafted("edge_past", [("w", Tensor(Storage("0", 6), 1, (6,), (1,)))], {"0": f6}, "found it reaches element 6")
crafted("edge_empty_past", [("w", Tensor(Storage("0", 6), 7, (0,), (1,)))], {"0": f6}, "at offset 7")
# A bool storage of one byte, 0: tests/test_pth.c writes the other 255 values into
# its data and its CRC-32 fields (the central directory's and the data
# descriptor's after the data: torch's local headers hold zeros). torch.save
# of each value gives exactly those bytes:
torch.save({"b": torch.zeros(1, dtype=torch.uint8).view(torch.bool)}, path("bool_byte0"))
b0 = open(path("bool_byte0"), "rb").read()
with zipfile.ZipFile(path("bool_byte0")) as z:
    info = z.getinfo("bool_byte0/data/0")
    start = info.header_offset + 30 + len(info.filename) + struct.unpack("<H", b0[info.header_offset + 28:
                                                                                     info.header_offset + 30])[0]
cd_entry = b0.rfind(b"PK\x01\x02", 0, b0.rfind(b"bool_byte0/data/0"))
scratch = tempfile.mkdtemp()
for v in range(256):
    torch.save({"b": torch.tensor([v], dtype=torch.uint8).view(torch.bool)}, os.path.join(scratch, "bool_byte0.pth"))
    patched = bytearray(b0)
    patched[start] = v
    crc = struct.pack("<I", binascii.crc32(bytes([v])))
    assert b0[start + 1:start + 5] == b"PK\x07\x08"
    patched[start + 5:start + 9] = crc
    patched[cd_entry + 16:cd_entry + 20] = crc
    made = open(os.path.join(scratch, "bool_byte0.pth"), "rb").read()
    assert bytes(patched) == made, "bool byte %d: torch.save differs from the patched file" % v
shutil.rmtree(scratch)
cases.append("bools\tbool_byte0")


def renumber(pkl, to):
    """Python's pickle with its memo indices renumbered by `to` (old -> new), each PUT
    and GET written as BINPUT/BINGET below 256 and LONG_BINPUT/LONG_BINGET above."""
    ops = list(pickletools.genops(pkl))
    out = bytearray()
    for k, (op, arg, pos) in enumerate(ops):
        if op.name in ("BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET"):
            i, get = to.get(arg, arg), "GET" in op.name
            out += (b"h" if get else b"q") + bytes([i]) if i < 256 else (b"j" if get else b"r") + struct.pack("<I", i)
        else:
            out += pkl[pos:ops[k + 1][2] if k + 1 < len(ops) else len(pkl)]
    return bytes(out)


# Memo indices at the edges of the 1- and 4-byte forms: 255 (BINPUT/BINGET), 256 and
# 65536 (LONG_BINPUT/LONG_BINGET), the globals and strings every tensor names again.
buf = io.BytesIO()
Pickler(buf, protocol=2).dump(collections.OrderedDict(
    [(k, Tensor(Storage(str(i), 2), 0, (2,), (1,))) for i, k in enumerate(["a", "b", "c"])]))
# (3: _rebuild_tensor_v2, 5: torch.FloatStorage, 4: 'storage'; 0 stays the
# OrderedDict global, what a 4-byte index read as one byte would find)
memo_pkl = renumber(buf.getvalue(), {3: 255, 5: 256, 4: 65536})
write_zip(path("memo_edges"), [("archive/data.pkl", memo_pkl)] +
          [("archive/data/%d" % i, struct.pack("<2f", i, -i - 0.5)) for i in range(3)] + [("archive/version", b"3\n")])
assert {arg for op, arg, _ in pickletools.genops(memo_pkl) if "GET" in op.name} >= {255, 256, 65536}
good_made("memo_edges", collections.OrderedDict((k, torch.tensor([i, -i - 0.5])) for i, k in enumerate("abc")))

# --- globals: only the allowed ones, exactly ---------------------------------------------------
with_pickle("evil_ordered_dict", pkl.replace(b"ccollections\nOrderedDict\n", b"cevil\nOrderedDict\n"),
            "found evil.OrderedDict: refused")
with_pickle("ordered_dict_x", pkl.replace(b"ccollections\nOrderedDict\n", b"ccollections\nOrderedDictX\n"),
            "found collections.OrderedDictX: refused")
# STACK_GLOBAL's module and name from the memo, checked as GLOBAL's.
with_pickle("stack_global_memo", b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94h\x00h\x01\x93)R.",
            "at byte 20: expected a global of a state_dict (collections.OrderedDict, torch._utils._rebuild_tensor_v2, "
            "torch._utils._rebuild_parameter, torch.<type>Storage), found os.system: refused")
# --- a deflated bomb: a pickle of 8 MiB in a file of a few KiB (memory: tests/test_pth.c)
with_pickle("tuple1_bomb", b"\x80\x02N" + b"\x85" * (8 << 20) + b".", "found a tuple", zipfile.ZIP_DEFLATED)
# The bomb's pickle declared 2 GiB: more than deflate can expand its bytes to.
b = bytearray(open(path("tuple1_bomb"), "rb").read())
i = b.find(b"PK\x01\x02")
assert b[i + 46:i + 46 + 15] == b"linear/data.pkl"
b[i + 24:i + 28] = struct.pack("<I", 0x7FFFFFF0)
open(path("deflate_ratio"), "wb").write(b)
bad("deflate_ratio", "expected a deflated record of at most 1032 times its")
with_pickle("setitem_bomb", b"\x80\x02}" + b"NNs" * ((8 << 20) // 3) + b".",
            "expected a state_dict's keys to be str, found None, a bool or ()", zipfile.ZIP_DEFLATED)

with open(os.path.join(OUT, "cases.tsv"), "w") as f:
    f.write("# tools/cases/pth_cases.py: good NAME | bad NAME WORDS-OF-THE-ERROR\n")
    f.write("\n".join(cases) + "\n")
print("%d cases in %s" % (len(cases), OUT))
if CHECK:
    import shutil
    names = sorted(set(os.listdir(OUT)) | set(os.listdir(COMMITTED)))
    differ = [n for n in names if n != "legacy.pth" and
              not (os.path.exists(os.path.join(COMMITTED, n)) and os.path.exists(os.path.join(OUT, n)) and
                   filecmp.cmp(os.path.join(OUT, n), os.path.join(COMMITTED, n), shallow=False))]
    shutil.rmtree(OUT)
    for n in differ:
        print("FAIL %s: made again by torch, it differs from the committed file (or one side lacks it)" % n)
    print("%d files compared, %d differ" % (len(names), len(differ)))
    sys.exit(1 if differ else 0)
