"""The calls a traced function may make, with NumPy's and CuPy's full
signatures: ufuncs (positional and keyword out=, dtype=), reductions
(axis, dtype, out, keepdims, ddof; positional or keyword) and routines
(where, clip, round, copyto, ...). numpy.* calls reach here through NumPy's
__array_ufunc__ / __array_function__ protocols, cupy.* calls through CuPy's
own fusion dispatch (see _fuse_hooks.py); both name the operation as NumPy
does, so both trace alike.
"""
import numpy

# Python operator (dunder stem) -> ufunc name
OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "lshift": "left_shift",
    "rshift": "right_shift", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
    "ne": "not_equal",
}

# names the C table knows under another NumPy name, and names for samples
ALIASES = {"divide": "true_divide", "bitwise_not": "invert", "bitwise_invert": "invert", "abs": "absolute",
           "conj": "conjugate", "mod": "remainder", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift", "fabs": "absolute"}
NUMPY_NAME = {"true_divide": "divide", "max": "amax", "min": "amin"}

_REDUCTIONS = {"sum", "prod", "mean", "var", "std", "max", "min", "any", "all", "argmax", "argmin",
               "nansum", "nanprod"}


def normalize_axis(axis):
    """None, or a tuple of ints."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_index(a) for a in axis)
    return (_index(axis),)


def _index(a):
    try:
        return int(a.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"ukern.fuse: axis must be an int, a tuple of ints or None, not {type(a).__name__}") \
            from None


def _outs(out, nout):
    if out is None:
        return (None,) * nout
    if not isinstance(out, tuple):
        out = (out,)
    if len(out) != nout:
        raise ValueError(f"ukern.fuse: {nout} output(s) expected, {len(out)} given in out=")
    return out


def call_ufunc(trace, name, nin, inputs, kw):
    """ufunc `name` on inputs (positional outputs after the nin inputs)."""
    name = ALIASES.get(name, name)
    kw = dict(kw)
    out, dtype = kw.pop("out", None), kw.pop("dtype", None)
    if kw.pop("where", True) is not True:
        raise NotImplementedError(f"ukern.fuse: {name}(where=...) is not supported")
    for k in ("casting", "order", "subok", "signature"):
        kw.pop(k, None)
    if kw:
        raise TypeError(f"ukern.fuse: {name}() got unexpected keyword arguments {sorted(kw)}")
    if len(inputs) > nin:
        if out is not None:
            raise TypeError(f"ukern.fuse: {name}() got out both positionally and as a keyword")
        out, inputs = tuple(inputs[nin:]), inputs[:nin]
    if dtype is not None:
        inputs = [trace.cast(a, dtype) for a in inputs]
    if name in COMPOSITES:
        results = COMPOSITES[name](trace, *inputs)
        results = results if isinstance(results, tuple) else (results,)
    elif name == "divmod":
        results = (trace.op("floor_divide", inputs, call=True), trace.op("remainder", inputs, call=True))
    elif name == "modf":
        x = _as_float(trace, inputs[0], numpy.modf)
        whole = trace.op("trunc", (x,), call=True)
        # the fraction keeps x's sign (-0.0 of -2.0) and is 0 for infinities, as NumPy's
        frac = trace.op("where", (trace.op("isinf", (x,)), 0, trace.op("subtract", (x, whole))))
        results = (trace.op("copysign", (frac, x), call=True), whole)
    else:
        results = (trace.op(name, inputs, call=True),)
    outs = _outs(out, len(results))
    results = tuple(r if o is None else trace.write(o, r) for r, o in zip(results, outs))
    return results[0] if len(results) == 1 else results


def _as_float(trace, x, fn):
    """x cast to the float type NumPy computes fn in (ints have no loop of their own)."""
    from ._fuse_trace import _Var
    s = trace.samples[x._id] if isinstance(x, _Var) else x
    try:
        with numpy.errstate(all="ignore"):
            dt = numpy.asarray(fn(s)[0] if isinstance(fn(s), tuple) else fn(s)).dtype
    except Exception:
        return x
    if isinstance(x, _Var) and trace.samples[x._id] is not None:
        trace.specialized = True      # whether a cast is needed depends on the dtype
        if numpy.asarray(s).dtype != dt:
            return trace.cast(x, dt)
    return x


def _float_args(trace, fn, args):
    """args cast to the float type NumPy computes fn in (the trace then depends on dtypes)."""
    from ._fuse_trace import _Var
    samples = [trace.samples[a._id] if isinstance(a, _Var) else a for a in args]
    if any(s is None for s in samples):
        raise TypeError(f"ukern.fuse: {fn.__name__} needs its operands' dtypes")
    with numpy.errstate(all="ignore"):
        r = fn(*samples)
    dt = numpy.asarray(r[0] if isinstance(r, tuple) else r).dtype
    trace.specialized = True
    return [trace.cast(a, dt) if isinstance(a, _Var) else a for a in args], dt


def _scaled(factor, fn):
    def f(trace, x):
        (x,), _ = _float_args(trace, fn, [x])
        return trace.op("multiply", (x, factor))
    return f


def _logaddexp(exp, scale, log_of_2, fn):
    """max + log(1 + exp(-|x - y|)) in base e or 2 (scale 1/ln 2)."""
    def f(trace, x, y):
        (x, y), _ = _float_args(trace, fn, [x, y])
        d = trace.op("negative", (trace.op("absolute", (trace.op("subtract", (x, y)),)),))
        tail = trace.op("log1p", (trace.op(exp, (d,)),))
        if scale != 1.0:
            tail = trace.op("multiply", (tail, scale))
        r = trace.op("add", (trace.op("maximum", (x, y)), tail))
        # equal operands (also both infinite): x + log(2), where the difference would be NaN
        return trace.op("where", (trace.op("equal", (x, y)), trace.op("add", (x, log_of_2)), r))
    return f


def _ldexp(trace, x, n):
    (x, _), dt = _float_args(trace, numpy.ldexp, [x, n])
    scale = trace.op("exp2", (trace.cast(n, numpy.float64) if not isinstance(n, (int, float)) else float(n),))
    return trace.op("multiply", (x, trace.cast(scale, dt)))


def _copysign_one(s):
    return numpy.copysign(1, s)


def _signbit(trace, x):
    (x,), _ = _float_args(trace, _copysign_one, [x])   # the float loop signbit runs in
    return trace.op("less", (trace.op("copysign", (1, x)), 0))


def _i0(trace, x):
    """numpy.i0 computes in the input's float type, or float64 for bools and ints."""
    from ._fuse_trace import _Var
    s = trace.samples[x._id] if isinstance(x, _Var) else x
    if s is None:
        raise TypeError("ukern.fuse: i0 needs its operand's dtype")
    if isinstance(x, _Var):
        trace.specialized = True
    if numpy.asarray(s).dtype.kind in "biu":
        x = trace.cast(x, numpy.float64)
    return trace.op("i0", (x,), call=True)


def _heaviside(trace, x, h):
    """0 for x < 0, h for x == 0, 1 for x > 0, NaN for NaN (in NumPy's float type)."""
    (x, h), dt = _float_args(trace, numpy.heaviside, [x, h])
    h = trace.cast(h, dt)                                       # every branch in NumPy's float type
    step = trace.cast(trace.op("greater", (x, 0)), dt)
    return trace.op("where", (trace.op("isnan", (x,)), x, trace.op("where", (trace.op("equal", (x, 0)), h, step))),
                    call=True)


def _float_power(trace, x, y):
    """power in float64 (complex128 for complex operands), as numpy.float_power."""
    (x, y), _ = _float_args(trace, numpy.float_power, [x, y])
    return trace.op("power", (x, y), call=True)


def _fix(trace, x):
    (x,), _ = _float_args(trace, numpy.fix, [x])
    return trace.op("trunc", (x,))


def _sinc(trace, x):
    (x,), _ = _float_args(trace, numpy.sinc, [x])
    px = trace.op("multiply", (x, float(numpy.pi)))
    return trace.op("where", (trace.op("equal", (x, 0)), 1.0, trace.op("true_divide", (trace.op("sin", (px,)), px))))


def _frexp(trace, x):
    """(mantissa in [0.5, 1), int32 exponent) with x = m * 2**e; (x, 0) for 0, inf, nan."""
    (x,), _ = _float_args(trace, numpy.frexp, [x])
    ax = trace.op("absolute", (x,))
    finite = trace.op("logical_and", (trace.op("isfinite", (x,)), trace.op("not_equal", (x, 0))))
    # the exponent from log2 in float64 (exact for powers of two), then corrected by one
    e = trace.op("add", (trace.op("floor", (trace.op("log2", (trace.cast(ax, numpy.float64),)),)), 1))
    m = trace.op("true_divide", (trace.cast(ax, numpy.float64), trace.op("exp2", (e,))))
    big = trace.op("greater_equal", (m, 1))
    e = trace.op("add", (e, trace.op("where", (big, 1, 0))))
    small = trace.op("less", (trace.op("true_divide", (m, trace.op("where", (big, 2, 1)))), 0.5))
    e = trace.op("subtract", (e, trace.op("where", (small, 1, 0))))
    mant = trace.op("copysign", (trace.op("true_divide", (trace.cast(ax, numpy.float64), trace.op("exp2", (e,)))),
                                 trace.cast(x, numpy.float64)))
    dt = numpy.asarray(trace.samples[x._id]).dtype
    mant = trace.cast(trace.op("where", (finite, mant, trace.cast(x, numpy.float64))), dt)
    exp = trace.cast(trace.op("where", (finite, e, 0)), numpy.int32)
    return mant, exp


# ufuncs the fusion language lacks, made of ops it has (types from NumPy on the samples)
COMPOSITES = {
    "deg2rad": _scaled(float(numpy.pi / 180), numpy.deg2rad), "radians": _scaled(float(numpy.pi / 180), numpy.radians),
    "rad2deg": _scaled(float(180 / numpy.pi), numpy.rad2deg), "degrees": _scaled(float(180 / numpy.pi), numpy.degrees),
    "logaddexp": _logaddexp("exp", 1.0, float(numpy.log(2)), numpy.logaddexp),
    "logaddexp2": _logaddexp("exp2", float(1 / numpy.log(2)), 1.0, numpy.logaddexp2),
    "ldexp": _ldexp, "signbit": _signbit, "fix": _fix, "sinc": _sinc, "frexp": _frexp,
    "heaviside": _heaviside, "float_power": _float_power,
}


def reduction(trace, name, a, axis=None, dtype=None, out=None, keepdims=False, ddof=0, **rest):
    for k, v in rest.items():
        if k == "initial" and v is not None or k == "where" and v is not True and v is not None:
            raise NotImplementedError(f"ukern.fuse: {name}({k}=...) is not supported")
    if name in ("nansum", "nanprod"):
        a = trace.op("where", (trace.op("isnan", (a,)), 0 if name == "nansum" else 1, a))
        name = name[3:]
    if dtype is not None:
        a = trace.cast(a, dtype)
    r = trace.reduce(name, a, axis, keepdims, ddof)
    if dtype is not None and name in ("sum", "prod"):   # sum(x, dtype=int8) is int8 (ukern sums small ints in int64)
        r = trace.cast(r, dtype)
    return r if out is None else trace.write(out, r)


def index_reduction(trace, name, a, axis=None, out=None, dtype=None, keepdims=False):
    """argmax/argmin; dtype= (CuPy's) is the index's dtype."""
    if dtype is None:
        return reduction(trace, name, a, axis, None, out, keepdims)
    r = trace.cast(trace.reduce(name, a, axis, keepdims), dtype)
    return r if out is None else trace.write(out, r)


# Routines with their NumPy signatures (the stubs only bind arguments).
def _sig_red(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return locals()


def _sig_red_nodtype(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return locals()


def _sig_var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True):
    return locals()


def _sig_arg(a, axis=None, out=None, keepdims=False):
    return locals()


def _red_handler(name, sig):
    def h(trace, *args, **kw):
        b = sig(*args, **kw)
        return reduction(trace, name, **b)
    return h


def _where(trace, condition, x=None, y=None):
    if x is None or y is None:
        raise NotImplementedError("ukern.fuse: where(condition) with one argument (nonzero) is not supported")
    return trace.op("where", (condition, x, y), call=True)


def _clip(trace, a, a_min=None, a_max=None, out=None, **kw):
    a_min = kw.pop("min", a_min)
    a_max = kw.pop("max", a_max)
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    if a_min is None:
        r = trace.op("minimum", (a, a_max), call=True)
    elif a_max is None:
        r = trace.op("maximum", (a, a_min), call=True)
    else:
        r = trace.op("clip", (a, a_min, a_max), call=True)
    return r if out is None else trace.write(out, r)


def _round(trace, a, decimals=0, out=None):
    from ._fuse_trace import _Var
    decimals = _index(decimals)
    s = trace.samples[a._id] if isinstance(a, _Var) else a
    if isinstance(a, _Var) and s is not None:
        trace.specialized = True      # integers and floats round differently
    if s is not None and numpy.asarray(s).dtype.kind in "biu":   # integers: NumPy keeps the dtype
        if decimals >= 0:
            r = trace.op("asarray", (a,))
        else:
            scale = 10.0 ** -decimals
            r = trace.op("multiply", (trace.op("rint", (trace.op("true_divide", (a, scale)),)), scale))
            r = trace.cast(r, numpy.asarray(s).dtype)
        return r if out is None else trace.write(out, r)
    if decimals == 0:
        r = trace.op("rint", (a,), call=True)
    else:
        scale = 10.0 ** decimals
        r = trace.op("true_divide", (trace.op("rint", (trace.op("multiply", (a, scale)),)), scale), call=True)
    return r if out is None else trace.write(out, r)


def _copyto(trace, dst, src, casting="same_kind", where=True):
    if where is not True:
        raise NotImplementedError("ukern.fuse: copyto(where=...) is not supported")
    trace.write(dst, trace.op("asarray", (src,)), casting=casting)


def _unary(name):
    return lambda trace, a, *rest, **kw: trace.op(name, (a,), call=True)


def _copy(trace, a, *rest, **kw):
    return trace.op("asarray", (a,))


def _astype(trace, x, dtype, *rest, **kw):
    return trace.cast(x, dtype)


ROUTINES = {
    "sum": _red_handler("sum", _sig_red), "prod": _red_handler("prod", _sig_red),
    "nansum": _red_handler("nansum", _sig_red), "nanprod": _red_handler("nanprod", _sig_red),
    "mean": _red_handler("mean", _sig_red),
    "var": _red_handler("var", _sig_var), "std": _red_handler("std", _sig_var),
    "max": _red_handler("max", _sig_red_nodtype), "amax": _red_handler("max", _sig_red_nodtype),
    "min": _red_handler("min", _sig_red_nodtype), "amin": _red_handler("min", _sig_red_nodtype),
    "any": _red_handler("any", _sig_red_nodtype), "all": _red_handler("all", _sig_red_nodtype),
    "argmax": _red_handler("argmax", _sig_arg), "argmin": _red_handler("argmin", _sig_arg),
    "where": _where, "clip": _clip, "round": _round, "around": _round, "round_": _round,
    "copyto": _copyto, "real": _unary("real"), "imag": _unary("imag"), "angle": _unary("angle"),
    "conj": _unary("conjugate"), "conjugate": _unary("conjugate"), "copy": _copy, "asarray": _copy,
    "asanyarray": _copy, "ascontiguousarray": _copy, "astype": _astype,
    "fix": lambda trace, x, out=None: _fix(trace, x) if out is None else trace.write(out, _fix(trace, x)),
    "sinc": lambda trace, x: _sinc(trace, x),
    "i0": lambda trace, x: _i0(trace, x),
    "ndim": lambda trace, a: a.ndim, "shape": lambda trace, a: a.shape, "size": lambda trace, a: a.size,
}


def call_named(trace, name, args, kw):
    h = ROUTINES.get(name)
    if h is None:
        raise NotImplementedError(f"ukern.fuse: unknown function '{name}' (not supported inside a fused function)")
    return h(trace, *args, **{k: v for k, v in kw.items()})


def call_function(trace, func, args, kw):
    """A NumPy function reached through __array_function__."""
    return call_named(trace, func.__name__, args, kw)


# -- CuPy's fusion dispatch: cupy.* functions call these while fusing -------------------
def cupy_name(op):
    name = getattr(op, "name", None) or getattr(op, "__name__", "")
    if name.startswith("cupy_"):
        name = name[5:]
    for suffix in ("_with_dtype", "_keep_dtype", "_auto_dtype", "_complex_dtype", "_core"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def cupy_ufunc(trace, op, args, kw):
    name = cupy_name(op)
    if name == "where" and len(args) == 4:   # copyto(dst, src, where=c): where(c, src, dst) into dst
        return trace.write(args[3], trace.op("where", args[:3], call=True))
    if name in ROUTINES and name not in ("real", "imag", "conj", "conjugate"):
        if name == "copy":  # elementwise_copy(src[, dst]): copyto's kernel
            if len(args) > 1 or kw.get("out") is not None:
                dst = args[1] if len(args) > 1 else kw["out"]
                return trace.write(dst, trace.op("asarray", (args[0],)))
        return call_named(trace, name, args, kw)
    return call_ufunc(trace, name, getattr(op, "nin", len(args)), args, kw)


def cupy_reduction(trace, op, args, kw):
    name = cupy_name(op)
    if name not in _REDUCTIONS:
        raise NotImplementedError(f"ukern.fuse: unknown reduction '{name}'")
    # CuPy passes its own defaults (dtype=None, out=None) whether the reduction takes them or not
    return call_named(trace, name, args, {k: v for k, v in kw.items() if v is not None})
