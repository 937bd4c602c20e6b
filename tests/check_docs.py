#!/usr/bin/python3
"""The docs check (suite `docs`): short sentences, short table cells, and a
README a newcomer reads in three minutes.

    check_docs.py prose SOURCE_ROOT
        Every tracked Markdown file but fixtures/book/ (the book's own files):
        no sentence over 60 words, no table cell over 300 characters, every
        relative link naming a file (and a heading) that exists. Then
        README.md's outline: at most 1,000 words, a chapter command within the
        first 400, the quick start's output within the first 700, and the two
        sections other tools read (`## Quick start`, `## Two commands`).

    check_docs.py quick-start SOURCE_ROOT CHAPTERS_DIR
        Runs the chapter README.md's quick start runs, from CHAPTERS_DIR, and
        fails unless the quick start's ```text block is the first lines of
        what it prints, character for character.

How a sentence is found (tests/README.md says the same for a reader):
- Fenced code blocks (``` or ~~~) are skipped. An inline code span counts
  as many words as it holds, and nothing inside it ends a sentence. A link counts its text,
  not its target.
- A heading, a list item, a table cell and a paragraph are each a unit: a
  sentence never runs from one unit into the next.
- Inside a unit a sentence ends at `.`, `!` or `?` (closing brackets, quotes
  or emphasis may follow it) followed by a space and then a capital letter
  or a backtick (opening brackets, quotes or emphasis may come before it).
- A word is a run of characters between spaces that holds a letter or a
  digit, or any word of an inline code span.
Exit 0 when every check holds, 1 otherwise (each failure one line, naming
file:line and the count), 2 for a usage error.
"""
import os
import re
import shlex
import subprocess
import sys

MAX_SENTENCE_WORDS = 60
MAX_CELL_CHARS = 300
README_MAX_WORDS = 1000
README_COMMAND_BY = 400
README_OUTPUT_BY = 700
EXCLUDED = ('fixtures/book/',)

CODE_MARK = '\x01'  # a word of an inline code span
FENCE = re.compile(r'^\s*(```|~~~)')
HEADING = re.compile(r'^\s{0,3}#{1,6}\s')
LIST_ITEM = re.compile(r'^\s*([-*+]|\d+[.)])\s+')
TABLE_ROW = re.compile(r'^\s*\|')
TABLE_RULE = re.compile(r'^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$')
SENTENCE_END = re.compile(r'[.!?][)\]*_"\'\u2019\u201d]*\s+(?=[*_(\["\u201c]*[A-Z`' + CODE_MARK + r'])')
LINK = re.compile(r'!?\[([^\]]*)\]\([^)\s]*\)')
WORD = re.compile(r'[0-9A-Za-z\u00c0-\uffff' + CODE_MARK + r']')


def tracked_markdown(root):
    """Every Markdown file git tracks under root (or, with no git checkout, every
    one found outside build trees and node_modules), fixtures/book/ left out."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z', '--', '*.md'],
                             capture_output=True, check=True).stdout.decode()
        files = [f for f in out.split('\0') if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for top, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith('.') and d != 'node_modules'
                       and not os.path.exists(os.path.join(top, d, 'meson-private'))]
            files += [os.path.relpath(os.path.join(top, n), root) for n in names if n.endswith('.md')]
    return sorted(f for f in files if not f.startswith(EXCLUDED))


def strip_inline(text):
    """Each word of an inline code span becomes a mark; links keep their text."""
    out, i = [], 0
    while i < len(text):
        if text[i] == '`':
            n = len(text[i:]) - len(text[i:].lstrip('`'))
            ticks = text[i:i + n]
            j = text.find(ticks, i + n)
            if j >= 0:
                # as many words as the span holds (at least one), none ending a sentence
                out.append(' '.join([CODE_MARK] * max(1, len(text[i + n:j].split()))))
                i = j + n
                continue
            out.append(ticks)
            i += n
            continue
        out.append(text[i])
        i += 1
    return LINK.sub(r'\1', ''.join(out))


def split_cells(row):
    """The cells of a table row: split at every | that is neither escaped nor
    inside a code span."""
    cells, cur, i, code = [], [], 0, None
    s = row.strip()
    if s.startswith('|'):
        s = s[1:]
    while i < len(s):
        c = s[i]
        if c == '\\' and i + 1 < len(s):
            cur.append(s[i:i + 2])
            i += 2
            continue
        if c == '`':
            n = len(s[i:]) - len(s[i:].lstrip('`'))
            ticks = s[i:i + n]
            if code is None and s.find(ticks, i + n) >= 0:
                code = ticks
            elif code == ticks:
                code = None
            cur.append(ticks)
            i += n
            continue
        if c == '|' and code is None:
            cells.append(''.join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if ''.join(cur).strip():
        cells.append(''.join(cur))
    return [c.strip() for c in cells]


def words(text):
    return [w for w in text.split() if WORD.search(w)]


def units(lines):
    """(line number, text) of every unit of prose: each paragraph, heading, list
    item and table cell, code blocks left out."""
    out, para, start, fence = [], [], 0, None

    def flush():
        nonlocal para
        if para:
            out.append((start, ' '.join(para)))
        para = []

    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            flush()
            fence = m.group(1)
            continue
        if not line.strip():
            flush()
        elif TABLE_ROW.match(line):
            flush()
            if not TABLE_RULE.match(line):
                out += [(n, cell) for cell in split_cells(line)]
        elif HEADING.match(line) or LIST_ITEM.match(line):
            flush()
            start, para = n, [line.strip()]
        else:
            if not para:
                start = n
            para.append(line.strip())
    flush()
    return out


def sentences(text):
    text = strip_inline(text)
    pos = 0
    for m in SENTENCE_END.finditer(text):
        yield text[pos:m.end()].strip()
        pos = m.end()
    if text[pos:].strip():
        yield text[pos:].strip()


def check_prose(root, rel):
    failures = []
    with open(os.path.join(root, rel), encoding='utf-8') as f:
        lines = f.read().split('\n')
    for n, line in enumerate(lines, 1):
        if TABLE_ROW.match(line) and not TABLE_RULE.match(line):
            for cell in split_cells(line):
                if len(cell) > MAX_CELL_CHARS:
                    failures.append(f'{rel}:{n}: a table cell of {len(cell)} characters '
                                    f'(at most {MAX_CELL_CHARS}): "{cell[:60]}..."')
    for n, text in units(lines):
        for s in sentences(text):
            count = len(words(s))
            if count > MAX_SENTENCE_WORDS:
                shown = s.replace(CODE_MARK, '`...`')[:60]
                failures.append(f'{rel}:{n}: a sentence of {count} words '
                                f'(at most {MAX_SENTENCE_WORDS}): "{shown}..."')
    # A fence left open would hide the rest of the file from the check.
    fences = [l for l in lines if FENCE.match(l)]
    if len(fences) % 2:
        failures.append(f'{rel}: a code fence is never closed')
    return failures


def outside_fences(lines):
    """(line number from 1, line) for each line outside fenced code blocks
    (a fence closed by the same run of backticks or tildes that opened it)."""
    fence = None
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is not None:
            fence = None if m and m.group(1) == fence else fence
            continue
        if m:
            fence = m.group(1)
            continue
        yield n, line


def anchors(lines):
    """The anchors GitHub gives a file's headings: lower case, punctuation
    dropped but for - and _, spaces as -, a repeat numbered -1, -2, ..."""
    seen, out = {}, set()
    for _, line in outside_fences(lines):
        if HEADING.match(line):
            text = LINK.sub(r'\1', line.strip().lstrip('#').strip()).replace('`', '')
            slug = re.sub(r'[^\w\- ]', '', text.lower()).replace(' ', '-')
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f'{slug}-{n}')
    return out


def check_links(root, rel):
    """Every relative link of rel names a file of the tree, and an anchor of a
    Markdown file names one of its headings."""
    failures, cache = [], {}
    with open(os.path.join(root, rel), encoding='utf-8') as f:
        lines = f.read().split('\n')
    for n, line in outside_fences(lines):
        for target in re.findall(r'\]\(([^)\s]+)\)', re.sub(r'`[^`]*`', '', line)):
            if re.match(r'[a-z]+:', target):
                continue
            path, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
            if not os.path.exists(os.path.join(root, dest)):
                failures.append(f'{rel}:{n}: a link to {target}: expected the file {dest}, found none')
                continue
            if anchor and dest.endswith('.md'):
                if dest not in cache:
                    with open(os.path.join(root, dest), encoding='utf-8') as f:
                        cache[dest] = anchors(f.read().split('\n'))
                if anchor not in cache[dest]:
                    failures.append(f'{rel}:{n}: a link to {target}: expected a heading #{anchor} in {dest}, '
                                    f'found none')
    return failures


def sections(lines):
    """(heading, first line number, lines) of each `## ` section."""
    out, cur = [], None
    for n, line in enumerate(lines, 1):
        if line.startswith('## '):
            cur = (line[3:].strip(), n, [])
            out.append(cur)
        elif cur is not None:
            cur[2].append(line)
    return out


def first_block(lines, lang):
    """The lines of the first ```lang block among lines, or None."""
    inside, got = False, []
    for line in lines:
        if not inside and line.strip() == '```' + lang:
            inside = True
        elif inside and line.strip() == '```':
            return got
        elif inside:
            got.append(line)
    return None


def quick_start(lines):
    """The quick start's sh block and text block, or a reason why not."""
    found = [s for s in sections(lines) if s[0].startswith('Quick start')]
    if len(found) != 1:
        return None, None, f'README.md: expected one section headed "## Quick start", found {len(found)}'
    body = found[0][2]
    sh = first_block(body, 'sh')
    text = first_block(body, 'text')
    if sh is None or text is None:
        return None, None, 'README.md: expected a ```sh block and a ```text block under "## Quick start", found ' + \
            ('no ```sh block' if sh is None else 'no ```text block')
    return sh, text, None


def command_of(line):
    return line.split('#', 1)[0].strip()


def check_readme(root):
    failures = []
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        lines = f.read().split('\n')
    # Words as a reader meets them: prose, tables and code alike, link targets aside.
    total, command_at, output_at, fence = 0, None, None, None
    for line in lines:
        m = FENCE.match(line)
        if fence is None and m:
            fence = line.strip()
            if fence == '```text' and output_at is None:
                output_at = total
            continue
        if fence is not None and m:
            fence = None
            continue
        if TABLE_RULE.match(line):
            continue
        if fence == '```sh' and command_at is None and command_of(line).startswith('build/chapters/'):
            command_at = total
        total += len(words(LINK.sub(r'\1', line)))
    if total > README_MAX_WORDS:
        failures.append(f'README.md: {total} words (at most {README_MAX_WORDS})')
    if command_at is None:
        failures.append('README.md: expected a chapter command (build/chapters/...) in a ```sh block, found none')
    elif command_at > README_COMMAND_BY:
        failures.append(f'README.md: the first chapter command comes {command_at} words in '
                        f'(at most {README_COMMAND_BY})')
    if output_at is None:
        failures.append("README.md: expected a chapter's output in a ```text block, found none")
    elif output_at > README_OUTPUT_BY:
        failures.append(f"README.md: the chapter's output comes {output_at} words in (at most {README_OUTPUT_BY})")

    # The two sections tools/build/fresh_machine.sh reads.
    sh, _, why = quick_start(lines)
    if why:
        failures.append(why)
    else:
        cmds = [command_of(l) for l in sh if command_of(l)]
        want = ['sudo apt-get install -y ', 'meson setup build && ninja -C build', 'build/chapters/']
        if len(cmds) != 3 or not cmds[0].startswith(want[0]) or cmds[1] != want[1] or not cmds[2].startswith(want[2]):
            failures.append('README.md: the quick start\'s ```sh block: expected three commands, '
                            '"sudo apt-get install -y ...", "meson setup build && ninja -C build" and '
                            f'"build/chapters/...", found {cmds}')
    two = [s for s in sections(lines) if s[0] == 'Two commands']
    block = first_block(two[0][2], 'sh') if len(two) == 1 else None
    if block is None or len([l for l in block if command_of(l)]) != 2:
        failures.append('README.md: expected a section "## Two commands" whose first ```sh block holds two commands, '
                        'found ' + ('no such section' if len(two) != 1 else 'no ```sh block' if block is None
                                    else f'{len([l for l in block if command_of(l)])} commands'))
    return failures


def main_prose(root):
    files = tracked_markdown(root)
    if 'README.md' not in files:
        print(f'check_docs: expected README.md among the Markdown files of {root}, found none', file=sys.stderr)
        return 1
    failures = []
    for rel in files:
        failures += check_prose(root, rel) + check_links(root, rel)
    failures += check_readme(root)
    for f in failures:
        print(f)
    print(f'{len(files)} Markdown files: {len(failures)} failures '
          f'(sentences at most {MAX_SENTENCE_WORDS} words, table cells at most {MAX_CELL_CHARS} characters, '
          f"README.md's outline)")
    return 1 if failures else 0


def main_quick_start(root, chapters_dir):
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        lines = f.read().split('\n')
    sh, text, why = quick_start(lines)
    if why:
        print(why)
        return 1
    runs = [command_of(l) for l in sh if command_of(l).startswith('build/chapters/')]
    if len(runs) != 1:
        print(f'README.md: expected one chapter command in the quick start, found {len(runs)}')
        return 1
    argv = shlex.split(runs[0])
    program = os.path.join(chapters_dir, os.path.basename(argv[0]))
    if not os.path.isfile(program):
        print(f'README.md: the quick start runs {argv[0]}: expected a chapter in {chapters_dir}, found none')
        return 1
    try:
        run = subprocess.run([program] + argv[1:], cwd=root, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        print(f'{runs[0]}: expected it to end within 120 s, found it still running')
        return 1
    if run.returncode != 0:
        print(f'{runs[0]}: expected exit 0, found {run.returncode}: {run.stderr.decode(errors="replace").strip()}')
        return 1
    printed = run.stdout.decode('utf-8', errors='replace').split('\n')
    if not text:
        print('README.md: the quick start\'s ```text block is empty')
        return 1
    for i, want in enumerate(text):
        got = printed[i] if i < len(printed) else None
        if got != want:
            print(f"README.md: the quick start's output, line {i + 1}: the README shows {want!r}, "
                  f"{runs[0]} prints {got!r}")
            return 1
    print(f"README.md's quick start: {runs[0]} prints the {len(text)} lines shown")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == 'prose':
        return main_prose(argv[2])
    if len(argv) == 4 and argv[1] == 'quick-start':
        return main_quick_start(argv[2], argv[3])
    print('usage: check_docs.py prose SOURCE_ROOT\n'
          '       check_docs.py quick-start SOURCE_ROOT CHAPTERS_DIR', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
