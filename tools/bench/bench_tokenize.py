#!/usr/bin/python3
"""bench_tokenize.py: the data-loading chapter's whole process on 0.5, 1, 2
and 4 MB of UTF-8 text, against js-tiktoken's whole process on the same text.

    /usr/bin/python3 tools/bench/bench_tokenize.py CHAPTER [SIZES_MB...]
    (meson: `meson test -C build --benchmark tokenize`)

CHAPTER is build/chapters/ch03_mha_data_loading, run as a reader would:
`--text FILE` (reading, UTF-8 check, GPT-2 BPE twice, as the notebook
encodes the text twice; the dataset; the two embedding tables' 13 M normal
draws; both attention modules), its book fixture read for the rest. The
reference is node running js-tiktoken (tools/bench/bench_encode.mjs: read,
encode once). Wall time, best of 3 runs each; the ratio; and seconds per MB,
which stays flat if the time is linear in the text. The text is drawn from a
fixed seed: words of the book's small-text-sample.txt, numbers, punctuation,
accents, CJK and newlines, so that it is not one paragraph repeated. Figures
only: a benchmark never fails; without node or js-tiktoken the reference
column says why.
"""

import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNS = 3


def make_text(n_bytes, seed=20240521):
    words = open(os.path.join(ROOT, "fixtures", "gpt2", "small-text-sample.txt"), encoding="utf-8").read().split()
    extra = ["caf\u00e9", "na\u00efve", "\u4f60\u597d", "\u4e16\u754c", "it's", "they'll", "2024", "3.14159",
             "\u00fcber", "\u0436\u0438\u0437\u043d\u044c", "--", "(see", "below)", "\U0001F600"]
    rng = random.Random(seed)
    parts, size = [], 0
    while size < n_bytes:
        w = rng.choice(words) if rng.random() < 0.9 else rng.choice(extra)
        sep = "\n" if rng.random() < 0.02 else " "
        parts.append(w + sep)
        size += len((w + sep).encode("utf-8"))
    text = "".join(parts).encode("utf-8")
    return text[:text.rfind(b" ", 0, n_bytes) + 1]  # whole characters, about n_bytes


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def best_of(argv):
    """((best wall time, its CPU time), stdout), or (None, why)."""
    best, out = None, ""
    for _ in range(RUNS):
        t0, c0 = time.perf_counter(), cpu_children()
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        dt, dc = time.perf_counter() - t0, cpu_children() - c0
        if r.returncode != 0:
            return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
        if best is None or dt < best[0]:
            best = (dt, dc)
        out = r.stdout
    return best, out


def main(argv):
    if not argv:
        print(__doc__.split("\n\n")[1])
        return 2
    chapter, sizes = argv[0], [float(s) for s in argv[1:]] or [0.5, 1, 2, 4]
    node = shutil.which("node") or shutil.which("nodejs")
    why = None
    if not node:
        why = "no node (apt-get install nodejs npm)"
    elif not os.path.exists(os.path.join(os.path.dirname(HERE), "node_modules", "js-tiktoken", "package.json")):
        why = "js-tiktoken is not installed (npm ci --prefix tools)"
    print(f"{'text':>8} {'chapter':>10} {'js-tiktoken':>12} {'ratio':>7} {'chapter s/MB':>13} {'js s/MB':>9}"
          f" {'chapter CPU':>12} {'js CPU':>8}")
    with tempfile.TemporaryDirectory(prefix="litattn_bench_") as d:
        for mb in sizes:
            path = os.path.join(d, f"text_{mb}.txt")
            text = make_text(int(mb * 1e6))
            open(path, "wb").write(text)
            real_mb = len(text) / 1e6
            c, c_out = best_of([chapter, "--text", path])
            if c is not None:
                c, c_cpu = c
            if c is None:
                print(f"{real_mb:6.2f}MB  the chapter failed: {c_out}")
                continue
            if why:
                print(f"{real_mb:6.2f}MB {c:9.3f}s {'-':>12} {'-':>7} {c / real_mb:12.3f}s {'-':>9} {c_cpu:11.3f}s")
                continue
            j, j_out = best_of([node, os.path.join(HERE, "bench_encode.mjs"), path])
            if j is None:
                print(f"{real_mb:6.2f}MB {c:9.3f}s  js-tiktoken failed: {j_out}")
                continue
            j, j_cpu = j
            print(f"{real_mb:6.2f}MB {c:9.3f}s {j:11.3f}s {j / c:6.1f}x {c / real_mb:12.3f}s {j / real_mb:8.3f}s"
                  f" {c_cpu:11.3f}s {j_cpu:7.3f}s   ({j_out.strip()} tokens)")
    if why:
        print(f"the reference column is empty: {why}")
    print(f"wall time of the best of {RUNS} runs of each whole process, and that run's CPU time (user + system); "
          "the chapter also draws its two embedding tables (a fixed cost, whatever the text) and runs both attention "
          "modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
