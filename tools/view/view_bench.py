"""view_bench.py: the bonus notebook's timing charts on its chapter's page.

`meson test -C build --benchmark bonus` (tools/bench/bench_bonus.py) writes
BUILD/bench-bonus.json: each implementation's forward, and forward +
backward, at (8, 1024, 768) on one thread in C and in torch 1.13, and peak
memory against T. When that file exists, the page of
ch03_bonus_mha_implementations (the book's variant) shows, as in the
notebook's section 10 and 11, bar charts of the times (one group of bars per
implementation, C beside torch + OpenBLAS) and a line plot of peak memory
against T (log scales); without it, the page says how to make it.

The charts are matplotlib SVGs in the view's style (view_figures.pyplot),
cached by the digest of the JSON and of this file.
"""

import hashlib
import html
import json
import os
import shutil

import view_figures as vf

CHAPTER = "ch03_bonus_mha_implementations"
JSON_NAME = "bench-bonus.json"
with open(__file__, "rb") as _f:
    STYLE_VERSION = hashlib.sha256(_f.read()).hexdigest()
C_COLOUR, TORCH_COLOUR, REF_COLOUR, MAT_COLOUR = "#3b6ea8", "#d9822b", "#8a8a8a", "#a33b3b"


def load(build_dir):
    """The benchmark's report, or None."""
    try:
        with open(os.path.join(build_dir, JSON_NAME), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _bar_data(report, kind):
    """[(label, C seconds or None, torch + OpenBLAS seconds or None)] per implementation."""
    c = report.get("c", {}).get(kind, {})
    ob = report.get("torch", {}).get("openblas", {}).get(kind, {})
    rows = []
    for impl in report.get("impls", []):
        k = impl["key"]
        ck = "2" if kind == "forward_backward" and k == "fused" else k
        rows.append((impl["label"], c.get(ck), None if k == "fused" else ob.get(k)))
    return rows


def _bars(report, kind):
    plt = vf.pyplot()
    rows = _bar_data(report, kind)
    fig, ax = plt.subplots(figsize=(7.2, 3.6))
    xs = range(len(rows))
    w = 0.38
    top = max([v for _, c, t in rows for v in (c, t) if v] or [1.0]) * 1e3
    for off, idx, colour, name in ((-w / 2, 1, C_COLOUR, "C (litattn)"), (w / 2, 2, TORCH_COLOUR, "torch 1.13 + OpenBLAS")):
        for x, r in zip(xs, rows):
            v = r[idx]
            if v is None:
                ax.text(x + off, top * 0.02, "n/a", ha="center", va="bottom", fontsize=7, color="#555555",
                        rotation=90)
                continue
            ax.bar(x + off, v * 1e3, w, color=colour, label=name if x == next(
                (i for i, rr in enumerate(rows) if rr[idx] is not None), -1) else None)
            ax.text(x + off, v * 1e3 + top * 0.02, f"{v * 1e3:.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(xs), [r[0] for r in rows], rotation=30, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_ylabel("time (ms), median", fontsize=8)
    ax.set_ylim(0, top * 1.25)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", color="#e3e6ea", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    fig.subplots_adjust(left=0.17, right=0.98, bottom=0.34, top=0.95)
    return fig


def _memory(report):
    plt = vf.pyplot()
    mem = report.get("memory", [])
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    lines = (("chapter_mb", "C chapter run (materialising where they fit, then fused)", "#6c8fb8", "s", ":"),
             ("fused_mb", "C fused (no (T, T) tensor)", C_COLOUR, "o", "-"),
             ("materialised_mb", "C materialised ((1, 12, T, T) made, as torch; past 2048 on the raw kernels)",
              MAT_COLOUR, "^", "--"),
             ("torch_mb", "torch 1.13, chapter 3's class", TORCH_COLOUR, "D", "-"))
    for key, label, colour, marker, style in lines:
        pts = [(r["T"], r[key]) for r in mem if r.get(key)]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, linestyle=style, color=colour,
                    label=label, markersize=4, linewidth=1.4)
    values = [r[k] for r in mem for k in ("chapter_mb", "fused_mb", "materialised_mb", "torch_mb") if r.get(k)]
    if values:  # room above the lines for the legend
        ax.set_ylim(min(values) / 1.5, max(values) * 40)
    ax.axhline(1024, color="#888888", linewidth=0.8, linestyle="-.")
    ax.text(mem[0]["T"] if mem else 1024, 1024 * 1.08, "1 GiB", fontsize=7, color="#555555")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ts = [r["T"] for r in mem]
    if ts:
        ax.set_xticks(ts, [str(t) for t in ts])
    ax.set_xlabel("T (tokens), batch 1, 12 heads, d 768", fontsize=8)
    ax.set_ylabel("peak RSS (MiB)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(color="#e3e6ea", linewidth=0.6, which="both")
    ax.legend(fontsize=7, frameon=False, loc="upper left")
    fig.subplots_adjust(left=0.12, right=0.98, bottom=0.14, top=0.96)
    return fig


def _ms(v):
    return f"{v * 1e3:.0f} ms" if v else "n/a"


def describe(report, kind):
    """Alt text: the chart's numbers in words."""
    if kind == "memory":
        parts = []
        for r in report.get("memory", []):
            cells = [f"{name} {r[k]:.0f} MiB" if r.get(k) else f"{name} n/a"
                     for k, name in (("chapter_mb", "C chapter run"), ("fused_mb", "C fused"),
                                     ("materialised_mb", "C materialised"), ("torch_mb", "torch"))]
            parts.append(f"T = {r['T']}: " + ", ".join(cells))
        return "Line plot of peak memory against T, log scales. " + "; ".join(parts) + "."
    what = "forward" if kind == "forward" else "forward and backward"
    size = report.get("size", [8, 1024, 768])
    rows = _bar_data(report, kind)
    return (f"Bar chart of the {what} time per implementation at ({size[0]}, {size[1]}, {size[2]}), one thread, "
            f"C beside torch 1.13 + OpenBLAS: " +
            "; ".join(f"{label}: C {_ms(c)}, torch {_ms(t)}" for label, c, t in rows) + ".")


def _svg(fig):
    return vf.svg_of(fig, "tools/view/view_bench.py")


CHARTS = (("forward", "Forward, one thread (sections 10 and 11)", lambda r: _bars(r, "forward")),
          ("forward_backward", "Forward + backward, one thread", lambda r: _bars(r, "forward_backward")),
          ("memory", "Peak memory against T", _memory))


def add_figures(build_dir, out_dir, cache_dir, figures):
    """Draws the charts into OUT/figures (cached) and adds them to `figures`
    ({key: (relative path, alt text)}, the site's list); returns the HTML
    section for the bonus chapter's page."""
    report = load(build_dir)
    if report is None:
        return ('<section class="loose" id="bench"><h2>Timings (sections 10 and 11)</h2><p class="note">'
                'No benchmark results yet: run <code>meson test -C build --benchmark bonus</code> (it writes '
                f'<code>build/{JSON_NAME}</code>), then build the view again (<code>ninja -C build book-view</code>) '
                'to see the bar charts of each implementation\'s forward and forward + backward, C beside torch, '
                'and peak memory against T.</p></section>')
    digest = hashlib.sha256(STYLE_VERSION.encode() + json.dumps(report, sort_keys=True).encode()).hexdigest()[:24]
    items = []
    os.makedirs(os.path.join(cache_dir, "figures"), exist_ok=True)
    for key, title, make in CHARTS:
        name = f"{CHAPTER}.bench.{key}.svg"
        cached = os.path.join(cache_dir, "figures", f"bench-{key}-{digest}.svg")
        if not os.path.exists(cached):
            tmp = cached + f".{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(_svg(make(report)))
            os.replace(tmp, cached)
        shutil.copyfile(cached, os.path.join(out_dir, "figures", name))
        alt = describe(report, key)
        figures[f"bench:{key}"] = (f"figures/{name}", alt)
        items.append(f'<figure><img src="figures/{html.escape(name)}" alt="{html.escape(alt)}">'
                     f'<figcaption>{html.escape(title)}</figcaption></figure>')
    return ('<section class="loose" id="bench"><h2>Timings (sections 10 and 11)</h2>'
            f'<p>{html.escape(summary(report))}</p><div class="figures">{"".join(items)}</div></section>')


def summary(report):
    """One paragraph: where the figures come from, and the ratios against the benchmark's targets."""
    c = report.get("c", {})
    parts = [f"Measured by meson test -C build --benchmark bonus ({report.get('made', '?')}): one thread, medians "
             f"(noisy on a shared or virtual host); C on the {c.get('path', '?')} kernels; torch 1.13 under no_grad "
             "with OpenBLAS on its best kernels. torch 1.13 has no scaled_dot_product_attention, so 5/6/9 is C only."]
    f = report.get("fastest")
    if f:
        names = {i["key"]: i["label"] for i in report.get("impls", [])}
        names["2f"] = "2) Ch03_MHA, attention fused"
        parts.append(f"Fastest C forward ({names.get(f['c'], f['c'])}, {f['c_s'] * 1e3:.0f} ms) over torch + "
                     f"OpenBLAS's fastest ({names.get(f['torch'], f['torch'])}, {f['torch_s'] * 1e3:.0f} ms): "
                     f"{f['ratio']:.2f} (target: at most 0.65).")
    ref = report.get("torch", {}).get("reference")
    if ref:
        parts.append("torch + the reference BLAS, one run each: " +
                     ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in ref.get("forward", {}).items()) + ".")
    m = report.get("machine", {})
    for r in m.get("fused", []):
        if r.get("fraction"):
            fastest = (f", the fastest run {100 * r['fastest_fraction']:.0f}%" if r.get("fastest_fraction") else "")
            parts.append(f"Fused forward at ({r['batch']}, {r['T']}, 768): {r['gflops']:.0f} GFLOP/s, "
                         f"{100 * r['fraction']:.0f}% of the measured mul + add peak ({m['peak_gflops']:.0f} GFLOP/s; "
                         f"the median run{fastest}).")
    return " ".join(parts)
