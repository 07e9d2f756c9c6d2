#!/usr/bin/env python3
"""Fails on include cycles between the source files of include/, lib/ and
runtime/: a file and its header are one unit (Foo.cpp with Foo.h, and a
public header include/metac/X/Foo.h with lib/X/Foo.cpp), and unit A
depends on unit B when a file of A includes a header of B. Prints every
cycle (strongly connected set of units) found; exit 1 if any."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".inc.h")


def unit_of(path, root):
    rel = os.path.relpath(path, root)
    stem, _ = os.path.splitext(rel)
    parts = stem.split(os.sep)
    # include/metac/Dir/Foo.h belongs with lib/Dir/Foo.cpp.
    if parts[:2] == ["include", "metac"]:
        parts = ["lib"] + parts[2:]
    # runtime/include/metart/foo.h is the runtime's public API: its own unit.
    return "/".join(parts)


def files(root):
    for top in ("include", "lib", "runtime"):
        for directory, _, names in os.walk(os.path.join(root, top)):
            if "/test" in directory[len(root):] or "/tools" in directory[len(root):]:
                continue
            for name in names:
                if name.endswith(SOURCES):
                    yield os.path.join(directory, name)


def resolve(include, source, root):
    candidates = [os.path.join(os.path.dirname(source), include),
                  os.path.join(root, "include", include),
                  os.path.join(root, "runtime", "include", include)]
    for c in candidates:
        if os.path.isfile(c):
            return os.path.normpath(c)
    return None


def strongly_connected(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    graph, why = {}, {}
    for path in files(root):
        text = open(path, encoding="utf-8", errors="replace").read()
        a = unit_of(path, root)
        graph.setdefault(a, set())
        for include in INCLUDE.findall(text):
            target = resolve(include, path, root)
            if not target or target.endswith(".inc"):
                continue
            b = unit_of(target, root)
            if a != b:
                graph[a].add(b)
                why.setdefault((a, b), os.path.relpath(path, root) + " includes " + include)
    cycles = strongly_connected(graph)
    for cycle in cycles:
        print("include cycle: " + ", ".join(cycle))
        members = set(cycle)
        for a in cycle:
            for b in sorted(graph[a] & members):
                print(f"  {why[(a, b)]}")
    print(f"{len(graph)} units, {len(cycles)} include cycles")
    sys.exit(1 if cycles else 0)


if __name__ == "__main__":
    main()
