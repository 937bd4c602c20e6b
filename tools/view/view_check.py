#!/usr/bin/python3
"""view_check.py: the `view` suite's structure test of the book view.

    /usr/bin/python3 tools/view/view_check.py --build BUILD [--site SITE] [--book BOOK]

Checks the site that `ninja -C BUILD book-view` wrote (SITE, default
BUILD/book-view), independently of how book_view.py built it where it can:

  - every chapter and variant of chapters/chapters.txt has its page, and the
    index's coverage table has one row per cell of the official notebooks;
  - every cell the notebooks print appears exactly once, as a section of the
    page of the variant its output belongs to, with the recorded text on it;
  - every verdict is the `book` suite's: tests/book_check runs on the very
    output the view showed (`-- cat output/<chapter>.<variant>.txt`), and
    its ok/FAIL per block must match the view's identical/not, found/not;
  - a cell recorded on a GPU and compared with its output rewritten for the
    CPU says so in its verdict ("identical on the CPU (recorded on cuda:0)");
  - every cell no chapter computes has a counterpart on the index (and on
    the bonus chapter's page), or a reason "not in litattn: because ...";
    the counterparts say a thing once (no clause in more than three rows,
    how to make the benchmark's figures once a page), and the notebooks'
    recorded images (the bonus notebook's charts) are shown, byte for byte;
  - every marker line the chapters print carries the notebook cell's own
    first line;
  - every cell "not compared" says why, on its page; so does every page
    without a heatmap;
  - every marker statement of a chapter's source (one line or more) has its
    cell on the chapter's pages, and every block of C a page shows has its
    braces balanced (it never ends inside braces it opened);
  - no two cells of a notebook go by one name (the bonus notebook's two
    In [10] and In [11] are told apart as the chapter's markers name them);
  - no heading shows raw Markdown (a backtick: inline code is rendered);
  - every note line a chapter printed ("# ...") is on its page, in a note of
    its own that has no other "#" (a note wrapped over lines reads as one);
  - every image exists and has alt text; every figure (figures/) is a valid
    SVG file (XML whose root is <svg> with a size) referenced by a page;
    every local link resolves;
  - the companion notebook validates (nbformat) and mirrors ch03.ipynb;
    every local link of every notebook in the site resolves (to a file of
    the site, and to an id of a page).
Prints one line per check; exit 1 on any failure, 77 (SKIP) without the
notebooks beside the checkout.
"""

import argparse
import html
import html.parser
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:1] = [_HERE, os.path.dirname(_HERE)]  # tools/view/, and tools/ (export.chapters, cases.extract_book_blocks)
from export.chapters import BOOK_DIR, REPO_ROOT, table as chapter_table  # noqa: E402
from cases import extract_book_blocks as ebb  # noqa: E402
import view_sources as vs  # noqa: E402
import view_site  # noqa: E402

failures = []


def check(ok, what, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail and not ok else ''}")
    if not ok:
        failures.append(what)
    return ok


class PageParser(html.parser.HTMLParser):
    """Ids, images, links and sections of a page; and whether its tags balance."""
    VOID = {"meta", "link", "img", "br", "hr", "input", "wbr", "source", "col"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.images, self.links, self.sections, self.stack, self.errors = [], [], [], [], [], []
        self.text, self.headings = [], []
        self.notes = []  # the text of each <li> in an element of class "notes": one note of the chapter's

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "img":
            self.images.append(a)
        if tag in ("a", "link") and "href" in a:
            self.links.append(a["href"])
        if tag == "section" and "cell" in a.get("class", ""):
            self.sections.append(a.get("id"))
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings.append("")
        if "notes" in a.get("class", "").split() and tag not in self.VOID:
            self.in_notes = len(self.stack)
        if tag == "li" and getattr(self, "in_notes", None):
            self.notes.append("")

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if getattr(self, "in_notes", None) == len(self.stack):
            self.in_notes = None
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)
        if any(t in ("h1", "h2", "h3", "h4", "h5", "h6") for t in self.stack):
            self.headings[-1] += data
        if getattr(self, "in_notes", None) and "li" in self.stack[self.in_notes:]:
            self.notes[-1] += data


def parse_page(path):
    p = PageParser()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    p.close()
    p.full_text = "".join(p.text)
    return p


def check_pages(site, manifest, table):
    pages = {(p["program"], p["variant"]): p for p in manifest["pages"]}
    missing = [f"{c.program}.{v}" for c in table for v in c.variants if (c.program, v) not in pages]
    check(not missing, f"every chapter and variant has its page ({len(pages)} pages)", ", ".join(missing))
    parsed = {}
    for p in manifest["pages"]:
        path = os.path.join(site, p["file"])
        if not check(os.path.exists(path), f"{p['file']} exists"):
            continue
        parsed[p["file"]] = page = parse_page(path)
        dup = sorted({i for i in page.ids if page.ids.count(i) > 1})
        check(not page.errors and not page.stack and not dup, f"{p['file']}: tags balance, ids unique",
              "; ".join(page.errors[:3] + [f"unclosed {page.stack}"] * bool(page.stack) + [f"duplicate ids {dup}"] * bool(dup)))
    parsed["index.html"] = parse_page(os.path.join(site, "index.html"))
    return pages, parsed


def check_cell_names(site, manifest):
    """Each cell's name (its prompt) names one cell of its notebook: in the
    index's coverage table and in each page's list of cells."""
    index = open(os.path.join(site, "index.html"), encoding="utf-8").read()
    table = index.split('id="coverage"')[1].split('id="litattn-cells"')[0]
    names = re.findall(r'<tr><td>([^<]*)</td><th scope="row" class="prompt">([^<]*)</th>', table)
    twice = sorted({f"{nb} {n}" for nb, n in names if names.count((nb, n)) > 1})
    for p in manifest["pages"]:
        page = open(os.path.join(site, p["file"]), encoding="utf-8").read()
        toc = re.findall(r'<a class="t-\w+" href="#[^"]*" title="[^"]*">([^<]*)</a>',
                         page.split('<nav class="toc"')[1].split("</nav>")[0])
        official = [html.unescape(t) for t, r in zip(toc, [r for r in p["rows"] if r["kind"] != "setup"])
                    if r["kind"] in ("official", "missing")]
        twice += sorted({f"{p['file']}: {t}" for t in official if official.count(t) > 1})
    check(names and not twice, f"no two cells of a notebook go by one name ({len(names)} on the index)",
          "; ".join(twice[:5]))


def check_headings(parsed):
    """The notebook's headings are rendered: no backtick of Markdown's inline code left."""
    raw = [f"{name}: {h.strip()!r}" for name, page in parsed.items() for h in page.headings if "`" in h]
    check(not raw, f"no heading shows raw Markdown ({sum(len(p.headings) for p in parsed.values())} headings)",
          "; ".join(raw[:5]))


def check_notes(site, manifest, parsed):
    """The chapter's notes, each in an item of its own: every note line of
    the output in one, each item one note, starting with its "# " and no
    "# " of another line in it."""
    problems, lines = [], 0
    for p in manifest["pages"]:
        if not p["ran"]:
            continue
        notes = parsed[p["file"]].notes
        problems += [f"{p['file']}: a note with a stray '#': {n!r}" for n in notes
                     if not n.startswith("# ") or re.search(r"\s#\s", n)]
        with open(os.path.join(site, p["output"]), encoding="utf-8") as f:
            out = f.read()
        after_marker = out[out.find("\n>>> ") + 1:] if not out.startswith(">>> ") else out
        for line in re.findall(r"^# (.*)$", after_marker, re.M):
            lines += 1
            if not any(line in n for n in notes):
                problems.append(f"{p['file']}: the note line {line!r} is in no note of the page")
        # A sentence the chapter wraps over print_note calls on consecutive
        # lines, each of one string, is one note: whole in one item.
        with open(os.path.join(REPO_ROOT, "chapters", p["program"] + ".c"), encoding="utf-8") as f:
            source = f.read()
        for run in re.findall(r'(?:^[ \t]*print_note\("# [^"\\]*"\);[ \t]*\n){2,}', source, re.M):
            parts = re.findall(r'print_note\("# ([^"\\]*)"\);', run)
            if parts[0] in out and not any(" ".join(parts) in n for n in notes):
                problems.append(f"{p['file']}: the note {parts[0][:40]!r}... wrapped over {len(parts)} lines is not "
                                "one item")
    check(lines and not problems, f"each of the {lines} note lines the chapters printed is in a note of its own",
          "; ".join(problems[:4]))


def check_links_and_images(site, parsed, manifest):
    referenced = set()
    bad_links, bad_images = [], []
    for name, page in parsed.items():
        for href in page.links:
            if re.match(r"[a-z]+:", href):
                bad_links.append(f"{name}: {href} (not a local file)")
                continue
            target, _, frag = href.partition("#")
            target = target or name
            if not os.path.exists(os.path.join(site, target)):
                bad_links.append(f"{name}: {href}")
            elif frag and target in parsed and frag not in parsed[target].ids:
                bad_links.append(f"{name}: {href} (no such id)")
        for img in page.images:
            src = img.get("src", "")
            referenced.add(os.path.normpath(src))
            if not img.get("alt", "").strip():
                bad_images.append(f"{name}: {src} has no alt text")
            if not os.path.exists(os.path.join(site, src)):
                bad_images.append(f"{name}: {src} missing")
    check(not bad_links, "every link is to a local file and id that exists", "; ".join(bad_links[:5]))
    check(not bad_images, "every image exists and has alt text", "; ".join(bad_images[:5]))
    figures = sorted(os.path.join("figures", f) for f in os.listdir(os.path.join(site, "figures")))
    invalid = []
    for rel in figures:
        try:
            root = ET.parse(os.path.join(site, rel)).getroot()
            if root.tag != "{http://www.w3.org/2000/svg}svg" or not (root.get("viewBox") or root.get("width")):
                invalid.append(f"{rel}: root {root.tag}")
        except ET.ParseError as e:
            invalid.append(f"{rel}: {e}")
    check(figures and not invalid, f"every image is a valid SVG ({len(figures)} files)", "; ".join(invalid[:5]))
    unused = [f for f in figures if os.path.normpath(f) not in referenced]
    check(not unused, "every SVG is shown on a page", ", ".join(unused[:5]))
    check(sorted(manifest["figures"]) == figures, "view.json lists the figures written")


def check_official_cells(site, manifest, pages, parsed, book_dir):
    """Every printed official cell once, on the page of its owner variant, with its text."""
    printed = ebb.official_blocks(os.path.join(book_dir, "official"))
    cov = {}
    for c in manifest["coverage"]:
        cov.setdefault(c["label"], []).append(c)
    problems = []
    for nb, label, text in printed:
        full = label  # "In [3]", "exercise-solutions In [6]", "Exercise 3.2": as the chapters print them
        rows = cov.get(full, [])
        if len(rows) != 1:
            problems.append(f"{full}: {len(rows)} coverage rows")
            continue
        c = rows[0]
        if not c["page"]:
            problems.append(f"{full}: no page (verdict {c['verdict']})")
            continue
        file, anchor = c["page"].split("#")
        page = parsed[file]
        sections = [s for s in page.sections if s == anchor]
        owner = next(p for p in manifest["pages"] if p["file"] == file)
        same = [r for r in owner["rows"] if r["label"] == full and r["kind"] in ("official", "missing")]
        if len(sections) != 1 or len(same) != 1:
            problems.append(f"{full}: {len(sections)} sections and {len(same)} rows on {file}")
        elif text.strip() and text.strip().split("\n")[0] not in page.full_text:
            problems.append(f"{full}: the recorded output is not on {file}")
    check(not problems, f"each of the {len(printed)} printed official cells appears once, with its text",
          "; ".join(problems[:5]))
    # The coverage table: one row per cell of the notebooks (printed or not).
    notebooks = vs.official_notebooks(book_dir)
    labels = [c.label for _, cells in notebooks.values() for c in cells]
    index_rows = len(re.findall(r'<th scope="row" class="prompt">', open(os.path.join(site, "index.html"), encoding="utf-8")
                                .read().split('id="coverage"')[1].split('id="litattn-cells"')[0]))
    check(sorted(cov) == sorted(labels) and index_rows == len(labels),
          f"the coverage table has every official cell once ({len(labels)} cells)",
          f"{len(cov)} labels in view.json, {index_rows} rows on the index")
    unplaced = [c["label"] for c in manifest["coverage"] if c["chapter"] and not c["line"]]
    check(not unplaced, "each cell a chapter computes names its chapter and line", ", ".join(unplaced))


def check_counterparts(site, manifest, parsed, build):
    """No unexplained "not in litattn" row: each cell no chapter computes
    has on the index a counterpart (the bonus notebook's, also a row of its
    chapter's page), or a reason "not in litattn: because ..."; a timing or
    chart cell shows the benchmark's figures when BUILD/bench-bonus.json
    exists, else says how to make them."""
    index = parsed["index.html"].full_text
    bench = os.path.exists(os.path.join(build, "bench-bonus.json"))
    c_forward = {}
    if bench:
        with open(os.path.join(build, "bench-bonus.json"), encoding="utf-8") as f:
            c_forward = json.load(f).get("c", {}).get("forward", {})
    problems, counted = [], 0
    for c in manifest["coverage"]:
        if c["chapter"]:
            continue
        counted += 1
        text = c.get("counterpart") or ""
        if c["verdict"] == "not in litattn":
            if not text.startswith("not in litattn: because "):
                problems.append(f"{c['label']}: not in litattn, and no reason")
        elif c["verdict"] != "litattn counterpart" or not text:
            problems.append(f"{c['label']}: verdict {c['verdict']!r} without a chapter or a counterpart")
        if text and text not in index:
            problems.append(f"{c['label']}: its counterpart is not on the index")
        if c.get("at"):
            file, _, frag = c["at"].partition("#")
            if file not in parsed or frag not in parsed[file].ids:
                problems.append(f"{c['label']}: {c['at']} is not on its page")
        timed = c["label"].startswith("mha-implementations") and re.match(r"## \d\)|execution_stats = ", c["first_line"])
        if timed and bench == ("not measured yet" in text):
            problems.append(f"{c['label']}: {'no figures although' if bench else 'figures without'} "
                            f"{build}/bench-bonus.json")
        number = re.match(r"## (\d)\)", c["first_line"]) if timed else None
        if number and bench:  # the C forward of the implementation the cell times (5, 6, 9: the fused one)
            v = c_forward.get("fused" if number.group(1) in "569" else number.group(1))
            if v and f"C {v * 1e3:.1f} ms" not in text:
                problems.append(f"{c['label']}: the C forward of {number.group(1)}) ({v * 1e3:.1f} ms) is not in it")
    check(not problems, f"each of the {counted} cells no chapter computes has its counterpart or a reason",
          "; ".join(problems[:5]))


HOW = "meson test -C build --benchmark bonus"


def row_cells(table_html):
    """[[text of each cell]] of the rows of a table's HTML."""
    rows = []
    for tr in re.findall(r"<tr\b.*?</tr>", table_html, re.S):
        cells = re.findall(r"<t[dh]\b[^>]*>(.*?)</t[dh]>", tr, re.S)
        rows.append([" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in cells])
    return rows


def check_said_once(site, manifest, build):
    """The counterparts say a thing once: no clause of eight words or more in
    more than three rows of the bonus page's table of counterparts (its
    litattn column) or of the index's coverage table (its "computed at");
    how to make the benchmark's figures, when there are none, once on
    each of the two pages."""
    bonus = next(p["file"] for p in manifest["pages"] if p["program"] == "ch03_bonus_mha_implementations"
                 and p["book_variant"])
    whole = {name: open(os.path.join(site, name), encoding="utf-8").read() for name in (bonus, "index.html")}
    pages = {bonus: (whole[bonus].split('id="counterparts"')[1].split("</section>")[0], -1),
             "index.html": (whole["index.html"].split('id="coverage"')[1].split('id="litattn-cells"')[0], 3)}
    bench = os.path.exists(os.path.join(build, "bench-bonus.json"))
    problems = []
    for name, (part, column) in pages.items():
        rows = {}
        for k, cells in enumerate(row_cells(part)):
            if len(cells) > abs(column):
                for clause in re.split(r"; |: |\. ", cells[column]):
                    if len(clause.split()) >= 8:
                        rows.setdefault(clause.strip(" ."), set()).add(k)
        problems += [f"{name}: {len(ks)} rows say {clause!r}" for clause, ks in rows.items() if len(ks) > 3]
        said = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", whole[name])).split()).count(HOW)
        if said > 1 or not bench and said != 1:
            problems.append(f"{name}: says {HOW!r} {said} times")
    check(not problems, "the counterparts say each thing once", "; ".join(problems[:4]))


def check_recorded_images(site, parsed, book_dir):
    """Every image the official notebooks recorded (the bonus notebook's
    charts, In [30], In [32], In [34]) is in the site, its very bytes, on a
    page, with alt text."""
    import base64
    shown = {}
    for name, page in parsed.items():
        for img in page.images:
            path = os.path.join(site, img.get("src", ""))
            if img.get("src", "").endswith(".png") and os.path.exists(path) and img.get("alt", "").strip():
                with open(path, "rb") as f:
                    shown[f.read()] = name
    want, missing = 0, []
    for nb in ebb.OFFICIAL:
        for cell in vs.read_notebook(os.path.join(book_dir, "official", nb))["cells"]:
            for out in cell.get("outputs", []):
                png = out.get("data", {}).get("image/png")
                if png:
                    want += 1
                    if base64.b64decode("".join(png)) not in shown:
                        missing.append(f"{nb} In [{cell.get('execution_count')}]")
    check(want and not missing, f"each of the {want} images the notebooks recorded is shown, with alt text",
          "not shown: " + ", ".join(missing))


def book_check_lines(book_check, blocks, output):
    """{(source, cell): ok} from tests/book_check run on a saved output."""
    p = subprocess.run([book_check, blocks, "--", "/bin/cat", output], capture_output=True, text=True, timeout=60)
    result = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^(ok  |FAIL) (\S+) (.*)$", line)
        if not m or m.group(2).startswith(("exited", "%s")):
            continue
        source, rest = m.group(2), m.group(3)
        cell = rest.split(":")[0] if source.endswith(".ipynb") else re.split(r"  |: ", rest)[0].rstrip()
        result[(source, cell)] = m.group(1) == "ok  "
    return result


def check_verdicts(site, manifest, build):
    """The view's verdicts against tests/book_check's, block by block."""
    book_check = os.path.join(build, "tests", "book_check")
    if not check(os.access(book_check, os.X_OK), f"{book_check} is built"):
        return
    compared, problems = 0, []
    for p in manifest["pages"]:
        blocks = os.path.join(REPO_ROOT, "tests", "book", f"{p['program']}.{p['variant']}.txt")
        if not os.path.exists(blocks):
            continue
        suite = book_check_lines(book_check, blocks, os.path.join(site, p["output"]))
        view = {}
        for r in p["rows"]:
            if r["kind"] in ("official", "missing") and r["verdict"] != "compared on another variant":
                nb = ("ch03.ipynb" if r["label"].startswith("In ") else "multihead-attention.ipynb"
                      if r["label"].startswith("multihead-attention ") else "mha-implementations.ipynb"
                      if r["label"].startswith("mha-implementations ") else "understanding-buffers.ipynb"
                      if r["label"].startswith("understanding-buffers ") else "exercise-solutions.ipynb")
                view[(nb, r["label"])] = r["verdict"] == "identical" or r["verdict"].startswith("identical on the CPU")
            for t in r["transcript"]:
                view[(t["source"], t["cell"])] = t["found"]
        for t in p["loose_transcript"]:
            view[(t["source"], t["cell"])] = t["found"]
        for key, ok in suite.items():
            compared += 1
            if key not in view:
                problems.append(f"{p['file']}: {key[0]} {key[1]} is not on the page")
            elif view[key] != ok:
                problems.append(f"{p['file']}: {key[0]} {key[1]}: book suite {'ok' if ok else 'FAIL'}, view "
                                f"{'identical/found' if view[key] else 'not'}")
    check(compared and not problems, f"the view's verdicts are the book suite's ({compared} blocks)",
          "; ".join(problems[:5]))


ON_CPU_VERDICT = re.compile(r"^(identical|differs) on the CPU \(recorded on cuda(:\d+)?\)$")


def rewritten_cells(book_dir):
    """The labels of the cells compared with a text other than their recorded
    output: a GPU's output as the cell prints it on the CPU
    (extract_book_blocks.compared_outputs against cell_output)."""
    found = set()
    for name in ebb.OFFICIAL:
        cells = vs.read_notebook(os.path.join(book_dir, "official", name))["cells"]
        labels = ebb.code_cell_labels(cells, name)
        compared = ebb.compared_outputs(name, cells, labels)
        found |= {labels[i] for i, cell in enumerate(cells) if i in labels and compared[labels[i]] != ebb.cell_output(cell)}
    return found


def check_rewritten_verdicts(manifest, parsed, book_dir):
    """A cell compared with its output rewritten for the CPU says so in its
    verdict, on the index and on its page; no other verdict says it."""
    rewritten, problems = rewritten_cells(book_dir), []
    for c in manifest["coverage"]:
        says = bool(ON_CPU_VERDICT.match(c["verdict"]))
        if c["label"] in rewritten and not says:
            problems.append(f"{c['label']}: compared with its output rewritten for the CPU, verdict {c['verdict']!r}")
        elif c["label"] not in rewritten and "on the CPU" in c["verdict"]:
            problems.append(f"{c['label']}: compared with its recorded output, verdict {c['verdict']!r}")
        elif says and c["verdict"] not in parsed[c["page"].split("#")[0]].full_text + parsed["index.html"].full_text:
            problems.append(f"{c['label']}: {c['verdict']!r} is not on its page and the index")
    check(rewritten and not problems, f"each of the {len(rewritten)} cells recorded on a GPU and compared on the CPU "
          "says so in its verdict", "; ".join(problems[:5]))


def check_markers(site, manifest, book_dir):
    """What each chapter printed: ">>> In [N]: code" carries In [N]'s first line."""
    cells = {c.label: c for _, cs in vs.official_notebooks(book_dir).values() for c in cs}
    seen, bad = 0, []
    for p in manifest["pages"]:
        with open(os.path.join(site, p["output"]), encoding="utf-8") as f:
            out = f.read()
        for c in vs.output_cells(out):
            if c.label in cells:
                seen += 1
                if c.code != cells[c.label].first_line:
                    bad.append(f"{p['program']} {c.label}: {c.code!r}")
    bad += [f"{m['program']}.c:{m['line']} {m['label']}" for m in manifest["markers"] if not m["ok"]]
    check(not bad, f"every marker carries the notebook cell's first line ({seen} printed, "
          f"{len(manifest['markers'])} in the source)", "; ".join(bad[:5]))


MARKER_START = re.compile(r"^\s*(In|ExIn|MhaIn|ImplIn|ImplSec|BufIn|Exercise|Transcript|Beyond|Setup)\(", re.M)
C_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}]', re.S)


def unbalanced(code):
    """Why a block of C does not balance its braces (outside comments and
    literals), or None."""
    depth = 0
    for m in C_TOKEN.finditer(code):
        depth += {"{": 1, "}": -1}.get(m.group(0), 0)
        if depth < 0:
            return f"a }} it did not open, at line +{code.count(chr(10), 0, m.start())}"
    return f"{depth} {{ left open" if depth else None


def check_reasons(manifest, parsed):
    """Every cell "not compared" gives its reason on its page; and a
    transcript's cell whose blocks the `book` suite looks for in this
    variant's output (tests/book) is compared."""
    problems, n = [], 0
    for p in manifest["pages"]:
        blocks = os.path.join(REPO_ROOT, "tests", "book", f"{p['program']}.{p['variant']}.txt")
        text = open(blocks, encoding="utf-8").read() if os.path.exists(blocks) else ""
        looked_for = {f"{m.group(1)} {m.group(2)}" for m in re.finditer(r"^# (\d+)_\S+ (In \[[^\]]*\])$", text, re.M)}
        for r in p["rows"]:
            if r["kind"] == "transcript" and r["label"] in looked_for and not r["transcript"]:
                problems.append(f"{p['file']} {r['label']}: the book suite looks for its blocks here, and it has none")
            if r["verdict"] != "not compared":
                continue
            n += 1
            if not r.get("reason"):
                problems.append(f"{p['file']} {r['label']}: no reason")
            elif html.unescape(r["reason"]).split(" (")[0] not in parsed[p["file"]].full_text:
                problems.append(f"{p['file']} {r['label']}: its reason is not on the page")
    check(not problems, f"each of the {n} cells not compared says why", "; ".join(problems[:5]))


def check_no_heatmaps(manifest, parsed):
    """A page without a heatmap says why (an element with the id
    no-heatmaps, its reason in view.json); a page with one does not."""
    problems, bare = [], 0
    for p in manifest["pages"]:
        page = parsed[p["file"]]
        says = "no-heatmaps" in page.ids
        if page.images and says:
            problems.append(f"{p['file']}: {len(page.images)} images, and it says it has no heatmap")
        elif not page.images:
            bare += 1
            if not says or not p.get("no_heatmaps") or p["no_heatmaps"].split(" (")[0] not in page.full_text:
                problems.append(f"{p['file']}: no heatmap, and no reason")
    check(not problems, f"each of the {bare} pages without a heatmap says why", "; ".join(problems[:5]))


def check_c_blocks(manifest):
    """Each marker statement of a chapter has its cell on every page of the
    chapter, and each block of C shown balances its braces."""
    problems, shown = [], 0
    for p in manifest["pages"]:
        with open(os.path.join(REPO_ROOT, "chapters", p["program"] + ".c"), encoding="utf-8") as f:
            source = f.read()
        body = source.split("return chapter_end();")[0]
        markers = len(MARKER_START.findall(body))
        blocks = [r for r in p["rows"] if r.get("first")]
        if len(blocks) != markers:
            problems.append(f"{p['file']}: {len(blocks)} cells with a block of C, {markers} markers in the source")
        lines = source.split("\n")
        for r in blocks:
            shown += 1
            why = unbalanced("\n".join(lines[r["first"] - 1:r["last"]]))
            if why:
                problems.append(f"{p['file']} {r['label']} (lines {r['first']}-{r['last']}): {why}")
    check(shown and not problems, f"each of the {shown} blocks of C shown has its braces balanced, and every marker "
          "its cell", "; ".join(problems[:5]))


NOTEBOOK_LINK = re.compile(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|(?:href|src)\s*=\s*["\']([^"\']+)["\']')


def check_notebook_links(site, parsed):
    """Every link of a notebook's markdown to no other site (a relative
    path: `./ch03.ipynb`, `ch03_3_simplified_attention.html#in-3`) names a
    file of the site, and an id of it when it is a page."""
    bad, n = [], 0
    names = sorted(f for f in os.listdir(site) if f.endswith(".ipynb"))
    for name in names:
        with open(os.path.join(site, name), encoding="utf-8") as f:
            cells = json.load(f)["cells"]
        for c in cells:
            if c["cell_type"] != "markdown":
                continue
            text = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for m in NOTEBOOK_LINK.finditer(text):
                href = m.group(1) or m.group(2)
                if re.match(r"[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith("#"):
                    continue  # another site's, or a heading of the notebook
                n += 1
                target, _, frag = href.partition("#")
                if not os.path.exists(os.path.join(site, os.path.normpath(target))):
                    bad.append(f"{name}: {href}")
                elif frag and target in parsed and frag not in parsed[target].ids:
                    bad.append(f"{name}: {href} (no such id)")
    check(n and not bad, f"every local link of the site's {len(names)} notebooks resolves ({n} links)",
          "; ".join(bad[:5]))


def check_notebook(site, book_dir):
    try:
        import nbformat
    except ImportError:
        check(False, "nbformat imports (apt-get install python3-nbformat)")
        return
    path = os.path.join(site, "ch03_litattn.ipynb")
    nb = nbformat.read(path, as_version=4)
    try:
        nbformat.validate(nb)
        check(True, "ch03_litattn.ipynb validates (nbformat)")
    except nbformat.ValidationError as e:
        check(False, "ch03_litattn.ipynb validates (nbformat)", str(e).split("\n")[0])
    book = vs.read_notebook(os.path.join(book_dir, "official", "ch03.ipynb"))
    want_md = ["".join(c["source"]) for c in book["cells"] if c["cell_type"] == "markdown"]
    have_md = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb.cells
               if c.cell_type == "markdown"]
    it = iter(have_md)
    in_order = all(any(m == h for h in it) for m in want_md)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code" and isinstance(c.execution_count, int)]
    book_counts = [c["execution_count"] for c in book["cells"] if c["cell_type"] == "code"]
    check(in_order, f"it keeps ch03.ipynb's {len(want_md)} markdown cells in order")
    check(counts[:len(book_counts) - 1] == book_counts[1:],
          "its code cells follow ch03.ipynb's In [2] ... In [N]", f"{counts[:8]}...")


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO_ROOT, "build"))
    ap.add_argument("--site")
    ap.add_argument("--book", default=BOOK_DIR)
    ap.add_argument("--build-site", action="store_true", help="build the site first, unless it is up to date")
    a = ap.parse_args(argv)
    site = a.site or os.path.join(a.build, "book-view")
    if not os.path.isdir(os.path.join(a.book, "official")):
        print(f"FAIL: no official notebooks at {os.path.join(a.book, 'official')} "
              "(the repository keeps them in fixtures/book/official; LITATTN_BOOK names another folder)")
        return 1
    if a.build_site:
        view_site.ensure_site(a.build, site)
    if not os.path.exists(os.path.join(site, "view.json")):
        print(f"FAIL: no site at {site} (ninja -C {a.build} book-view)")
        return 1
    with open(os.path.join(site, "view.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    if "unavailable" in manifest:  # book_view.py --no-fail could not make the site
        print(("SKIP: " if manifest["skip"] else "FAIL: ") + manifest["unavailable"])
        return 77 if manifest["skip"] else 1
    table = chapter_table()
    pages, parsed = check_pages(site, manifest, table)
    check_cell_names(site, manifest)
    check_headings(parsed)
    check_notes(site, manifest, parsed)
    check_links_and_images(site, parsed, manifest)
    check_official_cells(site, manifest, pages, parsed, a.book)
    check_counterparts(site, manifest, parsed, a.build)
    check_said_once(site, manifest, a.build)
    check_recorded_images(site, parsed, a.book)
    check_verdicts(site, manifest, a.build)
    check_rewritten_verdicts(manifest, parsed, a.book)
    check_markers(site, manifest, a.book)
    check_c_blocks(manifest)
    check_reasons(manifest, parsed)
    check_no_heatmaps(manifest, parsed)
    check_notebook(site, a.book)
    check_notebook_links(site, parsed)
    print(f"{len(failures)} checks failed" if failures else "every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
