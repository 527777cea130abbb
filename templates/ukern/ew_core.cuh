// ukern/ew_core.cuh — the type-independent core of ukern/elementwise.cuh.
//
// Include-free, so that a generated kernel compiles with NVRTC in a few ms;
// the generated code adds <ukern/half.cuh> and <ukern/complex.cuh> only when
// its dtypes or the user's text need them. Provides:
//   ukern::raw_array<T, ND, C>  the array object behind raw parameters and
//                               _raw_<name>: x[i] (i-th element in C order of
//                               x's own shape, whatever its strides), x[idx]
//                               (idx: an array of ND integers), x.size(),
//                               x.shape()[d], x.strides()[d] (bytes).
//                               C = true when the view is C-contiguous, which
//                               makes x[i] a plain pointer offset.
//   ukern::ew_index             _ind: _ind.size() is the loop size.
//   ukern::vec<T, N>, vload, vstore
//                               whole aligned vectors of N elements moved as
//                               one 1..16-byte load or store.
//   ukern::at(p, bytes)         the element at a byte offset from p.
//   ukern::tile<T, R, C>        raw shared-memory storage for an R x C tile
//                               (T may have constructors, e.g. complex).
#pragma once

namespace ukern {

// Kernel parameters hold the fields in this order (pointer, shape[ND],
// strides[ND]); the host packs them at the offsets the emitter planned.
template <class T, int ND, bool C> struct raw_array {
  T *data_;
  long long shape_[ND];
  long long strides_[ND];

  __device__ __forceinline__ long long size() const {
    long long n = 1;
#pragma unroll
    for (int d = 0; d < ND; d++) n *= shape_[d];
    return n;
  }
  __device__ __forceinline__ const long long *shape() const { return shape_; }
  __device__ __forceinline__ const long long *strides() const { return strides_; }
  __device__ __forceinline__ T *data() const { return data_; }

  __device__ __forceinline__ T &operator[](long long i) const {
    if (C) return data_[i];
    long long off = 0;
#pragma unroll
    for (int d = ND - 1; d > 0; d--) {
      off += (i % shape_[d]) * strides_[d];
      i /= shape_[d];
    }
    off += i * strides_[0];
    return *(T *)((const char *)data_ + off);
  }
  template <class I> __device__ __forceinline__ T &operator[](const I (&idx)[ND]) const {
    long long off = 0;
#pragma unroll
    for (int d = 0; d < ND; d++) off += (long long)idx[d] * strides_[d];
    return *(T *)((const char *)data_ + off);
  }
};

// 0-d arrays: one element.
template <class T, bool C> struct raw_array<T, 0, C> {
  T *data_;

  __device__ __forceinline__ long long size() const { return 1; }
  __device__ __forceinline__ const long long *shape() const { return 0; }
  __device__ __forceinline__ const long long *strides() const { return 0; }
  __device__ __forceinline__ T *data() const { return data_; }
  __device__ __forceinline__ T &operator[](long long) const { return *data_; }
};

struct ew_index {
  long long n_;
  __device__ __forceinline__ explicit ew_index(long long n) : n_(n) {}
  __device__ __forceinline__ long long size() const { return n_; }
};

template <class T> __device__ __forceinline__ T &at(T *p, long long bytes) {
  return *(T *)((const char *)p + bytes);
}

namespace detail {
template <int B> struct bits;
template <> struct bits<1> { typedef unsigned char type; };
template <> struct bits<2> { typedef unsigned short type; };
template <> struct bits<4> { typedef unsigned int type; };
template <> struct bits<8> { typedef uint2 type; };
template <> struct bits<16> { typedef uint4 type; };
} // namespace detail

template <class T, int N> struct alignas(sizeof(T) * N) vec {
  T v[N];
  __device__ __forceinline__ T &operator[](int k) { return v[k]; }
  __device__ __forceinline__ const T &operator[](int k) const { return v[k]; }
};

// p must be aligned to sizeof(T) * N (the host checks the base pointers).
template <int N, class T> __device__ __forceinline__ vec<T, N> vload(const T *p) {
  typedef typename detail::bits<sizeof(T) * N>::type B;
  vec<T, N> r;
  *(B *)&r = *(const B *)p;
  return r;
}

template <int N, class T> __device__ __forceinline__ void vstore(T *p, const vec<T, N> &r) {
  typedef typename detail::bits<sizeof(T) * N>::type B;
  *(B *)p = *(const B *)&r;
}

// Shared-memory storage for an R x C tile of T, indexed t(r, c). Raw bytes,
// so that types with constructors (complex) can be declared __shared__.
template <class T, int R, int C> struct tile {
  alignas(T) unsigned char b_[sizeof(T) * R * C];
  __device__ __forceinline__ T &operator()(int r, int c) { return ((T *)b_)[r * C + c]; }
};

} // namespace ukern
