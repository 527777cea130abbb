/* Kernel sources shared by the nvrtc and gpu tests of issue 13. */
#ifndef UK_TESTS_COMPILER_SRC_H
#define UK_TESTS_COMPILER_SRC_H

/* Ordinary std:: code: for each i, with w = {1, 2, 3}[i % 3],
 *   y[i] = clamp(-w + x[i] + sqrt(|x[i]|), -128, 127) + (bits of x[i] & 1). */
static const char *std_src =
    "#include <type_traits>\n"
    "#include <limits>\n"
    "#include <utility>\n"
    "#include <cstdint>\n"
    "#include <tuple>\n"
    "#include <array>\n"
    "#include <complex>\n"
    "#include <cmath>\n"
    "#include <cstddef>\n"
    "#include <bit>\n"
    "#include <optional>\n"
    "#include <functional>\n"
    "template <typename T>\n"
    "__device__ T clamp_to_int8(T v) {\n"
    "  static_assert(std::is_floating_point<T>::value, \"floats only\");\n"
    "  constexpr T lo = static_cast<T>(std::numeric_limits<std::int8_t>::min());\n"
    "  constexpr T hi = static_cast<T>(std::numeric_limits<std::int8_t>::max());\n"
    "  return v < lo ? lo : v > hi ? hi : v;\n"
    "}\n"
    "extern \"C\" __global__ void std_kernel(const float* x, float* y, std::size_t n) {\n"
    "  std::size_t i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  std::array<float, 3> w = {1.0f, 2.0f, 3.0f};\n"
    "  std::tuple<float, int> t = std::make_tuple(x[i], static_cast<int>(i % 3));\n"
    "  std::pair<float, float> p = std::make_pair(std::get<0>(t), w[std::get<1>(t)]);\n"
    "  std::swap(p.first, p.second);\n"
    "  std::complex<float> c(p.second, p.first);\n"
    "  c *= std::complex<float>(0.0f, 1.0f);\n"
    "  std::optional<float> o = std::abs(c.real()) > 0.0f ? std::optional<float>(c.real()) : std::nullopt;\n"
    "  std::uint32_t bits = std::bit_cast<std::uint32_t>(x[i]);\n"
    "  static_assert(std::is_same_v<decltype(bits), unsigned int>, \"uint32_t\");\n"
    "  float r = clamp_to_int8(o.value_or(0.0f) + std::imag(c) + std::sqrt(std::fabs(x[i])));\n"
    "  y[i] = std::plus<float>()(r, static_cast<float>(bits & 1u));\n"
    "}\n";

#endif
