"""cpu tier: CuPy's own ElementwiseKernel / ReductionKernel definitions (CuPy v14.2.0's
source, kept as data in cupy_defs_*.py) are accepted by ukern and compile with NVRTC for
sm_90, no GPU needed. The gpu tier (test_cupy_kernels_gpu.py) runs them beside CuPy."""
import numpy as np
import pytest

import ukern
from cupy_defs_common import call_args, label, make
from cupy_defs_core import DEFS as CORE
from cupy_defs_signal import DEFS as SIGNAL

DEFS = SIGNAL + CORE


def test_the_sample_covers_every_area():
    areas = {"signal/windows", "signal/_waveforms", "ndimage", "sparse", "random", "_sorting",
             "_statistics", "_routines_indexing", "_routines_statistics"}
    seen = {a for a in areas for d in DEFS if a in d["src"]}
    assert seen == areas
    assert len(DEFS) >= 100
    assert sum(d["kind"] == "red" for d in DEFS) >= 3


@pytest.mark.parametrize("d", DEFS, ids=label)
def test_cupy_kernel_compiles(arch90, d):
    k = make(ukern, d)
    ins, outs, size = call_args(d, 7)
    kw = {} if size is None else {"size": size}
    src = k.source(*ins, *outs, **kw)
    # the user's text is there as written (each field under its #line directive)
    first = next(line for line in d["args"][2].splitlines() if line.strip())
    assert first.strip() in src
    k.precompile(*ins, *outs, **kw)


@pytest.mark.parametrize("d", [d for d in DEFS if d["kw"].get("loop_prep") or d["kw"].get("after_loop")],
                         ids=label)
def test_loop_prep_kernels_run_one_element_per_thread(arch90, d):
    # CuPy's loop: state that loop_prep declares and the operation updates sees the
    # elements of one thread in CuPy's order only without vectors or tiles
    k = make(ukern, d)
    ins, outs, size = call_args(d, 4096)
    src = k.source(*ins, *outs, **({} if size is None else {"size": size}))
    assert "variant: contiguous" in src or "variant: strided" in src
    assert "ukern::vec<" not in src and "__shared__" not in src
