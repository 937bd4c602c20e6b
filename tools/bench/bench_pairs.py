#!/usr/bin/python3
"""bench_pairs.py: two builds compared through a busy machine's noise (figures only).

    bench_pairs.py OLD NEW [--pairs N] [--what products,chapter] [--only NAME,...] [--budget S]

OLD and NEW are build directories (`meson setup` trees, built), or the same
one twice, which shows how small a change the method sees on the machine it runs on.
Each pair runs one process of each build, one after the other, the order
swapped from one pair to the next (old first in even pairs), so that both
builds see the same machine at nearly the same moment:

  - products: OLD/tests/bench_products, which times each of Exercise 3.3's
    products in-process (the fastest of many runs, in CPU time and in wall
    time);
  - chapter: the whole process of OLD/chapters/ch03_6_2_multihead_attention
    --seed 123 --threads 1 (Exercise 3.3's forward and backward), its wall
    time and its CPU time (user + system, from wait4).

For every figure it prints each build's fastest and median over the pairs,
and the median of the pairs' ratios NEW / OLD with its 95 % interval: the
order statistics of the ratios that hold the true median with at least 95 %
probability whatever their distribution (binomial; 15 pairs: the 4th and
the 12th of the 15 sorted). The interval not holding 1 is a change seen:
`slower` or `faster`. Run against itself, the interval's half-width is the
smallest change the machine it runs on lets the method see. The environment passes
through (LITATTN_KERNELS=avx2 compares the AVX2 path). Never fails on speed.
"""
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time

CHAPTER = os.path.join("chapters", "ch03_6_2_multihead_attention")
PRODUCTS = os.path.join("tests", "bench_products")


def usage(why):
    print(f"bench_pairs.py: {why}", file=sys.stderr)
    print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
    return 2


def interval(n):
    """(lo, hi), 0-based indexes into n sorted values: the 95 % interval of
    their median, the j-th from each end for the largest j with
    2 P(Binomial(n, 1/2) < j + 1) <= 5 % (the whole range below 6 values)."""
    j, below = -1, 0.0
    while j + 1 < n:
        nxt = below + math.comb(n, j + 1) / 2 ** n
        if 2 * nxt > 0.05:
            break
        below, j = nxt, j + 1
    lo = max(j, 0)
    return lo, n - 1 - lo


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_process(argv):
    """(wall s, CPU s: user + system, stdout) of one process; raises if it fails."""
    c0 = children_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return wall, children_cpu() - c0, p.stdout


def build_commit(build):
    """The source tree's commit of a build directory, '-dirty' if changed."""
    try:
        with open(os.path.join(build, "meson-info", "meson-info.json")) as f:
            source = json.load(f)["directories"]["source"]
        head = subprocess.run(["git", "-C", source, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", source, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return (head or "?") + ("-dirty" if dirty else "")
    except (OSError, KeyError, ValueError):
        return "?"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def load():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def main(argv):
    pairs, what, only, budget = 15, ["products", "chapter"], None, "0.3"
    args = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--pairs", "--what", "--only", "--budget"):
            if i + 1 >= len(argv):
                return usage(f"{a} needs a value")
            value = argv[i + 1]
            if a == "--pairs":
                if not value.isdigit() or not 6 <= int(value) <= 1000:
                    return usage(f"--pairs: expected a count from 6 to 1000, found '{value}'")
                pairs = int(value)
            elif a == "--what":
                what = value.split(",")
                if not what or any(w not in ("products", "chapter") for w in what):
                    return usage(f"--what: expected products, chapter or both, found '{value}'")
            elif a == "--only":
                only = value
            else:
                if not re.fullmatch(r"[0-9]*\.?[0-9]+", value):
                    return usage(f"--budget: expected seconds, found '{value}'")
                budget = value
            i += 2
            continue
        args.append(a)
        i += 1
    if len(args) != 2:
        return usage("expected two build directories, OLD and NEW")
    builds = {"old": args[0], "new": args[1]}
    for side, b in builds.items():
        for prog, needed in ((PRODUCTS, "products"), (CHAPTER, "chapter")):
            if needed in what and not os.access(os.path.join(b, prog), os.X_OK):
                return usage(f"{side} build {b}: {prog} is missing (ninja -C {b} {prog})")

    same = os.path.realpath(builds["old"]) == os.path.realpath(builds["new"])
    print(f"bench_pairs: {pairs} pairs, alternating, {'the build against itself' if same else 'old against new'}")
    for side, b in builds.items():
        print(f"  {side}: {b} at {build_commit(b)}")
    kernels = os.environ.get("LITATTN_KERNELS")
    print(f"  CPU {cpu_model()}, {os.cpu_count()} cores; LITATTN_KERNELS={kernels or '(unset: the best path)'}; "
          f"load before {load()}")

    figures = {}  # name -> {"old": [..], "new": [..]}

    def record(name, side, value):
        figures.setdefault(name, {"old": [], "new": []})[side].append(value)

    started = time.time()
    for p in range(pairs):
        order = ("old", "new") if p % 2 == 0 else ("new", "old")
        for side in order:
            b = builds[side]
            if "products" in what:
                argv_p = [os.path.join(b, PRODUCTS), "--budget", budget] + (["--only", only] if only else [])
                _, _, out = one_process(argv_p)
                for line in out.splitlines():
                    f = line.split()
                    if len(f) == 7 and f[0] == "RESULT":
                        record(f"{f[1]} cpu", side, float(f[5]))
                        record(f"{f[1]} wall", side, float(f[3]))
            if "chapter" in what:
                wall, cpu, _ = one_process([os.path.join(b, CHAPTER), "--seed", "123", "--threads", "1"])
                record("chapter cpu", side, cpu)
                record("chapter wall", side, wall)
        print(f"  pair {p + 1}/{pairs} done ({time.time() - started:.0f} s, load {load()})", flush=True)

    lo, hi = interval(pairs)
    print(f"\nper figure: each build's fastest and median over the {pairs} pairs (ms; products: each "
          f"process's fastest run), the median of the ratios new / old and its 95 % interval "
          f"(the {lo + 1}th and {hi + 1}th of the sorted ratios)")
    print(f"{'figure':16} {'old min':>9} {'old med':>9} {'new min':>9} {'new med':>9} {'ratio':>7} "
          f"{'95 % interval':>15}  verdict")
    widths = []
    for name, v in figures.items():
        old, new = v["old"], v["new"]
        n = min(len(old), len(new))
        ratios = sorted(new[j] / old[j] for j in range(n) if old[j] > 0)
        if len(ratios) < 6:
            print(f"{name:16} too few pairs")
            continue
        a, z = interval(len(ratios))
        med = statistics.median(ratios)
        r_lo, r_hi = ratios[a], ratios[z]
        widths.append((name, max(med - r_lo, r_hi - med)))
        verdict = (f"slower by {100 * (med - 1):.1f} %" if r_lo > 1 else
                   f"faster by {100 * (1 - med):.1f} %" if r_hi < 1 else "no change seen")
        print(f"{name:16} {min(old) * 1e3:9.2f} {statistics.median(old) * 1e3:9.2f} {min(new) * 1e3:9.2f} "
              f"{statistics.median(new) * 1e3:9.2f} {med:7.3f} {r_lo:7.3f}-{r_hi:.3f}  {verdict}")
    if widths:
        cpu = [w for n, w in widths if n.endswith("cpu")]
        wall = [w for n, w in widths if n.endswith("wall")]
        print(f"\nhalf-width of the 95 % intervals: CPU time {100 * min(cpu):.1f} to {100 * max(cpu):.1f} %, "
              f"wall time {100 * min(wall):.1f} to {100 * max(wall):.1f} %"
              if cpu and wall else "")
        if same:
            print("the build against itself: a change larger than a figure's half-width is one this method sees here")
    print(f"load after {load()}; {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
