#!/usr/bin/python3
"""bench_bonus.py: the bonus notebook's timing sections (mha-implementations.ipynb,
sections 10 and 11) for litattn, C against torch 1.13, figures only.

    bench_bonus.py BENCH_BONUS CHAPTER [--json OUT]

BENCH_BONUS is the built tests/bench_bonus, CHAPTER the built
ch03_bonus_mha_implementations (meson test -C build --benchmark bonus runs
it so). It prints, and writes to OUT as JSON for the book view's charts:

1. Forward times at the notebook's size (8, 1024, 768), one thread, per
   implementation 1, 2, 3, 4, 7, 8 and the exact fused attention (5/6/9):
   C (bench_bonus times: a warm-up, then the median of at least 3 runs),
   torch 1.13 + OpenBLAS (Debian's libopenblas0-pthread by LD_LIBRARY_PATH,
   OPENBLAS_NUM_THREADS=1) on its best kernels (OPENBLAS_CORETYPE and
   OPENBLAS_L2_SIZE unset; a second run with them as the environment sets
   them, where it does; OPENBLAS_VERBOSE=2 names the core), and torch + the
   reference BLAS (pinned by its directory), one run each, no warm-up (a
   forward takes tens of seconds there). torch runs under torch.no_grad()
   (the notebook's %timeit keeps autograd on, which only makes torch
   slower). The ratio: the fastest C forward over torch + OpenBLAS's
   fastest. Each side's CPU time (getrusage, time.process_time()) is given
   beside its wall time, and the ratio in CPU time too: a busy machine
   stretches wall time far more, and C and torch run minutes apart.
2. Forward + backward (x.requires_grad_(); m(x).sum().backward()): in C
   where the module has a backward (1, 3, 4, 7 and 8 as the chapter's cells
   run them; chapter 3's MultiHeadAttention with its forward fused:
   multihead_attention_sum_backward), torch + OpenBLAS for every
   implementation.
3. Against the machine: the fused forward's GFLOP/s, counting only the
   multiply-adds the causal result needs, over the measured mul + add peak
   (bench_bonus machine), at (8, 1024, 768) and (1, 16384, 768): 5 runs
   after a warm-up, their median and the fastest, in wall and in CPU time.
   The target is judged on the fastest wall time, the run least disturbed
   by the rest of the machine, as the peak is the fastest of its windows.
4. Peak memory against T (1024 to 16384, batch 1, GPT-2's module: 12 heads,
   d 768), each a fresh process whose peak RSS is read by wait4: the C
   chapter's whole run (--seed 123 --context-len T --batch-size 1: the
   materialising implementations where they fit, then the fused one), C
   fused alone and C materialised alone (bench_bonus memory: the module up
   to T = 2048, past the library's 2^26-element limit the same steps on the
   fast kernels with malloc'd buffers; skipped past 16 GiB), and torch's
   chapter 3 MultiHeadAttention forward (skipped where it would need more
   than 16 GiB).

The benchmark's targets, each printed with MET or NOT MET: the ratio of 1 at
most 0.65; the fused forward of 3 at least 70 % of the peak at both sizes;
at T = 16384, the C chapter's whole run and C fused each under 1 GiB. Figures
on a shared or virtual host are noisy: note the load beside them. A run
worth keeping goes into tests/BENCHMARKS.md (date, commit, CPU, load, the
command, the figures).

Internal modes, run by the above in a process of their own:
    bench_bonus.py --torch-times B [--runs N] [--backward]
    bench_bonus.py --torch-memory T

Never fails: a missing torch or OpenBLAS is a line saying so; exit status 0.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
REFERENCE_DIRS = "/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack"
OPENBLAS_KNOBS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
EMBED, HEADS, T_BOOK, B_BOOK = 768, 12, 1024, 8
MEMORY_T = (1024, 2048, 4096, 8192, 16384)
TORCH_MEMORY_LIMIT = 16 << 30
TENSOR_MAX_NUMEL = 1 << 26  # lib/tensor/tensor.h: the largest tensor the C library makes

# (key, label) of each implementation, in the notebook's order; "fused" is
# litattn's exact fused attention in place of 5, 6 and 9.
IMPLS = [("1", "1) Ch03_MHA_Wrapper"), ("2", "2) Ch03_MHA"), ("3", "3) MultiHeadAttentionCombinedQKV"),
         ("4", "4) MHAEinsum"), ("fused", "5/6/9) exact fused"), ("7", "7) MHAPyTorchClass"),
         ("8", "8) MHAPyTorchClass, no weights")]


# --- torch's side, in its own process ------------------------------------------------------

def mapped_blas():
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if os.path.basename(path).startswith(("libblas", "libopenblas")):
                return path
    return "(no libblas mapped)"


def import_torch():
    import torch
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: the package export
    sys.dont_write_bytecode = True  # no __pycache__ in tools/export/
    from export import ch03_bonus  # the notebook's classes, as the exporter holds them
    return torch, ch03_bonus


def torch_modules(torch, nb, batch):
    """embeddings and the notebook's modules, drawn in its order from torch.manual_seed(123)."""
    torch.manual_seed(123)
    x = torch.randn((batch, T_BOOK, EMBED))
    kw = dict(d_in=EMBED, d_out=EMBED, context_length=T_BOOK, dropout=0.0, num_heads=HEADS, qkv_bias=False)
    mods = {"1": nb.Ch03_MHA_Wrapper(d_in=EMBED, d_out=EMBED // HEADS, context_length=T_BOOK, dropout=0.0,
                                     num_heads=HEADS, qkv_bias=False),
            "2": nb.Ch03_MHA(**kw), "3": nb.MultiHeadAttentionCombinedQKV(**kw), "4": nb.MHAEinsum(**kw)}
    nb.MHAPyTorchScaledDotProduct(**kw), nb.MHAPyTorchSDPAWithoutFlash(**kw)  # they draw; torch 1.13 cannot run them
    mods["7"] = nb.MHAPyTorchClass(**kw)
    mods["8"] = nb.MHAPyTorchClass(**kw, need_weights=False)
    return x, mods


def torch_times(batch, runs, backward):
    try:
        torch, nb = import_torch()
    except Exception as exc:  # noqa: BLE001 - any failure means "no torch here"
        print(f"RESULT unavailable {type(exc).__name__}: {exc}")
        return 0
    torch.set_num_threads(1)
    x, mods = torch_modules(torch, nb, batch)
    print(f"RESULT blas {mapped_blas()}")
    print(f"RESULT torch {torch.__version__} {torch.get_num_threads()}")
    for key, m in mods.items():
        times, cpu = [], []
        with torch.no_grad():
            if runs > 1:
                m(x)  # warm-up
            for _ in range(runs):
                t0, c0 = time.perf_counter(), time.process_time()
                m(x)
                cpu.append(time.process_time() - c0)
                times.append(time.perf_counter() - t0)
        print(f"RESULT fwd.{key} {statistics.median(times):.6f} " + " ".join(f"{t:.4f}" for t in times), flush=True)
        print(f"RESULT fwdcpu.{key} {statistics.median(cpu):.6f}", flush=True)
        if backward:
            times, cpu = [], []
            for _ in range(min(runs, 3)):  # seconds each: the median of 3
                xg = x.detach().clone().requires_grad_()
                m.zero_grad(set_to_none=True)
                t0, c0 = time.perf_counter(), time.process_time()
                m(xg).sum().backward()
                cpu.append(time.process_time() - c0)
                times.append(time.perf_counter() - t0)
            print(f"RESULT fwdbwd.{key} {statistics.median(times):.6f} " + " ".join(f"{t:.4f}" for t in times),
                  flush=True)
            print(f"RESULT fwdbwdcpu.{key} {statistics.median(cpu):.6f}", flush=True)
    return 0


def torch_memory(T):
    try:
        torch, nb = import_torch()
    except Exception as exc:  # noqa: BLE001
        print(f"RESULT unavailable {type(exc).__name__}: {exc}")
        return 0
    torch.set_num_threads(1)
    torch.manual_seed(123)
    x = torch.randn((1, T, EMBED))
    m = nb.Ch03_MHA(d_in=EMBED, d_out=EMBED, context_length=T, dropout=0.0, num_heads=HEADS, qkv_bias=False)
    t0 = time.perf_counter()
    with torch.no_grad():
        m(x)
    t = time.perf_counter() - t0
    print(f"RESULT memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss} {t:.6f}")
    return 0


# --- the driver ----------------------------------------------------------------------------

def run(argv, env=None):
    """(stdout, stderr, peak RSS in KiB of that process alone, exit status, seconds): the
    child writes to temporary files and is reaped here with wait4, which gives its own rusage."""
    import tempfile
    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, env=env, stdout=fo, stderr=fe, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        t = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        fo.seek(0)
        fe.seek(0)
        return fo.read(), fe.read(), ru.ru_maxrss, p.returncode, t


def results(out):
    """{key: [fields]} of the RESULT lines."""
    r = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            f = line.split()
            r[f[1]] = f[2:]
    return r


def base_env():
    env = dict(os.environ, MALLOC_PERTURB_="0")  # meson sets one at random: it makes glibc fill every block
    return env


def torch_sides():
    """[(label, environment, batch, runs, backward)] of the torch runs, and notes."""
    sides, notes = [], []
    me = os.path.abspath(__file__)
    if os.path.exists(os.path.join(OPENBLAS_DIR, "libblas.so.3")):
        env = dict(base_env(), LD_LIBRARY_PATH=OPENBLAS_DIR, OPENBLAS_NUM_THREADS="1", OPENBLAS_VERBOSE="2")
        best = {k: v for k, v in env.items() if k not in OPENBLAS_KNOBS}
        sides.append(("openblas", "torch + OpenBLAS (best kernels)", best, B_BOOK, 5, True))
        knobs = {k: os.environ[k] for k in OPENBLAS_KNOBS if k in os.environ}
        if knobs:
            label = ", ".join(f"{k}={v}" for k, v in knobs.items())
            sides.append(("openblas_as_set", f"torch + OpenBLAS ({label})", env, B_BOOK, 5, True))
        else:
            notes.append("the environment sets neither OPENBLAS_CORETYPE nor OPENBLAS_L2_SIZE: one OpenBLAS row")
    else:
        notes.append(f"torch + OpenBLAS: {OPENBLAS_DIR}/libblas.so.3 is missing (apt-get install libopenblas0-pthread)")
    env = dict(base_env(), LD_LIBRARY_PATH=REFERENCE_DIRS)
    sides.append(("reference", "torch + reference BLAS (one run each)", env, B_BOOK, 1, False))
    return [(key, label, [sys.executable, me, "--torch-times", str(b), "--runs", str(n)] + ["--backward"] * bw, env)
            for key, label, env, b, n, bw in sides], notes


def fmt_ms(s):
    return f"{s * 1e3:9.1f}" if s is not None else f"{'n/a':>9}"


def main(argv):
    if argv[:1] == ["--torch-times"]:
        return torch_times(int(argv[1]), int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3,
                           "--backward" in argv)
    if argv[:1] == ["--torch-memory"]:
        return torch_memory(int(argv[1]))
    sys.stdout.reconfigure(line_buffering=True)  # meson shows the lines as they come
    json_out = None
    if "--json" in argv:
        i = argv.index("--json")
        json_out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) != 2:
        print("usage: bench_bonus.py BENCH_BONUS CHAPTER [--json OUT]", file=sys.stderr)
        return 0
    bench, chapter = argv
    t_start = time.perf_counter()
    report = {"size": [B_BOOK, T_BOOK, EMBED], "threads": 1, "impls": [{"key": k, "label": l} for k, l in IMPLS],
              "notes": []}
    print(f"The bonus notebook's timing sections: causal multi-head attention on ({B_BOOK}, {T_BOOK}, {EMBED}), "
          "12 heads, one thread; medians (noisy on a shared or virtual host: note the load beside them)\n")

    # 1. C forwards (and chapter 3's forward + backward)
    out, err, _, rc, secs = run([bench, "times"], base_env())
    print(out, end="")
    c = results(out)
    if rc != 0:
        print(f"C: bench_bonus failed (exit {rc}): {err.strip()[-300:]}")
    c_fwd = {k: float(c[f"time.{k}"][0]) for k, _ in IMPLS if f"time.{k}" in c}
    if "time.2f" in c:
        c_fwd["2f"] = float(c["time.2f"][0])
    c_fwdbwd = {k: float(c[f"time.{k}_backward"][0]) for k in ("1", "3", "4", "7", "8")
                if f"time.{k}_backward" in c}
    if "time.2f_backward" in c:
        c_fwdbwd["2"] = float(c["time.2f_backward"][0])
    c_cpu = {k[4:]: float(v[0]) for k, v in c.items() if k.startswith("cpu.")}  # "1", ..., "2f", "2f_backward"
    report["c"] = {"path": (c.get("path") or ["?"])[0], "forward": c_fwd, "forward_backward": c_fwdbwd,
                   "cpu": c_cpu}

    # torch, each side in its own process
    sides, notes = torch_sides()
    report["notes"] += notes
    for n in notes:
        print(n)
    torch = {}
    for key, label, cmd, env in sides:
        print(f"[{label}] running ...", flush=True)
        out, err, _, rc, secs = run(cmd, env)
        r = results(out)
        if "unavailable" in r or rc != 0:
            why = " ".join(r.get("unavailable", [])) or err.strip()[-300:]
            print(f"[{label}] not run: {why}")
            report["notes"].append(f"{label}: not run: {why}")
            continue
        core = next((line.split(":", 1)[1].strip() for line in err.splitlines() if line.startswith("Core:")), None)
        blas = (r.get("blas") or ["?"])[0]
        print(f"[{label}] {secs:.0f} s; libblas {blas}" + (f"; OpenBLAS core {core}" if core else ""))
        torch[key] = {"label": label, "blas": blas, "core": core, "batch": B_BOOK,
                      "forward": {k[4:]: float(v[0]) for k, v in r.items() if k.startswith("fwd.")},
                      "forward_runs": {k[4:]: [float(x) for x in v[1:]] for k, v in r.items() if k.startswith("fwd.")},
                      "forward_backward": {k[7:]: float(v[0]) for k, v in r.items() if k.startswith("fwdbwd.")},
                      "forward_cpu": {k[7:]: float(v[0]) for k, v in r.items() if k.startswith("fwdcpu.")},
                      "forward_backward_cpu": {k[10:]: float(v[0]) for k, v in r.items()
                                               if k.startswith("fwdbwdcpu.")}}
    report["torch"] = torch

    # the table
    ob, ref = torch.get("openblas"), torch.get("reference")
    print(f"\nForward, ({B_BOOK}, {T_BOOK}, {EMBED}), one thread, ms (medians; torch + reference BLAS: one run)")
    print(f"{'implementation':34} {'C':>9} {'torch+OpenBLAS':>15} {'torch+ref':>13} {'C / torch+OpenBLAS':>19} "
          f"{'CPU: C':>9} {'torch':>9} {'C / torch':>9}")
    ob_cpu = ob.get("forward_cpu", {}) if ob else {}
    for k, label in IMPLS:
        cv = c_fwd.get(k)
        tk = "2" if k == "fused" else k  # torch 1.13 has no fused attention: chapter 3's class is its nearest
        ov = ob["forward"].get(tk) if ob and k != "fused" else None
        rv = ref["forward"].get(tk) if ref and k != "fused" else None
        ratio = f"{cv / ov:19.2f}" if cv and ov else f"{'':19}"
        cc, oc = c_cpu.get(k), ob_cpu.get(tk) if k != "fused" else None
        cpu_ratio = f"{cc / oc:9.2f}" if cc and oc else ""
        print(f"{label:34} {fmt_ms(cv)} {fmt_ms(ov):>15} {fmt_ms(rv):>13} {ratio} {fmt_ms(cc)} {fmt_ms(oc)} "
              f"{cpu_ratio}")
    if "2f" in c_fwd:
        print(f"{'2) Ch03_MHA, attention fused':34} {fmt_ms(c_fwd['2f'])} {'':15} {'':13} {'':19} "
              f"{fmt_ms(c_cpu.get('2f'))}")
    fastest_c = min(((v, k) for k, v in c_fwd.items()), default=None)
    fastest_t = min(((v, k) for k, v in ob["forward"].items()), default=None) if ob else None
    if fastest_c and fastest_t:
        ratio = fastest_c[0] / fastest_t[0]
        print(f"\nfastest C forward ({fastest_c[1]}: {fastest_c[0] * 1e3:.1f} ms) / torch + OpenBLAS's fastest "
              f"({fastest_t[1]}: {fastest_t[0] * 1e3:.1f} ms) = {ratio:.2f}   (target: at most 0.65) "
              f"{'MET' if ratio <= 0.65 else 'NOT MET'}")
        report["fastest"] = {"c": fastest_c[1], "c_s": fastest_c[0], "torch": fastest_t[1], "torch_s": fastest_t[0],
                             "ratio": ratio}
        if c_cpu.get(fastest_c[1]) and ob_cpu:
            tc = min(ob_cpu.values())
            print(f"in CPU time: that C forward {c_cpu[fastest_c[1]] * 1e3:.1f} ms / torch + OpenBLAS's fastest "
                  f"{tc * 1e3:.1f} ms = {c_cpu[fastest_c[1]] / tc:.2f} (a busy machine stretches wall time more)")
            report["fastest"]["ratio_cpu"] = c_cpu[fastest_c[1]] / tc
    if torch.get("openblas_as_set"):
        s = torch["openblas_as_set"]
        f = min(s["forward"].values())
        line = (f"with OpenBLAS as the environment sets it ({s['label']}): torch's fastest {f * 1e3:.1f} ms, "
                f"ratio {fastest_c[0] / f:.2f}")
        if s.get("forward_cpu") and fastest_c and c_cpu.get(fastest_c[1]):
            fc = min(s["forward_cpu"].values())
            line += f"; in CPU time {fc * 1e3:.1f} ms, ratio {c_cpu[fastest_c[1]] / fc:.2f}"
        print(line)

    print(f"\nForward + backward (x.requires_grad_(); m(x).sum().backward()), ({B_BOOK}, {T_BOOK}, {EMBED}), ms")
    print(f"{'implementation':34} {'C':>9} {'torch+OpenBLAS':>15} {'C / torch+OpenBLAS':>19} {'CPU: C':>9} "
          f"{'torch':>9} {'C / torch':>9}")
    ob_bcpu = ob.get("forward_backward_cpu", {}) if ob else {}
    for k, label in IMPLS:
        tk = "2" if k == "fused" else k
        ov = ob["forward_backward"].get(tk) if ob and k != "fused" else None
        cv = c_fwdbwd.get(tk)
        cs = fmt_ms(cv) if cv else f"{'n/a':>9}"
        note = f"{cv / ov:19.2f}" if cv and ov else f"{'':19}"
        cc = c_cpu.get("2f_backward" if tk == "2" else f"{tk}_backward")
        oc = ob_bcpu.get(tk) if k != "fused" else None
        print(f"{label:34} {cs} {fmt_ms(ov):>15} {note} {fmt_ms(cc)} {fmt_ms(oc)} "
              f"{f'{cc / oc:9.2f}' if cc and oc else ''}")
    print("(C's backward of 1, 3, 4, 7 and 8 as the chapter's cells run it; of 2 over the fused forward, keeping "
          "q, k, v; 5/6/9 is that same module and backward; the reference BLAS is not timed here: minutes per run)")

    # 3. against the machine
    print()
    out, err, _, rc, secs = run([bench, "machine"], base_env())
    print(out, end="")
    m = results(out)
    if rc != 0:
        print(f"bench_bonus machine failed (exit {rc}): {err.strip()[-300:]}")
    peak = float(m["peak"][0]) if "peak" in m else None
    report["machine"] = {"path": (m.get("path") or ["?"])[0], "peak_gflops": peak, "fused": []}
    for key, v in m.items():
        if key.startswith("fused."):
            _, b, t = key.split(".")
            gf = float(v[2])
            fastest = float(v[4]) if len(v) > 4 else None
            report["machine"]["fused"].append({"batch": int(b), "T": int(t), "seconds": float(v[0]),
                                               "gflop": float(v[1]), "gflops": gf,
                                               "first_run_seconds": float(v[3]) if len(v) > 3 else None,
                                               "fastest_seconds": fastest,
                                               "fraction": gf / peak if peak else None,
                                               "fastest_fraction": float(v[1]) / fastest / peak
                                               if peak and fastest else None})
    print("counted: the 4 projections, 2*B*T*d*d flops each, and per head q.k and w.v over the causal triangle, "
          "2*B*h*hd*T(T+1)/2 each (a multiply-add = 2 flops); target: at least 70% of the peak")
    for r in report["machine"]["fused"]:
        if r["fastest_fraction"] is not None:
            verdict = "MET" if r["fastest_fraction"] >= 0.70 else "NOT MET"
            print(f"fused forward ({r['batch']}, {r['T']}, 768): fastest run {100 * r['fastest_fraction']:.1f}% "
                  f"of the peak, median {100 * r['fraction']:.1f}% (target: at least 70%, judged on the fastest "
                  f"run, the least disturbed, as the peak is the fastest of its windows) {verdict}")

    # 4. peak memory against T
    print(f"\nPeak memory (RSS of a fresh process, MiB) against T: batch 1, {HEADS} heads, d {EMBED}")
    print(f"{'T':>6} {'C chapter run':>14} {'C fused':>9} {'C materialised':>15} {'torch (OpenBLAS)':>17}")
    mem = []
    openblas_env = dict(base_env(), LD_LIBRARY_PATH=OPENBLAS_DIR, OPENBLAS_NUM_THREADS="1") \
        if os.path.exists(os.path.join(OPENBLAS_DIR, "libblas.so.3")) else dict(base_env(), LD_LIBRARY_PATH=REFERENCE_DIRS)
    for T in MEMORY_T:
        row = {"T": T}
        out, err, rss, rc, secs = run([chapter, "--seed", "123", "--context-len", str(T), "--batch-size", "1"],
                                      base_env())
        row["chapter_mb"] = rss / 1024 if rc == 0 and rss else None
        row["chapter_skipped"] = sum(1 for line in out.splitlines() if " skipped: " in line)
        if rc != 0:
            row["chapter_note"] = err.strip()[-200:]
        for mode in ("fused", "materialised"):
            how = mode
            if mode == "materialised" and HEADS * T * T > TENSOR_MAX_NUMEL:
                # past the library's limit: the same steps on the fast kernels with malloc'd buffers
                how = "materialised-raw"
                need = 3 * HEADS * T * T * 4
                if need > TORCH_MEMORY_LIMIT:
                    row["materialised_mb"] = None
                    row["materialised_note"] = (f"skipped: its three (1, {HEADS}, {T}, {T}) float32 tensors need "
                                                f"{need / 2**30:.1f} GiB, over 16 GiB")
                    continue
                row["materialised_note"] = (f"(1, {HEADS}, {T}, {T}) is past the library's 2^26 elements per "
                                            "tensor: measured on the fast kernels with malloc'd buffers "
                                            "(bench_bonus memory materialised-raw), the module's steps and bits")
            out, err, rss, rc, secs = run([bench, "memory", how, str(T)], base_env())
            row[f"{mode}_mb"] = rss / 1024 if rc == 0 and rss else None
            row[f"{mode}_how"] = how
            row[f"{mode}_s"] = secs
        # torch: the scores, their scaled copy and the softmax, (1, 12, T, T) float32
        # each, and the (T, T) float mask and its bool
        need = 3 * HEADS * T * T * 4 + 5 * T * T
        if need > TORCH_MEMORY_LIMIT:
            row["torch_mb"] = None
            row["torch_note"] = (f"skipped: its three (1, {HEADS}, {T}, {T}) float32 tensors and the mask need "
                                 f"{need / 2**30:.1f} GiB, over 16 GiB")
        else:
            out, err, rss, rc, secs = run([sys.executable, os.path.abspath(__file__), "--torch-memory", str(T)],
                                          openblas_env)
            r = results(out)
            row["torch_mb"] = rss / 1024 if rc == 0 and rss and "memory" in r else None
            if row["torch_mb"] is None:
                row["torch_note"] = " ".join(r.get("unavailable", [])) or err.strip()[-200:]
        mem.append(row)
        cells = [fmt_ms(row["chapter_mb"] / 1e3 if row["chapter_mb"] else None),
                 fmt_ms(row.get("fused_mb", 0) / 1e3 if row.get("fused_mb") else None),
                 fmt_ms(row["materialised_mb"] / 1e3 if row.get("materialised_mb") else None),
                 fmt_ms(row["torch_mb"] / 1e3 if row["torch_mb"] else None)]
        print(f"{T:>6} {cells[0]:>14} {cells[1]:>9} {cells[2]:>15} {cells[3]:>17}", flush=True)
    for row in mem:
        for k in ("chapter_note", "materialised_note", "torch_note"):
            if row.get(k):
                print(f"  T = {row['T']}: {k.split('_')[0]}: {row[k]}")
    big = next((r for r in mem if r["T"] == 16384), None)
    if big and big.get("fused_mb"):
        met = max(big["fused_mb"], big["chapter_mb"] or 0) < 1024
        print(f"T = 16384: C fused peak {big['fused_mb']:.0f} MiB, C chapter run {big['chapter_mb'] or 0:.0f} MiB "
              f"(target: under 1 GiB = 1024 MiB) {'MET' if met else 'NOT MET'}")
    print("C chapter run: --seed 123 --context-len T --batch-size 1, every implementation that fits the library's "
          "limit (the wrapper's per-head (1, T, T) up to 8192, the others' (1, 12, T, T) up to 2048), then the fused")
    report["memory"] = mem
    report["seconds"] = time.perf_counter() - t_start
    report["made"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if json_out:
        tmp = json_out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        os.replace(tmp, json_out)
        print(f"\nwrote {json_out} (the book view draws it: ninja -C build book-view)")
    print(f"benchmark took {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
