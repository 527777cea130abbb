// Ceilings for ukern's benchmarks, measured with CUB and the copy engine on
// the same GPU in the same run: CUB DeviceTransform of (x - y)^2 per dtype,
// a device-to-device copy, CUB DeviceReduce::Sum and DeviceSegmentedReduce
// row sums. Writes JSON (argv[1]) and prints a table. Built by nvcc (this is
// the one C++ program of the project: CUB has no C interface).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/complex>
#include <cuda/std/tuple>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

struct Row {
  std::string name;
  double ms, gbs;
};
static std::vector<Row> rows;

template <typename F> static double median_ms(F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int k = 0; k < 5; k++) f();
  std::vector<float> t;
  for (int k = 0; k < 30; k++) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return 0.5 * (t[14] + t[15]);
}

static void add(const std::string &name, double ms, double bytes) {
  rows.push_back({name, ms, bytes / ms / 1e6});
}

struct SquaredDiff {
  template <typename T> __device__ T operator()(T x, T y) const { return (x - y) * (x - y); }
};

struct HalfToFloat {
  __device__ float operator()(__half v) const { return __half2float(v); }
};

template <typename T> __global__ void fill(T *p, size_t n, unsigned seed, float lo) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    float v = lo + (float)(h & 0xffff) / 65536.0f;
    p[i] = T(v);
  }
}

template <> __global__ void fill<signed char>(signed char *p, size_t n, unsigned seed, float) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (signed char)(1 + ((i * 2654435761u ^ seed) % 100));
}

template <typename T> static void transform_case(const char *name, size_t n) {
  T *x, *y, *z;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&z, n * sizeof(T)));
  fill<<<4096, 256>>>(x, n, 1u, 0.5f);
  fill<<<4096, 256>>>(y, n, 2u, 0.25f);
  CK(cudaDeviceSynchronize());
  double ms = median_ms([&] {
    CK(cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y), z, (long long)n, SquaredDiff{}));
  });
  add(std::string("CUB DeviceTransform (x-y)^2 ") + name, ms, 3.0 * n * sizeof(T));
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(z));
}

int main(int argc, char **argv) {
  const size_t n = (size_t)1 << 28;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  transform_case<float>("float32", n);
  transform_case<__half>("float16", n);
  transform_case<__nv_bfloat16>("bfloat16", n);
  transform_case<double>("float64", n);
  transform_case<cuda::std::complex<float>>("complex64", n);
  transform_case<signed char>("int8", n);

  {  // copy engine: 1 GiB device to device
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    double ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
    add("cudaMemcpy DtoD 1 GiB", ms, 2.0 * bytes);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  {  // reductions: f32 sum of 2^28, row sums of 16384^2
    float *x, *out;
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMalloc(&out, 16384 * sizeof(float)));
    fill<<<4096, 256>>>(x, n, 3u, 0.5f);
    size_t tmp_bytes = 0;
    CK(cub::DeviceReduce::Sum(nullptr, tmp_bytes, x, out, (long long)n));
    void *tmp;
    CK(cudaMalloc(&tmp, tmp_bytes));
    double ms = median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, x, out, (long long)n)); });
    add("CUB DeviceReduce::Sum f32 2^28", ms, 4.0 * n);
    CK(cudaFree(tmp));
    // small sizes: GPU time of one call (ukern's "<= CUB + 1 us" target)
    for (long long m : {1LL, 1024LL, 65536LL}) {
      tmp_bytes = 0;
      CK(cub::DeviceReduce::Sum(nullptr, tmp_bytes, x, out, m));
      CK(cudaMalloc(&tmp, tmp_bytes));
      ms = median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, x, out, m)); });
      add("CUB DeviceReduce::Sum f32 n=" + std::to_string(m), ms, 4.0 * m);
      CK(cudaFree(tmp));
    }
    {  // f64 2^27 and f16 2^28 (f32 accumulator) over the same bytes
      double *d;
      CK(cudaMalloc(&d, sizeof(double)));
      tmp_bytes = 0;
      CK(cub::DeviceReduce::Sum(nullptr, tmp_bytes, (const double *)x, d, (long long)n / 2));
      CK(cudaMalloc(&tmp, tmp_bytes));
      ms = median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, (const double *)x, d, (long long)n / 2)); });
      add("CUB DeviceReduce::Sum f64 2^27", ms, 4.0 * n);
      CK(cudaFree(tmp));
      CK(cudaFree(d));
      const __half *h = (const __half *)x;
      tmp_bytes = 0;
      auto hr = [&](void *t, size_t &b) {
        return cub::DeviceReduce::TransformReduce(t, b, h, out, (long long)n, cuda::std::plus<float>{},
                                                  HalfToFloat{}, 0.0f);
      };
      CK(hr(nullptr, tmp_bytes));
      CK(cudaMalloc(&tmp, tmp_bytes));
      ms = median_ms([&] { CK(hr(tmp, tmp_bytes)); });
      add("CUB DeviceReduce f16 -> f32 sum 2^28", ms, 2.0 * n);
      CK(cudaFree(tmp));
    }
    int *offsets;
    CK(cudaMalloc(&offsets, 16385 * sizeof(int)));
    std::vector<int> h(16385);
    for (int k = 0; k <= 16384; k++) h[k] = k * 16384;
    CK(cudaMemcpy(offsets, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
    tmp_bytes = 0;
    CK(cub::DeviceSegmentedReduce::Sum(nullptr, tmp_bytes, x, out, 16384, offsets, offsets + 1));
    CK(cudaMalloc(&tmp, tmp_bytes));
    ms = median_ms([&] {
      CK(cub::DeviceSegmentedReduce::Sum(tmp, tmp_bytes, x, out, 16384, offsets, offsets + 1));
    });
    add("CUB DeviceSegmentedReduce rows 16384^2 f32", ms, 4.0 * n);
    CK(cudaFree(tmp));
    CK(cudaFree(offsets));
    CK(cudaFree(x));
    CK(cudaFree(out));
  }

  if (argc > 1) {
    FILE *f = std::fopen(argv[1], "w");
    if (f) {
      std::fprintf(f, "{\"device\": \"%s\", \"rows\": [\n", prop.name);
      for (size_t k = 0; k < rows.size(); k++)
        std::fprintf(f, "  {\"case\": \"%s\", \"ms\": %.6g, \"GB/s\": %.6g}%s\n", rows[k].name.c_str(), rows[k].ms,
                     rows[k].gbs, k + 1 < rows.size() ? "," : "");
      std::fprintf(f, "]}\n");
      std::fclose(f);
    }
  }
  std::printf("\nCeilings on %s\n| case | ms | GB/s |\n|---|---|---|\n", prop.name);
  for (auto &r : rows) std::printf("| %s | %.4f | %.0f |\n", r.name.c_str(), r.ms, r.gbs);
  return 0;
}
