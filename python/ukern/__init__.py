"""ukern: CuPy's kernel classes on ukern, for any CUDA array library.

ElementwiseKernel, ReductionKernel, RawModule and RawKernel take the arguments of
CuPy's classes of the same names and accept arrays from any library that speaks
__cuda_array_interface__ or __dlpack__ (CuPy, PyTorch, JAX, Numba). Outputs that
ukern allocates come back as the first array argument's type (through DLPack,
or for CuPy and PyTorch directly: once a kernel has seen the inputs' dtypes and
shapes, in the library's own memory pool), else as ukern.Array. Work is ordered
on the producer's current stream unless stream= says otherwise.

Errors: definition errors raise ValueError/TypeError with the position and a
caret; NVRTC failures raise CompileException (JitifyException, a subclass, for
a RawModule made with jitify=True; .log is the log with the numbered source);
driver failures and a missing GPU raise CUDADriverError. Each exception carries
.status, the ukern status name. When CuPy is imported, these are also
instances of CuPy's classes of the same names (cupy.cuda.compiler.CompileException,
JitifyException, cupy.cuda.driver.CUDADriverError), so CuPy code catches them.

Without a GPU, ukern.configure(arch=90) lets kernels compile (source(),
precompile(), RawModule.compile()) for sm_90.
"""
from ._ukern import (  # noqa: F401
    Array,
    CompileException,
    CUDADriverError,
    ElementwiseKernel,
    JitifyException,
    RawKernel,
    RawModule,
    ReductionKernel,
    __version__,
    bundles,
    cache_stats,
    create_bundle,
    device_count,
    synchronize,
)

from . import _errors  # noqa: F401  (CuPy's exception classes too, when CuPy is imported)
from . import _ukern
from ._raw import In, InOut, Out  # noqa: F401

_bundle_paths = []


def load_bundle(path):
    """Opens a kernel bundle (``ukern bundle create``, ``create_bundle``) in the current
    context: kernels it holds are loaded from it instead of compiled (looked up before the
    disk cache); a process whose kernels are all in bundles never loads NVRTC. Checked whole
    now: a damaged or foreign file raises OSError or ValueError naming the file and the
    reason. A bundle built for other archs than the device's is skipped (see bundles()).
    configure() carries the loaded bundles into its new context. ukern only."""
    _ukern._load_bundle(path)
    _bundle_paths.append(path)


def configure(**kw):
    """configure(*, arch=0, cache_dir=None, disable_disk_cache=False, device=0, options=())

    Makes a new context for kernels created from now on. arch=90 compiles for sm_90 instead
    of the device's arch (needed to compile without a GPU). Existing kernels keep their
    context. Bundles opened with load_bundle are opened in the new context too."""
    _ukern.configure(**kw)
    for p in _bundle_paths:
        _ukern._load_bundle(p)

if hasattr(_ukern, "_Fusion"):  # the library has the fusion API
    from ._fuse import Fusion, fuse  # noqa: F401

__all__ = [
    "Array", "CompileException", "CUDADriverError", "ElementwiseKernel", "In", "InOut", "JitifyException", "Out",
    "RawKernel",
    "RawModule", "ReductionKernel", "bundles", "cache_stats", "configure", "create_bundle", "device_count",
    "load_bundle", "synchronize",
] + (["Fusion", "fuse"] if hasattr(_ukern, "_Fusion") else [])
