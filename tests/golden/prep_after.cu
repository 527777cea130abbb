// ukern elementwise kernel 'prep_after' (template elementwise_contig.cu)
// parameters: float32 x (float32) -> float32 z (float32)
// variant: contiguous, 32-bit index, ndim 1
#include <ukern/ew_core.cuh>

#line 1 "preamble"
__device__ float twice(float v) { return 2 * v; }
#line 9 "prep_after"

extern "C" __global__ void prep_after(
    const float* _uk_p_x,
    ukern::raw_array<float, 1, true> _raw_x,
    float* _uk_p_z,
    unsigned int _uk_size) {
  typedef unsigned int _uk_uidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
#line 1 "loop_prep"
float acc = 0;
#line 20 "prep_after"
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
    const float x = _uk_p_x[_uk_j];
    float z;
#line 1 "operation"
acc += x; z = twice(x) + _raw_x.size();
#line 26 "prep_after"
    _uk_p_z[_uk_j] = z;
  }
#line 1 "after_loop"
if (acc < 0) _raw_x[0] = acc;
#line 31 "prep_after"
}
