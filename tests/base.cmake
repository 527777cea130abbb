uk_test(test_base LABELS cpu SOURCES test_base.c)
