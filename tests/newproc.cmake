# What a new process's context creation and first disk-cache hit run
# (issue 11's new-process rows).
uk_test(test_dcache_newproc LABELS cpu SOURCES test_dcache_newproc.c)
uk_test(test_key_newproc LABELS cpu SOURCES test_key_newproc.c)
add_test(NAME test_embed_digest
         COMMAND ${CMAKE_COMMAND} -DEMBED=${PROJECT_SOURCE_DIR}/cmake/embed.cmake
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/embed_digest -P ${CMAKE_CURRENT_SOURCE_DIR}/scripts/embed_digest.cmake)
set_tests_properties(test_embed_digest PROPERTIES LABELS cpu)
uk_test(test_newproc_hit LABELS nvrtc SOURCES test_newproc_hit.c)
