/* A kernel over the row kernel's cluster reduction alone
 * (templates/ukern/fusion_row_cluster.cuh): `rows` rows over the clusters
 * of the grid (each cluster striding over many, so both partial slots and
 * both phases of their mbarriers come round many times), two reduction
 * levels a row:
 *   a: the sum over the cluster's blocks and threads of row * 7 + rank *
 *      1000 + t (_uk_row_reduce, then _uk_cluster_reduce);
 *   q: a two-word value {s, m} combined in rank order by s = s * 3 + s',
 *      m = max(m, m') from each block's {rank + 1, row + rank} (the order
 *      shows in s).
 * Thread 0 of each block writes out[3 * (row * C + rank) + {0, 1, 2}] = a,
 * q.s, q.m (as an int). */
#ifndef UK_TEST_CLUSTER_REDUCE_KERNEL_H
#define UK_TEST_CLUSTER_REDUCE_KERNEL_H

static const char cluster_reduce_src[] =
    "#include <ukern/fusion_row_cluster.cuh>\n"
    "struct cr_add {\n"
    "  __device__ int operator()(const int &a, const int &b) const { return a + b; }\n"
    "};\n"
    "struct cr_pair {\n"
    "  int s, m;\n"
    "};\n"
    "struct cr_fold {\n"
    "  __device__ cr_pair operator()(const cr_pair &a, const cr_pair &b) const {\n"
    "    cr_pair r;\n"
    "    r.s = a.s * 3 + b.s;\n"
    "    r.m = a.m > b.m ? a.m : b.m;\n"
    "    return r;\n"
    "  }\n"
    "};\n"
    "extern \"C\" __global__ void cluster_reduce(int rows, int *out) {\n"
    "  __shared__ _uk_part<int> sm1;\n"
    "  __shared__ _uk_clpart<int> cs1;\n"
    "  __shared__ _uk_clpart<cr_pair> cs2;\n"
    "  _uk_cl_init(cs1);\n"
    "  _uk_cl_init(cs2);\n"
    "  _uk_cl_init_done();\n"
    "  const unsigned rank = _uk_cl_rank(), c = _uk_cl_size();\n"
    "  unsigned it = 0;\n"
    "  for (int row = (int)_uk_cl_id(); row < rows; row += (int)_uk_cl_count(), it++) {\n"
    "    int a = _uk_row_reduce(row * 7 + (int)rank * 1000 + (int)threadIdx.x, cr_add(), 0, sm1, (int)blockDim.x);\n"
    "    a = _uk_cluster_reduce(a, cr_add(), cs1, it, true);\n"
    "    cr_pair p;\n"
    "    p.s = (int)rank + 1;\n"
    "    p.m = row + (int)rank;\n"
    "    __syncthreads();\n"
    "    const cr_pair q = _uk_cluster_reduce(p, cr_fold(), cs2, it, false);\n"
    "    if (threadIdx.x == 0) {\n"
    "      int *o = out + 3 * ((long long)row * c + rank);\n"
    "      o[0] = a;\n"
    "      o[1] = q.s;\n"
    "      o[2] = q.m;\n"
    "    }\n"
    "  }\n"
    "}\n";

#define CLUSTER_REDUCE_SIGNATURE "int rows, int* out"

#endif
