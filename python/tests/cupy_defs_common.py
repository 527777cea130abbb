"""Helpers for the CuPy kernel definitions kept as test data (cupy_defs_signal.py,
cupy_defs_core.py): one entry per ElementwiseKernel / ReductionKernel definition read
from CuPy v14.2.0's own source, and the arguments a call gets.

An entry holds what the definition says (the positional arguments and keywords of the
constructor, exactly as in CuPy's file, named with its line) and how the tests call it:
`dtypes` binds each placeholder, `scalars` names the inputs that CuPy's callers pass as
Python scalars (those loop_prep or the identity reads, and raw integer sizes), and `gpu`
says whether running it on arbitrary data is safe (no raw indexing, no data-dependent
loops), which the gpu tier needs to run it beside CuPy.
"""
import numpy as np


def K(src, line, kind, args, kw, dtypes, scalars, gpu):
    return dict(src=src, line=line, kind=kind, args=tuple(args), kw=dict(kw), dtypes=dict(dtypes),
                scalars=list(scalars), gpu=bool(gpu))


def label(d):
    name = d["kw"].get("name") or (d["args"][3] if d["kind"] == "ew" and len(d["args"]) > 3 else None) \
        or (d["args"][6] if d["kind"] == "red" and len(d["args"]) > 6 else "kernel")
    return "%s:%d:%s" % (d["src"].split("/")[-1], d["line"], name)


def params(text):
    """[(raw, type, name)] of a CuPy parameter list."""
    out = []
    for piece in text.split(","):
        w = piece.split()
        if w:
            out.append(("raw" in w[:-2], w[-2], w[-1]))
    return out


def make(mod, d):
    """The kernel of module `mod` (ukern or cupy) for entry d."""
    cls = mod.ElementwiseKernel if d["kind"] == "ew" else mod.ReductionKernel
    return cls(*d["args"], **d["kw"])


def _dtype(d, t):
    return np.dtype(d["dtypes"][t] if len(t) == 1 else t)


def _scalar(dt):
    return {"b": True, "i": 3, "u": 3, "f": 0.75, "c": 0.5 + 0.25j}[dt.kind]


def _values(dt, n, rng):
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        return rng.integers(1, 4, n).astype(dt)
    if dt.kind == "c":
        return (rng.uniform(0.5, 2.0, n) + 1j * rng.uniform(0.5, 2.0, n)).astype(dt)
    return rng.uniform(0.5, 2.0, n).astype(dt)


def call_args(d, n, rng=None):
    """(inputs, outputs, size) as NumPy arrays and Python scalars for a call over n
    elements: arrays of n elements (zeros without rng; outputs always zeros, given so
    that placeholders only outputs bind are bound), the scalars the entry names; size
    only when no non-raw array is passed (reductions: no outputs, no size)."""
    ins, outs = [], []
    nonraw = False
    for raw, t, name in params(d["args"][0]):
        dt = _dtype(d, t)
        if name in d["scalars"]:
            ins.append(_scalar(dt))
        else:
            ins.append(_values(dt, n, rng) if rng is not None else np.zeros(n, dt))
            nonraw |= not raw
    if d["kind"] == "red":
        return ins, [], None
    for raw, t, name in params(d["args"][1]):
        outs.append(np.zeros(n, _dtype(d, t)))
        nonraw |= not raw
    return ins, outs, None if nonraw else n
