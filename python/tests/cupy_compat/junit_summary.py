"""Counts per junit xml file (pytest --junitxml): passed, failed, errors (with the test a
timeout interrupted), skipped.
Usage: python3 junit_summary.py junit-*.xml"""
import os
import sys
import xml.etree.ElementTree as ET


def counts(path):
    """{'passed', 'failed', 'errors', 'skipped'} of one junit file (unreadable: all -1)."""
    c = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return {k: -1 for k in c}
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        # pytest stopped by SIGINT (the script's timeout) writes the test it was in as a
        # nameless <testcase/>: a stall, counted as an error, not a pass
        if "error" in kinds or case.get("name") is None:
            c["errors"] += 1
        elif "failure" in kinds:
            c["failed"] += 1
        elif "skipped" in kinds:
            c["skipped"] += 1
        else:
            c["passed"] += 1
    return c


def main(paths):
    total = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    print(f"{'file':48} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>7}")
    for p in paths:
        c = counts(p)
        name = os.path.basename(p)[len("junit-"):-len(".xml")] if os.path.basename(p).startswith("junit-") else p
        print(f"{name:48} {c['passed']:7} {c['failed']:7} {c['errors']:7} {c['skipped']:7}")
        for k in total:
            total[k] += max(c[k], 0)
    print(f"{'total':48} {total['passed']:7} {total['failed']:7} {total['errors']:7} {total['skipped']:7}")


if __name__ == "__main__":
    main(sys.argv[1:])
