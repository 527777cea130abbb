# A sanitizer build's static library needs the sanitizer runtime in every
# consumer, so the install check runs on ordinary builds only.
if(NOT UKERN_SANITIZE)
  add_test(NAME test_install COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${PROJECT_BINARY_DIR}
                                     ${CMAKE_CURRENT_SOURCE_DIR}/consumer
                                     ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_BIN_DIR})
  set_tests_properties(test_install PROPERTIES LABELS cpu)
endif()
