# The build as a dependency: add_subdirectory(ukern) gets the library only.
# Ordinary builds only (a sanitizer build's flags do not reach the consumer).
if(NOT UKERN_SANITIZE)
  add_test(NAME test_subdir COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_subdir.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_subdir PROPERTIES LABELS cpu)
endif()
