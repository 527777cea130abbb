# Runtime core: contexts, devices, NVRTC, modules, functions, launches.
# nvrtc: compile for sm_90 with no GPU; gpu: skip (77) without one.
uk_test(test_nvrtc_module LABELS nvrtc SOURCES test_nvrtc_module.c)
uk_test(test_nvrtc_headers LABELS nvrtc SOURCES test_nvrtc_headers.c)
uk_test(test_nvrtc_cupy_headers LABELS nvrtc SOURCES test_nvrtc_cupy_headers.c)
uk_test(test_nvcc_backend LABELS nvrtc SOURCES test_nvcc_backend.c)
uk_test(test_nvrtc_image_attrs LABELS nvrtc SOURCES test_nvrtc_image_attrs.c)
add_test(NAME test_nvcc_backend_none COMMAND test_nvcc_backend none)
set_tests_properties(test_nvcc_backend_none PROPERTIES LABELS "cpu" ENVIRONMENT "UKERN_NVCC=/nonexistent/nvcc")
uk_test(test_nvrtc_nodevice LABELS nvrtc SOURCES test_nvrtc_nodevice.c)
uk_test(test_gpu_module LABELS gpu SOURCES test_gpu_module.c)
uk_test(test_gpu_multi LABELS gpu SOURCES test_gpu_multi.c)
