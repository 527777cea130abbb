uk_test(test_shape LABELS cpu SOURCES test_shape.c)
uk_test(test_tpl LABELS cpu SOURCES test_tpl.c)
uk_test(test_bind LABELS cpu SOURCES test_bind.c)
uk_test(test_limits LABELS cpu SOURCES test_limits.c)
