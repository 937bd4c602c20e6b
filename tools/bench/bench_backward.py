#!/usr/bin/python3
"""bench_backward.py: Exercise 3.3's gradient cell, C against torch (figures only).

    bench_backward.py CHAPTER [BENCH_TORCH_PY] [--rounds N]

CHAPTER is the built ch03_6_2_multihead_attention. Each round runs, one after
the other (alternating, so that both sides see the same machine):

  - the C chapter's whole process, `CHAPTER --seed 123 --threads 1`: start,
    every cell's init and draws, Exercise 3.3's forward, the gradient cell's
    backward (its forward, drawing nothing, is the first one's: the module
    kept it), and the printing (to /dev/null): wall time, and CPU time (user
    + system, from wait4);
  - torch 1.13 + OpenBLAS (Debian's libopenblas0-pthread, chosen with
    LD_LIBRARY_PATH, OPENBLAS_NUM_THREADS=1), timing in its own process only
    x.requires_grad_(); mha(x).sum().backward() (tools/bench/bench_torch.py
    --backward: the median and the fastest of 3 after a warm-up, wall and
    CPU time), with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, so that
    OpenBLAS picks its kernels for this core (OPENBLAS_VERBOSE=2 says which);
  - where the environment sets OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE, torch
    again with them as set. OpenBLAS may not know a new core and fall back to
    a slow kernel: setting OPENBLAS_CORETYPE to the core's family (Haswell
    for AVX2, SkylakeX for AVX-512) gives it its best, and the faster of the
    two settings is torch's best.

Prints, for each side, the fastest and the median round in wall and in CPU
time; C / torch for the fastest rounds (the runs least disturbed by the rest
of the machine) and the median of the rounds' ratios, against each torch
setting. The environment passes through: LITATTN_KERNELS=avx2 and
ATEN_CPU_CAPABILITY=avx2 with OPENBLAS_CORETYPE=Haswell compare the two on
AVX2 alone. The targets (printed beside the figures, never a failure): C /
torch at most 0.8 against OpenBLAS's best kernels (tests/MEASURING.md). A run
worth keeping goes into tests/BENCHMARKS.md. Never fails: a missing torch or
OpenBLAS is a line saying so, and the exit status is 0.
"""
import os
import resource
import statistics
import subprocess
import sys
import time

from bench_pairs import load  # the load averages, as every benchmark here prints them

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
OPENBLAS_KNOBS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def run_c(chapter):
    """(wall s, CPU s) of one whole chapter process, or None if it failed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([chapter, "--seed", "123", "--threads", "1"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    t = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        print(f"  C chapter failed (exit {r.returncode}): {r.stderr.strip()[:200]}")
        return None
    return t, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def run_torch(bench_torch, env):
    """((fastest wall s, fastest CPU s), core OpenBLAS picked, library) of
    one torch process's forward + backward, or (None, why, None)."""
    r = subprocess.run([sys.executable, bench_torch, "--backward", "--runs", "3"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    core = next((line.split(":", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("Core:")),
                "(not said)")
    result = next((line.split()[1:] for line in r.stdout.splitlines() if line.startswith("RESULT ")), None)
    if r.returncode != 0 or not result:
        return None, (r.stdout + r.stderr).strip()[-300:], None
    if result[0] in ("unavailable", "wrong") or len(result) < 5:
        return None, " ".join(result), None
    return (float(result[1]), float(result[3])), core, result[-1]


def summary(values):
    """'fastest / median' in ms"""
    return f"{min(values) * 1e3:7.1f} / {statistics.median(values) * 1e3:7.1f}"


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    rounds = 7
    if "--rounds" in argv:
        i = argv.index("--rounds")
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if not value.isdigit() or int(value) < 1:
            print(f"bench_backward.py: --rounds: expected a count of 1 or more, found '{value}'", file=sys.stderr)
            return 2
        rounds = int(value)
        argv = argv[:i] + argv[i + 2:]
    if len(argv) not in (1, 2) or any(a.startswith("-") for a in argv):
        print("usage: " + __doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    chapter = argv[0]
    if not os.access(chapter, os.X_OK) or os.path.isdir(chapter):
        print(f"bench_backward.py: {chapter}: expected the built chapter ch03_6_2_multihead_attention, found no "
              "program there", file=sys.stderr)
        return 2
    bench_torch = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                              "bench_torch.py")
    print("Exercise 3.3 at GPT-2 size, forward and backward, one thread: "
          "MultiHeadAttention(768, 768, 1024, 0.0, 12) on (1, 1024, 768)")

    sides = {}  # label -> environment for torch
    if not os.path.exists(os.path.join(OPENBLAS_DIR, "libblas.so.3")):
        print(f"torch + OpenBLAS: {OPENBLAS_DIR}/libblas.so.3 is missing (apt-get install libopenblas0-pthread); "
              "C alone below")
    else:
        base = dict(os.environ, LD_LIBRARY_PATH=OPENBLAS_DIR, OPENBLAS_NUM_THREADS="1", OPENBLAS_VERBOSE="2")
        best = {k: v for k, v in base.items() if k not in OPENBLAS_KNOBS}
        sides["torch + OpenBLAS, its best kernels (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE unset)"] = best
        knobs = {k: os.environ[k] for k in OPENBLAS_KNOBS if k in os.environ}
        if knobs:
            label = ", ".join(f"{k}={v}" for k, v in knobs.items())
            sides[f"torch + OpenBLAS, as the environment sets it ({label})"] = base
        else:
            print("the environment sets neither OPENBLAS_CORETYPE nor OPENBLAS_L2_SIZE: one torch setting")

    times = {"C": []}  # label -> [(wall, cpu)] per round
    cores = {}
    for label in sides:
        times[label] = []
    print(f"load before: {load()}")
    for r in range(rounds):
        t = run_c(chapter)
        for label, env in sides.items():
            t_torch, core, lib = run_torch(bench_torch, env)
            if t_torch is None:
                print(f"  {label}: {core}")
                continue
            times[label].append((t_torch, t))
            cores[label] = f"core {core}, {os.path.basename(lib)}"
        if t is not None:
            times["C"].append(t)
    print(f"load after: {load()}")
    if not times["C"]:
        print("the C chapter did not run")
        return 0
    c_wall = [t[0] for t in times["C"]]
    c_cpu = [t[1] for t in times["C"]]
    print(f"\n{rounds} rounds, alternating; ms, fastest / median")
    print(f"{'':62} {'wall':>17} {'CPU':>17}")
    print(f"{'C chapter, whole process (start, draws, forward, backward, printing)':62} {summary(c_wall)} "
          f"{summary(c_cpu)}")
    for label in sides:
        rows = times[label]
        if not rows:
            print(f"{label:62} {'n/a':>17}")
            continue
        print(f"{label:62} {summary([t[0][0] for t in rows])} {summary([t[0][1] for t in rows])}   "
              f"({cores.get(label, '')})")
    print(f"\nC / torch{'':53} {'fastest':>8} {'rounds':>8} {'fastest':>8} {'rounds':>8}")
    for label in sides:
        rows = [t for t in times[label] if t[1] is not None]
        if not rows:
            continue
        wall = [t[1][0] / t[0][0] for t in rows]
        cpu = [t[1][1] / t[0][1] for t in rows]
        print(f"{'against ' + label.split(',')[0] + ' (' + label.split('(')[-1].rstrip(')') + ')':62} "
              f"{min(c_wall) / min(t[0][0] for t in rows):8.2f} {statistics.median(wall):8.2f} "
              f"{min(c_cpu) / min(t[0][1] for t in rows):8.2f} {statistics.median(cpu):8.2f}")
    print("(wall, then CPU: the fastest C round over the fastest torch round, and the median of the rounds' "
          "ratios)")
    print("target: C / torch at most 0.80 against OpenBLAS's best kernels (the C side counts its whole process, "
          "torch only its forward and backward)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
