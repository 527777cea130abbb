#!/usr/bin/env python3
"""call_walk.py CALLGRIND_OUT SRC_ROOT [-v]: the ukern functions one measured
call entered (callgrind over a -O0 build, so nothing is inlined; call_walk.sh
makes it): distinct functions ("stays"), the distinct files they are in, and
the return statements in those functions' bodies. -v lists them."""
import re, sys, os, collections
out, root = sys.argv[1], os.path.realpath(sys.argv[2])
fl = fn = None
cfl = None
funcs = {}          # (file, fn) -> file
calls = collections.Counter()
for line in open(out):
    line = line.rstrip("\n")
    if line.startswith("fl="):
        fl = line[3:]
    elif line.startswith("fn="):
        fn = line[3:]
        funcs.setdefault((fl, fn), fl)
        cfl = None
    elif line.startswith("cfl=") or line.startswith("cfi="):
        cfl = line[4:]
    elif line.startswith("cfn="):
        key = (cfl or fl, line[4:])
        funcs.setdefault(key, key[0])
    elif line.startswith("calls="):
        calls[key] += int(line[6:].split()[0])
        cfl = None
def ours(path):
    return path and os.path.realpath(path).startswith(os.path.join(root, "src") + os.sep)
mine = {f: p for f, p in funcs.items() if ours(p) and (calls[f] > 0)}
def returns(name, path):
    text = open(path, errors="replace").read()
    m = re.search(r'^(?:static )?(?:inline )?[A-Za-z_][\w \t*]*\b' + re.escape(name) + r'\s*\([^;{]*\)\s*\{', text, re.M)
    if not m: return 0
    i, depth = m.end() - 1, 0
    for j in range(i, len(text)):
        if text[j] == "{": depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0: break
    body = re.sub(r'/\*.*?\*/|//[^\n]*', '', text[i:j + 1], flags=re.S)
    return len(re.findall(r'\breturn\b', body)) or 1  # falling off the end is one return
files = sorted({os.path.relpath(os.path.realpath(p), root) for p in mine.values()})
nret = sum(returns(f[1], p) for f, p in mine.items())
print(f"stays {len(mine)}, files {len(files)}, returns {nret}")
if "-v" in sys.argv:
    for f, p in sorted(mine.items(), key=lambda x: x[1]):
        print(f"  {os.path.relpath(os.path.realpath(p), root)}:{f[1]} ret={returns(f[1], p)}")
