"""ukern.fuse: trace a Python function of arrays and scalars into a ukern
fusion program (NumPy-subset text, compiled by uk_fusion_create).

The function is run once with placeholder objects; Python operators, NumPy
ufuncs and functions (np.sqrt, np.where, np.sum(..., axis=...), through
NumPy's __array_ufunc__ / __array_function__ protocols) and array methods
(.sum(), .mean(), .astype(), .real, ...) record statements. Types and shapes
are decided at each call by NumPy 2's rules (NEP 50: Python scalars are weak),
so one trace serves every dtype.
"""
import functools

__all__ = ["fuse", "Fusion"]

_BINARY = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
    "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "and": "&", "or": "|", "xor": "^",
}
_REDUCTIONS = ("sum", "prod", "max", "min", "amax", "amin", "mean", "any", "all", "argmax", "argmin", "var", "std")


def _literal(v):
    """Program text of a constant captured by the trace."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return repr(v) if v >= 0 else f"({v})"
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "(-inf)"
        return f"({v!r})" if v < 0 else repr(v)
    if isinstance(v, complex):
        return f"({_literal(v.real)} + {_literal(v.imag)}j)" if v.imag >= 0 else \
            f"({_literal(v.real)} - {_literal(-v.imag)}j)"
    dtype = getattr(v, "dtype", None)
    if dtype is not None and getattr(v, "shape", None) == ():      # a NumPy scalar: typed
        return f"{dtype.name}({_literal(v.item())})"
    raise TypeError(f"ukern.fuse: cannot use a {type(v).__name__} inside a fused function "
                    "(arrays must be arguments; constants must be Python or NumPy scalars)")


def _dtype_text(dtype):
    try:
        import numpy
        return numpy.dtype(dtype).name
    except ImportError:
        return str(dtype)


def _kw_text(kw):
    parts = []
    for k, v in kw.items():
        if v is None and k in ("axis", "out", "dtype"):
            if k == "axis":
                parts.append("axis=None")
            continue
        if k == "out":
            raise NotImplementedError("ukern.fuse: out= inside a fused function is not supported")
        if k == "dtype":
            raise NotImplementedError("ukern.fuse: dtype= inside a fused function is not supported: use .astype()")
        if isinstance(v, (tuple, list)):
            inner = ", ".join(str(int(a)) for a in v)
            parts.append(f"{k}=({inner}{',' if len(v) == 1 else ''})")
        elif isinstance(v, int) and not isinstance(v, bool):
            parts.append(f"{k}={int(v)}")
        else:
            parts.append(f"{k}={_literal(v)}")
    return parts


class _Trace:
    def __init__(self):
        self.lines = []
        self.count = 0

    def emit(self, expr):
        name = f"t{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {expr}")
        return _Var(self, name)

    def text(self, v):
        if isinstance(v, _Var):
            if v._trace is not self:
                raise ValueError("ukern.fuse: a value from another fused function was used")
            return v._name
        return _literal(v)

    def call(self, fn, args, kw):
        parts = [self.text(a) for a in args] + _kw_text(kw)
        return self.emit(f"{fn}({', '.join(parts)})")


class _Var:
    """A value inside a traced function (an argument or a result)."""

    __array_priority__ = 1000

    def __init__(self, trace, name):
        self._trace = trace
        self._name = name

    def _bin(self, op, other, reflected=False):
        t = self._trace
        a, b = (t.text(other), self._name) if reflected else (self._name, t.text(other))
        return t.emit(f"{a} {op} {b}")

    def __neg__(self):
        return self._trace.emit(f"-{self._name}")

    def __pos__(self):
        return self._trace.emit(f"+{self._name}")

    def __invert__(self):
        return self._trace.emit(f"~{self._name}")

    def __abs__(self):
        return self._trace.call("abs", (self,), {})

    def __bool__(self):
        raise TypeError("ukern.fuse: the truth value of a traced array is unknown while tracing "
                        "(use where(cond, a, b) instead of if/and/or)")

    def __float__(self):
        raise TypeError("ukern.fuse: a traced array is not a Python number (use .astype())")

    __int__ = __index__ = __complex__ = __float__

    def __iter__(self):
        raise TypeError("ukern.fuse: traced arrays cannot be iterated or indexed")

    __getitem__ = __setitem__ = __len__ = __iter__

    def _inplace(self, other):
        raise TypeError("ukern.fuse: in-place updates (x += ...) are not supported; return the new value")

    __iadd__ = __isub__ = __imul__ = __itruediv__ = __ifloordiv__ = __imod__ = __ipow__ = _inplace
    __iand__ = __ior__ = __ixor__ = _inplace

    # NumPy protocols: np.sqrt(x), np.sum(x, axis=1), np.where(c, a, b), ...
    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        if method != "__call__":
            raise NotImplementedError(f"ukern.fuse: {ufunc.__name__}.{method} is not supported")
        if ufunc.nout != 1:
            raise NotImplementedError(f"ukern.fuse: {ufunc.__name__} has several outputs")
        return self._trace.call(ufunc.__name__, inputs, kw)

    def __array_function__(self, func, types, args, kw):
        return self._trace.call(func.__name__, args, kw)

    # methods NumPy and CuPy arrays have
    def astype(self, dtype, copy=True):
        return self._trace.emit(f"astype({self._name}, '{_dtype_text(dtype)}')")

    def conj(self):
        return self._trace.call("conj", (self,), {})

    conjugate = conj

    @property
    def real(self):
        return self._trace.call("real", (self,), {})

    @property
    def imag(self):
        return self._trace.call("imag", (self,), {})


def _binary(op, sym):
    def fwd(self, other):
        return self._bin(sym, other)

    def rev(self, other):
        return self._bin(sym, other, reflected=True)
    setattr(_Var, f"__{op}__", fwd)
    if op not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(_Var, f"__r{op}__", rev)


for _op, _sym in _BINARY.items():
    _binary(_op, _sym)
_Var.__hash__ = None


def _reduction(name):
    def method(self, axis=None, keepdims=False, **kw):
        kw = dict(kw, axis=axis)
        if keepdims:
            kw["keepdims"] = True
        return self._trace.call(name, (self,), kw)
    method.__name__ = name
    return method


for _r in _REDUCTIONS:
    setattr(_Var, _r, _reduction(_r))


def trace(func, nargs):
    """(inputs, outputs, program, single) for func called with nargs arguments."""
    t = _Trace()
    names = [f"a{i}" for i in range(nargs)]
    result = func(*[_Var(t, n) for n in names])
    single = not isinstance(result, tuple)
    results = (result,) if single else result
    if not results:
        raise ValueError("ukern.fuse: the function returns nothing")
    outs = []
    for i, r in enumerate(results):
        outs.append(f"out{i}")
        t.lines.append(f"out{i} = {t.text(r)}")
    return ", ".join(names), ", ".join(outs), "\n".join(t.lines), single


class Fusion:
    """A function fused into ukern kernels (see ukern.fuse).

    Called with the function's arguments (CUDA arrays of any library, Python or
    NumPy scalars) and optional stream=; returns what the function returns, as
    the first array's type (for CuPy and PyTorch inputs, after the first call
    with the same dtypes and shapes, allocated in the library's memory pool).
    The program is traced on the first call for each number of arguments.
    """

    def __init__(self, func, kernel_name=None):
        functools.update_wrapper(self, func)
        self.func = func
        self.kernel_name = kernel_name or func.__name__
        if not self.kernel_name.isidentifier() or self.kernel_name.startswith("_"):
            self.kernel_name = "fusion"
        self._programs = {}

    def _program(self, nargs):
        p = self._programs.get(nargs)
        if p is None:
            from ._ukern import _Fusion
            inputs, outputs, program, single = trace(self.func, nargs)
            p = (_Fusion(inputs, outputs, program, self.kernel_name), single, program)
            self._programs[nargs] = p
        return p

    def __call__(self, *args, stream=None):
        # The per-call path: one dict lookup, no keyword dict unless stream= is given.
        p = self._programs.get(len(args)) or self._program(len(args))
        r = p[0](*args) if stream is None else p[0](*args, stream=stream)
        return r[0] if p[1] else r

    def program(self, *args):
        """The traced program text (ukern's fusion language)."""
        return self._program(len(args))[2]

    def source(self, *args):
        """CUDA source of every kernel a call runs (host arrays describe shapes)."""
        return self._program(len(args))[0].source(*args)

    def precompile(self, *args):
        """Compiles what a call would run (no GPU needed with ukern.configure(arch=...))."""
        self._program(len(args))[0].precompile(*args)

    def kernel_count(self, *args):
        """How many kernels a call with these arguments runs."""
        return self._program(len(args))[0].kernel_count(*args)


def fuse(*args, kernel_name=None):
    """Decorator fusing a function of arrays and scalars into ukern kernels, as cupy.fuse.

    Use as @ukern.fuse, @ukern.fuse() or @ukern.fuse(kernel_name='name'). Inside the
    function use Python operators, NumPy ufuncs and functions (np.sqrt, np.where,
    np.sum(x, axis=..., keepdims=...), ...) and array methods (.sum(), .astype(), .real).
    Differences from cupy.fuse, on purpose: types follow NumPy 2 (NEP 50) exactly;
    reductions may be followed by elementwise work over the reduced value and by more
    reductions (split into the fewest kernels); cupy.* functions cannot be called on traced
    values (use numpy.* or methods); in-place updates of arguments are not supported.
    """
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fusion(args[0])
    if args:
        raise TypeError("fuse() takes a function or only keyword arguments")
    return lambda f: Fusion(f, kernel_name)
