// ukern elementwise kernel 'squared_diff_f32_rows32_nd2' (template elementwise_rows.cu)
// parameters: T x (float32), T y (float32) -> T z (float32)
// variant: rows, 32-bit index, ndim 2
#include <ukern/ew_core.cuh>

typedef float T;

extern "C" __global__ void squared_diff_f32_rows32_nd2(
    const T* _uk_p_x,
    const T* _uk_p_y,
    T* _uk_p_z,
    int _uk_s_x_0,
    int _uk_s_x_1,
    int _uk_s_y_0,
    int _uk_s_y_1,
    int _uk_s_z_0,
    int _uk_s_z_1,
    unsigned int _uk_shape_0,
    unsigned int _uk_shape_1,
    unsigned int _uk_size,
    unsigned int _uk_rows,
    unsigned int _uk_lanes) {
  typedef unsigned int _uk_uidx;
  typedef int _uk_sidx;
  const _uk_uidx _uk_lane = threadIdx.x & ((1u << _uk_lanes) - 1), _uk_ty = threadIdx.x >> _uk_lanes;
  const _uk_uidx _uk_per = blockDim.x >> _uk_lanes;
  const _uk_uidx _uk_cstep = (_uk_uidx)gridDim.x << _uk_lanes;
  for (_uk_uidx _uk_row = _uk_ty < _uk_per ? (_uk_uidx)blockIdx.y * _uk_per + _uk_ty : _uk_rows; _uk_row < _uk_rows;
       _uk_row += (_uk_uidx)gridDim.y * _uk_per) {
    const _uk_sidx _uk_o_x = (_uk_sidx)_uk_row * _uk_s_x_0;
    const _uk_sidx _uk_o_y = (_uk_sidx)_uk_row * _uk_s_y_0;
    const _uk_sidx _uk_o_z = (_uk_sidx)_uk_row * _uk_s_z_0;
    for (_uk_uidx _uk_j = ((_uk_uidx)blockIdx.x << _uk_lanes) + _uk_lane; _uk_j < _uk_shape_1; _uk_j += _uk_cstep) {
      const T x = ukern::at(_uk_p_x, _uk_o_x + (_uk_sidx)_uk_j * _uk_s_x_1);
      const T y = ukern::at(_uk_p_y, _uk_o_y + (_uk_sidx)_uk_j * _uk_s_y_1);
      T z;
#line 1 "operation"
z = (x - y) * (x - y);
#line 40 "squared_diff_f32_rows32_nd2"
      ukern::at(_uk_p_z, _uk_o_z + (_uk_sidx)_uk_j * _uk_s_z_1) = z;
    }
  }
}
