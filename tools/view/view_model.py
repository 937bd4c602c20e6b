"""view_model.py: what each page of the book view says, before any HTML.

A page is one chapter on one variant. Its rows follow the chapter's cells
in the order the program prints them (which is the notebook's order), with
the official cells the chapter should have and lacks put where the notebook
has them. Each row pairs the book's side (the notebook cell, or the
transcript blocks the variant reproduces) with litattn's (the C block and
what it printed), and has a verdict.
"""

import re
from dataclasses import dataclass, field

import numpy as np

from cases import extract_book_blocks as ebb
import view_runs as vr
import view_sources as vs

# Verdicts, as the pages and view.json spell them.
IDENTICAL = "identical"
DIFFERS = "differs"
NO_OUTPUT = "no printed output"
NOT_IN_LITATTN = "not in litattn"
LITATTN_ONLY = "litattn only"
NOT_RUN = "not run"
NO_MARKER = "no marker in the output"
OTHER_VARIANT = "compared on another variant"
SETUP = "setup"
COUNTERPART = "litattn counterpart"  # a cell no chapter prints, with its counterpart (view_counterparts.py)
NOT_COMPARED = "not compared"  # a block no chapter prints (extract_book_blocks.NOT_PRINTED: a run's own)
ON_CPU = " on the CPU (recorded on {})"  # after IDENTICAL or DIFFERS: compared with a GPU's output rewritten for the CPU


def plain_verdict(verdict):
    """IDENTICAL or DIFFERS without what they were compared on ("identical on
    the CPU (recorded on cuda:0)" is IDENTICAL): for colours and tallies."""
    return verdict.split(" on the CPU (recorded on ")[0]


@dataclass
class Row:
    kind: str                       # official, missing, transcript, beyond, setup
    label: str                      # "In [25]", "004 In [6]", "litattn", ...
    anchor: str
    book: object = None             # vs.BookCell
    block: object = None            # vs.CBlock
    c_text: str = None              # what the cell printed (None: the program did not print this cell)
    notes: list = field(default_factory=list)        # the chapter's notes about the variant, set aside
    verdict: str = ""
    reason: str = ""                # why a cell is not compared (NOT_COMPARED), in a sentence
    reason_at: str = ""             # where it is compared instead ("page.html#anchor"), or ""
    owner: str = ""                 # the variant whose output the book's is compared with
    transcript: list = field(default_factory=list)   # [(vs.SuiteBlock, found)]
    tensors: list = field(default_factory=list)      # [(name, entry)]
    figures: list = field(default_factory=list)      # [figure spec]
    headings: list = field(default_factory=list)     # the notebook's section headings before this cell

    @property
    def worst_ulp(self):
        compared = [e["worst_ulp"] for _, e in self.tensors if e["verdict"] in ("identical", "differs")]
        return max(compared) if compared else None


@dataclass
class Page:
    chapter: object                 # chapters.Chapter
    variant: str
    run: dict
    blocks: list
    rows: list
    file: str
    loose_transcript: list = field(default_factory=list)  # blocks found in no single cell: [(block, found)]
    other_tensors: list = field(default_factory=list)     # tensors no cell explains
    no_heatmaps: str = ""           # why the page draws no heatmap, or "" (it draws one)

    @property
    def book_variant(self):
        return self.variant == self.chapter.book_variant

    @property
    def ran(self):
        return self.run.get("exit") == 0


def page_file(program, variant, book_variant):
    return f"{program}.html" if variant == book_variant else f"{program}.{variant}.html"


def anchor_of(label, setup=False, seen=None):
    a = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") + ("-setup" if setup else "")
    if seen is not None:
        base, k = a, 2
        while a in seen:
            a, k = f"{base}-{k}", k + 1
        seen.add(a)
    return a


def headings_of(prose):
    """The notebook's section headings in the markdown before a cell
    ("## 3.5 Hiding future words ...", "## Exercise 3.2"): (level, text)."""
    found = []
    for text in prose:
        for m in re.finditer(r"^(#{2,4})\s+(.+)$", text, re.M):
            found.append((len(m.group(1)), m.group(2).replace("&nbsp;", "").strip()))
    # Only the headings this cell sits under: the last of each level, outermost
    # first (not 3.1 and 3.2, which have no code, before 3.3's first cell).
    kept, level = [], 99
    for lvl, text in reversed(found):
        if lvl < level:
            kept.append((lvl, text))
            level = lvl
    return kept[::-1]


def owner_variant(chapter, book_cell):
    """The variant whose output the notebook's recorded output belongs to
    (Exercise 3.2's stale output: extract_book_blocks.STALE)."""
    return ebb.STALE.get((book_cell.notebook, book_cell.label), chapter.book_variant)


def build_page(chapter, variant, run, blocks, book_cells, suite, tokens, book_arrays=(), transcripts=None):
    """The Page of one chapter on one variant.

    book_cells: {label: BookCell} of both notebooks; suite: the variant's
    blocks in tests/book; tokens: (rows, words) of the book's inputs;
    transcripts: what each transcript's cells print (view_sources.transcript_cells)."""
    out_cells = vs.output_cells(run.get("stdout", "")) if run.get("stdout") else []
    ran = run.get("exit") == 0
    roles = {n: e["role"] for n, e in run.get("tensors", {}).items()}
    cell_of = vs.tensor_cells(blocks, roles)
    words = tokens[1] if inputs_are_books(run.get("inputs"), tokens[0]) else None
    if run.get("first_ids"):  # the data-loading chapter: the first batch item's tokens, decoded
        words = vs.gpt2_token_labels(run["first_ids"])

    # Match each block to its printed cell: the k-th marker with its label.
    taken, rows, seen = set(), [], set()
    for k, b in enumerate(blocks):
        printed = next((i for i, c in enumerate(out_cells)
                        if i not in taken and c.label == b.label and c.setup == b.setup), None)
        if printed is not None:
            taken.add(printed)
        kind = "setup" if b.setup else "official" if b.official else b.kind.lower()
        row = Row(kind, b.label, anchor_of(b.label, b.setup, seen), block=b,
                  c_text=out_cells[printed].text if printed is not None else None,
                  notes=out_cells[printed].notes if printed is not None else [])
        row.book = book_cells.get(b.label) if b.official or b.setup else None
        row.tensors = sorted((n, run["tensors"][n]) for n, i in cell_of.items() if i == k)
        rows.append(row)

    # Official cells the chapter table gives this chapter and its C lacks.
    present = {r.label for r in rows if r.kind == "official"}
    for label in chapter.labels:
        if label in present:
            continue
        cell = book_cells.get(label)
        row = Row("missing", label, anchor_of(label, False, seen), book=cell)
        after = max((i for i, r in enumerate(rows) if r.kind == "official" and r.book and cell
                     and r.book.notebook == cell.notebook and r.book.index < cell.index), default=-1)
        rows.insert(after + 1, row)

    for row in rows:
        decide(row, chapter, variant, run, ran)
        if row.book and row.kind in ("official", "missing"):
            row.headings = headings_of(row.book.prose)
        if row.kind != "setup":
            arrays = run.get("arrays", {})
            if variant != chapter.book_variant:
                # Another variant draws only what the book's does not have (the
                # dropout masks of gpt2_dropout): the same heatmap for other
                # numbers would only lengthen its page.
                arrays = {n: a for n, a in arrays.items() if n not in book_arrays}
            row.figures = figure_specs(row.tensors, arrays, words)

    page = Page(chapter, variant, run, blocks, rows, page_file(chapter.program, variant, chapter.book_variant))
    if not any(r.figures for r in rows):
        page.no_heatmaps = no_heatmaps_reason(chapter, variant, run, book_arrays)
    place_transcript_blocks(page, out_cells, suite, transcripts)
    explained = set(cell_of)
    page.other_tensors = sorted((n, e) for n, e in run.get("tensors", {}).items() if n not in explained)
    return page


def no_heatmaps_reason(chapter, variant, run, book_arrays):
    """Why a page draws no heatmap, in a sentence."""
    if run.get("exit") != 0:
        return "No heatmaps: the chapter did not run on this variant, so there is nothing to draw."
    arrays = set(run.get("arrays", {}))
    if variant != chapter.book_variant and arrays and arrays <= set(book_arrays):
        return (f"No heatmaps on this page: the {len(arrays)} tensors a heatmap would show have the same names on "
                "the book's variant, whose page draws them. A variant draws only the tensors the book's variant lacks "
                "(the dropout masks of gpt2_dropout): the same heatmaps over other numbers would only lengthen the page.")
    if not arrays:
        return ("No heatmaps: this chapter keeps no attention scores, weights, masks or dropout masks, the tensors "
                "a heatmap shows. Its tensors are compared with PyTorch's, cell by cell.")
    return (f"No heatmaps: the {len(arrays)} tensors a heatmap shows belong to no cell of the C "
            "(they are listed under Other tensors of the dump).")


def decide(row, chapter, variant, run, ran):
    """The row's verdict: the book's recorded output against the C's."""
    if row.kind == "setup":
        row.verdict = SETUP
        return
    if row.kind == "missing":
        row.verdict = NOT_IN_LITATTN
        return
    if row.kind in ("transcript", "beyond"):
        row.verdict = LITATTN_ONLY if row.kind == "beyond" else (NOT_RUN if not ran else "")
        return
    if row.book is None:
        row.verdict = NOT_IN_LITATTN  # a marker for a cell the notebook does not have
        return
    row.owner = owner_variant(chapter, row.book)
    if (row.book.notebook, row.label) in ebb.NOT_PRINTED:
        row.verdict = NOT_COMPARED
        row.reason = f"Not compared with the notebook's output: {ebb.NOT_PRINTED[(row.book.notebook, row.label)]}."
    elif variant != row.owner:
        row.verdict = OTHER_VARIANT
    elif not ran:
        row.verdict = NOT_RUN
    elif row.c_text is None:
        row.verdict = NO_MARKER
    else:
        if row.book.expected == row.c_text:
            row.verdict = IDENTICAL if row.c_text else NO_OUTPUT
        else:
            row.verdict = DIFFERS
        if row.book.compared is not None and row.verdict in (IDENTICAL, DIFFERS):
            row.verdict += ON_CPU.format(row.book.recorded_on)  # what it was compared with, in the verdict


def place_transcript_blocks(page, out_cells, suite, transcripts=None):
    """Puts each transcript block of the variant (tests/book) beside the
    chapter's cell for the transcript's cell ("004 In [10]") when its output
    holds the block, else beside the first cell whose output holds it,
    grad_fn suffixes aside (as the book suite looks for it in the whole
    output). A transcript's cell left with no block gets its reason
    (transcript_reason)."""
    whole = vs.without_grad_fn("".join(c.text for c in out_cells))
    plain = [vs.without_grad_fn(c.text) for c in out_cells]
    by_label = {}
    for row in page.rows:
        if row.c_text is not None and row.block is not None:
            by_label.setdefault(row.block.printed_label, row)
    for block in suite:
        if block.official:
            continue
        text = vs.without_grad_fn(block.text)
        found = bool(out_cells) and text in whole
        own = by_label.get(f"{block.source.split('_')[0]} {block.cell}")
        row = own if own is not None and text in vs.without_grad_fn(own.c_text) else None
        at = next((i for i, p in enumerate(plain) if text in p), None)
        if row is None and at is not None:
            c = out_cells[at]
            row = by_label.get(c.label + (" (setup)" if c.setup else ""))
        if row is not None:
            row.transcript.append((block, found))
        else:
            page.loose_transcript.append((block, found))
    for row in page.rows:
        if row.kind == "transcript" and page.ran:
            row.verdict = "transcript blocks found" if row.transcript and all(f for _, f in row.transcript) \
                else NOT_COMPARED if not row.transcript else "transcript block not found"
            if row.verdict == NOT_COMPARED:
                row.reason, row.reason_at = transcript_reason(row, page, transcripts or {})


def transcript_reason(row, page, transcripts):
    """(why, where or "") a transcript's cell has no block to compare on this
    page: the cell prints nothing the book suite takes from a transcript, or
    its blocks belong to another variant (extract_book_blocks.TRANSCRIPTS),
    or were found in another cell's output. transcripts: {prefix: (file
    name, {cell: blocks})} (view_sources.transcript_cells)."""
    prefix, _, cell = row.label.partition(" ")
    name, counts = transcripts.get(prefix, (None, {}))
    if name is None:
        return f"Transcript {prefix} is not beside the notebooks.", ""
    n = counts.get(cell, 0)
    if not n:
        return (f"Transcript {prefix} ({name}) prints no tensor(...) or torch.Size([...]) in its {cell}: the "
                "book suite takes only those from a transcript.", "")
    owner = ebb.TRANSCRIPTS.get((prefix, cell)) or ebb.TRANSCRIPTS.get((prefix, "*"))
    has = f"Transcript {prefix}'s {cell} prints {n} block{'s' * (n > 1)}, which {'belong' if n > 1 else 'belongs'}"
    if owner is None:
        return f"{has} to no chapter.", ""
    program, variant = owner
    if (program, variant) != (page.chapter.program, page.variant):
        book = chapter_table_get(program).book_variant
        return (f"{has} to the {variant} variant" + (" (the book's)" if variant == book else "")
                + f" of {program}, and {'are' if n > 1 else 'is'} compared there.",
                f"{page_file(program, variant, book)}#{anchor_of(row.label)}")
    return f"{has} to this page, and {'are' if n > 1 else 'is'} found in another cell's output.", ""


def chapter_table_get(program):
    from export.chapters import get
    return get(program)


def inputs_are_books(inputs, book_rows):
    """Whether the chapter ran on the book's sentence: its `inputs` are the
    numbers In [2] writes (as float32), so the words label the heatmaps."""
    if not inputs or not book_rows:
        return False
    a, b = np.asarray(inputs, dtype=np.float32), np.asarray(book_rows, dtype=np.float32)
    return a.shape == b.shape and bool((a == b).all())


# --- figures ------------------------------------------------------------------------------------

ORDER = ["attn_scores", "mask_simple", "masked_simple", "masked_simple_norm", "mask", "masked", "attn_weights",
         "dropout(", "noise"]


def figure_order(name):
    tail = name.split(".")[-1] if not name.startswith("dropout(") else name
    for i, key in enumerate(ORDER):
        if tail.startswith(key) or re.fullmatch(r"noise(\.\d+)?|\d+", tail) and key == "noise":
            return i, name
    return len(ORDER), name


def figure_specs(tensors, arrays, words, beside=False):
    """The heatmaps of a row: one per tensor worth one, and one per module
    whose heads are separate tensors (mha.heads.0.attn_weights, .1. ...).
    A parameter is drawn only beside its gradient (beside=True)."""
    groups = {}
    for name, _ in sorted(tensors, key=lambda t: figure_order(t[0])):
        if name in arrays and (beside or name + ".grad" not in arrays):
            groups.setdefault(re.sub(r"\.heads\.\d+\.", ".heads.*.", name), []).append(name)
    specs = []
    for key, names in groups.items():
        if key.endswith(".grad") and key[:-len(".grad")] in arrays:
            # A parameter's gradient, beside the parameter: its own figure first.
            specs += figure_specs([(key[:-len(".grad")], None)], arrays, words, beside=True)
        entries = [arrays[n] for n in names]
        e = entries[0]
        shape = vr.shape_text(e["shape"])
        values = np.concatenate([vr.array_values(x) for x in entries]) if len(entries) > 1 else vr.array_values(e)
        panel_titles = None
        if len(entries) > 1:
            title = f"{key}: {len(entries)} heads, batch item 0, each {shape}"
            panel_titles = ["head " + re.search(r"\.heads\.(\d+)\.", n).group(1) for n in names]
        elif e["panels"]:
            title = f"{key} {shape}: batch item 0, one panel per head"
            panel_titles = [f"head {i}" for i in range(values.shape[0])]
            if e["shape"][-3] > values.shape[0]:
                title += f" (the first {values.shape[0]} of {e['shape'][-3]})"
        elif e["batch_item"]:
            title = f"{key}[0] of {shape}"
        else:
            title = f"{key} {shape}"
        # A parameter or a gradient is no matrix of queries and keys.
        gradient_like = key.endswith(".grad") or key + ".grad" in arrays
        if e["cropped"]:
            title += f"; the first {values.shape[-2]} x {values.shape[-1]} {'entries' if gradient_like else 'tokens'}"
        tail = key.split(".")[-1]
        attention_like = not ("example" in key or re.fullmatch(r"noise(\.\d+)?|\d+", tail) or ".noise" in key
                              or gradient_like)
        labelled = words if attention_like and not e["cropped"] else None
        rows, cols = values.shape[-2], values.shape[-1]
        specs.append({
            "name": key, "title": title, "values": values, "panel_titles": panel_titles,
            "row_labels": labelled if labelled and rows == len(labelled) else None,
            "col_labels": labelled if labelled and cols == len(labelled) else None,
            "row_axis": "query" if attention_like and rows > 1 else "row",
            "col_axis": "key" if attention_like else "column",
            "binary": tail in ("mask", "mask_simple"),
            "shape": e["shape"], "cropped": e["cropped"],
        })
    return specs
