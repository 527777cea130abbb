# ReductionKernel: planning (axes, loops, strategy), generated source (golden files), NVRTC compiles of
# every dtype (one program per dtype holding every strategy), and GPU runs against host references.
uk_test(test_red_plan LABELS cpu SOURCES test_red_plan.c)
uk_test(test_red_emit LABELS cpu SOURCES test_red_emit.c)
uk_test(test_nvrtc_reduction LABELS nvrtc SOURCES test_nvrtc_reduction.c)
uk_test(test_gpu_reduction LABELS gpu SOURCES test_gpu_reduction.c)
# Lean cubins: the PTX half runs anywhere NVRTC does (and assembles the result
# with the toolkit's ptxas when there is one), the cubin half needs a GPU.
uk_test(test_lean_cubin LABELS nvrtc gpu SOURCES test_lean_cubin.c)
find_program(UK_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR})
if(UK_PTXAS AND TARGET test_lean_cubin)
  target_compile_definitions(test_lean_cubin PRIVATE UK_TEST_PTXAS="${UK_PTXAS}")
endif()
