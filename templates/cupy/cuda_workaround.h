// cupy/cuda_workaround.h: std:: names for NVRTC programs, as CuPy provides
// for its jitify mode: <type_traits>, <limits>, <utility> and <tuple> from
// libcu++ (cuda::std), visible as std::. ukern's standard header map does the
// same for `#include <type_traits>` and the others; this header is for code
// that includes CuPy's name. Empty outside NVRTC (nvcc has the real std).
#pragma once

#ifdef __CUDACC_RTC__
#include <cuda/std/type_traits>
#include <cuda/std/limits>
#include <cuda/std/utility>
#include <cuda/std/tuple>

namespace std {
using namespace cuda::std;
}
#endif
