// ukern elementwise kernel 'zero_d' (template elementwise_contig.cu)
// parameters: T x (int32) -> T z (int32)
// variant: contiguous, 32-bit index, ndim 0
#include <ukern/ew_core.cuh>

typedef int T;

extern "C" __global__ void zero_d(
    const T* _uk_p_x,
    T* _uk_p_z,
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
    const T x = _uk_p_x[_uk_j];
    T z;
#line 1 "operation"
z = x + 1;
#line 20 "zero_d"
    _uk_p_z[_uk_j] = z;
  }
}
