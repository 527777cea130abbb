"""Kernel bundles from Python, no GPU (issue 26): create_bundle from a cache directory that
precompile filled, load_bundle in a fresh context (kernels found there, nothing compiled; in a
new process NVRTC is never loaded), configure() keeps loaded bundles, damaged files refused."""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ukern

SQ = ("T x, T y", "T z", "z = (x - y) * (x - y)", "py_bsq")
RED = ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "py_bl2")
RAW = 'extern "C" __global__ void py_braw(float* y) { y[threadIdx.x] *= 3.0f; }\n'


def _ask():
    """The same three kernels every time: elementwise, reduction, fusion."""
    a = np.zeros((33, 17), np.float32)
    ukern.ElementwiseKernel(*SQ).precompile(a, a)
    ukern.ReductionKernel(*RED).precompile(a, axis=1)
    if hasattr(ukern, "fuse"):
        ukern.fuse(lambda x, y: np.sqrt(np.sum((x - y) * (x - y), axis=-1))).precompile(a, a)
    return 3 if hasattr(ukern, "fuse") else 2


@pytest.fixture
def made(tmp_path):
    fill = tmp_path / "fill"
    ukern.configure(arch=90, cache_dir=str(fill))
    n = _ask()
    path = tmp_path / "py.ukb"
    report = ukern.create_bundle(str(path), cache_dir=str(fill), archs=["90"])
    assert "%d kernels" % n in report
    yield fill, path, n
    ukern._bundle_paths.clear()
    ukern.configure()


def test_round_trip(made, tmp_path):
    fill, path, n = made
    ukern.configure(arch=90, cache_dir=str(tmp_path / "empty"))
    ukern.load_bundle(path)                 # a PathLike works
    before = ukern.cache_stats()
    _ask()
    after = ukern.cache_stats()
    assert after["compiles"] == before["compiles"]
    assert after["disk_hits"] == before["disk_hits"]
    assert "%d kernels for sm_90, %d hits" % (n, n) in ukern.bundles()
    ukern.configure(arch=90, cache_dir=str(tmp_path / "empty2"))   # carried into the new context
    assert str(path) in ukern.bundles()


def test_new_process_never_loads_nvrtc(made, tmp_path):
    fill, path, n = made
    memo = tmp_path / "memo"
    memo.mkdir(mode=0o700)
    for f in glob.glob(str(fill / "*.ukn")):       # NVRTC's version, as any earlier compile leaves it
        shutil.copy(f, memo)
    code = (
        "import sys; sys.path[:0] = %r\n"
        "import ukern, test_bundle_cpu as t\n"
        "ukern.configure(arch=90, cache_dir=%r)\n"
        "ukern.load_bundle(%r)\n"
        "t._ask()\n"
        "assert ukern.cache_stats()['compiles'] == 0, ukern.cache_stats()\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'libnvrtc' not in maps, 'NVRTC loaded'\n"
        "print(ukern.bundles())\n" % (sys.path[:1] + [os.path.dirname(__file__)], str(memo), str(path)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "%d hits" % n in r.stdout


def test_damaged_and_foreign_refused(made, tmp_path):
    fill, path, n = made
    data = bytearray(path.read_bytes())
    bad = tmp_path / "bad.ukb"
    bad.write_bytes(b"NOTABUNDLE" + bytes(data[10:]))
    with pytest.raises(OSError, match="bad.ukb: not a ukern bundle"):
        ukern.load_bundle(str(bad))
    data[16:21] = b"9.9.9"
    bad.write_bytes(bytes(data))
    with pytest.raises(OSError, match="header checksum"):
        ukern.load_bundle(str(bad))
    bad.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(OSError, match="truncated"):
        ukern.load_bundle(str(bad))
    assert ukern._bundle_paths == [] and ukern.bundles() == ""
