"""How cupy.* calls in a traced function reach the tracer.

CuPy's own functions and ufuncs (cupy.exp, cupy.sum, cupy.where, the
cupy.ndarray-free paths of cupy.clip, cupy.copyto, ...) ask a thread-local
flag of CuPy's (cupy._core._fusion_thread_local.thread_local.is_new_fusing)
whether a fusion is being traced, and if so hand the call to
thread_local.history.call_ufunc(op, *args, **kw) or .call_reduction(...).
While ukern traces, it sets that flag and installs a history object that
forwards to its own tracer, on the tracing thread only, and restores both
after. So a function written for cupy.fuse traces unchanged, whatever
names it reaches CuPy by (module aliases, `from cupy import exp`, closures,
helper functions in other modules), and other threads' CuPy calls are not
affected. numpy.* calls need nothing: NumPy's protocols reach the placeholder
values. Without CuPy (not imported), there is nothing to hook.

cupy.get_array_module(x) answers cupy only for its own array types; while any
thread traces, cupy.get_array_module is a wrapper that also answers cupy for
ukern's traced values (and asks the original otherwise), so `xp =
cupy.get_array_module(x)` in a fused function gives cupy, as in cupy.fuse.
"""
import sys
import threading

from . import _fuse_ops as ops

_state = threading.local()   # .trace: the trace this thread runs, or None


def active():
    """The trace running on this thread, or None."""
    return getattr(_state, "trace", None)


class _History:
    """Stands in for CuPy's fusion history while ukern traces."""

    def __init__(self, trace):
        self._trace = trace

    def call_ufunc(self, op, *args, **kw):
        return ops.cupy_ufunc(self._trace, op, args, kw)

    def call_reduction(self, op, *args, **kw):
        return ops.cupy_reduction(self._trace, op, args, kw)

    def call_indexing(self, op, *args, **kw):
        raise NotImplementedError("ukern.fuse: indexing traced arrays is not supported yet")


class _ArrayModule:
    """cupy.get_array_module wrapped while traces run (depth-counted: the last trace
    to finish puts the original back, unless someone replaced it meanwhile)."""

    lock = threading.Lock()
    depth = 0
    cupy = orig = wrapper = None

    @classmethod
    def enter(cls):
        cupy = sys.modules.get("cupy")
        orig = getattr(cupy, "get_array_module", None)
        if orig is None:
            return False
        with cls.lock:
            if cls.depth == 0:
                from ._fuse_trace import _Var

                def get_array_module(*args):
                    for a in args:
                        if type(a) is _Var:
                            return cupy
                    return orig(*args)
                get_array_module.__doc__ = orig.__doc__
                cls.cupy, cls.orig, cls.wrapper = cupy, orig, get_array_module
                cupy.get_array_module = get_array_module
            cls.depth += 1
        return True

    @classmethod
    def exit(cls):
        with cls.lock:
            cls.depth -= 1
            if cls.depth == 0:
                if getattr(cls.cupy, "get_array_module", None) is cls.wrapper:
                    cls.cupy.get_array_module = cls.orig
                cls.cupy = cls.orig = cls.wrapper = None


def foreign_fusing():
    """CuPy itself is tracing a fusion on this thread (its cupy.fuse calls a ukern fused
    function with its own placeholders): the function is then inlined as plain Python."""
    tl = _cupy_thread_local()
    return tl is not None and (getattr(tl, "is_old_fusing", False) or
                               (getattr(tl, "is_new_fusing", False) and
                                not isinstance(getattr(tl, "history", None), _History)))


def _cupy_thread_local():
    mod = sys.modules.get("cupy._core._fusion_thread_local")
    return getattr(mod, "thread_local", None) if mod is not None else None


class tracing:
    """with tracing(trace): the thread's numpy/cupy calls record into trace."""

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.prev = active()
        _state.trace = self.trace
        tl = _cupy_thread_local()
        self.tl = tl
        if tl is not None:
            self.saved = (getattr(tl, "is_new_fusing", False), getattr(tl, "history", None))
            tl.history = _History(self.trace)
            tl.is_new_fusing = True
        self.gam = _ArrayModule.enter()
        return self.trace

    def __exit__(self, *exc):
        if self.gam:
            _ArrayModule.exit()
        if self.tl is not None:
            self.tl.is_new_fusing, self.tl.history = self.saved
        _state.trace = self.prev
        return False
