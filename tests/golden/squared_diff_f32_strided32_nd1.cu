// ukern elementwise kernel 'squared_diff_f32_strided32_nd1' (template elementwise.cu)
// parameters: T x (float32), T y (float32) -> T z (float32)
// variant: strided, 32-bit index, ndim 1
#include <ukern/ew_core.cuh>

typedef float T;

extern "C" __global__ void squared_diff_f32_strided32_nd1(
    const T* _uk_p_x,
    const T* _uk_p_y,
    T* _uk_p_z,
    int _uk_s_x_0,
    int _uk_s_y_0,
    int _uk_s_z_0,
    unsigned int _uk_shape_0,
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  typedef int _uk_sidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
    const _uk_sidx _uk_o_x = (_uk_sidx)_uk_j * _uk_s_x_0;
    const _uk_sidx _uk_o_y = (_uk_sidx)_uk_j * _uk_s_y_0;
    const _uk_sidx _uk_o_z = (_uk_sidx)_uk_j * _uk_s_z_0;
    const T x = ukern::at(_uk_p_x, _uk_o_x);
    const T y = ukern::at(_uk_p_y, _uk_o_y);
    T z;
#line 1 "operation"
z = (x - y) * (x - y);
#line 30 "squared_diff_f32_strided32_nd1"
    ukern::at(_uk_p_z, _uk_o_z) = z;
  }
}
