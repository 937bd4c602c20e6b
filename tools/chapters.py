"""chapters.py: the chapter list (chapters/chapters.txt), for the tools.

The same table drives the build (chapters/meson.build) and the tests
(tests/meson.build); this module is how the Python tools read it.

    from chapters import read_table, cells_of
    for ch in read_table(): print(ch.program, ch.variants, ch.cells)
"""

import os
import re
from dataclasses import dataclass, field

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(REPO_ROOT, "chapters", "chapters.txt")


@dataclass
class Chapter:
    program: str
    draws: bool
    variants: list
    cells: list = field(default_factory=list)  # labels as the chapters print them: "In [3]", "Exercise 3.2", ...
    title: str = ""

    @property
    def book_variant(self):
        return self.variants[0]


def cells_of(spec):
    """'In[2-14],ExIn[2-7],Exercise[3.2]' -> ['In [2]', ..., 'exercise-solutions In [2]', ..., 'Exercise 3.2']."""
    if spec == "-":
        return []
    labels = []
    for part in spec.split(","):
        m = re.fullmatch(r"(In|ExIn|Exercise)\[([^\]]+)\]", part)
        if not m:
            raise ValueError(f"{TABLE}: cannot read cells {part!r}")
        kind, what = m.groups()
        if kind == "Exercise":
            labels.append(f"Exercise {what}")
            continue
        lo, _, hi = what.partition("-")
        prefix = "In" if kind == "In" else "exercise-solutions In"
        labels += [f"{prefix} [{n}]" for n in range(int(lo), int(hi or lo) + 1)]
    return labels


def read_table(path=TABLE):
    chapters = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split()
            if len(parts) < 5 or parts[1] not in ("yes", "no"):
                raise ValueError(f"{path}: cannot read the line {line.rstrip()!r}")
            chapters.append(Chapter(parts[0], parts[1] == "yes", parts[2].split(","), cells_of(parts[3]),
                                    " ".join(parts[4:])))
    return chapters


def chapter_of_cell(label, table=None):
    """The chapter whose cells include `label`, or None."""
    for ch in table or read_table():
        if label in ch.cells:
            return ch
    return None
