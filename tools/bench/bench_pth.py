#!/usr/bin/python3
"""bench_pth.py: reading a .pth file, the C reader against torch.load (figures only).

    bench_pth.py BENCH_PTH [--rounds N] [--dir DIR]

Makes two state_dicts with torch 1.13 (in DIR, default a temporary folder):
  - chapter 3's MultiHeadAttention(768, 768, 1024, 0.0, 12) at GPT-2's size
    (Exercise 3.3): 2,360,064 parameters and its (1024, 1024) mask buffer;
  - a GPT-2 small state_dict of float32 tensors (the 124,439,808 parameters
    of GPT-2's 124M model, its keys and shapes, values from torch.randn).
Then, for each file, N rounds (default 5) alternate whole processes:
  - C: `BENCH_PTH FILE` (tests/bench_pth.c: lib/io/pth.h's pth_read);
  - torch: `/usr/bin/python3 -c "import torch; torch.load(FILE)"`, with
    OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (torch at its defaults);
    where the environment sets either, torch again with them as set.
Wall time from fork to exit, CPU time (user + sys: what a loaded machine
stretches least) and peak memory (the child's maximum RSS), read by wait4.
Prints the load (the 1-minute load average) before and after each file,
each side's medians, fastest and slowest, every round's figures, the ratios
C / torch of the wall and of the CPU medians against torch at its defaults
(target: at most 0.2) and the C's peak RSS over the tensors' bytes (target:
at most 1.2), each with MET or NOT MET. Never fails: without torch it says
so and exits 0. A run worth keeping goes into tests/BENCHMARKS.md.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


OPENBLAS_KNOBS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def run(cmd, env=None):
    """(seconds, CPU seconds, max RSS in bytes, ok) of one whole process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace").strip()
    p.stderr.close()
    if p.returncode != 0:
        print(f"  {cmd[0]} failed (exit {p.returncode}): {err[:200]}")
    return t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, p.returncode == 0


def make(dirname):
    import collections
    import torch
    torch.manual_seed(123)
    files = []
    d_out, ctx = 768, 1024
    mha = collections.OrderedDict()
    for k in ("W_query", "W_key", "W_value"):
        mha[k + ".weight"] = torch.randn(d_out, 768)
    mha["out_proj.weight"] = torch.randn(d_out, d_out)
    mha["out_proj.bias"] = torch.randn(d_out)
    mha["mask"] = torch.triu(torch.ones(ctx, ctx), diagonal=1)
    p = os.path.join(dirname, "mha_gpt2.pth")
    torch.save(mha, p)
    files.append((p, "MultiHeadAttention(768, 768, 1024, 0.0, 12): 2,360,064 parameters + the mask buffer",
                  sum(t.numel() * 4 for t in mha.values())))
    del mha
    g = collections.OrderedDict()
    g["wte.weight"] = torch.randn(50257, 768)
    g["wpe.weight"] = torch.randn(1024, 768)
    for i in range(12):
        h = f"h.{i}."
        for k, shape in (("ln_1.weight", (768,)), ("ln_1.bias", (768,)), ("attn.c_attn.weight", (768, 2304)),
                         ("attn.c_attn.bias", (2304,)), ("attn.c_proj.weight", (768, 768)), ("attn.c_proj.bias", (768,)),
                         ("ln_2.weight", (768,)), ("ln_2.bias", (768,)), ("mlp.c_fc.weight", (768, 3072)),
                         ("mlp.c_fc.bias", (3072,)), ("mlp.c_proj.weight", (3072, 768)), ("mlp.c_proj.bias", (768,))):
            g[h + k] = torch.randn(*shape)
    g["ln_f.weight"] = torch.randn(768)
    g["ln_f.bias"] = torch.randn(768)
    p = os.path.join(dirname, "gpt2_124m.pth")
    torch.save(g, p)
    files.append((p, "GPT-2 small's 124,439,808 float32 parameters", sum(t.numel() * 4 for t in g.values())))
    for f in files:
        print("%s\t%d\t%s" % (f[0], f[2], f[1]))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--make":
        make(sys.argv[2])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_pth")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir")
    a = ap.parse_args()
    import importlib.util
    if importlib.util.find_spec("torch") is None:  # not imported here: the parent stays small
        print("no torch for /usr/bin/python3: nothing to compare (Debian's python3-torch)")
        return 0
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        print("making the state_dicts with torch ...", flush=True)
        # In a child process: a child forked from a parent holding the
        # tensors would report the parent's RSS as its own peak (Linux keeps
        # the high-water mark across fork and exec).
        r = subprocess.run([sys.executable, __file__, "--make", tmp], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print("  could not make the state_dicts")
            return 0
        knobs = {k: os.environ[k] for k in OPENBLAS_KNOBS if k in os.environ}
        defaults = {k: v for k, v in os.environ.items() if k not in OPENBLAS_KNOBS}
        sides = [("C reader", None), ("torch.load", defaults)]
        if knobs:
            sides.append(("torch.load, " + ", ".join(f"{k}={v}" for k, v in knobs.items()), dict(os.environ)))
        else:
            print("the environment sets neither OPENBLAS_CORETYPE nor OPENBLAS_L2_SIZE: one torch setting")
        for line in r.stdout.splitlines():
            path, nbytes, what = line.split("\t")
            nbytes = int(nbytes)
            print(f"\n{what}: {os.path.getsize(path) / 1e6:.1f} MB file, {nbytes / 1e6:.1f} MB of tensors")
            load_before = os.getloadavg()[0]
            figures = {label: [] for label, _ in sides}
            torch_cmd = ["/usr/bin/python3", "-c", f"import torch; torch.load({path!r})"]
            run([a.bench_pth, path])  # warm the page cache
            for _ in range(a.rounds):
                for label, env in sides:
                    t, cpu, rss, ok = run([a.bench_pth, path] if env is None else torch_cmd, env)
                    if ok:
                        figures[label].append((t, cpu, rss))
            print(f"  load {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (1-minute average)")
            if any(not f for f in figures.values()):
                print("  no figures: a side failed")
                continue
            med, width = {}, max(len(label) for label, _ in sides)
            for label, _ in sides:
                f = figures[label]
                wall, cpu = statistics.median(x[0] for x in f), statistics.median(x[1] for x in f)
                med[label] = (wall, cpu)
                print(f"  {label:{width}} wall median {wall * 1e3:8.1f} ms (fastest {min(x[0] for x in f) * 1e3:8.1f}, "
                      f"slowest {max(x[0] for x in f) * 1e3:8.1f})  CPU (user + sys) median {cpu * 1e3:8.1f} ms "
                      f"(slowest {max(x[1] for x in f) * 1e3:8.1f})  peak RSS {max(x[2] for x in f) / 1e6:8.1f} MB")
            for label, _ in sides:
                print(f"    {label}, wall / CPU per round (ms): " +
                      ", ".join(f"{x[0] * 1e3:.0f} / {x[1] * 1e3:.0f}" for x in figures[label]))
            c_wall, c_cpu = med["C reader"]
            for label, _ in sides[1:]:
                t_wall, t_cpu = med[label]
                met = "MET" if c_wall <= 0.2 * t_wall and c_cpu <= 0.2 * t_cpu else "NOT MET"
                note = f" (target at most 0.2 for both: {met})" if label == "torch.load" else ""
                print(f"  C / {label}: wall medians {c_wall / t_wall:.3f}, CPU medians {c_cpu / t_cpu:.3f}{note}")
            mem = max(x[2] for x in figures["C reader"]) / nbytes
            print(f"  C peak RSS / tensors' bytes {mem:.2f}  (target at most 1.2: {'MET' if mem <= 1.2 else 'NOT MET'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
