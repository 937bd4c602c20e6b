#!/usr/bin/env python3
"""install_check.py: a chapter runs wherever it is put, on the data it finds
there or carries.

    install_check.py --build BUILD_DIR --chapters CHAPTERS_TXT --fixtures FIXTURES_DIR
                     --prefix PREFIX --bindir BINDIR --datadir FIXTURES_INSTALL_DIR
                     --docdir DOCDIR [--meson MESON] [--sweep CHAPTER:FILE:GROUP]... [--large]
                     installed | copied

Every chapter of CHAPTERS_TXT (chapters/chapters.txt) is run with the
working directory `/`, and its stdout must be, byte for byte, what the
chapter of the build tree prints given the committed fixture by its path
(FIXTURES_DIR/<chapter>.<variant>.h5), with exit 0 and nothing on stderr.

installed: `meson install --destdir TMP` into a new temporary directory,
  then:
  - the tree holds every chapter in BINDIR, every variant's fixture, the
    two sweep files and fixtures/gpt2/'s files in the data directory
    (PREFIX/FIXTURES_INSTALL_DIR), README.md and the book's licence in DOCDIR;
  - each chapter from there with no option (its book variant) and on a
    second variant by name (`--fixture seed42`; a chapter with one variant
    in the selection: its book variant by file name);
  - each chapter with `--dump` onto its installed book fixture: refused in
    one line naming the fixture (so the run above read the installed file,
    found from the program through bindir's way to the data directory, and
    not the copy built in), the file unchanged;
  - each --sweep configuration, by the sweep file's name (`--fixture
    sweep.h5 --group NAME`): a file only the data directory holds.
copied: each chapter copied alone into a new, empty temporary directory:
  with no option (its book variant, built in) and on a variant by name, as
  above (built in); and `--fixture no_such_variant`: exit 1, one line on
  stderr that names the variant, the program's directory and "none built
  in", nothing on stdout.

The bonus notebook's chapter runs its `small` variant only (its book
variant is the notebook's size, tens of seconds a run), and the GPT-2 size
chapter's dropout variant is left out; --large runs those two alone, and
nothing else (tests/meson.build puts them in the suites `full` and
`notebook_size`, as the fixtures suite does). The temporary directories are removed on every way
out (an error, SIGTERM from meson's timeout, SIGINT, SIGHUP). One line per
check, "ok|FAIL <what>", then a summary; exit 1 on any FAIL.
"""
import argparse
import filecmp
import os
import shutil
import signal
import subprocess
import sys
import tempfile

# Run only with --large, as in the fixtures suite (tests/meson.build).
LARGE = {('ch03_bonus_mha_implementations', 'book'), ('ch03_6_2_multihead_attention', 'gpt2_dropout')}
ENV = dict(os.environ, MALLOC_PERTURB_='0')


class Checks:
    def __init__(self):
        self.ok = 0
        self.failed = 0

    def report(self, good, what, why=''):
        if good:
            self.ok += 1
            print(f'ok {what}')
        else:
            self.failed += 1
            print(f'FAIL {what}')
            for line in why.splitlines()[:20]:
                print(f'    - {line}')
        sys.stdout.flush()


def read_table(path):
    """chapters.txt: [(program, [variants])] in table order."""
    table = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].split()
            if len(line) >= 3:
                table.append((line[0], line[2].split(',')))
    return table


def run(argv, cwd='/', timeout=600):
    return subprocess.run(argv, cwd=cwd, env=ENV, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f'line {i + 1}: {x!r}\n  expected: {y!r}'
    return f'{len(a.splitlines())} lines, expected {len(b.splitlines())}'


class Reference:
    """The build tree's chapter on the committed fixture, by its path: run once per argument list."""

    def __init__(self, build, fixtures):
        self.build, self.fixtures, self.cache = build, fixtures, {}

    def output(self, chapter, args):
        key = (chapter, tuple(args))
        if key not in self.cache:
            r = run([os.path.join(self.build, 'chapters', chapter)] + args, cwd=self.build)
            if r.returncode != 0 or r.stderr:
                raise SystemExit(f'install_check: the build tree\'s {chapter} {" ".join(args)}: exit {r.returncode}, '
                                 f'{r.stderr.decode(errors="replace").strip()}')
            self.cache[key] = r.stdout
        return self.cache[key]

    def variant(self, chapter, variant):
        return self.output(chapter, ['--fixture', os.path.join(self.fixtures, f'{chapter}.{variant}.h5')])


def same_run(checks, what, argv, expected):
    r = run(argv)
    good = r.returncode == 0 and not r.stderr and r.stdout == expected
    why = '' if good else (f'exit {r.returncode}, stderr: {r.stderr.decode(errors="replace").strip()}'
                           if r.returncode or r.stderr else first_difference(r.stdout.decode(errors='replace'),
                                                                            expected.decode(errors='replace')))
    checks.report(good, what, why)


def selection(chapter, variants, large):
    """The book variant to run with no option (or None), and a variant by
    name, (value of --fixture, variant) or None: a second variant by its
    name, else the book's by its file name. With `large`, only the LARGE ones."""
    runs = [v for v in variants if ((chapter, v) in LARGE) == large]
    book = variants[0] if runs and runs[0] == variants[0] else None
    second = next((v for v in runs if v != variants[0]), None)
    if second:
        return book, (second, second)
    return book, (f'{chapter}.{book}.h5', book) if book and not large else None


def check_installed(args, table, ref, checks, tmp):
    dest = os.path.join(tmp, 'destdir')
    r = subprocess.run([args.meson, 'install', '-C', args.build, '--no-rebuild', '--quiet', '--destdir', dest],
                       env=ENV, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    checks.report(r.returncode == 0, f'meson install --destdir {dest}',
                  (r.stdout + r.stderr).decode(errors='replace'))
    if r.returncode != 0:
        return
    root = os.path.join(dest, args.prefix.lstrip('/'))
    bindir = os.path.join(root, args.bindir)
    datadir = os.path.join(root, args.datadir)
    docdir = os.path.join(root, args.docdir)
    def runs_as_built(chapter, variants, large):
        """The installed chapter, from cwd /, prints what the build tree's does."""
        exe = os.path.join(bindir, chapter)
        book, named = selection(chapter, variants, large)
        if book:
            same_run(checks, f'installed {chapter}, cwd /, no option (the book variant {book})', [exe],
                     ref.variant(chapter, book))
        if named:
            same_run(checks, f'installed {chapter}, cwd /, --fixture {named[0]}', [exe, '--fixture', named[0]],
                     ref.variant(chapter, named[1]))
        return exe

    if args.large:
        for chapter, variants in table:
            runs_as_built(chapter, variants, True)
        return
    # What the tree holds.
    want = [os.path.join(bindir, c) for c, _ in table]
    want += [os.path.join(datadir, f'{c}.{v}.h5') for c, variants in table for v in variants]
    want += [os.path.join(datadir, f) for f in ('sweep.h5', 'sweep_data_loading.h5')]
    want += [os.path.join(datadir, 'gpt2', f) for f in ('gpt2.tiktoken', 'small-text-sample.txt', 'PROVENANCE.md')]
    want += [os.path.join(docdir, f) for f in ('README.md', os.path.join('book', 'LICENSE.txt'))]
    missing = [p[len(dest):] for p in want if not os.path.isfile(p)]
    checks.report(not missing, f'the installed tree: {len(want)} files (chapters, fixtures, gpt2/, docs)',
                  'missing: ' + ', '.join(missing))
    differ = [p for p in want if p.startswith(datadir) and
              not filecmp.cmp(p, os.path.join(args.fixtures, os.path.relpath(p, datadir)), shallow=False)]
    checks.report(not differ, 'the installed fixtures are the committed ones, byte for byte',
                  'differ: ' + ', '.join(differ))
    for chapter, variants in table:
        exe = runs_as_built(chapter, variants, False)
        # The run reads the installed book fixture: --dump onto it is refused, the file unchanged.
        target = os.path.join(datadir, f'{chapter}.{variants[0]}.h5')
        committed = os.path.join(args.fixtures, f'{chapter}.{variants[0]}.h5')
        r = run([exe, '--dump', target])
        err = r.stderr.decode(errors='replace')
        good = (r.returncode == 1 and err.count('\n') == 1 and 'the fixture being read' in err and target in err
                and not r.stdout and filecmp.cmp(target, committed, shallow=False))
        checks.report(good, f'installed {chapter}, --dump onto the installed book fixture: refused, the file unchanged',
                      f'exit {r.returncode}, stderr: {err.strip()}, stdout {len(r.stdout)} bytes')
    for sweep in args.sweep:
        chapter, file, group = sweep.split(':')
        same_run(checks, f'installed {chapter}, cwd /, --fixture {file} --group {group}',
                 [os.path.join(bindir, chapter), '--fixture', file, '--group', group],
                 ref.output(chapter, ['--fixture', os.path.join(args.fixtures, file), '--group', group]))


def check_copied(args, table, ref, checks, tmp):
    for chapter, variants in table:
        book, named = selection(chapter, variants, args.large)
        if not book and not named:
            continue
        alone = tempfile.mkdtemp(prefix=f'{chapter}-', dir=tmp)
        exe = os.path.join(alone, chapter)
        shutil.copy2(os.path.join(args.build, 'chapters', chapter), exe)
        if book:
            same_run(checks, f'{chapter} copied alone to {alone}, cwd /, no option (the book variant {book}, built in)',
                     [exe], ref.variant(chapter, book))
        if named:
            same_run(checks, f'{chapter} copied alone, cwd /, --fixture {named[0]} (built in)',
                     [exe, '--fixture', named[0]], ref.variant(chapter, named[1]))
        if args.large:
            shutil.rmtree(alone)
            continue
        r = run([exe, '--fixture', 'no_such_variant'])
        err = r.stderr.decode(errors='replace')
        good = (r.returncode == 1 and not r.stdout and err.count('\n') == 1 and
                all(s in err for s in (f'{chapter}: no_such_variant: --fixture', 'expected', 'found',
                                       f'beside the program ({alone})', 'none built in')))
        checks.report(good, f'{chapter} copied alone, --fixture no_such_variant: one line saying where it looked',
                      f'exit {r.returncode}, stdout {len(r.stdout)} bytes, stderr: {err.strip()}')
        shutil.rmtree(alone)


def main():
    p = argparse.ArgumentParser()
    for opt in ('--build', '--chapters', '--fixtures', '--prefix', '--bindir', '--datadir', '--docdir'):
        p.add_argument(opt, required=True)
    p.add_argument('--meson', default='meson')
    p.add_argument('--sweep', action='append', default=[])
    p.add_argument('--large', action='store_true')
    p.add_argument('mode', choices=['installed', 'copied'])
    args = p.parse_args()
    table = read_table(args.chapters)
    ref = Reference(os.path.abspath(args.build), os.path.abspath(args.fixtures))
    checks = Checks()

    def stop(sig, frame):
        raise SystemExit(f'install_check: stopped by signal {sig}')
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    tmp = tempfile.mkdtemp(prefix='litattn-install-')
    try:
        (check_installed if args.mode == 'installed' else check_copied)(args, table, ref, checks, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        checks.report(not os.path.exists(tmp), f'the temporary directory {tmp} removed')
    print(f'{checks.ok + checks.failed} checks: {checks.ok} ok, {checks.failed} FAIL ({len(table)} chapters; '
          f'{"the large variants alone" if args.large else "all but the large variants (--large: the bonus book variant and gpt2_dropout)"})')
    return 1 if checks.failed or not checks.ok else 0


if __name__ == '__main__':
    sys.exit(main())
