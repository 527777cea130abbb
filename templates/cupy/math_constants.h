// cupy/math_constants.h: the CUDART_* constants of the toolkit's
// math_constants.h that kernels written for CuPy use, with no include (CuPy
// ships this name so that code compiles without the full toolkit). Each is
// defined only where the toolkit's header has not defined it already.
#ifndef UKERN_CUPY_MATH_CONSTANTS_H
#define UKERN_CUPY_MATH_CONSTANTS_H


/* single precision */
#ifndef CUDART_INF_F
#define CUDART_INF_F __int_as_float(0x7f800000)
#endif
#ifndef CUDART_NAN_F
#define CUDART_NAN_F __int_as_float(0x7fffffff)
#endif
#ifndef CUDART_MIN_DENORM_F
#define CUDART_MIN_DENORM_F __int_as_float(0x00000001)
#endif
#ifndef CUDART_MAX_NORMAL_F
#define CUDART_MAX_NORMAL_F __int_as_float(0x7f7fffff)
#endif
#ifndef CUDART_NEG_ZERO_F
#define CUDART_NEG_ZERO_F __int_as_float(0x80000000)
#endif
#ifndef CUDART_ZERO_F
#define CUDART_ZERO_F 0.0f
#endif
#ifndef CUDART_ONE_F
#define CUDART_ONE_F 1.0f
#endif
#ifndef CUDART_PI_F
#define CUDART_PI_F 3.141592654f
#endif
#ifndef CUDART_PIO2_F
#define CUDART_PIO2_F 1.570796327f
#endif
#ifndef CUDART_PIO4_F
#define CUDART_PIO4_F 0.785398163f
#endif
#ifndef CUDART_2_OVER_PI_F
#define CUDART_2_OVER_PI_F 0.636619772f
#endif
#ifndef CUDART_SQRT_HALF_F
#define CUDART_SQRT_HALF_F 0.707106781f
#endif
#ifndef CUDART_L2E_F
#define CUDART_L2E_F 1.442695041f
#endif
#ifndef CUDART_L2T_F
#define CUDART_L2T_F 3.321928094f
#endif
#ifndef CUDART_LG2_F
#define CUDART_LG2_F 0.301029996f
#endif
#ifndef CUDART_LNT_F
#define CUDART_LNT_F 2.302585093f
#endif
#ifndef CUDART_LN2_F
#define CUDART_LN2_F 0.693147181f
#endif

/* double precision */
#ifndef CUDART_INF
#define CUDART_INF __longlong_as_double(0x7ff0000000000000ULL)
#endif
#ifndef CUDART_NAN
#define CUDART_NAN __longlong_as_double(0xfff8000000000000ULL)
#endif
#ifndef CUDART_NEG_ZERO
#define CUDART_NEG_ZERO __longlong_as_double(0x8000000000000000ULL)
#endif
#ifndef CUDART_MIN_DENORM
#define CUDART_MIN_DENORM __longlong_as_double(0x0000000000000001ULL)
#endif
#ifndef CUDART_ZERO
#define CUDART_ZERO 0.0
#endif
#ifndef CUDART_ONE
#define CUDART_ONE 1.0
#endif
#ifndef CUDART_PI
#define CUDART_PI 3.1415926535897931e+0
#endif
#ifndef CUDART_PIO2
#define CUDART_PIO2 1.5707963267948966e+0
#endif
#ifndef CUDART_PIO4
#define CUDART_PIO4 7.8539816339744831e-1
#endif
#ifndef CUDART_2_OVER_PI
#define CUDART_2_OVER_PI 6.3661977236758138e-1
#endif
#ifndef CUDART_SQRT_2
#define CUDART_SQRT_2 1.4142135623730951e+0
#endif
#ifndef CUDART_SQRT_HALF
#define CUDART_SQRT_HALF 7.0710678118654757e-1
#endif
#ifndef CUDART_L2E
#define CUDART_L2E 1.4426950408889634e+0
#endif
#ifndef CUDART_L2T
#define CUDART_L2T 3.3219280948873622e+0
#endif
#ifndef CUDART_LG2
#define CUDART_LG2 3.0102999566398120e-1
#endif
#ifndef CUDART_LNT
#define CUDART_LNT 2.3025850929940459e+0
#endif
#ifndef CUDART_LN2
#define CUDART_LN2 6.9314718055994529e-1
#endif

#endif
