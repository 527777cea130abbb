"""RawKernel's Python-side pieces: In/Out/InOut host wrappers, kernel[grid, block]
launch sugar, .kernel, and CompileException's CuPy methods (get_message, dump)."""
import math

from . import _ukern


class _HostArg:
    """A host NumPy array that a RawKernel call copies to the device and back."""

    __slots__ = ("array",)
    _direction = 0  # 1: in, 2: out, 3: both

    def __init__(self, array):
        name = type(self).__name__
        try:
            import numpy
        except ImportError:  # pragma: no cover - NumPy is needed for host arrays
            raise TypeError(f"ukern.{name} needs NumPy") from None
        if not isinstance(array, numpy.ndarray):
            raise TypeError(f"ukern.{name} takes a host numpy.ndarray, not {type(array).__name__} "
                            "(device arrays are passed as they are)")
        if not (array.flags.c_contiguous or array.flags.f_contiguous):
            raise ValueError(f"ukern.{name}: the array must be contiguous (C or Fortran order); "
                             "pass numpy.ascontiguousarray(a) (and copy the result back yourself for Out)")
        dt = array.dtype
        if dt.hasobject or dt.kind in "OUSMmV" or not dt.isnative:
            raise TypeError(f"ukern.{name}: dtype {dt} cannot be copied to the device "
                            "(numbers and bools in native byte order only)")
        if self._direction & 2 and not array.flags.writeable:
            raise ValueError(f"ukern.{name}: the array is read-only, so the result cannot be copied back")
        self.array = array

    def __repr__(self):
        return f"ukern.{type(self).__name__}({self.array!r})"


class In(_HostArg):
    """In(a): a's contents are copied to fresh device memory before the launch
    (on the launch stream); the kernel gets its device pointer."""
    __slots__ = ()
    _direction = 1


class Out(_HostArg):
    """Out(a): the kernel gets uninitialised device memory of a's size, copied
    into a after the launch; the call returns once a holds the result."""
    __slots__ = ()
    _direction = 2


class InOut(_HostArg):
    """InOut(a): copied to the device before the launch and back after it."""
    __slots__ = ()
    _direction = 3


_ukern._set_host_arg_type(_HostArg)


class _Launch:
    """kernel[grid, block] (or [grid, block, stream] / [grid, block, stream,
    shared_mem], Numba's order): called with the kernel's arguments."""

    __slots__ = ("kernel", "grid", "block", "stream", "shared_mem")

    def __init__(self, kernel, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("launch configuration is kernel[grid, block], kernel[grid, block, stream] or "
                            "kernel[grid, block, stream, shared_mem]")
        self.kernel = kernel
        self.grid, self.block = config[0], config[1]
        self.stream = config[2] if len(config) > 2 else None
        self.shared_mem = config[3] if len(config) > 3 else 0

    def __call__(self, *args):
        return self.kernel(self.grid, self.block, args, shared_mem=self.shared_mem, stream=self.stream)


class Function:
    """What RawKernel.kernel returns (CuPy returns its cupy.cuda.Function):
    .ptr is the CUfunction on the current default device; calling it calls
    the kernel."""

    __slots__ = ("_kernel",)

    def __init__(self, kernel):
        self._kernel = kernel

    @property
    def ptr(self):
        return self._kernel.handle

    @property
    def attributes(self):
        return self._kernel.attributes

    def __call__(self, grid, block, args, **kw):
        return self._kernel(grid, block, args, **kw)


_ukern.RawKernel.__getitem__ = lambda self, config: _Launch(self, config)
_ukern.RawKernel.kernel = property(Function, doc="The kernel as a Function (.ptr: its CUfunction).")


def _get_message(self):
    return str(self)


def _dump(self, f):
    """Writes the failure as CuPy's CompileException.dump does: the message,
    the name, the options and the numbered source."""
    source = getattr(self, "source", None) or ""
    lines = source.split("\n")
    digits = int(math.floor(math.log10(max(len(lines), 1)))) + 1
    f.write(f"{str(getattr(self, 'backend', 'nvrtc')).upper()} compilation error: {self}\n-----\n")
    f.write(f"Name: {getattr(self, 'name', None)}\n")
    f.write(f"Options: {' '.join(getattr(self, 'options', ()) or ())}\nCUDA source:\n")
    for i, line in enumerate(lines):
        f.write(f"{i + 1:0{digits}d} {line.rstrip()}\n")
    f.write("-----\n")
    f.flush()


_ukern.CompileException.get_message = _get_message
_ukern.CompileException.dump = _dump


# ---- CuPy's exception classes (code written for CuPy catches them) ----
_CUPY_ERRORS = {}   # (ukern's class, CuPy's classes) -> the subclass of them all


def _cupy_bases(base, jitify):
    import sys
    if base is _ukern.CompileException:
        comp = sys.modules.get("cupy.cuda.compiler")
        if comp is None:
            return ()
        return (comp.CompileException,) + ((comp.JitifyException,) if jitify else ())
    drv = sys.modules.get("cupy_backends.cuda.api.driver")
    return (drv.CUDADriverError,) if drv is not None else ()


def _as_cupy(exc, jitify):
    """Called by the extension while it raises exc (a CompileException or CUDADriverError)
    with CuPy imported: exc becomes an instance of a subclass of its class that is also
    CuPy's class of that kind (cupy.cuda.compiler.CompileException, and JitifyException for
    a jitify=True module; cupy.cuda.driver.CUDADriverError), keeping ukern's message,
    attributes and methods. It pickles as ukern's class."""
    base = _ukern.CompileException if isinstance(exc, _ukern.CompileException) else _ukern.CUDADriverError
    bases = _cupy_bases(base, jitify)
    if not bases:
        return
    key = (base,) + bases       # CuPy's classes of this process (a reloaded CuPy has new ones)
    cls = _CUPY_ERRORS.get(key)
    if cls is None:
        # ukern's behaviour wins over CuPy's (CuPy's __init__/__str__ expect CuPy's arguments)
        ns = {"__module__": "ukern", "__doc__": base.__doc__, "__init__": BaseException.__init__,
              "__str__": BaseException.__str__, "__repr__": BaseException.__repr__,
              "__reduce__": lambda self: (base, self.args, self.__dict__)}
        if base is _ukern.CompileException:
            ns.update(get_message=_get_message, dump=_dump, _msg=property(_get_message))
        cls = _CUPY_ERRORS[key] = type(base.__name__, (base,) + bases, ns)
    exc.__class__ = cls


# ---- pickling (CuPy's RawKernel and RawModule pickle; they compile again when used) ----

def _module_state(m):
    if m.path is not None:
        return (None, m.path, (), "nvrtc", False, m.enable_cooperative_groups, None)
    return (m.code, None, m.options, m.backend, m.translate_cucomplex, m.enable_cooperative_groups,
            m.name_expressions or None)


def _make_module(code, path, options, backend, translate, cooperative, names):
    if path is not None:
        return _ukern.RawModule(path=path, enable_cooperative_groups=cooperative)
    return _ukern.RawModule(code=code, options=options, backend=backend, translate_cucomplex=translate,
                            enable_cooperative_groups=cooperative, name_expressions=names)


def _make_kernel(module_state, name, signature):
    k = _make_module(*module_state)._lazy_function(name)
    if signature is None:
        return k
    # A signature is given at construction only: make the kernel again with it.
    code, _, options, backend, translate, cooperative, _ = module_state
    return _ukern.RawKernel(code, name, options, backend, translate_cucomplex=translate,
                            enable_cooperative_groups=cooperative, signature=signature)


_ukern.RawModule.__reduce__ = lambda m: (_make_module, _module_state(m))
_ukern.RawKernel.__reduce__ = lambda k: (_make_kernel, (_module_state(k._module), k.name, k.signature))
