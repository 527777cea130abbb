# Layers: every file of src/, and of the Python extension's python/src, stands
# above what it uses (no cycle of includes and calls between files;
# scripts/include-graph.py prints the graph). test_layers_detects runs the
# check on a fixture with a cycle, which it must name.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_layers COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/include-graph.py --check)
  add_test(NAME test_layers_python COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/include-graph.py
           --check --src ${PROJECT_SOURCE_DIR}/python/src)
  add_test(NAME test_layers_detects COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/include-graph.py
           --check --src ${CMAKE_CURRENT_SOURCE_DIR}/data/layers_cycle)
  set_tests_properties(test_layers test_layers_python test_layers_detects PROPERTIES LABELS cpu)
  set_tests_properties(test_layers_detects PROPERTIES PASS_REGULAR_EXPRESSION "cycle of 2: x/a.c -> x/b.c -> x/a.c")
endif()
