# The public calls made for the ukern tool (issue 11: the tool uses only the
# public API): uk_module_fatbin and uk_fusion_compile_info, their argument
# checking (cpu), what they give (nvrtc, no GPU needed) and that it runs (gpu).
uk_test(test_tool_api LABELS cpu SOURCES test_tool_api.c)
uk_test(test_nvrtc_tool_api LABELS nvrtc SOURCES test_nvrtc_tool_api.c)
uk_test(test_gpu_tool_api LABELS gpu SOURCES test_gpu_tool_api.c)
