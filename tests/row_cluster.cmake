# The fusion row kernel's cluster variant (sm_90+, issue 25): its sizing is
# in test_row_plan's table; here its source compiles for sm_90 with NVRTC,
# and on a GPU its results against double-precision host references, its
# fallbacks (views, a refused cluster launch) included.
uk_test(test_nvrtc_row_cluster LABELS nvrtc SOURCES test_nvrtc_row_cluster.c)
uk_test(test_gpu_row_cluster LABELS gpu SOURCES test_gpu_row_cluster.c)
uk_test(test_gpu_cluster_reduce LABELS gpu SOURCES test_gpu_cluster_reduce.c)
