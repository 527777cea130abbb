#!/usr/bin/env python3
"""Walks the static call graph of ukern's C sources from public entry points.

For each entry (default: the three kernel kinds' *_call), every function it can reach
through direct calls among the functions defined under --src (static ones resolved in
their own file first; calls through the driver table or function pointers are not
followed), and counts: functions reached ("stays"), files they live in, their return
statements and lines. Then the longest functions of the tree. Issue 24 measures the
pipeline with it before and after a change:

  scripts/call-walk.py [--src DIR] [--top N] [--json] [entry ...]

The same parser as scripts/include-graph.py's idea, kept simple: a definition is a line
at column 0 that names a function before "(" and opens its body with "{"; comments and
strings are blanked first so braces and names inside them do not count.
"""
import argparse
import json
import os
import re
import sys

COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
DEFN = re.compile(r'^(?:static\s+)?(?:inline\s+)?(?:[A-Za-z_][\w \t\*]*?[\s\*])([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*'
                  r'(?:UK__\w+(?:\([^)]*\))?\s*)*\{', re.M)
CALL = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
RETURN = re.compile(r'\breturn\b')
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "_Static_assert", "_Alignof"}
DEFAULT_ENTRIES = ["uk_elementwise_call", "uk_reduction_call", "uk_fusion_call"]


def blank(text):
    """Comments and literals replaced by spaces of the same length (line numbers hold)."""
    keep = lambda m: re.sub(r'[^\n]', ' ', m.group(0))
    return STRING.sub(keep, COMMENT.sub(keep, text))


def functions(src):
    """{(file, name): {"body", "lines", "returns", "static"}} for every .c file under src."""
    out = {}
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            path = os.path.join(root, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = blank(fh.read())
            rel = os.path.relpath(path, src)
            for m in DEFN.finditer(text):
                name = m.group(1)
                if name in KEYWORDS:
                    continue
                depth, i = 0, m.end() - 1
                while i < len(text):
                    if text[i] == "{":
                        depth += 1
                    elif text[i] == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    i += 1
                body = text[m.end():i]
                out[(rel, name)] = {"body": body, "lines": text.count("\n", m.start(), i) + 1,
                                    "returns": len(RETURN.findall(body)),
                                    "static": text[m.start():m.end()].lstrip().startswith("static")}
    return out


def resolver(funcs):
    by_name = {}
    for (f, n), d in funcs.items():
        by_name.setdefault(n, []).append((f, d["static"]))

    def resolve(caller_file, name):
        cands = by_name.get(name, [])
        same = [f for f, _ in cands if f == caller_file]
        if same:
            return (same[0], name)
        public = [f for f, st in cands if not st]
        return (public[0], name) if public else None
    return resolve


def walk(funcs, entry):
    resolve = resolver(funcs)
    start = [k for k in funcs if k[1] == entry and not funcs[k]["static"]]
    if not start:
        return None
    seen, todo = set(start), list(start)
    while todo:
        f, n = todo.pop()
        for callee in set(CALL.findall(funcs[(f, n)]["body"])):
            if callee in KEYWORDS:
                continue
            k = resolve(f, callee)
            if k and k not in seen:
                seen.add(k)
                todo.append(k)
    return {"entry": entry, "stays": len(seen), "files": len({f for f, _ in seen}),
            "returns": sum(funcs[k]["returns"] for k in seen), "lines": sum(funcs[k]["lines"] for k in seen)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--src", default=os.path.join(here, "..", "src"))
    p.add_argument("--top", type=int, default=10, help="longest functions to list")
    p.add_argument("--json", action="store_true")
    p.add_argument("entries", nargs="*", default=DEFAULT_ENTRIES)
    a = p.parse_args(argv)
    funcs = functions(a.src)
    walks = [w for w in (walk(funcs, e) for e in a.entries) if w]
    longest = sorted(((d["lines"], f, n) for (f, n), d in funcs.items()), reverse=True)[:a.top]
    if a.json:
        print(json.dumps({"functions": len(funcs), "walks": walks,
                          "longest": [{"lines": l, "file": f, "name": n} for l, f, n in longest]}, indent=1))
        return 0
    print(f"{len(funcs)} functions under {os.path.normpath(a.src)}")
    print(f"{'entry':28} {'stays':>6} {'files':>6} {'returns':>8} {'lines':>7}")
    for w in walks:
        print(f"{w['entry']:28} {w['stays']:6} {w['files']:6} {w['returns']:8} {w['lines']:7}")
    print("longest functions:")
    for l, f, n in longest:
        print(f"  {l:5} {f}:{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
