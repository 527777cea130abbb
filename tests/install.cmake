add_test(NAME test_install COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${PROJECT_BINARY_DIR}
                                   ${CMAKE_CURRENT_SOURCE_DIR}/consumer)
set_tests_properties(test_install PROPERTIES LABELS cpu)
