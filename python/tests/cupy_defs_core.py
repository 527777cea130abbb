"""CuPy v14.2.0's own cupy, cupyx.scipy.ndimage / sparse / linalg and other ElementwiseKernel and ReductionKernel definitions, kept as test
data (facts about CuPy's API: what code written for CuPy passes to these classes).
Each entry names the CuPy file and line it was read from; see cupy_defs_common.py for
the fields. Read by test_cupy_kernels_cpu.py and test_cupy_kernels_gpu.py."""
from cupy_defs_common import K

DEFS = [
    # ---- cupy/_binary/packing.py
    K('cupy/_binary/packing.py', 8, 'ew',
      ('raw T a, raw int32 a_size',
       'uint8 packed',
       """for (int j = 0; j < 8; ++j) {
                    int k = i * 8 + j;
                    int bit = k < a_size && a[k] != 0;
                    packed |= bit << (7 - j);
                }""",
       'cupy_packbits_big'),
      {}, dtypes={'T': 'float64'}, scalars=['a_size'], gpu=False),
    K('cupy/_binary/packing.py', 17, 'ew',
      ('raw T a, raw int32 a_size',
       'uint8 packed',
       """for (int j = 0; j < 8; ++j) {
                    int k = i * 8 + j;
                    int bit = k < a_size && a[k] != 0;
                    packed |= bit << j;
                }""",
       'cupy_packbits_little'),
      {}, dtypes={'T': 'float64'}, scalars=['a_size'], gpu=False),
    K('cupy/_binary/packing.py', 68, 'ew',
      ('raw uint8 a',
       'T unpacked',
       'unpacked = (a[i / 8] >> (7 - i % 8)) & 1;',
       'cupy_unpackbits_big'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_creation/matrix.py
    K('cupy/_creation/matrix.py', 68, 'ew',
      ('int32 m, int32 k',
       'T out',
       """
    int row = i / m;
    int col = i % m;
    out = (col <= row + k);
    """,
       'cupy_tri'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_functional/piecewise.py
    K('cupy/_functional/piecewise.py', 7, 'ew',
      ('bool cond, T value',
       'T y',
       'if (cond) y = value',
       'cupy_piecewise_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_indexing/insert.py
    K('cupy/_indexing/insert.py', 72, 'ew',
      ('Q mask, raw S values, uint64 len_vals',
       'T out',
       """
    if (mask) out = (T) values[i % len_vals];
    """,
       'cupy_putmask_kernel'),
      {}, dtypes={'Q': 'float64', 'S': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_indexing/iterate.py
    K('cupy/_indexing/iterate.py', 148, 'ew',
      ('raw T val, int64 start, int64 step',
       'raw T a',
       'a[start + i * step] = val[i % val.size()]',
       'cupy_flatiter_setitem_slice'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    K('cupy/_indexing/iterate.py', 154, 'ew',
      ('raw T a, int64 start, int64 step',
       'T o',
       'o = a[start + i * step]',
       'cupy_flatiter_getitem_slice'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_logic/truth.py
    K('cupy/_logic/truth.py', 10, 'ew',
      ('raw T X, int64 len',
       'bool z',
       'z = (i == 0 || X[i] != X[i-1]) && (i == len - 1 || X[i] != X[i+1])',
       'setxorkernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_manipulation/add_remove.py
    K('cupy/_manipulation/add_remove.py', 110, 'ew',
      ('raw T x, int64 size',
       'T y',
       'y = x[i % size]',
       'cupy_resize'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    K('cupy/_manipulation/add_remove.py', 147, 'red',
      ('T data, int64 len',
       'int64 y',
       'data == T(0) ? len : _j',
       'min(a, b)',
       'y = a',
       'len',
       'first_nonzero'),
      {}, dtypes={'T': 'float64'}, scalars=['len'], gpu=True),
    # ---- cupy/_math/misc.py
    K('cupy/_math/misc.py', 14, 'red',
      ('T x1, T x2',
       'T y',
       'x1 * x2',
       'a + b',
       'y = a',
       '0',
       'dot_product'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_math/sumprod.py
    K('cupy/_math/sumprod.py', 351, 'ew',
      ('T a, T val',
       'T out',
       'if (a == a) {out = a;} else {out = val;}',
       'cupy_replace_nan'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_math/window.py
    K('cupy/_math/window.py', 8, 'ew',
      ('float32 alpha',
       'float64 out',
       """
    out = 0.42 - 0.5 * cos(i * alpha) + 0.08 * cos(2 * alpha * i);
    """,
       'cupy_blackman'),
      {}, dtypes={}, scalars=[], gpu=True),
    K('cupy/_math/window.py', 16, 'ew',
      ('float32 alpha',
       'T arr',
       """
    if (i < alpha)
        arr = i / alpha;
    else
        arr = 2.0 - i / alpha;
    """,
       'cupy_bartlett'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupy/_math/window.py', 85, 'ew',
      ('float32 alpha',
       'float64 out',
       """
    out = 0.54 - 0.46 * cos(i * alpha);
    """,
       'cupy_hamming'),
      {}, dtypes={}, scalars=[], gpu=True),
    # ---- cupy/_misc/memory_ranges.py
    K('cupy/_misc/memory_ranges.py', 16, 'ew',
      ('T x',
       'uint64 out',
       'out = (unsigned long long)(&x)',
       'cupy_get_memory_ptrs'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_statistics/histogram.py
    K('cupy/_statistics/histogram.py', 21, 'ew',
      ('S x, raw T bins, int32 n_bins',
       'raw U y',
       """
    if (x < bins[0] or bins[n_bins - 1] < x) {
        return;
    }
    int high = n_bins - 1;
    int low = 0;

    while (high - low > 1) {
        int mid = (high + low) / 2;
        if (bins[mid] <= x) {
            low = mid;
        } else {
            high = mid;
        }
    }
    atomicAdd(&y[low], U(1));
    """,
       'cupy_histogram_kernel'),
      {}, dtypes={'S': 'float64', 'T': 'float64', 'U': 'float64'}, scalars=[], gpu=False),
    K('cupy/_statistics/histogram.py', 44, 'ew',
      ('S x, raw T bins, int32 n_bins, raw W weights',
       'raw Y y',
       """
    if (x < bins[0] or bins[n_bins - 1] < x) {
        return;
    }
    int high = n_bins - 1;
    int low = 0;

    while (high - low > 1) {
        int mid = (high + low) / 2;
        if (bins[mid] <= x) {
            low = mid;
        } else {
            high = mid;
        }
    }
    atomicAdd(&y[low], (Y)weights[i]);
    """,
       'cupy_weighted_histogram_kernel'),
      {}, dtypes={'S': 'float64', 'T': 'float64', 'W': 'float64', 'Y': 'float64'}, scalars=[], gpu=False),
    K('cupy/_statistics/histogram.py', 508, 'ew',
      ('S x',
       'raw U bin',
       'atomicAdd(&bin[x], U(1))',
       'cupy_bincount_kernel'),
      {}, dtypes={'S': 'float64', 'U': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_statistics/order.py
    K('cupy/_statistics/order.py', 259, 'ew',
      ('S idx, raw T a, raw int32 offset, raw int32 size',
       'U ret',
       """
            ptrdiff_t idx_below = floor(idx);
            U weight_above = idx - idx_below;

            ptrdiff_t max_idx = size - 1;
            ptrdiff_t offset_bottom = _ind.get()[0] * offset + idx_below;
            ptrdiff_t offset_top = min(offset_bottom + 1, max_idx);

            U diff = a[offset_top] - a[offset_bottom];

            if (weight_above < 0.5) {
                ret = a[offset_bottom] + diff * weight_above;
            } else {
                ret = a[offset_top] - diff * (1 - weight_above);
            }
            """,
       'cupy_percentile_weightnening'),
      {}, dtypes={'S': 'float64', 'T': 'float64', 'U': 'float64'}, scalars=['offset', 'size'], gpu=False),
    # ---- cupy/linalg/_eigenvalue.py
    K('cupy/linalg/_eigenvalue.py', 102, 'ew',
      ('uint64 n, raw C w, raw R v_real',
       'raw C v_complex',
       """
        int col_idx = i % n;
        auto ew_i       = w[col_idx].imag();
        // if img == 0 -> ev = ev[i]
        // if img positive -> ev = ev[i] + i*ev[i+1]
        // if img negative -> ev = ev[i-1] - i*ev[i]
        int real_idx = i - ((ew_i < 0) ? 1 : 0);
        int img_idx  = i + ((ew_i > 0) ? 1 : 0);
        R factor     = ((ew_i > 0) ? R(1.0) : ((ew_i < 0) ? R(-1.0) : R(0.0)));
        v_complex[i].real(v_real[real_idx]);
        v_complex[i].imag(factor * v_real[img_idx]);
    """,
       'cupy_assemble_complex_evs_kernel'),
      {}, dtypes={'C': 'complex128', 'R': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/linalg/_util.py
    K('cupy/linalg/_util.py', 155, 'ew',
      ('int64 k',
       'S x',
       'x = (_ind.get()[1] - _ind.get()[0] <= k) ? x : 0',
       'cupy_tril_kernel'),
      {'reduce_dims': False}, dtypes={'S': 'float64'}, scalars=[], gpu=True),
    K('cupy/linalg/_util.py', 169, 'ew',
      ('int64 k',
       'S x',
       'x = (_ind.get()[_ind.ndim - 1] - _ind.get()[_ind.ndim - 2] >= k) ? x : 0',
       'cupy_triu_kernel'),
      {'reduce_dims': False}, dtypes={'S': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/random/_generator.py
    K('cupy/random/_generator.py', 272, 'ew',
      ('T x, T loc, T scale',
       'T y',
       'y = loc + scale * ((x <= 0.5) ? log(x + x): -log(x + x - 1.0))',
       'cupy_laplace_kernel'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupy/random/_generator.py', 634, 'ew',
      ('',
       'T x',
       'x = (x == (T)1) ? 0 : x',
       'cupy_random_x_mod_1'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupy/random/_generator.py', 687, 'ew',
      ('T max, T mx',
       'T out',
       'out = max - (mx != max ? (max - mx) % (mx + 1) : 0)',
       'cupy_random_interval_upper_limit'),
      {}, dtypes={'T': 'int64'}, scalars=[], gpu=True),
    # ---- cupy/random/_sample.py
    K('cupy/random/_sample.py', 195, 'ew',
      ('int64 x, int32 p, int32 n',
       'raw U ys',
       'atomicAdd(&ys[i / n * p + x], U(1))',
       'cupy_random_multinomial'),
      {}, dtypes={'U': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/_texture.py
    K('cupyx/_texture.py', 10, 'ew',
      ('U texObj, raw float32 m, uint64 width',
       'T transformed_image',
       """
    float3 pixel = make_float3(
        (float)(i / width),
        (float)(i % width),
        1.0f
    );
    float x = dot(pixel, make_float3(m[0],  m[1],  m[2])) + .5f;
    float y = dot(pixel, make_float3(m[3],  m[4],  m[5])) + .5f;
    transformed_image = tex2D<T>(texObj, y, x);
    """,
       'cupyx_texture_affine_transformation_2d_array'),
      {'preamble': '\n    inline __host__ __device__ float dot(float3 a, float3 b)\n    {\n        return a.x * b.x + a.y * b.y + a.z * b.z;\n    }\n    '}, dtypes={'T': 'float32', 'U': 'float64'}, scalars=[], gpu=False),
    K('cupyx/_texture.py', 31, 'ew',
      ('U texObj, raw float32 m, uint64 height, uint64 width',
       'T transformed_volume',
       """
    float4 voxel = make_float4(
        (float)(i / (width * height)),
        (float)((i % (width * height)) / width),
        (float)((i % (width * height)) % width),
        1.0f
    );
    float x = dot(voxel, make_float4(m[0],  m[1],  m[2],  m[3])) + .5f;
    float y = dot(voxel, make_float4(m[4],  m[5],  m[6],  m[7])) + .5f;
    float z = dot(voxel, make_float4(m[8],  m[9],  m[10], m[11])) + .5f;
    transformed_volume = tex3D<T>(texObj, z, y, x);
    """,
       'cupyx_texture_affine_transformation_3d_array'),
      {'preamble': '\n    inline __host__ __device__ float dot(float4 a, float4 b)\n    {\n        return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;\n    }\n    '}, dtypes={'T': 'float32', 'U': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/fft/_realtransforms.py
    K('cupyx/scipy/fft/_realtransforms.py', 110, 'ew',
      ('R xr, int32 N, R norm_factor',
       'C y',
       """
    C j(0., -1.);
    y = (R)2.0 * norm_factor * exp(j * (R)(i * M_PI / (2 * N)));"""),
      {}, dtypes={'C': 'complex128', 'R': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/fft/_realtransforms.py', 232, 'ew',
      ('R xr, int32 N, R norm_factor',
       'C y',
       """
    C j(0., 1.);
    y = (R)(2 * N * norm_factor) * exp(j * (R)(i * M_PI / (2 * N)));"""),
      {}, dtypes={'C': 'complex128', 'R': 'float64'}, scalars=[], gpu=True),
    # ---- cupyx/scipy/linalg/_array_utils.py
    K('cupyx/scipy/linalg/_array_utils.py', 7, 'ew',
      ('T A, N r, N c',
       'N out',
       'out = A != 0 ? r - c : 0',
       'cupyx_scipy_linalg_band_pos'),
      {}, dtypes={'N': 'float64', 'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupyx/scipy/linalg/_special_matrices.py
    K('cupyx/scipy/linalg/_special_matrices.py', 124, 'ew',
      ('T in',
       'T out',
       'out = (__popc(_ind.get()[0] & _ind.get()[1]) & 1) ? -1 : 1;',
       'cupyx_scipy_linalg_hadamard'),
      {'reduce_dims': False}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupyx/scipy/ndimage/_measurements.py
    K('cupyx/scipy/ndimage/_measurements.py', 238, 'ew',
      ('T input, R labels, raw X index, uint64 size, raw float64 mean',
       'raw float64 out',
       """
    for (ptrdiff_t j = 0; j < size; j++) {
      if (labels == index[j]) {
        atomicAdd(&out[j], (input - mean[j]) * (input - mean[j]));
        break;
      }
    }
    """,
       'cupyx_scipy_ndimage_variance'),
      {}, dtypes={'R': 'float64', 'T': 'float64', 'X': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/ndimage/_measurements.py', 252, 'ew',
      ('T input, R labels, raw X index, uint64 size',
       'raw float64 out',
       """
    for (ptrdiff_t j = 0; j < size; j++) {
      if (labels == index[j]) {
        atomicAdd(&out[j], input);
        break;
      }
    }
    """,
       'cupyx_scipy_ndimage_sum'),
      {}, dtypes={'R': 'float64', 'T': 'float64', 'X': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/ndimage/_measurements.py', 276, 'ew',
      ('T input, R labels, raw X index, uint64 size',
       'raw float64 out, raw uint64 count',
       """
    for (ptrdiff_t j = 0; j < size; j++) {
      if (labels == index[j]) {
        atomicAdd(&out[j], input);
        atomicAdd(&count[j], 1);
        break;
      }
    }
    """,
       'cupyx_scipy_ndimage_mean'),
      {}, dtypes={'R': 'float64', 'T': 'float64', 'X': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/sparse/_compressed.py
    K('cupyx/scipy/sparse/_compressed.py', 174, 'ew',
      ('raw T indptr, raw T indices',
       'bool diff',
       """
        bool diff_out = true;
        for (T jj = indptr[i]; jj < indptr[i+1] - 1; jj++) {
            if (indices[jj] > indices[jj+1]){
                diff_out = false;
            }
        }
        diff = diff_out;
        """,
       'cupyx_scipy_sparse_has_sorted_indices'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/_compressed.py', 188, 'ew',
      ('raw T indptr, raw T indices',
       'bool diff',
       """
        bool diff_out = true;
        if (indptr[i] > indptr[i+1]) {
            diff = false;
            return;
        }
        for (T jj = indptr[i]; jj < indptr[i+1] - 1; jj++) {
            if (indices[jj] >= indices[jj+1]) {
                diff_out = false;
            }
        }
        diff = diff_out;
        """,
       'cupyx_scipy_sparse_has_canonical_format'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/sparse/_coo.py
    K('cupyx/scipy/sparse/_coo.py', 46, 'ew',
      ('raw T row, raw T col',
       'T diff',
       """
        T diff_out = 1;
        if (i == 0 || row[i - 1] == row[i] && col[i - 1] == col[i]) {
          diff_out = 0;
        }
        diff = diff_out;
        """,
       'cupyx_scipy_sparse_coo_sum_duplicates_diff'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/_coo.py', 729, 'ew',
      ('T src_data, I src_row, I src_col, I index',
       'raw T data, raw I row, raw I col',
       """
                    if (src_data) data[index] = true;
                    row[index] = src_row;
                    col[index] = src_col;
                    """,
       'cupyx_scipy_sparse_coo_sum_duplicates_assign'),
      {}, dtypes={'I': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/_coo.py', 740, 'ew',
      ('T src_data, I src_row, I src_col, I index',
       'raw T data, raw I row, raw I col',
       """
                    atomicAdd(&data[index], src_data);
                    row[index] = src_row;
                    col[index] = src_col;
                    """,
       'cupyx_scipy_sparse_coo_sum_duplicates_assign'),
      {}, dtypes={'I': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/sparse/_csr.py
    K('cupyx/scipy/sparse/_csr.py', 943, 'ew',
      ('T data, I row, I col, I width, raw T other',
       'T res',
       """
        res = data / other[row * width + col]
        """,
       'cupyx_scipy_sparse_coo_divide_dense'),
      {}, dtypes={'I': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/_csr.py', 1060, 'ew',
      ('T C_DATA, I C_INDICES, raw I FLAGS',
       'raw D D_DATA, raw I D_INDICES',
       """
        I j = FLAGS[i];
        if (j < FLAGS[i+1]) {
            D_DATA[j] = (D)(C_DATA);
            D_INDICES[j] = C_INDICES;
        }
        """,
       'cupyx_scipy_sparse_csr_multiply_by_csr_step2'),
      {}, dtypes={'D': 'float64', 'I': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/_csr.py', 1438, 'ew',
      ('I M, I N, T A',
       'raw I INDPTR, raw I INFO',
       """
        I row = (I)i / N;
        I col = (I)i % N;
        if (A != static_cast<T>(0)) {
            atomicAdd(&INDPTR[row + 1], (I)1);
            INFO[(I)i + 1] = 1;
        }
        """,
       'cupyx_scipy_sparse_dense2csr_step1'),
      {}, dtypes={'I': 'int32', 'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/sparse/_dia.py
    K('cupyx/scipy/sparse/_dia.py', 155, 'red',
      ('I offsets, I m, I L',
       'int64 nnz',
       'max(min(m + offsets, L) - max(offsets, (I)0), (I)0)',
       'a + b',
       'nnz = a',
       '0',
       'dia_nnz'),
      {}, dtypes={'I': 'float64'}, scalars=[], gpu=True),
    K('cupyx/scipy/sparse/_dia.py', 236, 'ew',
      ('I offset_len, I offsets, I num_rows, I num_cols, T data',
       'I row, bool mask',
       """
            I offset_inds = (I)(i % offset_len);
            row = offset_inds - offsets;
            mask = (row >= 0 && row < num_rows
                    && offset_inds < num_cols
                    && data != T(0));
            """,
       'cupyx_scipy_sparse_dia_tocsc'),
      {}, dtypes={'I': 'int64', 'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupyx/scipy/sparse/_index.py
    K('cupyx/scipy/sparse/_index.py', 28, 'ew',
      ('T d, S ind, S minor',
       'raw T answer',
       'if (ind == minor) atomicAdd(&answer[0], d);',
       'cupyx_scipy_sparse_compress_getitem'),
      {}, dtypes={'S': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/_index.py', 34, 'ew',
      ('T real, T imag, S ind, S minor',
       'raw T answer_real, raw T answer_imag',
       """
    if (ind == minor) {
    atomicAdd(&answer_real[0], real);
    atomicAdd(&answer_imag[0], imag);
    }
    """,
       'cupyx_scipy_sparse_compress_getitem_complex'),
      {}, dtypes={'S': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/_index.py', 71, 'ew',
      ('I out_rows, raw I rows, raw I Ap, raw I Aj, raw T Ax, raw I Bp',
       'I Bj, T Bx',
       """
    const I row = rows[out_rows];

    // Look up starting offset
    const I starting_output_offset = Bp[out_rows];
    const I output_offset = i - starting_output_offset;
    const I starting_input_offset = Ap[row];

    Bj = Aj[starting_input_offset + output_offset];
    Bx = Ax[starting_input_offset + output_offset];
""",
       'cupyx_scipy_sparse_csr_row_index_ker'),
      {}, dtypes={'I': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/sparse/csgraph/_traversal.py
    K('cupyx/scipy/sparse/csgraph/_traversal.py', 88, 'ew',
      ('',
       'raw I labels, raw int32 count, raw int32 root_labels',
       """
    int j = i;
    while (j != labels[j]) { j = labels[j]; }
    if (j != i) {
        labels[i] = j;
    } else {
        int k = atomicAdd(&count[0], 1);
        root_labels[k] = i;
    }
    """,
       '_cupy_count_components'),
      {}, dtypes={'I': 'float64'}, scalars=[], gpu=False),
    K('cupyx/scipy/sparse/csgraph/_traversal.py', 104, 'ew',
      ('int32 n_root_labels, raw I root_labels',
       'I labels',
       """
    int cur_label = labels;
    int j_min = 0;
    int j_max = n_root_labels - 1;
    int j = (j_min + j_max) / 2;
    while (j_min < j_max) {
        if (cur_label == root_labels[j]) break;
        if (cur_label < root_labels[j]) {
            j_max = j - 1;
        } else {
            j_min = j + 1;
        }
        j = (j_min + j_max) / 2;
    }
    labels = j;
    """,
       '_cupy_adjust_labels'),
      {}, dtypes={'I': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/sparse/linalg/_eigen.py
    K('cupyx/scipy/sparse/linalg/_eigen.py', 295, 'ew',
      ('T u, raw S beta, int32 j, int32 n',
       'T v, raw T V',
       'v = u / beta[j]; V[i + (j+1) * n] = v;',
       'cupy_eigsh_normalize'),
      {}, dtypes={'S': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupyx/scipy/special/_logsoftmax.py
    K('cupyx/scipy/special/_logsoftmax.py', 6, 'red',
      ('T x1',
       'T y',
       'exp(x1)',
       'a + b',
       'y = log(a)',
       '0',
       'log_softmax'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_core/_routines_indexing.pyx
    K('cupy/_core/_routines_indexing.pyx', 588, 'ew',
      ('S a, raw T choices, int64 n_channel',
       'T y',
       """
      using idx_t = decltype(choices)::index_t;
      y = choices[i + static_cast<idx_t>(n_channel) * static_cast<idx_t>(a)];
    """,
       'cupy_choose'),
      {}, dtypes={'S': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupy/_core/_routines_indexing.pyx', 598, 'ew',
      ('S a, raw T choices, int64 n_channel_, int64 n_',
       'T y',
       """
      using idx_t = decltype(choices)::index_t;
      idx_t n_channel = static_cast<idx_t>(n_channel_);
      idx_t n = static_cast<idx_t>(n_);

      idx_t x;
      if (a < 0) {
        x = 0;
      } else if (a >= n) {
        x = n - 1;
      }
      else {
        x = static_cast<idx_t>(a);
      }
      y = choices[i + n_channel * x];
    """,
       'cupy_choose_clip'),
      {}, dtypes={'S': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupy/_core/_routines_indexing.pyx', 620, 'ew',
      ('S ind, raw T vals, int64 n_vals, int64 n',
       'raw U data, raw bool err',
       """
      using v_idx_t = decltype(vals)::index_t;

      ptrdiff_t ind_ = ind;
      if (!(-n <= ind_ && ind_ < n)) {
        err[0] = 1;
      } else {
        if (ind_ < 0) ind_ += n;
        data[ind_] = (U)(vals[i % static_cast<v_idx_t>(n_vals)]);
      }
    """,
       'cupy_put_raise'),
      {}, dtypes={'S': 'float64', 'T': 'float64', 'U': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_core/_routines_linalg.pyx
    K('cupy/_core/_routines_linalg.pyx', 790, 'ew',
      ('T base, T stride',
       'T out',
       'out = base + _ind.get()[_ind.ndim - 1] * stride',
       'cupy_mat_ptrs'),
      {'reduce_dims': False}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_core/_routines_manipulation.pyx
    K('cupy/_core/_routines_manipulation.pyx', 903, 'ew',
      ('raw P x, int64 base',
       'T y',
       """
    ptrdiff_t middle = i / base;
    ptrdiff_t top = middle / x.size();
    ptrdiff_t array_ind = middle - top * x.size();
    ptrdiff_t offset = i + (top - middle) * base;
    y = reinterpret_cast<T*>(x[array_ind])[offset];
    """,
       'cupy_concatenate_same_size'),
      {}, dtypes={'P': 'int64', 'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_core/_routines_statistics.pyx
    K('cupy/_core/_routines_statistics.pyx', 394, 'red',
      ('T x',
       'bool y',
       'isnan(x)',
       'a || b',
       'y = a',
       'false',
       '_exists_nan'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupy/_core/_routines_statistics.pyx', 520, 'ew',
      ('I n_reduce, T val',
       'T a, raw I n_reduce_each',
       """
    if (a != a) {
        a = val;
        atomicAdd(&(n_reduce_each[i / n_reduce]), -1);
    }
    """,
       'cupy_replace_nan'),
      {}, dtypes={'I': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    K('cupy/_core/_routines_statistics.pyx', 531, 'ew',
      ('I n_reduce, I n_reduce_each, raw T a',
       'T b',
       """
    if (n_reduce_each > 0) {
        int l = (n_reduce_each - 1) / 2;
        int h = (n_reduce_each    ) / 2;
        if (l == h) {
            b = a[l + n_reduce * i];
        } else {
            b = (a[l + n_reduce * i] + a[h + n_reduce * i])
                / static_cast<T>(2.0);
        }
    }
    """,
       'cupy_pickup_median'),
      {}, dtypes={'I': 'float64', 'T': 'float64'}, scalars=[], gpu=False),
    # ---- cupy/_core/_scalar.pyx
    K('cupy/_core/_scalar.pyx', 180, 'ew',
      ('T in',
       'int64 out',
       'using in_t = decltype(in); out = alignof(in_t);',
       '_cupy_get_cuda_alignment'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    # ---- cupy/_core/core.pyx
    K('cupy/_core/core.pyx', 2652, 'ew',
      ('T x',
       'T y',
       'y = x',
       'cupy_fill'),
      {}, dtypes={'T': 'float64'}, scalars=[], gpu=True),
    K('cupy/_core/core.pyx', 2654, 'ew',
      ('T x',
       'T y',
       'y = cupy_byteswap(x)',
       'cupy_byteswap'),
      {'preamble': '\n#ifdef __HIPCC_RTC__\n// HIPRTC lacks <cuda/std/bit> and <bit>; use clang builtins.\ntemplate <typename T>\n__device__ inline T cupy_byteswap(T x) {\n    if constexpr (sizeof(T) == 2) {\n        return static_cast<T>(\n            __builtin_bswap16(static_cast<unsigned short>(x)));\n    } else if constexpr (sizeof(T) == 4) {\n        return static_cast<T>(\n            __builtin_bswap32(static_cast<unsigned int>(x)));\n    } else if constexpr (sizeof(T) == 8) {\n        return static_cast<T>(\n            __builtin_bswap64(static_cast<unsigned long long>(x)));\n    } else {\n        static_assert(\n            false,\n            "cupy_byteswap: only 16, 32, and 64 bit integer types "\n            "are supported under HIPRTC");\n    }\n}\n#else\n#include <cuda/std/bit>\n#include <cuda/std/utility>\ntemplate <typename T>\n__device__ inline auto cupy_byteswap(T&& x) {\n    return cuda::std::byteswap(cuda::std::forward<T>(x));\n}\n#endif\n'}, dtypes={'T': 'int64'}, scalars=[], gpu=True),
    # ---- cupy/_sorting/search.py (its _preamble, _hip_preamble and _searchsorted_code:
    # directives inside the operation and an early exit hidden in a macro)
    K('cupy/_sorting/search.py', 337, 'ew',
      ('S x, raw T bins, int64 n_bins, bool side_is_right, '
       'bool assume_increasing',
       'int64 y',
       """
    #ifdef __HIP_DEVICE_COMPILE__
    bool is_done = false;
    #endif

    // Array is assumed to be monotonically
    // increasing unless a check is requested with the
    // `assume_increasing = False` parameter.
    // `digitize` allows increasing and decreasing arrays.
    bool inc = true;
    if (!assume_increasing && n_bins >= 2) {
        // In the case all the bins are nan the array is considered
        // to be decreasing in numpy
        inc = (bins[0] <= bins[n_bins-1])
              || (!_isnan<T>(bins[0]) && _isnan<T>(bins[n_bins-1]));
    }

    if (_isnan<S>(x)) {
        long long pos = (inc ? n_bins : 0);
        if (!side_is_right) {
            if (inc) {
                while (pos > 0 && _isnan<T>(bins[pos-1])) {
                    --pos;
                }
            } else {
                while (pos < n_bins && _isnan<T>(bins[pos])) {
                    ++pos;
                }
            }
        }
        no_thread_divergence( y = pos , true )
    }

    bool greater = false;
    if (side_is_right) {
        greater = inc && x >= bins[n_bins-1];
    } else {
        greater = (inc ? x > bins[n_bins-1] : x <= bins[n_bins-1]);
    }
    if (greater) {
        no_thread_divergence( y = n_bins , true )
    }

    long long left = 0;
    // In the case the bins is all NaNs, digitize
    // needs to place all the valid values to the right
    if (!inc) {
        while (_isnan<T>(bins[left]) && left < n_bins) {
            ++left;
        }
        if (left == n_bins) {
            no_thread_divergence( y = n_bins , true )
        }
        if (side_is_right
                && !_isnan<T>(bins[n_bins-1]) && !_isnan<S>(x)
                && bins[n_bins-1] > x) {
            no_thread_divergence( y = n_bins , true )
        }
    }

    long long right = n_bins-1;
    while (left < right) {
        long long m = left + (right - left) / 2;
        bool look_right = true;
        if (side_is_right) {
            look_right = (inc ? bins[m] <= x : bins[m] > x);
        } else {
            look_right = (inc ? bins[m] < x : bins[m] >= x);
        }
        if (look_right) {
            left = m + 1;
        } else {
            right = m;
        }
    }
    no_thread_divergence( y = right , false )
"""),
      {'name': 'cupy_searchsorted_kernel', 'preamble': """
template<typename T>
__device__ bool _isnan(T val) {
    return val != val;
}
""" + r"""
#ifdef __HIP_DEVICE_COMPILE__
  #define no_thread_divergence(do_work, to_return) \
    if (!is_done) {                                \
      do_work;                                     \
      is_done = true;                              \
    }
#else
  #define no_thread_divergence(do_work, to_return) \
    do_work;                                       \
    if (to_return) { return; }
#endif
"""},
      dtypes={'S': 'float64', 'T': 'float64'}, scalars=['n_bins', 'side_is_right', 'assume_increasing'],
      gpu=False),
]
