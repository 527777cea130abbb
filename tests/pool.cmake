# The default allocator's background warm-up and its cuMemAlloc bridge (issue 14). gpu: skip (77) without one.
uk_test(test_gpu_pool LABELS gpu SOURCES test_gpu_pool.c)
