// A static device library for test_*_module_link: built with
// nvcc -dc -arch=sm_90 + nvcc -lib (tests/compiler.cmake).
extern "C" __device__ float mul_lib(float v) { return v * -0.5f; }
