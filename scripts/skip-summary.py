#!/usr/bin/env python3
"""Prints why tests were skipped, once per reason: reads the output of every
test from ctest's log (<build>/Testing/Temporary/LastTest.log), where a test
that skips prints `SKIP: reason` (gpu tests without a GPU)."""
import re
import sys


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "build/Testing/Temporary/LastTest.log"
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError as e:
        print(f"skip summary: cannot read {path}: {e}", file=sys.stderr)
        return 0
    reasons = {}
    test = None
    in_output = False
    for line in text.splitlines():
        m = re.match(r"^\d+/\d+ Test: (.+)$", line)
        if m:
            test, in_output = m.group(1).strip(), False
            continue
        if line == "Output:" or line == "<end of output>":
            in_output = line == "Output:"
            continue
        m = re.match(r"^SKIP:\s*(.*)$", line)
        if m and test and in_output:
            names = reasons.setdefault(m.group(1).strip(), [])
            if test not in names:
                names.append(test)
    if not reasons:
        return 0
    total = len({t for names in reasons.values() for t in names})
    print(f"skipped tests and why ({total} test{'s' if total != 1 else ''}):")
    for reason, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(names):3d} x {reason}")
        print("        " + ", ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
