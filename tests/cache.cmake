# Compiled binaries, the memory cache and the disk cache.
uk_test(test_binary LABELS cpu SOURCES test_binary.c)
uk_test(test_mcache LABELS cpu SOURCES test_mcache.c)
uk_test(test_dcache LABELS cpu SOURCES test_dcache.c)
uk_test(test_dcache_trust LABELS cpu SOURCES test_dcache_trust.c)
uk_test(test_cache_stress LABELS cpu SOURCES test_cache_stress.c)
uk_test(test_nvrtc_cache_key LABELS nvrtc SOURCES test_nvrtc_cache_key.c)
uk_test(test_nvrtc_lazy LABELS nvrtc SOURCES test_nvrtc_lazy.c)

# The disk-cache entry decoder's fuzz target (see fuzz.cmake for how to run
# one); its corpus is replayed as a cpu test in every build.
uk_test(test_fuzz_replay_dcache LABELS cpu SOURCES fuzz/replay.c fuzz/fuzz_dcache.c)
if(TARGET test_fuzz_replay_dcache)
  target_compile_definitions(test_fuzz_replay_dcache PRIVATE UK_FUZZ_CORPUS="dcache")
endif()
if(UKERN_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(UK_FUZZ_DCACHE_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
  add_executable(fuzz_dcache fuzz/fuzz_dcache.c
    ${PROJECT_SOURCE_DIR}/src/runtime/dcache.c ${PROJECT_SOURCE_DIR}/src/runtime/binary.c
    ${PROJECT_SOURCE_DIR}/src/runtime/cache_dir.c ${PROJECT_SOURCE_DIR}/src/base/hash.c
    ${PROJECT_SOURCE_DIR}/src/base/error.c ${PROJECT_SOURCE_DIR}/src/base/strbuf.c
    ${PROJECT_SOURCE_DIR}/src/base/status.c)
  target_include_directories(fuzz_dcache PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
                             ${XXHASH_INCLUDE_DIR})
  target_compile_definitions(fuzz_dcache PRIVATE _GNU_SOURCE)
  target_compile_options(fuzz_dcache PRIVATE ${UK_FUZZ_DCACHE_FLAGS} ${UK_WARNINGS} -g)
  target_link_options(fuzz_dcache PRIVATE ${UK_FUZZ_DCACHE_FLAGS})
  target_link_libraries(fuzz_dcache PRIVATE Threads::Threads)
endif()

# ukern precompile -j and the refused-directory messages of the CLI.
add_test(NAME test_precompile_jobs COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_precompile_jobs.sh $<TARGET_FILE:ukern_cli>)
set_tests_properties(test_precompile_jobs PROPERTIES LABELS nvrtc)
