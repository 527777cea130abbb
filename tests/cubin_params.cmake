# Kernel handles and parameter layouts read from cubins (issue 10), module
# source/options. nvrtc: compile for an explicit arch with no GPU; cpu: the
# cubin reader on synthetic and damaged images; gpu: skip (77) without one.
uk_test(test_nvrtc_params LABELS nvrtc SOURCES test_nvrtc_params.c)
uk_test(test_cubin_params LABELS cpu SOURCES test_cubin_params.c)
uk_test(test_gpu_params LABELS gpu SOURCES test_gpu_params.c)
uk_test(test_nvrtc_module_source LABELS nvrtc SOURCES test_nvrtc_module_source.c)
