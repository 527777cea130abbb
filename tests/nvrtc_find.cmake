# Which NVRTC file is loaded, found without loading it (no NVRTC needed).
uk_test(test_nvrtc_find LABELS cpu SOURCES test_nvrtc_find.c)
