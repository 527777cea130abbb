# Issue 10: graphs, streams, events, memory, textures, raw-kernel conveniences.
# gpu: skip (77) without a device.
uk_test(test_gpu_graph LABELS gpu SOURCES test_gpu_graph.c)
# Issue 25: graphs of the split-column reduction (its workspace) and the elementwise rows plan.
uk_test(test_gpu_graph_plans LABELS gpu SOURCES test_gpu_graph_plans.c red_gpu_util.c)
uk_test(test_runtime_api LABELS cpu SOURCES test_runtime_api.c)
uk_test(test_gpu_stream LABELS gpu SOURCES test_gpu_stream.c)
uk_test(test_gpu_memory LABELS gpu SOURCES test_gpu_memory.c)
uk_test(test_gpu_texture LABELS gpu SOURCES test_gpu_texture.c)
uk_test(test_gpu_kernel LABELS gpu SOURCES test_gpu_kernel.c)
# Issue 28: the rest of the driver layer (managed memory, IPC, pointer
# attributes, limits, cache configuration, profiler, peer copies, 2-D
# memsets, 3-D copies, PCI bus ids, cluster launch).
uk_test(test_driver_api LABELS cpu SOURCES test_driver_api.c)
uk_test(test_nvrtc_cluster LABELS nvrtc SOURCES test_nvrtc_cluster.c)
uk_test(test_gpu_cluster LABELS gpu SOURCES test_gpu_cluster.c)
uk_test(test_gpu_driver LABELS gpu SOURCES test_gpu_driver.c)
uk_test(test_gpu_ipc LABELS gpu SOURCES test_gpu_ipc.c)
# The same calls against a driver lacking their entry points: the stand-in
# libcuda.so.1 of bench/tools/fake_driver.c, built here in a directory of its own.
add_library(uk_test_old_cuda SHARED ${PROJECT_SOURCE_DIR}/bench/tools/fake_driver.c)
target_include_directories(uk_test_old_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
set_target_properties(uk_test_old_cuda PROPERTIES OUTPUT_NAME cuda PREFIX lib SUFFIX .so.1
  C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/old_cuda)
uk_test(test_driver_old LABELS cpu SOURCES test_driver_old.c)
add_dependencies(test_driver_old uk_test_old_cuda)
set_property(TEST test_driver_old APPEND PROPERTY ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/old_cuda")
