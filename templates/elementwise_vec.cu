${banner}
${includes}

${typedefs}
${preamble}
extern "C" __global__ void ${name}(${params}) {
  typedef ${uindex} _uk_uidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
  const _uk_uidx _uk_nvec = _uk_size / ${vec};
${ind}
${hoisted}
${loop_prep}
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_nvec; _uk_j += _uk_step) {
${vloads}
#pragma unroll
    for (int _uk_k = 0; _uk_k < ${vec}; _uk_k++) {
${vindex}
${velements}
${voperation}
${vputs}
    }
${vstores}
  }
  for (_uk_uidx _uk_j = _uk_nvec * ${vec} + (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
${index}
${elements}
${operation}
${stores}
  }
${after_loop}
}
