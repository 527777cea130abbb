# Fuzzing. The replay tests always run the saved corpora through the fuzz entry
# points with a plain C driver (no libFuzzer), so sanitizer builds check them.
# With -DUKERN_FUZZ=ON and clang, the libFuzzer targets are built too; they
# compile the parser sources themselves so that coverage instrumentation
# reaches them. Run e.g.:
#   fuzz_params -max_total_time=300 <new corpus dir> ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/params
uk_test(test_fuzz_replay_params LABELS cpu SOURCES fuzz/replay_params.c fuzz/fuzz_params.c)

if(UKERN_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(WARNING "UKERN_FUZZ needs clang (libFuzzer): fuzz targets not built")
  else()
    set(UK_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
    set(UK_FUZZ_PARSER_SOURCES
        ${PROJECT_SOURCE_DIR}/src/base/error.c ${PROJECT_SOURCE_DIR}/src/base/strbuf.c
        ${PROJECT_SOURCE_DIR}/src/base/status.c ${PROJECT_SOURCE_DIR}/src/codegen/dtype.c
        ${PROJECT_SOURCE_DIR}/src/codegen/lexer.c ${PROJECT_SOURCE_DIR}/src/codegen/params.c
        ${PROJECT_SOURCE_DIR}/src/codegen/bind.c ${PROJECT_SOURCE_DIR}/src/codegen/scalar.c)
    add_executable(fuzz_params fuzz/fuzz_params.c ${UK_FUZZ_PARSER_SOURCES})
    target_include_directories(fuzz_params PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
    target_compile_definitions(fuzz_params PRIVATE _GNU_SOURCE)
    target_compile_options(fuzz_params PRIVATE ${UK_FUZZ_FLAGS} ${UK_WARNINGS} -g)
    target_link_options(fuzz_params PRIVATE ${UK_FUZZ_FLAGS})
    target_link_libraries(fuzz_params PRIVATE m)
  endif()
endif()
