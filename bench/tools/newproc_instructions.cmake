# bench_compile's warm-disk-cache first call in a new process, without a GPU:
# the program bench/tools/newproc_instructions.py runs (against host_instructions'
# stand-in driver) and compares with 55dd3c5. It links NVRTC as
# bench_compile does, so that NVRTC's loading is outside the region on both.
add_executable(bench_newproc_instructions ${CMAKE_CURRENT_LIST_DIR}/newproc_instructions.c)
target_link_libraries(bench_newproc_instructions PRIVATE ukern_static)
target_link_options(bench_newproc_instructions PRIVATE "LINKER:--no-as-needed" ${CUDA_nvrtc_LIBRARY} "LINKER:--as-needed")
add_dependencies(bench_newproc_instructions uk_fake_cuda)
