# Compiler completeness (issue 13): arch variants, options in failed logs,
# nvJitLink linking, C++ standard headers, multi-arch fatbins.
uk_test(test_nvrtc_arch LABELS nvrtc SOURCES test_nvrtc_arch.c)
uk_test(test_nvrtc_link LABELS nvrtc SOURCES test_nvrtc_link.c)
uk_test(test_gpu_link LABELS gpu SOURCES test_gpu_link.c)
uk_test(test_nvrtc_std LABELS nvrtc SOURCES test_nvrtc_std.c)
