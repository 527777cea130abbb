// ukern elementwise kernel 'raw_size' (template elementwise_vec.cu)
// parameters: raw T x (int64, ndim 1, contiguous) -> T z (int64)
// variant: vectorised x2, 32-bit index, ndim 1
#include <ukern/ew_core.cuh>

typedef long long T;

extern "C" __global__ void raw_size(
    ukern::raw_array<T, 1, true> x,
    T* _uk_p_z,
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
  const _uk_uidx _uk_nvec = _uk_size / 2;
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_nvec; _uk_j += _uk_step) {
    ukern::vec<T, 2> _uk_v_z;
#pragma unroll
    for (int _uk_k = 0; _uk_k < 2; _uk_k++) {
      const long long i = (long long)_uk_j * 2 + _uk_k;
      T z;
#line 1 "operation"
z = x[i % x.size()];
#line 24 "raw_size"
      _uk_v_z[_uk_k] = z;
    }
    ukern::vstore<2>(_uk_p_z + _uk_j * 2, _uk_v_z);
  }
  for (_uk_uidx _uk_j = _uk_nvec * 2 + (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
    const long long i = (long long)_uk_j;
    T z;
#line 1 "operation"
z = x[i % x.size()];
#line 34 "raw_size"
    _uk_p_z[_uk_j] = z;
  }
}
