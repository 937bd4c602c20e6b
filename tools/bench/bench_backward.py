#!/usr/bin/python3
"""bench_backward.py: Exercise 3.3's gradient cell, C against torch (figures only).

    bench_backward.py CHAPTER [BENCH_TORCH_PY] [--rounds N]

CHAPTER is the built ch03_6_2_multihead_attention. Each round runs, one after
the other (alternating, so that both sides see the same machine):

  - the C chapter's whole process, `CHAPTER --seed 123 --threads 1`: start,
    every cell's init and draws, Exercise 3.3's forward, the gradient cell's
    backward (its forward, drawing nothing, is the first one's: the module
    kept it), and the printing (to /dev/null): wall time;
  - torch 1.13 + OpenBLAS (Debian's libopenblas0-pthread, chosen with
    LD_LIBRARY_PATH, OPENBLAS_NUM_THREADS=1), timing in its own process only
    x.requires_grad_(); mha(x).sum().backward() (tools/bench/bench_torch.py
    --backward: median of 3 after a warm-up), with OPENBLAS_CORETYPE and
    OPENBLAS_L2_SIZE unset, so that OpenBLAS picks its best kernels for this
    core (OPENBLAS_VERBOSE=2 says which);
  - where the environment sets OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE, torch
    again with them as set.

Prints each side's median and the ratio C / torch; the benchmark's target is
at most 0.8 against OpenBLAS's best kernels (printed beside the figures, never
a failure). A run worth keeping goes into tests/BENCHMARKS.md. Never fails: a missing torch or OpenBLAS is
a line saying so, and the exit status is 0.
"""
import os
import statistics
import subprocess
import sys
import time

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
OPENBLAS_KNOBS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def run_c(chapter):
    """Wall seconds of one whole chapter process, or None if it failed."""
    t0 = time.perf_counter()
    r = subprocess.run([chapter, "--seed", "123", "--threads", "1"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    t = time.perf_counter() - t0
    if r.returncode != 0:
        print(f"  C chapter failed (exit {r.returncode}): {r.stderr.strip()[:200]}")
        return None
    return t


def run_torch(bench_torch, env):
    """(seconds, core OpenBLAS picked, library) of one torch process's
    forward + backward, or (None, why, None)."""
    r = subprocess.run([sys.executable, bench_torch, "--backward", "--runs", "3"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    core = next((line.split(":", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("Core:")),
                "(not said)")
    result = next((line.split()[1:] for line in r.stdout.splitlines() if line.startswith("RESULT ")), None)
    if r.returncode != 0 or not result:
        return None, (r.stdout + r.stderr).strip()[-300:], None
    if result[0] in ("unavailable", "wrong"):
        return None, " ".join(result), None
    return float(result[0]), core, result[-1]


def main(argv):
    rounds = 5
    if "--rounds" in argv:
        i = argv.index("--rounds")
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if not value.isdigit() or int(value) < 1:
            print(f"bench_backward.py: --rounds: expected a count of 1 or more, found '{value}'", file=sys.stderr)
            return 2
        rounds = int(value)
        argv = argv[:i] + argv[i + 2:]
    if len(argv) not in (1, 2):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    chapter = argv[0]
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

    times = {"C": []}
    cores = {}
    for label in sides:
        times[label] = []
    for r in range(rounds):
        t = run_c(chapter)
        if t is not None:
            times["C"].append(t)
        for label, env in sides.items():
            t, core, lib = run_torch(bench_torch, env)
            if t is None:
                print(f"  {label}: {core}")
                continue
            times[label].append(t)
            cores[label] = f"core {core}, {os.path.basename(lib)}"
    if not times["C"]:
        print("the C chapter did not run")
        return 0
    c = statistics.median(times["C"])
    print(f"\n{'':70} {'median':>9} {'C / it':>7}")
    print(f"{'C chapter, whole process (start, draws, forward, backward, printing)':70} {c * 1e3:7.1f} ms")
    for label in sides:
        if not times[label]:
            print(f"{label:70} {'n/a':>9}")
            continue
        t = statistics.median(times[label])
        print(f"{label:70} {t * 1e3:7.1f} ms {c / t:7.2f}   ({cores.get(label, '')})")
    print(f"\n{rounds} rounds, alternating; C: " + ", ".join(f"{t * 1e3:.0f}" for t in times["C"]) + " ms")
    for label in sides:
        if times[label]:
            print(f"  {label.split(',')[0]} ({label.split('(')[-1].rstrip(')')}): " +
                  ", ".join(f"{t * 1e3:.0f}" for t in times[label]) + " ms")
    print("target: C / torch at most 0.80 against OpenBLAS's best kernels (the C side counts its whole process, "
          "torch only its forward and backward)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
