# Front end of definition text (issues 9 and 11): the C-mode lexer's decisions through the call
# path (output loaded when not surely assigned), and the same on a GPU.
uk_test(test_frontend_emit LABELS cpu SOURCES test_frontend_emit.c)
uk_test(test_gpu_frontend LABELS gpu SOURCES test_gpu_frontend.c)
# Definition code checked at create time (issue 9 item 8).
uk_test(test_defcheck LABELS cpu SOURCES test_defcheck.c)
# User bytes in error messages: escaped and bounded (issue 9 item 10).
uk_test(test_error_quote LABELS cpu SOURCES test_error_quote.c)
# Compile errors in user text reported at the user's field:line:column (issue 9 item 9).
uk_test(test_nvrtc_frontend LABELS nvrtc SOURCES test_nvrtc_frontend.c)
# The one lexer's C mode (issue 11).
uk_test(test_lexer LABELS cpu SOURCES test_lexer.c)
