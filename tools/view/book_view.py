#!/usr/bin/python3
"""book_view.py: litattn beside the book, as a static site.

    /usr/bin/python3 tools/view/book_view.py [--build DIR] [--out DIR] [--book DIR] [--fixtures DIR]
    ninja -C build book-view                          # the same, for build/

Writes OUT (default build/book-view): index.html (the chapters and the
coverage table of every official cell), one page per chapter and variant,
figures/*.svg (heatmaps, by matplotlib), output/*.txt (each run's whole
output), ch03_litattn.ipynb (the companion notebook) and beside it the
official notebooks, copied unchanged with their licence
(official-LICENSE.txt), style.css and view.json (what the pages say, for
the `view` tests). Needs no server, no
network and no JavaScript.

Each chapter runs once per variant, on its fixture, with --dump; what a
page shows is read at build time from the chapter's source (the blocks
between its markers), its output, the dump against the PyTorch fixture,
the official notebooks (BOOK, default fixtures/book or $LITATTN_BOOK) and tests/book. Runs
and figures are cached in BUILD/book-view-cache, keyed by content.

Debian packages: python3-matplotlib, python3-pygments, python3-nbformat,
python3-h5py, python3-numpy.
"""

import argparse
import glob
import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import sys
import time
import traceback

sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:1] = [_HERE, os.path.dirname(_HERE)]  # tools/view/: the view's modules; tools/: the packages export and cases
from export.chapters import BOOK_DIR, REPO_ROOT, chapter_of_cell, table as chapter_table  # noqa: E402

OFFICIAL_LICENSE = "official-LICENSE.txt"  # the official notebooks' licence (Apache 2.0), beside their copies
PACKAGES = {"matplotlib": "python3-matplotlib", "pygments": "python3-pygments", "nbformat": "python3-nbformat",
            "h5py": "python3-h5py", "numpy": "python3-numpy"}


def missing_packages():
    """The Debian packages of the modules the view needs that are not installed
    (found, not imported: an up-to-date site then costs no import of them)."""
    return [package for module, package in PACKAGES.items() if importlib.util.find_spec(module) is None]


def load_view_modules():
    """The view's own modules, imported once the packages are known to be there."""
    global vf, vh, vm, vr, vs, esc
    import view_figures as vf
    import view_html as vh
    import view_model as vm
    import view_runs as vr
    import view_sources as vs
    esc = vh.esc


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(REPO_ROOT, "build"), help="the meson build directory")
    p.add_argument("--out", help="where to write the site (default BUILD/book-view)")
    p.add_argument("--book", default=BOOK_DIR,
                   help="the book's files (official/ inside)")
    p.add_argument("--fixtures", default=os.path.join(REPO_ROOT, "fixtures"), help="the fixtures to run on")
    p.add_argument("--cache", help="cache directory (default BUILD/book-view-cache)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--if-stale", action="store_true",
                   help="do nothing when OUT was made from the same inputs (the view tests build the site so)")
    p.add_argument("--no-fail", action="store_true",
                   help="as a build step: when the view cannot be made, say why (stderr, and OUT/view.json for "
                        "the view tests, which then report it) and exit 0, so that a missing package does not "
                        "stop `meson test` from building everything else")
    a = p.parse_args(argv)
    a.out = a.out or os.path.join(a.build, "book-view")
    a.cache = a.cache or os.path.join(a.build, "book-view-cache")
    return a


def main(argv):
    args = parse_args(argv)
    missing = missing_packages()
    if missing:
        return unavailable(args, f"the view needs {', '.join(missing)} (apt-get install {' '.join(missing)})", skip=True)
    if not os.path.isdir(os.path.join(args.book, "official")):
        return unavailable(args, f"no official notebooks at {os.path.join(args.book, 'official')} "
                           "(the repository keeps them in fixtures/book/official; LITATTN_BOOK names another folder)",
                           skip=False)
    digest = inputs_digest(args)
    if args.if_stale and made_from(args.out) == digest:
        print(f"book_view: {args.out} is up to date")
        return 0
    try:
        load_view_modules()
        return build(args, digest)
    except Exception:  # noqa: BLE001  as a build step, the view tests report it
        if not args.no_fail:
            raise
        return unavailable(args, "book_view.py failed:\n" + traceback.format_exc(), skip=False)


def inputs_digest(args):
    """A digest of everything the site is made from: the chapters (source and
    executable), the fixtures, the notebooks, the book suite's blocks and
    the view's own code, litattn's version and the benchmark's results
    (BUILD/bench-bonus.json). The same digest, the same site."""
    h = hashlib.sha256()
    names = [os.path.join(REPO_ROOT, "chapters", "chapters.txt"),
             os.path.join(REPO_ROOT, "meson.build")]  # litattn's version, beside the notebooks' version cells
    for ch in chapter_table():
        names += [os.path.join(REPO_ROOT, "chapters", ch.program + ".c"), os.path.join(args.build, "chapters", ch.program)]
        names += [os.path.join(args.fixtures, f"{ch.program}.{v}.h5") for v in ch.variants]
        names.append(os.path.join(REPO_ROOT, "tests", "book", f"{ch.program}.{ch.book_variant}.txt"))
        names += [os.path.join(REPO_ROOT, "tests", "book", f"{ch.program}.{v}.txt") for v in ch.variants]
    names += [os.path.join(args.book, "official", n) for n in vs_official_names() + ["LICENSE.txt"]]
    names += sorted(glob.glob(os.path.join(args.book, "[0-9]*_*.txt")))  # the transcripts (view_sources.transcript_cells)
    names += [os.path.join(REPO_ROOT, "tools", *p) for p in (("export", "__init__.py"), ("export", "chapters.py"),
                                                            ("cases", "__init__.py"), ("cases", "extract_book_blocks.py"))]
    names += sorted(glob.glob(os.path.join(REPO_ROOT, "tools", "view", "*.py")))
    names.append(os.path.join(args.build, "bench-bonus.json"))  # the bonus page's charts (view_bench.py)
    for name in names:
        h.update(name.encode() + b"\0")
        if os.path.exists(name):
            with open(name, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def vs_official_names():
    """The official notebooks the view reads (extract_book_blocks.OFFICIAL)."""
    from cases import extract_book_blocks
    return extract_book_blocks.OFFICIAL


def made_from(out):
    try:
        with open(os.path.join(out, "view.json"), encoding="utf-8") as f:
            return json.load(f).get("made_from")
    except (OSError, ValueError):
        return None


def unavailable(args, reason, skip):
    """No site: says why on stderr and, with --no-fail, in OUT/view.json
    (the view tests report SKIP for a missing package or notebook, FAIL for
    an error) and a one-paragraph index.html."""
    print(f"book_view: {reason}", file=sys.stderr)
    if not args.no_fail:
        return 77 if skip else 1
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    with open(os.path.join(args.out, "view.json"), "w", encoding="utf-8") as f:
        json.dump({"unavailable": reason, "skip": skip}, f)
    import html
    with open(os.path.join(args.out, "index.html"), "w", encoding="utf-8") as f:
        f.write(f'<!DOCTYPE html><html lang="en"><meta charset="utf-8"><title>litattn beside the book</title>'
                f'<p>The book view could not be made: <pre>{html.escape(reason)}</pre></html>\n')
    return 0


def build(args, digest):
    t0 = time.monotonic()
    table = chapter_table()
    notebooks = vs.official_notebooks(args.book)
    book_cells = {c.label: c for _, cells in notebooks.values() for c in cells}
    tokens = vs.book_tokens(notebooks["ch03.ipynb"][1])
    blocks = {ch.program: vs.c_blocks(os.path.join(REPO_ROOT, "chapters", ch.program + ".c")) for ch in table}

    jobs = []
    for ch in table:
        exe = os.path.join(args.build, "chapters", ch.program)
        if not os.access(exe, os.X_OK):
            raise FileNotFoundError(f"{exe} is not built (meson compile -C {args.build})")
        for v in ch.variants:
            jobs.append((exe, ch.program, v, os.path.join(args.fixtures, f"{ch.program}.{v}.h5")))
    runs = vr.run_all(jobs, args.cache, workers=max(1, args.jobs))
    t_runs = time.monotonic() - t0

    transcripts = vs.transcript_cells(args.book)
    pages = {}
    for ch in table:
        book_arrays = set(runs[(ch.program, ch.book_variant)].get("arrays", {}))
        pages[ch.program] = [
            vm.build_page(ch, v, runs[(ch.program, v)], blocks[ch.program], book_cells,
                          vs.suite_blocks(os.path.join(REPO_ROOT, "tests", "book", f"{ch.program}.{v}.txt")), tokens,
                          book_arrays, transcripts)
            for v in ch.variants]

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    for sub in ("figures", "output"):
        os.makedirs(os.path.join(args.out, sub))
    figures = draw_figures(pages, args)
    import view_bench  # the bonus notebook's timing charts, from BUILD/bench-bonus.json
    bench_html = view_bench.add_figures(args.build, args.out, args.cache, figures)
    bench_report = view_bench.load(args.build)
    t_figs = time.monotonic() - t0 - t_runs

    for ch in table:
        for p in pages[ch.program]:
            with open(os.path.join(args.out, "output", f"{ch.program}.{p.variant}.txt"), "w", encoding="utf-8") as f:
                f.write(p.run.get("stdout", ""))
    order = [pages[ch.program][0] for ch in table]
    for k, ch in enumerate(table):
        neighbours = [("prev", "←", order[k - 1] if k else None), ("next", "→", order[k + 1] if k + 1 < len(order) else None)]
        for p in pages[ch.program]:
            page_html = vh.chapter_page(p, pages[ch.program], figures, neighbours)
            if ch.program == view_bench.CHAPTER and p.book_variant:
                page_html = page_html.replace('<nav class="prevnext"', bench_html + '<nav class="prevnext"', 1)
            write(args.out, p.file, page_html)

    owners = owner_rows(table, pages, book_cells)
    coverage = coverage_rows(notebooks, owners, table)
    cells_html = add_counterparts(coverage, notebooks, book_cells, table, args, figures)
    bonus_file = pages[view_bench.CHAPTER][0].file
    write(args.out, bonus_file, open(os.path.join(args.out, bonus_file), encoding="utf-8").read().replace(
        '<nav class="prevnext"', cells_html + '<nav class="prevnext"', 1))
    markers = marker_checks(table, blocks, book_cells)
    write(args.out, "index.html", index_page(table, pages, coverage, markers, bench_report is not None))
    write(args.out, "style.css", vh.CSS + vh.HtmlFormatter(style="default").get_style_defs(".hl"))

    import view_notebook  # nbformat: only needed here
    view_notebook.write(view_notebook.companion(notebooks, owners, {c["label"]: c["counterpart"] for c in coverage if c.get("counterpart")}), os.path.join(args.out, "ch03_litattn.ipynb"))
    # The official notebooks beside it, unchanged, with their licence: the
    # book's links between them ("./ch03.ipynb"), which the companion keeps
    # in its markdown, resolve in the site.
    for name in vs_official_names():
        shutil.copyfile(os.path.join(args.book, "official", name), os.path.join(args.out, name))
    shutil.copyfile(os.path.join(args.book, "official", "LICENSE.txt"), os.path.join(args.out, OFFICIAL_LICENSE))
    made = manifest(table, pages, coverage, markers, figures)
    made["made_from"] = digest
    write(args.out, "view.json", json.dumps(made, indent=1))
    total = time.monotonic() - t0
    print(f"book_view: wrote {args.out}/index.html, {sum(len(v) for v in pages.values())} chapter pages, "
          f"{len(figures)} figures, ch03_litattn.ipynb in {total:.1f} s "
          f"(runs {t_runs:.1f} s, figures {t_figs:.1f} s)")
    bad = [c for c in coverage if vm.plain_verdict(c["verdict"]) in (vm.DIFFERS, vm.NOT_RUN, vm.NO_MARKER)
           or c["verdict"] == vm.NOT_IN_LITATTN and not c.get("counterpart")]
    for c in bad:
        print(f"book_view: {c['notebook']} {c['label']}: {c['verdict']}")
    return 0


def write(out, name, text):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)


def draw_figures(pages, args):
    """{id(spec): (relative path, alt text)} of every figure on every page."""
    done, jobs = {}, []
    for plist in pages.values():
        for p in plist:
            for r in p.rows:
                for spec in r.figures:
                    name = f"{p.chapter.program}.{p.variant}.{r.anchor}.{vf.slug(spec['name'])}.svg"
                    jobs.append((spec, os.path.join(args.out, "figures", name)))
                    done[id(spec)] = (f"figures/{name}", vf.describe(spec))
    vf.render_all(jobs, args.cache, max(1, args.jobs))
    return done


def owner_rows(table, pages, book_cells):
    """{official label: (chapter, page, row)}: where each official cell is
    compared with the notebook (its chapter's page for the owning variant)."""
    found = {}
    for ch in table:
        for p in pages[ch.program]:
            for r in p.rows:
                if r.kind in ("official", "missing") and r.label in book_cells and r.label in ch.labels:
                    if p.variant == vm.owner_variant(ch, book_cells[r.label]):
                        found[r.label] = (ch, p, r)
    return found


def coverage_rows(notebooks, owners, table):
    rows = []
    for name, (_, cells) in notebooks.items():
        for c in cells:
            ch, page, row = owners.get(c.label, (chapter_of_cell(c.label), None, None))
            rows.append({
                "notebook": name, "label": c.label, "prompt": vh.prompt(c), "first_line": c.first_line,
                "printed": bool(c.output), "chapter": ch.program if ch else None,
                "line": row.block.line if row and row.block else None,
                "variant": page.variant if page else None, "page": f"{page.file}#{row.anchor}" if page else None,
                "verdict": row.verdict if row else vm.NOT_IN_LITATTN,
                "worst_ulp": row.worst_ulp if row else None,
                "tensors": len(row.tensors) if row else 0,
            })
    return rows


def add_counterparts(coverage, notebooks, book_cells, table, args, figures):
    """Gives each coverage row no chapter computes its counterpart or its
    reason (view_counterparts.py): sets its verdict, "counterpart" (one
    line) and "at" (where the page shows it); returns the bonus page's
    section of those cells."""
    import view_bench
    import view_counterparts as vc
    report = view_bench.load(args.build)
    first = {}
    for ch in table:
        for label in ch.labels:
            if label in book_cells:
                first.setdefault(book_cells[label].notebook, f"{ch.program}.{ch.book_variant}.h5")
    bonus_page = vm.page_file(view_bench.CHAPTER, "", "")
    rows = []
    for c in coverage:
        if c["verdict"] != vm.NOT_IN_LITATTN or c["chapter"]:
            continue
        cell = book_cells[c["label"]]
        d = vc.describe(cell, report, args.fixtures, REPO_ROOT, first)
        if d is None:
            continue  # stays "not in litattn", with no reason: view_check.py fails on it
        c["verdict"], c["counterpart"] = d["verdict"], d["text"]
        if cell.notebook == vc.BONUS:
            c["at"] = f"{bonus_page}#{vc.anchor(cell.label)}"
            rows.append((cell, d))
    return vc.section(rows, report, args.out, args.cache, figures, vh.prompt, vh.inline_markdown)


def marker_checks(table, blocks, book_cells):
    """Each marker of an official cell (setup markers included): its code
    text against the notebook cell's first line."""
    checks = []
    for ch in table:
        for b in blocks[ch.program]:
            if b.kind in ("In", "ExIn", "MhaIn", "ImplIn", "ImplSec", "BufIn", "Exercise", "Setup"):
                cell = book_cells.get(b.label)
                want = cell.first_line if cell else None
                checks.append({"program": ch.program, "label": b.printed_label, "line": b.line, "code": b.code,
                               "book_first_line": want, "ok": want == b.code})
    return checks


def index_page(table, pages, coverage, markers, measured=True):
    chapters = []
    for ch in table:
        plist = pages[ch.program]
        variants = " ".join(f'<a href="{p.file}">{esc(p.variant)}</a>'
                            f'{"" if p.ran else " <span class=badge-inline>(" + esc(p.run["mode"] if p.run["mode"] == "no fixture" else "stopped") + ")</span>"}'
                            for p in plist)
        mine = {}
        for c in coverage:
            if c["chapter"] == ch.program:
                mine[c["verdict"]] = mine.get(c["verdict"], 0) + 1
        tally = vh.tally_html(mine) or '<span class="note">no official cells</span>'
        chapters.append(f'<tr><th scope="row"><a href="{plist[0].file}">{esc(ch.title)}</a><br><code>{esc(ch.program)}</code></th>'
                        f'<td>{variants}</td><td>{tally}</td></tr>')
    cov = []
    for c in coverage:
        where = (f'<a href="{esc(c["page"])}"><code>{esc(c["chapter"])}.c:{c["line"]}</code></a>' if c["line"]
                 else f'<code>{esc(c["chapter"])}</code>' if c["chapter"] else "—")
        if c.get("counterpart"):
            where = (f'<a href="{esc(c["at"])}">{esc(c["counterpart"])}</a>' if c.get("at")
                     else esc(c["counterpart"]))
        ulp = "" if c["worst_ulp"] is None else f'{c["worst_ulp"]} ulp ({c["tensors"]} tensor{"s" * (c["tensors"] > 1)})'
        cov.append(f'<tr><td>{esc(c["notebook"])}</td><th scope="row" class="prompt">{esc(c["prompt"])}</th>'
                   f'<td class="code"><code>{esc(c["first_line"])}</code></td><td>{where}</td>'
                   f'<td>{vh.badge(c["verdict"])}</td><td class="nowrap">{esc(ulp)}</td></tr>')
    own = []
    for ch in table:
        p = pages[ch.program][0]
        for r in p.rows:
            if r.kind in ("beyond", "transcript"):
                own.append(f'<tr><td><a href="{p.file}#{r.anchor}"><code>{esc(ch.program)}.c:{r.block.line}</code></a></td>'
                           f'<th scope="row" class="prompt">{esc(r.label)}</th><td class="code"><code>{esc(r.block.code)}</code></td>'
                           f'<td>{vh.badge(r.verdict)}{"<br><small>" + esc(r.reason) + "</small>" if r.reason else ""}</td></tr>')
    bad_markers = [m for m in markers if not m["ok"]]
    marker_text = (f'<p>Every one of the {len(markers)} markers of an official cell prints, after its <code>In [N]</code>, '
                   'the notebook cell\'s own first line, so a search for a book line finds the C.</p>' if not bad_markers else
                   '<p class="alert">Markers whose code text is not the notebook cell\'s first line:</p><ul>' +
                   "".join(f'<li><code>{esc(m["program"])}.c:{m["line"]}</code> {esc(m["label"])}: '
                           f'<code>{esc(m["code"])}</code>, the notebook: <code>{esc(str(m["book_first_line"]))}</code></li>'
                           for m in bad_markers) + "</ul>")
    total = {}
    for c in coverage:
        total[c["verdict"]] = total.get(c["verdict"], 0) + 1
    body = (
        '<h1>litattn beside the book</h1>'
        '<p>Each page is one chapter program of litattn read beside the official notebook of chapter 3 '
        '(<code>ch03.ipynb</code>, and <code>exercise-solutions.ipynb</code>). For every cell it shows the book\'s '
        'code and recorded output on the left, the block of C that computes it and what the C program printed on '
        'the right, and a verdict: <em>identical</em> text, <em>differs</em> (the differing characters marked), or '
        '<em>no printed output</em>. For the tensors a cell computes it gives the worst distance, in units in the '
        'last place, from the tensors PyTorch computed (the fixtures). Heatmaps show the attention scores, weights '
        'and masks. A cell no chapter prints (the versions, the bonus notebook\'s timings and charts) has its litattn '
        'counterpart in the table instead, or the reason it has none.</p>'
        '<p>The companion notebook <a href="ch03_litattn.ipynb"><code>ch03_litattn.ipynb</code></a> mirrors '
        '<code>ch03.ipynb</code> cell by cell with the C in place of the Python, for Jupyter, VS Code or GitHub. '
        'The official notebooks are beside it, unchanged, so that the book\'s links between them resolve: '
        + ", ".join(f'<a href="{n}"><code>{n}</code></a>' for n in vs_official_names())
        + f' (Apache License 2.0, <a href="{OFFICIAL_LICENSE}">{OFFICIAL_LICENSE}</a>).</p>'
        '<h2 id="chapters">Chapters</h2>'
        '<table class="chapters"><thead><tr><th scope="col">chapter</th><th scope="col">variants (the first is the book\'s)</th>'
        f'<th scope="col">official cells</th></tr></thead><tbody>{"".join(chapters)}</tbody></table>'
        '<h2 id="coverage">Coverage: every official cell</h2>'
        f'<p class="tally">{len(coverage)} cells: {vh.tally_html(total)}</p>'
        + ('' if measured else '<p class="note">The timing and chart cells of <code>mha-implementations.ipynb</code> '
           'are not measured yet: run <code>meson test -C build --benchmark bonus</code> (it writes '
           '<code>build/bench-bonus.json</code>), then <code>ninja -C build book-view</code>.</p>') +
        '<table class="coverage"><caption>Each cell of the official notebooks, the line of C that computes it and '
        'the verdict on the variant the book\'s output belongs to</caption><thead><tr><th scope="col">notebook</th>'
        '<th scope="col">cell</th><th scope="col">its first line</th><th scope="col">computed at</th>'
        f'<th scope="col">verdict</th><th scope="col">against PyTorch</th></tr></thead><tbody>{"".join(cov)}</tbody></table>'
        '<h2 id="litattn-cells">Cells litattn has and the notebook does not</h2>'
        '<p>Cells of the transcripts the project was made from, and litattn\'s own (<code>litattn</code>), on the '
        'book\'s variant of each chapter.</p>'
        '<table><thead><tr><th scope="col">at</th><th scope="col">cell</th><th scope="col">code</th><th scope="col">verdict</th>'
        f'</tr></thead><tbody>{"".join(own)}</tbody></table>'
        f'<h2 id="markers">Marker lines</h2>{marker_text}')
    return vh.layout("litattn beside the book", body)


def manifest(table, pages, coverage, markers, figures):
    """What the pages say, for tools/view/view_check.py."""
    return {
        "pages": [{
            "file": p.file, "program": ch.program, "variant": p.variant, "book_variant": p.book_variant,
            "ran": p.ran, "mode": p.run["mode"], "output": f"output/{ch.program}.{p.variant}.txt",
            "no_heatmaps": p.no_heatmaps,
            "rows": [{"label": r.label, "kind": r.kind, "verdict": r.verdict, "reason": r.reason, "anchor": r.anchor,
                      "line": r.block.line if r.block else None, "worst_ulp": r.worst_ulp,
                      "first": r.block.first if r.block else None,
                      "last": r.block.first + r.block.source.count("\n") if r.block else None,
                      "transcript": [{"source": b.source, "cell": b.cell, "found": f} for b, f in r.transcript]}
                     for r in p.rows],
            "loose_transcript": [{"source": b.source, "cell": b.cell, "found": f} for b, f in p.loose_transcript],
        } for ch in table for p in pages[ch.program]],
        "coverage": coverage,
        "markers": markers,
        "figures": sorted(path for path, _ in figures.values()),
        "notebook": "ch03_litattn.ipynb",
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
