// ukern/elementwise.cuh — device support for generated elementwise kernels:
// the core (ukern/ew_core.cuh: raw_array, ew_index, vec/vload/vstore, at,
// tile) with ukern's number types (half.cuh, complex.cuh). Generated kernels
// include only the parts their dtypes and text need; this header is for code
// that wants everything (e.g. reduction kernels).
#pragma once

#include <ukern/complex.cuh>
#include <ukern/half.cuh>
#include <ukern/ew_core.cuh>
