# NVRTC time of ukern's elementwise sources against a bare kernel, and what
# each device-header part and option costs (issue 14). No GPU needed.
add_executable(ew_compile_floor ${CMAKE_CURRENT_LIST_DIR}/ew_compile_floor.c)
target_link_libraries(ew_compile_floor PRIVATE uk_benchutil)
