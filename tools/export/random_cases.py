"""random_cases.py: what PyTorch 1.13 draws for lib/random/'s normal, permutation
and init units, for tests/test_random.c.

Writes fixtures/random_cases.h5: one group per case. A case is a seed and a
list of ops run one after the other on torch's default generator, each op a
line that this script and test_random.c both interpret:
  seed S               torch.manual_seed(S) (also empties the cached normal)
  randn N              torch.randn(N)                              -> float32 (N,)
  randn_shape A B ...  torch.randn(A, B, ...)                      -> float32 (A, B, ...)
  normal N MEAN STD    torch.empty(N).normal_(MEAN, STD)           -> float32 (N,)
  rand N               torch.rand(N)                               -> float32 (N,)
  random_int64         torch.empty((), dtype=torch.int64).random_() -> int64 attribute
  randperm N           torch.randperm(N)                           -> float32 (N,)
  randperm_gen N S     torch.randperm(N, generator=torch.Generator().manual_seed(S)) -> float32 (N,)
  embedding NUM DIM P  nn.Embedding(NUM, DIM, padding_idx=P or None if P < 0).weight -> float32 (NUM, DIM)
  xavier_uniform O I G nn.init.xavier_uniform_(torch.empty(O, I), gain=G) -> float32 (O, I)
  xavier_normal O I G  nn.init.xavier_normal_(torch.empty(O, I), gain=G)  -> float32 (O, I)
  mha E H BIAS KV      nn.MultiheadAttention(E, H, bias=BIAS, add_bias_kv=KV,
                       batch_first=True): every parameter, float32, named
                       "oK.<parameter name>" (in_proj_weight (3E, E), ...)
  mha_einsum I O BIAS  the bonus notebook's MHAEinsum(I, O, context_length=4,
                       dropout=0.0, num_heads=1, qkv_bias=BIAS)
                       (mha-implementations.ipynb, as tools/export/ch03_bonus.py
                       keeps it; its dropout and mask draw nothing): every
                       parameter, named "oK.<parameter name>"
  loader N B DROP EP   EP epochs of DataLoader(list(range(N)), batch_size=B,
                       shuffle=True, drop_last=DROP): per epoch e, the int64
                       attribute "oK.e<e>.base_seed" (the iterator's _base_seed)
                       and the dataset "oK.e<e>" (every index of every batch,
                       in order, as float32)
  loader_gen N B D E S the same with DataLoader(..., generator=G), G =
                       torch.Generator().manual_seed(S): the epochs' outputs
                       as for loader, then "oK.gen_rand" = torch.rand(2,
                       generator=G) (where the epochs left G)
  loader_mixed N B D   one epoch with a torch.rand(2) after iter() ("oK.r1")
                       and one after the first next() ("oK.r2"); the indices
                       "oK", the base seed "oK.base_seed"
  sha256 OP ...        the op's single output as the SHA-256 (hex) of its
                       float32 bytes, C order, little-endian: a string
                       attribute "oK" (for the tensors too large to store)
The output of op K (counted from 0) is the dataset or attribute "oK".
Indices (randperm, loader) are stored as float32, exact for N < 2^24. An
empty output (randperm(0), a loader whose one batch drop_last drops) is the
int64 attribute "oK.numel" = 0 instead of a dataset. Each
group's attributes: "seed" (torch.manual_seed's argument before the first op,
decimal, as text), "ops" (the lines). The root attribute "cases" lists the
groups in order; the root also records the torch version, config and CPU
capability: the n >= 16 normal_ bits are those of the AVX2 kernel (1.13
never dispatches normal_ to AVX-512; ATEN_CPU_CAPABILITY=default gives
other bits, which lib/random does not reproduce).

The cases: randn of every size 1..40, 47, 48, 100, 1000, 1001 under seeds
0, 1, 42, 123, 2^32 + 123, 2^64 - 1 and -7, each followed by a rand(2)
probe (where the generator was left); normal_ with five (mean, std) pairs;
mixed streams where the scalar path's cached normal crosses calls, vector
calls and a reseed; random_int64; randperm on the default and on new
generators; Embedding (with padding_idx), xavier_uniform_/normal_,
MultiheadAttention's init order; DataLoader shuffles for several dataset
sizes and both drop_last, with and without a generator of their own; nn.Embedding(50257, 256) and randn(8, 1024, 768)
by SHA-256.

Import has no side effects; run as
    /usr/bin/python3 tools/export/random_cases.py fixtures/random_cases.h5
"""

import hashlib
import os
import sys

if not __package__:  # run as a script: tools/, where the package `export` is, first on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from export import case_files  # noqa: E402  (provenance, groups and datasets, as every case file writes them)
import h5py
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from export.ch03_bonus import MHAEinsum  # noqa: E402

SIZE_SEEDS = ["0", "1", "42", "123", str(2**32 + 123), str(2**64 - 1), "-7"]
SIZES = list(range(1, 41)) + [47, 48, 100, 1000, 1001]
NORMAL_SIZES = [1, 5, 15, 16, 17, 31, 100, 1001]
NORMAL_PAIRS = [("0.0", "1.0"), ("0.5", "2.0"), ("-3.0", "0.1"), ("1000.0", "0.001"), ("0.0", "0.0")]


def _cases():
    """[(name, seed, [op lines])], in order."""
    cases = []
    for s in SIZE_SEEDS:
        ops = []
        for n in SIZES:
            ops += [f"seed {s}", f"randn {n}", "rand 2"]
        cases.append((f"randn_sizes_seed{s}", s, ops))
    for s in ("0", "123"):
        ops = []
        for n in NORMAL_SIZES:
            for mean, std in NORMAL_PAIRS:
                ops += [f"seed {s}", f"normal {n} {mean} {std}", "rand 1"]
        cases.append((f"normal_mean_std_seed{s}", s, ops))
    # The scalar path's cached normal: it survives calls of every size and
    # other draws, and only a reseed empties it.
    cases.append(("stream_cache", "123", [
        "randn 3", "randn 1", "randn 1", "randn 1", "rand 1", "randn 5", "randn 20", "randn 1", "randn 16",
        "randn 2", "normal 1 0.5 2.0", "normal 3 -1.0 0.25", "randn 15", "randn 1", "rand 3", "randn 7",
        "seed 123", "randn 1", "randn 1", "random_int64", "randn 33", "randn 1"]))
    cases.append(("stream_mixed", "42", [
        "randn 1", "randn_shape 2 3", "randn_shape 4 8", "randn 17", "randn 1", "normal 9 3.0 0.5",
        "rand 5", "randn_shape 3 5 7", "randn 1", "randn 47", "randn 1", "randn 14", "randn 1"]))
    cases.append(("stream_reseed", "0", [
        "randn 1", "seed 0", "randn 1", "randn 1", "seed 7", "randn 3", "seed 7", "randn 2", "randn 2"]))
    cases.append(("random_int64", "123", ["random_int64"] * 4 + ["rand 2"]))
    cases.append(("random_int64_seed_max", str(2**64 - 1), ["random_int64", "random_int64", "rand 1"]))
    cases.append(("randperm_default", "7", [f"randperm {n}" for n in (0, 1, 2, 3, 5, 8, 16, 100, 1000, 4097)]
                  + ["rand 2"]))
    for s in ("0", "1", str(2**63 - 1)):
        cases.append((f"randperm_gen_seed{s}", "0",
                      [f"randperm_gen {n} {s}" for n in (1, 2, 3, 10, 31, 257, 5000)] + ["rand 1"]))
    cases.append(("randperm_gen_65537", "0", ["randperm_gen 65537 123", "rand 1"]))
    cases.append(("embedding_small", "123", [
        "embedding 7 5 -1", "embedding 3 4 1", "embedding 2 2 -1", "embedding 10 3 9", "embedding 6 256 0",
        "rand 2"]))
    cases.append(("embedding_1024x256", "0", ["sha256 embedding 1024 256 -1", "rand 2"]))
    cases.append(("xavier", "123", [
        "xavier_uniform 6 3 1.0", "xavier_uniform 48 16 1.0", "sha256 xavier_uniform 2304 768 1.0", "xavier_uniform 5 7 0.5",
        "xavier_normal 3 4 1.0", "xavier_normal 8 8 2.0", "xavier_normal 1 1 1.0", "rand 2"]))
    cases.append(("mha_einsum", "123", ["mha_einsum 6 4 0", "mha_einsum 3 5 1", "mha_einsum 16 8 1", "rand 2"]))
    cases.append(("mha", "123", ["mha 8 2 1 0", "mha 16 4 0 0", "mha 8 1 1 1", "mha 64 4 1 1", "rand 2"]))
    for n in (1, 7, 8, 9, 16, 100, 113, 1000, 4096):
        for drop in (0, 1):
            cases.append((f"loader_n{n}_drop{drop}", "123", [f"loader {n} 8 {drop} 2", "rand 2"]))
    for n, drop in ((1, 0), (9, 0), (9, 1), (16, 1), (113, 0), (113, 1)):
        cases.append((f"loader_gen_n{n}_drop{drop}", "123", [f"loader_gen {n} 8 {drop} 3 {2**32 + 77}", "rand 2"]))
    cases.append(("loader_mixed", "5", ["loader_mixed 113 8 0", "rand 2"]))
    cases.append(("embedding_50257x256_sha256", "123", ["sha256 embedding 50257 256 -1", "rand 2"]))
    cases.append(("randn_8x1024x768_sha256", "123", ["sha256 randn_shape 8 1024 768", "rand 2"]))
    return cases


def _f32(t):
    return np.array(t.detach().to(torch.float32).contiguous().numpy(), dtype=np.float32, order="C")


def _run(tokens):
    """One op on the default generator: [(suffix, value)], value an ndarray
    (a dataset), an int (an int64 attribute) or a str (a string attribute)."""
    op, a = tokens[0], tokens[1:]
    if op == "seed":
        torch.manual_seed(int(a[0]))
        return []
    if op == "randn":
        return [("", _f32(torch.randn(int(a[0]))))]
    if op == "randn_shape":
        return [("", _f32(torch.randn(*[int(x) for x in a])))]
    if op == "normal":
        return [("", _f32(torch.empty(int(a[0])).normal_(float(a[1]), float(a[2]))))]
    if op == "rand":
        return [("", _f32(torch.rand(int(a[0]))))]
    if op == "random_int64":
        return [("", int(torch.empty((), dtype=torch.int64).random_().item()))]
    if op == "randperm":
        return [("", _f32(torch.randperm(int(a[0]))))]
    if op == "randperm_gen":
        g = torch.Generator()
        g.manual_seed(int(a[1]))
        return [("", _f32(torch.randperm(int(a[0]), generator=g)))]
    if op == "embedding":
        pad = int(a[2])
        return [("", _f32(nn.Embedding(int(a[0]), int(a[1]), padding_idx=None if pad < 0 else pad).weight))]
    if op in ("xavier_uniform", "xavier_normal"):
        w = torch.empty(int(a[0]), int(a[1]))
        getattr(nn.init, op + "_")(w, gain=float(a[2]))
        return [("", _f32(w))]
    if op == "mha":
        m = nn.MultiheadAttention(int(a[0]), int(a[1]), dropout=0.0, bias=bool(int(a[2])),
                                  add_bias_kv=bool(int(a[3])), batch_first=True)
        return [("." + n, _f32(p)) for n, p in m.named_parameters()]
    if op == "mha_einsum":
        m = MHAEinsum(int(a[0]), int(a[1]), 4, 0.0, 1, qkv_bias=bool(int(a[2])))
        return [("." + n, _f32(p)) for n, p in m.named_parameters()]
    if op == "loader":
        n, bs, drop, epochs = (int(x) for x in a)
        dl = DataLoader(list(range(n)), batch_size=bs, shuffle=True, drop_last=bool(drop), num_workers=0)
        out = []
        for e in range(epochs):
            it = iter(dl)
            idx = [i for b in it for i in b.tolist()]
            out += [(f".e{e}.base_seed", int(it._base_seed)), (f".e{e}", np.array(idx, dtype=np.float32))]
        return out
    if op == "loader_gen":
        n, bs, drop, epochs, gseed = (int(x) for x in a)
        gen = torch.Generator()
        gen.manual_seed(gseed)
        dl = DataLoader(list(range(n)), batch_size=bs, shuffle=True, drop_last=bool(drop), num_workers=0,
                        generator=gen)
        out = []
        for e in range(epochs):
            it = iter(dl)
            idx = [i for b in it for i in b.tolist()]
            out += [(f".e{e}.base_seed", int(it._base_seed)), (f".e{e}", np.array(idx, dtype=np.float32))]
        return out + [(".gen_rand", _f32(torch.rand(2, generator=gen)))]
    if op == "loader_mixed":
        n, bs, drop = (int(x) for x in a)
        dl = DataLoader(list(range(n)), batch_size=bs, shuffle=True, drop_last=bool(drop), num_workers=0)
        it = iter(dl)
        r1 = torch.rand(2)
        idx = next(it).tolist()
        r2 = torch.rand(2)
        idx += [i for b in it for i in b.tolist()]
        return [(".base_seed", int(it._base_seed)), (".r1", _f32(r1)), (".r2", _f32(r2)),
                ("", np.array(idx, dtype=np.float32))]
    if op == "sha256":
        (suffix, arr), = _run(a)
        return [(suffix, hashlib.sha256(arr.astype("<f4").tobytes()).hexdigest())]
    raise ValueError(f"unknown op {op!r}")


def export(path):
    """Writes every case to the HDF5 file at path (overwriting it); returns the count."""
    cases = _cases()
    names = [c[0] for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    with h5py.File(path, "w", libver="earliest") as f:
        for k, v in case_files.provenance(blas=False).items():
            f.attrs[k] = v
        f.attrs["command"] = "tools/export/random_cases.py"
        for name, seed, ops in cases:
            grp = case_files.group(f, name)
            grp.attrs["seed"] = seed
            grp.attrs["ops"] = "\n".join(ops)
            torch.manual_seed(int(seed))
            for k, line in enumerate(ops):
                for suffix, v in _run(line.split()):
                    key = f"o{k}{suffix}"
                    if isinstance(v, np.ndarray) and v.size == 0:
                        grp.attrs[key + ".numel"] = np.int64(0)  # the fixture reader takes no empty dataset
                    elif isinstance(v, np.ndarray):
                        grp.create_dataset(key, data=v, track_times=False)
                    elif isinstance(v, int):
                        grp.attrs[key] = np.int64(v)
                    else:
                        grp.attrs[key] = v
        f.attrs["cases"] = "\n".join(names)
    return len(cases)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: random_cases.py OUT.h5")
    print(f"{sys.argv[1]}: {export(os.path.abspath(sys.argv[1]))} cases")
