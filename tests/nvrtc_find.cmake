# Which NVRTC file is loaded, found without loading it (no NVRTC needed).
uk_test(test_nvrtc_find LABELS cpu SOURCES test_nvrtc_find.c)
# The version memo's parser (no NVRTC needed).
uk_test(test_nvrtc_memo LABELS cpu SOURCES test_nvrtc_memo.c)
