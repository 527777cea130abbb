"""Each forced plan in a process of its own, for the plan tables (argmax_plans.py, row_plans.py):
a fusion's kernels are cached by expression, and UKERN_RED_TUNE is read when a kernel is made,
so one process times one plan. No GPU work here."""
import os
import subprocess
import sys


def each_plan(script, tunes, out):
    """Runs `script --one out` once a tune, UKERN_RED_TUNE set to it; 0, or 1 if any run failed."""
    status = 0
    for t in tunes:
        env = dict(os.environ, UKERN_RED_TUNE=t)
        rc = subprocess.call([sys.executable, os.path.abspath(script), "--one", out], env=env)
        if rc:
            print(f"{os.path.basename(script)}: plan '{t}' exited {rc}", file=sys.stderr)
            status = 1
    return status
