# ReductionKernel: planning (axes, loops, strategy), generated source (golden files), NVRTC compiles of
# every dtype (one program per dtype holding every strategy), and GPU runs against host references.
uk_test(test_red_plan LABELS cpu SOURCES test_red_plan.c)
uk_test(test_red_emit LABELS cpu SOURCES test_red_emit.c)
uk_test(test_nvrtc_reduction LABELS nvrtc SOURCES test_nvrtc_reduction.c)
# red_group's launch bounds as ptxas takes them: fused row sums of two and three inputs get the
# registers that keep each trip's vector loads in flight, without spills; one input keeps ~32.
uk_test(test_nvrtc_red_bounds LABELS nvrtc SOURCES test_nvrtc_red_bounds.c)
uk_test(test_gpu_reduction LABELS gpu SOURCES test_gpu_reduction.c red_gpu_util.c)
# Every strategy of the cost-model planner (a warp per row, narrow and split column tiles,
# vector loads over non-adjacent axes) on odd shapes, every axis subset, keepdims,
# negative strides, empty inputs, int/float/complex, custom identities and post-maps.
uk_test(test_gpu_red_strategies LABELS gpu SOURCES test_gpu_red_strategies.c red_gpu_util.c)
# The group kernels of issue 25: a 2^24 + 3 full sum (split combine, run-to-run identical bits), non-adjacent
# axes with int64 summed exactly, the plans that moved to a warp per output, fused argmax/argmin ties, NaN, inf
# rows; poisoned given outputs.
uk_test(test_gpu_red_g LABELS gpu SOURCES test_gpu_red_g.c red_gpu_util.c)
# Lean cubins: NVRTC's cubin of a real reduction with CUB's unused constants
# hidden from the loader (checked against an ELF reader of the test's own);
# with a GPU, both cubins loaded and a reduction run through the lean path.
# Resident blocks per SM from the cubin and the device's limits (the planner's
# waves; no driver query at load): a table of devices and kernels (cpu), and
# the same counts as the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor
# for raw kernels that bind each limit and for ukern's reduction programs (gpu).
uk_test(test_occupancy LABELS cpu SOURCES test_occupancy.c)
uk_test(test_gpu_occupancy LABELS gpu SOURCES test_gpu_occupancy.c red_gpu_util.c)
# ... and a reduction's load asks the driver nothing about it (the stand-in
# driver of runtime10.cmake, its occupancy entry replaced by a counter).
uk_test(test_occupancy_load LABELS nvrtc SOURCES test_occupancy_load.c)
add_dependencies(test_occupancy_load uk_test_old_cuda)
set_property(TEST test_occupancy_load APPEND PROPERTY ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/old_cuda")
# A wide plan over a thread-block cluster: compiled for sm_90, launched with the cluster (stand-in driver told
# the device takes clusters, launches recorded), and the fallback of a refused cluster launch inside the call.
uk_test(test_red_cluster LABELS nvrtc SOURCES test_red_cluster.c)
add_dependencies(test_red_cluster uk_test_old_cuda)
set_property(TEST test_red_cluster APPEND PROPERTY ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/old_cuda")
# The per-thread plan memo gives each shape the plan a fresh choice does (launches recorded on the stand-in
# driver: grid and argument buffer byte for byte), over more shapes than it keeps, in a mixed order.
uk_test(test_red_memo LABELS nvrtc SOURCES test_red_memo.c)
add_dependencies(test_red_memo uk_test_old_cuda)
set_property(TEST test_red_memo APPEND PROPERTY ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/old_cuda")
# Two threads on one stream: a split call's launch is queued before the other's growth frees its scratch
# (stand-in driver, the context's allocator recording frees).
uk_test(test_red_scratch LABELS nvrtc SOURCES test_red_scratch.c)
add_dependencies(test_red_scratch uk_test_old_cuda)
set_property(TEST test_red_scratch APPEND PROPERTY ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/old_cuda")
# Split calls of both partial protocols on one stream: tagged partials in a zeroed buffer of their own
# (stand-in driver, allocations, memsets and launches recorded).
uk_test(test_red_partials LABELS nvrtc SOURCES test_red_partials.c)
add_dependencies(test_red_partials uk_test_old_cuda)
set_property(TEST test_red_partials APPEND PROPERTY ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/old_cuda")
