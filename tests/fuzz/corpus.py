#!/usr/bin/env python3
"""One-file fuzz corpora (tests/fuzz/corpus/<target>.corpus).

Format: the line "ukern-corpus 1", then records, each
    <name> <length>\\n<length bytes>\\n
Names are [A-Za-z0-9._-]+. A name that is 40 hex digits is a libFuzzer
input (its SHA-1); any other name is a named regression input, kept by
every merge. tests/fuzz/replay.c reads the same format.

    corpus.py unpack FILE DIR     records -> DIR/<name> (DIR created)
    corpus.py pack DIR FILE       DIR's files -> FILE, keeping FILE's named records
    corpus.py add FILE NAME PATH  adds (or replaces) a named record
    corpus.py list FILE
"""
import hashlib
import os
import re
import sys

MAGIC = b"ukern-corpus 1\n"
HASH = re.compile(r"^[0-9a-f]{40}$")
NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def read(path):
    if not os.path.exists(path):
        return []
    data = open(path, "rb").read()
    if not data.startswith(MAGIC):
        sys.exit(f"{path}: not a corpus file (no '{MAGIC.decode().strip()}' line)")
    out, at = [], len(MAGIC)
    while at < len(data):
        nl = data.index(b"\n", at)
        name, n = data[at:nl].decode().rsplit(" ", 1)
        n = int(n)
        body = data[nl + 1:nl + 1 + n]
        if len(body) != n or data[nl + 1 + n:nl + 2 + n] != b"\n":
            sys.exit(f"{path}: record '{name}' at byte {at} is cut short")
        out.append((name, body))
        at = nl + 2 + n
    return out


def write(path, records):
    named = sorted((r for r in records if not HASH.match(r[0])), key=lambda r: r[0])
    hashed = sorted((r for r in records if HASH.match(r[0])), key=lambda r: r[0])
    with open(path + ".tmp", "wb") as f:
        f.write(MAGIC)
        for name, body in named + hashed:
            if not NAME.match(name):
                sys.exit(f"bad record name {name!r}")
            f.write(b"%s %d\n" % (name.encode(), len(body)) + body + b"\n")
    os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd = argv[1]
    if cmd == "unpack":
        os.makedirs(argv[3], exist_ok=True)
        for name, body in read(argv[2]):
            open(os.path.join(argv[3], name), "wb").write(body)
    elif cmd == "pack":
        named = [r for r in read(argv[3]) if not HASH.match(r[0])]
        known = {hashlib.sha1(b).hexdigest() for _, b in named}
        recs = list(named)
        for fn in sorted(os.listdir(argv[2])):
            body = open(os.path.join(argv[2], fn), "rb").read()
            h = hashlib.sha1(body).hexdigest()
            if h not in known:  # a named record's bytes are not repeated under their hash
                known.add(h)
                recs.append((h, body))
        write(argv[3], recs)
        print(f"{argv[3]}: {len(named)} named + {len(recs) - len(named)} inputs")
    elif cmd == "add":
        recs = [r for r in read(argv[2]) if r[0] != argv[3]]
        recs.append((argv[3], open(argv[4], "rb").read()))
        write(argv[2], recs)
    elif cmd == "list":
        for name, body in read(argv[2]):
            print(name, len(body))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
