// ukern elementwise kernel 'squared_diff_f32_rows64_nd3' (template elementwise_rows.cu)
// parameters: T x (float32), T y (float32) -> T z (float32)
// variant: rows, 64-bit index, ndim 3
#include <ukern/ew_core.cuh>

typedef float T;

extern "C" __global__ void squared_diff_f32_rows64_nd3(
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
    unsigned long long _uk_size,
    unsigned long long _uk_rows,
    unsigned int _uk_lanes) {
  typedef unsigned long long _uk_uidx;
  typedef long long _uk_sidx;
  const _uk_uidx _uk_lane = threadIdx.x & ((1u << _uk_lanes) - 1), _uk_ty = threadIdx.x >> _uk_lanes;
  const _uk_uidx _uk_per = blockDim.x >> _uk_lanes;
  const _uk_uidx _uk_cstep = (_uk_uidx)gridDim.x << _uk_lanes;
  for (_uk_uidx _uk_row = _uk_ty < _uk_per ? (_uk_uidx)blockIdx.y * _uk_per + _uk_ty : _uk_rows; _uk_row < _uk_rows;
       _uk_row += (_uk_uidx)gridDim.y * _uk_per) {
    _uk_uidx _uk_r = _uk_row;
    const _uk_uidx _uk_c1 = _uk_r % _uk_shape_1;
    _uk_r /= _uk_shape_1;
    const _uk_sidx _uk_o_x = (_uk_sidx)_uk_r * _uk_s_x_0 + (_uk_sidx)_uk_c1 * _uk_s_x_1;
    const _uk_sidx _uk_o_y = (_uk_sidx)_uk_r * _uk_s_y_0 + (_uk_sidx)_uk_c1 * _uk_s_y_1;
    const _uk_sidx _uk_o_z = (_uk_sidx)_uk_r * _uk_s_z_0 + (_uk_sidx)_uk_c1 * _uk_s_z_1;
    for (_uk_uidx _uk_j = ((_uk_uidx)blockIdx.x << _uk_lanes) + _uk_lane; _uk_j < _uk_shape_2; _uk_j += _uk_cstep) {
      const T x = ukern::at(_uk_p_x, _uk_o_x + (_uk_sidx)_uk_j * _uk_s_x_2);
      const T y = ukern::at(_uk_p_y, _uk_o_y + (_uk_sidx)_uk_j * _uk_s_y_2);
      T z;
#line 1 "operation"
z = (x - y) * (x - y);
#line 47 "squared_diff_f32_rows64_nd3"
      ukern::at(_uk_p_z, _uk_o_z + (_uk_sidx)_uk_j * _uk_s_z_2) = z;
    }
  }
}
