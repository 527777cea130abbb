#!/usr/bin/env python3
"""bench_compile's "first call, new process, warm disk cache" row without a
GPU (issue 11): base vs now, for the timed region of that row's child
(uk_module_from_source + uk_module_function, disk cache warm, driver
initialised), run by bench/tools/newproc_instructions.c against the stand-in
driver (build/bench/fake_cuda/libcuda.so.1).

  bench/tools/newproc_instructions.py --build build --base /work/base [--runs 101] [--cpu 1]

Reports, per side: instructions in the region (ukern and libc, the
stand-in driver apart; callgrind), the syscalls it makes (strace, between
the program's write(-1, "np:...") marks), its minor page faults and its
time, medians over --runs new processes run alternately. Both programs
link NVRTC, as bench_compile does (its loading is then outside the region
on both sides). --base DIR: a checkout whose DIR/build/libukern.a the same
program is compiled against.
"""
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "newproc_instructions.c")
sys.path.insert(0, HERE)
from host_instructions import arguments, parse_dump, programs  # noqa: E402  (callgrind's format, read once)


def nvrtc_of(build):
    """The NVRTC library a build directory's CMakeCache names."""
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        for line in open(cache):
            if line.startswith("CUDA_nvrtc_LIBRARY:FILEPATH="):
                return line.split("=", 1)[1].strip()
    return "/usr/local/cuda/lib64/libnvrtc.so"


def build_base(base, out_dir):
    """The program against base's headers and libukern.a (RelWithDebInfo flags)."""
    nvrtc = nvrtc_of(os.path.join(base, "build"))
    exe = os.path.join(out_dir, "newproc_instructions_base")
    subprocess.run(["cc", "-O2", "-g", "-DNDEBUG", "-std=gnu11", "-I", os.path.join(base, "include"), SOURCE,
                    os.path.join(base, "build", "libukern.a"), "-Wl,--no-as-needed", nvrtc, "-Wl,--as-needed",
                    "-Wl,-rpath," + os.path.dirname(os.path.realpath(nvrtc)), "-lffi", "-lpthread", "-ldl", "-lm",
                    "-o", exe], check=True)
    return exe


def run(exe, cache, env, prefix=(), **kw):
    return subprocess.run(list(prefix) + [exe, cache], env=env, check=True, stdout=subprocess.PIPE,
                          universal_newlines=True, **kw).stdout


def instructions(exe, cache, env, out):
    """(ukern+libc, driver) instructions of the region (np_region's own few included)."""
    run(exe, cache, env, ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=np_region",
                          "--compress-strings=no", "--callgrind-out-file=" + out], stderr=subprocess.DEVNULL)
    _row, total, driver, program = parse_dump(out, 1)
    return total - driver - program, driver


def syscalls(exe, cache, env, out):
    """The region's syscalls, by name."""
    run(exe, cache, env, ["strace", "-qq", "-o", out])
    names = collections.Counter()
    inside = False
    for line in open(out):
        if '"np:begin"' in line:
            inside = True
        elif '"np:end"' in line:
            inside = False
        elif inside:
            m = re.match(r"(\w+)\(", line)
            if m:
                names[m.group(1)] += 1
    return names


def main():
    ap = arguments(__doc__)
    ap.add_argument("--runs", type=int, default=101, help="new processes per side for the time")
    ap.add_argument("--keep", help="directory for the dumps and traces")
    ap.add_argument("--cpu", type=int, help="pin the timed processes to this CPU (taskset)")
    args = ap.parse_args()
    fake, now_exe = programs(args.build, "bench_newproc_instructions", ("valgrind", "strace"))
    keep = args.keep or tempfile.mkdtemp(prefix="uk_np_")
    os.makedirs(keep, exist_ok=True)
    sides = [("now", now_exe)]
    if args.base:
        sides.insert(0, ("base", build_base(args.base, keep)))
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = fake + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    result = {}
    caches = []
    try:
        for name, exe in sides:
            cache = tempfile.mkdtemp(prefix="uk_np_cache_")
            caches.append(cache)
            run(exe, cache, env)  # compiles (NVRTC) and stores: later runs are disk hits
            hits = run(exe, cache, env).split()
            if hits[2:] != ["1", "0"]:
                sys.exit("%s: not a disk hit (%s)" % (name, " ".join(hits)))
            ins, drv = instructions(exe, cache, env, os.path.join(keep, "callgrind-%s.out" % name))
            calls = syscalls(exe, cache, env, os.path.join(keep, "strace-%s.txt" % name))
            result[name] = {"exe": exe, "cache": cache, "ins": ins, "drv": drv, "sys": calls, "us": [], "flt": []}
        pin = ["taskset", "-c", str(args.cpu)] if args.cpu is not None else []
        for _ in range(args.runs):  # alternating, so that load drifts hit both sides alike
            for name, _exe in sides:
                r = result[name]
                us, flt = run(r["exe"], r["cache"], env, pin).split()[:2]
                r["us"].append(float(us))
                r["flt"].append(int(flt))
    finally:
        for c in caches:
            shutil.rmtree(c, ignore_errors=True)
    names = [n for n, _ in sides]
    print("First call in a new process, warm disk cache: uk_module_from_source + uk_module_function")
    print("(stand-in driver; time and faults: medians of %d new processes per side%s)"
          % (args.runs, ", on CPU %d" % args.cpu if args.cpu is not None else ""))
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    rows = [("instructions, ukern + libc", lambda r: "%d" % r["ins"]),
            ("instructions, stand-in driver", lambda r: "%d" % r["drv"]),
            ("syscalls", lambda r: "%d" % sum(r["sys"].values())),
            ("minor page faults", lambda r: "%g" % statistics.median(r["flt"])),
            ("time (us)", lambda r: "%.1f" % statistics.median(r["us"]))]
    for label, f in rows:
        print("| %s | %s |" % (label, " | ".join(f(result[n]) for n in names)))
    for n in names:
        print("%s syscalls: %s" % (n, ", ".join("%s %d" % kv for kv in sorted(result[n]["sys"].items()))))
    print("dumps: %s" % keep)


if __name__ == "__main__":
    main()
