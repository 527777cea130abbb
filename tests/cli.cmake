# The ukern tool's tests (only when the tool is built: UKERN_BUILD_TOOLS).
if(NOT TARGET ukern_cli)
  return()
endif()
add_test(NAME test_cli_cpu COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh --cpu $<TARGET_FILE:ukern_cli>)
set_tests_properties(test_cli_cpu PROPERTIES LABELS cpu
  ENVIRONMENT "UKERN_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/test_cli_cpu")
add_test(NAME test_cli COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh $<TARGET_FILE:ukern_cli>)
set_tests_properties(test_cli PROPERTIES LABELS nvrtc
  ENVIRONMENT "UKERN_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/test_cli")
add_test(NAME test_cli_gpu COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh --gpu $<TARGET_FILE:ukern_cli>)
set_tests_properties(test_cli_gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu
  ENVIRONMENT "UKERN_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/test_cli_gpu")
