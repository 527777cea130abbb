# Runtime core: contexts, devices, NVRTC, modules, functions, launches.
# nvrtc: compile for sm_90 with no GPU; gpu: skip (77) without one.
uk_test(test_nvrtc_module LABELS nvrtc SOURCES test_nvrtc_module.c)
uk_test(test_nvrtc_headers LABELS nvrtc SOURCES test_nvrtc_headers.c)
uk_test(test_nvrtc_cupy_headers LABELS nvrtc SOURCES test_nvrtc_cupy_headers.c)
uk_test(test_nvrtc_nodevice LABELS nvrtc SOURCES test_nvrtc_nodevice.c)
uk_test(test_gpu_module LABELS gpu SOURCES test_gpu_module.c)
uk_test(test_gpu_multi LABELS gpu SOURCES test_gpu_multi.c)
