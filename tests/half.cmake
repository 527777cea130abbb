# ukern::half / ukern::bfloat16 (templates/ukern/half.cuh) and their host reference.
uk_test(test_half_ref LABELS cpu SOURCES test_half_ref.c)
uk_test(test_nvrtc_half LABELS nvrtc SOURCES test_nvrtc_half.c)
uk_test(test_gpu_half LABELS gpu SOURCES test_gpu_half.c)
