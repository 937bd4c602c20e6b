#!/usr/bin/env python3
"""check_layers.py: lib/'s units call and include only down its layers, and
never in a circle.

    check_layers.py --lib LIB_DIR --chapters CHAPTERS_DIR --nm NM
                    --layer NAME:USES ... ARCHIVE...

A unit is a .c file with the .h of the same name (or a header alone, such
as random/random_source.h); its layer is the folder of lib/ it is in. The
layers and what each may use come from lib/meson.build (`lib_layers`), as
--layer base: --layer random:base --layer tensor:base,random ...

Two graphs are built over the units:
  - includes: every `#include "..."` line of every file under lib/;
  - calls: for every object file of the ARCHIVEs (the layers' static
    libraries, as meson built them), `nm` gives the symbols it defines and
    the ones it leaves undefined; an undefined symbol that another unit's
    object defines is a call (or a use of its data). A tie that a header
    hides from the includes (a prototype written by hand) shows here.
The check fails, naming the files, lines and symbols, on
  - an edge from a unit to a unit of a layer its own layer may not use
    (a lower layer calling or including a higher one);
  - a circle between units, of calls and includes together (the units in
    it, and one path around it);
  - a folder of lib/ that is not in the layer table, a source file no
    archive compiled, an object that is no unit's;
  - a chapter that includes a header of lib/ other than chapter.h.
Exit 0 when every check holds, 1 otherwise; it prints the graph's size.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def fail_list(problems, what):
    print(f'FAIL: {what}:')
    for p in problems:
        print(f'  {p}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib', required=True)
    ap.add_argument('--chapters', required=True)
    ap.add_argument('--nm', default='nm')
    ap.add_argument('--layer', action='append', default=[], help='NAME:USES (USES comma-separated)')
    ap.add_argument('--not-built', action='append', default=[],
                    help='a source of lib/ (LAYER/FILE.c) the build leaves out for its host (another ISA\'s)')
    ap.add_argument('archives', nargs='+')
    args = ap.parse_args()

    # --- the layer table -------------------------------------------------------
    layers, order = {}, []
    for spec in args.layer:
        name, _, uses = spec.partition(':')
        layers[name] = {u for u in uses.split(',') if u}
        order.append(name)
    problems = []
    for name, uses in layers.items():
        for u in uses - set(layers):
            problems.append(f'layer {name} may use {u}, which is no layer')

    # --- the units: lib/<layer>/<stem>.c and .h ------------------------------------
    units = {}   # stem -> {'layer': ..., 'files': [relative paths]}
    for entry in sorted(os.listdir(args.lib)):
        folder = os.path.join(args.lib, entry)
        if not os.path.isdir(folder):
            if entry.endswith(('.c', '.h')):
                problems.append(f'lib/{entry} is in no layer (lib/ holds only the layer folders)')
            continue
        if entry not in layers:
            problems.append(f'lib/{entry}/ is not in the layer table (lib/meson.build, lib_layers)')
            continue
        for f in sorted(os.listdir(folder)):
            if not f.endswith(('.c', '.h')):
                continue
            stem = f[:-2]
            u = units.setdefault(stem, {'layer': entry, 'files': []})
            if u['layer'] != entry:
                problems.append(f'{stem}: lib/{u["layer"]}/ and lib/{entry}/ both have a file of that name')
            u['files'].append(f'{entry}/{f}')

    def unit_of_header(path):
        stem = os.path.basename(path)
        return stem[:-2] if stem.endswith('.h') and stem[:-2] in units else None

    # edges[(a, b)] = [why, ...]
    edges = {}

    def edge(a, b, why):
        if a != b:
            edges.setdefault((a, b), []).append(why)

    # --- includes ---------------------------------------------------------------------
    for stem, u in units.items():
        for rel in u['files']:
            with open(os.path.join(args.lib, rel), encoding='utf-8') as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = unit_of_header(m.group(1))
                    if target is None:
                        problems.append(f'lib/{rel}:{n}: #include "{m.group(1)}": no header of lib/ by that name')
                        continue
                    edge(stem, target, f'lib/{rel}:{n} includes "{m.group(1)}"')

    # --- calls: nm over the archives ---------------------------------------------------
    defined, undefined = {}, {}   # symbol -> unit; unit -> set of symbols
    compiled = set()
    for archive in args.archives:
        out = subprocess.run([args.nm, '-A', archive], capture_output=True, text=True)
        if out.returncode != 0:
            print(f'FAIL: {args.nm} -A {archive}: {out.stderr.strip()}')
            return 1
        for line in out.stdout.splitlines():
            # "archive:member.o:0000 T name" or "archive:member.o:         U name"
            head, _, rest = line.rpartition(':')
            parts = rest.split()
            if len(parts) < 2 or not head:
                continue
            member = os.path.basename(head.split(':', 1)[1] if ':' in head else head)
            if not member.endswith('.c.o'):
                continue
            stem = member[:-4]
            if stem not in units:  # meson names the object of lib/<folder>/<stem>.c <folder>_<stem>.c.o
                stem = next((stem[len(f) + 1:] for f in layers if stem.startswith(f + '_')
                             and units.get(stem[len(f) + 1:], {}).get('layer') == f), stem)
            if stem not in units:
                problems.append(f'{archive}: object {member} is the object of no unit of lib/')
                continue
            compiled.add(stem)
            kind, sym = parts[-2], parts[-1]
            if kind == 'U':
                undefined.setdefault(stem, set()).add(sym)
            elif kind.isupper() and kind not in 'UW':
                if sym in defined and defined[sym] != stem:
                    problems.append(f'{sym} is defined by both {defined[sym]} and {stem}')
                defined[sym] = stem
    for stem, u in units.items():
        not_built = f'{u["layer"]}/{stem}.c' in args.not_built
        if any(f.endswith('.c') for f in u['files']) and stem not in compiled and not not_built:
            problems.append(f'lib/{u["layer"]}/{stem}.c is in none of the archives checked')
    for stem, syms in undefined.items():
        for sym in sorted(syms):
            if sym in defined:
                edge(stem, defined[sym], f'{stem}.c calls {sym} ({defined[sym]}.c)')

    # --- upward (or sideways into a layer not allowed) edges -------------------------
    for (a, b), why in sorted(edges.items()):
        la, lb = units[a]['layer'], units[b]['layer']
        if la != lb and lb not in layers[la]:
            problems.append(f'{la}/{a} -> {lb}/{b}: {la} may not use {lb} '
                            f'({la} may use: {", ".join(sorted(layers[la])) or "libc only"}); ' + '; '.join(why[:3]))

    # --- circles: strongly connected components (Tarjan), then one path around ----------
    succ = {u: sorted(b for (a, b) in edges if a == u) for u in units}
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        # iterative Tarjan
        work = [(v, 0)]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, i = work[-1]
            if i < len(succ[node]):
                work[-1] = (node, i + 1)
                w = succ[node][i]
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, 0))
                elif w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    sccs.append(comp)

    for u in sorted(units):
        if u not in index:
            strong(u)
    for comp in sccs:
        if len(comp) < 2:
            continue
        members = set(comp)
        start = min(comp)
        # shortest path from start back to start inside the component (BFS)
        prev, frontier, path = {start: None}, [start], None
        while frontier and path is None:
            nxt = []
            for node in frontier:
                for w in succ[node]:
                    if w not in members:
                        continue
                    if w == start:
                        path = [node]
                        while prev[path[-1]] is not None:
                            path.append(prev[path[-1]])
                        path.reverse()
                        break
                    if w not in prev:
                        prev[w] = node
                        nxt.append(w)
                if path:
                    break
            frontier = nxt
        loop = path + [start]
        steps = [f'{a} -> {b} ({edges[(a, b)][0]})' for a, b in zip(loop, loop[1:])]
        problems.append(f'a circle between {len(comp)} units ({", ".join(sorted(comp))}): ' + '; '.join(steps))

    # --- chapters include chapter.h only ---------------------------------------------
    for f in sorted(os.listdir(args.chapters)):
        if not f.endswith('.c'):
            continue
        with open(os.path.join(args.chapters, f), encoding='utf-8') as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if m and m.group(1) != 'chapter.h':
                    problems.append(f'chapters/{f}:{n}: #include "{m.group(1)}": a chapter includes chapter.h only')

    n_calls = sum(1 for w in edges.values() if any(' calls ' in x for x in w))
    print(f'{len(units)} units in {len(layers)} layers, {len(edges)} edges between units ({n_calls} with calls)')
    for name in order:
        print(f'  {name:8} may use {", ".join(sorted(layers[name], key=order.index)) or "libc only"}')
    if problems:
        fail_list(problems, f'{len(problems)} problem(s) in the layering of lib/')
        return 1
    print('OK: no circle, no edge up or across to a layer not allowed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
