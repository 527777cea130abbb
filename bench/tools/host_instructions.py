#!/usr/bin/env python3
"""Host cost per call by instruction count (issue 11), base vs now, no GPU.

Runs bench_host_instructions against the stand-in driver (build/bench/
fake_cuda/libcuda.so.1) under callgrind and prints, per row, the
instructions one call executes in ukern (libc included: what ukern calls
there is its cost), with the stand-in driver's own instructions apart.

  bench/tools/host_instructions.py --build build                   # now only
  bench/tools/host_instructions.py --build build --base /work/base # and 55dd3c5
  bench/tools/host_instructions.py --build build --base-exe OLD/build/bench/bench_host_instructions

--base DIR: a checkout whose DIR/build/libukern.a (and DIR/include) the same
driver source is compiled against (with its NVRTC, which it links).
Deterministic: the same binary gives the same counts in every run.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM_FUNCS = {"hc_measure", "ew_call", "red_call", "fn_call", "fu_call"}  # the driver program's own code


def build_base(base, out_dir):
    """Compiles host_instructions.c against base's headers and libukern.a."""
    lib = os.path.join(base, "build", "libukern.a")
    nvrtc = "/usr/local/cuda/lib64/libnvrtc.so"
    cache = os.path.join(base, "build", "CMakeCache.txt")
    if os.path.exists(cache):
        for line in open(cache):
            if line.startswith("CUDA_nvrtc_LIBRARY:FILEPATH="):
                nvrtc = line.split("=", 1)[1].strip()
    exe = os.path.join(out_dir, "bench_host_instructions_base")
    # The flags of a RelWithDebInfo build (what the now binary gets).
    cmd = ["cc", "-O2", "-g", "-DNDEBUG", "-std=gnu11", "-I", os.path.join(base, "include"),
           os.path.join(HERE, "host_instructions.c"), lib, nvrtc,
           "-Wl,-rpath," + os.path.dirname(os.path.realpath(nvrtc)), "-lffi", "-lpthread", "-ldl", "-lm",
           "-o", exe]
    subprocess.run(cmd, check=True)
    return exe


def parse_dump(path, calls):
    """(row name, total, stand-in driver, program) instructions of one dump."""
    names = {"ob": {}, "fn": {}}
    ob = fn = None
    skip_next = False
    total = driver = program = 0
    row = None
    summary = None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("desc: Trigger: Client Request: "):
            row = line.split(": ", 2)[2].split("Client Request: ", 1)[-1]
            continue
        if line.startswith("totals:") or line.startswith("summary:"):
            summary = int(line.split()[1])
            continue
        m = re.match(r"^(c?)(ob|fn)=(?:\((\d+)\))?\s*(.*)$", line)
        if m:
            called, kind, ident, text = m.groups()
            value = text if text else names[kind].get(ident)
            if ident and text:
                names[kind][ident] = text
            if not called:
                if kind == "ob":
                    ob = value
                else:
                    fn = value
            continue
        if line.startswith("calls="):
            skip_next = True  # the next cost line is the call's inclusive cost
            continue
        if line and (line[0].isdigit() or line[0] in "+-*"):
            if skip_next:
                skip_next = False
                continue
            parts = line.split()
            ir = int(parts[1]) if len(parts) > 1 else 0
            total += ir
            if ob and ob.endswith("libcuda.so.1"):
                driver += ir
            elif fn in PROGRAM_FUNCS:
                program += ir
    if summary is not None and summary != total:
        sys.exit("%s: self costs sum to %d, the dump says %d" % (path, total, summary))
    return row, total, driver, program


def measure(exe, fake_dir, calls, keep_dir):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = fake_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    cache = tempfile.mkdtemp(prefix="uk_hc_cache_")
    try:
        # Warm the disk cache: the counted run then loads, never compiles.
        subprocess.run([exe, cache, "10"], env=env, check=True, stdout=subprocess.DEVNULL)
        out = os.path.join(keep_dir, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=hc_measure",
                        "--compress-strings=no",
                        "--callgrind-out-file=" + out, exe, cache, str(calls)],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    rows = []
    k = 1
    while os.path.exists("%s.%d" % (out, k)):
        row, total, driver, program = parse_dump("%s.%d" % (out, k), calls)
        rows.append((row, (total - driver - program) / calls, driver / calls))
        k += 1
    if not rows:
        sys.exit("no callgrind dumps from %s (was it built with valgrind/callgrind.h?)" % exe)
    return rows


def arguments(doc):
    """The options every instruction-count script takes (this one, newproc_instructions.py)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="this tree's build directory")
    ap.add_argument("--base", help="a checkout with build/libukern.a to compare with")
    return ap


def programs(build, target, tools):
    """(the stand-in driver's directory, the program) in build; exits naming what is missing."""
    for tool in tools:
        if not shutil.which(tool):
            sys.exit("%s is not installed (apt-get install %s)" % (tool, tool))
    fake = os.path.join(build, "bench", "fake_cuda")
    exe = os.path.join(build, "bench", target)
    for p in (os.path.join(fake, "libcuda.so.1"), exe):
        if not os.path.exists(p):
            sys.exit("%s is missing: cmake --build %s --target %s" % (p, build, target))
    return fake, exe


def main():
    ap = arguments(__doc__)
    ap.add_argument("--calls", type=int, default=1000, help="calls per row")
    ap.add_argument("--base-exe", help="the other tree's own bench_host_instructions, instead of --base "
                    "(needed where the public API differs, e.g. 080bbb4's before issue 24's launch struct)")
    ap.add_argument("--keep", help="directory for the callgrind dumps (for callgrind_annotate)")
    args = ap.parse_args()
    fake, now_exe = programs(args.build, "bench_host_instructions", ("valgrind",))
    keep = args.keep or tempfile.mkdtemp(prefix="uk_hc_")
    os.makedirs(os.path.join(keep, "now"), exist_ok=True)
    now = measure(now_exe, fake, args.calls, os.path.join(keep, "now"))
    base = None
    if args.base or args.base_exe:
        os.makedirs(os.path.join(keep, "base"), exist_ok=True)
        exe = args.base_exe or build_base(args.base, os.path.join(keep, "base"))
        base = measure(exe, fake, args.calls, os.path.join(keep, "base"))
    print("Instructions per call in ukern (libc included; stand-in driver apart), %d calls per row"
          % args.calls)
    if base:
        b = {r[0]: r for r in base}
        print("| row | base | now | now - base | driver (base / now) |")
        print("|---|---:|---:|---:|---:|")
        for name, ins, drv in now:
            if name in b:
                print("| %s | %.0f | %.0f | %+.0f (%+.1f%%) | %.0f / %.0f |"
                      % (name, b[name][1], ins, ins - b[name][1], 100.0 * (ins - b[name][1]) / b[name][1],
                         b[name][2], drv))
            else:
                print("| %s | - | %.0f | | - / %.0f |" % (name, ins, drv))
    else:
        print("| row | ukern | driver |")
        print("|---|---:|---:|")
        for name, ins, drv in now:
            print("| %s | %.0f | %.0f |" % (name, ins, drv))
    print("dumps: %s" % keep)


if __name__ == "__main__":
    main()
