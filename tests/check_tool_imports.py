#!/usr/bin/env python3
"""check_tool_imports.py: tools/'s Python modules import only down its
folders, and never in a circle.

    check_tool_imports.py --tools TOOLS_DIR [--print] --folder NAME:USES ...

e.g. --folder export: --folder cases:export --folder view:export,cases.
A module is a .py file under one of the folders named. A folder with an
__init__.py is a package: its modules are `folder.name` and import each
other relatively or by that name. A folder without one is put on sys.path
by its programs: its modules are imported by their bare names.

The graph is read from the source (ast), without running it: every
`import X`, `from X import Y` (Y a module or a name of X) and relative
import, wherever it stands (in a function too), and importlib.import_module
of a name the module spells out (f"{__package__}.{stem}" for each stem of
a tuple it assigns). An import of something that is not a module of tools/
(the standard library, torch) is no edge. The check fails, naming the
modules, on
  - an edge from a folder to one it may not use (USES: the folders it may
    import besides its own);
  - a circle between modules (the modules in it, and one path around it);
  - a .py file in a folder not named, or a module imported by a name that
    two folders' modules could answer to.
Exit 0 when every check holds, 1 otherwise; it prints the graph's size,
and with --print every edge, folder by folder.
"""
import argparse
import ast
import os
import sys


def modules_of(tools, folders):
    """{module name: (folder, path)}; problems."""
    mods, problems = {}, []
    for entry in sorted(os.listdir(tools)):
        path = os.path.join(tools, entry)
        if entry.endswith(".py"):
            problems.append(f"tools/{entry}: a Python file outside the folders")
        if not os.path.isdir(path) or entry.startswith(".") or entry in ("node_modules", "__pycache__"):
            continue
        pys = [os.path.join(d, f) for d, _, fs in os.walk(path) if "__pycache__" not in d for f in fs
               if f.endswith(".py")]
        if not pys:
            continue
        if entry not in folders:
            problems.append(f"tools/{entry}/: Python modules in a folder the table does not name")
            continue
        package = os.path.exists(os.path.join(path, "__init__.py"))
        for p in sorted(pys):
            rel = os.path.relpath(p, path)[:-3].replace(os.sep, ".")
            if package:
                name = entry if rel == "__init__" else f"{entry}.{rel}"
            else:
                name = rel
            if name in mods:
                problems.append(f"{os.path.relpath(p, tools)}: module {name} is also {mods[name][1]}")
            mods[name] = (entry, os.path.relpath(p, os.path.dirname(tools)))
    return mods, problems


def imports_of(name, path, mods, is_package):
    """The modules of tools/ that module `name` imports: {module: line}."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = name if is_package else name.rpartition(".")[0]
    out = {}

    def add(target, line):
        # `import a.b.c` binds a, a.b and a.b.c: each that is a module of tools/.
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            t = ".".join(parts[:i])
            if t in mods and t != name:
                out.setdefault(t, line)

    tuples = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)):
            strs = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            for t in node.targets:
                if isinstance(t, ast.Name) and strs:
                    tuples[t.id] = strs
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            add(mod, node.lineno)
            for a in node.names:
                add(f"{mod}.{a.name}", node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                add(arg.value, node.lineno)
            elif isinstance(arg, ast.JoinedStr):
                # f"{__package__}.{stem}": every stem of a tuple this module assigns
                text = "".join(v.value if isinstance(v, ast.Constant) else "\0" for v in arg.values)
                if text == "\0.\0":
                    for stems in tuples.values():
                        for s in stems:
                            add(f"{package}.{s}", node.lineno)
    return out


def find_circle(graph):
    """One circle of graph ({node: set of nodes}) as a list of nodes, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", required=True)
    ap.add_argument("--folder", action="append", default=[], help="NAME:USES (USES comma-separated, may be empty)")
    ap.add_argument("--print", action="store_true", help="print every edge")
    args = ap.parse_args(argv)
    uses = {}
    for f in args.folder:
        name, _, u = f.partition(":")
        uses[name] = {x for x in u.split(",") if x}
    tools = os.path.abspath(args.tools)
    mods, problems = modules_of(tools, uses)
    graph, lines = {}, {}
    for name, (folder, rel) in mods.items():
        path = os.path.join(os.path.dirname(tools), rel)
        imp = imports_of(name, path, mods, os.path.basename(path) == "__init__.py")
        graph[name] = set(imp)
        for t, line in imp.items():
            lines[(name, t)] = line
    nedges = sum(len(v) for v in graph.values())
    for (a, b), line in sorted(lines.items()):
        fa, fb = mods[a][0], mods[b][0]
        if fa != fb and fb not in uses[fa]:
            problems.append(f"{mods[a][1]}:{line}: {a} ({fa}/) imports {b} ({fb}/), "
                            f"but {fa}/ may use only {', '.join(sorted(uses[fa])) or 'itself'}")
    circle = find_circle(graph)
    if circle:
        problems.append("a circle of imports: " + " -> ".join(
            f"{n} ({mods[n][1]}:{lines[(n, circle[i + 1])]})" if i + 1 < len(circle) else n
            for i, n in enumerate(circle)))
    folder_edges = {}
    for (a, b) in lines:
        if mods[a][0] != mods[b][0]:
            folder_edges.setdefault(mods[a][0], set()).add(mods[b][0])
    if args.print:
        for folder in sorted(uses):
            print(f"{folder}/ (may use: {', '.join(sorted(uses[folder])) or 'itself only'})")
            for a in sorted(n for n in mods if mods[n][0] == folder):
                if graph[a]:
                    print(f"  {a} -> {', '.join(sorted(graph[a]))}")
    print(f"tools/: {len(mods)} modules in {len({f for f, _ in mods.values()})} folders, {nedges} imports; "
          "between folders: " + ("; ".join(f"{a} -> {', '.join(sorted(b))}" for a, b in sorted(folder_edges.items()))
                                 or "none"))
    if problems:
        for p in problems:
            print(f"FAIL: {p}")
        return 1
    print("ok: every import goes down the folders' table, and no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
