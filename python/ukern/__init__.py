"""ukern: CuPy's kernel classes on ukern, for any CUDA array library.

ElementwiseKernel, ReductionKernel, RawModule and RawKernel take the arguments of
CuPy's classes of the same names and accept arrays from any library that speaks
__cuda_array_interface__ or __dlpack__ (CuPy, PyTorch, JAX, Numba). Outputs that
ukern allocates come back as the first array argument's type (through DLPack,
or for CuPy and PyTorch directly: once a kernel has seen the inputs' dtypes and
shapes, in the library's own memory pool), else as ukern.Array. Work is ordered
on the producer's current stream unless stream= says otherwise.

Errors: definition errors raise ValueError/TypeError with the position and a
caret; NVRTC failures raise CompileException (args[1] is the log with the
numbered source); driver failures and a missing GPU raise CUDADriverError.
Each exception carries .status, the ukern status name.

Without a GPU, ukern.configure(arch=90) lets kernels compile (source(),
precompile(), RawModule.compile()) for sm_90.
"""
from ._ukern import (  # noqa: F401
    Array,
    CompileException,
    CUDADriverError,
    ElementwiseKernel,
    RawKernel,
    RawModule,
    ReductionKernel,
    __version__,
    cache_stats,
    configure,
    device_count,
    synchronize,
)

from . import _ukern
from ._raw import In, InOut, Out  # noqa: F401

if hasattr(_ukern, "_Fusion"):  # the library has the fusion API
    from ._fuse import Fusion, fuse  # noqa: F401

__all__ = [
    "Array", "CompileException", "CUDADriverError", "ElementwiseKernel", "In", "InOut", "Out", "RawKernel",
    "RawModule", "ReductionKernel", "cache_stats", "configure", "device_count", "synchronize",
] + (["Fusion", "fuse"] if hasattr(_ukern, "_Fusion") else [])
