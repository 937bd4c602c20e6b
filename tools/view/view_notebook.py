"""view_notebook.py: the companion notebook, ch03_litattn.ipynb.

It mirrors ch03.ipynb cell by cell: the book's markdown as it is, and in
place of each code cell the C block that computes it, with the C program's
output as the cell's output and the book's execution count, preceded by a
short markdown cell naming the chapter, the line and the verdict. The
exercises follow, the same way. It is a document (there is no C kernel):
Jupyter, VS Code and GitHub's viewer show it as saved.
"""

import textwrap

import nbformat
from nbformat import v4


def note_cell(cell, page, row, chapter, counterpart=None):
    if row is None or row.block is None:
        if counterpart and not chapter:  # view_counterparts.py: a counterpart, or why there is none
            return (f"**{cell.label}**: no chapter prints it. " +
                    (counterpart[0].upper() + counterpart[1:] if counterpart.startswith("not in litattn")
                     else "litattn's counterpart: " + counterpart) + ".")
        return (f"**{cell.label}**: not in litattn. " +
                ("The chapter table gives it to `" + chapter.program + "`, whose C has no block for it."
                 if chapter else "No chapter computes it."))
    where = f"`chapters/{chapter.program}.c`, line {row.block.line}"
    link = f"[{page.file}#{row.anchor}]({page.file}#{row.anchor})"
    return f"**{cell.label}** · {where} · variant `{page.variant}` · litattn's output: **{row.verdict}** · {link}"


def companion(notebooks, pages_by_label, counterparts=None):
    """The companion notebook (an nbformat NotebookNode).

    notebooks: {name: (notebook JSON, [BookCell])}; pages_by_label: {official
    label: (chapter, page, row)} for the variant whose output the book's is
    compared with; counterparts: {label: one line} of the cells no chapter
    prints (view_counterparts.py)."""
    cells = [v4.new_markdown_cell(
        "# Chapter 3, in C: litattn beside `ch03.ipynb`\n\n"
        "This notebook mirrors the book's `ch03.ipynb` (and then `exercise-solutions.ipynb`) cell by cell. "
        "The markdown is the book's. Each code cell holds the block of C that computes the book's cell, taken "
        "from `chapters/*.c` when the view was built, and its output is what the C program printed. The markdown "
        "cell before it names the chapter, the line, and whether the output is identical to the book's.\n\n"
        "It is a document: there is no C kernel. Rebuild it with `ninja -C build book-view`.")]
    for name, (nb, book_cells) in notebooks.items():
        if name != "ch03.ipynb":
            cells.append(v4.new_markdown_cell(f"---\n\n# `{name}`"))
        by_index = {c.index: c for c in book_cells}
        for i, src in enumerate(nb["cells"]):
            text = "".join(src["source"])
            book = by_index.get(i)
            if src["cell_type"] == "markdown":
                cells.append(v4.new_markdown_cell(text))
                if book is None:
                    continue  # an exercise given as markdown: its C follows its code block
            elif book is None:
                continue
            chapter, page, row = pages_by_label.get(book.label, (None, None, None))
            cells.append(v4.new_markdown_cell(note_cell(book, page, row, chapter, (counterparts or {}).get(book.label))))
            if row is None or row.block is None:
                if src["cell_type"] == "code":
                    cells.append(v4.new_markdown_cell("```python\n" + text + "\n```"))
                continue
            outputs = [v4.new_output("stream", name="stdout", text=row.c_text)] if row.c_text else []
            count = book.number if isinstance(book.number, int) else None
            cells.append(v4.new_code_cell(textwrap.dedent(row.block.source), execution_count=count, outputs=outputs))
    for k, cell in enumerate(cells):
        cell["id"] = f"litattn-{k:03d}"  # the same ids on every build
    nb = v4.new_notebook(cells=cells, metadata={
        "language_info": {"name": "c", "file_extension": ".c", "mimetype": "text/x-csrc"},
        "litattn": {"mirrors": "ch03.ipynb, exercise-solutions.ipynb", "made_by": "tools/view/book_view.py"},
    })
    nbformat.validate(nb)
    return nb


def write(nb, path):
    with open(path, "w", encoding="utf-8") as f:
        nbformat.write(nb, f)
