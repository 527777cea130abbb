# uk_fusion_call captured into CUDA graphs (issue 10). gpu: skip (77) without one.
uk_test(test_gpu_fusion_graph LABELS gpu SOURCES test_gpu_fusion_graph.c)
