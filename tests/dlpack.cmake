uk_test(test_dlpack LABELS cpu SOURCES test_dlpack.c)
uk_test(test_gpu_dlpack LABELS gpu SOURCES test_gpu_dlpack.c)
