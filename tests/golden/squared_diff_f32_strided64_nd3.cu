// ukern elementwise kernel 'squared_diff_f32_strided64_nd3' (template elementwise.cu)
// parameters: T x (float32), T y (float32) -> T z (float32)
// variant: strided, 64-bit index, ndim 3
#include <ukern/ew_core.cuh>

typedef float T;

extern "C" __global__ void squared_diff_f32_strided64_nd3(
    const T* _uk_p_x,
    const T* _uk_p_y,
    T* _uk_p_z,
    long long _uk_s_x_0,
    long long _uk_s_x_1,
    long long _uk_s_x_2,
    long long _uk_s_y_0,
    long long _uk_s_y_1,
    long long _uk_s_y_2,
    long long _uk_s_z_0,
    long long _uk_s_z_1,
    long long _uk_s_z_2,
    unsigned long long _uk_shape_0,
    unsigned long long _uk_shape_1,
    unsigned long long _uk_shape_2,
    unsigned long long _uk_size) {
  typedef unsigned long long _uk_uidx;
  typedef long long _uk_sidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
    _uk_uidx _uk_r = _uk_j;
    const _uk_uidx _uk_c2 = _uk_r % _uk_shape_2;
    _uk_r /= _uk_shape_2;
    const _uk_uidx _uk_c1 = _uk_r % _uk_shape_1;
    _uk_r /= _uk_shape_1;
    const _uk_sidx _uk_o_x = (_uk_sidx)_uk_r * _uk_s_x_0 + (_uk_sidx)_uk_c1 * _uk_s_x_1 + (_uk_sidx)_uk_c2 * _uk_s_x_2;
    const _uk_sidx _uk_o_y = (_uk_sidx)_uk_r * _uk_s_y_0 + (_uk_sidx)_uk_c1 * _uk_s_y_1 + (_uk_sidx)_uk_c2 * _uk_s_y_2;
    const _uk_sidx _uk_o_z = (_uk_sidx)_uk_r * _uk_s_z_0 + (_uk_sidx)_uk_c1 * _uk_s_z_1 + (_uk_sidx)_uk_c2 * _uk_s_z_2;
    const T x = ukern::at(_uk_p_x, _uk_o_x);
    const T y = ukern::at(_uk_p_y, _uk_o_y);
    T z;
#line 1 "operation"
z = (x - y) * (x - y);
#line 43 "squared_diff_f32_strided64_nd3"
    ukern::at(_uk_p_z, _uk_o_z) = z;
  }
}
