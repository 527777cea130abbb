"""ukern.fuse: trace a Python function of arrays and scalars into a ukern
fusion program, built through the C fusion builder (uk_fusion_builder_*).

The function is run once with placeholder values (_fuse_trace._Var): Python
operators, numpy.* ufuncs and functions (NumPy's __array_ufunc__ /
__array_function__ protocols), cupy.* ufuncs and functions (CuPy's own
fusion dispatch, _fuse_hooks.py) and array methods record nodes. Types and
shapes are decided at each call by NumPy 2's rules (NEP 50: Python scalars
are weak), so one trace serves every dtype, unless the function reads
.dtype/.shape/.ndim/.size or updates an argument in place: then the trace is
specialised to the arguments' dtypes and shapes.
"""
import functools

import numpy

from . import _fuse_hooks
from ._fuse_trace import _Trace, _Var

__all__ = ["fuse", "Fusion"]

# where CuPy's fusion placeholders live (cupy.fuse's old and new tracers)
_CUPY_FUSION_MODULES = frozenset(("cupy._core.fusion", "cupy._core._fusion_interface", "cupy._core._fusion_variable"))
_SCALARS = (bool, int, float, complex, numpy.generic)
_HOST_SCALARS = _SCALARS + (numpy.ndarray, type(None))


def _render(nargs, nodes, outs, views=()):
    """Readable text of a node list (display only; nothing parses it)."""
    nin = nargs + len(views)

    def name(i):
        if i < nargs:
            return f"a{i}"
        if i < nin:
            arg, keys = views[i - nargs]
            return f"a{arg}" + "".join(f"[{_key_text(k)}]" for k in keys)
        return f"t{i - nin}"
    lines = []
    for k, n in enumerate(nodes):
        if n[0] == "const":
            rhs = repr(n[1])
        elif n[0] == "op":
            rhs = f"{n[1]}({', '.join(name(i) for i in n[2:])})"
        elif n[0] == "cast":
            rhs = f"astype({name(n[1])}, '{n[2]}')"
        else:
            _, fn, a, axes, keep, ddof = n
            rhs = f"{fn}({name(a)}, axis={axes!r}" + (", keepdims=True" if keep else "") + \
                (f", ddof={ddof}" if ddof else "") + ")"
        lines.append(f"{name(nin + k)} = {rhs}")
    lines += [f"out{k} = {name(i)}" for k, i in enumerate(outs)]
    return "\n".join(lines)


def _key_text(key):
    def one(k):
        if k is Ellipsis:
            return "..."
        if k is None:
            return "None"
        if isinstance(k, slice):
            return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step)).rstrip(":") or ":"
        return str(k)
    return ", ".join(one(k) for k in key) if isinstance(key, tuple) else one(key)


def trace(func, args):
    """(trace, results, single): func run on placeholders for args."""
    t = _Trace(args)
    with _fuse_hooks.tracing(t):
        result = func(*t.vars)
    if result is None:
        return t, (), None
    single = not isinstance(result, tuple)
    results = (result,) if single else result
    for r in results:
        if not isinstance(r, _Var):
            t.ref(r)  # a constant result: checked (Python/NumPy scalar) ...
    return t, results, single


def _signature(args):
    """The dtypes and shapes a specialised trace depends on (None arguments included)."""
    return tuple((str(getattr(a, "dtype", type(a).__name__)), tuple(getattr(a, "shape", ()) or ()))
                 for a in args)


_NO_TEXT = "program:1:1: "


def _reword(e):
    """An error of a built program points into no text ("program:1:1: ... ^"): say
    ukern.fuse instead, keeping the exception (its type and .status)."""
    msg = e.args[0] if e.args and isinstance(e.args[0], str) else ""
    if msg.startswith(_NO_TEXT):
        e.args = ("ukern.fuse: " + msg[len(_NO_TEXT):].split("\n", 1)[0],) + e.args[1:]
    return e


class _Program:
    """One traced program: its compiled fusion(s) and how a call uses them."""

    def __init__(self, func, args, kernel_name):
        t, results, single = trace(func, args)
        self.single = single
        self.none = single is None
        self.writes = sorted(t.writes.items())            # (argument index, its final value)
        values = list(results) + [v for _, v in self.writes]
        self.nret = len(results)
        self.nvalues = len(values)
        self.specialized = t.specialized
        nin, nodes, outs = t.program([t.ref(v) for v in values])
        self.nodes, self.outs = nodes, outs   # what the builder gets (tests evaluate it with NumPy)
        self.views = t.views              # (argument, index keys): inputs after the arguments
        self.text = _render(t.nin, nodes, outs, t.views)
        # ukern computes a fusion's elementwise outputs over one shape; a specialised
        # trace knows its values' shapes, so outputs of other shapes (an argument updated
        # in place beside a smaller result) go to fusions of their own.
        by_shape = {}
        for k, v in enumerate(values):
            by_shape.setdefault(t.shapes[t.ref(v)] if t.writes else None, []).append(k)
        self.parts = []
        if outs:
            from ._ukern import _Fusion
            for positions in by_shape.values():
                f = _Fusion(nin, tuple(outs[k] for k in positions), self.text, kernel_name, nodes=nodes)
                self.parts.append((f, positions))
        self.fusion = self.parts[0][0] if len(self.parts) == 1 else None
        # the common case, called directly: one fusion, no views, no write-back, results returned
        self.nones = any(a is None for a in args)
        self.plain = self.fusion if not (self.views or self.writes or self.none or self.nones) else None

    def inputs(self, args):
        """The fusion's inputs: the arguments (0 for None: unused), then the views the function indexes."""
        if self.nones:
            args = tuple(0 if a is None else a for a in args)
        if not self.views:
            return args
        extra = []
        for arg, keys in self.views:
            v = args[arg]
            for k in keys:
                v = v[k]
            extra.append(v)
        return tuple(args) + tuple(extra)

    def aliased(self, args):
        """An argument the function updates in place shares memory with another argument
        (f(x, x), f(x, x.T)): later reads must see the update, which one pass over the
        arguments' old values cannot give."""
        if not self.writes:
            return False
        from ._ukern import _arg
        spans = []
        for a in args:
            span = None
            if a is not None and not isinstance(a, _SCALARS):
                try:
                    g = _arg(a)
                except (TypeError, ValueError):
                    g = None
                if g is not None and len(g) == 6 and all(g[3]):   # an array of at least one element
                    _, dtype, ptr, shape, strides, device = g
                    lo = ptr + sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
                    hi = ptr + sum((n - 1) * st for n, st in zip(shape, strides) if st > 0) + \
                        numpy.dtype(dtype).itemsize
                    span = (device, lo, hi)
            spans.append(span)
        for i, _ in self.writes:
            w = spans[i]
            if w is None:
                continue
            for j, o in enumerate(spans):
                if j != i and o is not None and o[0] == w[0] and o[1] < w[2] and w[1] < o[2]:
                    return True
        return False

    def run(self, args, stream, func=None):
        """The call: func, the traced function, runs as plain Python where updated
        arguments share memory with others (aliased)."""
        if not self.parts:
            return None if self.none else ()     # `return ()` returns () as cupy.fuse
        if func is not None and self.aliased(args):   # the arrays' library orders the updates
            return func(*args)
        full = self.inputs(args)
        if self.fusion is not None:
            r = self.fusion(*full) if stream is None else self.fusion(*full, stream=stream)
        else:
            r = [None] * self.nvalues
            for f, positions in self.parts:    # every part reads the arguments before any write-back
                for k, v in zip(positions, f(*full) if stream is None else f(*full, stream=stream)):
                    r[k] = v
        for k, (i, _) in enumerate(self.writes):  # in-place updates: written back into the argument
            args[i][...] = r[self.nret + k]
        if self.none:
            return None
        return r[0] if self.single else tuple(r[: self.nret])


class Fusion:
    """A function fused into ukern kernels (see ukern.fuse).

    Called with the function's arguments (CUDA arrays of any library, Python or
    NumPy scalars) and optional stream=; returns what the function returns, as
    the first array's type (for CuPy and PyTorch inputs, after the first call
    with the same dtypes and shapes, allocated in the library's memory pool).
    Called with no device array (only scalars or NumPy arrays), or from inside
    another fused function's trace, it runs the plain Python function, as
    cupy.fuse does. The program is traced on the first call for each number of
    arguments (or, for a function that reads dtypes/shapes or updates an
    argument in place, for each argument signature).
    """

    def __init__(self, func, kernel_name=None):
        functools.update_wrapper(self, func)
        self.func = func
        self.kernel_name = kernel_name or getattr(func, "__name__", "fusion")
        if not self.kernel_name.isidentifier() or self.kernel_name.startswith("_"):
            self.kernel_name = "fusion"
        self._generic = {}   # nargs -> _Program traced without reading dtypes/shapes
        self._special = {}   # _signature(args) -> specialised _Program

    def __repr__(self):
        return f"<ukern.Fusion '{self.kernel_name}'>"

    def _program(self, args):
        nones = any(a is None for a in args)
        p = None if nones else self._generic.get(len(args))
        if p is None:
            key = _signature(args)
            p = self._special.get(key)
            if p is None:
                p = _Program(self.func, args, self.kernel_name)
                if p.specialized or nones:      # a trace with None arguments is kept by signature
                    self._special[key] = p
                else:
                    self._generic[len(args)] = p
        return p

    def __call__(self, *args, stream=None):
        # The per-call path: a type check per argument, one dict lookup, the fusion's call.
        device = nones = False
        for a in args:
            if a is None:
                nones = True
            elif not device and not isinstance(a, _HOST_SCALARS):
                if type(a) is _Var:       # called inside another fused function's trace: inlined
                    return self.func(*args)
                if type(a).__module__ in _CUPY_FUSION_MODULES and _fuse_hooks.foreign_fusing():
                    return self.func(*args)   # inside CuPy's own fusion trace: inlined, as cupy.fuse
                device = True
        if not device:                    # no device array: plain Python, as cupy.fuse
            return self.func(*args)
        p = self._program(args) if nones else (self._generic.get(len(args)) or self._program(args))
        f = p.plain
        try:
            if f is None:
                return p.run(args, stream, self.func)
            r = f(*args) if stream is None else f(*args, stream=stream)
        except (TypeError, ValueError) as e:
            raise _reword(e)
        return r[0] if p.single else r

    def clear_cache(self):
        """Forgets the traced programs (the compiled kernels stay in ukern's caches)."""
        self._generic.clear()
        self._special.clear()

    def program(self, *args):
        """The traced program, as readable text (args: any values of the call's kinds)."""
        return self._program(args).text

    def _parts(self, args):
        """(the fusions a call runs, their inputs for args)."""
        p = self._program(args)
        if not p.parts:
            raise ValueError("ukern.fuse: the function computes nothing (it returns None and updates nothing)")
        return [f for f, _ in p.parts], p.inputs(args)

    def _each(self, method, args):
        fs, full = self._parts(args)
        try:
            return [getattr(f, method)(*full) for f in fs]
        except (TypeError, ValueError) as e:
            raise _reword(e)

    def source(self, *args):
        """CUDA source of every kernel a call runs (host arrays describe shapes)."""
        return "".join(self._each("source", args))

    def precompile(self, *args):
        """Compiles what a call would run (no GPU needed with ukern.configure(arch=...))."""
        self._each("precompile", args)

    def kernel_count(self, *args):
        """How many kernels a call with these arguments runs."""
        return sum(self._each("kernel_count", args))


def fuse(*args, kernel_name=None):
    """Decorator fusing a function of arrays and scalars into ukern kernels, as cupy.fuse.

    Use as @ukern.fuse, @ukern.fuse() or @ukern.fuse(kernel_name='name'). Inside the
    function use Python operators, numpy.* or cupy.* ufuncs and functions (np.sqrt,
    cupy.where, cupy.sum(x, axis, dtype, out, keepdims), ...), array methods (.sum(),
    .astype(), .real), attributes (.dtype, .shape, .ndim, .size) and in-place updates of
    arguments (x += y, cupy.add(x, y, out=x)). Types follow NumPy 2 (NEP 50) exactly;
    reductions may be followed by elementwise work over the reduced value and by more
    reductions (split into the fewest kernels). See docs/SEMANTICS.md for the differences
    from cupy.fuse.
    """
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fusion(args[0])
    if args:
        raise TypeError("fuse() takes a function or only keyword arguments")
    return lambda f: Fusion(f, kernel_name)
