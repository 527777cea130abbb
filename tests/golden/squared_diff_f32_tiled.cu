// ukern elementwise kernel 'squared_diff_f32_tiled' (template elementwise_tile.cu)
// parameters: T x (float32), T y (float32) -> T z (float32)
// variant: tiled 32x32, lanes along axis 1, 32-bit index, ndim 2
#include <ukern/ew_core.cuh>

typedef float T;

extern "C" __global__ void __launch_bounds__(256) squared_diff_f32_tiled(
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
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  typedef int _uk_sidx;
  __shared__ ukern::tile<T, 32, 33> _uk_t_y;
  const _uk_uidx _uk_tx = threadIdx.x % 32, _uk_ty = threadIdx.x / 32;
  const _uk_uidx _uk_tiles_1 = (_uk_shape_1 + 31) / 32;
  const _uk_uidx _uk_tiles = _uk_tiles_1 * ((_uk_shape_0 + 31) / 32);
  for (_uk_uidx _uk_t = blockIdx.x; _uk_t < _uk_tiles; _uk_t += gridDim.x) {
    const _uk_uidx _uk_r0 = _uk_t / _uk_tiles_1 * 32, _uk_c0 = _uk_t % _uk_tiles_1 * 32;
    T _uk_d_x[4];
#pragma unroll
    for (int _uk_q = 0; _uk_q < 4; _uk_q++) {
      const _uk_uidx _uk_r = _uk_r0 + _uk_ty + 8 * _uk_q, _uk_c = _uk_c0 + _uk_tx;
      if (_uk_r < _uk_shape_0 && _uk_c < _uk_shape_1) {
        _uk_d_x[_uk_q] = ukern::at(_uk_p_x, (_uk_sidx)_uk_r * _uk_s_x_0 + (_uk_sidx)_uk_c * _uk_s_x_1);
      }
    }
#pragma unroll
    for (int _uk_q = 0; _uk_q < 4; _uk_q++) {
      const _uk_uidx _uk_r = _uk_r0 + _uk_tx, _uk_c = _uk_c0 + _uk_ty + 8 * _uk_q;
      if (_uk_r < _uk_shape_0 && _uk_c < _uk_shape_1) {
        _uk_t_y(_uk_ty + 8 * _uk_q, _uk_tx) = ukern::at(_uk_p_y, (_uk_sidx)_uk_r * _uk_s_y_0 + (_uk_sidx)_uk_c * _uk_s_y_1);
      }
    }
    __syncthreads();
#pragma unroll
    for (int _uk_q = 0; _uk_q < 4; _uk_q++) {
      const _uk_uidx _uk_r = _uk_r0 + _uk_ty + 8 * _uk_q, _uk_c = _uk_c0 + _uk_tx;
      if (_uk_r < _uk_shape_0 && _uk_c < _uk_shape_1) {
        const _uk_sidx _uk_o_z = (_uk_sidx)_uk_r * _uk_s_z_0 + (_uk_sidx)_uk_c * _uk_s_z_1;
        const T x = _uk_d_x[_uk_q];
        const T y = _uk_t_y(_uk_tx, _uk_ty + 8 * _uk_q);
        T z;
#line 1 "operation"
z = (x - y) * (x - y);
#line 56 "squared_diff_f32_tiled"
        ukern::at(_uk_p_z, _uk_o_z) = z;
      }
    }
    __syncthreads();
  }
}
