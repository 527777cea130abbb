# The disk cache paths of a new process (issue 11's new-process rows).
uk_test(test_dcache_newproc LABELS cpu SOURCES test_dcache_newproc.c)
