# ElementwiseKernel: operation scanning, generated source (golden files), NVRTC compiles of
# every dtype x variant, and GPU runs of CuPy's user-guide examples and edge cases.
uk_test(test_opscan LABELS cpu SOURCES test_opscan.c)
uk_test(test_ew_emit LABELS cpu SOURCES test_ew_emit.c)
uk_test(test_nvrtc_elementwise LABELS nvrtc SOURCES test_nvrtc_elementwise.c)
uk_test(test_gpu_elementwise LABELS gpu SOURCES test_gpu_elementwise.c)
uk_test(test_gpu_cupy_ew LABELS gpu SOURCES test_gpu_cupy_ew.c)
# Loops of two or more axes as rows (issue 25): broadcast, padded, reversed, strided, 0-d, empty.
uk_test(test_gpu_ew_rows LABELS gpu SOURCES test_gpu_ew_rows.c)
