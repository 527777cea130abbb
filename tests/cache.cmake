# Compiled binaries, the memory cache and the disk cache.
uk_test(test_binary LABELS cpu SOURCES test_binary.c)
uk_test(test_mcache LABELS cpu SOURCES test_mcache.c)
uk_test(test_dcache LABELS cpu SOURCES test_dcache.c)
uk_test(test_dcache_trust LABELS cpu SOURCES test_dcache_trust.c)
uk_test(test_cache_stress LABELS cpu SOURCES test_cache_stress.c)
uk_test(test_nvrtc_cache_key LABELS nvrtc SOURCES test_nvrtc_cache_key.c)
