#!/usr/bin/python3
"""Extract every tensor the notebook transcripts print, for the print tests.

    /usr/bin/python3 tools/extract_book_blocks.py [BOOK_DIR]          # write tests/book/
    /usr/bin/python3 tools/extract_book_blocks.py --check [BOOK_DIR]  # compare, exit 1 on a difference

BOOK_DIR defaults to ../shared/book relative to the repository root. Writes
tests/book/<chapter>.<variant>.txt: for each printed block a header line
`# <transcript file>:<line> <cell label>` and then the block's lines verbatim.

A block is what PyTorch printed, not code:
  - `tensor(...)` not preceded by a word character or '.' (so the code's
    `torch.tensor(` is not one), with balanced parentheses, across lines;
    a trailing `, grad_fn=<...>` inside it is dropped (a C tensor has none);
  - `torch.Size([...])`;
  - `Parameter containing:` and the tensor on the next line, as one block.
Several blocks can share a line (`(tensor([...]), tensor([...]))`); each is
its own block with the same header. Only the standard library is needed.
"""

import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Transcript (file prefix) and notebook cell -> (chapter, variant). The cell is
# the nearest preceding `In [..]:` line; "*" matches any cell (or none).
# Which transcript reproduces which fixture: tools/export_fixtures.py.
MAPPING = {
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


def matching_paren(text, open_at):
    """Index of the ')' closing the '(' at text[open_at], or -1."""
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
    """The block (found at text[start]) as lines; when it sits alone on an
    indented line (003's Markdown code blocks), that indentation is removed
    from its continuation lines too, as the printed tensor had none."""
    lines = block.split("\n")
    indent = text[text.rfind("\n", 0, start) + 1:start]
    if indent and not indent.strip() and all(l.startswith(indent) for l in lines[1:]):
        lines = [lines[0]] + [l[len(indent):] for l in lines[1:]]
    return lines


def extract(path):
    """[(line number, cell label, [lines])] of the transcript, in order."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    line_of = lambda pos: text.count("\n", 0, pos) + 1
    raw_lines = text.split("\n")

    def cell_at(lineno):
        for n in range(lineno - 1, 0, -1):
            m = CELL.match(raw_lines[n - 1])
            if m:
                return f"In [{m.group(1)}]"
        return None

    found = []  # (start offset, line, [lines])
    for m in TENSOR.finditer(text):
        open_at = m.end() - 1
        close = matching_paren(text, open_at)
        if close < 0:
            raise SystemExit(f"{path}:{line_of(m.start())}: unbalanced tensor(")
        inner = GRAD_FN.sub("", text[open_at + 1:close])
        block = text[m.start():open_at + 1] + inner + ")"
        lines = block_lines(text, m.start(), block)
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


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    book_dir = args[0] if args else os.path.join(REPO_ROOT, "..", "shared", "book")
    out_dir = os.path.join(REPO_ROOT, "tests", "book")
    if not os.path.isdir(book_dir):
        print(f"SKIP: no transcripts at {book_dir}")
        return 77 if check else 1
    names = sorted(n for n in os.listdir(book_dir) if n.endswith(".txt"))
    if not names:
        raise SystemExit(f"extract_book_blocks: no transcripts in {book_dir}")
    per_file = {}
    unmapped = []
    total = 0
    for name in names:
        prefix = name.split("_")[0]
        blocks = extract(os.path.join(book_dir, name))
        print(f"{name}: {len(blocks)} blocks")
        for line, cell, lines in blocks:
            total += 1
            key = MAPPING.get((prefix, cell)) or MAPPING.get((prefix, "*"))
            if key is None:
                unmapped.append(f"{name}:{line} {cell}: {lines[0]}")
                continue
            header = f"# {name}:{line} {cell if cell else '-'}"
            per_file.setdefault(key, []).append("\n".join([header] + lines))
    contents = {f"{c}.{v}.txt": "\n".join(b) + "\n" for (c, v), b in per_file.items()}
    ours = lambda n: n.startswith("ch") and n.endswith(".txt")  # this script's outputs only
    stale = 0
    if check:
        # Compare with tests/book instead of writing it.
        present = sorted(n for n in os.listdir(out_dir) if ours(n)) if os.path.isdir(out_dir) else []
        for n in sorted(set(present) | set(contents)):
            have = open(os.path.join(out_dir, n), encoding="utf-8").read() if n in present else None
            if have != contents.get(n):
                stale += 1
                print(f"DIFFERS tests/book/{n}: " + ("missing" if have is None else
                      "not made from the transcripts" if n not in contents else "content differs"))
    else:
        os.makedirs(out_dir, exist_ok=True)
        for old in os.listdir(out_dir):
            if ours(old):
                os.remove(os.path.join(out_dir, old))
        for n, text in sorted(contents.items()):
            path = os.path.join(out_dir, n)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path)}: {text.count(chr(10) + '# ') + 1} blocks")
    mapped = sum(len(b) for b in per_file.values())
    print(f"{total} blocks, {mapped} mapped into {len(per_file)} files, {len(unmapped)} unmapped"
          + (f", {stale} files differ from tests/book" if check else ""))
    for u in unmapped:
        print(f"UNMAPPED {u}")
    return 1 if unmapped or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
