// ukern elementwise kernel 'add_i_int8_tiled_cols' (template elementwise_tile.cu)
// parameters: T x (int8) -> T z (int8)
// variant: tiled 32x32, lanes along axis 0, 32-bit index, ndim 2
#include <ukern/ew_core.cuh>

typedef signed char T;

extern "C" __global__ void __launch_bounds__(256) add_i_int8_tiled_cols(
    const T* _uk_p_x,
    T* _uk_p_z,
    int _uk_s_x_0,
    int _uk_s_x_1,
    int _uk_s_z_0,
    int _uk_s_z_1,
    unsigned int _uk_shape_0,
    unsigned int _uk_shape_1,
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  typedef int _uk_sidx;
  const _uk_uidx _uk_tx = threadIdx.x % 32, _uk_ty = threadIdx.x / 32;
  const _uk_uidx _uk_tiles_1 = (_uk_shape_1 + 31) / 32;
  const _uk_uidx _uk_tiles = _uk_tiles_1 * ((_uk_shape_0 + 31) / 32);
  for (_uk_uidx _uk_t = blockIdx.x; _uk_t < _uk_tiles; _uk_t += gridDim.x) {
    const _uk_uidx _uk_r0 = _uk_t / _uk_tiles_1 * 32, _uk_c0 = _uk_t % _uk_tiles_1 * 32;
    T _uk_d_x[4];
#pragma unroll
    for (int _uk_q = 0; _uk_q < 4; _uk_q++) {
      const _uk_uidx _uk_r = _uk_r0 + _uk_tx, _uk_c = _uk_c0 + _uk_ty + 8 * _uk_q;
      if (_uk_r < _uk_shape_0 && _uk_c < _uk_shape_1) {
        _uk_d_x[_uk_q] = ukern::at(_uk_p_x, (_uk_sidx)_uk_r * _uk_s_x_0 + (_uk_sidx)_uk_c * _uk_s_x_1);
      }
    }
#pragma unroll
    for (int _uk_q = 0; _uk_q < 4; _uk_q++) {
      const _uk_uidx _uk_r = _uk_r0 + _uk_tx, _uk_c = _uk_c0 + _uk_ty + 8 * _uk_q;
      if (_uk_r < _uk_shape_0 && _uk_c < _uk_shape_1) {
        const _uk_sidx _uk_o_z = (_uk_sidx)_uk_r * _uk_s_z_0 + (_uk_sidx)_uk_c * _uk_s_z_1;
        const long long i = (long long)_uk_r * _uk_shape_1 + _uk_c;
        const T x = _uk_d_x[_uk_q];
        T z;
#line 1 "operation"
z = x + (T)i;
#line 44 "add_i_int8_tiled_cols"
        ukern::at(_uk_p_z, _uk_o_z) = z;
      }
    }
  }
}
