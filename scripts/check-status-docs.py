#!/usr/bin/env python3
"""Checks that the comment of every public function returning uk_status
(`UK_API uk_status ...` in include/ukern/ukern.h and runtime.h) names the
statuses it returns: at least one UK_OK / UK_ERR_* name. Declarations
written back to back under one comment share it.

usage: check-status-docs.py [header ...]   exit 1 listing the functions whose
                                           comment names no status
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADERS = [os.path.join(ROOT, "include", "ukern", h) for h in ("ukern.h", "runtime.h")]
STATUS = re.compile(r"\bUK_(OK|ERR_[A-Z_]+)\b")


def unnamed(path):
    """(line, function) of each uk_status function whose comment names no status."""
    with open(path) as f:
        lines = f.read().split("\n")
    missing = []
    comment = None  # text of the comment that applies to the next declaration
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("/*"):
            block = [s]
            while "*/" not in lines[i] and i + 1 < len(lines):
                i += 1
                block.append(lines[i])
            comment = "\n".join(block)
            i += 1
            continue
        if not s or s.startswith("#"):
            comment = None
            i += 1
            continue
        if s.startswith("UK_API"):
            start = i
            decl = s
            while not lines[i].rstrip().endswith(";") and i + 1 < len(lines):
                i += 1
                decl += " " + lines[i].strip()
            m = re.match(r"UK_API\s+uk_status\s+(\w+)\s*\(", decl)
            if m and not (comment and STATUS.search(comment)):
                missing.append((start + 1, m.group(1)))
            i += 1  # the comment stays for a declaration right below
            continue
        comment = None
        i += 1
    return missing


def main():
    headers = sys.argv[1:] or HEADERS
    bad = []
    count = 0
    for h in headers:
        with open(h) as f:
            count += len(re.findall(r"^UK_API\s+uk_status\s", f.read(), flags=re.M))
        bad += [(os.path.relpath(h, ROOT), line, fn) for line, fn in unnamed(h)]
    for h, line, fn in bad:
        sys.stderr.write(f"{h}:{line}: {fn}: its comment names no status it returns (UK_OK, UK_ERR_...)\n")
    if bad:
        sys.stderr.write(f"{len(bad)} of {count} uk_status functions name no status\n")
        return 1
    if count == 0:
        sys.stderr.write("no uk_status function found: the check would prove nothing\n")
        return 1
    print(f"all {count} uk_status functions name their statuses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
