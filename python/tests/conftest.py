"""Shared fixtures: every test gets its own ukern cache directory (never the user's)."""
import os
import sys
import threading
import types

import numpy as np
import pytest

import ukern


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("UKERN_CACHE_DIR", str(tmp_path / "cache"))
    yield


@pytest.fixture
def arch90(tmp_path):
    """Kernels made in the test compile for sm_90 (no GPU needed)."""
    ukern.configure(arch=90, cache_dir=str(tmp_path / "cache90"))
    yield
    ukern.configure()


def has_gpu():
    return ukern.device_count() > 0 and os.environ.get("UKERN_PY_NO_GPU") != "1"


@pytest.fixture
def fake_cupy(monkeypatch):
    """A stand-in for CuPy's fusion dispatch: its ufuncs and reductions hand the call to
    thread_local.history while thread_local.is_new_fusing is set, as CuPy's do."""
    tlmod = types.ModuleType("cupy._core._fusion_thread_local")
    tlmod.thread_local = threading.local()

    def fusing():
        return getattr(tlmod.thread_local, "is_new_fusing", False)

    class Ufunc:
        def __init__(self, name, nin):
            self.name, self.nin, self.__name__ = "cupy_" + name, nin, name

        def __call__(self, *args, **kw):
            if fusing():
                return tlmod.thread_local.history.call_ufunc(self, *args, **kw)
            return ("eager", self.name)

    class Reduction:
        def __init__(self, name):
            self.name = name

    def reduction(op_auto, op_dtype):
        def fn(a, axis=None, dtype=None, out=None, keepdims=False):
            if fusing():
                if keepdims:
                    raise NotImplementedError("keepdims in fusion")
                return tlmod.thread_local.history.call_reduction(op_auto if dtype is None else op_dtype, a,
                                                                 axis=axis, dtype=dtype, out=out)
            return ("eager", op_auto.name)
        return fn

    cp = types.ModuleType("cupy")
    core = types.ModuleType("cupy._core")
    core._fusion_thread_local = tlmod
    cp._core = core
    for name, nin in (("exp", 1), ("add", 2), ("multiply", 2), ("maximum", 2), ("true_divide", 2)):
        setattr(cp, name, Ufunc(name, nin))
    where_ufunc, copy_ufunc = Ufunc("where", 3), Ufunc("copy", 1)
    cp.where = lambda c, x, y: where_ufunc(c, x, y) if fusing() else "eager"
    cp.copyto = lambda dst, src: copy_ufunc(src, dst)
    cp.sum = reduction(Reduction("cupy_sum"), Reduction("cupy_sum_with_dtype"))
    cp.amax = reduction(Reduction("cupy_max"), Reduction("cupy_max"))
    cp.get_array_module = lambda *args: np     # CuPy's answers numpy for anything not its own
    for name, mod in (("cupy", cp), ("cupy._core", core), ("cupy._core._fusion_thread_local", tlmod)):
        monkeypatch.setitem(sys.modules, name, mod)
    return cp
