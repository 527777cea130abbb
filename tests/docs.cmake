# docs/API.md must match the public headers (scripts/gen-api-docs.py rewrites it).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_api_docs COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/gen-api-docs.py --check)
  set_tests_properties(test_api_docs PROPERTIES LABELS cpu)
endif()
