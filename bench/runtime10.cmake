# Host cost of the runtime wrappers (issue 10) against the raw driver calls.
add_executable(bench_runtime ${CMAKE_CURRENT_LIST_DIR}/bench_runtime.c)
target_link_libraries(bench_runtime PRIVATE uk_benchutil)
