"""chapters.py: the chapter table, chapters/chapters.txt, for the Python tools.

chapters/chapters.txt is the one list of chapter programs (the build reads it
too, in chapters/meson.build, and the tests in tests/meson.build). This module
parses it; no tool repeats it.

    from export import chapters
    for c in chapters.table():
        c.program, c.draws, c.variants, c.cells, c.title
    chapters.get("ch03_5_3_causal_attention").variants   # ['seed123']
    chapters.get("ch03_6_1_multihead_wrapper").labels     # ['In [35]', 'Exercise 3.2']

Each line: program, draws (yes/no), comma-separated variants (the first is
the book's), the cells it reproduces, and the title (the rest of the line).
Import has no side effects; the file is read on the first call.
"""

import os
import re
from dataclasses import dataclass

TOOLS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(TOOLS_DIR)
TABLE_PATH = os.path.join(REPO_ROOT, "chapters", "chapters.txt")
# The book's files (official/ holds the notebooks; the transcripts beside it):
# fixtures/book/ (fixtures/book/PROVENANCE.md), unless LITATTN_BOOK names
# another folder of the same layout.
BOOK_DIR = os.environ.get("LITATTN_BOOK") or os.path.join(REPO_ROOT, "fixtures", "book")


# The notebooks a cell spec names, by its prefix: (notebook, the prefix of
# the label a chapter's marker prints).
NOTEBOOKS = {
    "In": ("ch03.ipynb", "In"),
    "ExIn": ("exercise-solutions.ipynb", "exercise-solutions In"),
    "MhaIn": ("multihead-attention.ipynb", "multihead-attention In"),
    "ImplIn": ("mha-implementations.ipynb", "mha-implementations In"),
    "BufIn": ("understanding-buffers.ipynb", "understanding-buffers In"),
}
# mha-implementations.ipynb repeats execution counts (In [10], In [11]): a
# cell whose count is not unique is cited by section and place instead,
# ImplSec[5.2] for the 2nd code cell of its section "## 5.", labelled
# "mha-implementations \u00a75.2".
SECTION_PREFIX = "mha-implementations \u00a7"
SECTION_NOTEBOOK = "mha-implementations.ipynb"


def label_prefix(notebook):
    """'multihead-attention.ipynb' -> 'multihead-attention In'."""
    return next(p for nb, p in NOTEBOOKS.values() if nb == notebook)


def cells_of(spec):
    """'In[2-14],ExIn[2-7],Exercise[3.2]' -> the labels the chapters print:
    ['In [2]', ..., 'exercise-solutions In [2]', ..., 'Exercise 3.2'];
    'MhaIn[2-8]' -> ['multihead-attention In [2]', ...]; 'BufIn[1-16]' ->
    ['understanding-buffers In [1]', ...]."""
    if spec == "-":
        return []
    labels = []
    for part in spec.split(","):
        m = re.fullmatch(r"(In|ExIn|MhaIn|ImplIn|BufIn|ImplSec|Exercise)\[([^\]]+)\]", part)
        if not m:
            raise ValueError(f"{TABLE_PATH}: cannot read the cells {part!r}")
        kind, what = m.groups()
        if kind == "Exercise":
            labels.append(f"Exercise {what}")
            continue
        if kind == "ImplSec":
            if not re.fullmatch(r"\d+\.\d+", what):
                raise ValueError(f"{TABLE_PATH}: ImplSec takes SECTION.PLACE, found {part!r}")
            labels.append(SECTION_PREFIX + what)
            continue
        lo, _, hi = what.partition("-")
        prefix = NOTEBOOKS[kind][1]
        labels += [f"{prefix} [{n}]" for n in range(int(lo), int(hi or lo) + 1)]
    return labels


@dataclass(frozen=True)
class Chapter:
    program: str
    draws: bool
    variants: list
    cells: str    # as the table writes them: "In[25-30]"
    title: str

    @property
    def book_variant(self):
        return self.variants[0]

    @property
    def labels(self):
        """The cells' labels, as the chapter's marker lines print them."""
        return cells_of(self.cells)


def parse(text, path=TABLE_PATH):
    """The chapters of a table's text, in file order."""
    out, seen = [], set()
    for lineno, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        if len(parts) < 5:
            raise ValueError(f"{path}:{lineno}: expected program, draws, variants, cells and a title, "
                             f"found {len(parts)} field(s)")
        program, draws, variants, cells = parts[:4]
        if draws not in ("yes", "no"):
            raise ValueError(f"{path}:{lineno}: draws: expected yes or no, found {draws!r}")
        vs = variants.split(",")
        if any(not v for v in vs) or len(set(vs)) != len(vs):
            raise ValueError(f"{path}:{lineno}: variants: expected distinct names, found {variants!r}")
        if program in seen:
            raise ValueError(f"{path}:{lineno}: program {program!r} listed twice")
        seen.add(program)
        cells_of(cells)  # refuse a cell spec nobody can read
        out.append(Chapter(program, draws == "yes", vs, cells, " ".join(parts[4:])))
    return out


_table = None


def table():
    """Every chapter of chapters/chapters.txt, in its order."""
    global _table
    if _table is None:
        with open(TABLE_PATH, encoding="utf-8") as f:
            _table = parse(f.read())
    return list(_table)


def get(program):
    for c in table():
        if c.program == program:
            return c
    raise KeyError(f"{program!r} is not in {TABLE_PATH}")


def programs():
    return [c.program for c in table()]


def fixture_names():
    """Every (program, variant, file name) of the book fixtures."""
    return [(c.program, v, f"{c.program}.{v}.h5") for c in table() for v in c.variants]


def chapter_of_cell(label):
    """The chapter whose cells include `label` ("In [25]"), or None."""
    return next((c for c in table() if label in c.labels), None)


if __name__ == "__main__":
    for c in table():
        print(f"{c.program:32} {'yes' if c.draws else 'no':5} {','.join(c.variants):34} {c.cells:22} {c.title}")
