"""beyond_check.py: every `Beyond` cell of every chapter (litattn's own cells,
">>> litattn: <code>" in a chapter's output), its Python run literally in
torch 1.13 after the cells before it, prints what the C chapter prints.

The cells before it are the export's (tools/export/: the notebook's code in
the notebook's order, its classes unchanged); at each Beyond cell the export
calls Run.backward_sum (a gradient cell) or Run.beyond (any other). Here
both run the cell's text as it stands, in a notebook's namespace that keeps
what earlier cells left (a tensor's .grad, requires_grad), and print:
  a gradient cell   print(name, param.grad) for each of the module's
                    named_parameters(), then print("<x>.grad:", x.grad)
                    (their shapes only where the chapter prints shapes: the
                    bonus notebook's)
  any other cell    the value of its last expression (repr, as a notebook
                    shows it), or the tensor its last statement assigns and
                    "<name>.shape: <its shape>", as the book's cells print them
That text must equal the C's block after the cell's marker, line by line.
A cell whose text is not Python (a remark on what the C does) has nothing
to run: one line says so. Each chapter runs on the first variant that
chapters/chapters.txt lists (the book's); the bonus notebook, whose book
variant is (8, 1024, 768), on `small` (the same cells' text on the same
classes), and on `book` too with --notebook-size (by hand: its export runs six
classes forward and backward at that size on the reference BLAS, longer than
a test's limit). Two chapters run with the full selection only (FULL_ONLY:
their export costs seconds of torch); the default run says so.

usage: /usr/bin/python3 tools/cases/beyond_check.py BUILD/chapters FIXTURES_DIR [--full] [--notebook-size] [chapter ...]
One line per cell, "ok" or "FAIL" (with the first line that differs);
exit 1 if any cell fails or a chapter's cells and the export's disagree in
number, 2 on usage.
"""

import ast
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tools/: the packages export and cases
sys.path[0] = TOOLS

from export.reference_blas import use_reference_blas  # noqa: E402  (the fixtures' BLAS)

use_reference_blas()

import torch  # noqa: E402

from export import chapters as chapter_table  # noqa: E402  (chapters/chapters.txt)
from export import variants  # noqa: E402
from export.run import Run  # noqa: E402

# Chapters whose export costs torch seconds, not tenths: their cells with
# the full selection only (the default run's budget is seconds in all).
FULL_ONLY = {
    "ch03_6_2_multihead_attention": "the export runs Exercise 3.3 at GPT-2's size, forward and backward",
    "ch03_bonus_mha_implementations": "the export runs six classes forward and backward at (2, 37, 768)",
}

MARKER = re.compile(r"^>>> (.*?): (.*)$")



# A cross build's C programs run through its exe_wrapper (qemu-user), which
# meson's test setups pass as LITATTN_EXE_WRAPPER (tests/meson.build); empty here.
WRAPPER = shlex.split(os.environ.get("LITATTN_EXE_WRAPPER", ""))

def c_cells(program, fixture):
    """[(code, block lines)] of the chapter's Beyond cells, in order."""
    out = subprocess.run(WRAPPER + [program, "--fixture", fixture], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"beyond_check: {program} --fixture {fixture} exited {out.returncode}: {out.stderr.strip()}")
    cells, current = [], None
    for line in out.stdout.split("\n"):
        m = MARKER.match(line)
        if m:
            current = None
            if m.group(1) == "litattn":
                current = (m.group(2), [])
                cells.append(current)
        elif current is not None:
            current[1].append(line)
    return [(code, "\n".join(lines).rstrip("\n")) for code, lines in cells]


def is_python(code):
    try:
        ast.parse(code)
        return True
    except SyntaxError:
        return False


def run_literally(code, names):
    """exec code in a namespace of names (and torch); returns what a notebook
    would show: the last expression's value, or the last assigned name's."""
    ns = {"torch": torch, **names}
    tree = ast.parse(code)
    last = tree.body[-1]
    if isinstance(last, ast.Expr):
        exec(compile(ast.Module(tree.body[:-1], []), "<beyond>", "exec"), ns)
        return repr(eval(compile(ast.Expression(last.value), "<beyond>", "eval"), ns))
    exec(compile(tree, "<beyond>", "exec"), ns)
    if isinstance(last, ast.Assign) and isinstance(last.targets[-1], ast.Name):
        name = last.targets[-1].id
        return f"{ns[name]}\n{name}.shape: {ns[name].shape}"
    return ""


class LiteralRun(Run):
    """The export's run, its Beyond cells run as their text says."""

    def __init__(self, chapter, settings, seeds, skip, cells, report):
        super().__init__(chapter, settings, seeds, skip)
        self.cells, self.report, self.next = cells, report, 0
        self.state_before = {}

    def _cell(self):
        # the chapter's next cell that is Python (the others are reported as they are met)
        while self.next < len(self.cells) and not is_python(self.cells[self.next][0]):
            self.report(self.cells[self.next][0], None, None)
            self.next += 1
        if self.next == len(self.cells):
            raise SystemExit(f"beyond_check: {self.chapter}: the export has more Beyond cells than the chapter")
        self.next += 1
        return self.cells[self.next - 1]

    def draw_rand(self, name, shape, role):
        self.state_before[name] = torch.get_rng_state()
        return super().draw_rand(name, shape, role)

    def backward_sum(self, name, m, x, x_name, digest=False):
        code, want = self._cell()
        x_var = re.search(r"(\w+)\.requires_grad_\(\)", code).group(1)
        m_var = re.search(r"(\w+)\(" + re.escape(x_var) + r"\)", code).group(1)
        run_literally(code, {x_var: x, m_var: m})
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            for key, p in m.named_parameters():
                print(key, p.grad.shape if digest else p.grad)
            print(f"{x_var}.grad:", x.grad.shape if digest else x.grad)
        self.report(code, want, buf.getvalue().rstrip("\n"))

    def beyond(self, code, names):
        shown, want = self._cell()
        assert shown == code, (shown, code)
        names = dict(names)
        drawn = names.pop("drawn", None)
        if drawn:  # the cell draws what the export drew just before: from the same state
            after = torch.get_rng_state()
            torch.set_rng_state(self.state_before[drawn])
        got = run_literally(code, names)
        if drawn:
            torch.set_rng_state(after)
        self.report(code, want, got)


def main(argv):
    full = os.environ.get("LITATTN_TESTS") == "full" or "--full" in argv
    notebook_size = "--notebook-size" in argv
    args = [a for a in argv if a not in ("--full", "--notebook-size")]
    if len(args) < 2:
        print(__doc__.split("\n\n")[-2], file=sys.stderr)
        return 2
    chapter_dir, fixtures_dir, only = args[0], args[1], set(args[2:])
    torch.set_num_threads(1)
    failures = cells = 0
    for c in chapter_table.table():
        if only and c.program not in only:
            continue
        runs = [c.variants[0]]
        if c.program == "ch03_bonus_mha_implementations":
            runs = ["small"] + (["book"] if notebook_size else [])
        if c.program in FULL_ONLY and not full:
            print(f"--   {c.program}: with the full selection only ({FULL_ONLY[c.program]})")
            continue
        for variant in runs:
            label = f"{c.program}.{variant}"
            cs = c_cells(os.path.join(chapter_dir, c.program), os.path.join(fixtures_dir, f"{label}.h5"))
            if not cs:
                continue

            def report(code, want, got, label=label):
                nonlocal failures, cells
                cells += 1
                if want is None:
                    print(f"ok   {label}: {code!r}: not Python, a remark on what the C does: nothing to run")
                elif want == got:
                    print(f"ok   {label}: {code!r}: torch prints what the C prints ({len(got.splitlines())} lines)")
                else:
                    failures += 1
                    w, g = want.splitlines(), got.splitlines()
                    i = next((i for i in range(max(len(w), len(g)))
                              if i >= len(w) or i >= len(g) or w[i] != g[i]), 0)
                    print(f"FAIL {label}: {code!r}: line {i + 1} differs:\n  C:     "
                          f"{w[i] if i < len(w) else '(none)'}\n  torch: {g[i] if i < len(g) else '(none)'}")

            spec = variants.VARIANTS[(c.program, variant)]
            ins = variants.default_inputs(c.program)
            ins.update(spec["inputs"])
            run = LiteralRun(c.program, spec["settings"], spec["seeds"], spec["skip"], cs, report)
            variants.RUNNERS[c.program](run, ins, **spec["kw"])
            while run.next < len(cs) and not is_python(cs[run.next][0]):
                report(cs[run.next][0], None, None)
                run.next += 1
            if run.next != len(cs):
                failures += 1
                print(f"FAIL {label}: the chapter shows {len(cs)} Beyond cells, the export ran {run.next}")
    print(f"{cells} Beyond cells, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
