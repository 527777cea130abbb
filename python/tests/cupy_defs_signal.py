"""CuPy v14.2.0's own cupyx.scipy.signal / cupyx.signal ElementwiseKernel and ReductionKernel definitions, kept as test
data (facts about CuPy's API: what code written for CuPy passes to these classes).
Each entry names the CuPy file and line it was read from; see cupy_defs_common.py for
the fields. Read by test_cupy_kernels_cpu.py and test_cupy_kernels_gpu.py."""
from cupy_defs_common import K

DEFS = [
    # ---- cupyx/scipy/signal/_bsplines.py
    K('cupyx/scipy/signal/_bsplines.py', 555, 'ew',
      ('T x, int32 n',
       'T output',
       """
    output = 1 / sqrt( 2.0 * M_PI * signsq ) * exp( -( x * x ) * r_signsq );
    """,
       '_gauss_spline_kernel'),
      {'loop_prep': 'const double signsq { ( n + 1 ) / 12.0 };                const double r_signsq { 0.5 / signsq };'}, dtypes={'T': 'float64'}, scalars=['n'], gpu=True),
    # ---- cupyx/scipy/signal/_fir_filter_design.py
    K('cupyx/scipy/signal/_fir_filter_design.py', 134, 'ew',
      ('float64 win, int32 numtaps, raw float64 bands, int32 steps, bool scale',
       'float64 h, float64 hc',
       """
    const double m { static_cast<double>( i ) - alpha ?
        static_cast<double>( i ) - alpha : 1.0e-20 };

    double temp {};
    double left {};
    double right {};

    for ( int s = 0; s < steps; s++ ) {
        left = bands[s * 2 + 0] ? bands[s * 2 + 0] : 1.0e-20;
        right = bands[s * 2 + 1] ? bands[s * 2 + 1] : 1.0e-20;

        temp += right * ( sin( right * m * M_PI ) / ( right * m * M_PI ) );
        temp -= left * ( sin( left * m * M_PI ) / ( left * m * M_PI ) );
    }

    temp *= win;
    h = temp;

    double scale_frequency {};

    if ( scale ) {
        left = bands[0];
        right = bands[1];

        if ( left == 0 ) {
            scale_frequency = 0.0;
        } else if ( right == 1 ) {
            scale_frequency = 1.0;
        } else {
            scale_frequency = 0.5 * ( left + right );
        }
        double c { cos( M_PI * m * scale_frequency ) };
        hc = temp * c;
    }
    """,
       '_firwin_kernel'),
      {'loop_prep': 'const double alpha { 0.5 * ( numtaps - 1 ) };'}, dtypes={}, scalars=['numtaps'], gpu=False),
    # ---- cupyx/scipy/signal/_waveforms.py
    K('cupyx/scipy/signal/_waveforms.py', 66, 'ew',
      ('T t, T w',
       'float64 y',
       """
    double out {};
    const bool mask1 { ( ( w > 1 ) || ( w < 0 ) ) };
    if ( mask1 ) {
        out = nan("0xfff8000000000000ULL");
    }

    // Use Python-compatible modulo: result is always in [0, 2*pi)
    // C fmod can return negative values for negative inputs
    T tmod { fmod( t, 2.0 * M_PI ) };
    if ( tmod < 0 ) {
        tmod += 2.0 * M_PI;
    }
    const bool mask2 { ( ( 1 - mask1 ) && ( tmod < ( w * 2.0 * M_PI ) ) ) };

    if ( mask2 ) {
        out = tmod / ( M_PI * w ) - 1;
    }

    const bool mask3 { ( ( 1 - mask1 ) && ( 1 - mask2 ) ) };
    if ( mask3 ) {
        out = ( M_PI * ( w + 1 ) - tmod ) / ( M_PI * ( 1 - w ) );
    }
    y = out;
    """,
       '_sawtooth_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 140, 'ew',
      ('T t, T w',
       'float64 y',
       """
    const bool mask1 { ( ( w > 1 ) || ( w < 0 ) ) };
    if ( mask1 ) {
        y = nan("0xfff8000000000000ULL");
    }

    // Use Python-compatible modulo: result is always in [0, 2*pi)
    // C fmod can return negative values for negative inputs
    T tmod { fmod( t, 2.0 * M_PI ) };
    if ( tmod < 0 ) {
        tmod += 2.0 * M_PI;
    }
    const bool mask2 { ( ( 1 - mask1 ) && ( tmod < ( w * 2.0 * M_PI ) ) ) };

    if ( mask2 ) {
        y = 1;
    }

    const bool mask3 { ( ( 1 - mask1 ) && ( 1 - mask2 ) ) };
    if ( mask3 ) {
        y = -1;
    }

    """,
       '_square_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 225, 'ew',
      ('T t, T a, T fc',
       'T yI',
       """
    T yenv = exp(-a * t * t);
    yI = yenv * cos( 2 * M_PI * fc * t);
    """,
       '_gausspulse_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 235, 'ew',
      ('T t, T a, T fc',
       'T yI, T yenv',
       """
    yenv = exp(-a * t * t);
    yI = yenv * cos( 2 * M_PI * fc * t);
    """,
       '_gausspulse_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 245, 'ew',
      ('T t, T a, T fc',
       'T yI, T yQ',
       """
    T yenv { exp(-a * t * t) };

    T l_yI {};
    T l_yQ {};
    sincos(2 * M_PI * fc * t, &l_yQ, &l_yI);
    yI = yenv * l_yI;
    yQ = yenv * l_yQ;
    """,
       '_gausspulse_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 260, 'ew',
      ('T t, T a, T fc',
       'T yI, T yQ, T yenv',
       """
    yenv = exp(-a * t * t);

    T l_yI {};
    T l_yQ {};
    sincos(2 * M_PI * fc * t, &l_yQ, &l_yI);
    yI = yenv * l_yI;
    yQ = yenv * l_yQ;
    """,
       '_gausspulse_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 378, 'ew',
      ('T t, T f0, T t1, T f1, T phi',
       'T phase',
       """
    const T beta { (f1 - f0) / t1 };
    const T temp { 2 * M_PI * (f0 * t + 0.5 * beta * t * t) };
    // Convert  phi to radians.
    phase = cos(temp + phi);
    """,
       '_chirp_phase_lin_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 390, 'ew',
      ('T t, T f0, T t1, T f1, T phi',
       'Y phase',
       """
    const T beta { (f1 - f0) / t1 };
    const T temp { 2 * M_PI * (f0 * t + 0.5 * beta * t * t) };
    // Convert  phi to radians.
    phase = Y(cos(temp + phi), cos(temp + phi + M_PI/2) * -1);
    """,
       '_chirp_phase_lin_kernel'),
      {}, dtypes={'T': 'float64', 'Y': 'complex128'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 402, 'ew',
      ('T t, T f0, T t1, T f1, T phi, bool vertex_zero',
       'T phase',
       """
    T temp {};
    const T beta { (f1 - f0) / (t1 * t1) };
    if ( vertex_zero ) {
        temp = 2 * M_PI * (f0 * t + beta * (t * t * t) / 3);
    } else {
        temp = 2 * M_PI *
            ( f1 * t + beta *
            ( ( (t1 - t) * (t1 - t) * (t1 - t) ) - (t1 * t1 * t1)) / 3);
    }
    // Convert  phi to radians.
    phase = cos(temp + phi);
    """,
       '_chirp_phase_quad_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 421, 'ew',
      ('T t, T f0, T t1, T f1, T phi',
       'T phase',
       """
    T temp {};
    if ( f0 == f1 ) {
        temp = 2 * M_PI * f0 * t;
    } else {
        T beta { t1 / log(f1 / f0) };
        temp = 2 * M_PI * beta * f0 * ( pow(f1 / f0, t / t1) - 1.0 );
    }
    // Convert  phi to radians.
    phase = cos(temp + phi);
    """,
       '_chirp_phase_log_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/_waveforms.py', 438, 'ew',
      ('T t, T f0, T t1, T f1, T phi',
       'T phase',
       """
    T temp {};
    if ( f0 == f1 ) {
        temp = 2 * M_PI * f0 * t;
    } else {
        T sing { -f1 * t1 / (f0 - f1) };
        temp = 2 * M_PI * ( -sing * f0 ) * log( abs( 1 - t / sing ) );
    }
    // Convert  phi to radians.
    phase = cos(temp + phi);
    """,
       '_chirp_phase_hyp_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupyx/scipy/signal/_wavelets.py
    K('cupyx/scipy/signal/_wavelets.py', 45, 'ew',
      ('raw T coef',
       'T output',
       """
    const int sign { ( i & 1 ) ? -1 : 1 };
    output = ( coef[_ind.size() - ( i + 1 )] ) * sign;
    """,
       '_qmf_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/signal/_wavelets.py', 72, 'ew',
      ('float64 w, float64 s, bool complete',
       'complex128 output',
       """
    const double x { start + delta * i };

    thrust::complex<double> temp { exp(
        thrust::complex<double>( 0, w * x ) ) };

    if ( complete ) {
        temp -= exp( -0.5 * ( w * w ) );
    }

    output = temp * exp( -0.5 * ( x * x ) ) * pow( M_PI, -0.25 )
    """,
       '_morlet_kernel'),
      {'loop_prep': 'const double end { s * 2.0 * M_PI };                const double start { -s * 2.0 * M_PI };                const double delta { ( end - start ) / ( _ind.size() - 1 ) };'}, dtypes={}, scalars=['s'], gpu=True),
    K('cupyx/scipy/signal/_wavelets.py', 150, 'ew',
      ('float64 a',
       'float64 total',
       """
    const double vec { i - ( _ind.size() - 1.0 ) * 0.5 };
    const double xsq { vec * vec };
    const double mod { 1 - xsq / wsq };
    const double gauss { exp( -xsq / ( 2.0 * wsq ) ) };

    total = A * mod * gauss;
    """,
       '_ricker_kernel'),
      {'loop_prep': 'const double A { 2.0 / ( sqrt( 3 * a ) * pow( M_PI, 0.25 ) ) }; const double wsq { a * a };'}, dtypes={}, scalars=['a'], gpu=True),
    K('cupyx/scipy/signal/_wavelets.py', 210, 'ew',
      ('float64 w, float64 s',
       'complex128 output',
       """
    const double x { ( i - ( _ind.size() - 1.0 ) * 0.5 ) / s };

    thrust::complex<double> temp { exp(
        thrust::complex<double>( 0, w * x ) ) };

    output = sqrt( 1 / s ) * temp * exp( -0.5 * ( x * x ) ) *
        pow( M_PI, -0.25 )
    """,
       '_morlet_kernel'),
      {'loop_prep': ''}, dtypes={}, scalars=[], gpu=True),
    # ---- cupyx/scipy/signal/windows/_windows.py
    K('cupyx/scipy/signal/windows/_windows.py', 59, 'ew',
      ('raw T a, int32 n',
       'T w',
       """
    const T fac { -M_PI + delta * i };
    T temp {};
    for ( int k = 0; k < n; k++ ) {
        temp += a[k] * cos( k * fac );
    }
    w = temp;
    """,
       '_general_cosine_kernel'),
      {'loop_prep': 'const double delta { ( M_PI - -M_PI ) / ( _ind.size() - 1 ) }'}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/signal/windows/_windows.py', 216, 'ew',
      ('',
       'float64 w',
       """
    int n {};
    if ( i < m ) {
        n = i + 1;
    } else {
        n = _ind.size() - i;
    }

    if ( odd ) {
        w = 2.0 * n / ( _ind.size() + 1.0 );
    } else {
        w = ( 2.0 * n - 1.0 ) / _ind.size();
    }
    """,
       '_triang_kernel'),
      {'loop_prep': 'const int m { static_cast<int>( 0.5 * _ind.size() ) };                const bool odd { (_ind.size() & 1) != 0 };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 298, 'ew',
      ('',
       'float64 w',
       """
    double n {};
    double temp {};
    double sizeS1 {};

    if ( odd ) {
        sizeS1 = s1 - start + 1.0;
    } else {
        s1 += 0.5;
        s2 += 0.5;
        sizeS1 = s1 - start;
    }

    double sizeS2 { s2 - start + 1.0 - sizeS1 };

    if ( i < sizeS1 ) {
        n = i + start;
        temp = 1.0 - abs( n ) * den;
        w = 2.0 * ( temp * temp * temp );
    } else if ( i >= sizeS1 && i < ( sizeS1 + sizeS2 ) ) {
        n = ( i - sizeS1 - s2 );
        temp = abs( n ) * den;
        w = 1.0 - 6.0 * temp * temp + 6.0 * temp * temp * temp;
    } else {
        n = s1 - ( i - ( sizeS2 + sizeS1 - ( 1 - odd ) ) );
        temp = 1.0 - abs( n ) * den;
        w = 2.0 * temp * temp * temp;
    }
    """,
       '_parzen_kernel'),
      {'loop_prep': 'const double start { 0.5 * -( _ind.size () - 1 ) };                const double den { 1.0 / ( 0.5 * _ind.size () ) };                const bool odd { (_ind.size() & 1) != 0 };                double s1 { floor(-0.25 * ( _ind.size () - 1 ) ) };                double s2 { floor(0.25 * ( _ind.size () - 1 ) ) };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 401, 'ew',
      ('',
       'float64 w',
       """
    const double fac { abs( start + delta * ( i - 1 ) ) };
    if ( i != 0 && i != ( _ind.size() - 1 ) ) {
        w = ( 1.0 - fac ) * cos( M_PI * fac ) + 1.0 / M_PI * sin( M_PI * fac );
    } else {
        w = 0.0;
    }
    """,
       '_bohman_kernel'),
      {'loop_prep': 'const double delta { 2.0 / ( _ind.size() - 1 ) };                const double start { -1.0 + delta };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 737, 'ew',
      ('',
       'float64 w',
       """
    if ( i <= temp ) {
        w = 2.0 * i * N;
    } else {
        w = 2.0 - 2.0 * i * N;
    }
    """,
       '_bartlett_kernel'),
      {'loop_prep': 'const double N { 1.0 / ( _ind.size() - 1 ) };                const double temp { 0.5 * ( _ind.size() - 1 ) };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 937, 'ew',
      ('float64 alpha',
       'float64 w',
       """
    if ( i < ( width + 1 ) ) {
        w = 0.5 * ( 1 + cos( M_PI * ( -1.0 + 2.0 * i / alpha * N ) ) );
    } else if ( i >= ( width + 1 ) && i < ( _ind.size() - width - 1) ) {
        w = 1.0;
    } else {
        w = 0.5 *
            ( 1.0 + cos( M_PI * ( -2.0 / alpha + 1 + 2.0 * i / alpha * N ) ) );
    }
    """,
       '_tukey_kernel'),
      {'loop_prep': 'const double N { 1.0 / ( _ind.size() - 1 ) };                const int width { static_cast<int>( alpha *                    ( _ind.size() - 1 ) * 0.5 ) }'}, dtypes={}, scalars=['alpha'], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1036, 'ew',
      ('',
       'float64 w',
       """
    const double fac { abs( i * N - 0.5 ) };
    w = 0.62 - 0.48 * fac + 0.38 * cos(2.0 * M_PI * fac);
    """,
       '_barthann_kernel'),
      {'loop_prep': 'const double N { 1.0 / ( _ind.size() - 1 ) };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1194, 'ew',
      ('',
       'float64 w',
       """
    w = 0.54 - 0.46 * cos(2.0 * M_PI * i * N);
    """,
       '_hamming_kernel'),
      {'loop_prep': 'const double N { 1.0 / ( _ind.size() - 1 ) };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1286, 'ew',
      ('float64 beta',
       'float64 w',
       """
    const double temp { ( i - alpha ) / alpha };
    w = cyl_bessel_i0( beta * sqrt( 1.0 - ( temp * temp ) ) ) /
        cyl_bessel_i0( beta );
    """,
       '_kaiser_kernel'),
      {'loop_prep': 'const double alpha { 0.5 * ( _ind.size() - 1 ) };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1480, 'ew',
      ('float64 std',
       'float64 w',
       """
    const double n { i - (_ind.size() - 1.0) * 0.5 };
    w = exp( - ( n * n ) / sig2 );
    """,
       '_gaussian_kernel'),
      {'loop_prep': 'const double sig2 { 2.0 * std * std };'}, dtypes={}, scalars=['std'], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1554, 'ew',
      ('float64 p, float64 sig',
       'float64 w',
       """
    const double n { i - ( _ind.size() - 1.0 ) * 0.5 };
    w = exp( -0.5 * pow( abs( n / sig ), 2.0 * p ) );
    """,
       '_general_gaussian_kernel'),
      {}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1635, 'ew',
      ('int64 order, float64 beta',
       'complex128 p',
       """
    double real {};
    const double x { beta * cos( i * N ) };

    if ( x > 1 ) {
        real = cosh( order * acosh( x ) );
    } else if ( x < -1 ) {
        real = ( 2.0 * ( _ind.size() & 1 ) - 1.0 ) *
            cosh( order * acosh( -x ) );
    } else {
        real = cos( order * acos( x ) );
    }

    if ( odd ) {
        p = real;
    } else {
        p = real * exp( thrust::complex<double>( 0.0, N * i ) );
    }
    """,
       '_chebwin_kernel'),
      {'loop_prep': 'const double N { M_PI * ( 1.0 / _ind.size() ) };                const bool odd { (_ind.size() & 1) != 0 };'}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1788, 'ew',
      ('',
       'float64 w',
       """
    w = sin( M_PI / _ind.size() * ( i + 0.5 ) );
    """,
       '_cosine_kernel'),
      {}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1858, 'ew',
      ('float64 center, float64 tau',
       'float64 w',
       """
    w = exp( -abs( i - center ) / tau );
    """,
       '_exponential_kernel'),
      {}, dtypes={}, scalars=[], gpu=True),
    K('cupyx/scipy/signal/windows/_windows.py', 1956, 'ew',
      ('int64 nbar, raw float64 Fm, bool norm',
       'float64 out',
       """
    double temp { mod_pi * ( i - _ind.size() / 2.0 + 0.5 ) };
    double dot {};

    for ( int k = 1; k < nbar; k++ ) {
        dot += Fm[k-1] * cos( temp * k );
    }
    out = 1.0 + 2.0 * dot;

    double scale { 1.0 };
    if (norm == 1) {
        dot = 0;
        temp = mod_pi * ( ( ( _ind.size() - 1.0 ) / 2.0 )
            - _ind.size() / 2.0 + 0.5 );
        for ( int k = 1; k < nbar; k++ ) {
            dot += Fm[k-1] * cos( temp * k );
        }
        scale = 1.0 / ( 1.0 + 2.0 * dot );
    }

    out *= scale;
    """,
       '_taylor_kernel'),
      {'loop_prep': 'const double mod_pi { 2.0 * M_PI / _ind.size() }'}, dtypes={}, scalars=[], gpu=False),
    # ---- cupyx/signal/_acoustics/_cepstrum.py
    K('cupyx/signal/_acoustics/_cepstrum.py', 26, 'ew',
      ('T spectrum',
       'T output',
       """
    output = log( abs( spectrum ) );
    """,
       '_real_cepstrum_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupyx/signal/_acoustics/_cepstrum.py', 63, 'ew',
      ('C spectrum, raw T unwrapped',
       'C output, T ndelay',
       """
    ndelay = round( unwrapped[center] / M_PI );
    const T temp { unwrapped[i] - ( M_PI * ndelay * i / center ) };

    output = log( abs( spectrum ) ) + C( 0, temp );
    """,
       '_complex_cepstrum_kernel'),
      {'return_tuple': True, 'loop_prep': 'const int center { static_cast<int>( 0.5 *         ( _ind.size() + 1 ) ) };'}, dtypes={'C': 'complex128', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/signal/_acoustics/_cepstrum.py', 109, 'ew',
      ('C log_spectrum, int32 ndelay, float64 pi',
       'C spectrum',
       """
    const double wrapped { log_spectrum.imag() + M_PI * ndelay * i / center };

    spectrum = exp( C( log_spectrum.real(), wrapped ) )
    """,
       '_inverse_complex_cepstrum_kernel'),
      {'loop_prep': 'const double center { 0.5 * ( _ind.size() + 1 ) };'}, dtypes={'C': 'complex128'}, scalars=[], gpu=True),
    K('cupyx/signal/_acoustics/_cepstrum.py', 145, 'ew',
      ('T ceps',
       'T window',
       """
    if ( !i ) {
        window = ceps;
    } else if ( i < bend ) {
        window = ceps * 2.0;
    } else if ( i == bend ) {
        window = ceps * ( 1 - odd );
    } else {
        window = 0;
    }
    """,
       '_minimum_phase_kernel'),
      {'loop_prep': 'const bool odd { (_ind.size() & 1) != 0 };                const int bend { static_cast<int>( 0.5 *                     ( _ind.size() + odd ) ) };'}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupyx/signal/_convolution/_convolve.py
    K('cupyx/signal/_convolution/_convolve.py', 31, 'ew',
      ('raw T in1, raw T in2, int32 W, int32 H',
       'T out',
       """
    T temp {};
    for (int x = 0; x < W; x++) {
      for (int y = 0; y < H; y++) {
        temp += in1[i + W - x - 1] * in1[i + H - y - 1] * in2[H * x + y];
      }
    }
    out = temp;
    """,
       'cupy_convolved2o'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/signal/_convolution/_convolve.py', 134, 'ew',
      ('raw T in1, raw T in2, int32 W, int32 H, int32 D',
       'T out',
       """
    T temp {};
    for (int x = 0; x < W; x++) {
      for (int y = 0; y < H; y++) {
        for (int z = 0; z < D; z++) {
          temp += in1[i + W - x - 1] * in1[i + H - y - 1] *
                  in1[i + D - z - 1] * in2[(H * x + y) * D + z];
        }
      }
    }
    out = temp;
    """,
       'cupy_convolved3o'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/signal/_filtering/_filtering.py
    K('cupyx/signal/_filtering/_filtering.py', 257, 'ew',
      ('float64 x, float64 c',
       'complex128 out',
       'out = thrust::polar(x, c * i);',
       '_freq_shift_kernel'),
      {}, dtypes={}, scalars=[], gpu=True),
]
