/* clreduce over MPI (include/clreduce_mpi.h): each rank's part on its own
 * context, the ranks' results through MPI.  Built on the public API only:
 * clr_reduce_* / clr_scan_* for the parts, clr_value_combine for the fold
 * (an MPI operation per clr_op, declared non-commutative so MPI folds the
 * ranks in rank order), clr_exact_acc for exact sums. */
#include "clreduce_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Each operation's rows (clreduce_ops.def): what runs on a rank (a mean:
 * its sum) and its flags. */
static const struct {
  clr_op runs;
  unsigned flags;
} op_rows[CLR_OP_COUNT] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   what)                                                       \
  [CLR_##id] = {CLR_##runs, flags},
#include "clreduce_ops.def"
#undef CLR_OP_ROW
};

/* ---- the fold of the ranks' values */

/* What one rank contributes: a value, or none (a rank without elements). */
typedef struct rank_value {
  int32_t has;
  int32_t op;
  clr_value v;
} rank_value;

/* inout = in op inout, in holding the earlier ranks (MPI's order for a
 * non-commutative operation). */
static void fold(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  rank_value *a = in, *b = inout;
  for (int i = 0; i < *len; i++) {
    if (!a[i].has)
      continue;
    if (b[i].has) {
      rank_value r = a[i];
      clr_value_combine((clr_op)r.op, &r.v, &b[i].v);
      b[i] = r;
    } else {
      b[i] = a[i];
    }
  }
}

/* The fold as an MPI operation over rank_value records (each record
 * carries its op: MPI's user functions take no other argument). */
typedef struct mpi_fold {
  MPI_Datatype type;
  MPI_Op op;
} mpi_fold;

static int fold_begin(mpi_fold *f) {
  if (MPI_Type_contiguous((int)sizeof(rank_value), MPI_BYTE, &f->type) !=
      MPI_SUCCESS)
    return 0;
  if (MPI_Type_commit(&f->type) != MPI_SUCCESS ||
      MPI_Op_create(fold, 0, &f->op) != MPI_SUCCESS) {
    MPI_Type_free(&f->type);
    return 0;
  }
  return 1;
}

static void fold_end(mpi_fold *f) {
  MPI_Op_free(&f->op);
  MPI_Type_free(&f->type);
}

/* ---- var and std: the ranks' values merged */

/* What one rank contributes to a variance: its elements' count and its
 * value with ddof 0 (variance and mean). */
typedef struct rank_moments {
  uint64_t n;
  clr_value v;
} rank_moments;

/* Every rank's part gathered and merged in rank order
 * (clr_value_merge_moments: the same result on every rank) into op's
 * value of the whole with ddof. */
static int merge_moments(MPI_Comm comm, const rank_moments *mine, clr_op op,
                         uint64_t ddof, clr_value *out, clr_status *st) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  rank_moments *all = malloc((size_t)size * sizeof *all);
  clr_value *values = malloc((size_t)size * sizeof *values);
  uint64_t *counts = malloc((size_t)size * sizeof *counts);
  int rc = all && values && counts
               ? MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all,
                               (int)sizeof *all, MPI_BYTE, comm)
               : MPI_ERR_NO_MEM;
  size_t k = 0;
  clr_type t = mine->v.type;
  for (int r = 0; rc == MPI_SUCCESS && r < size; r++)
    if (all[r].n) { /* ranks with elements; they agree on the type */
      values[k] = all[r].v;
      counts[k++] = all[r].n;
      t = all[r].v.type;
    }
  if (rc == MPI_SUCCESS && k == 0) { /* no element anywhere: NaN, NaN */
    values[0].type = t;
    values[0].op = op;
    counts[0] = 0;
    k = 1;
  }
  if (rc == MPI_SUCCESS)
    *st = clr_value_merge_moments(op, values, counts, k, ddof, out);
  free(all);
  free(values);
  free(counts);
  return rc;
}

/* ---- collective bookkeeping */

/* What every rank's call must share (include/clreduce_mpi.h): which call,
 * the op, the type and the options that decide the result or the MPI
 * steps (an exact sum moves other data than a fold), as a 64-bit FNV-1a
 * digest.  The tuning options (kernel, work-group size, coarse factor,
 * vector width, layout) may differ with each rank's device. */
enum { CALL_REDUCE = 1, CALL_SCAN = 2 };

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t call_digest(int call, clr_op op, clr_type type,
                            const clr_options *o) {
  int32_t f[8] = {call,
                  (int32_t)op,
                  (int32_t)type,
                  o->exact != 0,
                  o->exclusive != 0,
                  o->narrow_accumulator != 0,
                  (int32_t)o->map,
                  (int32_t)o->accumulate_in};
  uint64_t h = fnv1a(0xcbf29ce484222325ull, f, sizeof f);
  if (op < CLR_OP_COUNT && (op_rows[op].flags & CLR_OPF_MOMENTS))
    h = fnv1a(h, &o->ddof, sizeof o->ddof);
  if (o->map == CLR_MAP_EXPR && o->map_expr)
    h = fnv1a(h, o->map_expr, strlen(o->map_expr) + 1);
  return h;
}

/* An MPI call's failure: noted in the info, CLR_ERR_INVALID_ARGUMENT. */
static clr_status mpi_failed(clr_mpi_info *info, int rc) {
  if (!info->mpi_error)
    info->mpi_error = rc;
  return CLR_ERR_INVALID_ARGUMENT;
}

/* Every rank's status, in one MPI_Allreduce (MPI_MAX over three words):
 * the first failing rank's (by rank) on all, with its rank in
 * info->failed_rank; else, when the ranks' calls differ (their digests'
 * maximum and minimum differ), CLR_ERR_INVALID_ARGUMENT on all with
 * failed_rank -1.  A failing rank's word: bit 63, then INT_MAX - rank
 * (the smallest rank gives the largest), then its status. */
static clr_status agree(MPI_Comm comm, clr_status st, uint64_t digest,
                        clr_mpi_info *info) {
  int me = 0, rc;
  uint64_t mine[3], all[3];
  if ((rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS)
    return mpi_failed(info, rc);
  mine[0] = st == CLR_OK ? 0
                         : (uint64_t)1 << 63 |
                               (uint64_t)(0x7fffffff - me) << 32 | (uint32_t)st;
  mine[1] = digest;
  mine[2] = ~digest;
  if ((rc = MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, comm)) !=
      MPI_SUCCESS)
    return mpi_failed(info, rc);
  if (all[0]) {
    info->failed_rank = 0x7fffffff - (int)((all[0] >> 32) & 0x7fffffff);
    return (clr_status)(uint32_t)all[0];
  }
  if (all[1] != ~all[2]) { /* max != min: the calls differ */
    info->failed_rank = -1;
    return CLR_ERR_INVALID_ARGUMENT;
  }
  return CLR_OK;
}

/* The global n and this rank's first index. */
static clr_status place(MPI_Comm comm, size_t n_local, clr_mpi_info *info) {
  uint64_t mine = n_local, first = 0, total = 0;
  int me = 0, rc;
  if ((rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS ||
      (rc = MPI_Exscan(&mine, &first, 1, MPI_UINT64_T, MPI_SUM, comm)) !=
          MPI_SUCCESS ||
      (rc = MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, comm)) !=
          MPI_SUCCESS)
    return mpi_failed(info, rc);
  info->first = me == 0 ? 0 : first; /* Exscan leaves rank 0's undefined */
  info->n_global = total;
  return total == 0 ? CLR_ERR_INVALID_ARGUMENT : CLR_OK;
}

static void begin_info(clr_mpi_info *info) {
  memset(info, 0, sizeof *info);
  info->failed_rank = -1;
}

static size_t last_depth(clr_context *ctx) {
  clr_timing t = CLR_TIMING_INIT;
  return clr_last_timing(ctx, &t) == CLR_OK ? t.error_depth : 0;
}

/* The deepest rounding chain over the ranks, plus one fold a rank. */
static clr_status global_depth(MPI_Comm comm, size_t local, size_t *depth,
                               clr_mpi_info *info) {
  uint64_t mine = local, most = local;
  int size = 1, rc;
  if ((rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS ||
      (rc = MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, comm)) !=
          MPI_SUCCESS)
    return mpi_failed(info, rc);
  *depth = (size_t)most + (size_t)size;
  return CLR_OK;
}

/* A collective call's start: the info (the caller's or scratch) cleared,
 * the global n and this rank's first index found (its status, every
 * rank's alike), and the options (the caller's or the defaults) read as
 * the library's calls read them (clr_options_copy) into *o: *read says
 * whether they were taken (this rank's own status, for agree), and a
 * refusal's detail is left on ctx (clr_context_error) by the call that
 * refuses them alike. */
static clr_status start(clr_context *ctx, MPI_Comm comm, const clr_options *opt,
                        size_t n_local, clr_options *o, clr_status *read,
                        clr_mpi_info **info, clr_mpi_info *scratch) {
  if (!*info)
    *info = scratch;
  begin_info(*info);
  clr_options_init(o);
  *read = clr_options_copy(opt, o, NULL, 0);
  if (*read != CLR_OK && ctx)
    clr_prepare(ctx, opt, CLR_SUM, CLR_FLOAT); /* fails at once, saying why */
  return place(comm, n_local, *info);
}

/* ---- reductions */

typedef struct part_source {
  const void *host;
  cl_mem buf;
  size_t offset;
} part_source;

/* A NaN-skipping mean of floating data divides by the count of its
 * numbers: this rank's, a sum of 1 for each (mapped) value that is not
 * NaN. */
static clr_status count_numbers(clr_context *ctx, const clr_options *opt,
                                clr_type type, const part_source *src, size_t n,
                                uint64_t *count) {
  char expr[4200];
  clr_options o = *opt;
  clr_value v;
  snprintf(expr, sizeof expr, "isnan((float)(%s)) ? 0 : 1",
           opt->map == CLR_MAP_EXPR && opt->map_expr ? opt->map_expr : "x");
  o.map = CLR_MAP_EXPR;
  o.map_expr = expr;
  o.kernel = CLR_REDUCE_COARSE;
  o.accumulate_in = CLR_ULONG;
  o.narrow_accumulator = 0;
  o.exact = 0;
  clr_status st =
      src->host ? clr_reduce_host(ctx, &o, CLR_SUM, type, src->host, n, &v)
                : clr_reduce_buffer(ctx, &o, CLR_SUM, type, src->buf,
                                    src->offset, n, &v);
  *count = v.v.ul;
  return st;
}

static clr_status reduce(clr_context *ctx, MPI_Comm comm,
                         const clr_options *opt, clr_op op, clr_type type,
                         const part_source *src, size_t n_local,
                         clr_value *result, clr_mpi_info *info) {
  clr_mpi_info scratch;
  clr_options o;
  clr_status read;
  double t0 = now_ms();
  clr_status st = start(ctx, comm, opt, n_local, &o, &read, &info, &scratch);
  if (st != CLR_OK)
    return st; /* every rank alike: no element anywhere */
  if (!result || !ctx || (n_local && !src->host && !src->buf))
    st = CLR_ERR_INVALID_ARGUMENT;
  else if (read != CLR_OK)
    st = read;
  if (!((unsigned)op < CLR_OP_COUNT)) /* no row */
    st = CLR_ERR_INVALID_ARGUMENT;
  clr_op part_op = st == CLR_OK ? op_rows[op].runs : CLR_SUM;
  unsigned flags = st == CLR_OK ? op_rows[op].flags : 0;
  int exact = o.exact && part_op == CLR_SUM &&
              (type == CLR_FLOAT || type == CLR_DOUBLE);
  /* a NaN-skipping mean's divisor: the numbers, counted on every rank */
  int counts = (flags & CLR_OPF_MEAN) && (flags & CLR_OPF_SKIPS_NAN) &&
               (type == CLR_FLOAT || type == CLR_DOUBLE || type == CLR_HALF);
  /* var and std: each rank's variance with ddof 0 gives its M2 */
  int moments = (flags & CLR_OPF_MOMENTS) != 0;
  uint64_t count = n_local;
  rank_value mine;
  clr_exact_acc acc;
  memset(&mine, 0, sizeof mine);
  mine.op = (int32_t)part_op;
  if (exact && clr_exact_acc_init(&acc, type) != CLR_OK)
    st = CLR_ERR_INVALID_ARGUMENT;
  o.index_base += info->first;
  clr_options part = o; /* a variance's part: its M2 (ddof 0) */
  if (moments)
    part.ddof = 0;
  size_t depth = 0;
  if (st == CLR_OK && n_local) {
    if (exact)
      st = src->host
               ? clr_exact_add_host(ctx, &o, type, src->host, n_local, &acc)
               : clr_exact_add_buffer(ctx, &o, type, src->buf, src->offset,
                                      n_local, &acc);
    else
      st = src->host ? clr_reduce_host(ctx, &part, part_op, type, src->host,
                                       n_local, &mine.v)
                     : clr_reduce_buffer(ctx, &part, part_op, type, src->buf,
                                         src->offset, n_local, &mine.v);
    mine.has = 1;
    depth = last_depth(ctx);
    if (st == CLR_OK && counts)
      st = count_numbers(ctx, &o, type, src, n_local, &count);
  }
  double t1 = now_ms();
  info->local_ms = t1 - t0;
  st = agree(comm, st, call_digest(CALL_REDUCE, op, type, &o), info);
  if (st != CLR_OK)
    return st;
  rank_value all = mine;
  int rc;
  if (exact) {
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, acc.words, CLR_EXACT_WORDS,
                            MPI_INT64_T, MPI_SUM, comm)) != MPI_SUCCESS ||
        (rc = MPI_Allreduce(MPI_IN_PLACE, &acc.flags, 1, MPI_UINT32_T, MPI_BOR,
                            comm)) != MPI_SUCCESS)
      return mpi_failed(info, rc);
    st = clr_exact_acc_value(&acc, &all.v);
  } else if (moments) {
    rank_moments m;
    memset(&m, 0, sizeof m);
    m.v.type = clr_options_result_type(&o, op, type);
    m.v.op = op;
    if (mine.has && n_local) {
      m.n = n_local;
      m.v = mine.v;
    }
    if ((rc = merge_moments(comm, &m, op, o.ddof, &all.v, &st)) != MPI_SUCCESS)
      return mpi_failed(info, rc);
  } else {
    mpi_fold f;
    if (!fold_begin(&f))
      return CLR_ERR_OUT_OF_MEMORY;
    rc = MPI_Allreduce(&mine, &all, 1, f.type, f.op, comm);
    fold_end(&f);
    if (rc != MPI_SUCCESS)
      return mpi_failed(info, rc);
  }
  uint64_t divisor = info->n_global;
  if (counts && (rc = MPI_Allreduce(&count, &divisor, 1, MPI_UINT64_T, MPI_SUM,
                                    comm)) != MPI_SUCCESS)
    return mpi_failed(info, rc);
  if (st == CLR_OK && (flags & CLR_OPF_MEAN))
    st = clr_value_sum_to_mean(&o, type, divisor, &all.v);
  if (st == CLR_OK) {
    all.v.op = op; /* the call's (a mean's, not its sum's) */
    *result = all.v;
  }
  clr_status dst = global_depth(comm, depth, &info->error_depth, info);
  if (dst != CLR_OK)
    return dst;
  info->combine_ms = now_ms() - t1;
  info->total_ms = now_ms() - t0;
  return st;
}

CLR_API clr_status clr_mpi_reduce_host(clr_context *ctx, MPI_Comm comm,
                                       const clr_options *opt, clr_op op,
                                       clr_type type, const void *local,
                                       size_t n_local, clr_value *result,
                                       clr_mpi_info *info) {
  part_source src = {local, NULL, 0};
  return reduce(ctx, comm, opt, op, type, &src, n_local, result, info);
}

CLR_API clr_status clr_mpi_reduce_buffer(clr_context *ctx, MPI_Comm comm,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem buf,
                                         size_t offset, size_t n_local,
                                         clr_value *result,
                                         clr_mpi_info *info) {
  part_source src = {NULL, buf, offset};
  return reduce(ctx, comm, opt, op, type, &src, n_local, result, info);
}

/* ---- scans */

CLR_API clr_status clr_mpi_scan_host(clr_context *ctx, MPI_Comm comm,
                                     const clr_options *opt, clr_op op,
                                     clr_type type, const void *in, void *out,
                                     size_t n_local, clr_mpi_info *info) {
  clr_mpi_info scratch;
  clr_options o, total_opt;
  clr_status read;
  double t0 = now_ms();
  clr_status st = start(ctx, comm, opt, n_local, &o, &read, &info, &scratch);
  if (st != CLR_OK)
    return st;
  if (!ctx || (n_local && (!in || !out)) || (unsigned)type >= CLR_TYPE_COUNT)
    st = CLR_ERR_INVALID_ARGUMENT;
  else if (read != CLR_OK)
    st = read;
  clr_type out_type = st == CLR_OK ? clr_scan_output_type(&o, type) : type;
  /* Round 1: this rank's total, accumulated in the output type (integer
   * sums wrap as the scan's). */
  rank_value mine, before;
  memset(&mine, 0, sizeof mine);
  memset(&before, 0, sizeof before);
  mine.op = (int32_t)op;
  clr_options_init(&total_opt);
  total_opt.accumulate_in = out_type;
  size_t depth = 0;
  if (st == CLR_OK && n_local) {
    st = clr_reduce_host(ctx, &total_opt, op, type, in, n_local, &mine.v);
    mine.has = 1;
    depth = last_depth(ctx);
  }
  double t1 = now_ms();
  uint64_t digest = call_digest(CALL_SCAN, op, type, &o);
  st = agree(comm, st, digest, info);
  if (st != CLR_OK)
    return st;
  /* The totals of the ranks before this one, in rank order. */
  mpi_fold f;
  if (!fold_begin(&f))
    return CLR_ERR_OUT_OF_MEMORY;
  int me = 0;
  int rc = MPI_Comm_rank(comm, &me);
  if (rc == MPI_SUCCESS)
    rc = MPI_Exscan(&mine, &before, 1, f.type, f.op, comm);
  fold_end(&f);
  if (rc != MPI_SUCCESS)
    return mpi_failed(info, rc);
  if (me == 0)
    before.has = 0; /* undefined on rank 0 */
  /* This rank's carry-in: the caller's, then the ranks' before it. */
  clr_value carry;
  int has_carry = o.carry_in != NULL;
  memset(&carry, 0, sizeof carry);
  carry.type = out_type;
  if (has_carry)
    memcpy(&carry.v, o.carry_in, clr_type_size(out_type));
  if (before.has) {
    if (has_carry)
      clr_value_combine(op, &carry, &before.v);
    else
      carry = before.v;
    has_carry = 1;
  }
  double t2 = now_ms();
  /* Round 2: the part scanned from its carry. */
  o.carry_in = has_carry ? (const void *)&carry.v : NULL;
  size_t scan_depth = 0;
  if (n_local) {
    st = clr_scan_host(ctx, &o, op, type, in, out, n_local);
    scan_depth = last_depth(ctx);
  }
  double t3 = now_ms();
  st = agree(comm, st, digest, info);
  info->local_ms = (t1 - t0) + (t3 - t2);
  size_t d1 = 0, d2 = 0;
  clr_status dst = global_depth(comm, depth, &d1, info);
  if (dst == CLR_OK)
    dst = global_depth(comm, scan_depth, &d2, info);
  if (dst != CLR_OK)
    return dst;
  info->error_depth = d1 + d2;
  info->combine_ms = (t2 - t1) + (now_ms() - t3);
  info->total_ms = now_ms() - t0;
  return st;
}

/* ---- the device of a rank */

CLR_API clr_status clr_mpi_context_create(MPI_Comm comm,
                                          const clr_context_config *cfg,
                                          clr_context **out, char *detail,
                                          size_t detail_size) {
  clr_context_config c;
  char plat[16], dev[16];
  /* The config read as clr_context_create reads it; a refusal returned
   * after the collective split, which every rank takes part in. */
  clr_context_config_init(&c);
  clr_status read = clr_context_config_copy(cfg, &c, detail, detail_size);
  /* The node-local rank, on every rank alike (the split is collective:
   * a rank given its own device takes part all the same). */
  MPI_Comm node;
  int local = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) == MPI_SUCCESS) {
    if (MPI_Comm_rank(node, &local) != MPI_SUCCESS)
      local = 0;
    MPI_Comm_free(&node);
  }
  if (read != CLR_OK) {
    if (out)
      *out = NULL;
    return read;
  }
  if (!c.device || !*c.device) {
    /* The GPUs of the chosen platform, by node-local rank. */
    unsigned want_plat = 0;
    clr_status st =
        clr_platform_choose(c.platform, &want_plat, detail, detail_size);
    if (st != CLR_OK) {
      if (out)
        *out = NULL;
      return st;
    }
    size_t count = 0, gpus = 0;
    clr_device_desc list[64];
    unsigned pick = 0;
    if (clr_list_devices(list, 64, &count) != CLR_OK)
      count = 0; /* then the platform's first GPU, else its first device */
    if (count > 64)
      count = 64;
    for (size_t i = 0; i < count; i++)
      if (list[i].platform_index == want_plat && list[i].is_gpu)
        gpus++;
    for (size_t i = 0, g = 0; i < count && gpus; i++)
      if (list[i].platform_index == want_plat && list[i].is_gpu &&
          g++ == (size_t)local % gpus)
        pick = list[i].device_index;
    snprintf(plat, sizeof plat, "%u", want_plat);
    c.platform = plat;
    if (count) {
      snprintf(dev, sizeof dev, "%u", pick);
      c.device = dev;
    }
  }
  return clr_context_create(&c, out, detail, detail_size);
}
