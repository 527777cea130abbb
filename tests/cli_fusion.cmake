# Fusion specs in the ukern tool (issue 12): gen, errors (cpu); compile and
# precompile without a GPU (nvrtc); run and bench (gpu).
if(NOT TARGET ukern_cli)
  return()
endif()
foreach(tier cpu nvrtc gpu)
  set(name test_cli_fusion_${tier})
  add_test(NAME ${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_fusion.sh --${tier} $<TARGET_FILE:ukern_cli>)
  set_tests_properties(${name} PROPERTIES LABELS ${tier} SKIP_RETURN_CODE 77
    ENVIRONMENT "UKERN_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/${name}")
  if(tier STREQUAL "gpu")
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK gpu)
  endif()
endforeach()
