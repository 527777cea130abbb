# Complex functions in fusion programs (abs exp log sqrt conj real imag
# angle) against C99 complex.h on a GPU.
uk_test(test_gpu_fusion_complex LABELS gpu SOURCES test_gpu_fusion_complex.c)
