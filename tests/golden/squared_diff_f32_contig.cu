// ukern elementwise kernel 'squared_diff_f32_contig' (template elementwise_contig.cu)
// parameters: T x (float32), T y (float32) -> T z (float32)
// variant: contiguous, 32-bit index, ndim 1
#include <ukern/ew_core.cuh>

typedef float T;

extern "C" __global__ void squared_diff_f32_contig(
    const T* _uk_p_x,
    const T* _uk_p_y,
    T* _uk_p_z,
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
    const T x = _uk_p_x[_uk_j];
    const T y = _uk_p_y[_uk_j];
    T z;
#line 1 "operation"
z = (x - y) * (x - y);
#line 22 "squared_diff_f32_contig"
    _uk_p_z[_uk_j] = z;
  }
}
