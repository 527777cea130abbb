# Compiler completeness (issue 13): arch variants, options in failed logs,
# nvJitLink linking, C++ standard headers, multi-arch fatbins.
uk_test(test_nvrtc_arch LABELS nvrtc SOURCES test_nvrtc_arch.c)
uk_test(test_nvrtc_link LABELS nvrtc SOURCES test_nvrtc_link.c)
uk_test(test_gpu_link LABELS gpu SOURCES test_gpu_link.c)
uk_test(test_nvrtc_std LABELS nvrtc SOURCES test_nvrtc_std.c)
uk_test(test_nvrtc_module_link LABELS nvrtc SOURCES test_nvrtc_module_link.c)
uk_test(test_nvrtc_fatbin LABELS nvrtc SOURCES test_nvrtc_fatbin.c)

# A static device library (nvcc -dc + nvcc -lib) for the module_link tests;
# without nvcc those parts of the tests are skipped.
find_program(UK_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR})
if(UK_NVCC AND TARGET test_nvrtc_module_link)
  set(UK_DEVLIB ${CMAKE_CURRENT_BINARY_DIR}/libukdevlib.a)
  add_custom_command(OUTPUT ${UK_DEVLIB}
    COMMAND ${UK_NVCC} -dc -arch=sm_90 ${CMAKE_CURRENT_SOURCE_DIR}/data/devlib.cu -o ukdevlib.o
    COMMAND ${UK_NVCC} -lib ukdevlib.o -o ${UK_DEVLIB}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/data/devlib.cu WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    COMMENT "nvcc: static device library for the module_link tests")
  add_custom_target(uk_devlib DEPENDS ${UK_DEVLIB})
  foreach(t test_nvrtc_module_link test_gpu_link)
    if(TARGET ${t})
      add_dependencies(${t} uk_devlib)
      target_compile_definitions(${t} PRIVATE UK_TEST_DEVLIB="${UK_DEVLIB}")
    endif()
  endforeach()
endif()

# ukern precompile --fatbin (only when the tool is built).
if(TARGET ukern_cli)
  add_test(NAME test_cli_fatbin COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_fatbin.sh $<TARGET_FILE:ukern_cli>)
  set_tests_properties(test_cli_fatbin PROPERTIES LABELS nvrtc)
endif()

# nvJitLink keeps some allocations past nvJitLinkDestroy: LeakSanitizer is
# told so for the tests that link (tests/lsan.supp names only that library).
foreach(t test_nvrtc_link test_nvrtc_module_link test_nvrtc_fatbin test_gpu_link)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp")
  endif()
endforeach()
uk_test(test_nvrtc_missing_headers LABELS nvrtc SOURCES test_nvrtc_missing_headers.c)
