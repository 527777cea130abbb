# The CUB / copy-engine ceilings are a C++ program built by nvcc, when one is
# available (it is wherever the CUDA toolkit is). cudart is linked statically.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  add_executable(bench_ceilings ${CMAKE_CURRENT_LIST_DIR}/ceilings.cu)
  set_target_properties(bench_ceilings PROPERTIES CUDA_ARCHITECTURES "90" CUDA_RUNTIME_LIBRARY Static
                                                  CUDA_STANDARD 17)
  target_compile_options(bench_ceilings PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
  target_link_options(bench_ceilings PRIVATE -static-libstdc++ -static-libgcc)
else()
  message(STATUS "nvcc not found: bench_ceilings is not built")
endif()
