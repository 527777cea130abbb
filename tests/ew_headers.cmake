# Device headers of generated elementwise kernels: which ones a kernel includes
# (only the 16-bit types it uses), and that the lean selection compiles to the same PTX.
uk_test(test_ew_headers LABELS nvrtc SOURCES test_ew_headers.c)
