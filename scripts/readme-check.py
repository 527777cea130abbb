#!/usr/bin/env python3
"""Keeps the README a newcomer's path that stays true (issue 24 item 5).

  scripts/readme-check.py [--check]   fails, saying why, when the README
      - is 250 lines or longer,
      - lacks its two commands (scripts/demo.sh, scripts/test.sh), the
        "## Installing" block tests/test_install.sh runs, or the
        "## More than one GPU" section,
      - shows a C example that is not the marked part of examples/squared_diff.c,
    or when a file path named in the README, docs/*.md or bench/README.md
    (a link, or `bench/...`, `docs/...`, `examples/...`, `scripts/...` in
    backquotes) does not exist.
  scripts/readme-check.py --write     rewrites the README's C example from the file.
"""
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
EXAMPLE = "examples/squared_diff.c"
BEGIN = "/* README.md shows from here ... */"
END = "/* ... to here (scripts/readme-check.py) */"
MARK = "<!-- examples/squared_diff.c: scripts/readme-check.py --write refreshes this block -->"
MAX_LINES = 250
# A path in backquotes that must exist: these top directories, then no spaces.
TICKED = re.compile(r"`((?:bench|docs|examples|scripts)/[^`\s]*)")
LINKED = re.compile(r"\]\(([^)#\s]+)\)")


def example_part():
    lines = open(os.path.join(ROOT, EXAMPLE)).read().split("\n")
    begin = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    end = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begin) != 1 or len(end) != 1 or begin[0] > end[0]:
        raise SystemExit(f"{EXAMPLE}: want one line {BEGIN!r}, then one line {END!r}")
    return textwrap.dedent("\n".join(lines[begin[0] + 1:end[0]]) + "\n")


def readme_block(text):
    """(start, end) offsets of the C block after MARK, or None."""
    at = text.find(MARK)
    if at < 0:
        return None
    m = re.compile(r"```c\n(.*?)```", re.S).search(text, at)
    return (m.start(1), m.end(1)) if m else None


def dangling(path, text):
    """Paths named in text that do not exist (relative to the file, or to the root)."""
    missing = []
    base = os.path.dirname(path)
    for target in LINKED.findall(re.sub(r"`[^`\n]*`", "", text)):  # not in code spans
        if "://" in target:
            continue
        if not os.path.exists(os.path.join(base, target)):
            missing.append(target)
    for target in TICKED.findall(text):
        target = target.rstrip(".,;:)'\"")
        if "*" in target or "<" in target or "X" in target.split("/")[-1][:1]:
            continue  # a pattern or placeholder, not a file
        if not os.path.exists(os.path.join(ROOT, target)):
            missing.append(target)
    return missing


def main():
    write = "--write" in sys.argv[1:]
    text = open(README).read()
    span = readme_block(text)
    if span is None:
        raise SystemExit(f"README.md: no C block after {MARK!r}")
    want = example_part()
    if write:
        open(README, "w").write(text[: span[0]] + want + text[span[1]:])
        print(f"README.md: C example rewritten from {EXAMPLE}")
        return 0
    errors = []
    n = text.count("\n")
    if n >= MAX_LINES:
        errors.append(f"README.md has {n} lines (under {MAX_LINES}: move details to docs/)")
    if text[span[0]:span[1]] != want:
        errors.append(f"README.md's C example differs from the marked part of {EXAMPLE} "
                      "(scripts/readme-check.py --write copies it)")
    setup = re.search(r"## Set-up: two commands\n\n```sh\n(.*?)```", text, re.S)
    for cmd in ("scripts/demo.sh", "scripts/test.sh"):
        if not setup or not re.search(rf"^{re.escape(cmd)}\s", setup.group(1), re.M):
            errors.append(f"README.md's Set-up block lacks {cmd}")
    for heading, why in (("## Installing\n\n```sh\n", "tests/test_install.sh runs it"),
                         ("## More than one GPU\n", "issue 26 item 4")):
        if heading not in text:
            errors.append(f"README.md lacks {heading.splitlines()[0]!r} ({why})")
    docs = [README, os.path.join(ROOT, "bench", "README.md")]
    docs += sorted(os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                   if f.endswith(".md"))
    for path in docs:
        for target in dangling(path, open(path).read()):
            errors.append(f"{os.path.relpath(path, ROOT)} names {target}, which does not exist")
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print(f"README.md: {n} lines, C example = {EXAMPLE}, {len(docs)} documents' paths exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
