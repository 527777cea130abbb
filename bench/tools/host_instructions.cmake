# Host cost per call by instruction count (issue 11): a stand-in driver
# (libcuda.so.1, in its own directory so nothing else loads it) and the
# program callgrind runs against it; bench/tools/host_instructions.py runs both.
add_library(uk_fake_cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_driver.c)
target_include_directories(uk_fake_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
set_target_properties(uk_fake_cuda PROPERTIES OUTPUT_NAME cuda PREFIX lib SUFFIX .so.1
  C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda)
add_executable(bench_host_instructions ${CMAKE_CURRENT_LIST_DIR}/host_instructions.c)
target_link_libraries(bench_host_instructions PRIVATE ukern_static ${CMAKE_DL_LIBS})
add_dependencies(bench_host_instructions uk_fake_cuda)
