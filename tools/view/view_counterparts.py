"""view_counterparts.py: litattn's counterpart of each official cell no chapter prints.

No chapter prints the cells that time, chart or describe the notebooks' own
runs: the version cells, and mha-implementations.ipynb's sections 10 and 11
(each implementation's %timeit, the timing helpers, the bar charts). Each
has here either a counterpart or a one-line reason:

  - version: what litattn's run uses in place of the notebook's torch and
    device: litattn's version (meson.build), the CPU, and the attributes
    torch_version and cpu_capability of the fixture the notebook's first
    chapter runs on;
  - timing: the implementation's forward time in C and in torch 1.13 on the
    reader's own machine, read from BUILD/bench-bonus.json (written by
    `meson test -C build --benchmark bonus`; without it, "not measured
    yet"), beside the notebook's recorded figure;
  - chart: the notebook's bar chart (plot_execution_times, In [28]) drawn
    the same way from that file, C beside torch, under the chart the
    notebook recorded (its PNG, copied from the notebook into the site);
  - method: a helper cell (the list of functions, the timing loops, the
    plotting function), whose counterpart is the benchmark's own code;
  - reason: a cell with no counterpart, and why ("not in litattn: because
    ...").

What every row shares is said once, above the rows it is true of: how the
figures are made (or how to make them), at what size, and where the
notebook recorded its own (a row per section of the notebook heads its
cells). The view never runs the benchmark. view_check.py fails on a cell
that no chapter prints and that has neither a counterpart nor a reason, on
a clause repeated in more than three rows, and on a recorded chart the
site does not show.
"""

import hashlib
import html
import os
import re
import shutil

import numpy as np

import view_bench
import view_figures as vf

from view_model import COUNTERPART, NOT_IN_LITATTN
BONUS = "mha-implementations.ipynb"
IMPL = "mha-implementations"
with open(__file__, "rb") as _f:
    STYLE_VERSION = hashlib.sha256(_f.read()).hexdigest()

NOT_MEASURED = "not measured yet"  # a timing or chart without BUILD/bench-bonus.json

# Where the notebook's recorded figures were measured (its section headings
# 10.1, 10.2 and 11.2 to 11.4, and the version cells before them).
ON_CPU = "an M3 MacBook Air's CPU, torch 2.4.0"
ON_GPU = "an Nvidia A100 GPU, torch 2.6.0+cu124"
RECORDED_DIR = "recorded"  # OUT/recorded/: the images the notebook recorded, copied from it

# The implementation each timed cell times: the number of its "## N)" line.
# 5, 6 and 9 need scaled_dot_product_attention or FlexAttention, which
# torch 1.13 lacks; litattn's exact fused attention computes the same.
IMPL_KEYS = {"1": "1", "2": "2", "3": "3", "4": "4", "5": "fused", "6": "fused", "7": "7", "8": "8", "9": "fused"}
TORCH_NONE = {"5": "torch 1.13 has no scaled_dot_product_attention", "6": "torch 1.13 has no scaled_dot_product_attention",
              "9": "FlexAttention needs torch >= 2.5 and CUDA"}

# In [27]'s functions, in its order and spelling: the charts' bars.
CHART_FUNCTIONS = [("1) MHA wrapper class", "1"), ("2) MHA Ch03", "2"), ("3) MHA with combined QKV weights", "3"),
                   ("4) MHA with Einsum", "4"), ("5) MHA with PyTorch scaled_dot_product_attention", "5"),
                   ("6) PyTorch's SDPA, no FlashAttention", "6"), ("7) PyTorch MHA class defaults", "7"),
                   ("8) PyTorch MHA with need_weights=False", "8")]


def _version(notebook):
    return ("version", notebook)


def _timing(where):
    return ("timing", where)


# Every official cell that no chapter prints: its counterpart, or why it has none.
SPECS = {
    "In [1]": _version("ch03.ipynb"),
    "exercise-solutions In [1]": _version("exercise-solutions.ipynb"),
    "multihead-attention In [1]": _version("multihead-attention.ipynb"),
    f"{IMPL} \u00a710.1": _version(BONUS),
    f"{IMPL} In [16]": _version(BONUS),
    f"{IMPL} In [26]": _version(BONUS),
    f"{IMPL} In [15]": ("reason", "because it lets a CUDA GPU's tensor cores multiply in TF32; litattn computes on "
                        "the CPU in float32, every product rounded as torch's CPU kernels round it"),
    f"{IMPL} In [27]": ("method", "the benchmark's list of implementations (IMPLS in tools/bench/bench_bonus.py): 1-4, 7 "
                        "and 8 as the notebook's, and litattn's exact fused attention for 5, 6 and 9"),
    f"{IMPL} In [28]": ("method", "the charts of In [30], In [32] and In [34] below are drawn in this function's "
                        "layout (tools/view/view_counterparts.py), one bar for C beside one for torch"),
    f"{IMPL} In [29]": ("method", "tests/bench_bonus.c times the C forward (a warm-up, then the median of at least "
                        "3 runs); tools/bench/bench_bonus.py times torch 1.13's the same way, on one CPU thread (no "
                        "CUDA events on a CPU)"),
    f"{IMPL} In [31]": ("method", "the benchmark's forward + backward: x.requires_grad_(); m(x).sum().backward(), in "
                        "C (bench_bonus times) and in torch (bench_bonus.py --backward)"),
    f"{IMPL} In [33]": ("reason", "because torch.compile is torch 2's (torch 1.13, litattn's reference, has none) "
                        "and the C is compiled ahead of time: In [34]'s counterpart is the uncompiled chart"),
    f"{IMPL} In [30]": ("chart", "forward"),
    f"{IMPL} In [32]": ("chart", "forward_backward"),
    f"{IMPL} In [34]": ("chart", "forward_backward"),
}
SPECS.update({f"{IMPL} \u00a710.{n}": _timing(ON_CPU) for n in range(2, 11)})
SPECS.update({f"{IMPL} In [{n}]": _timing(ON_GPU) for n in range(17, 26)})


def anchor(label):
    return "cp-" + re.sub(r"[^a-z0-9]+", "-", label.lower().replace("\u00a7", "s")).strip("-")


def litattn_version(repo_root):
    try:
        with open(os.path.join(repo_root, "meson.build"), encoding="utf-8") as f:
            m = re.search(r"^\s*version:\s*'([^']+)'", f.read(), re.M)
        return m.group(1) if m else "?"
    except OSError:
        return "?"


def fixture_attrs(path):
    try:
        import h5py
        with h5py.File(path, "r") as f:
            return {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()
                    if k in ("torch_version", "cpu_capability")}
    except (OSError, ImportError):
        return {}


def _impl_of(cell):
    m = re.match(r"##\s*(\d)\)", cell.first_line)
    return m.group(1) if m else None


def _recorded(cell):
    """The notebook's %timeit figure ("4.68 ms ± 121 µs"), or None."""
    m = re.match(r"\s*(\S+ \S+ ± \S+ \S+) per loop", cell.output or "")
    return m.group(1) if m else None


def _ms(v):
    return f"{v * 1e3:.1f} ms" if v else None


def torch_side(report):
    """(key, name) of the torch run the view shows: OpenBLAS when it ran
    (bench_bonus.py's fastest), else the reference BLAS (one run each, no
    forward + backward)."""
    torch = report.get("torch", {})
    if torch.get("openblas"):
        return "openblas", "torch 1.13 + OpenBLAS"
    if torch.get("reference"):
        return "reference", "torch 1.13 + reference BLAS"
    return "openblas", "torch 1.13"


def _times(report, kind, number):
    """(C seconds or None, torch seconds or None, why torch has none) of implementation `number`."""
    key = IMPL_KEYS[number]
    c = report.get("c", {}).get(kind, {})
    ck = "2" if kind == "forward_backward" and key == "fused" else key
    side, name = torch_side(report)
    t = report.get("torch", {}).get(side, {}).get(kind, {})
    if number in TORCH_NONE:
        return c.get(ck), None, TORCH_NONE[number]
    return c.get(ck), t.get(key), None if t.get(key) else f"{name} not measured"


def describe(cell, report, fixtures_dir, repo_root, fixture_of_notebook):
    """{"verdict", "text" (one line), "kind"} for a cell no chapter prints, or
    None when the cell has neither a counterpart nor a reason here.
    fixture_of_notebook: {notebook: the fixture its first chapter runs on}.
    The line says only what is the cell's own: what every timing shares
    (the size, the threads, the command) is said once (section)."""
    spec = SPECS.get(cell.label)
    if spec is None:
        return None
    kind, arg = spec
    if kind == "reason":
        return {"kind": kind, "verdict": NOT_IN_LITATTN, "text": f"not in litattn: {arg}"}
    if kind == "method":
        return {"kind": kind, "verdict": COUNTERPART, "text": arg}
    if kind == "version":
        fixture = fixture_of_notebook.get(arg)
        attrs = fixture_attrs(os.path.join(fixtures_dir, fixture)) if fixture else {}
        recorded = " ".join((cell.output or "").split())
        text = (f"litattn {litattn_version(repo_root)} on the CPU; fixtures by torch "
                f"{attrs.get('torch_version', '?')}, CPU capability {attrs.get('cpu_capability', '?')} "
                f"(fixtures/{fixture})" + (f"; the notebook printed: {recorded}" if recorded else ""))
        return {"kind": kind, "verdict": COUNTERPART, "text": text, "where": None}
    if kind == "timing":
        number = _impl_of(cell)
        if report is None:
            return {"kind": kind, "verdict": COUNTERPART, "text": f"the forward of {number}): {NOT_MEASURED}",
                    "number": number, "where": arg}
        c, t, why = _times(report, "forward", number)  # why torch has none: said once (section)
        ours = (f"the forward of {number}): C {_ms(c) or 'n/a'}" + (" (fused)" if IMPL_KEYS[number] == "fused" else "")
                + f", torch {_ms(t) or 'n/a'}")
        return {"kind": kind, "verdict": COUNTERPART, "text": ours, "number": number, "where": arg}
    if kind == "chart":
        what = "forward" if arg == "forward" else "forward + backward"
        extra = (" (uncompiled: see In [33])" if cell.label.endswith("[34]") else "")
        return {"kind": kind, "verdict": COUNTERPART, "chart": arg, "where": ON_GPU,
                "text": f"the {what} chart{extra}, C beside torch 1.13" + (f": {NOT_MEASURED}" if report is None else "")}
    return None


# --- the charts, in the layout of the notebook's plot_execution_times (In [28]) ---

def _chart(report, kind):
    plt = vf.pyplot()
    rows = []
    runs = report.get("torch", {}).get(torch_side(report)[0], {}).get("forward_runs", {}) if kind == "forward" else {}
    for name, number in CHART_FUNCTIONS:
        c, t, _ = _times(report, kind, number)
        tr = runs.get(IMPL_KEYS[number]) if number not in TORCH_NONE else None
        std = float(np.std(tr)) * 1e3 if tr and len(tr) > 1 else 0.0
        rows.append((name, c * 1e3 if c else None, t * 1e3 if t else None, std))
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    w = 0.4
    values = [v for _, c, t, _ in rows for v in (c, t) if v]
    upper = (max(values) if values else 1.0) * 1.4  # the notebook's 40 % margin
    for off, idx, colour, label in ((-w / 2, 1, view_bench.C_COLOUR, "C (litattn)"),
                                    (w / 2, 2, view_bench.TORCH_COLOUR, torch_side(report)[1])):
        xs = [i + off for i, r in enumerate(rows) if r[idx]]
        hs = [r[idx] for r in rows if r[idx]]
        errs = [r[3] if idx == 2 else 0.0 for r in rows if r[idx]]
        bars = ax.bar(xs, hs, w, color=colour, label=label)
        for x, h, e in zip(xs, hs, errs):  # the notebook's error bars: the spread of the runs, where there are runs
            if e:
                ax.errorbar(x, h, yerr=e, fmt="none", ecolor="grey", capsize=5)
        for bar in bars:
            y = bar.get_height()
            ax.text(bar.get_x() + bar.get_width() / 2, y + 0.05 * upper, round(y, 2), ha="center", va="bottom",
                    fontsize=6, rotation=90)
        for i, r in enumerate(rows):
            if not r[idx]:
                ax.text(i + off, 0.02 * upper, "n/a", ha="center", va="bottom", fontsize=6, color="#555555",
                        rotation=90)
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("Execution time (ms)")
    ax.set_ylim(0, upper)
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    fig.tight_layout()
    return fig


def chart_alt(report, kind):
    what = "forward" if kind == "forward" else "forward and backward"
    parts = []
    for name, number in CHART_FUNCTIONS:
        c, t, why = _times(report, kind, number)
        parts.append(f"{name}: C {_ms(c) or 'n/a'}, torch {_ms(t) or 'n/a'}")
    return f"Bar chart of the {what} execution time, C beside torch 1.13: " + "; ".join(parts) + "."


def _svg(fig):
    return vf.svg_of(fig, "tools/view/view_counterparts.py")


def draw(report, kind, out_dir, cache_dir, figures):
    """The chart of `kind` into OUT/figures (cached by the report's digest); its relative path."""
    import json
    digest = hashlib.sha256(STYLE_VERSION.encode() + json.dumps(report, sort_keys=True).encode()).hexdigest()[:24]
    name = f"{view_bench.CHAPTER}.cells.{kind}.svg"
    os.makedirs(os.path.join(cache_dir, "figures"), exist_ok=True)
    cached = os.path.join(cache_dir, "figures", f"cells-{kind}-{digest}.svg")
    if not os.path.exists(cached):
        tmp = cached + f".{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(_svg(_chart(report, kind)))
        os.replace(tmp, cached)
    shutil.copyfile(cached, os.path.join(out_dir, "figures", name))
    figures[f"cells:{kind}"] = (f"figures/{name}", chart_alt(report, kind))
    return f"figures/{name}"


def recorded_images(cell, out_dir):
    """[(relative path, alt text)] of the images a cell recorded (its PNG
    outputs), copied into OUT/recorded/."""
    import base64
    found = []
    for k, png in enumerate(cell.images):
        name = f"{anchor(cell.label)[3:]}{'.' + str(k + 1) if k else ''}.png"  # mha-implementations-in-30.png
        os.makedirs(os.path.join(out_dir, RECORDED_DIR), exist_ok=True)
        with open(os.path.join(out_dir, RECORDED_DIR, name), "wb") as f:
            f.write(base64.b64decode(png))
        found.append((f"{RECORDED_DIR}/{name}", f"The bar chart {cell.label.split(' ', 1)[1]} recorded in the notebook "
                      f"(a run on {ON_GPU}): the execution time of each implementation, as the notebook's "
                      "plot_execution_times draws it."))
    return found


def section(rows, report, out_dir, cache_dir, figures, prompt, heading_html):
    """The bonus page's section: one row per cell of the notebook with a
    counterpart here (rows: [(BookCell, description)]), under a row per
    section of the notebook, which says where the notebook recorded its
    figures; a chart's row is followed by the chart the notebook recorded and
    litattn's."""
    import view_model as vm
    esc = html.escape
    out, heading = [], None
    for cell, d in rows:
        heads = vm.headings_of(cell.prose)
        if heads and heads[-1][1] != heading:
            heading = heads[-1][1]
            wheres = []
            for other, od in rows[rows.index((cell, d)):]:
                h = vm.headings_of(other.prose)
                if other is not cell and h and h[-1][1] != heading:
                    break
                if od.get("where") and od["where"] not in wheres:
                    wheres.append(od["where"])
            where = f' <span class="src">· the notebook\'s figures: {esc(", ".join(wheres))}</span>' if wheres else ""
            out.append(f'<tr class="group"><th colspan="4" scope="rowgroup">{heading_html(heading)}{where}</th></tr>')
        recorded = esc((cell.output or "").strip()) if d["kind"] != "chart" else "a chart: below"
        out.append(f'<tr id="{anchor(cell.label)}"><th scope="row" class="prompt">{esc(prompt(cell))}</th>'
                   f'<td class="code"><code>{esc(cell.first_line)}</code></td><td class="code"><code>{recorded or "—"}</code></td>'
                   f'<td>{esc(d["text"])}</td></tr>')
        if d.get("chart"):
            figs = [f'<figure><img src="{esc(path)}" alt="{esc(alt)}"><figcaption>{esc(prompt(cell))} as the notebook '
                    f'recorded it, on {esc(ON_GPU)}</figcaption></figure>' for path, alt in recorded_images(cell, out_dir)]
            if report is not None:
                path = draw(report, d["chart"], out_dir, cache_dir, figures)
                figs.append(f'<figure><img src="{esc(path)}" alt="{esc(chart_alt(report, d["chart"]))}">'
                            f'<figcaption>litattn\'s, drawn as the notebook\'s plot_execution_times draws it: C beside '
                            f'torch 1.13 on the CPU that ran the benchmark</figcaption></figure>')
            else:
                figs.append('<p class="note">litattn\'s chart: <a href="#bench">not measured yet</a>.</p>')
            out.append(f'<tr class="charts"><td colspan="4"><div class="figures">{"".join(figs)}</div></td></tr>')
    intro = ("Cells of the notebook that time, chart or describe its own runs, which no chapter prints, each beside "
             "litattn's counterpart and the notebook's recorded figure. A row per section of the notebook says where "
             "the notebook recorded its figures. litattn's are the forward of each implementation ")
    if report is None:
        intro += ('as <a href="#bench">Timings</a> (above) measures it; there are none yet, and Timings says how to '
                  'make them.')
    else:
        size = report.get("size", [8, 1024, 768])
        intro += (f"at ({size[0]}, {size[1]}, {size[2]}) on one thread, in C and in {esc(torch_side(report)[1])} "
                  '(torch) on the CPU that ran the benchmark, as <a href="#bench">Timings</a> (above) measured them. '
                  "5), 6) and 9) need scaled_dot_product_attention or FlexAttention, which torch 1.13 lacks: for them "
                  "C runs litattn's exact fused attention (fused), and torch nothing (n/a).")
    return ('<section class="loose" id="counterparts"><h2>Sections 10 and 11, cell by cell</h2>'
            f'<p>{intro}</p><table class="coverage counterparts"><thead><tr><th scope="col">cell</th>'
            '<th scope="col">its first line</th><th scope="col">the notebook recorded</th>'
            f'<th scope="col">litattn</th></tr></thead><tbody>{"".join(out)}</tbody></table></section>')
