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
