${banner}
${includes}

${typedefs}
${preamble}
extern "C" __global__ void ${name}(${params}) {
  typedef ${uindex} _uk_uidx;
  const _uk_uidx _uk_step = (_uk_uidx)blockDim.x * gridDim.x;
${ind}
${hoisted}
${loop_prep}
  for (_uk_uidx _uk_j = (_uk_uidx)blockIdx.x * blockDim.x + threadIdx.x; _uk_j < _uk_size; _uk_j += _uk_step) {
${index}
${elements}
${operation}
${stores}
  }
${after_loop}
}
