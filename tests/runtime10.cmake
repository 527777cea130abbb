# Issue 10: graphs, streams, events, memory, textures, raw-kernel conveniences.
# gpu: skip (77) without a device.
uk_test(test_gpu_graph LABELS gpu SOURCES test_gpu_graph.c)
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
