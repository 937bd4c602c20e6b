"""view_sources.py: what the book view reads, parsed: the chapters' C source
cut into cells, the official notebooks' cells, and the chapters' printed output.

Everything here is read at build time from the files themselves, so the view
can never show a block of C or a recorded output that was copied by hand.
The notebook outputs come from tools/cases/extract_book_blocks.py (cell_output,
exercise_outputs), the same functions that write the `book` suite's blocks.
"""

import json
import os
import re
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: the package cases
from cases import extract_book_blocks as ebb  # noqa: E402

# --- the C: one block per marker ---------------------------------------------------------------

# The marker macros of lib/runtime/chapter.h, and the label each prints: a
# statement of its own, on one line or more (a long code text is written as
# adjacent string literals, one a line).
_ARG = r'(?:[^"()]|"(?:[^"\\\n]|\\.)*"|\((?:[^"()]|"(?:[^"\\\n]|\\.)*")*\))*'
MARKER = re.compile(r'^[ \t]*(In|ExIn|MhaIn|ImplIn|ImplSec|BufIn|Exercise|Transcript|Beyond|Setup)\((' + _ARG +
                    r')\);[ \t]*(?://[^\n]*)?$', re.M)
C_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
PRINT_NOTE = re.compile(r'^[ \t]*print_note\((' + _ARG + r')\);[ \t]*(?://[^\n]*)?$', re.M)
C_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}


def c_unescape(s):
    """The text of a C string literal's body (the escapes the chapters use)."""
    return re.sub(r"\\(.)", lambda m: C_ESCAPES.get(m.group(1), m.group(1)), s)


@dataclass
class CBlock:
    """One cell of a chapter's C: its marker and the source up to the next one."""
    kind: str          # In, ExIn, Exercise, Transcript, Beyond, Setup
    label: str         # as the program prints it: "In [25]", "exercise-solutions In [3]", "004 In [6]", "litattn"
    code: str          # the marker's code text: the notebook cell's first line
    line: int          # 1-based line of the marker in the .c file
    first: int         # 1-based first line of the block (comments just above the marker belong to it)
    source: str        # the block's lines, as in the file

    @property
    def note_runs(self):
        """The notes this block prints over several lines: each run of
        print_note statements one after the other, each of one string (a
        sentence the chapter wraps), as [[line, ...], ...]."""
        runs, last_end = [], None
        for m in PRINT_NOTE.finditer(self.source):
            literal = re.fullmatch(r'\s*(?:"(?:[^"\\]|\\.)*"\s*)+', m.group(1))
            text = "".join(c_unescape(x) for x in C_STRING.findall(m.group(1))) if literal else None
            gap = self.source[last_end:m.start()] if last_end is not None else None
            if text is not None and gap is not None and runs and re.fullmatch(r"(?:\s|//[^\n]*)*", gap):
                runs[-1].append(text)
            elif text is not None:
                runs.append([text])
            last_end = m.end() if text is not None else None
        return [r for r in runs if len(r) > 1]

    @property
    def setup(self):
        return self.kind == "Setup"

    @property
    def official(self):
        """The label of the official cell this block computes, or None."""
        return self.label if self.kind in ("In", "ExIn", "MhaIn", "ImplIn", "ImplSec", "BufIn", "Exercise") else None

    @property
    def printed_label(self):
        """The marker line's label as printed: setup cells carry " (setup)"."""
        return self.label + (" (setup)" if self.setup else "")


def marker_label(kind, args):
    """The label lib/runtime/chapter.h prints for a marker macro, from its arguments."""
    first = args.split(",", 1)[0].strip()
    if kind in ("In", "Setup"):
        return f"In [{first}]"
    if kind == "ExIn":
        return f"exercise-solutions In [{first}]"
    if kind == "MhaIn":
        return f"multihead-attention In [{first}]"
    if kind == "ImplIn":
        return f"mha-implementations In [{first}]"
    if kind == "ImplSec":
        return f"mha-implementations \u00a7{first}"
    if kind == "BufIn":
        return f"understanding-buffers In [{first}]"
    strings = [c_unescape(s) for s in C_STRING.findall(args)]
    if kind == "Exercise":
        return f"Exercise {strings[0]}"
    if kind == "Transcript":
        return strings[0]
    return "litattn"  # Beyond


def split_args(args):
    """A macro call's arguments, split at the commas outside strings and parentheses."""
    parts, depth, start = [], 0, 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[(),]', args):
        t = m.group(0)
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
        elif t == "," and depth == 0:
            parts.append(args[start:m.start()])
            start = m.end()
    return parts + [args[start:]]


def brace_depths(lines):
    """The depth of braces at the start of each line, and after the last:
    braces in comments, string and character literals do not count."""
    depths, depth, comment = [], 0, False
    for line in lines:
        depths.append(depth)
        i = 0
        while i < len(line):
            if comment:
                j = line.find("*/", i)
                comment, i = (j < 0), (len(line) if j < 0 else j + 2)
                continue
            c = line[i]
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                comment, i = True, i + 2
                continue
            if c in "\"'":
                i += 1
                while i < len(line) and line[i] != c:
                    i += 2 if line[i] == "\\" else 1
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            i += 1
    return depths + [depth]


def c_blocks(path):
    """[CBlock] of a chapter source, in source order.

    A block runs from its marker to the next marker, or to `return
    chapter_end();`. Comment lines directly above a marker (no blank line
    between) introduce that marker's cell, so they go with it, not with the
    block before; blank lines at either end are dropped.

    A block never ends inside braces it opened. Where the next marker sits
    in a compound statement the block opened, the cut moves: up to the line
    that opens it, when nothing but comments stands between that line and
    the marker (the compound is the next cell's: `if (ran) {` before a
    Beyond); else the marker's cell is nested in the block, which runs on
    to the compound's closing brace, and the nested cell's block is its
    lines up to that brace (the same lines then show in both)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    end = next((i for i, t in enumerate(lines) if "return chapter_end();" in t), len(lines))
    markers = []
    for m in MARKER.finditer(text):
        i = text.count("\n", 0, m.start())
        if i >= end:
            continue
        args = split_args(m.group(2))
        code = "".join(c_unescape(x) for x in C_STRING.findall(args[-1])) if len(args) > 1 or m.group(1) == "Beyond" else ""
        markers.append((i, m.group(1), marker_label(m.group(1), m.group(2)), code))
    depth = brace_depths(lines)

    def lead(i):
        """Line i with the comment lines directly above it."""
        while i > 0 and lines[i - 1].strip().startswith("//"):
            i -= 1
        return i

    def closing(i, base):
        """The line whose braces bring the depth from above `base` back to it, at or after line i."""
        j = i
        while j < len(lines) and depth[j + 1] > base:
            j += 1
        return j

    spans, k = [], 0  # [start, stop) of each marker's block
    starts = [lead(i) for i, *_ in markers]
    while k < len(markers):
        start, base = starts[k], depth[starts[k]]
        j = k + 1
        while j < len(markers) and depth[starts[j]] > base:
            # The next marker sits in braces this block opened: the outermost one's line.
            o = max(x for x in range(start, starts[j]) if depth[x] <= base < depth[x + 1])
            between = [t.strip() for t in lines[o + 1:starts[j]]]
            if all(not t or t.startswith("//") for t in between) and depth[o] == base:
                starts[j] = lead(o)  # the compound is the next cell's
                break
            # Nested: its block ends at the compound's closing brace (or at a marker before it).
            close = closing(o, base)
            inner_end = min([close] + [starts[n] for n in range(j + 1, len(markers))])
            spans.append((j, starts[j], inner_end))
            j += 1
            while j < len(markers) and starts[j] <= close:  # markers nested deeper: their own blocks
                spans.append((j, starts[j], min([closing(starts[j], depth[starts[j]] - 1)] +
                                                 [starts[n] for n in range(j + 1, len(markers))])))
                j += 1
        stop = starts[j] if j < len(markers) else end
        spans.append((k, start, stop))
        k = j
    blocks = []
    for k, first, stop in sorted(spans):
        i, kind, label, code = markers[k]
        body = lines[first:stop]
        while body and not body[-1].strip():
            body.pop()
        blocks.append(CBlock(kind, label, code, i + 1, first + 1, "\n".join(body)))
    return blocks


# --- the program's output: one block per marker line ---------------------------------------------

OUT_MARKER = re.compile(r"^>>> (.*?)(?: \(setup\))?: (.*)$")


@dataclass
class OutCell:
    label: str
    setup: bool
    code: str
    text: str = ""                              # what the cell printed, up to the next marker line
    notes: list = field(default_factory=list)   # the chapter's notes about the run ("# d_out = 16 here; ...")


def output_cells(stdout):
    """[OutCell] of a chapter's stdout, in order. A cell's text is everything
    after its marker line up to the next line starting with ">>> ", less the
    lines starting "# " (the chapter's notes about a variant, which no
    notebook output line resembles), as tests/book_check.c cuts it."""
    cells = []
    for line in stdout.splitlines(keepends=True):
        if line.startswith(">>> "):
            head = line.rstrip("\n")
            m = OUT_MARKER.match(head)
            label, code = (m.group(1), m.group(2)) if m else (head[4:], "")
            cells.append(OutCell(label, head.startswith(f">>> {label} (setup): "), code))
        elif cells and line.startswith("# "):
            cells[-1].notes.append(line.rstrip("\n"))
        elif cells:
            cells[-1].text += line
    return cells


def note_paragraphs(lines, runs):
    """The notes a cell printed ("# ..." lines), one string each: the lines
    of a note the chapter wraps over several print_note calls (`runs`,
    CBlock.note_runs) joined into one, with one "# " at its start."""
    notes, i = [], 0
    while i < len(lines):
        run = next((r for r in runs if lines[i:i + len(r)] == r), None)
        if run:
            notes.append(" ".join([run[0]] + [x[2:] if x.startswith("# ") else x for x in run[1:]]))
            i += len(run)
        else:
            notes.append(lines[i])
            i += 1
    return notes


# --- the official notebooks ---------------------------------------------------------------------

@dataclass
class BookCell:
    """One cell of an official notebook, as the view needs it."""
    notebook: str        # "ch03.ipynb" or "exercise-solutions.ipynb"
    label: str           # "In [25]", "exercise-solutions In [3]", "Exercise 3.2"
    number: object       # the execution count, or the exercise's number ("3.2")
    code: str            # the cell's source (for an exercise given as text: its ```python block)
    output: str          # what the notebook recorded ("" when nothing)
    index: int           # position among the notebook's cells
    prose: list = field(default_factory=list)  # the markdown cells since the previous code cell
    compared: str = None  # the text compared with litattn's, when not `output`: a GPU cell as it prints
                          # on a CPU (extract_book_blocks.ON_CPU, RAISED_ON_GPU)
    recorded_on: str = None  # with `compared`: the device the notebook recorded `output` on ("cuda:0")
    images: list = field(default_factory=list)  # the PNGs the cell recorded (base64, as in the notebook)

    @property
    def expected(self):
        return self.output if self.compared is None else self.compared

    @property
    def first_line(self):
        return self.code.split("\n", 1)[0]


def read_notebook(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def notebook_cells(nb, name):
    """[BookCell] of a notebook: every code cell (In [1] included), and the
    exercises given as markdown only (their code is the ```python block
    after the "## Exercise" heading, their output extract_book_blocks's)."""
    labels = ebb.code_cell_labels(nb["cells"], name)
    compared = ebb.compared_outputs(name, nb["cells"], labels)
    exercise_out = ebb.exercise_outputs(nb["cells"])
    device = recording_device(nb["cells"])
    cells, prose, exercise = [], [], None
    for i, cell in enumerate(nb["cells"]):
        text = "".join(cell["source"])
        if cell["cell_type"] == "code":
            n = cell.get("execution_count")
            recorded = ebb.cell_output(cell)
            rewritten = compared[labels[i]] != recorded
            cells.append(BookCell(name, labels[i], n, text, recorded, i, prose,
                                  compared[labels[i]] if rewritten else None, device if rewritten else None,
                                  ["".join(o["data"]["image/png"]) for o in cell.get("outputs", [])
                                   if "image/png" in o.get("data", {})]))
            prose = []
            continue
        if cell["cell_type"] != "markdown":
            continue
        m = re.search(r"^## Exercise (\d+\.\d+)", text, re.M)
        if m:
            exercise = m.group(1)
        fence = re.fullmatch(r"```python\n(.*?)```\s*", text, re.S)
        label = f"Exercise {exercise}" if exercise else None
        if fence and label in exercise_out and not any(c.label == label for c in cells):
            # The exercise's code, given as markdown: its first python block.
            cells.append(BookCell(name, label, exercise, fence.group(1).rstrip("\n"), exercise_out[label], i, prose))
            prose = []
            continue
        prose.append(text)
    return cells


def recording_device(cells):
    """The GPU a notebook's outputs were recorded on, as they name it
    ("cuda:0"; "cuda" where no output gives its index), or "a GPU"."""
    text = "".join(ebb.cell_output(c) + "".join(o.get("evalue", "") for o in c.get("outputs", []))
                   for c in cells if c["cell_type"] == "code")
    m = re.search(r"\bcuda:\d+\b", text) or re.search(r"\bcuda\b", text)
    return m.group(0) if m else "a GPU"


def official_notebooks(book_dir):
    """{notebook name: (the notebook as JSON, [BookCell])} of the official notebooks."""
    official = os.path.join(book_dir, "official")
    result = {}
    for name in ebb.OFFICIAL:
        nb = read_notebook(os.path.join(official, name))
        result[name] = (nb, notebook_cells(nb, name))
    return result


# --- GPT-2's tokens, as labels -------------------------------------------------------------------

GPT2_RANKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "fixtures", "gpt2", "gpt2.tiktoken")
_gpt2 = None


def gpt2_token_labels(ids):
    """The text of each GPT-2 token id, as a heatmap label: its bytes from
    fixtures/gpt2/gpt2.tiktoken (tiktoken's rank file; 50256 is
    <|endoftext|>) as UTF-8, a byte that ends no character shown as U+FFFD;
    a leading space as '␣', a newline as '\\n'."""
    global _gpt2
    if _gpt2 is None:
        import base64
        _gpt2 = {}
        with open(GPT2_RANKS, "rb") as f:
            for line in f:
                tok, rank = line.split()
                _gpt2[int(rank)] = base64.b64decode(tok)
        _gpt2[50256] = b"<|endoftext|>"
    out = []
    for i in ids:
        text = _gpt2.get(i, b"?").decode("utf-8", errors="replace")
        out.append(text.replace("\n", "\\n").replace(" ", "\u2423", 1) if text.startswith(" ") else
                   text.replace("\n", "\\n"))
    return out


# --- the book's tokens --------------------------------------------------------------------------

TOKEN_ROW = re.compile(r"\[\s*([-\d.]+)\s*,\s*([-\d.]+)\s*,\s*([-\d.]+)\s*\][\]),\s]*#\s*(\S+)")


def book_tokens(cells):
    """(rows, tokens) of the book's `inputs` as In [2] writes it: each row
    of numbers with the word in its comment ("# Your     (x^1)"). The view
    labels a heatmap's axes with the words only where a chapter's `inputs`
    are these numbers."""
    for c in cells:
        if c.label == "In [2]":
            found = TOKEN_ROW.findall(c.code)
            return [[float(x) for x in row[:3]] for row in found], [row[3] for row in found]
    return [], []


# --- the book suite's blocks ----------------------------------------------------------------------

@dataclass
class SuiteBlock:
    source: str   # "ch03.ipynb", "004_e8e336bf22e41ef3.txt:68"
    cell: str     # "In [25]", "In [9]", "-"
    text: str

    @property
    def official(self):
        return self.source.endswith(".ipynb")


def suite_blocks(path):
    """[SuiteBlock] of a tests/book file, split as tests/book_check.c splits it."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = []
    parts = re.split(r"\n(?=# )", text)
    for k, part in enumerate(parts):
        if part.startswith("#!") or not part.startswith("# "):
            continue
        header, _, body = part.partition("\n")
        source, _, cell = header[2:].partition(" ")
        if k + 1 < len(parts):
            body += "\n"  # the newline the split took (the last block keeps the file's own)
        if not source.endswith(".ipynb"):
            body = body.rstrip("\n")  # a transcript's tensor: looked for, not compared whole
        blocks.append(SuiteBlock(source, cell, body))
    return blocks


def transcript_cells(book_dir):
    """{prefix ("004"): (file name, {cell ("In [10]"): blocks})} of the
    transcripts beside the notebooks: how many blocks the book suite takes
    from each cell (extract_book_blocks.transcript_blocks)."""
    found = {}
    for name in sorted(os.listdir(book_dir)):
        if re.match(r"\d+_.*\.txt$", name):
            counts = {}
            for _, cell, _ in ebb.transcript_blocks(os.path.join(book_dir, name)):
                counts[cell or "-"] = counts.get(cell or "-", 0) + 1
            found[name.split("_")[0]] = (name, counts)
    return found


GRAD_FN = re.compile(r",\s*grad_fn=<[^>]*>")


def without_grad_fn(text):
    return GRAD_FN.sub("", text)


# --- which cell computed which tensor ----------------------------------------------------------

KEEP_IDENT = re.compile(r"\bKEEP(?:_LOCAL)?\((?:[^,()]*,\s*)?(\w+)\)")
BINDING = re.compile(r"\b(\w+)\s*=\s*\w+\(\s*\"([^\"]+)\"")
FORWARD = re.compile(r"\b\w+_forward\(\s*&(\w+)\s*,")
# loss = m(x).sum(); loss.backward(): the forward again, then the gradients.
BACKWARD = re.compile(r"\b\w+_sum_backward\(\s*&(\w+)\s*,")
KEEP_GRADS = re.compile(r"\bkeep_grads\([^,()]*,\s*\"([^\"]+)\"\)")
NOISE = re.compile(r"(?:^|\.)noise(?:\.(\d+))?$")


def code_only(source):
    """The block's code without its marker statements and its comments: the
    strings left are the names the C uses, not the notebook's code text."""
    kept = []
    for line in MARKER.sub("", source).split("\n"):
        kept.append(re.sub(r'("(?:[^"\\]|\\.)*")|//.*', lambda m: m.group(1) or "", line))
    return "\n".join(kept)


def tensor_cells(blocks, roles):
    """{dataset name: index of the block that computed it} for the names of
    a dump ({name: role}), read from the C itself:

    - a name the block keeps or draws by name (`KEEP(keys)`, `keep("a @
      a.transpose(2, 3)", ...)`, `draw_rand("exercise_3_3.x", ...)`): the
      last such block, since a name kept again replaces the earlier value;
    - a module's tensors, "<module>.<...>", where `var = ctor("<module>",
      ...)` made the module: its parameters (role weight) belong to that
      block; what its forward computes to the last block that calls
      `..._forward(&var, ...)`, except a dropout mask `noise.<k>`, which
      is the k-th call's (the dump's names for the k-th mask a Dropout draws),
      counting the forward that `..._sum_backward(&var, ...)` runs again;
    - a gradient, "<module>.<key>.grad", to the block that calls
      `..._sum_backward(&var, ...)`; "<input>.grad" to the block that keeps
      the gradients with `keep_grads(&grads, "<input>")`.
    Names none of this explains are left out (the page lists them apart)."""
    literal, made, forwards, bound, backwards, calls_all = {}, {}, {}, {}, {}, {}
    for k, b in enumerate(blocks):
        code = code_only(b.source)
        for s in C_STRING.findall(code):
            literal[c_unescape(s)] = k
        for ident in KEEP_IDENT.findall(code):
            literal[ident] = k
        for var, module in BINDING.findall(code):
            bound[var] = module
            made.setdefault(module, k)
        for var in FORWARD.findall(code):
            forwards.setdefault(var, []).append(k)
            calls_all.setdefault(var, []).append(k)
        for var in BACKWARD.findall(code):
            backwards[var] = k
            calls_all.setdefault(var, []).append(k)
        for name in KEEP_GRADS.findall(code):
            literal[name + ".grad"] = k
    by_module, all_by_module, backward_of = {}, {}, {}
    for var, module in bound.items():
        by_module.setdefault(module, []).extend(forwards.get(var, []))
        all_by_module.setdefault(module, []).extend(calls_all.get(var, []))
        if var in backwards:
            backward_of[module] = backwards[var]
    # A name made with snprintf ("variance_before_%d") matches as a pattern.
    patterns = [(re.compile(re.escape(s).replace("%d", r"-?\d+").replace("%s", ".*") + "$"), k)
                for s, k in literal.items() if "%d" in s or "%s" in s]
    found = {}
    for name, role in roles.items():
        if name in literal:
            found[name] = literal[name]
            continue
        matched = [k for p, k in patterns if p.match(name)]
        if matched:
            found[name] = matched[-1]
            continue
        modules = [m for m in made if name.startswith(m + ".")]
        if not modules:
            continue
        module = max(modules, key=len)
        calls = sorted(by_module.get(module, []))
        if role == "weight" or not calls:
            found[name] = made[module]
            continue
        if name.endswith(".grad") and module in backward_of:
            found[name] = backward_of[module]
            continue
        m = NOISE.search(name[len(module) + 1:])
        if m:
            calls = sorted(all_by_module.get(module, [])) or calls
        k = int(m.group(1) or 1) if m else len(calls)
        found[name] = calls[min(k, len(calls)) - 1]
    return found
