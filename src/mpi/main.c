/* clreduce-mpi: clreduce over the ranks of an MPI job.
 *
 *   mpirun -np 4 clreduce-mpi --n=1e9 [clreduce's options]
 *
 * Each rank takes its part of a global --n (generated in blocks, so the
 * array is the same whatever the number of ranks, or its slice of
 * --input), reduces or scans it on its own device (clr_mpi_context_create:
 * the GPU of its node-local rank) and the ranks combine through MPI
 * (include/clreduce_mpi.h).  Rank 0 checks the result against the CPU
 * reference of the whole array (which it builds: verification needs the
 * whole array in rank 0's memory; --no-verify skips it) and prints the
 * report.  --split=even (the default) gives the ranks equal parts;
 * --split=uneven gives rank r a part in proportion to r (rank 0 none).
 * Exit statuses as clreduce's; every rank exits with rank 0's. */
#include "args.h"
#include "cli.h"
#include "datagen.h"
#include "exact_sum.h"
#include "fileio.h"
#include "reference.h"
#include "scan_reference.h"

#include "clreduce_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mpi_run {
  const cli_args *a;
  int rank, size, uneven;
  size_t n, n_local, first, esize;
  clr_context *ctx;
  void *local, *out;
  char desc[256];
  double *total_ms, *combine_ms, *local_ms;
  clr_value result;
  clr_mpi_info info;
} mpi_run;

/* This rank's part of n: equal parts (the first n % size ranks one
 * more), or in proportion to the rank (rank 0 none). */
static void split(mpi_run *r) {
  size_t n = r->n, P = (size_t)r->size, k = (size_t)r->rank;
  if (!r->uneven || P == 1) {
    size_t base = n / P, extra = n % P;
    r->n_local = base + (k < extra);
    r->first = k * base + (k < extra ? k : extra);
    return;
  }
  /* weights 0, 1, .., P-1: rank k's part ends at n T(k+1) / T(P), T(m) =
   * m(m-1)/2, computed as q T(k+1) + rem T(k+1) / T(P) with n = q T(P) +
   * rem, exact while T(P)^2 < 2^64 (P below 2^16). */
  uint64_t T = (uint64_t)P * (P - 1) / 2, q = n / T, rem = n % T;
  uint64_t lo = (uint64_t)k * (k - 1) / 2, hi = (uint64_t)(k + 1) * k / 2;
  size_t b = (size_t)(q * lo + rem * lo / T),
         e = (size_t)(q * hi + rem * hi / T);
  r->first = b;
  r->n_local = e - b;
}

/* This rank's elements: its slice of --input, or generated. */
static int load_part(mpi_run *r) {
  const cli_args *a = r->a;
  r->local = malloc(r->n_local ? r->n_local * r->esize : 1);
  if (!r->local) {
    cli_error("rank %d: out of host memory for %zu elements", r->rank,
              r->n_local);
    return CLI_EXIT_RUNTIME;
  }
  if (!a->input)
    return clr_gen_data_slice(a->op, a->type, a->seed, r->first, r->local,
                              r->n_local, r->desc, sizeof r->desc)
               ? 0
               : CLI_EXIT_RUNTIME;
  FILE *f = fopen(a->input, "rb");
  if (!f || fseeko(f, (off_t)(r->first * r->esize), SEEK_SET) != 0 ||
      fread(r->local, r->esize, r->n_local, f) != r->n_local) {
    cli_error("rank %d: cannot read elements %zu..%zu of '%s'", r->rank,
              r->first, r->first + r->n_local, a->input);
    if (f)
      fclose(f);
    return CLI_EXIT_USAGE;
  }
  fclose(f);
  snprintf(r->desc, sizeof r->desc, "%zu %s from file '%s'", r->n,
           clr_type_name(a->type), a->input);
  return 0;
}

/* The whole array on rank 0, for the reference. */
static void *whole_array(const mpi_run *r) {
  const cli_args *a = r->a;
  void *all = malloc(r->n * r->esize);
  char desc[256];
  if (!all)
    return NULL;
  if (!a->input) {
    if (!clr_gen_data_slice(a->op, a->type, a->seed, 0, all, r->n, desc,
                            sizeof desc)) {
      free(all);
      return NULL;
    }
    return all;
  }
  size_t got = 0;
  void *data = NULL;
  if (cli_read_input_n(a->input, r->esize, clr_type_name(a->type), r->n, &data,
                       &got) != 0 ||
      got != r->n) {
    free(data);
    free(all);
    return NULL;
  }
  free(all);
  return data;
}

static int run_calls(mpi_run *r) {
  const cli_args *a = r->a;
  int scan = clr_kernel_is_scan(a->opt.kernel);
  size_t osize = clr_type_size(clr_scan_output_type(&a->opt, a->type));
  if (scan && !(r->out = malloc(r->n_local ? r->n_local * osize : 1))) {
    cli_error("rank %d: out of host memory", r->rank);
    return CLI_EXIT_RUNTIME;
  }
  for (unsigned k = 0; k <= a->repeat; k++) {
    clr_status st =
        scan
            ? clr_mpi_scan_host(r->ctx, MPI_COMM_WORLD, &a->opt, a->op, a->type,
                                r->local, r->out, r->n_local, &r->info)
            : clr_mpi_reduce_host(r->ctx, MPI_COMM_WORLD, &a->opt, a->op,
                                  a->type, r->local, r->n_local, &r->result,
                                  &r->info);
    if (st != CLR_OK) {
      char what[96];
      snprintf(what, sizeof what, "rank %d, %s", r->rank,
               r->info.failed_rank == r->rank ? "its part"
                                              : "another rank's part");
      if (r->rank == r->info.failed_rank || r->info.failed_rank < 0)
        return cli_status_error(what, st, clr_context_error(r->ctx));
      return cli_exit_status(st);
    }
    if (k > 0) {
      r->total_ms[k - 1] = r->info.total_ms;
      r->combine_ms[k - 1] = r->info.combine_ms;
      r->local_ms[k - 1] = r->info.local_ms;
    }
  }
  return 0;
}

/* Rank 0: the result against the CPU's reference of the whole array; a
 * scan's parts gathered first. */
static int verify(mpi_run *r, int *ok, double *err, double *bound,
                  clr_value *ref_value) {
  const cli_args *a = r->a;
  int scan = clr_kernel_is_scan(a->opt.kernel);
  clr_type ot = clr_scan_output_type(&a->opt, a->type);
  size_t osize = clr_type_size(ot);
  void *all_out = NULL;
  int *counts = NULL, *displs = NULL;
  MPI_Datatype elem;
  MPI_Type_contiguous((int)osize, MPI_BYTE, &elem);
  MPI_Type_commit(&elem);
  if (scan) {
    int mine = (int)r->n_local;
    if (r->rank == 0) {
      counts = malloc((size_t)r->size * sizeof *counts);
      displs = malloc((size_t)r->size * sizeof *displs);
      all_out = malloc(r->n * osize);
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (r->rank == 0)
      for (int i = 0, at = 0; i < r->size; at += counts[i], i++)
        displs[i] = at;
    MPI_Gatherv(r->out, mine, elem, all_out, counts, displs, elem, 0,
                MPI_COMM_WORLD);
  }
  MPI_Type_free(&elem);
  free(counts);
  free(displs);
  if (r->rank != 0)
    return 0;
  void *all = whole_array(r);
  if (!all || (scan && !all_out)) {
    free(all);
    free(all_out);
    cli_error("out of host memory for the reference of %zu elements "
              "(--no-verify skips it)",
              r->n);
    return CLI_EXIT_RUNTIME;
  }
  *err = *bound = 0;
  if (scan) {
    clr_scan_check chk;
    clr_ref_scan_check_to(a->op, a->type, ot, a->opt.exclusive, all, all_out,
                          r->n, r->info.error_depth, 0, &chk);
    *ok = chk.ok;
    *ref_value = chk.ref_last;
    r->result = chk.got_last;
    *err = chk.worst_error;
    *bound = chk.worst_bound;
  } else if (a->opt.exact && (a->op == CLR_SUM) &&
             (a->type == CLR_FLOAT || a->type == CLR_DOUBLE)) {
    clr_ref_exact_sum(a->type, all, r->n, ref_value);
    *ok = clr_ref_exact_equal(ref_value, &r->result);
  } else {
    clr_reference ref;
    clr_check chk;
    clr_type rt = clr_options_result_type(&a->opt, a->op, a->type);
    clr_ref_reduce_to(a->op, a->type, rt, all, r->n, &ref);
    clr_ref_check(&ref, &r->result, r->info.error_depth, &chk);
    *ok = chk.ok;
    *ref_value = ref.value;
    *err = chk.error;
    *bound = chk.bound;
  }
  free(all);
  free(all_out);
  return 0;
}

static void report(mpi_run *r, int verified, int ok, double err, double bound,
                   const clr_value *ref) {
  const cli_args *a = r->a;
  unsigned c = a->repeat;
  double total = cli_median(r->total_ms, c),
         combine = cli_median(r->combine_ms, c),
         local = cli_median(r->local_ms, c);
  /* Every rank's part and local time. */
  uint64_t mine[2] = {r->n_local, 0}, *parts = NULL;
  double lt = local, *locals = NULL;
  if (r->rank == 0) {
    parts = malloc((size_t)r->size * 2 * sizeof *parts);
    locals = malloc((size_t)r->size * sizeof *locals);
  }
  MPI_Gather(mine, 2, MPI_UINT64_T, parts, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Gather(&lt, 1, MPI_DOUBLE, locals, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (r->rank == 0 && parts && locals) {
    char got[64], want[64];
    clr_value_format(&r->result, got, sizeof got);
    clr_value_format(ref, want, sizeof want);
    clr_device_desc d;
    clr_context_device(r->ctx, &d);
    int scan = clr_kernel_is_scan(a->opt.kernel);
    size_t bytes_per =
        r->esize +
        (scan ? clr_type_size(clr_scan_output_type(&a->opt, a->type)) : 0);
    double gbps =
        total > 0 ? (double)r->n * (double)bytes_per / total / 1e6 : 0;
    if (a->json) {
      printf(
          "{\"ranks\":%d,\"n\":%zu,\"op\":\"%s\",\"type\":\"%s\",\"scan\":%s,"
          "\"kernel\":\"%s\",\"exact\":%s,\"device0\":\"%s\",\"result\":\"%s\","
          "\"reference\":%s%s%s,\"verified\":%s,\"error\":%.17g,\"bound\":%."
          "17g,"
          "\"total_ms\":%.6f,\"combine_ms\":%.6f,\"gbps\":%.6f,\"parts\":[",
          r->size, r->n, clr_op_name(a->op), clr_type_name(a->type),
          scan ? "true" : "false", clr_kernel_name(a->opt.kernel),
          a->opt.exact ? "true" : "false", d.device_name, got,
          verified ? "\"" : "", verified ? want : "null", verified ? "\"" : "",
          verified ? (ok ? "true" : "false") : "null", err, bound, total,
          combine, gbps);
      for (int i = 0; i < r->size; i++)
        printf("%s{\"n\":%llu,\"local_ms\":%.6f}", i ? "," : "",
               (unsigned long long)parts[2 * i], locals[i]);
      printf("]}\n");
    } else {
      printf("ranks:      %d (rank 0 on %s)\n", r->size, d.device_name);
      printf("data:       %zu %s over the ranks: %s\n", r->n,
             clr_type_name(a->type), r->desc);
      for (int i = 0; i < r->size; i++)
        printf("rank %-6d %llu elements, its part %.3f ms\n", i,
               (unsigned long long)parts[2 * i], locals[i]);
      printf("run:        %s %s%s of %s%s, %u timed run%s after 1 warm-up\n",
             clr_kernel_name(a->opt.kernel),
             scan ? (a->opt.exclusive ? "exclusive " : "inclusive ") : "",
             clr_op_name(a->op), clr_type_name(a->type),
             a->opt.exact ? " (exact)" : "", c, c == 1 ? "" : "s");
      printf("result:     %s%s\n", scan ? "last element " : "", got);
      if (verified) {
        printf("reference:  %s\n", want);
        if (!(a->opt.exact && !scan))
          printf("error:      %.3g (bound %.3g)\n", err, bound);
      }
      printf("total:      %.3f ms median (the whole call on rank 0; MPI "
             "steps %.3f ms)\n",
             total, combine);
      printf("bandwidth:  %.3g GB/s over all ranks\n", gbps);
      printf(verified ? (ok ? "verified: yes\n" : "VERIFICATION FAILED\n")
                      : "verified: skipped (--no-verify)\n");
    }
  }
  free(parts);
  free(locals);
}

/* --split=even|uneven, taken out of argv before clreduce's parser. */
static int take_split(int *argc, char **argv, int *uneven) {
  int j = 0;
  for (int i = 0; i < *argc; i++) {
    if (strncmp(argv[i], "--split=", 8) == 0) {
      if (strcmp(argv[i] + 8, "uneven") == 0)
        *uneven = 1;
      else if (strcmp(argv[i] + 8, "even") == 0)
        *uneven = 0;
      else
        return -1;
      continue;
    }
    argv[j++] = argv[i];
  }
  *argc = j;
  argv[j] = NULL;
  return 0;
}

static int run(mpi_run *r) {
  const cli_args *a = r->a;
  if (a->dot || a->segments || a->segment_length || a->output ||
      a->action != CLI_ACTION_RUN) {
    if (r->rank == 0)
      cli_error("clreduce-mpi runs reductions and scans of one array: no "
                "--dot, --input2, --segments, --segment-length, --output or "
                "listings");
    return CLI_EXIT_USAGE;
  }
  r->esize = clr_type_size(a->type);
  r->n = (size_t)a->n;
  if (a->input && !a->n_given) {
    FILE *f = fopen(a->input, "rb");
    long long bytes = -1;
    if (f && fseeko(f, 0, SEEK_END) == 0)
      bytes = (long long)ftello(f);
    if (f)
      fclose(f);
    if (bytes <= 0 || (size_t)bytes % r->esize) {
      if (r->rank == 0)
        cli_error("--input '%s': not a whole number of %s values", a->input,
                  clr_type_name(a->type));
      return CLI_EXIT_USAGE;
    }
    r->n = (size_t)bytes / r->esize;
  }
  split(r);
  clr_context_config cfg;
  char detail[512] = "";
  memset(&cfg, 0, sizeof cfg);
  cfg.platform = a->platform;
  cfg.device = a->device;
  clr_status st = clr_mpi_context_create(MPI_COMM_WORLD, &cfg, &r->ctx, detail,
                                         sizeof detail);
  int rc =
      st == CLR_OK ? 0 : cli_status_error("creating the context", st, detail);
  if (rc == 0)
    rc = load_part(r);
  /* Every rank alike from here: the worst status of the set-up. */
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst)
    return worst;
  r->total_ms = calloc(a->repeat, sizeof(double));
  r->combine_ms = calloc(a->repeat, sizeof(double));
  r->local_ms = calloc(a->repeat, sizeof(double));
  if (!r->total_ms || !r->combine_ms || !r->local_ms)
    return CLI_EXIT_RUNTIME;
  if ((rc = run_calls(r)) != 0)
    return rc;
  int ok = 1;
  double err = 0, bound = 0;
  clr_value ref;
  memset(&ref, 0, sizeof ref);
  if (a->verify && a->opt.map == CLR_MAP_EXPR) {
    if (r->rank == 0)
      cli_error("clreduce-mpi verifies no map expression (clreduce --map "
                "does): use --no-verify");
    return CLI_EXIT_USAGE;
  }
  if (a->verify && (rc = verify(r, &ok, &err, &bound, &ref)) != 0)
    return rc;
  report(r, a->verify, ok, err, bound, &ref);
  if (r->rank == 0 && a->verify && !ok)
    cli_error("verification failed over %d ranks", r->size);
  return a->verify && !ok ? CLI_EXIT_VERIFY : 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  mpi_run r;
  cli_args args;
  memset(&r, 0, sizeof r);
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  cli_set_program_name("clreduce-mpi");
  int rc = take_split(&argc, argv, &r.uneven);
  if (rc != 0) {
    if (r.rank == 0)
      cli_error("--split is 'even' or 'uneven'");
    rc = CLI_EXIT_USAGE;
  } else {
    /* One rank tells a bad command line. */
    int saved = -1;
    if (r.rank != 0) {
      fflush(stderr);
      saved = dup(2);
      FILE *null = freopen("/dev/null", "w", stderr);
      (void)null;
    }
    rc = cli_parse_args(argc, argv, &args);
    if (saved >= 0) {
      fflush(stderr);
      dup2(saved, 2);
      close(saved);
    }
    if (rc == 0 &&
        (args.action == CLI_ACTION_HELP || args.action == CLI_ACTION_VERSION)) {
      if (r.rank == 0) {
        if (args.action == CLI_ACTION_HELP) {
          printf("usage: mpirun -np P clreduce-mpi [--split=even|uneven] "
                 "[clreduce's options]\n\n");
          cli_print_usage(stdout);
        } else {
          printf("clreduce-mpi %s\n", clr_version());
        }
      }
    } else if (rc == 0) {
      r.a = &args;
      rc = run(&r);
    }
  }
  /* rank 0's status for every rank */
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  fflush(stdout);
  free(r.local);
  free(r.out);
  free(r.total_ms);
  free(r.combine_ms);
  free(r.local_ms);
  clr_context_release(r.ctx);
  MPI_Finalize();
  return rc;
}
