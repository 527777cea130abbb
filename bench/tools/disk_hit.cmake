# Warm start to a disk hit, measured on any machine (no GPU): disk_hit_start.c.
add_executable(disk_hit_start ${CMAKE_CURRENT_LIST_DIR}/disk_hit_start.c)
target_link_libraries(disk_hit_start PRIVATE ukern)
