# The row plan's last pass keeps a value the outputs use again (softmax's
# exp(x - m)) in place of the input's kept elements: generated source, no GPU.
uk_test(test_fuse_row_keep LABELS cpu SOURCES test_fuse_row_keep.c)
