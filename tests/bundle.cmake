# Kernel bundles (issue 26): the file format, its reader and writer, the
# context's bundle tier, the tool, the fuzz target.
uk_test(test_nvrtc_bundle LABELS nvrtc SOURCES test_nvrtc_bundle.c)
target_link_libraries(test_nvrtc_bundle PRIVATE Threads::Threads)
uk_test(test_nvrtc_bundle_refuse LABELS nvrtc SOURCES test_nvrtc_bundle_refuse.c)
if(TARGET ukern_cli)
  add_test(NAME test_cli_bundle COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_bundle.sh $<TARGET_FILE:ukern_cli>
                                        ${PROJECT_SOURCE_DIR}/examples/specs)
  set_tests_properties(test_cli_bundle PROPERTIES LABELS nvrtc
    ENVIRONMENT "UKERN_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/test_cli_bundle")
endif()

# The bundle reader's fuzz target (see fuzz.cmake for how to run one); its
# corpus (fuzz/corpus/bundle.corpus: small bundles made by `ukern bundle create`, and cut copies) is
# replayed as a cpu test in every build.
uk_test(test_fuzz_replay_bundle LABELS cpu SOURCES fuzz/replay.c fuzz/fuzz_bundle.c)
target_compile_definitions(test_fuzz_replay_bundle PRIVATE UK_FUZZ_CORPUS="bundle")
if(UKERN_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  # The reader's files instrumented; the rest of the library as built.
  set(UK_FUZZ_BUNDLE_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
  add_executable(fuzz_bundle fuzz/fuzz_bundle.c ${PROJECT_SOURCE_DIR}/src/runtime/bundle.c
                             ${PROJECT_SOURCE_DIR}/src/runtime/fatbin.c)
  target_compile_options(fuzz_bundle PRIVATE ${UK_FUZZ_BUNDLE_FLAGS} ${UK_WARNINGS} -g)
  target_link_options(fuzz_bundle PRIVATE ${UK_FUZZ_BUNDLE_FLAGS})
  target_link_libraries(fuzz_bundle PRIVATE ukern_internal)
endif()

# Launched from a bundle: elementwise, reduction, fusion, raw (results checked).
uk_test(test_gpu_bundle LABELS gpu SOURCES test_gpu_bundle.c)
target_link_libraries(test_gpu_bundle PRIVATE m)

# The Dask example on two GPUs (examples/dask): needs the Python package,
# dask, distributed, dask-cuda and CuPy (scripts/gpu-dask.sh installs the
# wheels); SKIP 77 otherwise or with fewer than two GPUs.
if(UKERN_BUILD_PYTHON AND NOT UKERN_SANITIZE)
  add_test(NAME test_gpu_dask COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_dask.sh ${PROJECT_BINARY_DIR}/python
                                      ${PROJECT_SOURCE_DIR}/examples/dask)
  set_tests_properties(test_gpu_dask PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu TIMEOUT 900
    ENVIRONMENT "UKERN_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/test_gpu_dask")
endif()
