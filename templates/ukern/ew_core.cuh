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
//                               makes x[i] a plain pointer offset. CuPy's
//                               CArray names: index_t, ndim, c_contiguous,
//                               x[{i, j}].
//   ukern::ew_index             _ind when only _ind.size() (the loop size) is used.
//   ukern::ew_indexer<ND>       _ind as CuPy's CIndexer: size(), ndim, set(i)
//                               (flat index to per-axis index), get() (that
//                               index, ptrdiff_t[ND]: x[_ind.get()]).
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
// Extents and strides are ptrdiff_t (8 bytes), as in CuPy's CArray.
template <class T, int ND, bool C> struct raw_array {
  typedef ptrdiff_t index_t;
  typedef T value_type;
  static const int ndim = ND;
  static const bool c_contiguous = C;
  T *data_;
  ptrdiff_t shape_[ND];
  ptrdiff_t strides_[ND];

  __device__ __forceinline__ ptrdiff_t size() const {
    ptrdiff_t n = 1;
#pragma unroll
    for (int d = 0; d < ND; d++) n *= shape_[d];
    return n;
  }
  __device__ __forceinline__ const ptrdiff_t *shape() const { return shape_; }
  __device__ __forceinline__ const ptrdiff_t *strides() const { return strides_; }
  __device__ __forceinline__ T *data() const { return data_; }

  __device__ __forceinline__ T &operator[](ptrdiff_t i) const {
    if (C) return data_[i];
    ptrdiff_t off = 0;
#pragma unroll
    for (int d = ND - 1; d > 0; d--) {
      off += (i % shape_[d]) * strides_[d];
      i /= shape_[d];
    }
    off += i * strides_[0];
    return *(T *)((const char *)data_ + off);
  }
  template <class I> __device__ __forceinline__ T &operator[](const I (&idx)[ND]) const {
    ptrdiff_t off = 0;
#pragma unroll
    for (int d = 0; d < ND; d++) off += (ptrdiff_t)idx[d] * strides_[d];
    return *(T *)((const char *)data_ + off);
  }
};

// 0-d arrays: one element.
template <class T, bool C> struct raw_array<T, 0, C> {
  typedef ptrdiff_t index_t;
  typedef T value_type;
  static const int ndim = 0;
  static const bool c_contiguous = C;
  T *data_;

  __device__ __forceinline__ ptrdiff_t size() const { return 1; }
  __device__ __forceinline__ const ptrdiff_t *shape() const { return 0; }
  __device__ __forceinline__ const ptrdiff_t *strides() const { return 0; }
  __device__ __forceinline__ T *data() const { return data_; }
  template <class I> __device__ __forceinline__ T &operator[](const I &) const { return *data_; }
};

struct ew_index {
  ptrdiff_t n_;
  __device__ __forceinline__ explicit ew_index(ptrdiff_t n) : n_(n) {}
  __device__ __forceinline__ ptrdiff_t size() const { return n_; }
};

// The loop's index as CuPy's CIndexer: the kernel fills shape_ (the merged
// loop's extents) and calls set(i) before each element.
template <int ND> struct ew_indexer {
  typedef ptrdiff_t index_t[ND];
  static const int ndim = ND;
  ptrdiff_t size_;
  ptrdiff_t shape_[ND];
  ptrdiff_t index_[ND];

  __device__ __forceinline__ explicit ew_indexer(ptrdiff_t n) : size_(n) {
    shape_[0] = n;
    index_[0] = 0;
  }
  __device__ __forceinline__ ptrdiff_t size() const { return size_; }
  __device__ __forceinline__ const ptrdiff_t *shape() const { return shape_; }
  __device__ __forceinline__ const index_t &get() const { return index_; }
  __device__ __forceinline__ void set(ptrdiff_t i) {
#pragma unroll
    for (int d = ND - 1; d > 0; d--) {
      index_[d] = i % shape_[d];
      i /= shape_[d];
    }
    index_[0] = i;
  }
};

template <> struct ew_indexer<0> {
  static const int ndim = 0;
  ptrdiff_t size_;
  __device__ __forceinline__ explicit ew_indexer(ptrdiff_t n) : size_(n) {}
  __device__ __forceinline__ ptrdiff_t size() const { return size_; }
  __device__ __forceinline__ void set(ptrdiff_t) {}
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
