# Container checks of cubins, fatbins, static libraries and LTO-IR before
# nvJitLink or the driver reads them (src/runtime/image_check.h), on the
# binaries in data/bin.
uk_test(test_image_check LABELS cpu SOURCES test_image_check.c)
# The same in front of the real nvJitLink (no GPU needed).
uk_test(test_nvrtc_link_check LABELS nvrtc SOURCES test_nvrtc_link_check.c)
