# Kernel fusion (uk_fusion, cupy.fuse): result dtypes against NumPy 2's
# (tests/data/fusion_table.txt from tests/data/gen_fusion_table.py), the
# language and its errors, plans and generated source, NVRTC compiles of the
# generated kernels, and GPU values against NumPy's and host references.
uk_test(test_fuse_table LABELS cpu SOURCES test_fuse_table.c)
uk_test(test_fuse_lang LABELS cpu SOURCES test_fuse_lang.c)
uk_test(test_row_plan LABELS cpu SOURCES test_row_plan.c)
uk_test(test_row_rdiv LABELS cpu SOURCES test_row_rdiv.c)
uk_test(test_nvrtc_fusion LABELS nvrtc SOURCES test_nvrtc_fusion.c)
uk_test(test_nvrtc_row_args LABELS nvrtc SOURCES test_nvrtc_row_args.c)
uk_test(test_nvrtc_row_policy LABELS nvrtc SOURCES test_nvrtc_row_policy.c)
uk_test(test_gpu_fusion LABELS gpu SOURCES test_gpu_fusion.c)
uk_test(test_gpu_fusion_rows LABELS gpu SOURCES test_gpu_fusion_rows.c)
