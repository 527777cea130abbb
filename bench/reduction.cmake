# ReductionKernel bandwidth, host cost and compile times (writes JSON to argv[1]).
add_executable(bench_reduction ${CMAKE_CURRENT_LIST_DIR}/bench_reduction.c)
target_link_libraries(bench_reduction PRIVATE uk_benchutil)
