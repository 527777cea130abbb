# Compiled binaries, the memory cache and the disk cache.
uk_test(test_binary LABELS cpu SOURCES test_binary.c)
uk_test(test_mcache LABELS cpu SOURCES test_mcache.c)
uk_test(test_dcache LABELS cpu SOURCES test_dcache.c)
uk_test(test_dcache_trust LABELS cpu SOURCES test_dcache_trust.c)
uk_test(test_cache_stress LABELS cpu SOURCES test_cache_stress.c)
uk_test(test_nvrtc_cache_key LABELS nvrtc SOURCES test_nvrtc_cache_key.c)
uk_test(test_nvrtc_lazy LABELS nvrtc SOURCES test_nvrtc_lazy.c)

# ukern precompile -j and the refused-directory messages of the CLI.
if(TARGET ukern_cli)
  add_test(NAME test_precompile_jobs COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_precompile_jobs.sh $<TARGET_FILE:ukern_cli>)
  set_tests_properties(test_precompile_jobs PROPERTIES LABELS nvrtc)
endif()
