# Which NVRTC file is loaded, found without loading it (no NVRTC needed).
uk_test(test_nvrtc_find LABELS cpu SOURCES test_nvrtc_find.c)
# The version memo's parser (no NVRTC needed).
uk_test(test_nvrtc_memo LABELS cpu SOURCES test_nvrtc_memo.c)
# The toolkit include directories; the headers' check apart (no NVRTC needed).
uk_test(test_nvrtc_include_dirs LABELS cpu SOURCES test_nvrtc_include_dirs.c)
# uk_nvrtc_load: NVRTC loaded ahead of the first compile (needs NVRTC).
uk_test(test_nvrtc_load LABELS nvrtc SOURCES test_nvrtc_load.c)
