// ukern elementwise kernel 'half_to_float' (template elementwise_vec.cu)
// parameters: T x (float16), T y (float16) -> float32 z (float32)
// variant: vectorised x4, 32-bit index, ndim 1
#include <ukern/ew_core.cuh>
#define UKERN_HALF_ONLY_F16
#include <ukern/half.cuh>

typedef ukern::half T;

extern "C" __global__ void half_to_float(
    const T* _uk_p_x,
    const T* _uk_p_y,
    float* _uk_p_z,
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
  const _uk_uidx _uk_nvec = _uk_size / 4;
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_nvec; _uk_j += _uk_step) {
    const ukern::vec<T, 4> _uk_v_x = ukern::vload<4>(_uk_p_x + _uk_j * 4);
    const ukern::vec<T, 4> _uk_v_y = ukern::vload<4>(_uk_p_y + _uk_j * 4);
    ukern::vec<float, 4> _uk_v_z;
#pragma unroll
    for (int _uk_k = 0; _uk_k < 4; _uk_k++) {
      const T x = _uk_v_x[_uk_k];
      const T y = _uk_v_y[_uk_k];
      float z;
#line 1 "operation"
z = (float)(x * y);
#line 30 "half_to_float"
      _uk_v_z[_uk_k] = z;
    }
    ukern::vstore<4>(_uk_p_z + _uk_j * 4, _uk_v_z);
  }
  for (_uk_uidx _uk_j = _uk_nvec * 4 + (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
    const T x = _uk_p_x[_uk_j];
    const T y = _uk_p_y[_uk_j];
    float z;
#line 1 "operation"
z = (float)(x * y);
#line 41 "half_to_float"
    _uk_p_z[_uk_j] = z;
  }
}
