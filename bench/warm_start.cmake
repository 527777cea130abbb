# Warm start of a new process against a bare driver program (warm_start.c).
# The ukern child links only the public libukern; the floor links no ukern.
add_library(uk_warm_start_child OBJECT ${CMAKE_CURRENT_LIST_DIR}/warm_start_child.c)
add_executable(warm_start_floor ${CMAKE_CURRENT_LIST_DIR}/warm_start_floor.c)
target_link_libraries(warm_start_floor PRIVATE uk_warm_start_child ${CMAKE_DL_LIBS})
add_executable(bench_warm_start ${CMAKE_CURRENT_LIST_DIR}/warm_start.c)
target_link_libraries(bench_warm_start PRIVATE ukern uk_warm_start_child ${CMAKE_DL_LIBS} m)
add_dependencies(bench_warm_start warm_start_floor)
# --trace (tools/warm_start_trace.c, the tracing driver): tools/cuda_trace.cmake.
