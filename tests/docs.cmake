# docs/API.md must match the public headers (scripts/gen-api-docs.py rewrites it).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_api_docs COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/gen-api-docs.py --check)
  set_tests_properties(test_api_docs PROPERTIES LABELS cpu)
  # Every public uk_status function's comment names the statuses it returns.
  add_test(NAME test_status_docs COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check-status-docs.py)
  set_tests_properties(test_status_docs PROPERTIES LABELS cpu)
  # The check itself fails on a header whose uk_status function names none.
  add_test(NAME test_status_docs_catches
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check-status-docs.py
                   ${PROJECT_SOURCE_DIR}/tests/data/status_docs_bad.h)
  set_tests_properties(test_status_docs_catches PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "status_docs_bad.h:8: uk_bad_call: its comment names no status.*1 of 2"
                       FAIL_REGULAR_EXPRESSION "uk_good_call")
endif()
# The README: under 250 lines, its two commands and sections, its C example the
# marked part of examples/squared_diff.c, and every path it and docs/ name exists.
if(Python3_Interpreter_FOUND)
  add_test(NAME test_readme COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/readme-check.py)
  set_tests_properties(test_readme PROPERTIES LABELS cpu)
endif()
