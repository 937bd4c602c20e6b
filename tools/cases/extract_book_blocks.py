#!/usr/bin/python3
"""Extract what the book's notebooks print, for the `book` suite.

    /usr/bin/python3 tools/cases/extract_book_blocks.py [BOOK_DIR]          # write tests/book/
    /usr/bin/python3 tools/cases/extract_book_blocks.py --check [BOOK_DIR]  # compare, exit 1 on a difference

BOOK_DIR defaults to fixtures/book (or $LITATTN_BOOK). It
holds the transcripts (*.txt) and, in official/, the book's notebooks.
Writes tests/book/<chapter>.<variant>.txt: a provenance line "#! ...", then
for each block a header line "# <source> <cell>" and the block's lines.

Two kinds of block:
  - official (ch03.ipynb, exercise-solutions.ipynb, multihead-attention.ipynb,
    mha-implementations.ipynb, understanding-buffers.ipynb): the whole output of one
    cell, exactly as the notebook recorded it (understanding-buffers.ipynb's
    GPU cells as they print on a CPU: ON_CPU, RAISED_ON_GPU). The `book` suite compares it
    with the chapter's output for that cell, character for character. Which
    chapter has which cell comes from the chapter table (chapters/chapters.txt).
    In [1]'s version line is left out (the book ran torch 2.4.0).
  - transcript (the *.txt notebooks the project was created from): each
    tensor a cell printed (`tensor(...)` with balanced parentheses,
    `torch.Size([...])`, `Parameter containing:` with its tensor); the suite
    looks for it in the chapter's output, grad_fn suffixes aside.
Only the standard library is needed.
"""

import hashlib
import json
import os
import re
import sys

sys.dont_write_bytecode = True
if not __package__:  # run as a script: tools/, where the package `export` is, first on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from export.chapters import BOOK_DIR, REPO_ROOT, SECTION_NOTEBOOK, SECTION_PREFIX, label_prefix, table  # noqa: E402

OFFICIAL = ["ch03.ipynb", "exercise-solutions.ipynb", "multihead-attention.ipynb", "mha-implementations.ipynb",
            "understanding-buffers.ipynb"]
# Blocks of mha-implementations.ipynb that no chapter prints, and why: the
# versions and devices of the notebook's own runs, the %timeit timings and
# charts of sections 10 and 11 (a benchmark, not a chapter: its output would
# change with every run), and section 9's FlexAttention cell, whose guard
# (torch >= 2.5 and CUDA) is false in torch 1.13, so that it prints nothing.
NOT_PRINTED = {
    ("mha-implementations.ipynb", "mha-implementations In [1]"): "the notebook's device and torch version",
    ("mha-implementations.ipynb", "mha-implementations In [14]"): "FlexAttention: guarded by torch >= 2.5 and CUDA",
    ("mha-implementations.ipynb", "mha-implementations In [16]"): "the notebook's torch version and device",
    ("mha-implementations.ipynb", "mha-implementations In [26]"): "the notebook's torch version and device",
}
NOT_PRINTED.update({("mha-implementations.ipynb", f"mha-implementations In [{n}]"): "a timing (section 10)"
                    for n in range(17, 26)})
NOT_PRINTED.update({("mha-implementations.ipynb", f"mha-implementations In [{n}]"): "a chart (section 11)"
                    for n in (30, 32, 34)})
# understanding-buffers.ipynb ran on a GPU (cuda:0); litattn computes on the
# CPU, the notebook's own fallback (device = torch.device("cpu")). These cells
# are compared with what they print on a CPU, made from the recorded text by
# on_cpu() (the only differences: the device's name and torch's
# ", device='cuda:0'" suffix, which IPython's layout of a state_dict leaves as
# it is otherwise); the chapter's note line in each says what the GPU showed.
BUFFERS = "understanding-buffers.ipynb"
ON_CPU = {(BUFFERS, f"understanding-buffers In [{n}]") for n in (3, 5, 7, 8, 10, 11, 12, 13, 14)}
# A cell that raised on the GPU (the mask, a plain attribute, stayed on the
# CPU) runs on a CPU; there it prints what the later cell of the same code
# prints (In [8], after the mask was moved: on a CPU nothing moved).
RAISED_ON_GPU = {(BUFFERS, "understanding-buffers In [4]"): "understanding-buffers In [8]"}


def on_cpu(text):
    """A cell's recorded GPU output as the same cell prints it on a CPU."""
    text = text.replace(", device='cuda:0'", "")
    text = re.sub(r"^Machine has GPU: True$", "Machine has GPU: False", text, flags=re.M)
    text = re.sub(r"^Using device: cuda$", "Using device: cpu", text, flags=re.M)
    return re.sub(r"^(\S+\.device:) cuda:0$", r"\1 cpu", text, flags=re.M)


def compared_outputs(name, cells, labels):
    """{label: the text the `book` suite and the view compare} of a
    notebook's code cells: the recorded output, or on a CPU (ON_CPU,
    RAISED_ON_GPU)."""
    recorded = {labels[i]: (cell_output(cell), "".join(cell["source"])) for i, cell in enumerate(cells) if i in labels}
    out = {}
    for label, (text, source) in recorded.items():
        if (name, label) in RAISED_ON_GPU:
            like = RAISED_ON_GPU[(name, label)]
            if recorded[like][1] != source:
                raise SystemExit(f"{name} {label}: its code is not {like}'s, whose output it is compared with")
            text = on_cpu(recorded[like][0])
        elif (name, label) in ON_CPU:
            text = on_cpu(text)
        out[label] = text
    return out


# Exercise 3.2's recorded output was printed by an older CausalAttention
# (softmax over dim=1); the code as written prints other numbers. The recorded text
# belongs to the chapter's variant that runs the old softmax.
STALE = {("exercise-solutions.ipynb", "Exercise 3.2"): "recorded"}

# Transcript (file prefix) and notebook cell -> (chapter, variant). The cell
# is the nearest preceding `In [..]:` line; "*" matches any cell (or none).
TRANSCRIPTS = {
    # 000: seed-123 notebook (3.4.1, then V1 built without re-seeding, then V2)
    ("000", "In [23]"): ("ch03_4_1_trainable_weights", "seed123"),  # inputs.shape
    ("000", "In [26]"): ("ch03_4_1_trainable_weights", "seed123"),  # query_2, key_2
    ("000", "In [27]"): ("ch03_4_1_trainable_weights", "seed123"),  # keys.shape, values.shape
    ("000", "In [28]"): ("ch03_4_1_trainable_weights", "seed123"),  # attn_score_22
    ("000", "In [29]"): ("ch03_4_1_trainable_weights", "seed123"),  # attn_scores_2
    ("000", "In [30]"): ("ch03_4_1_trainable_weights", "seed123"),  # attn_weights_2
    ("000", "In [31]"): ("ch03_4_1_trainable_weights", "seed123"),  # context_vec_2
    ("000", "In [33]"): ("ch03_4_2_self_attention_v1", "seed123_continued"),  # sa_v1(inputs), no re-seed
    ("000", "In [41]"): ("ch03_4_2_self_attention_v2", "seed789"),  # sa_v2(inputs)
    # 001: sections 3.3 (book inputs) and 3.4 with seed 42
    ("001", "In [6]"): ("ch03_3_simplified_attention", "book"),    # inputs
    ("001", "In [7]"): ("ch03_3_simplified_attention", "book"),    # attn_scores_2
    ("001", "In [8]"): ("ch03_3_simplified_attention", "book"),    # attn_weights_2_tmp and its sum
    ("001", "In [9]"): ("ch03_3_simplified_attention", "book"),    # attn_weights_2 and its sum
    ("001", "In [10]"): ("ch03_3_simplified_attention", "book"),   # the x_i of the loop, context_vec_2
    ("001", "In [14]"): ("ch03_3_simplified_attention", "book"),   # context_vec_1
    ("001", "In [17]"): ("ch03_3_simplified_attention", "book"),   # attn_scores (loop)
    ("001", "In [20]"): ("ch03_3_simplified_attention", "book"),   # attn_scores (matmul)
    ("001", "In [29]"): ("ch03_3_simplified_attention", "book"),   # attn_weights
    ("001", "In [32]"): ("ch03_3_simplified_attention", "book"),   # context_vecs
    ("001", "In [99]"): ("ch03_4_1_trainable_weights", "seed42"),  # query_2
    ("001", "In [53]"): ("ch03_4_1_trainable_weights", "seed42"),  # keys.shape, values.shape
    ("001", "In [54]"): ("ch03_4_1_trainable_weights", "seed42"),  # attn_scores_22
    ("001", "In [55]"): ("ch03_4_1_trainable_weights", "seed42"),  # attn_scores_2
    ("001", "In [57]"): ("ch03_4_1_trainable_weights", "seed42"),  # attn_weights_2
    ("001", "In [68]"): ("ch03_4_1_trainable_weights", "seed42"),  # context_vec_2
    ("001", "In [70]"): ("ch03_4_2_self_attention_v1", "seed42"),  # sa_v1(inputs)
    ("001", "In [95]"): ("ch03_4_2_self_attention_v2", "seed42"),  # sa_v2(inputs)
    # 002: lecture notes; code only, so no blocks are expected (any found is unmapped)
    # 003: the book's own text of 3.4.1, no cells at all: seed 123 throughout
    ("003", "*"): ("ch03_4_1_trainable_weights", "seed123"),
    # 004: seed-123 notebook
    ("004", "In [3]"): ("ch03_4_1_trainable_weights", "seed123"),   # inputs.shape
    ("004", "In [6]"): ("ch03_4_1_trainable_weights", "seed123"),   # W_query
    ("004", "In [7]"): ("ch03_4_1_trainable_weights", "seed123"),   # W_key
    ("004", "In [8]"): ("ch03_4_1_trainable_weights", "seed123"),   # W_value
    ("004", "In [9]"): ("ch03_4_1_trainable_weights", "seed123"),   # query_2, key_2, value_2
    ("004", "In [10]"): ("ch03_4_1_trainable_weights", "seed123"),  # queries/keys/values .shape
    ("004", "In [11]"): ("ch03_4_1_trainable_weights", "seed123"),  # attn_score_22
    ("004", "In [12]"): ("ch03_4_1_trainable_weights", "seed123"),  # attn_scores_2
    ("004", "In [13]"): ("ch03_4_1_trainable_weights", "seed123"),  # attn_scores
    ("004", "In [14]"): ("ch03_4_1_trainable_weights", "seed123"),  # attn_weights_2
    ("004", "In [15]"): ("ch03_4_1_scaling_rationale", "book"),     # softmax with and without * 8
    ("004", "In [17]"): ("ch03_4_1_trainable_weights", "seed123"),  # context_vec_2
    ("004", "In [None]"): ("ch03_4_2_self_attention_v1", "seed123"),  # sa_v1.forward(inputs), re-seeded
    ("004", "In [24]"): ("ch03_4_2_self_attention_v2", "seed789"),  # sa_v2(inputs)
}

CELL = re.compile(r"^In \[([^\]]*)\]:")
TENSOR = re.compile(r"(?<![\w.])tensor\(")
SIZE = re.compile(r"torch\.Size\(\[[^\]]*\]\)")
GRAD_FN = re.compile(r",\s*grad_fn=<[^>]*>$")


# --- official notebooks --------------------------------------------------------------

def cell_output(cell):
    """The text a code cell printed: its stream outputs, then its result's text."""
    text = ""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            text += "".join(out["text"])
        elif out.get("output_type") == "execute_result":
            text += "".join(out["data"].get("text/plain", "")) + "\n"
    return text


def exercise_outputs(cells):
    """Exercise N.M -> its output block, for exercises the notebook gives as
    markdown only: the first fenced block with no language after a ```python
    one. The author's annotation after two spaces and '#' ("2360064  # (2.36 M)")
    is not output."""
    found, exercise, seen_code = {}, None, False
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        m = re.search(r"^## Exercise (\d+\.\d+)", text, re.M)
        if m:
            exercise, seen_code = m.group(1), False
            continue
        if exercise is None or f"Exercise {exercise}" in found:
            continue
        fence = re.fullmatch(r"```(\w*)\n(.*?)```\s*", text, re.S)
        if not fence:
            continue
        if fence.group(1):
            seen_code = True
        elif seen_code:
            lines = [re.sub(r"\s{2,}#.*$", "", line) for line in fence.group(2).splitlines()]
            found[f"Exercise {exercise}"] = "\n".join(lines) + "\n"
    return found


def code_cell_labels(cells, name):
    """{cell index: label} of a notebook's code cells: "<prefix> [N]", or,
    for a count the notebook repeats (mha-implementations.ipynb's In [10] and
    In [11], and the cells it never ran, In [None]), its section and place: "mha-implementations \u00a75.2" is the 2nd
    code cell after the heading "## 5." (chapters.py)."""
    prefix = label_prefix(name)
    counts = [c.get("execution_count") for c in cells if c["cell_type"] == "code"]
    labels, section, place = {}, None, 0
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            m = re.search(r"^## (\d+)\.", "".join(cell["source"]), re.M)
            if m:
                section, place = m.group(1), 0
            continue
        if cell["cell_type"] != "code":
            continue
        place += 1
        n = cell.get("execution_count")
        if name == SECTION_NOTEBOOK and counts.count(n) > 1:
            labels[i] = f"{SECTION_PREFIX}{section}.{place}"
        else:
            labels[i] = f"{prefix} [{n}]"
    return labels


def official_blocks(official_dir):
    """[(notebook, label, text)] of every printed block, In [1] aside."""
    blocks = []
    for name in OFFICIAL:
        with open(os.path.join(official_dir, name), encoding="utf-8") as f:
            nb = json.load(f)
        labels = code_cell_labels(nb["cells"], name)
        compared = compared_outputs(name, nb["cells"], labels)
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] != "code" or cell.get("execution_count") in (None, 1):
                continue
            label = labels[i]
            text = compared[label]
            if text and (name, label) not in NOT_PRINTED:
                blocks.append((name, label, text))
        blocks += [(name, label, text) for label, text in exercise_outputs(nb["cells"]).items()]
    return blocks


def provenance(official_dir):
    """Where the notebooks come from, and their digests: a change to either shows in --check."""
    # The commit is named in fixtures/book/PROVENANCE.md (or a LITATTN_BOOK
    # folder's official/README.md).
    m = None
    for doc in (os.path.join(os.path.dirname(official_dir), "PROVENANCE.md"), os.path.join(official_dir, "README.md")):
        if os.path.exists(doc):
            m = re.search(r"commit `?([0-9a-f]{40})", open(doc, encoding="utf-8").read())
            break
    digests = ", ".join(f"{n} sha256 {hashlib.sha256(open(os.path.join(official_dir, n), 'rb').read()).hexdigest()[:16]}"
                        for n in OFFICIAL)
    return f"#! rasbt/LLMs-from-scratch commit {m.group(1) if m else 'unknown'}; {digests}"


# --- transcripts ----------------------------------------------------------------------

def matching_paren(text, open_at):
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def block_lines(text, start, block):
    """The block as lines; when it sits alone on an indented line (003's
    Markdown code blocks), that indentation is removed from its continuation
    lines too, as the printed tensor had none."""
    lines = block.split("\n")
    indent = text[text.rfind("\n", 0, start) + 1:start]
    if indent and not indent.strip() and all(line.startswith(indent) for line in lines[1:]):
        lines = [lines[0]] + [line[len(indent):] for line in lines[1:]]
    return lines


def transcript_blocks(path):
    """[(line number, cell label, [lines])] of the transcript, in order."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    line_of = lambda pos: text.count("\n", 0, pos) + 1  # noqa: E731
    raw_lines = text.split("\n")

    def cell_at(lineno):
        for n in range(lineno - 1, 0, -1):
            m = CELL.match(raw_lines[n - 1])
            if m:
                return f"In [{m.group(1)}]"
        return None

    found = []
    for m in TENSOR.finditer(text):
        open_at = m.end() - 1
        close = matching_paren(text, open_at)
        if close < 0:
            raise SystemExit(f"{path}:{line_of(m.start())}: unbalanced tensor(")
        inner = GRAD_FN.sub("", text[open_at + 1:close])
        lines = block_lines(text, m.start(), text[m.start():open_at + 1] + inner + ")")
        start = m.start()
        # `Parameter containing:` on the line before joins the tensor's block
        ls = text.rfind("\n", 0, start) + 1
        prev_end = ls - 1
        prev_start = text.rfind("\n", 0, max(prev_end, 0)) + 1
        if ls > 0 and text[ls:start].strip() == "" and text[prev_start:prev_end].strip() == "Parameter containing:":
            lines = [text[prev_start:prev_end].strip()] + lines
            start = prev_start
        found.append((start, line_of(start), lines))
    for m in SIZE.finditer(text):
        found.append((m.start(), line_of(m.start()), [m.group(0)]))
    found.sort(key=lambda b: b[0])
    return [(line, cell_at(line), lines) for _, line, lines in found]


# --- writing -------------------------------------------------------------------------------

def collect(book_dir):
    """{file name: text} for tests/book, and the list of problems (unmapped blocks)."""
    chapters = table()
    per_file, problems = {}, []
    official_dir = os.path.join(book_dir, "official")
    head = provenance(official_dir)
    for nb, label, text in official_blocks(official_dir):
        chapter = next((c for c in chapters if label in c.labels), None)
        if chapter is None:
            problems.append(f"{nb} {label}: no chapter in chapters/chapters.txt lists this cell")
            continue
        variant = STALE.get((nb, label), chapter.book_variant)
        if variant not in chapter.variants:
            problems.append(f"{nb} {label}: {chapter.program} has no variant {variant}")
            continue
        if any(line.startswith("# ") for line in text.splitlines()):
            problems.append(f"{nb} {label}: an output line starts with '# ', which this file format cannot hold")
        per_file.setdefault((chapter.program, variant), []).append(f"# {nb} {label}\n{text}")
    for name in sorted(n for n in os.listdir(book_dir) if n.endswith(".txt")):
        prefix = name.split("_")[0]
        for line, cell, lines in transcript_blocks(os.path.join(book_dir, name)):
            key = TRANSCRIPTS.get((prefix, cell)) or TRANSCRIPTS.get((prefix, "*"))
            if key is None:
                problems.append(f"{name}:{line} {cell}: {lines[0]} (no chapter mapped)")
                continue
            per_file.setdefault(key, []).append(f"# {name}:{line} {cell if cell else '-'}\n" + "\n".join(lines) + "\n")
    contents = {f"{c}.{v}.txt": head + "\n" + "".join(blocks) for (c, v), blocks in per_file.items()}
    return contents, problems


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    book_dir = args[0] if args else BOOK_DIR
    out_dir = os.path.join(REPO_ROOT, "tests", "book")
    if not os.path.isdir(os.path.join(book_dir, "official")):
        print(f"FAIL: no notebooks at {os.path.join(book_dir, 'official')} "
              "(the repository keeps them in fixtures/book/official; LITATTN_BOOK names another folder)")
        return 1
    contents, problems = collect(book_dir)
    ours = lambda n: n.startswith("ch") and n.endswith(".txt")  # noqa: E731  this script's outputs only
    differ = 0
    if check:
        present = sorted(n for n in os.listdir(out_dir) if ours(n)) if os.path.isdir(out_dir) else []
        for n in sorted(set(present) | set(contents)):
            have = open(os.path.join(out_dir, n), encoding="utf-8").read() if n in present else None
            if have != contents.get(n):
                differ += 1
                print(f"DIFFERS tests/book/{n}: " + ("missing" if have is None else
                      "not made from the notebooks" if n not in contents else "content differs"))
            else:
                print(f"ok      tests/book/{n}: {contents[n].count(chr(10) + '# ')} blocks")
    else:
        os.makedirs(out_dir, exist_ok=True)
        for old in os.listdir(out_dir):
            if ours(old):
                os.remove(os.path.join(out_dir, old))
        for n, text in sorted(contents.items()):
            with open(os.path.join(out_dir, n), "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote tests/book/{n}: {text.count(chr(10) + '# ')} blocks")
    official = sum(text.count(f"\n# {nb} ") for nb in OFFICIAL for text in contents.values())
    total = sum(text.count("\n# ") for text in contents.values())
    print(f"{total} blocks ({official} from the official notebooks) in {len(contents)} files"
          + (f", {differ} files differ from tests/book" if check else ""))
    for p in problems:
        print(f"PROBLEM {p}")
    return 1 if problems or differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
