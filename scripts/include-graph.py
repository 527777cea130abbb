#!/usr/bin/env python3
"""The dependency graph of ukern's source files, and its cycles.

A node is a file under src/. X -> Y.h when X includes Y.h, and X.c -> Y.c
when X.c calls a function that Y.c defines (declared in Y.h, in another
header, or in the public ukern.h; a function is one named uk_*, uk__* or,
for the Python extension's python/src, pyk_*): a header stands for the types and
declarations it holds, a .c file for its code. Every file should stand above what it uses:
the graph has no cycle.

  scripts/include-graph.py [--src DIR] [--dir runtime] [--check]

prints each node's edges (of --dir only, default all of src/) and then the
cycles (strongly connected components of more than one node, each with one
closed path through it). --check prints only the cycles and exits 1 when
there is one (tests/layers.cmake runs it).
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)
# A definition: a line starting a declarator at column 0, not static, with
# the function name before "(" and a "{" closing the signature.
DEFN = re.compile(r'^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])((?:pyk_|uk_?_?)\w+)\s*\(([^;{]*?)\)\s*(?:UK__\w+\([^)]*\)\s*)?\{',
                  re.M)
IDENT = re.compile(r'\b((?:pyk_|uk_?_?)\w+)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip(text):
    return STRING.sub('""', COMMENT.sub(" ", text))


def graph(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith((".c", ".h")):
                p = os.path.join(root, n)
                files[os.path.relpath(p, src)] = read(p)
    node = lambda rel: rel[:-2] + (".h" if rel.endswith(".h") else ".c")
    nodes = sorted(files)
    defined = {}
    for rel, text in files.items():
        if rel.endswith(".c"):
            for m in DEFN.finditer(strip(text)):
                defined.setdefault(m.group(1), node(rel))
    edges = {n: set() for n in nodes}
    for rel, text in files.items():
        a = node(rel)
        for inc in INCLUDE.findall(text):
            if inc + ".h" in edges and inc + ".h" != a:
                edges[a].add(inc + ".h")
        if rel.endswith(".c"):  # calls; a header's declarations are no use
            for name in set(IDENT.findall(strip(text))):
                b = defined.get(name)
                if b and b != a:
                    edges[a].add(b)
    return nodes, edges


def cycles(nodes, edges):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def path_in(comp, edges):
    """One closed path through a component, from its first node."""
    members, start = set(comp), comp[0]
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w == start:
                p = [v]
                while prev[p[-1]] is not None:
                    p.append(prev[p[-1]])
                return list(reversed(p)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--src", default=os.path.join(here, "..", "src"))
    ap.add_argument("--dir", default="", help="print the edges of this folder of src/ only")
    ap.add_argument("--check", action="store_true", help="only the cycles; exit 1 when there is one")
    a = ap.parse_args()
    nodes, edges = graph(a.src)
    if not a.check:
        for n in nodes:
            if n.startswith(a.dir):
                print(f"{n} -> {' '.join(sorted(edges[n])) or '(nothing)'}")
    found = cycles(nodes, edges)
    for comp in found:
        print(f"cycle of {len(comp)}: {' -> '.join(path_in(comp, edges))}  (all: {' '.join(comp)})")
    if not found:
        print(f"no cycle among {len(nodes)} files")
    return 1 if found and a.check else 0


if __name__ == "__main__":
    sys.exit(main())
