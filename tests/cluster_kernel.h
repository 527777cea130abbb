/* A kernel that uses thread-block clusters (sm_90): each block stores its
 * slice of x in shared memory, and after a cluster barrier reads the slice
 * of the next block of its cluster through distributed shared memory:
 *   out[b * B + t] = 2 * x[peer(b) * B + t] + rank(b),
 *   rank(b) = b % C, peer(b) = b - rank(b) + (rank(b) + 1) % C
 * for a 1-D cluster of C blocks of B threads (without a cluster C = 1).
 * ranks[b] = the block's rank as the hardware reports it. */
#ifndef UK_TEST_CLUSTER_KERNEL_H
#define UK_TEST_CLUSTER_KERNEL_H

static const char cluster_kernel_src[] =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "extern \"C\" __global__ void cluster_ranks(const int* x, int* out, unsigned* ranks) {\n"
    "  __shared__ int s[128];\n"
    "  cg::cluster_group cl = cg::this_cluster();\n"
    "  unsigned rank = cl.block_rank();\n"
    "  unsigned n = cl.num_blocks();\n"
    "  unsigned t = threadIdx.x;\n"
    "  s[t] = x[blockIdx.x * blockDim.x + t];\n"
    "  cl.sync();\n"
    "  int* peer = cl.map_shared_rank(s, (rank + 1) % n);\n"
    "  out[blockIdx.x * blockDim.x + t] = 2 * peer[t] + (int)rank;\n"
    "  if (t == 0) ranks[blockIdx.x] = rank;\n"
    "  cl.sync(); /* the peer's shared memory lives until every read is done */\n"
    "}\n";

#define CLUSTER_KERNEL_SIGNATURE "const int* x, int* out, unsigned* ranks"

#endif
