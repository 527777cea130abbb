# Container checks of cubins, fatbins, static libraries and LTO-IR before
# nvJitLink or the driver reads them (src/runtime/image_check.h), on the
# binaries in data/bin.
uk_test(test_image_check LABELS cpu SOURCES test_image_check.c)
