"""pytest plugin: runs CuPy's own test files with CuPy's kernel classes
replaced by ukern's (scripts/gpu-cupy-compat.sh loads it with
`-p ukern_cupy_compat`).

UKERN_COMPAT (comma-separated; default "fuse,elementwise,reduction,raw")
picks what is replaced; "none" runs CuPy itself (the baseline):
  fuse         cupy.fuse                        -> ukern.fuse
  elementwise  cupy.ElementwiseKernel           -> ukern.ElementwiseKernel
  reduction    cupy.ReductionKernel             -> ukern.ReductionKernel
  raw          cupy.RawKernel, cupy.RawModule   -> ukern.RawKernel, ukern.RawModule
The replacement happens when pytest loads the plugin, before any test
module imports cupy's names; cupy.testing and the rest of CuPy are untouched.
The chosen set is printed in the test session header.
"""
import os

KNOWN = {
    "fuse": ("fuse",),
    "elementwise": ("ElementwiseKernel",),
    "reduction": ("ReductionKernel",),
    "raw": ("RawKernel", "RawModule"),
}
_replaced = []
_selected = set()

# Tests of CuPy's private internals, which issue 23 leaves out: with their replacement on,
# they are skipped with the reason (counted as skipped, never as passed).
PRIVATE = {
    "raw": (
        ("test_raw.py::TestRawNameExpressionCache::",
         "mocks CuPy's private cache backend (cupy.cuda.compiler._kernel_cache_backend) and counts its "
         "saves; ukern keeps its own disk cache (python/tests/test_raw_cpu.py::"
         "test_name_expressions_found_again_in_the_disk_cache checks the same reuse)"),
    ),
}


def private_reason(nodeid, items):
    """Why the test `nodeid` is left out under the replacements `items` (None: it runs)."""
    for key in sorted(items):
        for part, why in PRIVATE.get(key, ()):
            if part in nodeid:
                return f"ukern_cupy_compat: tests CuPy's private internals ({key}): {why}"
    return None


def selection(value=None):
    """The set of KNOWN keys UKERN_COMPAT names (ValueError for unknown ones)."""
    value = os.environ.get("UKERN_COMPAT", "fuse,elementwise,reduction,raw") if value is None else value
    items = {v.strip() for v in value.split(",") if v.strip()}
    if items <= {"none"}:
        return set()
    unknown = items - set(KNOWN)
    if unknown:
        raise ValueError(f"UKERN_COMPAT: unknown item(s) {sorted(unknown)}; known: {sorted(KNOWN)} or none")
    return items


def install(cupy, ukern, items):
    """Replaces cupy's classes named by items with ukern's; returns the names replaced."""
    done = []
    for key in sorted(items):
        for name in KNOWN[key]:
            if not hasattr(ukern, name):
                raise RuntimeError(f"ukern has no {name} (built without it?)")
            setattr(cupy, name, getattr(ukern, name))
            done.append(name)
    if "fuse" in items:  # the decorator is also reached as cupy._core.fusion.fuse by some code
        fusion = getattr(getattr(cupy, "_core", None), "fusion", None)
        if fusion is not None and hasattr(fusion, "fuse"):
            fusion.fuse = ukern.fuse
    return done


def pytest_configure(config):
    items = selection()
    if not items:
        return
    import cupy
    import ukern
    _replaced.extend(install(cupy, ukern, items))
    _selected.update(items)


def pytest_report_header(config):
    return "ukern_cupy_compat: " + (", ".join(f"cupy.{n} -> ukern.{n}" for n in _replaced) or "CuPy itself (none)")


def pytest_collection_modifyitems(config, items):
    """Skips the PRIVATE tests of the replaced classes (with the reason). UKERN_COMPAT_SHARD=K/N
    keeps every N-th collected test from the K-th (0-based), so a slow file (an NVRTC compile
    per test) runs as N processes at once."""
    if _selected:
        import pytest
        for it in items:
            why = private_reason(it.nodeid, _selected)
            if why:
                it.add_marker(pytest.mark.skip(reason=why))
    shard = os.environ.get("UKERN_COMPAT_SHARD")
    if not shard:
        return
    k, n = (int(v) for v in shard.split("/"))
    if not 0 <= k < n:
        raise ValueError(f"UKERN_COMPAT_SHARD={shard}: want K/N with 0 <= K < N")
    keep = [it for i, it in enumerate(items) if i % n == k]
    config.hook.pytest_deselected(items=[it for i, it in enumerate(items) if i % n != k])
    items[:] = keep
