# Fuzzing. Each target fuzz/fuzz_<name>.c has its corpus in ONE file,
# fuzz/corpus/<name>.corpus (format: fuzz/corpus.py; named records are
# regression inputs), replayed by the cpu test test_fuzz_replay_<name>
# through the same entry point with a plain C driver (no libFuzzer, any
# compiler), so sanitizer builds check them.
# With -DUKERN_FUZZ=ON and clang, the libFuzzer targets fuzz_<name> are
# built too, over an instrumented static copy of src/base, src/codegen and
# the runtime's pure readers (linked as a library: only what a target uses
# is pulled in). tests/fuzz/run.sh builds them, runs each for a while and
# merges what they find back into the corpus files.
set(UK_FUZZ_TARGETS params cparams opscan shape dcache fuse_parse fuse_plan cubin fatbin link_input red_tune)

if(UKERN_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(WARNING "UKERN_FUZZ needs clang (libFuzzer): only the corpus replays are built")
elseif(UKERN_FUZZ)
  set(UK_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  file(GLOB UK_FUZZ_LIB_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/base/*.c
       ${PROJECT_SOURCE_DIR}/src/codegen/*.c)
  foreach(f dcache binary cache_dir cubin_params fatbin elf_check fatbin_check input_check image_bad unzstd)
    list(APPEND UK_FUZZ_LIB_SOURCES ${PROJECT_SOURCE_DIR}/src/runtime/${f}.c)
  endforeach()
  add_library(uk_fuzz_lib STATIC ${UK_FUZZ_LIB_SOURCES} $<TARGET_OBJECTS:uk_embedded_objects>)
  target_include_directories(uk_fuzz_lib PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
                                                ${XXHASH_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(uk_fuzz_lib PUBLIC _GNU_SOURCE)
  target_compile_options(uk_fuzz_lib PUBLIC ${UK_FUZZ_FLAGS} -g)
  target_link_options(uk_fuzz_lib PUBLIC -fsanitize=fuzzer,address,undefined)
  target_link_libraries(uk_fuzz_lib PUBLIC m Threads::Threads ${CMAKE_DL_LIBS})
endif()

foreach(t IN LISTS UK_FUZZ_TARGETS)
  uk_test(test_fuzz_replay_${t} LABELS cpu SOURCES fuzz/replay.c fuzz/fuzz_${t}.c)
  target_compile_definitions(test_fuzz_replay_${t} PRIVATE UK_FUZZ_CORPUS="${t}")
  if(TARGET uk_fuzz_lib)
    add_executable(fuzz_${t} fuzz/fuzz_${t}.c)
    target_compile_options(fuzz_${t} PRIVATE ${UK_WARNINGS})
    target_link_libraries(fuzz_${t} PRIVATE uk_fuzz_lib)
  endif()
endforeach()
