# bench_warm_start --trace: its tracing code, and the tracing libcuda.so.1
# (cuda_trace.c) its traced children load.
target_sources(bench_warm_start PRIVATE ${CMAKE_CURRENT_LIST_DIR}/warm_start_trace.c)
# The tracing libcuda.so.1 of --trace (cuda_trace.c), alone in its directory
# so that only the traced children find it first on LD_LIBRARY_PATH.
add_library(uk_cuda_trace SHARED ${CMAKE_CURRENT_LIST_DIR}/cuda_trace.c)
set_target_properties(uk_cuda_trace PROPERTIES PREFIX "" OUTPUT_NAME "libcuda" SUFFIX ".so.1" NO_SONAME ON
  C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cuda-trace)
target_link_libraries(uk_cuda_trace PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(bench_warm_start uk_cuda_trace)
# The shim's self-test without a GPU: in front of a fake driver.
add_library(uk_cuda_trace_fake SHARED ${CMAKE_CURRENT_LIST_DIR}/cuda_trace_fake.c)
set_target_properties(uk_cuda_trace_fake PROPERTIES C_VISIBILITY_PRESET hidden)
add_executable(cuda_trace_selftest ${CMAKE_CURRENT_LIST_DIR}/cuda_trace_selftest.c)
add_dependencies(cuda_trace_selftest uk_cuda_trace uk_cuda_trace_fake)
target_link_libraries(cuda_trace_selftest PRIVATE ${CMAKE_DL_LIBS})
if(UKERN_BUILD_TESTS)
  add_test(NAME cuda_trace_selftest
           COMMAND cuda_trace_selftest $<TARGET_FILE:uk_cuda_trace> $<TARGET_FILE:uk_cuda_trace_fake>)
  set_tests_properties(cuda_trace_selftest PROPERTIES LABELS cpu)
endif()
