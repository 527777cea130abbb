${banner}
${includes}

${typedefs}
${preamble}
extern "C" __global__ void ${name}(${params}) {
  typedef ${uindex} _uk_uidx;
  typedef ${sindex} _uk_sidx;
  const _uk_uidx _uk_lane = threadIdx.x & ((1u << _uk_lanes) - 1), _uk_ty = threadIdx.x >> _uk_lanes;
  const _uk_uidx _uk_per = blockDim.x >> _uk_lanes;
  const _uk_uidx _uk_cstep = (_uk_uidx)gridDim.x << _uk_lanes;
${ind}
${loop_prep}
  for (_uk_uidx _uk_row = _uk_ty < _uk_per ? (_uk_uidx)blockIdx.y * _uk_per + _uk_ty : _uk_rows; _uk_row < _uk_rows;
       _uk_row += (_uk_uidx)gridDim.y * _uk_per) {
${offsets}
${hoisted}
    for (_uk_uidx _uk_j = ((_uk_uidx)blockIdx.x << _uk_lanes) + _uk_lane; _uk_j < ${inner}; _uk_j += _uk_cstep) {
${index}
${elements}
${operation}
${stores}
    }
  }
${after_loop}
}
