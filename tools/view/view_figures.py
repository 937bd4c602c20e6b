"""view_figures.py: the heatmaps of the book view, drawn by matplotlib as SVG.

One figure per tensor (or per group of heads), with its colour bar, its
rows and columns labelled with the book's words where the chapter ran on
the book's sentence, and its values written in the cells when there are few
enough to read. Masked entries (-inf before the softmax) are drawn hatched
grey and written "-inf", not left to a colour that means a number.

A figure is cached by the digest of everything it is drawn from, so a
rebuild draws only what changed (and does not import matplotlib at all
when nothing did).
"""

import hashlib
import io
import json
import multiprocessing
import os
import re
import shutil
from concurrent.futures import ProcessPoolExecutor

import numpy as np

with open(__file__, "rb") as _f:  # a figure drawn by other code is another figure
    STYLE_VERSION = hashlib.sha256(_f.read()).hexdigest()
ANNOTATE_MAX = 64     # write the values in the cells up to this many per panel
_plt = None


def pyplot():
    """matplotlib.pyplot, imported once and only when a figure is drawn."""
    global _plt
    if _plt is None:
        import matplotlib
        matplotlib.use("svg")
        import matplotlib.pyplot as plt
        matplotlib.rcParams.update({
            "svg.fonttype": "none",          # text stays text: sharp, searchable, small
            "svg.hashsalt": "litattn-view",  # the same ids on every build
            "font.family": "DejaVu Sans",
            "font.size": 9,
            "axes.titlesize": 9,
        })
        _plt = plt
    return _plt


def describe(spec):
    """The alt text of a figure: what it shows, in words."""
    a = spec["values"]
    finite = a[np.isfinite(a)]
    rng = f"values from {finite.min():.4g} to {finite.max():.4g}" if finite.size else "no finite values"
    masked = int(np.isneginf(a).sum())
    parts = [f"Heatmap of {spec['title']}", rng]
    if masked:
        parts.append(f"{masked} entries masked (-inf) above the diagonal")
    if spec.get("row_labels"):
        parts.append("rows: " + " ".join(spec["row_labels"]) + "; columns: " + " ".join(spec["col_labels"]))
    return ", ".join(parts) + "."


def colour_scale(a, binary):
    """(colour map name, vmin, vmax): a diverging map centred on 0 for
    values of both signs, a sequential one otherwise."""
    finite = a[np.isfinite(a)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if binary:
        return "Greys", min(lo, 0.0), max(hi, 1.0)
    if lo < 0 < hi:
        m = max(-lo, hi)
        return "RdBu_r", -m, m
    return "viridis", min(lo, 0.0) if lo >= 0 else lo, hi if hi > lo else lo + 1


def cell_text(v):
    if np.isnan(v):
        return "nan"
    if np.isneginf(v):
        return "-inf"
    if np.isposinf(v):
        return "inf"
    if v == int(v) and abs(v) < 100:
        return f"{int(v)}"
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"


def draw(spec):
    """SVG text of one figure. spec: values (panels, rows, cols), title,
    panel_titles, row_labels, col_labels, row_axis, col_axis, binary."""
    plt = pyplot()
    a = spec["values"]
    panels, rows, cols = a.shape
    ncols = min(panels, 4)
    nrows = (panels + ncols - 1) // ncols
    cell = 0.42 if rows * cols <= ANNOTATE_MAX else 0.11
    pw, ph = cols * cell, rows * cell
    # Margins in inches, set by hand: matplotlib's constrained or tight
    # layout would measure every label first, and doubles the drawing time.
    left = 0.75 if spec.get("row_labels") else (0.55 if rows > 1 else 0.15)
    bottom = 0.72 if spec.get("col_labels") else 0.45
    top = 0.3 if spec.get("panel_titles") else 0.1
    gap, vgap, bar = 0.55, 0.6 if spec.get("panel_titles") else 0.5, 0.75
    width = left + ncols * pw + (ncols - 1) * gap + bar
    height = bottom + nrows * ph + (nrows - 1) * vgap + top
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False)
    fig.subplots_adjust(left=left / width, right=(width - bar) / width, bottom=bottom / height,
                        top=1 - top / height, wspace=gap / pw, hspace=vgap / ph)
    cmap_name, vmin, vmax = colour_scale(a, spec.get("binary"))
    if spec.get("binary"):  # a mask: two quiet colours, not black and white
        from matplotlib.colors import ListedColormap
        cmap = ListedColormap(["#f2f4f7", "#3b6ea8"])
    else:
        cmap = plt.get_cmap(cmap_name).copy()
    cmap.set_bad("#d0d0d0")
    image = None
    for k in range(nrows * ncols):
        ax = axes[k // ncols][k % ncols]
        if k >= panels:
            ax.axis("off")
            continue
        v = a[k]
        image = ax.imshow(np.ma.masked_invalid(v), cmap=cmap, vmin=vmin, vmax=vmax, aspect="equal",
                          interpolation="nearest")
        bad = ~np.isfinite(v)
        if bad.any():  # hatch what is not a number, so it cannot be read as a colour
            from matplotlib.collections import PatchCollection
            ys, xs = np.nonzero(bad)
            ax.add_collection(PatchCollection([plt.Rectangle((x - 0.5, y - 0.5), 1, 1) for y, x in zip(ys, xs)],
                                              facecolor="none", edgecolor="#8a8a8a", hatch="///", linewidth=0))
        if rows * cols <= ANNOTATE_MAX:
            for y in range(rows):
                for x in range(cols):
                    val = v[y, x]
                    shade = (val - vmin) / (vmax - vmin) if np.isfinite(val) and vmax > vmin else 0.0
                    rgb = cmap(shade)[:3] if np.isfinite(val) else (0.82, 0.82, 0.82)
                    light = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] > 0.5
                    ax.text(x, y, cell_text(val), ha="center", va="center", fontsize=7,
                            color="#111111" if light else "#ffffff")
        if spec.get("panel_titles"):
            ax.set_title(spec["panel_titles"][k], fontsize=8)
        set_ticks(ax, rows, cols, spec, first_col=k % ncols == 0, last_row=k + ncols >= panels)
    span = max(height - top - bottom, 0.42)
    cax = fig.add_axes([(width - bar + 0.15) / width, bottom / height, 0.14 / width, span / height])
    bar = fig.colorbar(image, cax=cax)
    bar.ax.tick_params(labelsize=7)
    if spec.get("binary"):
        bar.set_ticks(sorted({vmin, vmax}))
    return svg_of(fig, "tools/view/book_view.py")


def svg_of(fig, creator):
    """The figure as SVG text, with no date in it (a rebuild writes the same
    bytes); closes the figure."""
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None, "Creator": f"litattn {creator}"})
    pyplot().close(fig)
    return out.getvalue()


def set_ticks(ax, rows, cols, spec, first_col=True, last_row=True):
    """Tick labels: the book's words where they apply, else indices (a few
    of them when there are many). Of several panels, only the outer ones
    carry the axis names."""
    if spec.get("col_labels") and len(spec["col_labels"]) == cols:
        ax.set_xticks(range(cols), spec["col_labels"], rotation=45, ha="right", rotation_mode="anchor")
    else:
        step = max(1, cols // 8)
        ax.set_xticks(range(0, cols, step))
    if rows == 1 and not spec.get("row_labels"):
        ax.set_yticks([])
    elif spec.get("row_labels") and len(spec["row_labels"]) == rows:
        ax.set_yticks(range(rows), spec["row_labels"])
    else:
        step = max(1, rows // 8)
        ax.set_yticks(range(0, rows, step))
    ax.tick_params(labelsize=7, length=2)
    if spec.get("col_axis") and last_row:
        ax.set_xlabel(spec["col_axis"], fontsize=7)
    if spec.get("row_axis") and rows > 1 and first_col:
        ax.set_ylabel(spec["row_axis"], fontsize=7)


def spec_digest(spec):
    h = hashlib.sha256(STYLE_VERSION.encode())
    h.update(np.ascontiguousarray(spec["values"], dtype=np.float64).tobytes())
    h.update(repr(spec["values"].shape).encode())
    h.update(json.dumps({k: v for k, v in spec.items() if k != "values"}, sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


def render_all(jobs, cache_dir, workers):
    """Renders [(spec, path)], drawing what the cache lacks on `workers`
    processes (matplotlib is slow to draw, and each figure is independent)."""
    todo = []
    for spec, path in jobs:
        cached = os.path.join(cache_dir, "figures", spec_digest(spec) + ".svg")
        if os.path.exists(cached):
            shutil.copyfile(cached, path)
        else:
            todo.append((spec, path, cached))
    if not todo:
        return 0
    os.makedirs(os.path.join(cache_dir, "figures"), exist_ok=True)
    if workers > 1 and len(todo) > 3:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            list(pool.map(_draw_to, todo, chunksize=max(1, len(todo) // (4 * workers))))
    else:
        for job in todo:
            _draw_to(job)
    return len(todo)


def _draw_to(job):
    spec, path, cached = job
    svg = draw(spec)
    tmp = cached + f".{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(svg)
    os.replace(tmp, cached)
    shutil.copyfile(cached, path)


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
