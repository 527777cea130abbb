/* ReductionKernel: what differs from the other generated kinds.
 *
 * A call binds its arguments (kernel_args.h), broadcasts the inputs,
 * normalises the axes, splits the loop into kept and reduced parts (each
 * merged) and forms a uk_red_key. One program per key holds the one kernel
 * the call's shapes need (red_plan.h, uk_red_plan_in.group); the strategy and
 * geometry are chosen per call from the merged shapes. The shared stages (kernel_pipeline.h,
 * launch_frame.h) compile, cache and launch it.
 *
 * The device code combines with warp shuffles of its own
 * (templates/ukern/reduction.cuh) and includes no CUB or libcu++ header, so
 * a program costs NVRTC about what an elementwise one does (docs/PERF.md).
 *
 * Split launches combine their partials in the last block of each column
 * (red_plan.h): the partials and counters live in a scratch buffer per
 * stream, kept by the kernel object and grown on demand, so a call
 * allocates nothing and launches once. Counters are zeroed when allocated
 * and reset by the kernels. Tagged partials (red_group's one-word ones,
 * ukern/reduction.cuh: zero is "not written") have a buffer of their own,
 * zeroed when allocated and cleared by the kernels; plain partials (any
 * bits) never share it, so no stale word reads as written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/defcheck.h"
#include "codegen/dtype.h"
#include "codegen/red_emit.h"
#include "codegen/red_plan.h"
#include "codegen/shape.h"
#include "runtime/binary.h"
#include "runtime/cubin_params.h"
#include "runtime/device.h"
#include "runtime/kernel_common.h"
#include "runtime/launch_frame.h"
#include "runtime/occupancy.h"
#include "runtime/cluster_launch.h"

_Static_assert(UK_RED_NKERNELS <= UK__SPEC_FUNCTIONS, "a reduction module's kernels fit uk__spec.fn");

/* Split scratch of one stream: counters (zero between launches) and
 * partials, [0] plain words and [1] tagged words (zero between launches). */
#define RED_SCRATCH_STREAMS 8
typedef struct red_scratch {
  int used, device;
  void *stream;
  uint64_t count, partial[2];
  int64_t ncount, partial_bytes[2];
} red_scratch;

struct uk_reduction {
  uk__kernel base; /* first: the shared stages see the object through it */
  char *map_expr, *reduce_expr, *post_map_expr, *identity, *reduce_type, *preamble;
  uk_red_kernel k;
  pthread_mutex_t scratch_lock;
  red_scratch scratch[RED_SCRATCH_STREAMS];
  int force_by, force_vec, force_split, force_swz, force_group; /* UKERN_RED_TUNE's plan knobs (uk__red_force) */
  int forced;                                       /* any of them set: uk__red_force runs */
  /* The reduce type's dtype where one names it, for the partial's size before a program is loaded
     (partial_guess): the parameter whose placeholder it is (-1: none), else a dtype whose C type it
     spells (UK_DTYPE_COUNT_: neither, a struct or other C text) */
  int rt_param;
  uk_dtype rt_dtype;
};

/* Everything a call decides before touching the device. */
typedef struct prep {
  uk__call c;
  uk_red_key key;
  uk_red_loops loops;
  int64_t itemsize[UK_MAX_ARRAY_OPERANDS]; /* per loop input */
  int64_t max_itemsize;                    /* the largest of them */
  int aligned;                             /* every loop input's base is 16-byte aligned */
  uk_red_plan_in in;                       /* what the strategy depends on, but the device's part (choose) */
  int sms;                                 /* SMs the key was made for (key_blocks) */
  int device;                              /* the device the key was made for (key_blocks) */
} prep;

/* UK_CALL_STACK_BYTES bounds a call: prep, argument buffer, launch frame,
 * the output strides' pointers and the unmerged loop, and 4 KiB of other locals. */
_Static_assert(sizeof(prep) + UK__PARAM_BYTES_MAX + sizeof(uk__frame) + sizeof(int64_t *) * UK_MAX_PARAMS +
                   sizeof(uk_loop) + 4096 <=
               UK_CALL_STACK_BYTES,
               "UK_CALL_STACK_BYTES");

/* The reduction kind: what the shared stages (kernel_pipeline.h) call back. */

static const uk_reduction *self(const uk__kernel *kd) { return (const uk_reduction *)kd; }

/* The kernel a key's program holds (its group's first id: red_plan.h). */
static int key_kernel(const uk_red_key *key) {
  return key->group == UK_RED_GROUP_COLS ? UK_RED_COLS : key->group == UK_RED_GROUP_PACK ? UK_RED_PACK : UK_RED_T1;
}

/* That kernel's symbol (the kernel's name and its suffix) into buf; 0 when it does not fit. */
static int key_symbol(const uk__kernel *kd, const uk_red_key *key, char *buf, size_t size) {
  return snprintf(buf, size, "%s%s", kd->name, uk__red_kernel_suffix(key_kernel(key))) < (int)size;
}

static void kind_describe(const uk__kernel *kd, const void *kv, char *buf, size_t size) {
  const uk_red_key *key = kv;
  size_t n = uk__kernel_describe(kd, "reduction ", &key->p, buf, size);
  n += (size_t)snprintf(buf + n, size - n, "; kept ndim %d, reduced ndim %d; kernel %s%s%s", key->nd_k, key->nd_r,
                        kd->name, uk__red_kernel_suffix(key_kernel(key)), key->block_cub ? ", cub::BlockReduce" : "");
  if (n < size) snprintf(buf + n, size - n, key->width ? ", %d threads an output)" : ")", key->width);
}

static uk_status kind_emit(const uk__kernel *kd, const void *key, uk_strbuf *src, uk_plan *plan) {
  return uk__red_emit(&self(kd)->k, key, src, plan);
}

/* -minimal unless the texts may need what it leaves out (NVRTC's implicit
 * texture, device-runtime and driver-API declarations: ~8 ms of front end
 * per reduction program on a 2-core CPU). Reductions take no textures. */
static void kind_compile(const uk__kernel *kd, const void *key, uk__kind_compile *out) {
  static const char *const minimal[] = {"-minimal", NULL};
  /* CUB's headers are the whole front-end cost of a CUB program: NVRTC's
   * automatic precompiled header keeps them for the process's next one.
   * They name the runtime's cudaError_t: never -minimal. */
  static const char *const cub[] = {"-pch", NULL};
  if (((const uk_red_key *)key)->block_cub) out->extra = cub;
  else if (!self(kd)->k.needs_runtime) out->extra = minimal;
}

/* The symbol's size is the partial's plain words' (a group program's 4:
 * tagged words, uk_reduction_call): no copy, no synchronisation. The
 * program's kernel's resident blocks per SM size the planner's waves
 * (struct reduce types take more registers: fewer blocks fit): from what
 * the cubin states (occupancy.h), with no driver call; the driver's query
 * (~0.2 ms on a process's first reduction) only where the image cannot
 * say (PTX, an architecture whose rules occupancy.c does not hold). */
static uk_status kind_loaded(const uk__kernel *kd, uk__spec *e, const uk__binary *bin) {
  CUdeviceptr g = 0;
  uk_status st = uk__cu_check(uk__cu_module_global(&g, &e->aux, e->module, "_uk_partial_size"), "cuModuleGetGlobal");
  if (st != UK_OK) return st;
  const uk_red_key *key = (const uk_red_key *)e->key;
  const int id = key_kernel(key);
  const char *suffix = uk__red_kernel_suffix(id);
  char sym[256];
  int n = -1;
  if (bin && !bin->is_ptx && key_symbol(kd, key, sym, sizeof sym))
    n = uk__occupancy_of_cubin(e->device, bin->image, bin->image_size, sym, UK_RED_BLOCK);
  CUfunction fn;
  if (n < 0) {
    if (uk__spec_function(kd, e, id, suffix, &fn) != UK_OK)
      uk__error_clear(); /* an unknown occupancy is no error: the planner assumes a full SM */
    else if (uk__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, UK_RED_BLOCK, 0) != CUDA_SUCCESS)
      n = 0;
  }
  e->occupancy = n > 0 ? n : 0;
  return UK_OK;
}

static uk_status prepare(const uk__kernel *kd, const uk_arg *in, int nin, const uk_array *out, int nout,
                         const void *launch_v, void *prep_v);

static int kind_offline_next(const uk__kernel *kd, void *prep_v, const uk__binary *bin, int step);

static const uk__kind red_kind = {"a reduction", sizeof(uk_red_key), kind_emit,    kind_describe,    kind_compile,
                                  kind_loaded,   prepare,            sizeof(prep), kind_offline_next};

/* ------------------------------------------------------------------------ */
/* Creating                                                                  */
/* ------------------------------------------------------------------------ */

void uk_reduction_destroy(uk_reduction *k) {
  if (!k) return;
  for (int j = 0; j < RED_SCRATCH_STREAMS; j++) {
    red_scratch *sc = &k->scratch[j];
    int pushed = 0;
    if (!sc->used || uk__device_enter(sc->device, &pushed) != UK_OK) continue;
    /* The stream may be gone: free in the default stream's order. */
    uk__context_free(k->base.ctx, sc->count, NULL);
    uk__context_free(k->base.ctx, sc->partial[0], NULL);
    uk__context_free(k->base.ctx, sc->partial[1], NULL);
    uk__device_leave(pushed);
  }
  uk__kernel_free(&k->base);
  free(k->map_expr);
  free(k->reduce_expr);
  free(k->post_map_expr);
  free(k->identity);
  free(k->reduce_type);
  free(k->preamble);
  pthread_mutex_destroy(&k->scratch_lock);
  free(k);
}

/* k->rt_param and k->rt_dtype from the reduce type's text (its C spelling: a placeholder letter, a
 * dtype's C type, or other C text). */
static void reduce_type_dtype(uk_reduction *k) {
  const char *rt = k->reduce_type;
  k->rt_param = -1;
  k->rt_dtype = UK_DTYPE_COUNT_;
  for (int p = 0; p < k->base.in.count + k->base.out.count; p++) {
    const uk_param *prm = uk__kernel_param(&k->base, p);
    if (prm->is_placeholder && rt[0] == prm->placeholder && !rt[1]) {
      k->rt_param = p;
      return;
    }
  }
  for (int t = 0; t < UK_DTYPE_COUNT_; t++)
    if (!strcmp(uk__dtype_table[t].ctype, rt)) {
      k->rt_dtype = (uk_dtype)t;
      return;
    }
}

/* NULL, empty or only white space. */
static int blank(const char *s) {
  while (s && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
  return !s || !*s;
}

uk_status uk_reduction_create(uk_context *ctx, const uk_reduction_spec *spec, uk_reduction **out) {
  uk__error_clear();
  if (!ctx || !spec || !out) return uk__errorf(UK_ERR_INVALID, "uk_reduction_create: NULL argument");
  const char *missing = !spec->in_params       ? "in_params"
                        : !spec->out_params    ? "out_params"
                        : !spec->map_expr      ? "map_expr"
                        : !spec->reduce_expr   ? "reduce_expr"
                        : !spec->post_map_expr ? "post_map_expr"
                                               : NULL;
  if (missing) return uk__errorf(UK_ERR_INVALID, "uk_reduction_spec: %s is NULL (hint: it is required)", missing);
  if (spec->block_reduce != UK_BLOCK_REDUCE_UKERN && spec->block_reduce != UK_BLOCK_REDUCE_CUB)
    return uk__errorf(UK_ERR_INVALID,
                      "uk_reduction_spec: block_reduce is %d (hint: UK_BLOCK_REDUCE_UKERN (0) or "
                      "UK_BLOCK_REDUCE_CUB (1))",
                      spec->block_reduce);
  uk_reduction *k = calloc(1, sizeof *k);
  if (!k) return uk__errorf(UK_ERR_NOMEM, "out of memory creating a reduction");
  pthread_mutex_init(&k->scratch_lock, NULL);
  uk_status st = uk__kernel_init(&k->base, &red_kind, ctx, "uk_reduction_spec", spec->in_params, spec->out_params,
                                 spec->name ? spec->name : "reduce_kernel", spec->options, spec->num_options);
  if (st != UK_OK ||
      (st = uk__defcheck_fields("map_expr", spec->map_expr, "reduce_expr", spec->reduce_expr, "post_map_expr",
                                spec->post_map_expr, "identity", spec->identity, "reduce_type", spec->reduce_type,
                                (const char *)NULL)) != UK_OK)
    goto out;
  for (int j = 0; j < k->base.out.count; j++)
    if (k->base.out.items[j].is_raw) {
      st = uk__error_at(UK_ERR_SYNTAX, "out_params", spec->out_params, k->base.out.items[j].pos, NULL,
                        "reduction outputs cannot be raw");
      goto out;
    }
  int failed = 0;
  k->map_expr = uk__strdup_opt(spec->map_expr, &failed);
  k->reduce_expr = uk__strdup_opt(spec->reduce_expr, &failed);
  k->post_map_expr = uk__strdup_opt(spec->post_map_expr, &failed);
  /* An empty (or blank) identity is no identity, as '' is in CuPy. */
  k->identity = blank(spec->identity) ? NULL : uk__strdup_opt(spec->identity, &failed);
  k->preamble = uk__strdup_opt(spec->preamble, &failed);
  if (!blank(spec->reduce_type)) { /* a dtype name is its C type (float32: float) */
    const char *ct = uk__dtype_ctype_for(spec->reduce_type);
    k->reduce_type = uk__strdup_opt(ct ? ct : spec->reduce_type, &failed);
  } else {
    const uk_param *o = &k->base.out.items[0];
    char letter[2] = {o->placeholder, 0};
    k->reduce_type = uk__strdup_opt(o->is_placeholder ? letter : uk__dtype_info(o->dtype)->ctype, &failed);
  }
  if (failed) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory creating a reduction");
    goto out;
  }
  k->k = (uk_red_kernel){k->base.name, k->map_expr,  k->reduce_expr, k->post_map_expr, k->identity, k->reduce_type,
                         k->preamble,  &k->base.in, &k->base.out,   0, 0, 0, 0, 0, 0, 0, 0, {0}};
  k->k.block_cub = spec->block_reduce == UK_BLOCK_REDUCE_CUB;
  const char *tune = getenv("UKERN_RED_TUNE");
  uk__red_tune_parse(tune, k->k.tune, (int)sizeof k->k.tune);
  k->force_by = uk__red_tune_value(tune, "by", 0);
  k->force_vec = uk__red_tune_value(tune, "cv", -1);
  k->force_split = uk__red_tune_value(tune, "sp", 0);
  k->force_swz = uk__red_tune_value(tune, "swz", -1);
  k->force_group = uk__red_tune_value(tune, "g", 0);
  k->forced = k->force_by > 0 || k->force_vec >= 0 || k->force_split > 0 || k->force_swz >= 0 || k->force_group > 0;
  reduce_type_dtype(k);
  uk__red_scan(&k->k);
  *out = k;
  return UK_OK;
out:
  uk_reduction_destroy(k);
  return st;
}

uk_status uk_reduction_param_counts(const uk_reduction *k, int *nin, int *nout) {
  return uk__kernel_param_counts("uk_reduction_param_counts", (const uk__kernel *)k, nin, nout);
}

/* Precompile, with what the compile gave. */
uk_status uk_reduction_compile_info(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                    const uk_launch *launch, uk_compile_info *info) {
  return uk__kernel_offline("uk_reduction_compile_info", (uk__kernel *)k, in, nin, out, nout, launch,
                            UK__OFFLINE_INFO, info);
}

/* ------------------------------------------------------------------------ */
/* Preparing a call (no device work)                                         */
/* ------------------------------------------------------------------------ */

static void choose(const prep *pr, int sms, int per_sm, size_t partial_bytes, int argpair, uk_red_strategy *s);

/* The width a program of plan s is compiled for (uk_red_key.width): its threads an output, or 0 (the
 * program reads them from _uk_by) for a block an output of UK_RED_BLOCK threads, where the constant
 * was measured both ways (H200, 26 kept-axis sums: 9 faster by up to 0.64 us, 5 slower by up to 0.67,
 * one spilling at 32 registers); a wider block's (the key's block) was 3.4% faster. */
static int plan_width(const prep *pr, const uk_red_strategy *s) {
  const int w = uk__red_threads_per_output(s);
  return w == UK_RED_BLOCK && !pr->key.block ? 0 : w;
}

/* The bytes of the program's partial (its symbol _uk_partial_size: ukern/reduction.cuh's padded words
 * of comb<K>::type, the reduce type, or with no identity the reduce type and its has-a-value flag)
 * where the reduce type is a dtype, else 4: the planner weighs wide partials (a float64 sum's 8
 * bytes changed the width of 46 of 510 shapes of bench/tools/plan_describe.c against 4). */
static int partial_guess(const uk_reduction *k, const uk_red_key *key) {
  const uk_dtype_info *d = uk__dtype_info(k->rt_param >= 0 ? (uk_dtype)key->p.dtype[k->rt_param] : k->rt_dtype);
  if (!d) return 4;
  size_t bytes = d->size;
  if (!k->identity) { /* red_opt: the value, then a flag as wide as its alignment (at most 8), padded */
    const size_t flag = d->align < 8 ? d->align : 8;
    bytes = (d->size + flag + d->align - 1) / d->align * d->align;
  }
  return (int)((bytes + 3) / 4 * 4);
}

/* red_group's rows a trip (uk_red_key.rows): where a group program's width compiled in times the
 * vector is the whole row (one reduced axis), each thread loads one vector a row, and a trip of
 * UK_RED_ROWS_TRIP rows keeps that many in flight between its group combines. Only with outputs
 * for that many trips of a full wave of resident threads (the planner's default blocks an SM):
 * the program takes them only where its grid-stride loop has the trips (red_group.cuh), and
 * fewer outputs keep the program of one. */
static void key_rows(prep *pr) {
  uk_red_key *key = &pr->key;
  const int64_t vec = pr->in.vec;
  const int64_t wave = (int64_t)pr->sms * pr->in.per_sm * UK_RED_BLOCK / (key->width ? key->width : 1);
  key->rows = (uint8_t)(key->group == UK_RED_GROUP_G && key->width && !key->block && !key->cluster &&
                                key->nd_r == 1 && vec > 1 && pr->in.vec_ok && pr->in.nred == key->width * vec &&
                                pr->in.nout >= UK_RED_ROWS_TRIP * wave
                            ? UK_RED_ROWS_TRIP
                            : 0);
}

/* The key's width: the plan's at the planner's defaults (a full SM of resident blocks) with the
 * partial's size where the reduce type tells it (an argmax pair's at least 16 bytes), which the
 * loaded program's own occupancy and partial rarely change (settle_width). Red_group's and red_cols'
 * index arithmetic and group combine then fold (H200, every kept-axis float32 sum of the sweep up to
 * 64 MiB: median time 0.982, rows of 512 over a warp 0.6 us faster; docs/PERF.md "Session 34").
 * None for one output (its width is the block's: _UK_RED_WHOLE), narrow programs (rows of 32 over 8
 * threads were 0.4 us slower so), packed rows (no width), or UKERN_RED_TUNE's plans (forced after
 * the choice). A program a width: a kernel called over rows of several lengths may compile one for
 * each. */
static void key_width(const uk_reduction *k, prep *pr) {
  uk_red_key *key = &pr->key;
  key->width = 0;
  key->rows = 0;
  if (k->forced || key->narrow || key->nd_k == 0 || key->group == UK_RED_GROUP_PACK) return;
  uk_red_strategy s;
  choose(pr, pr->sms, 0, (size_t)partial_guess(k, key), k->k.argpair, &s);
  key->width = (uint16_t)plan_width(pr, &s);
  key_rows(pr);
}

/* The key's block, split pass, cluster, trips and width, for `device` (the
 * block-rows plan depends on its SMs, a wide plan's cluster on its
 * clusters). */
static void key_blocks(const uk_reduction *k, prep *pr, int device) {
  uk_red_key *key = &pr->key;
  pr->device = device;
  pr->sms = pr->in.sms = uk__device_sm_count(device);
  /* the device's clusters only where a cluster could take the call (two more attribute reads on a
     device's first such call) */
  const uk_red_plan_in *in = &pr->in;
  pr->in.cluster_max = uk__red_wide_cluster(in->group, in->nout, in->nred, in->vec_ok, UK_RED_CLUSTER_MAX, NULL)
                           ? uk__cluster_max(device)
                           : 0;
  key->cluster =
      (uint8_t)(uk__red_wide_cluster(in->group, in->nout, in->nred, in->vec_ok, in->cluster_max, NULL) > 0);
  /* a plan of a block an output, its block's size (vec_ok follows the call's alignment: an
     unaligned call has its own program) */
  key->block = (uint16_t)uk__red_unsplit_block(&pr->in);
  /* plans the planner never splits (splits() in red_plan.c): no split pass in the program
     (packed rows never split: no such pass; UKERN_RED_TUNE's sp may split a column plan) */
  key->unsplit = (uint8_t)(key->block || (key->group != UK_RED_GROUP_PACK && uk__red_tiny(pr->in.nout, pr->in.nred) &&
                                          k->force_split <= 1));
  /* red_group's 8 vectors a trip: one loop input along one reduced axis, rows long enough for a
     thread to hold 8 vectors of a row (H200, session 15: sums of 64 and 256 MiB 1-8% faster over
     rows of 256 to 2^24 elements). Several reduced axes spilled (each vector's place unravelled),
     several inputs keep their registers and bounds, and short rows (one vector a thread: 4-element
     rows 10% slower at 1 GiB) keep the occupancy of a 32-register program; a tiny one its compile.
     An unsplit block an output loads 4 a trip: rows of 6144-16384 in blocks of 512 were 0.0-0.2 us
     faster so (session 23) */
  key->trip8 = (uint8_t)(key->group == UK_RED_GROUP_G && pr->loops.nin == 1 && pr->loops.red.ndim <= 1 &&
                         pr->in.nred >= UK_RED_TRIP8_ROWS && !key->unsplit && !key->narrow);
  key_width(k, pr);
}

/* The loop of the non-raw array inputs, broadcast; *raw_param: the first
 * raw array input (-1: none). */
static uk_status loop_of(const uk_reduction *k, prep *pr, uk_loop *L, int *raw_param) {
  const uk__kernel *kd = &k->base;
  uk_operand_view views[UK_MAX_ARRAY_OPERANDS];
  int nviews = 0;
  *raw_param = -1;
  pr->max_itemsize = 0;
  for (int p = 0; p < kd->in.count; p++) {
    const uk_array *a = pr->c.arr[p];
    const uk_param *prm = uk__kernel_param(kd, p);
    if (!a) continue;
    if (prm->is_raw) {
      if (*raw_param < 0) *raw_param = p;
      continue;
    }
    if (nviews == UK_MAX_ARRAY_OPERANDS)
      return uk__errorf(UK_ERR_INVALID, "%s: more than %d non-raw array inputs (UK_MAX_ARRAY_OPERANDS)", kd->name,
                        UK_MAX_ARRAY_OPERANDS);
    int v = nviews++;
    pr->itemsize[v] = (int64_t)uk__dtype_size(a->dtype);
    if (pr->itemsize[v] > pr->max_itemsize) pr->max_itemsize = pr->itemsize[v];
    views[v] = (uk_operand_view){prm->name, a->ndim, a->shape, a->strides, pr->itemsize[v]};
  }
  if (nviews == 0)
    return uk__errorf(UK_ERR_SHAPE,
                      "%s: a reduction needs at least one non-raw array input (its shape is the shape reduced)",
                      kd->name);
  return uk__call_broadcast(kd, nviews, views, L);
}

static uk_status prepare(const uk__kernel *kd, const uk_arg *in, int nin, const uk_array *out, int nout,
                         const void *launch_v, void *prep_v) {
  const uk_reduction *k = self(kd);
  const uk_launch *l = launch_v;
  prep *pr = prep_v;
  const char *name = kd->name;
  uk_status st = uk__launch_check(name, l, UK__TAKES_AXES);
  if (st != UK_OK) return st;
  /* Before binding, whose texture rules are elementwise ones. */
  for (int p = 0; in && p < nin && p < kd->in.count; p++)
    if (in[p].kind == UK_ARG_TEXTURE)
      return uk__errorf(UK_ERR_INVALID,
                        "%s: input '%s' is a texture object, but reductions do not take textures (pass the array "
                        "itself; texture objects are for elementwise kernels)",
                        name, uk__kernel_param(kd, p)->name);
  if ((st = uk__call_bind(kd, in, nin, out, nout, &pr->c)) != UK_OK) return st;
  uk_loop L;
  int raw_param;
  if ((st = loop_of(k, pr, &L, &raw_param)) != UK_OK) return st;
  uint8_t reduced[UK_MAX_NDIM];
  if ((st = uk__red_axes(name, L.ndim, l, reduced)) != UK_OK) return st;
  if (raw_param >= 0) {
    int lead = 1, seen_kept = 0;
    for (int d = 0; d < L.ndim; d++) {
      if (!reduced[d]) seen_kept = 1;
      else if (seen_kept) lead = 0;
    }
    if (!lead)
      return uk__errorf(UK_ERR_SHAPE,
                        "%s: raw input '%s' needs the reduced axes to be the leading ones (axes 0..m-1 of the "
                        "input), so that _J numbers them",
                        name, uk__kernel_param(kd, raw_param)->name);
  }
  int keepdims = l && l->keepdims, out_ndim;
  int64_t out_shape[UK_MAX_NDIM];
  uk__red_result_shape(L.ndim, L.shape, reduced, keepdims, &out_ndim, out_shape);
  if ((st = uk__call_outputs(kd, &pr->c, out, out_ndim, out_shape, "result", 0)) != UK_OK) return st;
  const int64_t *ostrides[UK_MAX_PARAMS];
  for (int j = 0; j < nout; j++) ostrides[j] = pr->c.outv[j].strides;
  uk__red_split(&L, reduced, keepdims, nout, ostrides, &pr->loops);
  if (pr->loops.nred == 0 && pr->loops.nout > 0 && !k->identity)
    return uk__errorf(UK_ERR_SHAPE, "zero-size array to reduction operation %s which has no identity", name);

  uk_red_key *key = &pr->key;
  memset(key, 0, sizeof *key);
  if ((st = uk__call_key_params(kd, &pr->c, in, k->k.raw_view_mask, "map_expr", &key->p)) != UK_OK) return st;
  pr->aligned = 1;
  for (int p = 0; p < nin; p++)
    if (pr->c.arr[p] && !uk__kernel_param(kd, p)->is_raw && pr->c.arr[p]->data % 16) pr->aligned = 0;
  key->nd_k = (uint8_t)pr->loops.kept.ndim;
  key->nd_r = (uint8_t)pr->loops.red.ndim;
  key->index64 = (uint8_t)pr->loops.index64;
  /* Once per call: the program's group (the key's) and the planner's input. */
  int vec = uk__red_items_vec(&k->k, pr->max_itemsize); /* uk__red_key_vec(key): the loop inputs are the key's */
  uk__red_plan_in(&pr->loops, pr->itemsize, pr->aligned, vec, 1, &pr->in);
  key->group = (uint8_t)pr->in.group;
  key->deep = (uint8_t)uk__red_deep(key->group, pr->loops.nin, vec, pr->loops.nred);
  pr->in.deep = key->deep;
  key->block_cub = (uint8_t)k->k.block_cub;
  /* short rows: the planner may give 2 or 4 threads a row, which the program must combine (the loops
     decide, not the call's alignment, so one program serves every call of the key) */
  key->narrow = (uint8_t)(key->group == UK_RED_GROUP_G && uk__red_narrow_lanes(pr->in.nred, pr->in.elem_bytes, vec));
  pr->in.narrow = key->narrow;
  key_blocks(k, pr, pr->c.device >= 0 ? pr->c.device : kd->ctx->opts.device);
  /* bytes the loop inputs hold: the load policy (multiplied, not divided: two divisions cost more
     cycles than the rest of this; a product past int64 is past the bound too) */
  int64_t bytes;
  key->plain_loads = (uint8_t)(__builtin_mul_overflow(pr->loops.nout, pr->loops.nred, &bytes) ||
                               __builtin_mul_overflow(bytes, pr->in.elem_bytes, &bytes) ||
                               bytes > UK_RED_STREAM_MAX_BYTES);
  pr->c.key = key;
  pr->c.empty = pr->loops.nout == 0;
  return UK_OK;
}

/* The compile a call would make, into the caches, without running it. */
uk_status uk_reduction_precompile(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                  const uk_launch *launch) {
  return uk__kernel_offline("uk_reduction_precompile", (uk__kernel *)k, in, nin, out, nout, launch,
                            UK__OFFLINE_PRECOMPILE, NULL);
}

/* The generated source of a call, without running it. */
uk_status uk_reduction_source(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                              const uk_launch *launch, char **source) {
  return uk__kernel_offline("uk_reduction_source", (uk__kernel *)k, in, nin, out, nout, launch, UK__OFFLINE_SOURCE,
                            source);
}

/* ------------------------------------------------------------------------ */
/* Launching                                                                 */
/* ------------------------------------------------------------------------ */

static void pack(const uk__spec *e, const prep *pr, const uk_red_strategy *s, const uint64_t *ptr,
                 uint64_t partial, uint64_t count, unsigned char *buf) {
  const uk_red_loops *R = &pr->loops;
  for (int j = 0; j < e->plan.nslots; j++) {
    const uk_slot *sl = &e->plan.slots[j];
    int64_t v = 0;
    /* Most of a reduction's slots are its own (loop strides and extents, the plan's numbers):
       their switch first, the shared ones (pointers, scalars) in its default, one jump a slot */
    switch (sl->kind) {
    case UK_RED_SLOT_KSTRIDE: v = R->kept.strides[sl->op][sl->dim]; break;
    case UK_RED_SLOT_RSTRIDE: v = R->red.strides[sl->op][sl->dim]; break;
    case UK_RED_SLOT_KSHAPE: v = R->kept.shape[sl->dim]; break;
    case UK_RED_SLOT_RSHAPE: v = R->red.shape[sl->dim]; break;
    case UK_RED_SLOT_NOUT: v = R->nout; break;
    case UK_RED_SLOT_NRED: v = R->nred; break;
    case UK_RED_SLOT_CHUNK: v = s->chunk; break;
    case UK_RED_SLOT_NSPLIT: v = s->nsplit; break;
    case UK_RED_SLOT_INSIZE: v = R->nout * R->nred; break;
    case UK_RED_SLOT_VEC: v = s->vec; break;
    case UK_RED_SLOT_BY: v = uk__red_threads_per_output(s); break;
    case UK_RED_SLOT_PARTIAL: v = (int64_t)partial; break;
    case UK_RED_SLOT_COUNT: v = (int64_t)count; break;
    default: uk__call_pack(sl, &pr->c, ptr, buf); continue;
    }
    memcpy(buf + sl->offset, &v, 8);
  }
}

/* Counters and partials for a split launch on `stream`: the stream's
 * scratch, grown when short; with every slot taken by other streams, new
 * buffers for this call alone (*temp set: free them after the launch).
 * The stream's own scratch comes back with k->scratch_lock held (*held
 * set): the caller unlocks once its launch is queued. Otherwise another
 * thread on the same stream could grow it in between, and its free (stream
 * ordered) would come before this call's launch, which would then use
 * freed memory. tag: tagged partials (their own buffer, zeroed when
 * allocated). */
static uk_status scratch(uk_reduction *k, int device, void *stream, int64_t ncount, int64_t pbytes, int tag,
                         uint64_t *count, uint64_t *partial, int *temp, int *held) {
  uk_status st = UK_OK;
  pthread_mutex_lock(&k->scratch_lock);
  red_scratch *sc = NULL, tmp;
  /* Under capture: this call's own buffers, allocated and freed in the graph
   * (kept scratch would be graph memory used outside it, or freed by it). */
  int keep = !uk__cu_stream_capturing(stream);
  for (int j = 0; j < RED_SCRATCH_STREAMS && !sc && keep; j++)
    if (k->scratch[j].used && k->scratch[j].stream == stream && k->scratch[j].device == device) sc = &k->scratch[j];
  for (int j = 0; j < RED_SCRATCH_STREAMS && !sc && keep; j++)
    if (!k->scratch[j].used) {
      sc = &k->scratch[j];
      memset(sc, 0, sizeof *sc);
      sc->used = 1;
      sc->device = device;
      sc->stream = stream;
    }
  *temp = !sc;
  if (!sc) {
    memset(&tmp, 0, sizeof tmp);
    sc = &tmp;
  }
  if (sc->ncount < ncount) {
    /* Stream order: earlier launches on this stream are done with it. */
    uk__context_free(k->base.ctx, sc->count, stream);
    sc->count = 0;
    sc->ncount = 0;
    int64_t n = ncount < 1024 ? 1024 : ncount;
    if ((st = uk__context_alloc(k->base.ctx, (size_t)n * 4, stream, &sc->count)) != UK_OK ||
        (st = uk__cu_check(uk__cu.cuMemsetD32Async(sc->count, 0, (size_t)n, (CUstream)stream),
                           "cuMemsetD32Async")) != UK_OK)
      goto out;
    sc->ncount = n;
  }
  if (sc->partial_bytes[tag] < pbytes) {
    uk__context_free(k->base.ctx, sc->partial[tag], stream);
    sc->partial[tag] = 0;
    sc->partial_bytes[tag] = 0;
    int64_t n = pbytes < 65536 ? 65536 : pbytes;
    n = (n + 7) & ~(int64_t)7;
    /* tagged: zeros, every word's tag "not written" (each launch's last
     * blocks clear the words they took: ukern/reduction.cuh) */
    if ((st = uk__context_alloc(k->base.ctx, (size_t)n, stream, &sc->partial[tag])) != UK_OK ||
        (sc->partial[tag] % 16 &&
         (st = uk__errorf(UK_ERR_INVALID,
                          "%s: the context's allocator returned 0x%llx, not aligned to 16 bytes; a split "
                          "reduction's partials move as words of up to 16 bytes (hint: return pointers "
                          "aligned as cuMemAlloc's, to 256 bytes)",
                          k->base.name, (unsigned long long)sc->partial[tag])) != UK_OK) ||
        (tag && (st = uk__cu_check(uk__cu.cuMemsetD32Async(sc->partial[tag], 0, (size_t)n / 4, (CUstream)stream),
                                   "cuMemsetD32Async")) != UK_OK))
      goto out;
    sc->partial_bytes[tag] = n;
  }
  *count = sc->count;
  *partial = sc->partial[tag];
out:
  if (st != UK_OK && *temp) {
    uk__context_free(k->base.ctx, sc->count, stream);
    uk__context_free(k->base.ctx, sc->partial[tag], stream);
  }
  *held = st == UK_OK && !*temp;
  if (!*held) pthread_mutex_unlock(&k->scratch_lock);
  return st;
}

/* The last plans this thread chose: uk__red_choose_in is pure in its
 * input, and a repeated call then skips the cost model's candidates (a few
 * thousand instructions). Per thread: no lock on the hot path. An unused
 * entry is zeros, which no input is (sms >= 1). */
#define RED_MEMO 4
typedef struct red_memo {
  uk_red_plan_in in;
  uk_red_strategy s;
} red_memo;
static _Thread_local red_memo memo[RED_MEMO];
static _Thread_local int memo_next, memo_last;

/* The entry last used first: a loop of one call hits it at the first compare. */
static const red_memo *memo_find(const uk_red_plan_in *in) {
  if (memcmp(&memo[memo_last].in, in, sizeof *in) == 0) return &memo[memo_last];
  for (int j = 0; j < RED_MEMO; j++)
    if (memcmp(&memo[j].in, in, sizeof *in) == 0) {
      memo_last = j;
      return &memo[j];
    }
  return NULL;
}

static void choose(const prep *pr, int sms, int per_sm, size_t partial_bytes, int argpair, uk_red_strategy *s) {
  uk_red_plan_in in = pr->in; /* the loops' part, from prepare */
  in.sms = sms > 0 ? sms : 1;
  if (per_sm > 0) in.per_sm = per_sm;
  /* the model charges its words past the first; a struct's beyond 16 words add nothing measured */
  in.partial_bytes = partial_bytes <= 64 ? (int32_t)partial_bytes : 64;
  /* An argmax pair of a 32-bit index (8 bytes) is planned as the 16-byte pair its rules were measured with:
     each combine is the full pair compare either way (a sum's plans for it: fused argmax of 1024 x 1024 over
     the last axis 5.8 -> 7.1 us, H200, docs/PERF.md "Session 32") */
  if (argpair && in.partial_bytes < 16) in.partial_bytes = 16;
  /* ... and its column programs as the 16-byte pair's, 4 blocks an SM (56 registers; the 8-byte pair's 38 give 6,
     whose plan for 1024 x 1024 over axis 0 took 9.6 us against 8.1) */
  if (argpair && pr->key.group == UK_RED_GROUP_COLS && in.per_sm > 4) in.per_sm = 4;
  const red_memo *hit = memo_find(&in);
  if (hit) {
    *s = hit->s;
    return;
  }
  uk__red_choose_in(&in, s);
  memo_last = memo_next;
  memo_next = (memo_next + 1) % RED_MEMO;
  memo[memo_last].in = in;
  memo[memo_last].s = *s;
}

/* The call's plan for a program of `occupancy` resident blocks an SM and a partial of `partial` bytes
 * (a loaded program's, uk__spec): the planner's, then UKERN_RED_TUNE's knobs. */
static void plan_of(const uk_reduction *k, const prep *pr, int occupancy, size_t partial, uk_red_strategy *s) {
  choose(pr, pr->sms, occupancy, partial, k->k.argpair, s);
  if (k->forced)
    uk__red_force(&pr->in, k->force_by, k->force_vec, k->force_split, k->force_swz, k->force_group, s);
}

/* Whether plan s (of the program of pr's key, the step-th of the call) leaves another program to
 * take: 1 with pr's key made that one, the program of the width s chose (its occupancy or partial
 * size changed the plan), or after that the program that reads the width (0). */
static int width_moves(prep *pr, const uk_red_strategy *s, int step) {
  if (!pr->key.width) return 0; /* the program reads the width: any plan */
  const int w = plan_width(pr, s);
  if (w == pr->key.width) return 0;
  pr->key.width = (uint16_t)(step == 0 ? w : 0);
  key_rows(pr);
  return 1;
}

/* The program whose width (key_width) is the plan's for it, into *e and its plan into *s: the
 * key's, else as width_moves says. Every step is pure in the call's key and programs: a call
 * always lands on the same one, and precompile compiles the same (kind_offline_next). */
static uk_status settle_width(uk_reduction *k, prep *pr, int device, uk__spec **e, uk_red_strategy *s) {
  for (int step = 0;; step++) {
    plan_of(k, pr, (*e)->occupancy, (*e)->aux, s);
    if (!width_moves(pr, s, step)) return UK_OK;
    uk_status st = uk__kernel_specialise(&k->base, &pr->key, device, e);
    if (st != UK_OK) return st;
  }
}

/* Precompile's settle_width: the compiled program's resident blocks and partial size read from its
 * cubin (the compile's architecture's limits, no device), planned as a call plans for the loaded
 * program. A PTX image (an architecture past NVRTC's) or an unknown occupancy: no next key (the call
 * compiles it if its plan says so). */
static int kind_offline_next(const uk__kernel *kd, void *prep_v, const uk__binary *bin, int step) {
  prep *pr = prep_v;
  char sym[256];
  uint64_t partial = 0;
  if (!pr->key.width || !bin || bin->is_ptx || !key_symbol(kd, &pr->key, sym, sizeof sym)) return 0;
  const int occupancy = uk__occupancy_of_cubin_cc(bin->arch / 10, bin->arch % 10, bin->image, bin->image_size, sym,
                                                  UK_RED_BLOCK);
  if (occupancy <= 0 || uk__cubin_object_size(bin->image, bin->image_size, "_uk_partial_size", &partial) != UK_OK) {
    uk__error_clear();
    return 0;
  }
  uk_red_strategy s;
  plan_of(self(kd), pr, occupancy, (size_t)partial, &s);
  return width_moves(pr, &s, step);
}

/* Launches plan s of program e; *refused: a launch over a thread-block
 * cluster the device refused (no error set: the caller retries without
 * one). */
static uk_status launch_plan(uk_reduction *k, prep *pr, uk__frame *f, uk__spec *e, const uk_red_strategy *sp,
                             int *refused) {
  const uk_red_loops *R = &pr->loops;
  int temp_scratch = 0, scratch_held = 0;
  uint64_t partial = 0, count = 0;
  uk_status st = UK_OK;
  const uk_red_strategy s = *sp;
  *refused = 0;
  if (uk__red_kernel_group(s.kernel) != pr->key.group || !s.cluster != !pr->key.cluster ||
      (pr->key.width && uk__red_threads_per_output(&s) != pr->key.width))
    return uk__errorf(UK_ERR_INTERNAL, "%s: the strategy's kernel is not the program's", k->base.name);
  if (s.grid_x > INT32_MAX || (s.swz && s.grid_x * s.nsplit > INT32_MAX))
    return uk__errorf(UK_ERR_INVALID, "%s: %lld outputs are too many for one launch", k->base.name,
                      (long long)R->nout);
  CUfunction fn;
  if ((st = uk__spec_function(&k->base, e, s.kernel, uk__red_kernel_suffix(s.kernel), &fn)) != UK_OK) return st;
  /* red_group's partials of one 32-bit word are tagged 64-bit words (ukern/reduction.cuh) */
  const int tag = pr->key.group == UK_RED_GROUP_G && e->aux == 4;
  if (s.nsplit > 1 && !s.cluster &&
      (st = scratch(k, f->device, f->stream, s.grid_x, uk__red_scratch_bytes(&s, tag ? 8 : (int64_t)e->aux), tag,
                    &count, &partial, &temp_scratch, &scratch_held)) != UK_OK)
    return st;
  _Alignas(16) unsigned char buf[UK__PARAM_BYTES_MAX];
  pack(e, pr, &s, f->ptr, partial, count, buf);
  if (s.cluster) { /* one output: a grid of one cluster */
    if (uk__cluster_launch(f, fn, s.cluster, uk__red_block_threads(&s), s.cluster, 0, 0, buf, e->plan.bytes) !=
        CUDA_SUCCESS) {
      uk__cluster_failed(f->device, s.cluster, 0);
      *refused = 1;
    }
  } else {
    st = uk__frame_launch(f, fn, s.swz ? s.grid_x * s.nsplit : s.grid_x, s.swz ? 1 : s.nsplit,
                          uk__red_block_threads(&s), 0, buf, e->plan.bytes);
  }
  if (scratch_held) pthread_mutex_unlock(&k->scratch_lock); /* the launch is queued: growth may free it now */
  if (temp_scratch) {
    uk__context_free(k->base.ctx, count, f->stream);
    uk__context_free(k->base.ctx, partial, f->stream);
  }
  return st;
}

uk_status uk_reduction_call(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                            const uk_launch *launch) {
  uk__error_clear();
  if (!k) return uk__errorf(UK_ERR_INVALID, "uk_reduction_call: kernel is NULL");
  prep pr;
  uk_status st = prepare(&k->base, in, nin, out, nout, launch, &pr);
  if (st != UK_OK) return st;
  uk__frame f;
  uk__spec *e = NULL;
  const uk_red_loops *R = &pr.loops;
  uk_red_strategy s;
  int refused = 0;
  if ((st = uk__frame_enter(&f, &k->base, pr.c.device, launch ? launch->stream : NULL)) != UK_OK) goto out;
  if (R->nout > 0) {
    pr.key.device = f.device;
    if (f.device != pr.device) key_blocks(k, &pr, f.device); /* prepare guessed another device */
    if ((st = uk__kernel_specialise(&k->base, &pr.key, f.device, &e)) != UK_OK ||
        (st = settle_width(k, &pr, f.device, &e, &s)) != UK_OK)
      goto out;
  }
  if ((st = uk__frame_outputs(&f, &pr.c, nout, R->nout)) != UK_OK) goto out;
  if (!e) goto out; /* no output elements: nothing to run */
  if ((st = uk__frame_operands(&f, &k->base, &pr.c)) != UK_OK) goto out;
  if ((st = launch_plan(k, &pr, &f, e, &s, &refused)) == UK_OK && refused) {
    /* the device refused the cluster and takes none from now on (uk__cluster_failed):
       this call's program without it */
    key_blocks(k, &pr, f.device);
    if ((st = uk__kernel_specialise(&k->base, &pr.key, f.device, &e)) == UK_OK &&
        (st = settle_width(k, &pr, f.device, &e, &s)) == UK_OK &&
        (st = launch_plan(k, &pr, &f, e, &s, &refused)) == UK_OK && refused)
      st = uk__errorf(UK_ERR_CUDA, "%s: the device refused a launch over a thread-block cluster twice",
                      k->base.name);
  }
out:
  return uk__frame_leave(&f, &pr.c, st, out, nout);
}

/* The NVRTC options of a call's compile, without compiling. */
uk_status uk_reduction_nvrtc_options(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                     const uk_launch *launch, char ***options) {
  return uk__kernel_offline("uk_reduction_nvrtc_options", (uk__kernel *)k, in, nin, out, nout, launch,
                            UK__OFFLINE_OPTIONS, options);
}
