# The memory-cache hit path of the compile key: gathered pieces, lookup hash,
# comparison with stored keys, the header digest's fast exit.
uk_test(test_hit_key LABELS cpu SOURCES test_hit_key.c)
# The NVRTC version memo is read at the first key, not at context creation.
uk_test(test_memo_lazy LABELS nvrtc SOURCES test_memo_lazy.c)
# A destroyed module's object and given text reused by the next module.
uk_test(test_module_reuse LABELS nvrtc SOURCES test_module_reuse.c)
