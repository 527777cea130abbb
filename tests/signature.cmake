# C kernel parameter lists and libffi argument layouts (uk_function_set_signature).
uk_test(test_cparams LABELS cpu SOURCES test_cparams.c)
uk_test(test_ffi_layout LABELS cpu SOURCES test_ffi_layout.c)
