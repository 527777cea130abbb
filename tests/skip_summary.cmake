# scripts/skip-summary.py: why tests were skipped, grouped (scripts/test.sh prints it).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_skip_summary COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_skip_summary.sh ${Python3_EXECUTABLE}
                                          ${PROJECT_SOURCE_DIR}/scripts/skip-summary.py)
  set_tests_properties(test_skip_summary PROPERTIES LABELS cpu)
endif()
