# docs/API.md must match the public headers (scripts/gen-api-docs.py rewrites it).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_api_docs COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/gen-api-docs.py --check)
  set_tests_properties(test_api_docs PROPERTIES LABELS cpu)
endif()
# The README: under 250 lines, its two commands and sections, its C example the
# marked part of examples/squared_diff.c, and every path it and docs/ name exists.
if(Python3_Interpreter_FOUND)
  add_test(NAME test_readme COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/readme-check.py)
  set_tests_properties(test_readme PROPERTIES LABELS cpu)
endif()
