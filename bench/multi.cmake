# Two GPUs through one context: each device's bandwidth alone and both at once (issue 26).
add_executable(bench_multi ${CMAKE_CURRENT_LIST_DIR}/bench_multi.c)
target_link_libraries(bench_multi PRIVATE uk_benchutil Threads::Threads)
