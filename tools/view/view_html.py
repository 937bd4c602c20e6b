"""view_html.py: the book view's HTML: one page per chapter and variant, the
index with the coverage table, and one stylesheet. No JavaScript: the pages
are documents, readable from disk.

Code is highlighted by Pygments; differing text is marked character by
character with difflib; every verdict is written as a word as well as a
colour.
"""

import difflib
import html
import re

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CLexer, PythonLexer

import view_model as vm

BADGE = {
    vm.IDENTICAL: ("ok", "✓"), vm.DIFFERS: ("bad", "✗"), vm.NO_OUTPUT: ("quiet", "–"),
    vm.NOT_IN_LITATTN: ("warn", "!"), vm.COUNTERPART: ("info", "≈"), vm.LITATTN_ONLY: ("info", "+"), vm.NOT_RUN: ("bad", "✗"),
    vm.NO_MARKER: ("bad", "✗"), vm.OTHER_VARIANT: ("quiet", "↗"), vm.SETUP: ("quiet", "↺"),
    "transcript blocks found": ("ok", "✓"), "transcript block not found": ("bad", "✗"),
    "not compared": ("quiet", "–"), "": ("quiet", "–"),
}
esc = html.escape


def badge(verdict):
    cls, mark = BADGE.get(vm.plain_verdict(verdict), ("quiet", "·"))
    return f'<span class="badge {cls}"><span aria-hidden="true">{mark}</span> {esc(verdict or "nothing to compare")}</span>'


def code_html(code, lexer, first_line=None):
    """Highlighted code; C with the source file's own line numbers."""
    if first_line is None:
        fmt = HtmlFormatter(cssclass="hl", wrapcode=True)
    else:
        fmt = HtmlFormatter(cssclass="hl", wrapcode=True, linenos="inline", linenostart=first_line)
    return highlight(code, lexer, fmt)


def pre(text, cls="out"):
    return f'<pre class="{cls}"><code>{esc(text)}</code></pre>'


TOKEN = re.compile(r"\s+|[^\s,()\[\]]+|.")


def diff_pair(want, got):
    """(book html, C html) of two texts with the characters that differ
    marked: <del> on the book's side, <ins> on the C's.

    Lines are paired first, then the tokens of a pair (numbers, brackets,
    blanks), then the characters of two differing tokens: a digit-level
    diff of whole outputs pairs digits of unrelated numbers, which marks
    much that is equal and reads as noise."""
    a_lines, b_lines = want.splitlines(keepends=True), got.splitlines(keepends=True)
    a, b = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False).get_opcodes():
        if op == "equal":
            a += [esc(x) for x in a_lines[i1:i2]]
            b += [esc(x) for x in b_lines[j1:j2]]
            continue
        pairs = min(i2 - i1, j2 - j1)
        for k in range(pairs):
            x, y = marked(a_lines[i1 + k], b_lines[j1 + k], TOKEN.findall)
            a.append(x)
            b.append(y)
        a += [f"<del>{esc(x)}</del>" for x in a_lines[i1 + pairs:i2]]
        b += [f"<ins>{esc(y)}</ins>" for y in b_lines[j1 + pairs:j2]]
    return (f'<pre class="out diff"><code>{"".join(a)}</code></pre>',
            f'<pre class="out diff"><code>{"".join(b)}</code></pre>')


def marked(x, y, split):
    """x and y as html, what differs marked; `split` cuts them into the units
    aligned first (tokens), whose differing pairs are then marked by character."""
    xs, ys = split(x), split(y)
    a, b = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, xs, ys, autojunk=False).get_opcodes():
        u, v = "".join(xs[i1:i2]), "".join(ys[j1:j2])
        if op == "equal":
            a.append(esc(u))
            b.append(esc(v))
        elif op == "replace" and split is not list and i2 - i1 == j2 - j1:
            for p, q in zip(xs[i1:i2], ys[j1:j2]):
                m, n = marked(p, q, list)
                a.append(m)
                b.append(n)
        else:
            a.append(f"<del>{esc(u)}</del>" if u else "")
            b.append(f"<ins>{esc(v)}</ins>" if v else "")
    return "".join(a), "".join(b)


def ulp_text(row):
    compared = [e for _, e in row.tensors if e["verdict"] in ("identical", "differs")]
    if not row.tensors:
        return ""
    if not compared:
        return f'<span class="ulp">{len(row.tensors)} tensor{"s" * (len(row.tensors) > 1)}: no fixture value</span>'
    worst = max(e["worst_ulp"] for e in compared)
    cls = "ulp" if worst == 0 else "ulp bad"
    return (f'<span class="{cls}">worst {worst} ulp over {len(compared)} tensor{"s" * (len(compared) > 1)}'
            f'{" (" + str(len(row.tensors) - len(compared)) + " without a fixture value)" if len(compared) < len(row.tensors) else ""}</span>')


def tensor_table(tensors, caption):
    rows = []
    for name, e in tensors:
        if e["verdict"] in ("identical", "differs"):
            what = "identical bits" if e["verdict"] == "identical" else f'{e["differ"]} values differ, worst {e["worst_ulp"]} ulp'
        else:
            what = e["verdict"]
        note = f'<br><small>{esc(e["note"])}</small>' if e.get("note") else ""
        cls = {"identical": "ok", "differs": "bad"}.get(e["verdict"], "quiet")
        rows.append(f'<tr><th scope="row"><code>{esc(name)}</code></th><td>{esc(e["role"])}</td>'
                    f'<td>{esc(vm.vr.shape_text(e["shape"]))}</td><td class="{cls}">{esc(what)}{note}</td></tr>')
    return (f'<table class="tensors"><caption>{caption}</caption><thead><tr><th scope="col">tensor (dump name)</th>'
            f'<th scope="col">role</th><th scope="col">shape</th><th scope="col">against PyTorch</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def book_side(row, page):
    """The left column: the notebook's cell, or what the transcripts print."""
    parts = []
    if row.book is not None:
        nb = row.book.notebook
        count = (f", In [{row.book.number}]" if row.book.number is not None and prompt(row.book) != f"In [{row.book.number}]"
                 and not str(row.book.label).startswith("Exercise") else "")  # "§5.2" is the notebook's second In [11]
        parts.append(f'<h4><span class="prompt">{esc(prompt(row.book))}</span> <span class="src">{esc(nb)}{count}</span></h4>')
        parts.append(code_html(row.book.code, PythonLexer()))
        if row.verdict == vm.OTHER_VARIANT:
            parts.append(f'<p class="note">The notebook\'s recorded output is compared on '
                         f'<a href="{vm.page_file(page.chapter.program, row.owner, page.chapter.book_variant)}#{row.anchor}">'
                         f'the {esc(row.owner)} variant</a>.</p>')
        elif row.kind != "setup":
            parts.append('<h5>Recorded in the notebook</h5>')
            if vm.plain_verdict(row.verdict) == vm.DIFFERS and row.book.compared is None:
                parts.append(diff_pair(row.book.output, row.c_text)[0])
            elif row.book.output:
                parts.append(pre(row.book.output))
            else:
                parts.append('<p class="none">(prints nothing on the GPU: the cell raised)</p>' if row.book.compared
                             else '<p class="none">(prints nothing)</p>')
            if row.book.compared is not None:
                parts.append('<h5>The same cell on a CPU, as litattn runs it</h5>')
                parts.append(diff_pair(row.book.compared, row.c_text)[0] if vm.plain_verdict(row.verdict) == vm.DIFFERS
                             else pre(row.book.compared))
    elif row.kind == "transcript":
        parts.append(f'<h4><span class="prompt">{esc(row.label)}</span> <span class="src">a transcript\'s cell; '
                     f'the official notebook has no such cell</span></h4>')
    elif row.kind == "beyond":
        parts.append('<h4><span class="prompt">litattn</span> <span class="src">not in the book</span></h4>'
                     '<p class="note">litattn\'s own cell, beyond the notebook: the comment at the top of its '
                     'C block says what it shows. Its output has nothing in the book to be compared with; its '
                     'tensors are compared with PyTorch\'s.</p>')
    else:
        parts.append(f'<h4><span class="prompt">{esc(row.label)}</span></h4><p class="note">The official notebooks have no such cell.</p>')
    for block, found in row.transcript:
        parts.append(f'<h5>{transcript_name(block)} '
                     f'{badge("transcript blocks found" if found else "transcript block not found")}</h5>')
        parts.append(pre(block.text))
    return "".join(parts)


def transcript_name(block):
    """'001_0f05...txt:37' and 'In [7]' -> 'Transcript 001, line 37 (its In [7])', with the file as a tooltip."""
    name, _, line = block.source.partition(":")
    cell = f" (its {esc(block.cell)})" if block.cell not in ("", "-") else ""
    return f'<abbr title="fixtures/book/{esc(name)}">Transcript {esc(name.split("_")[0])}</abbr>, line {esc(line)}{cell}'


def c_side(row, page):
    """The right column: the chapter's block and what it printed."""
    program = page.chapter.program
    if row.block is None:
        return (f'<h4><span class="src">chapters/{esc(program)}.c</span></h4>'
                '<p class="note missing">litattn has no block for this cell: the chapter table gives it to this '
                'chapter, but the C has no marker for it.</p>')
    b = row.block
    last = b.first + b.source.count("\n")
    parts = [f'<h4><span class="src">chapters/{esc(program)}.c</span>, line{"s" if last > b.first else ""} '
             f'{b.first}{"–" + str(last) if last > b.first else ""}</h4>', code_html(b.source, CLexer(), b.first)]
    if row.kind == "setup":
        return "".join(parts)
    parts.append("<h5>Printed by the C program</h5>")
    if row.notes:
        notes = vm.vs.note_paragraphs(row.notes, b.note_runs)
        parts.append('<div class="notes">The chapter\'s notes on this run (lines starting <code>#</code>, left out '
                     'of the comparison):<ul>' + "".join(f"<li><code>{esc(n)}</code></li>" for n in notes) + "</ul></div>")
    if not page.ran:
        parts.append('<p class="none">(the program did not run: see the top of the page)</p>')
    elif row.c_text is None:
        parts.append('<p class="none missing">(no marker line for this cell in the output)</p>')
    elif vm.plain_verdict(row.verdict) == vm.DIFFERS:
        parts.append(diff_pair(row.book.expected, row.c_text)[1])
    elif row.c_text:
        parts.append(pre(row.c_text))
    else:
        parts.append('<p class="none">(prints nothing)</p>')
    return "".join(parts)


def prompt(book_cell):
    """A cell's name, as the chapters' markers print it: "In [3]", "Exercise
    3.2", or, for a cell the notebook did not number or numbered twice (the
    bonus notebook's two In [10] and two In [11]), its section and place
    ("§5.2": the 2nd code cell of section 5)."""
    if str(book_cell.label).startswith("Exercise"):
        return book_cell.label
    if "\u00a7" in book_cell.label:
        return book_cell.label.split(" ")[-1]
    return f"In [{book_cell.number}]"


def figures_html(row, fig_paths):
    if not row.figures:
        return ""
    items = []
    for spec in row.figures:
        path, alt = fig_paths[id(spec)]
        items.append(f'<figure><img src="{esc(path)}" alt="{esc(alt)}">'
                     f'<figcaption>{esc(spec["title"])}</figcaption></figure>')
    return f'<div class="figures">{"".join(items)}</div>'


def row_title(row):
    if row.book is not None:
        code = row.book.first_line
        head = prompt(row.book) + (" (setup)" if row.kind == "setup" else "")
    else:
        code = row.block.code if row.block else ""
        head = row.label
    return f'<span class="prompt">{esc(head)}</span> <code class="first">{esc(code)}</code>'


def inline_markdown(text):
    """A heading of the notebook as HTML: its inline code (`state_dict`)
    rendered, the rest escaped."""
    return re.sub(r"`([^`]+)`", lambda m: f"<code>{m.group(1)}</code>", esc(text, quote=False))


def row_html(row, page, fig_paths):
    headings = "".join(f'<h{min(level, 3)} class="book-heading">{inline_markdown(text)}</h{min(level, 3)}>'
                       for level, text in row.headings)
    cls = BADGE.get(vm.plain_verdict(row.verdict), ("quiet",))[0]
    head = (f'<header class="cell-head"><h3 class="cell-title">{row_title(row)}</h3>'
            f'<p class="verdict">{badge(row.verdict)} {ulp_text(row)}</p></header>'
            + (f'<p class="note reason">{esc(row.reason)}'
               + (f' <a href="{esc(row.reason_at)}">See it there.</a>' if row.reason_at else "") + '</p>' if row.reason else ""))
    body = f'<div class="pair"><div class="side book">{book_side(row, page)}</div><div class="side c">{c_side(row, page)}</div></div>'
    if row.kind == "setup":
        return (f'<section class="cell setup" id="{row.anchor}"><h3 class="cell-title">{row_title(row)}</h3>'
                f'{body}</section>')
    tensors = ""
    if row.tensors:
        tensors = (f'<details class="tensor-details"><summary>{len(row.tensors)} tensor'
                   f'{"s" * (len(row.tensors) > 1)} this cell computes, against PyTorch</summary>'
                   f'{tensor_table(row.tensors, "Each tensor of the --dump file against the fixture")}</details>')
    return (f'{headings}<section class="cell v-{cls}" id="{row.anchor}">{head}{body}'
            f'{figures_html(row, fig_paths)}{tensors}</section>')


def rows_html(page, fig_paths):
    """The rows in order; consecutive setup cells share one collapsed box,
    so that the chapter's own first cell is not pushed down by them."""
    out, run = [], []

    def flush():
        if run:
            names = ", ".join(prompt(r.book) if r.book else r.label for r in run)
            out.append(f'<details class="setup-group"><summary><span class="badge quiet"><span aria-hidden="true">↺</span> '
                       f'setup</span> run again first: {esc(names)} <span class="note">(what they define; their output '
                       f'is shown on the page of the chapter they belong to)</span></summary>'
                       f'{"".join(row_html(r, page, fig_paths) for r in run)}</details>')
            run.clear()
    for r in page.rows:
        if r.kind == "setup":
            run.append(r)
            continue
        flush()
        out.append(row_html(r, page, fig_paths))
    flush()
    return "".join(out)


def run_summary(page):
    run, fixture = page.run, page.run.get("fixture")
    if run["mode"] == "no fixture":
        return (f'<p class="alert">No fixture <code>{esc(fixture or "")}</code>: the chapter reads its inputs '
                'from it, so it was not run. The book\'s side is shown; litattn\'s output is not.</p>')
    cmd = " ".join([f"build/chapters/{page.chapter.program}"] + [short_path(a) for a in run["args"]])
    text = f'<p class="run">Ran <code>{esc(cmd)}</code> in {run["seconds"]:.2f} s'
    if run["exit"] != 0:
        return text + f'; it stopped (exit {run["exit"]}):</p>' + pre(run["stderr"], "err")
    if run["mode"] == "seed":
        text += ('. The fixture is of another schema (in fixture mode the chapter said: '
                 f'<q>{esc(run["first_error"])}</q>), so everything was drawn in C, seeded as the fixture '
                 'records, and the tensors are compared with whatever the fixture holds under the same names')
    return text + f'. <a href="output/{esc(page.chapter.program)}.{esc(page.variant)}.txt">Its whole output</a>.</p>'


def short_path(arg):
    i = arg.find("/fixtures/")
    return arg[i + 1:] if i >= 0 else arg


def counts(page):
    tally = {}
    for r in page.rows:
        if r.kind in ("official", "missing"):
            tally[r.verdict] = tally.get(r.verdict, 0) + 1
    return tally


def tally_html(tally):
    return " ".join(f"{badge(v)}&nbsp;×&nbsp;{n}" for v, n in sorted(tally.items(), key=lambda t: -t[1]))


def variant_nav(page, pages):
    links = []
    for p in pages:
        label = f"{p.variant}" + (" (the book's)" if p.book_variant else "")
        if p is page:
            links.append(f'<li><a aria-current="page" href="{p.file}">{esc(label)}</a></li>')
        else:
            links.append(f'<li><a href="{p.file}">{esc(label)}</a></li>')
    return f'<nav class="variants" aria-label="Variants"><span>Variant:</span><ul>{"".join(links)}</ul></nav>'


def toc(page):
    items = []
    for r in page.rows:
        if r.kind == "setup":
            continue
        cls = BADGE.get(vm.plain_verdict(r.verdict), ("quiet",))[0]
        name = prompt(r.book) if r.book is not None else r.label
        items.append(f'<li><a class="t-{cls}" href="#{r.anchor}" title="{esc(r.verdict)}">{esc(name)}</a></li>')
    return f'<nav class="toc" aria-label="Cells on this page"><ul>{"".join(items)}</ul></nav>'


def chapter_page(page, pages, fig_paths, neighbours):
    ch = page.chapter
    meta = (f'<p class="meta"><code>chapters/{esc(ch.program)}.c</code> · variant <strong>{esc(page.variant)}</strong>'
            f'{" (the book’s)" if page.book_variant else ""} · fixture <code>{esc(short_path(page.run.get("fixture") or ""))}</code></p>')
    intro = ""
    if not page.book_variant:
        intro = (f'<p class="note">This variant reproduces a transcript of the notebook, not the notebook itself: '
                 f'its cells are shown beside the transcript blocks the <code>book</code> suite looks for. '
                 f'The official cells are compared on <a href="{pages[0].file}">the book\'s variant</a>.</p>')
    tally = counts(page)
    summary = f'<p class="tally">Official cells: {tally_html(tally)}</p>' if tally else ""
    all_t = [e for _, e in page.run.get("tensors", {}).items()]
    compared = [e for e in all_t if e["verdict"] in ("identical", "differs")]
    if compared:
        worst = max(e["worst_ulp"] for e in compared)
        summary += (f'<p class="tally">Tensors: {len(compared)} of {len(all_t)} compared with PyTorch\'s fixture, '
                    f'worst <strong>{worst} ulp</strong>'
                    f'{"" if worst else " (every one the same float32 bits)"}.</p>')
    if page.no_heatmaps:
        book = "" if page.book_variant else f' <a href="{pages[0].file}">The book\'s variant\'s page</a>.'
        summary += f'<p class="note" id="no-heatmaps">{esc(page.no_heatmaps)}{book}</p>'
    loose = ""
    if page.loose_transcript:
        items = "".join(f'<li>{badge("transcript blocks found" if f else "transcript block not found")} '
                        f'{esc(b.source)} {esc(b.cell)}{pre(b.text)}</li>' for b, f in page.loose_transcript)
        loose = (f'<section class="loose"><h2>Transcript blocks in no single cell</h2><p>Found (or not) in the '
                 f'whole output, as the <code>book</code> suite looks for them.</p><ul>{items}</ul></section>')
    others = ""
    if page.other_tensors:
        others = (f'<section class="loose"><h2>Other tensors of the dump</h2>'
                  f'{tensor_table(page.other_tensors, "Tensors no cell of the C names")}</section>')
    prev_next = "".join(f'<a rel="{rel}" href="{p.file}">{esc(text)} {esc(p.chapter.title)}</a>'
                        for rel, text, p in neighbours if p)
    body = (f'{variant_nav(page, pages)}<h1>{esc(ch.title)}</h1>{meta}{intro}{run_summary(page)}{summary}'
            f'{toc(page)}{rows_html(page, fig_paths)}{loose}{others}'
            f'<nav class="prevnext" aria-label="Chapters">{prev_next}</nav>')
    return layout(f"{ch.title} — litattn beside the book", body)


def layout(title, body):
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<title>{esc(title)}</title>\n<link rel="stylesheet" href="style.css">\n</head>\n<body>\n'
            '<header class="site"><a href="index.html">litattn</a> <span>chapter 3 of <cite>Build a Large '
            'Language Model (From Scratch)</cite>, in C, beside the book</span></header>\n'
            f'<main>\n{body}\n</main>\n<footer class="site">Built by <code>tools/view/book_view.py</code> '
            '(<code>ninja -C build book-view</code>) from the chapters\' source, their output and their '
            '<code>--dump</code> files, the official notebooks and the PyTorch fixtures.</footer>\n</body>\n</html>\n')


CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa;
  --ok: #1a7f37; --ok-bg: #dafbe1; --bad: #b42318; --bad-bg: #ffebe9; --warn: #8a5300; --warn-bg: #fff3d6;
  --info: #0550ae; --info-bg: #ddf4ff; --quiet-bg: #eaeef2; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
header.site, footer.site { padding: .5rem 1.25rem; background: #24292f; color: #f0f3f6; font-size: .9rem; }
header.site a { color: #fff; font-weight: 700; margin-right: .75rem; }
footer.site { margin-top: 3rem; background: var(--panel); color: var(--muted); border-top: 1px solid var(--line); }
main { max-width: 1500px; margin: 0 auto; padding: 0 1.25rem; }
h1 { font-size: 1.6rem; margin: 1rem 0 .25rem; }
h2.book-heading, h2 { font-size: 1.3rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h3.book-heading { font-size: 1.1rem; margin: 1.5rem 0 .5rem; color: var(--muted); }
a { color: var(--info); }
code, pre, .prompt { font-family: "DejaVu Sans Mono", ui-monospace, Menlo, Consolas, monospace; font-size: 13px; }
.meta, .run, .tally, .note { color: var(--muted); margin: .25rem 0; }
.alert { background: var(--warn-bg); color: #5c3b00; padding: .5rem .75rem; border-radius: 6px; }
nav.variants { display: flex; gap: .5rem; align-items: center; margin-top: 1rem; flex-wrap: wrap; }
nav.variants ul, nav.toc ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .35rem; }
nav.variants a { display: inline-block; padding: .15rem .6rem; border: 1px solid var(--line); border-radius: 999px; text-decoration: none; }
nav.variants a[aria-current] { background: #24292f; color: #fff; border-color: #24292f; }
nav.toc { position: sticky; top: 0; z-index: 2; background: var(--bg); padding: .5rem 0; border-bottom: 1px solid var(--line); margin: .75rem 0 1rem; }
nav.toc a { display: inline-block; padding: .05rem .45rem; border-radius: 4px; text-decoration: none; font-size: .85rem; font-family: "DejaVu Sans Mono", monospace; }
.t-ok { background: var(--ok-bg); color: var(--ok); } .t-bad { background: var(--bad-bg); color: var(--bad); }
.t-warn { background: var(--warn-bg); color: var(--warn); } .t-info { background: var(--info-bg); color: var(--info); }
.t-quiet { background: var(--quiet-bg); color: var(--muted); }
section.cell { border: 1px solid var(--line); border-left: 6px solid var(--line); border-radius: 6px; margin: 1rem 0 1.5rem; padding: .5rem 1rem 1rem; scroll-margin-top: 6rem; }
section.cell.v-ok { border-left-color: var(--ok); } section.cell.v-bad { border-left-color: var(--bad); }
section.cell.v-warn { border-left-color: #d4a72c; } section.cell.v-info { border-left-color: var(--info); }
details.setup-group { border: 1px solid var(--line); border-radius: 6px; background: var(--panel); padding: .4rem 1rem; margin: 1rem 0; }
details.setup-group > summary { cursor: pointer; color: var(--muted); }
section.cell.setup { background: var(--bg); }
.cell-head { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: .25rem 1rem; }
.cell-title { font-size: 1rem; margin: .25rem 0; font-weight: 600; min-width: 0; overflow-wrap: anywhere; }
.cell-title code.first { font-weight: 400; }
.prompt { color: #8250df; font-weight: 700; }
th.prompt, td.nowrap { white-space: nowrap; }
.verdict { margin: .25rem 0; white-space: nowrap; }
.badge { display: inline-block; white-space: nowrap; padding: .05rem .55rem; border-radius: 999px; font-size: .85rem; font-weight: 600; }
.badge.ok { background: var(--ok-bg); color: var(--ok); } .badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.warn { background: var(--warn-bg); color: var(--warn); } .badge.info { background: var(--info-bg); color: var(--info); }
.badge.quiet { background: var(--quiet-bg); color: var(--muted); }
.ulp { color: var(--muted); font-size: .85rem; margin-left: .5rem; } .ulp.bad { color: var(--bad); font-weight: 600; }
.pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; }
@media (max-width: 900px) { .pair { grid-template-columns: minmax(0, 1fr); } }
.side h4 { margin: .5rem 0 .25rem; font-size: .9rem; font-weight: 600; }
.side h5 { margin: .75rem 0 .25rem; font-size: .85rem; font-weight: 600; color: var(--muted); }
.side.book h4::before { content: "Book · "; color: var(--muted); font-weight: 400; }
.side.c h4::before { content: "litattn · "; color: var(--muted); font-weight: 400; }
.src { color: var(--muted); font-weight: 400; }
.hl, pre.out, pre.err { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; margin: 0; overflow-x: auto; }
.hl pre { margin: 0; padding: .5rem .75rem; line-height: 1.45; }
pre.out, pre.err { padding: .5rem .75rem; line-height: 1.4; }
pre.out { background: #fbfbfc; }
pre.err { background: var(--bad-bg); color: #7a1a12; }
.hl .linenos { color: #6e7781; padding-right: .75rem; user-select: none; }
.notes { color: var(--warn); font-size: .88rem; margin: .25rem 0; }
.notes ul { margin: .1rem 0 .4rem; padding-left: 1.25rem; } .notes code { white-space: normal; }
.none { color: var(--muted); font-style: italic; margin: .25rem 0; }
.missing { color: var(--warn); }
del { background: #ffcecb; color: #82071e; text-decoration: line-through; text-decoration-thickness: 1px; }
ins { background: #aceebb; color: #044317; text-decoration: none; outline: 1px solid #4ac26b; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; margin-top: 1rem; align-items: flex-start; }
figure { margin: 0; padding: .5rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; max-width: 100%; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: .8rem; color: var(--muted); margin-top: .25rem; max-width: 42rem; }
details.tensor-details { margin-top: .75rem; } details summary { cursor: pointer; }
table { border-collapse: collapse; margin: .5rem 0; font-size: .88rem; }
caption { text-align: left; color: var(--muted); padding: .25rem 0; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
thead th { background: var(--panel); }
td.ok { color: var(--ok); } td.bad { color: var(--bad); font-weight: 600; } td.quiet { color: var(--muted); }
table.coverage { width: 100%; }
table.coverage td { overflow-wrap: anywhere; }
table.counterparts tr.group th { background: var(--panel); padding-top: .6rem; }
table.counterparts tr.charts figure { flex: 1 1 24rem; min-width: 0; }  /* the notebook's chart beside litattn's */  /* a long path or code line wraps: the table fits a 1280-px window */
table.coverage td.code code { white-space: pre-wrap; }
nav.prevnext { display: flex; justify-content: space-between; gap: 1rem; margin: 2rem 0; }
q { font-style: italic; }
"""
