# Fuzzing. Each target fuzz/fuzz_<name>.c has a minimised corpus in
# fuzz/corpus/<name>, replayed by the cpu test test_fuzz_replay_<name> through
# the same entry point with a plain C driver (no libFuzzer, any compiler), so
# sanitizer builds check them.
# With -DUKERN_FUZZ=ON and clang, the libFuzzer targets fuzz_<name> are built
# too, over an instrumented static copy of src/base and src/codegen (linked
# as a library: only what a target uses is pulled in). Run e.g.:
#   fuzz_cparams -max_total_time=600 <new corpus dir> tests/fuzz/corpus/cparams
# and minimise into the committed corpus with -merge=1.
set(UK_FUZZ_TARGETS params cparams opscan shape)

if(UKERN_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(WARNING "UKERN_FUZZ needs clang (libFuzzer): fuzz targets not built")
elseif(UKERN_FUZZ)
  set(UK_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  file(GLOB UK_FUZZ_LIB_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/base/*.c
       ${PROJECT_SOURCE_DIR}/src/codegen/*.c)
  add_library(uk_fuzz_codegen STATIC ${UK_FUZZ_LIB_SOURCES})
  target_include_directories(uk_fuzz_codegen PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
                                                    ${XXHASH_INCLUDE_DIR})
  target_compile_definitions(uk_fuzz_codegen PUBLIC _GNU_SOURCE)
  target_compile_options(uk_fuzz_codegen PUBLIC ${UK_FUZZ_FLAGS} -g)
  target_link_options(uk_fuzz_codegen PUBLIC -fsanitize=fuzzer,address,undefined)
  target_link_libraries(uk_fuzz_codegen PUBLIC m)
endif()

foreach(t IN LISTS UK_FUZZ_TARGETS)
  uk_test(test_fuzz_replay_${t} LABELS cpu SOURCES fuzz/replay.c fuzz/fuzz_${t}.c)
  target_compile_definitions(test_fuzz_replay_${t} PRIVATE UK_FUZZ_CORPUS="${t}")
  if(TARGET uk_fuzz_codegen)
    add_executable(fuzz_${t} fuzz/fuzz_${t}.c)
    target_compile_options(fuzz_${t} PRIVATE ${UK_WARNINGS})
    target_link_libraries(fuzz_${t} PRIVATE uk_fuzz_codegen)
  endif()
endforeach()
