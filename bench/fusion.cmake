# uk_fusion (cupy.fuse) rows of issue 12, fused vs unfused vs the copy rate (writes JSON to argv[1]).
add_executable(bench_fusion ${CMAKE_CURRENT_LIST_DIR}/bench_fusion.c)
target_link_libraries(bench_fusion PRIVATE uk_benchutil)
