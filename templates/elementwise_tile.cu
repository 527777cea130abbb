${banner}
${includes}

${typedefs}
${preamble}
extern "C" __global__ void __launch_bounds__(256) ${name}(${params}) {
  typedef ${uindex} _uk_uidx;
  typedef ${sindex} _uk_sidx;
${tiles}
${ind}
${loop_prep}
  const _uk_uidx _uk_tx = threadIdx.x % 32, _uk_ty = threadIdx.x / 32;
  const _uk_uidx _uk_tiles_1 = (_uk_shape_1 + 31) / 32;
  const _uk_uidx _uk_tiles = _uk_tiles_1 * ((_uk_shape_0 + 31) / 32);
  for (_uk_uidx _uk_t = blockIdx.x; _uk_t < _uk_tiles; _uk_t += gridDim.x) {
    const _uk_uidx _uk_r0 = _uk_t / _uk_tiles_1 * 32, _uk_c0 = _uk_t % _uk_tiles_1 * 32;
${tload}
#pragma unroll
    for (int _uk_q = 0; _uk_q < 4; _uk_q++) {
      ${coords}
      if (_uk_r < _uk_shape_0 && _uk_c < _uk_shape_1) {
${offsets}
${index}
${elements}
${operation}
${stores}
      }
    }
${tstore}
  }
${after_loop}
}
