"""The tracer of ukern.fuse: runs the user's function once on placeholder
values (_Var) and records a list of nodes for the C fusion builder
(uk_fusion_builder_*, through ukern._Fusion(..., nodes=[...])).

Node forms (indices refer to earlier nodes; 0..nin-1 are the arguments):
  ("const", python bool/int/float/complex)   a weak Python scalar
  ("op", numpy name, arg, ...)               an operator or ufunc
  ("cast", arg, dtype name)                  a cast (strong)
  ("red", name, arg, axes or None, keepdims, ddof)

Each value also carries a host sample (a NumPy value of its dtype and ndim,
or a Python scalar for weak scalars) from which NumPy itself gives the
dtype of .dtype, the casting checks of in-place updates, and the errors
NumPy raises; and its shape (from the call's arguments). Reading .dtype,
.shape, .ndim or .size specialises the trace to the call's dtypes and shapes.
"""
import warnings

import numpy

from . import _fuse_ops as ops


class _Trace:
    def __init__(self, args):
        self.nin = len(args)
        self.nodes = []
        self.samples = []      # per node id: NumPy sample or Python scalar (None: unknown)
        self.shapes = []       # per node id: shape tuple (() for scalars)
        self.strong = []       # per node id: known to be a NumPy array/scalar (not weak)
        self.writes = {}       # argument index -> _Var written into it
        self.specialized = False
        for k, a in enumerate(args):
            s, shape = _input_sample(a)
            self.samples.append(s)
            self.shapes.append(shape)
            self.strong.append(False)  # unknown: a later call may pass a Python scalar here
        self.views = []        # (argument index, keys): extra inputs, indexed per call
        self.vars = [_Var(self, k, arg=k) for k in range(self.nin)]
        for v in self.vars:
            v._view = (v._arg, ())
        # None arguments reach the function as None (`if y is None:`), as in cupy.fuse; the
        # program has an (unused) input there and the call passes 0 for it
        self.vars = [None if a is None else v for a, v in zip(args, self.vars)]

    # -- nodes --------------------------------------------------------------
    def _add(self, node, sample, shape, strong):
        self.nodes.append(node)
        self.samples.append(sample)
        self.shapes.append(shape)
        self.strong.append(strong)
        return len(self.samples) - 1

    def ref(self, v):
        """The node id of an operand (a _Var or a constant)."""
        if isinstance(v, _Var):
            if v._trace is not self:
                raise ValueError("ukern.fuse: a value from another fused function was used")
            return v._id
        if isinstance(v, (bool, int, float, complex)) and not isinstance(v, numpy.generic):
            return self._add(("const", v), v, (), False)
        if isinstance(v, (numpy.generic, numpy.ndarray)) and numpy.ndim(v) == 0:
            # a NumPy scalar is strong (NEP 50; numpy.float64 subclasses float)
            v = numpy.asarray(v)[()]
            c = self._add(("const", v.item()), v.item(), (), False)
            return self._add(("cast", c, v.dtype.name), v, (), True)
        raise TypeError(f"ukern.fuse: cannot use a {type(v).__name__} inside a fused function "
                        "(arrays must be arguments; constants must be Python or NumPy scalars)")

    def op(self, name, operands, call=False):
        """operands combined by op `name` (a NumPy ufunc name). call: a function
        call (np.add(...)), whose result is strong even if every operand is weak."""
        ids = [self.ref(a) for a in operands]
        shape = _broadcast([self.shapes[i] for i in ids])
        sample = _apply(getattr(numpy, ops.NUMPY_NAME.get(name, name), None), [self.samples[i] for i in ids])
        strong = any(self.strong[i] for i in ids)
        r = self._add(("op", name) + tuple(ids), sample, shape, strong)
        if call and not strong:  # np.minimum(2.5, s) is a numpy.float64: strong
            r = self._add(("op", "asarray", r), _apply(numpy.asarray, [sample]), shape, True)
        return _Var(self, r)

    def cast(self, v, dtype):
        i = self.ref(v)
        dt = numpy.dtype(dtype)
        sample = _apply(lambda s: numpy.asarray(s).astype(dt), [self.samples[i]])
        return _Var(self, self._add(("cast", i, dt.name), sample, self.shapes[i], True))

    def reduce(self, name, v, axis, keepdims, ddof=0):
        i = self.ref(v)
        nd = len(self.shapes[i])
        axes = ops.normalize_axis(axis)
        if axes is None:
            red = tuple(range(nd))
        else:
            red = tuple(a + nd if a < 0 else a for a in axes)
            for a, r in zip(axes, red):
                if not 0 <= r < nd:
                    raise numpy.exceptions.AxisError(a, nd)
        shape = tuple(1 if k in red else n for k, n in enumerate(self.shapes[i])) if keepdims else \
            tuple(n for k, n in enumerate(self.shapes[i]) if k not in red)
        fn = getattr(numpy, ops.NUMPY_NAME.get(name, name))
        kw = {"ddof": ddof} if name in ("var", "std") else {}
        sample = _apply(lambda s: fn(s, axis=axes, keepdims=bool(keepdims), **kw), [self.samples[i]])
        return _Var(self, self._add(("red", name, i, axes, bool(keepdims), int(ddof)), sample, shape, True))

    def write(self, target, value, casting="same_kind"):
        """out=target: value is cast to target's dtype (NumPy's casting rule,
        checked here) and target now holds it; an argument is written back."""
        if not isinstance(target, _Var) or target._trace is not self:
            raise TypeError("ukern.fuse: out= must be an argument or a value of the fused function")
        if not isinstance(value, _Var):
            value = _Var(self, self.ref(value))
        if not isinstance(self.samples[target._id], numpy.ndarray):
            return value          # a scalar (Python or NumPy) is immutable: Python rebinds the name
        if target._view is not None and target._view[1]:
            raise NotImplementedError("ukern.fuse: writing into a view of an argument (x[0] += 1) is not supported")
        target._view = None    # it no longer holds the argument's values: not indexable as one
        self.specialized = True  # the cast depends on the dtypes
        ts, vs = self.samples[target._id], self.samples[self.ref(value)]
        if ts is not None and vs is not None:
            tdt = numpy.asarray(ts).dtype
            vdt = numpy.asarray(vs).dtype if not _weak(vs) else numpy.result_type(tdt, vs)
            if not numpy.can_cast(vdt, tdt, casting):  # NumPy raises a TypeError (UFuncTypeError)
                raise TypeError(f"Cannot cast ufunc output from {vdt!r} to {tdt!r} with casting rule '{casting}'")
            new = numpy.broadcast_shapes(self.shapes[target._id], self.shapes[self.ref(value)])
            if new != self.shapes[target._id]:
                raise ValueError(f"non-broadcastable output operand with shape {self.shapes[target._id]} "
                                 f"doesn't match the broadcast shape {new}")
            if new != self.shapes[self.ref(value)]:   # x[:] = nan: the value fills the whole array
                value = self.op("where", (True, value, target))
            if vdt != tdt:
                value = self.cast(value, tdt)
        target._id = self.ref(value)
        if target._arg is not None:
            self.writes[target._arg] = target
        return target


    def view(self, v, key):
        """v[key] of an argument (or of such a view) with basic indexing: an extra input
        of the program, computed from the argument at each call by the array's library."""
        base = getattr(v, "_view", None)
        if base is None:
            return self._expand(v, key)
        arg, keys = base
        if not isinstance(self.samples[arg], numpy.ndarray):
            raise TypeError(f"ukern.fuse: a {type(self.samples[arg]).__name__} argument cannot be indexed")
        _check_basic(key)
        dtype = self.samples[arg].dtype
        probe = numpy.lib.stride_tricks.as_strided(numpy.zeros(1, dtype), self.shapes[arg],
                                                   (0,) * len(self.shapes[arg]))
        for k in keys + (key,):
            probe = probe[k]          # IndexError as NumPy raises it
        shape = numpy.shape(probe)
        spec = (arg, keys + (key,))
        for i, n in enumerate(self.nodes):      # the same view again: the same input
            if n[0] == "view" and self.views[n[1]] == spec:
                r = _Var(self, self.nin + i)
                r._view = spec
                return r
        self.views.append(spec)
        r = _Var(self, self._add(("view", len(self.views) - 1), numpy.ones((1,) * len(shape), dtype), shape,
                                 False))
        r._view = (arg, keys + (key,))
        return r

    def _expand(self, v, key):
        """v[None, :, None] of a computed value: only new axes where its reductions
        removed theirs (batch norm's mean[None, :, None, None]) are supported, by
        computing the value again with keepdims=True."""
        i = self.ref(v)
        items = key if isinstance(key, tuple) else (key,)
        if not all(k is None or k is Ellipsis or (isinstance(k, slice) and k == _FULL) for k in items):
            raise NotImplementedError("ukern.fuse: only arguments (not computed values or arguments "
                                      "updated in place) can be indexed")
        probe = numpy.lib.stride_tricks.as_strided(numpy.zeros(1), self.shapes[i], (0,) * len(self.shapes[i]))
        want = numpy.shape(probe[key])
        if want == self.shapes[i]:
            return v
        try:
            r = self._keepdims(i, want, {})
        except RecursionError:
            r = None
        if r is None or self.shapes[r] != want:
            raise NotImplementedError("ukern.fuse: indexing a computed value is supported only to restore "
                                      "the axes its reductions removed (as keepdims=True)")
        return _Var(self, r)

    def _keepdims(self, i, want, memo):
        """Node i computed again with its reductions keeping their axes, if that gives shape
        `want` (scalars stay as they are); None when it cannot. memo: node -> result, so
        shared operands are visited once."""
        if i not in memo:
            memo[i] = self._keepdims_node(i, want, memo)
        return memo[i]

    def _keepdims_node(self, i, want, memo):
        n = self.nodes[i - self.nin] if i >= self.nin else None
        if not self.shapes[i]:
            return i                          # a scalar broadcasts anyway
        if n is None or n[0] in ("view", "const"):
            return None
        if n[0] == "red":
            _, name, a, axes, keep, ddof = n
            if keep:
                return None
            r = self.reduce(name, _Var(self, a), axes, True, ddof)._id
            return r if self.shapes[r] == want else None
        if n[0] == "cast":
            a = self._keepdims(n[1], want, memo)
            return None if a is None else self.cast(_Var(self, a), n[2])._id
        args = []
        for a in n[2:]:
            k = self._keepdims(a, want, memo)
            if k is None:
                return None
            args.append(_Var(self, k))
        return self.op(n[1], args)._id

    def program(self, outs):
        """(input count, nodes, outputs) for the builder: views become inputs after the
        arguments, and node ids move past them."""
        nv = len(self.views)
        new = list(range(self.nin))
        nodes = []
        for k, n in enumerate(self.nodes):
            if n[0] == "view":
                new.append(self.nin + n[1])
                continue
            new.append(self.nin + nv + len(nodes))
            if n[0] == "op":
                n = n[:2] + tuple(new[i] for i in n[2:])
            elif n[0] in ("cast",):
                n = (n[0], new[n[1]]) + n[2:]
            elif n[0] == "red":
                n = n[:2] + (new[n[2]],) + n[3:]
            nodes.append(n)
        return self.nin + nv, nodes, tuple(new[i] for i in outs)


_FULL = slice(None)


def _check_basic(key):
    for k in key if isinstance(key, tuple) else (key,):
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (bool, numpy.bool_, _Var)) or not hasattr(k, "__index__"):
            raise NotImplementedError(f"ukern.fuse: only basic indexing (ints, slices, ..., None) of "
                                      f"arguments is supported, not {type(k).__name__}")


def _whole(key):
    """key selects the whole array (x[...] = v, x[:] = v)."""
    return all(k is Ellipsis or (isinstance(k, slice) and k == _FULL)
               for k in (key if isinstance(key, tuple) else (key,)))


def _input_sample(a):
    """(sample, shape) of a call argument."""
    if isinstance(a, (bool, int, float, complex)):
        return a, ()
    if isinstance(a, numpy.generic):
        return a, ()
    dtype = getattr(a, "dtype", None)
    shape = getattr(a, "shape", None)
    if dtype is None or shape is None:
        cai = getattr(a, "__cuda_array_interface__", None)
        if cai is not None:
            dtype, shape = numpy.dtype(cai["typestr"]), tuple(cai["shape"])
    try:
        dtype = numpy.dtype(str(dtype).replace("torch.", "")) if dtype is not None else None
    except TypeError:
        dtype = None
    if dtype is None or shape is None:
        return None, ()
    shape = tuple(int(n) for n in shape)
    return numpy.ones((1,) * len(shape), dtype), shape


def _weak(s):
    """s is a Python scalar (weak, no dtype); NumPy's float64 and complex128 subclass
    float and complex but have a dtype."""
    return isinstance(s, (bool, int, float, complex)) and not isinstance(s, numpy.generic)


def _broadcast(shapes):
    try:
        return numpy.broadcast_shapes(*shapes)
    except ValueError as e:
        raise ValueError(f"ukern.fuse: operands could not be broadcast together with shapes "
                         f"{' '.join(str(s) for s in shapes)}") from e


def _apply(fn, samples):
    """NumPy's result on the samples (its dtype and kind), or None."""
    if fn is None or any(s is None for s in samples):
        return None
    try:
        with numpy.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # var(ddof=1) of a one-element sample warns
            return fn(*samples)
    except Exception:
        return None


class _Var:
    """A value inside a traced function (an argument or a result)."""

    __array_priority__ = 1000

    def __init__(self, trace, node, arg=None):
        self._trace = trace
        self._id = node
        self._arg = arg   # the argument it is (writes go back to it), or None
        self._view = None  # (argument index, index keys) when it is an argument or a view of one

    # -- attributes (specialise the trace) ------------------------------------
    def _sample(self):
        t = self._trace
        t.specialized = True
        s = t.samples[self._id]
        if s is None:
            raise AttributeError("ukern.fuse: the dtype of this value is not known while tracing "
                                 "(an argument without a dtype)")
        # a Python scalar answers the dtype NumPy gives it (int64, float64, complex128,
        # bool), as in cupy.fuse; its value stays weak (NEP 50) in the program
        return s

    @property
    def dtype(self):
        return numpy.asarray(self._sample()).dtype

    @property
    def shape(self):
        self._sample()
        return self._trace.shapes[self._id]

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self):
        return self.dtype.itemsize

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object")
        return shape[0]

    # -- Python protocol ------------------------------------------------------
    # CuPy's text first (users' tests match on it), then ukern's hint
    def __bool__(self):
        raise TypeError("Cannot convert to Python scalar in cupy.fuse: the truth value of a traced array is "
                        "unknown while tracing (use where(cond, a, b) instead of if/and/or)")

    def __float__(self):
        raise TypeError("Cannot convert to Python scalar in cupy.fuse: a traced array is not a Python number "
                        "(use .astype())")

    __int__ = __index__ = __complex__ = __float__

    def __iter__(self):
        raise TypeError("ukern.fuse: traced arrays cannot be iterated")

    def __getitem__(self, key):
        return self._trace.view(self, key)

    def __setitem__(self, key, value):
        if not _whole(key):
            raise NotImplementedError("ukern.fuse: only whole-array assignment (x[...] = v, x[:] = v) "
                                      "is supported")
        self._trace.write(self, self._trace.op("asarray", (value,)), casting="unsafe")   # as NumPy's setitem
    __hash__ = None

    def __neg__(self):
        return self._trace.op("negative", (self,))

    def __pos__(self):
        return self._trace.op("positive", (self,))

    def __invert__(self):
        return self._trace.op("invert", (self,))

    def __abs__(self):
        return self._trace.op("absolute", (self,))

    # -- NumPy protocols: np.sqrt(x), np.sum(x, 1), np.where(c, a, b), ... ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        if method != "__call__":
            raise NotImplementedError(f"ukern.fuse: {ufunc.__name__}.{method} is not supported")
        return ops.call_ufunc(self._trace, ufunc.__name__, ufunc.nin, inputs, kw)

    def __array_function__(self, func, types, args, kw):
        return ops.call_function(self._trace, func, args, kw)

    # -- methods NumPy and CuPy arrays have ------------------------------------
    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        return self._trace.cast(self, dtype)

    def copy(self, order="C"):
        return self._trace.op("asarray", (self,))

    def conj(self):
        return self._trace.op("conjugate", (self,))

    conjugate = conj

    @property
    def real(self):
        return self._trace.op("real", (self,))

    @property
    def imag(self):
        return self._trace.op("imag", (self,))

    def clip(self, min=None, max=None, out=None):
        return ops.call_named(self._trace, "clip", (self, min, max), {"out": out})

    def round(self, decimals=0, out=None):
        return ops.call_named(self._trace, "round", (self, decimals), {"out": out})

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return ops.reduction(self._trace, "sum", self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return ops.reduction(self._trace, "prod", self, axis, dtype, out, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return ops.reduction(self._trace, "mean", self, axis, dtype, out, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return ops.reduction(self._trace, "var", self, axis, dtype, out, keepdims, ddof)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return ops.reduction(self._trace, "std", self, axis, dtype, out, keepdims, ddof)

    def max(self, axis=None, out=None, keepdims=False):
        return ops.reduction(self._trace, "max", self, axis, None, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return ops.reduction(self._trace, "min", self, axis, None, out, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return ops.reduction(self._trace, "any", self, axis, None, out, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return ops.reduction(self._trace, "all", self, axis, None, out, keepdims)

    # CuPy's signature (cupy.argmax(a, axis, dtype, out, keepdims) calls it so): dtype is the index's
    def argmax(self, axis=None, out=None, dtype=None, keepdims=False):
        return ops.index_reduction(self._trace, "argmax", self, axis, out, dtype, keepdims)

    def argmin(self, axis=None, out=None, dtype=None, keepdims=False):
        return ops.index_reduction(self._trace, "argmin", self, axis, out, dtype, keepdims)


def _install_operators():
    def binary(name):
        def fwd(self, other):
            return self._trace.op(name, (self, other))

        def rev(self, other):
            return self._trace.op(name, (other, self))

        def inplace(self, other):
            return self._trace.write(self, self._trace.op(name, (self, other)))
        return fwd, rev, inplace

    for dunder, name in ops.OPERATORS.items():
        fwd, rev, inplace = binary(name)
        setattr(_Var, f"__{dunder}__", fwd)
        if dunder not in ("lt", "le", "gt", "ge", "eq", "ne"):
            setattr(_Var, f"__r{dunder}__", rev)
            setattr(_Var, f"__i{dunder}__", inplace)


_install_operators()
