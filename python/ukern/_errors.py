"""ukern's exceptions, catchable as CuPy's when CuPy is in use.

Code written for CuPy catches cupy.cuda.compiler.CompileException /
JitifyException and cupy.cuda.driver.CUDADriverError. ukern never imports
CuPy, but when CuPy is already imported (sys.modules), the extension asks
`compat_type(base)` for the class to raise: a subclass of both the ukern class
and CuPy's, made once per pair. Without CuPy the ukern class is raised as it
is. The subclass keeps ukern's behaviour (str(e) is the message, .log,
.status, get_message(), dump()) where CuPy's classes define theirs
differently (CuPy's __init__ takes other arguments; its __str__ reads _msg).
"""
import sys

from . import _ukern

# ukern's classes, the CuPy classes each also becomes: (module, class name) pairs.
_CUPY_NAMES = {
    "CompileException": (("cupy.cuda.compiler", "CompileException"),),
    "JitifyException": (("cupy.cuda.compiler", "JitifyException"), ("cupy.cuda.compiler", "CompileException")),
    "CUDADriverError": (("cupy_backends.cuda.api.driver", "CUDADriverError"),),
}
_made = {}


def _cupy_classes(base):
    """CuPy's classes matching ukern's `base`, if CuPy has been imported (else ())."""
    names = _CUPY_NAMES.get(base.__name__, ())
    found = []
    for module, name in names:
        cls = getattr(sys.modules.get(module), name, None)
        if not isinstance(cls, type) or not issubclass(cls, BaseException):
            return ()
        found.append(cls)
    return tuple(found)


def _rebuild(name, args, state):
    """Unpickles one of these exceptions as the class compat_type gives now."""
    e = compat_type(getattr(_ukern, name))(*args)
    e.__dict__.update(state)
    return e


def _make(base, cupy):
    root = Exception if issubclass(base, _ukern.CompileException) else RuntimeError

    def __init__(self, *args):  # CuPy's __init__ wants (msg, source, ...) or a CUresult
        root.__init__(self, *args)

    def __reduce__(self):
        return (_rebuild, (base.__name__, self.args, dict(self.__dict__)))

    ns = {
        "__init__": __init__,
        "__str__": BaseException.__str__,
        "__repr__": BaseException.__repr__,
        "__reduce__": __reduce__,
        "__module__": "ukern",
        "__doc__": base.__doc__,
        # CuPy's CompileException keeps its message in _msg
        "_msg": property(lambda self: str(self)),
    }
    if root is RuntimeError:
        del ns["_msg"]
    return type(base.__name__, (base,) + cupy, ns)


def compat_type(base):
    """The class to raise for ukern's exception class `base`: `base` itself, or
    with CuPy imported, a subclass of `base` and of CuPy's matching classes."""
    cupy = _cupy_classes(base)
    if not cupy:
        return base
    key = (base,) + cupy
    cls = _made.get(key)
    if cls is None:
        cls = _made[key] = _make(base, cupy)
    return cls


_ukern._set_error_type_hook(compat_type)
