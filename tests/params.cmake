# Parameter-list lexer and parser (codegen, no CUDA): data-driven cases in data/params.test.
uk_test(test_params LABELS cpu SOURCES test_params.c)
