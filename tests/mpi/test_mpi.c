/* clreduce over MPI (include/clreduce_mpi.h), run under mpirun with 1 to 4
 * ranks (tests/mpi/meson.build): one global array split over the ranks,
 * evenly and unevenly (rank 0 with no element), reduced and scanned
 * through clr_mpi_*, every result checked on every rank against the CPU's
 * reference of the whole array (each rank builds the whole array: it is
 * small).  Exact sums must be the CPU's exact sum to the bit, so the same
 * for every number of ranks. */
#include "exact_sum.h"
#include "reference.h"
#include "scan_reference.h"
#include "test_util.h"

#include "clreduce_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* Rank k's part of n: even (ranks first n % size one more), or by
 * weights 0, 1, 2, .. (rank 0 none) with whatever is left to the last. */
static void part_of(size_t n, int uneven, size_t *first, size_t *count) {
  size_t P = (size_t)size, k = (size_t)rank;
  if (!uneven || P == 1) {
    *first = k * (n / P) + (k < n % P ? k : n % P);
    *count = n / P + (k < n % P);
    return;
  }
  size_t T = P * (P - 1) / 2, lo = k * (k - 1) / 2, hi = (k + 1) * k / 2;
  *first = n / T * lo + n % T * lo / T;
  *count = n / T * hi + n % T * hi / T - *first;
}

static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                 CLR_UINT,  CLR_LONG,   CLR_ULONG};
/* Every row of the ops table (include/clreduce_ops.def): its flags. */
static const unsigned op_flags[CLR_OP_COUNT] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   what)                                                       \
  [CLR_##id] = flags,
#include "clreduce_ops.def"
#undef CLR_OP_ROW
};
static const size_t sizes[] = {1, 5, 4097, 100003};

static void fill(clr_op op, clr_type t, size_t n, void *x) {
  tu_rng r = {tu_seed(11, (uint64_t)op, (uint64_t)t, n)};
  for (size_t i = 0; i < n; i++) {
    if (tu_is_float(t))
      tu_store_f(t, x, i,
                 op == CLR_PROD ? 1.0 + (tu_unit(&r) - 0.5) / 512.0
                                : ldexp(2.0 * tu_unit(&r) - 1.0,
                                        (int)tu_below(&r, 40) - 20));
    else if (op_flags[op] & CLR_OPF_LOGICAL)
      tu_store_i(t, x, i, (op == CLR_AND) != (i == n - 1 - n / 3));
    else if (op == CLR_PROD)
      tu_store_i(t, x, i, tu_below(&r, 16) ? 1 : 3);
    else
      tu_store_i(t, x, i,
                 (int64_t)tu_below(&r, 2001) -
                     (t == CLR_UINT || t == CLR_ULONG ? 0 : 1000));
  }
}

/* Every op on n elements of type t, this rank's part [first, +count). */
static void reductions(clr_context *ctx, int uneven, clr_type t, size_t n,
                       size_t first, size_t count) {
  size_t es = clr_type_size(t);
  void *x = tu_xmalloc(n * es);
  for (int oi = 0; oi < CLR_OP_COUNT; oi++) {
    clr_op op = (clr_op)oi;
    if (clr_op_supports(op, t) != CLR_OK)
      continue;
    fill(op, t, n, x);
    /* NaNs where an operation skips them: the first element, one in 7 */
    if ((op_flags[op] & CLR_OPF_SKIPS_NAN) && tu_is_float(t))
      for (size_t i = 0; i < n; i += 7)
        tu_store_f(t, x, i, NAN);
    clr_value got;
    clr_mpi_info info;
    memset(&got, 0, sizeof got);
    clr_status st =
        clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, NULL, op, t,
                            (char *)x + first * es, count, &got, &info);
    char what[160];
    snprintf(what, sizeof what, "rank %d/%d %s of %s n=%zu%s", rank, size,
             clr_op_name(op), clr_type_name(t), n, uneven ? " uneven" : "");
    if (!TU_CHECK(st == CLR_OK, "%s: %s", what, clr_status_name(st)))
      continue;
    TU_CHECK(info.n_global == n && info.first == first &&
                 info.failed_rank == -1,
             "%s: info n %llu first %llu", what,
             (unsigned long long)info.n_global, (unsigned long long)info.first);
    clr_type rt = clr_options_result_type(NULL, op, t);
    TU_CHECK(got.type == rt && got.op == op, "%s: the value's type %d op %d",
             what, (int)got.type, (int)got.op);
    clr_reference ref;
    clr_check chk;
    clr_ref_reduce_to(op, t, rt, x, n, &ref);
    clr_ref_check(&ref, &got, info.error_depth, &chk);
    char gb[64], wb[64];
    TU_CHECK(chk.ok, "%s: got %s, want %s (error %g, bound %g)", what,
             tu_fmt(&got, gb, sizeof gb), tu_fmt(&ref.value, wb, sizeof wb),
             chk.error, chk.bound);
  }
  /* Exact sums: the CPU's exact sum, bit for bit, on every rank. */
  if (t == CLR_FLOAT || t == CLR_DOUBLE) {
    fill(CLR_SUM, t, n, x);
    clr_options o;
    clr_options_init(&o);
    o.exact = 1;
    clr_value got, want;
    clr_status st =
        clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, &o, CLR_SUM, t,
                            (char *)x + first * es, count, &got, NULL);
    clr_ref_exact_sum(t, x, n, &want);
    char gb[64], wb[64];
    TU_CHECK(st == CLR_OK && clr_ref_exact_equal(&got, &want),
             "rank %d/%d exact %s sum n=%zu: %s, got %s, want %s", rank, size,
             clr_type_name(t), n, clr_status_name(st),
             tu_fmt(&got, gb, sizeof gb), tu_fmt(&want, wb, sizeof wb));
  }
  free(x);
}

/* A buffer of this rank's part, reduced through clr_mpi_reduce_buffer. */
static void buffers(clr_context *ctx) {
  size_t n = 100003, first, count;
  part_of(n, 1, &first, &count);
  int32_t *x = tu_xmalloc(n * sizeof *x);
  int64_t want = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (int32_t)(i % 997) - 400;
    want += x[i];
  }
  /* The part from element `off` of the buffer: an offset. */
  size_t off = first >= 2 ? 2 : 0, len = off + count ? off + count : 1;
  cl_int err;
  cl_mem b = clCreateBuffer(clr_context_cl_context(ctx),
                            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            len * sizeof *x, x + first - off, &err);
  clr_value v;
  clr_status st =
      err == CL_SUCCESS
          ? clr_mpi_reduce_buffer(ctx, MPI_COMM_WORLD, NULL, CLR_SUM, CLR_INT,
                                  b, off, count, &v, NULL)
          : CLR_ERR_OPENCL;
  TU_CHECK(st == CLR_OK && v.v.l == want,
           "rank %d/%d buffer sum: %s %lld, want %lld", rank, size,
           clr_status_name(st), (long long)v.v.l, (long long)want);
  if (err == CL_SUCCESS)
    clReleaseMemObject(b);
  free(x);
}

/* Every scan of n elements of type t, inclusive and exclusive. */
static void scans(clr_context *ctx, int uneven, clr_type t, size_t n,
                  size_t first, size_t count) {
  size_t es = clr_type_size(t);
  void *x = tu_xmalloc(n * es), *y = tu_xmalloc(n * es);
  for (int oi = 0; oi < CLR_OP_COUNT; oi++)
    for (int excl = 0; excl < 2; excl++) {
      clr_op op = (clr_op)oi;
      if (!(op_flags[op] & CLR_OPF_SCAN) || clr_op_supports(op, t) != CLR_OK)
        continue;
      fill(op, t, n, x);
      clr_options o;
      clr_options_init(&o);
      o.exclusive = excl;
      clr_mpi_info info;
      clr_status st = clr_mpi_scan_host(ctx, MPI_COMM_WORLD, &o, op, t,
                                        (char *)x + first * es,
                                        (char *)y + first * es, count, &info);
      char what[160];
      snprintf(what, sizeof what, "rank %d/%d %s%s scan of %s n=%zu%s", rank,
               size, excl ? "exclusive " : "", clr_op_name(op),
               clr_type_name(t), n, uneven ? " uneven" : "");
      if (!TU_CHECK(st == CLR_OK, "%s: %s", what, clr_status_name(st)))
        continue;
      /* Every rank's part to every rank, then the whole checked. */
      int *counts = tu_xmalloc((size_t)size * sizeof *counts);
      int *displs = tu_xmalloc((size_t)size * sizeof *displs);
      int mine = (int)(count * es);
      MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
      for (int i = 0, at = 0; i < size; at += counts[i], i++)
        displs[i] = at;
      MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, counts, displs,
                     MPI_BYTE, MPI_COMM_WORLD);
      clr_scan_check chk;
      clr_ref_scan_check_to(op, t, t, excl, x, y, n, info.error_depth, 0, &chk);
      TU_CHECK(chk.ok, "%s: %zu elements wrong, the worst at %zu", what,
               chk.n_bad, chk.worst_index);
      free(counts);
      free(displs);
    }
  free(x);
  free(y);
}

/* Every type and size, split evenly or not. */
static void types_and_sizes(clr_context *ctx, int uneven) {
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      size_t first, count;
      if (!tu_type_available(types[ti]))
        continue;
      part_of(sizes[si], uneven, &first, &count);
      reductions(ctx, uneven, types[ti], sizes[si], first, count);
      scans(ctx, uneven, types[ti], sizes[si], first, count);
    }
}

/* A failure on one rank is every rank's, naming the rank. */
static void failures(clr_context *ctx) {
  float f[4] = {1, 2, 3, 4};
  clr_value v;
  clr_mpi_info info;
  clr_options o;
  clr_options_init(&o);
  /* The last rank asks for a work-group size its device refuses. */
  if (rank == size - 1)
    o.wg_size = (size_t)1 << 40;
  clr_status st = clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, &o, CLR_SUM,
                                      CLR_FLOAT, f, 4, &v, &info);
  TU_CHECK(st != CLR_OK && info.failed_rank == size - 1,
           "rank %d/%d: one rank's failure: %s, failed rank %d", rank, size,
           clr_status_name(st), info.failed_rank);
  /* No element anywhere. */
  st = clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, NULL, CLR_SUM, CLR_FLOAT, f, 0,
                           &v, &info);
  TU_EXPECT_STATUS(st, CLR_ERR_INVALID_ARGUMENT, "no element on any rank");
}

/* Ranks whose calls differ (another op, an exact sum on one rank, a scan
 * against a reduction) get CLR_ERR_INVALID_ARGUMENT on every rank, with no
 * failed rank, instead of a hang or a truncated message; the next call
 * alike on every rank runs. */
static void mismatches(clr_context *ctx) {
  float f[4] = {1, 2, 3, 4}, out[4];
  clr_value v;
  clr_mpi_info info;
  clr_options o;
  clr_status st;
  int last = rank == size - 1;
  if (size < 2)
    return;
  for (int c = 0; c < 3; c++) {
    clr_options_init(&o);
    o.exact = c == 1 && last;
    memset(&info, 0, sizeof info);
    if (c == 2 && last)
      st = clr_mpi_scan_host(ctx, MPI_COMM_WORLD, &o, CLR_SUM, CLR_FLOAT, f,
                             out, 4, &info);
    else
      st = clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, &o,
                               c == 0 && last ? CLR_MAX : CLR_SUM, CLR_FLOAT, f,
                               4, &v, &info);
    static const char *const what[] = {"another op", "an exact sum", "a scan"};
    TU_CHECK(st == CLR_ERR_INVALID_ARGUMENT && info.failed_rank == -1 &&
                 info.mpi_error == MPI_SUCCESS,
             "rank %d/%d: %s on the last rank: %s, failed rank %d", rank, size,
             what[c], clr_status_name(st), info.failed_rank);
  }
  st = clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, NULL, CLR_SUM, CLR_FLOAT, f, 4,
                           &v, &info);
  TU_CHECK(st == CLR_OK && v.v.f == 10.0f * (float)size,
           "rank %d/%d: the call after them: %s", rank, size,
           clr_status_name(st));
}

/* Options of a struct_size the library does not take (include/clreduce.h,
 * "sized structs"), on the last rank only: every rank returns its status
 * (CLR_ERR_VERSION, or CLR_ERR_INVALID_ARGUMENT for 0) with that rank as
 * the failed one, and the last rank's context says why; a config alike
 * fails clr_mpi_context_create on that rank, after the collective split
 * (no hang); a shorter struct (an older header's: no index_base) is taken
 * with the default for what it lacks. */
static void sized_structs(clr_context *ctx) {
  float f[4] = {1, 2, 3, 4}, out[4];
  clr_value v;
  clr_mpi_info info;
  int last = rank == size - 1;
  static const uint32_t sizes_bad[] = {0, (uint32_t)sizeof(clr_options) + 8};
  for (int b = 0; b < 2; b++) {
    clr_status want = b ? CLR_ERR_VERSION : CLR_ERR_INVALID_ARGUMENT;
    const char *needle = b ? "more than" : "clr_options_init";
    for (int scan = 0; scan < 2; scan++) {
      clr_options o;
      clr_options_init(&o);
      if (last)
        o.struct_size = sizes_bad[b];
      clr_status st =
          scan ? clr_mpi_scan_host(ctx, MPI_COMM_WORLD, &o, CLR_SUM, CLR_FLOAT,
                                   f, out, 4, &info)
               : clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, &o, CLR_SUM,
                                     CLR_FLOAT, f, 4, &v, &info);
      TU_CHECK(st == want && info.failed_rank == size - 1 &&
                   (!last || strstr(clr_context_error(ctx), needle)),
               "rank %d/%d: %s, struct_size %u on the last rank: %s, failed "
               "rank %d (%s)",
               rank, size, scan ? "scan" : "reduce", (unsigned)sizes_bad[b],
               clr_status_name(st), info.failed_rank,
               last ? clr_context_error(ctx) : "");
    }
  }
  clr_options o;
  clr_options_init(&o);
  o.index_base = 1000;
  o.struct_size = (uint32_t)offsetof(clr_options, index_base);
  clr_status st = clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, &o, CLR_ARGMAX,
                                      CLR_FLOAT, f, 4, &v, &info);
  TU_CHECK(st == CLR_OK && v.index == 3,
           "rank %d/%d: options without index_base: argmax at %llu (want 3: "
           "the default base)",
           rank, size, (unsigned long long)v.index);
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  if (last)
    cfg.struct_size = (uint32_t)sizeof cfg + 8;
  clr_context *c2 = NULL;
  char detail[256] = "";
  st = clr_mpi_context_create(MPI_COMM_WORLD, &cfg, &c2, detail, sizeof detail);
  TU_CHECK(last ? st == CLR_ERR_VERSION && !c2 && strstr(detail, "more than")
                : st == CLR_OK,
           "rank %d/%d: a config of struct_size %u: %s %s", rank, size,
           (unsigned)cfg.struct_size, clr_status_name(st), detail);
  clr_context_release(c2);
}

/* A device named on some ranks only: the context's creation is collective
 * on every rank all the same (a rank given a device once skipped its
 * step), and the call runs. */
static void own_devices(void) {
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  clr_context *ctx = NULL;
  char detail[256] = "";
  cfg.device = rank % 2 ? "0" : NULL;
  clr_status st =
      clr_mpi_context_create(MPI_COMM_WORLD, &cfg, &ctx, detail, sizeof detail);
  TU_CHECK(st == CLR_OK, "rank %d/%d: a context on device %s: %s %s", rank,
           size, cfg.device ? cfg.device : "(by local rank)",
           clr_status_name(st), detail);
  int32_t x[3] = {rank, 1, 2};
  clr_value v;
  if (st == CLR_OK)
    st = clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, NULL, CLR_SUM, CLR_INT, x, 3,
                             &v, NULL);
  int all = 0;
  MPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  TU_CHECK(all != CLR_OK || v.v.l == (int64_t)size * (size - 1) / 2 + 3 * size,
           "rank %d/%d: the sum over contexts on named and picked devices: "
           "%lld",
           rank, size, (long long)v.v.l);
  clr_context_release(ctx);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  clr_context *ctx = NULL;
  char detail[256] = "";
  if (clr_mpi_context_create(MPI_COMM_WORLD, NULL, &ctx, detail,
                             sizeof detail) != CLR_OK)
    tu_die("rank %d: clr_mpi_context_create: %s", rank, detail);
  clr_context_device(ctx, &tu_device);
  for (int uneven = 0; uneven < 2; uneven++)
    types_and_sizes(ctx, uneven);
  buffers(ctx);
  failures(ctx);
  mismatches(ctx);
  sized_structs(ctx);
  clr_context_release(ctx);
  own_devices();
  /* Every rank's verdict: rank 0 prints the totals. */
  unsigned long mine[2] = {(unsigned long)tu_passed, (unsigned long)tu_failed},
                all[2];
  MPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  int rc = tu_failed ? 1 : 0, worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_mpi (%d ranks): %lu passed, %lu failed\n", size, all[0],
           all[1]);
  MPI_Finalize();
  return worst;
}
