/* clreduce-mpi: clreduce over the ranks of an MPI job.
 *
 *   mpirun -np 4 clreduce-mpi --n=1e9 [clreduce's options]
 *
 * Each rank takes its part of a global --n (generated in blocks, so the
 * array is the same whatever the number of ranks, or its slice of
 * --input: raw values, or a .npy file whose dtype gives the type), reduces
 * or scans it on its own device (clr_mpi_context_create: the GPU of its
 * node-local rank, or the rank's own --device) and the ranks combine
 * through MPI (include/clreduce_mpi.h).  Rank 0 checks the result against
 * the CPU reference of the whole array (which it builds: verification
 * needs the whole array in rank 0's memory; --no-verify skips it; a map
 * expression's by src/check/expr_eval.c, i the global index) and prints
 * the report.  --split=even (the default) gives the ranks equal parts;
 * --split=uneven gives rank r a part in proportion to r (rank 0 none).
 *
 * Every rank parses its own command line, then the ranks agree before any
 * data moves: a rank whose command line fails, or whose options differ
 * from rank 0's (all must be the same but --platform, --device and
 * --input's path: an input is compared by its size and sampled bytes),
 * ends the job.  Each stage (the options, the set-up, the calls, the
 * check) ends with one collective over every rank's status, so a failure
 * anywhere gives every rank the same exit status and the same one-line
 * message, which rank 0 prints ("rank K: ..." when other ranks did not
 * fail).  Exit statuses as clreduce's.
 *
 * MPI_COMM_WORLD returns MPI errors (MPI_ERRORS_RETURN) and every call is
 * checked.  A rank that dies (killed, or exiting without MPI_Finalize) is
 * not waited for: Open MPI 4's mpirun notices the lost process and kills
 * the others, exiting non-zero ("mpirun noticed that process rank K ...
 * exited on signal 9", or "... exiting improperly").  MPI itself has no
 * bounded wait for a collective, so this depends on the launcher.
 *
 * Test hook: CLR_MPI_TEST_DIE=RANK:STAGE[:exit], STAGE one of options,
 * setup, calls, verify, makes rank RANK raise SIGKILL (with :exit, _exit(3)
 * without MPI_Finalize) as it begins that stage (tests/mpi). */
#include "args.h"
#include "cli.h"
#include "clr_version.h"
#include "datagen.h"
#include "exact_sum.h"
#include "expr_eval.h"
#include "fileio.h"
#include "npy.h"
#include "reference.h"
#include "report.h"
#include "scan_reference.h"

#include "clreduce_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This rank's one-line message, without the program's name. */
#define MSG_MAX 1024

typedef struct mpi_run {
  const cli_args *a;
  int rank, size, uneven;
  size_t n, n_local, first, esize;
  uint64_t input_bytes, input_print; /* --input: its size, sampled bytes */
  cli_npy_plan npy; /* found: --input is a .npy file (its dtype, shape */
                    /* and where its data start)                      */
  clr_context *ctx;
  void *local, *out;
  char desc[256];
  double *total_ms, *combine_ms, *local_ms;
  clr_value result;
  clr_mpi_info info;
  char msg[MSG_MAX];
} mpi_run;

/* ---- one message and one status for every rank */

/* This rank's failure: its message, and status. */
static int fail(mpi_run *r, int status, const char *fmt, ...) CLI_PRINTF(3, 4);
static int fail(mpi_run *r, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg, sizeof r->msg, fmt, ap);
  va_end(ap);
  return status;
}

/* A failed MPI call: its error string. */
static int mpi_fail(mpi_run *r, const char *call, int err) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "error %d", err);
  return fail(r, CLI_EXIT_RUNTIME, "%s failed: %s", call, text);
}

/* The messages of the shared command-line code (the parser, the input
 * reader), which prints them: stderr into a temporary file while it runs,
 * then its first "clreduce-mpi: " line into r->msg; any other line goes
 * on to stderr. */
typedef struct capture {
  FILE *tmp;
  int saved;
} capture;

static void capture_begin(capture *c) {
  fflush(stderr);
  c->saved = -1;
  c->tmp = tmpfile();
  if (c->tmp && (c->saved = dup(2)) >= 0 && dup2(fileno(c->tmp), 2) < 0) {
    close(c->saved);
    c->saved = -1;
  }
}

static void capture_end(capture *c, mpi_run *r) {
  static const char prefix[] = "clreduce-mpi: ";
  char line[4096]; /* longer than cli_error's lines */
  if (c->saved >= 0) {
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->tmp);
    while (fgets(line, sizeof line, c->tmp)) {
      if (!r->msg[0] && strncmp(line, prefix, sizeof prefix - 1) == 0) {
        line[strcspn(line, "\n")] = '\0';
        size_t len = strlen(line + sizeof prefix - 1);
        if (len >= sizeof r->msg)
          len = sizeof r->msg - 1;
        memcpy(r->msg, line + sizeof prefix - 1, len);
        r->msg[len] = '\0';
      } else if (strncmp(line, prefix, sizeof prefix - 1) != 0) {
        fputs(line, stderr);
      }
    }
  }
  if (c->tmp)
    fclose(c->tmp);
}

/* ---- the options every rank must share */

/* The options compared over the ranks, a bit each in a rank's mask;
 * --platform, --device (each rank's own device) and --input's path (an
 * input is compared by its size and sampled bytes) may differ. */
enum {
  F_ACTION,
  F_SPLIT,
  F_OP,
  F_TYPE,
  F_N,
  F_INPUT,
  F_SEED,
  F_KERNEL,
  F_WG,
  F_COARSE,
  F_VEC,
  F_LAYOUT,
  F_NARROW,
  F_EXACT,
  F_ACC,
  F_EXCLUSIVE,
  F_MAP,
  F_DDOF,
  F_REPEAT,
  F_VERIFY,
  F_JSON,
  F_COUNT
};

static const char *const option_names[F_COUNT] = {
    [F_ACTION] = "--help / --version",
    [F_SPLIT] = "--split",
    [F_OP] = "--op",
    [F_TYPE] = "--type",
    [F_N] = "--n",
    [F_INPUT] = "--input (its size or contents)",
    [F_SEED] = "--seed",
    [F_KERNEL] = "--kernel",
    [F_WG] = "--wg",
    [F_COARSE] = "--coarse",
    [F_VEC] = "--vec",
    [F_LAYOUT] = "--layout",
    [F_NARROW] = "--narrow",
    [F_EXACT] = "--exact",
    [F_ACC] = "--acc",
    [F_EXCLUSIVE] = "--exclusive",
    [F_MAP] = "--map",
    [F_DDOF] = "--ddof",
    [F_REPEAT] = "--repeat",
    [F_VERIFY] = "--no-verify",
    [F_JSON] = "--json",
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
#define FNV_BASIS 0xcbf29ce484222325ull

/* A digest of each compared option's canonical value (as parsed: --n=1e3
 * and --n=1000 are one). */
static void option_digests(const mpi_run *r, uint64_t d[F_COUNT]) {
  const cli_args *a = r->a;
  const clr_options *o = &a->opt;
  uint64_t v[F_COUNT][2];
  memset(v, 0, sizeof v);
  v[F_ACTION][0] = (uint64_t)a->action;
  v[F_SPLIT][0] = (uint64_t)r->uneven;
  v[F_OP][0] = (uint64_t)a->op;
  v[F_TYPE][0] = (uint64_t)a->type;
  /* --n as given (with --input it must match the file's count) */
  v[F_N][0] = a->n_given || !a->input ? a->n : 0;
  v[F_N][1] = (uint64_t)(a->n_given || !a->input);
  v[F_INPUT][0] = r->input_bytes;
  v[F_INPUT][1] = r->input_print;
  v[F_SEED][0] = a->input ? 0 : a->seed; /* generated data's only */
  v[F_KERNEL][0] = (uint64_t)o->kernel;
  v[F_WG][0] = o->wg_size;
  v[F_COARSE][0] = o->coarse;
  v[F_VEC][0] = o->vector_width;
  v[F_LAYOUT][0] = (uint64_t)o->layout;
  v[F_NARROW][0] = (uint64_t)(o->narrow_accumulator != 0);
  v[F_EXACT][0] = (uint64_t)(o->exact != 0);
  v[F_ACC][0] = o->accumulate_in;
  v[F_EXCLUSIVE][0] = (uint64_t)(o->exclusive != 0);
  v[F_MAP][0] = (uint64_t)o->map;
  v[F_DDOF][0] = o->ddof;
  v[F_REPEAT][0] = a->repeat;
  v[F_VERIFY][0] = (uint64_t)(a->verify != 0);
  v[F_JSON][0] = (uint64_t)(a->json != 0);
  for (int i = 0; i < F_COUNT; i++)
    d[i] = fnv1a(FNV_BASIS, v[i], sizeof v[i]);
  if (o->map == CLR_MAP_EXPR && o->map_expr)
    d[F_MAP] = fnv1a(d[F_MAP], o->map_expr, strlen(o->map_expr) + 1);
}

/* The message of ranks whose options differ, the same on every rank. */
static int option_mismatch(mpi_run *r, int rank, uint32_t mask) {
  char names[512] = "";
  size_t at = 0;
  for (int i = 0; i < F_COUNT && at < sizeof names; i++)
    if (mask & (1u << i)) {
      int w = snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "",
                       option_names[i]);
      if (w < 0)
        break;
      at += (size_t)w;
    }
  return fail(r, CLI_EXIT_USAGE,
              "rank %d was given other options than rank 0: %s (every rank "
              "takes the same options; only --platform, --device and "
              "--input's path may differ)",
              rank, names);
}

/* The end of a stage, on every rank: one MPI_Allreduce (MPI_MAX) over
 * three words, then, on a failure, the first failing rank's message
 * broadcast from it, printed once by rank 0, and its status returned on
 * every rank.  rc: this rank's status (its message in r->msg); differs: 0,
 * or the mask of the options in which this rank differs from rank 0.  A
 * rank's word puts INT_MAX - rank above its status or mask, so the maximum
 * is the smallest rank's. */
static uint64_t rank_word(int rank, uint32_t low) {
  return (uint64_t)1 << 63 | (uint64_t)(0x7fffffff - rank) << 32 | low;
}

static int word_rank(uint64_t w) {
  return 0x7fffffff - (int)((w >> 32) & 0x7fffffff);
}

static int settle(mpi_run *r, int rc, uint32_t differs) {
  uint64_t mine[3], all[3];
  mine[0] = rc ? rank_word(r->rank, (uint32_t)rc) : 0;
  mine[1] = rc ? 0 : 1; /* some rank did not fail */
  mine[2] = differs ? rank_word(r->rank, differs) : 0;
  int err = MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (err != MPI_SUCCESS) {
    /* No agreement to be had: this rank's own line and status. */
    char before[MSG_MAX];
    snprintf(before, sizeof before, "%s", r->msg);
    rc = mpi_fail(r, "MPI_Allreduce", err);
    cli_error("rank %d: %s%s%s", r->rank, r->msg, before[0] ? "; before: " : "",
              before);
    return rc;
  }
  if (all[0]) {
    int first = word_rank(all[0]);
    err =
        MPI_Bcast(r->msg, (int)sizeof r->msg, MPI_CHAR, first, MPI_COMM_WORLD);
    if (err != MPI_SUCCESS)
      snprintf(r->msg, sizeof r->msg, "failed, its message lost (%d)", err);
    r->msg[sizeof r->msg - 1] = '\0';
    if (r->rank == 0) {
      if (all[1] && r->size > 1)
        cli_error("rank %d: %s", first, r->msg);
      else
        cli_error("%s", r->msg);
    }
    return (int)(uint32_t)all[0];
  }
  if (all[2]) {
    rc = option_mismatch(r, word_rank(all[2]), (uint32_t)all[2]);
    if (r->rank == 0)
      cli_error("%s", r->msg);
    return rc;
  }
  return 0;
}

/* The options' stage: rank 0's digests to every rank, each rank's own
 * compared with them, then settled. */
static int agree_options(mpi_run *r, int rc) {
  uint64_t mine[F_COUNT], root[F_COUNT];
  uint32_t differs = 0;
  memset(mine, 0, sizeof mine);
  if (rc == 0)
    option_digests(r, mine);
  memcpy(root, mine, sizeof root);
  int err = MPI_Bcast(root, F_COUNT, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (err != MPI_SUCCESS && rc == 0)
    rc = mpi_fail(r, "MPI_Bcast", err);
  for (int i = 0; rc == 0 && i < F_COUNT; i++)
    if (mine[i] != root[i])
      differs |= 1u << i;
  return settle(r, rc, differs);
}

/* The test hook (see the top of this file). */
static void test_die(const mpi_run *r, const char *stage) {
  const char *hook = getenv("CLR_MPI_TEST_DIE");
  char *end = NULL;
  if (!hook || !*hook)
    return;
  long rank = strtol(hook, &end, 10);
  if (end == hook || *end != ':' || rank != r->rank)
    return;
  size_t len = strlen(stage);
  if (strncmp(end + 1, stage, len) != 0 ||
      (end[1 + len] != '\0' && end[1 + len] != ':'))
    return;
  fflush(stdout);
  fflush(stderr);
  if (strcmp(end + 1 + len, ":exit") == 0)
    _exit(3);
  raise(SIGKILL);
}

/* ---- the command line, on each rank */

/* --input's start, read as clreduce reads it (cli_npy_input_plan: the
 * rules and the messages of both).  A .npy file, known by its magic:
 * the dtype gives the type (a --type that differs is refused), the shape
 * the count (--n, if given, must agree; a 2-D array is read as its rows
 * one after another), and the data after the header must be exactly
 * that many values; r->npy.found then.  Else raw values (raw_input). */
static int npy_input(mpi_run *r, cli_args *args, int fd, uint64_t bytes) {
  const char *path = args->input;
  cli_npy_ask ask = {.option = "--input",
                     .type = args->type,
                     .type_by = args->type_given ? "--type" : NULL,
                     .n = args->n,
                     .n_by = args->n_given ? "--n" : NULL};
  cli_npy_plan *plan = &r->npy;
  unsigned char first[64], *buf = first;
  size_t len = 0;
  int rc;
  /* the bytes the plan asks for, until it decides (a header of at most
   * 1 MiB) */
  while ((rc = cli_npy_input_plan(path, buf, len, len == bytes, &ask, plan)) ==
             0 &&
         plan->need > len) {
    size_t want = plan->need < bytes ? plan->need : (size_t)bytes;
    if (want > sizeof first) {
      unsigned char *grown = buf == first ? malloc(want) : realloc(buf, want);
      if (!grown) {
        rc = fail(r, CLI_EXIT_RUNTIME,
                  "out of host memory: input file '%s' has a header of %zu "
                  "bytes",
                  path, want);
        break;
      }
      if (buf == first)
        memcpy(grown, first, len);
      buf = grown;
    }
    ssize_t got = pread(fd, buf, want, 0);
    if (got != (ssize_t)want) {
      rc = fail(r, CLI_EXIT_USAGE, "cannot read input file '%s': %s", path,
                strerror(got < 0 ? errno : EIO));
      break;
    }
    len = want;
  }
  if (buf != first)
    free(buf);
  if (rc != 0 || !plan->found) {
    if (rc != 0 && plan->msg[0]) /* (else fail's already) */
      fail(r, rc, "%s", plan->msg);
    return rc;
  }
  const cli_npy *f = &plan->npy;
  uint64_t want = f->count * plan->elem_size, have = bytes - f->data_offset;
  if (have != want)
    return cli_header_data_message(r->msg, sizeof r->msg, path,
                                   have > want ? want : have, have > want,
                                   f->data_offset, f->count, plan->elem_size);
  args->type = f->type;
  r->esize = plan->elem_size;
  r->n = (size_t)f->count;
  return 0;
}

/* A raw --input: whole values of --type (clreduce's checks and
 * messages, cli_raw_values_check); their count the global n (--n must
 * match it). */
static int raw_input(mpi_run *r, uint64_t bytes) {
  const cli_args *a = r->a;
  const char *tname = clr_type_name(a->type);
  int rc = cli_raw_values_check(r->msg, sizeof r->msg, a->input, bytes,
                                r->esize, tname, a->n_given ? a->n : 0, &r->n);
  if (rc == 0 && a->n_given && a->n != (uint64_t)r->n)
    rc = fail(r, CLI_EXIT_USAGE,
              "--n=%llu does not match the %zu %s values in '%s'",
              (unsigned long long)a->n, r->n, tname, a->input);
  return rc;
}

/* --input: a regular file, raw values of --type or a .npy file (known by
 * its magic, as clreduce knows it), checked as clreduce checks it (the
 * same messages); then, without --type, the checks of the op on the
 * type, which wait for a .npy file's dtype.  Its size and a digest of 16
 * blocks of 4 KiB spread over it (the .npy header included) are compared
 * over the ranks, so ranks given different files, or files of another
 * size, are told apart without reading them whole. */
static int check_input(mpi_run *r, cli_args *args) {
  const cli_args *a = r->a;
  struct stat st;
  int fd = open(a->input, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return fail(r, CLI_EXIT_USAGE, "cannot read input file '%s': %s", a->input,
                strerror(errno));
  int e = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  if (e) {
    close(fd);
    return fail(r, CLI_EXIT_USAGE, "cannot read input file '%s': %s", a->input,
                strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return fail(r, CLI_EXIT_USAGE,
                "input file '%s' is not a regular file: the ranks of "
                "clreduce-mpi read their slices of one file (clreduce reads "
                "pipes and devices)",
                a->input);
  }
  uint64_t bytes = (uint64_t)st.st_size; /* (0: raw_input's "empty") */
  int rc = npy_input(r, args, fd, bytes);
  if (rc == 0 && !r->npy.found)
    rc = raw_input(r, bytes);
  if (rc == 0 && !a->type_given) {
    capture c;
    capture_begin(&c);
    rc = cli_check_type(a);
    capture_end(&c, r);
    if (rc != 0 && !r->msg[0])
      snprintf(r->msg, sizeof r->msg, "op '%s' does not take type %s",
               clr_op_name(a->op), clr_type_name(a->type));
  }
  if (rc != 0) {
    close(fd);
    return rc;
  }
  enum { BLOCKS = 16, BLOCK = 4096 };
  unsigned char buf[BLOCK];
  uint64_t h = fnv1a(FNV_BASIS, &bytes, sizeof bytes);
  for (uint64_t k = 0; k < BLOCKS; k++) {
    uint64_t len = bytes < BLOCK ? bytes : BLOCK;
    uint64_t at = (bytes - len) * k / (BLOCKS - 1);
    ssize_t got = pread(fd, buf, (size_t)len, (off_t)at);
    if (got != (ssize_t)len) {
      e = got < 0 ? errno : EIO;
      close(fd);
      return fail(r, CLI_EXIT_USAGE, "cannot read input file '%s': %s",
                  a->input, strerror(e));
    }
    h = fnv1a(h, buf, (size_t)len);
  }
  close(fd);
  r->input_bytes = bytes;
  r->input_print = h;
  return 0;
}

/* clreduce's options that clreduce-mpi refuses (exit 2): the refusal's
 * message and --help's list both come from this table. */
static const char *const refused_names[] = {
    "--dot",          "--input2",     "--segments", "--segment-length",
    "--ranges",       "--scan",       "--output",   "--list-devices",
    "--list-kernels", "--save-input", "--progress", "--cache-info",
    "--cache-clear",  "--shape",      "--axis",
};
#define N_REFUSED (sizeof refused_names / sizeof refused_names[0])

static int refused_given(const cli_args *a, size_t i) {
  switch (i) {
  case 0:
    return a->dot;
  case 1:
    return a->input2 != NULL;
  case 2:
    return a->segments != NULL;
  case 3:
    return a->segment_length != 0;
  case 4:
    return a->ranges != NULL;
  case 5:
    return a->scan;
  case 6:
    return a->output != NULL;
  case 7:
    return a->action == CLI_ACTION_LIST_DEVICES;
  case 8:
    return a->action == CLI_ACTION_LIST_KERNELS;
  case 9:
    return a->save_input != NULL;
  case 10:
    return a->progress;
  case 11:
    return a->action == CLI_ACTION_CACHE_INFO;
  case 12:
    return a->action == CLI_ACTION_CACHE_CLEAR;
  case 13:
    return a->rows != 0;
  default:
    return a->axis >= 0;
  }
}

/* "--dot, --input2, ..., --list-kernels" */
static void refused_list(char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < N_REFUSED && at < size; i++) {
    int w =
        snprintf(buf + at, size - at, "%s%s", i ? ", " : "", refused_names[i]);
    if (w < 0)
      break;
    at += (size_t)w;
  }
}

/* What clreduce-mpi does not run, or cannot check. */
static int refusals(mpi_run *r) {
  const cli_args *a = r->a;
  char names[256];
  for (size_t i = 0; i < N_REFUSED; i++)
    if (refused_given(a, i)) {
      refused_list(names, sizeof names);
      return fail(r, CLI_EXIT_USAGE,
                  "%s is not supported by clreduce-mpi, which runs reductions "
                  "and scans of one array (not %s: clreduce runs them)",
                  refused_names[i], names);
    }
  return 0;
}

/* --help: clreduce-mpi's own text.  The operations, types and kernels
 * from the tables clreduce's help reads, the refused options from
 * refused_names. */
static void print_usage(FILE *f) {
  fputs("Usage: mpirun -np P clreduce-mpi [OPTION]...\n"
        "Reduce or scan one array over the ranks of an MPI job.  Each rank "
        "takes its\n"
        "part of the array (generated in blocks: for the same --n and --seed "
        "the same\n"
        "array as clreduce's, whatever the number of ranks; or its slice of "
        "--input),\n"
        "reduces or scans it on its own OpenCL device (the GPU of its "
        "node-local rank,\n"
        "or its --device) and the ranks combine their parts through MPI.  "
        "Rank 0\n"
        "checks the result against the CPU reference of the whole array and "
        "prints\n"
        "the report.  Every rank takes the same options; only --platform, "
        "--device and\n"
        "--input's path may differ.\n"
        "\n"
        "Options:\n"
        "  --split=S          even (default): equal parts; uneven: rank r's "
        "part in\n"
        "                     proportion to r (rank 0 none)\n"
        "  --kernel=NAME      ",
        f);
  cli_print_kernel_help(f, "");
  fputs("  --op=OP            ", f);
  cli_print_op_help(f, 21, CLI_DEFAULT_OP);
  fputs("  --type=TYPE        ", f);
  cli_print_type_help(f, 21, CLI_DEFAULT_TYPE);
  fputs("  --exclusive        scans: exclusive instead of inclusive\n"
        "  --map=M            reductions: abs, square, or an OpenCL C "
        "expression of x\n"
        "                     and i (its index in the whole array)\n"
        "  --ddof=N           var, std: delta degrees of freedom, the "
        "divisor n - N\n"
        "                     (default 0, as NumPy; PyTorch's default is "
        "1)\n"
        "  --n=N              element count of the whole array (default "
        "1e8)\n"
        "  --seed=S           seed of the generated array (default 42)\n"
        "  --input=FILE       a regular file of raw native-endian values of "
        "--type, or a\n"
        "                     NumPy .npy file (its dtype gives the type, "
        "its shape n);\n"
        "                     each rank reads its slice (--n, if given, "
        "must agree)\n"
        "  --platform=P       this rank's platform (index or name "
        "substring)\n"
        "  --device=D         this rank's device (default: the GPU of its "
        "node-local\n"
        "                     rank)\n"
        "  --wg=N, --coarse=N, --vec=W, --layout=L, --narrow, --acc=TYPE, "
        "--exact\n"
        "                     tuning and accumulation, as clreduce's\n"
        "  --repeat=R         timed calls after one warm-up (default 10; "
        "medians)\n"
        "  --no-verify        skip the CPU reference (which needs the whole "
        "array in\n"
        "                     rank 0's memory)\n"
        "  --json             rank 0 prints one JSON object on stdout\n"
        "  -v, --verbose      the library's log on stderr, each line with "
        "its rank\n"
        "  --help             print this help and exit\n"
        "  --version          print the version and exit\n"
        "\n",
        f);
  fputs("Refused (a usage error; clreduce runs them):\n ", f);
  for (size_t i = 0, col = 1; i < N_REFUSED; i++) {
    size_t len = strlen(refused_names[i]) + 2;
    if (col + len > 78) {
      fputs("\n ", f);
      col = 1;
    }
    fprintf(f, " %s%s", refused_names[i], i + 1 < N_REFUSED ? "," : "\n\n");
    col += len;
  }
  fputs("Options take their value as --opt=value or --opt value.\n"
        "Example: mpirun -np 4 clreduce-mpi --op=max --type=int --n=1e8\n"
        "Exit status, the same on every rank: 0 success, 1 verification "
        "failed,\n"
        "2 usage error (a bad or refused option, options that differ between "
        "ranks,\n"
        "an unusable --input), 3 OpenCL, MPI or runtime error.\n",
        f);
}

/* --split=even|uneven, taken out of argv before clreduce's parser. */
static int take_split(int *argc, char **argv, int *uneven) {
  int j = 0, bad = 0;
  for (int i = 0; i < *argc; i++) {
    if (strncmp(argv[i], "--split=", 8) == 0) {
      if (strcmp(argv[i] + 8, "uneven") == 0)
        *uneven = 1;
      else if (strcmp(argv[i] + 8, "even") == 0)
        *uneven = 0;
      else
        bad = 1;
      continue;
    }
    argv[j++] = argv[i];
  }
  *argc = j;
  argv[j] = NULL;
  return bad ? -1 : 0;
}

/* This rank's command line: parsed (the parser's message caught), then
 * checked for what clreduce-mpi refuses, and --input looked at. */
static int parse(mpi_run *r, int argc, char **argv, cli_args *args) {
  if (take_split(&argc, argv, &r->uneven) != 0)
    return fail(r, CLI_EXIT_USAGE, "--split is 'even' or 'uneven'");
  capture c;
  capture_begin(&c);
  /* with --input and without --type, the type's checks wait for the
   * input (a .npy file's dtype): check_input */
  int rc = cli_parse_args_input_type(argc, argv, args);
  capture_end(&c, r);
  if (rc != 0) {
    if (!r->msg[0])
      snprintf(r->msg, sizeof r->msg, "bad command line");
    return rc;
  }
  r->a = args;
  if (args->action == CLI_ACTION_HELP || args->action == CLI_ACTION_VERSION)
    return 0;
  r->esize = clr_type_size(args->type);
  r->n = (size_t)args->n;
  if ((rc = refusals(r)) != 0)
    return rc;
  return args->input ? check_input(r, args) : 0;
}

/* ---- the run */

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

/* A library failure, as cli_status_error words it. */
static int status_fail(mpi_run *r, const char *what, clr_status st,
                       const char *detail) {
  return cli_status_message(r->msg, sizeof r->msg, what, st, detail);
}

/* This rank's elements: its slice of --input, or generated. */
static int load_part(mpi_run *r) {
  const cli_args *a = r->a;
  r->local = malloc(r->n_local ? r->n_local * r->esize : 1);
  if (!r->local)
    return fail(r, CLI_EXIT_RUNTIME, "out of host memory for %zu elements",
                r->n_local);
  if (!a->input) {
    /* the report's words: the whole array's (as clreduce's), the
     * distribution from this rank's slice */
    char mine[256];
    if (!clr_gen_data_slice(a->op, a->type, a->seed, r->n, r->first, r->local,
                            r->n_local, mine, sizeof mine))
      return fail(r, CLI_EXIT_RUNTIME,
                  "out of host memory generating %zu elements", r->n_local);
    const char *dist = strchr(mine, ' ');
    dist = dist ? strchr(dist + 1, ' ') : NULL;
    const char *seed = dist ? strstr(dist + 1, " (seed ") : NULL;
    size_t len = seed ? (size_t)(seed - dist - 1) : 0;
    snprintf(r->desc, sizeof r->desc,
             "%zu %s %.*s (seed %llu, in blocks of %d)", r->n,
             clr_type_name(a->type), (int)len, dist ? dist + 1 : "",
             (unsigned long long)a->seed, CLR_GEN_BLOCK);
    return 0;
  }
  /* a .npy file's values start after its header */
  off_t at = (off_t)((r->npy.found ? r->npy.npy.data_offset : 0) +
                     r->first * r->esize);
  FILE *f = fopen(a->input, "rb");
  if (!f || fseeko(f, at, SEEK_SET) != 0 ||
      fread(r->local, r->esize, r->n_local, f) != r->n_local) {
    if (f)
      fclose(f);
    return fail(r, CLI_EXIT_USAGE, "cannot read elements %zu..%zu of '%s'",
                r->first, r->first + r->n_local, a->input);
  }
  fclose(f);
  char file[192];
  cli_npy_describe(file, sizeof file, a->input, &r->npy);
  snprintf(r->desc, sizeof r->desc, "%zu %s from %s", r->n,
           clr_type_name(a->type), file);
  return 0;
}

/* -v: the library's log lines on stderr, each with its rank. */
static void log_stderr(void *user, const char *message) {
  fprintf(stderr, "clreduce-mpi: rank %d: %s\n", *(const int *)user, message);
}

/* This rank's part, its context and its elements. */
static int setup(mpi_run *r) {
  const cli_args *a = r->a;
  split(r);
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  char detail[512] = "";
  cfg.platform = a->platform;
  cfg.device = a->device;
  if (a->verbose) {
    cfg.log = log_stderr;
    cfg.log_user = &r->rank;
  }
  clr_status st = clr_mpi_context_create(MPI_COMM_WORLD, &cfg, &r->ctx, detail,
                                         sizeof detail);
  if (st != CLR_OK) {
    int rc = status_fail(r, "creating the context", st, detail);
    /* A --platform or --device that selects nothing is the command line's
     * mistake, as for clreduce: a usage error. */
    return cli_selects_nothing(a, st) ? CLI_EXIT_USAGE : rc;
  }
  int rc = load_part(r);
  if (rc)
    return rc;
  size_t c = a->repeat ? a->repeat : 1;
  r->total_ms = calloc(c, sizeof(double));
  r->combine_ms = calloc(c, sizeof(double));
  r->local_ms = calloc(c, sizeof(double));
  if (!r->total_ms || !r->combine_ms || !r->local_ms)
    return fail(r, CLI_EXIT_RUNTIME, "out of host memory");
  return 0;
}

/* A .npy --input's header, as check_input read it, before the values
 * (cli_read_input_hdr): the file read again must hold as many. */
static int npy_skip(void *ctx, const char *path, const unsigned char *buf,
                    size_t len, int at_end, cli_input_header *h) {
  const mpi_run *r = ctx;
  (void)path;
  (void)buf;
  (void)at_end;
  if (len < r->npy.npy.data_offset) {
    h->need = r->npy.npy.data_offset;
    return 0;
  }
  h->size = len;
  h->elem_size = r->esize;
  h->count = r->n;
  return 0;
}

/* The whole array on rank 0, for the reference: 0, or the status with
 * r->msg set. */
static int whole_array(mpi_run *r, void **out) {
  const cli_args *a = r->a;
  *out = NULL;
  if (!a->input) {
    void *all = malloc(r->n * r->esize);
    char desc[256];
    if (!all || !clr_gen_data_slice(a->op, a->type, a->seed, r->n, 0, all, r->n,
                                    desc, sizeof desc)) {
      free(all);
      return fail(r, CLI_EXIT_RUNTIME,
                  "out of host memory for the reference of %zu elements "
                  "(--no-verify skips it)",
                  r->n);
    }
    *out = all;
    return 0;
  }
  size_t got = 0;
  void *data = NULL;
  capture c;
  capture_begin(&c);
  int rc = cli_read_input_hdr(a->input, r->esize, clr_type_name(a->type), r->n,
                              r->npy.found ? npy_skip : NULL, r, &data, &got);
  capture_end(&c, r);
  if (rc == 0 && got != r->n)
    rc = fail(r, CLI_EXIT_USAGE,
              "input file '%s' changed: %zu values, %zu before", a->input, got,
              r->n);
  if (rc != 0) {
    if (!r->msg[0])
      fail(r, 0, "cannot read input file '%s'", a->input);
    free(data);
    return rc;
  }
  *out = data;
  return 0;
}

/* The calls (a warm-up, then --repeat timed ones).  Every rank gets the
 * same status from the library; the rank whose part failed (or every
 * rank, where no part did) gives the message, the others 0 and take the
 * status from settle. */
static int run_calls(mpi_run *r) {
  const cli_args *a = r->a;
  int scan = clr_kernel_is_scan(a->opt.kernel);
  size_t osize = clr_type_size(clr_scan_output_type(&a->opt, a->type));
  if (scan && !(r->out = malloc(r->n_local ? r->n_local * osize : 1)))
    return fail(r, CLI_EXIT_RUNTIME, "out of host memory");
  for (unsigned k = 0; k <= a->repeat; k++) {
    clr_status st =
        scan
            ? clr_mpi_scan_host(r->ctx, MPI_COMM_WORLD, &a->opt, a->op, a->type,
                                r->local, r->out, r->n_local, &r->info)
            : clr_mpi_reduce_host(r->ctx, MPI_COMM_WORLD, &a->opt, a->op,
                                  a->type, r->local, r->n_local, &r->result,
                                  &r->info);
    if (st != CLR_OK) {
      if (r->info.mpi_error)
        return mpi_fail(r, "an MPI step of the call", r->info.mpi_error);
      if (r->info.failed_rank == r->rank)
        return status_fail(r, "its part", st, clr_context_error(r->ctx));
      if (r->info.failed_rank < 0)
        return status_fail(r, "the ranks' calls differ", st, NULL);
      return 0; /* another rank's part: its message comes through settle */
    }
    if (k > 0) {
      r->total_ms[k - 1] = r->info.total_ms;
      r->combine_ms[k - 1] = r->info.combine_ms;
      r->local_ms[k - 1] = r->info.local_ms;
    }
  }
  return 0;
}

/* Rank 0: a map expression's reduction against its CPU reference
 * (src/check/expr_eval.c, as clreduce's: the expression evaluated with
 * OpenCL C's typed semantics over the whole array, i its global index
 * from 0, as the ranks' parts count it; checked with the allowance for
 * the device's lawful differences).  An element whose value is undefined
 * in OpenCL C gives no reference: a usage error, as for clreduce. */
static int expr_check(mpi_run *r, const void *all, int *ok, double *err,
                      double *bound, clr_value *ref_value) {
  const cli_args *a = r->a;
  clr_map_eval m;
  clr_expr_reference er;
  clr_check chk;
  char why[512] = "";
  memset(&m, 0, sizeof m);
  int rc = clr_map_eval_init(&m, a->opt.map_expr, a->type, 0, why, sizeof why);
  if (rc == 0)
    rc = clr_ref_reduce_expr(&m, &a->opt, a->op, a->type, all, NULL, r->n, &er,
                             why, sizeof why);
  if (rc == 0) {
    clr_ref_check_expr(&er, &r->result, r->info.error_depth, &chk);
    *ok = chk.ok;
    *ref_value = er.ref.value;
    *err = chk.error;
    *bound = chk.bound;
  }
  clr_map_eval_free(&m);
  if (rc < 0)
    return fail(r, CLI_EXIT_RUNTIME,
                "out of host memory for the expression values of %zu "
                "elements (--no-verify skips them)",
                r->n);
  if (rc > 0)
    return fail(r, CLI_EXIT_USAGE,
                "no CPU reference for %s %s of %s (map expression): %s",
                clr_kernel_name(a->opt.kernel), clr_op_name(a->op),
                clr_type_name(a->type), why);
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
  int *counts = NULL, *displs = NULL, e = MPI_SUCCESS;
  const char *call = "MPI_Type_contiguous";
  MPI_Datatype elem;
  if ((e = MPI_Type_contiguous((int)osize, MPI_BYTE, &elem)) != MPI_SUCCESS)
    return mpi_fail(r, call, e);
  if ((e = MPI_Type_commit(&elem)) == MPI_SUCCESS && scan) {
    int mine = (int)r->n_local;
    if (r->rank == 0) {
      counts = malloc((size_t)r->size * sizeof *counts);
      displs = malloc((size_t)r->size * sizeof *displs);
      all_out = malloc(r->n * osize);
    }
    /* a rank 0 out of memory gathers nothing, and says so below */
    int room = r->rank != 0 || (counts && displs && all_out);
    call = "MPI_Gather";
    if ((e = MPI_Gather(&mine, 1, MPI_INT, room ? counts : NULL, 1, MPI_INT, 0,
                        MPI_COMM_WORLD)) == MPI_SUCCESS &&
        r->rank == 0 && room)
      for (int i = 0, at = 0; i < r->size; at += counts[i], i++)
        displs[i] = at;
    if (e == MPI_SUCCESS) {
      call = "MPI_Gatherv";
      if (r->rank == 0 && !room)
        e = MPI_Gatherv(r->out, mine, elem, NULL, NULL, NULL, elem, 0,
                        MPI_COMM_WORLD);
      else
        e = MPI_Gatherv(r->out, mine, elem, all_out, counts, displs, elem, 0,
                        MPI_COMM_WORLD);
    }
  }
  MPI_Type_free(&elem);
  free(counts);
  free(displs);
  if (e != MPI_SUCCESS) {
    free(all_out);
    return mpi_fail(r, call, e);
  }
  if (r->rank != 0)
    return 0;
  void *all = NULL;
  int rc = scan && !all_out ? fail(r, CLI_EXIT_RUNTIME,
                                   "out of host memory for the scan of %zu "
                                   "elements (--no-verify skips it)",
                                   r->n)
                            : whole_array(r, &all);
  if (rc != 0) {
    free(all_out);
    return rc;
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
  } else if (a->opt.map == CLR_MAP_EXPR) {
    rc = expr_check(r, all, ok, err, bound, ref_value);
  } else {
    clr_reference ref;
    clr_check chk;
    /* the call's options: a built-in map's values (abs, square), the
     * result type, var's and std's ddof */
    if (!clr_ref_reduce_opt(&a->opt, a->op, a->type, all, NULL, r->n, &ref)) {
      rc = fail(r, CLI_EXIT_RUNTIME,
                "out of host memory for the mapped values of %zu elements "
                "(--no-verify skips them)",
                r->n);
    } else {
      clr_ref_check(&ref, &r->result, r->info.error_depth, &chk);
      *ok = chk.ok;
      *ref_value = ref.value;
      *err = chk.error;
      *bound = chk.bound;
    }
  }
  free(all);
  free(all_out);
  return rc;
}

/* An indexed result's indices (argmin, argmax, minmax) after its value in
 * JSON, as clreduce writes them: -1 where there is none. */
static void json_indices(const cli_report *rep, const char *key,
                         const clr_value *v) {
  if (!cli_result_is_indexed(rep))
    return;
  printf(",\"%s_index\":%lld", key,
         v->index == UINT64_MAX ? -1 : (long long)v->index);
  if (cli_op_is_pair(rep->op)) {
    clr_value m = *v;
    char b[64];
    m.v = v->max;
    cli_format_number(&m, b, sizeof b);
    printf(",\"%s_max\":\"%s\",\"%s_max_index\":%lld", key, b, key,
           v->max_index == UINT64_MAX ? -1 : (long long)v->max_index);
  }
}

static int report(mpi_run *r, int verified, int ok, double err, double bound,
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
  int room = r->rank != 0 || (parts && locals), e;
  const char *call = "MPI_Gather";
  if ((e = MPI_Gather(mine, 2, MPI_UINT64_T, room ? parts : NULL, 2,
                      MPI_UINT64_T, 0, MPI_COMM_WORLD)) == MPI_SUCCESS)
    e = MPI_Gather(&lt, 1, MPI_DOUBLE, room ? locals : NULL, 1, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
  if (e == MPI_SUCCESS && r->rank == 0 && room) {
    int scan = clr_kernel_is_scan(a->opt.kernel);
    cli_report rep; /* what cli_format_result reads of a report */
    memset(&rep, 0, sizeof rep);
    rep.op = a->op;
    rep.is_scan = scan;
    char got[160], want[160], gotv[64], wantv[64];
    cli_format_result(&rep, &r->result, got, sizeof got);
    cli_format_result(&rep, ref, want, sizeof want);
    cli_format_number(&r->result, gotv, sizeof gotv);
    cli_format_number(ref, wantv, sizeof wantv);
    clr_device_desc d;
    clr_context_device(r->ctx, &d);
    size_t bytes_per =
        r->esize +
        (scan ? clr_type_size(clr_scan_output_type(&a->opt, a->type)) : 0);
    double gbps =
        total > 0 ? (double)r->n * (double)bytes_per / total / 1e6 : 0;
    if (a->json) {
      printf("{\"ranks\":%d,\"n\":%zu,\"op\":\"%s\",\"type\":\"%s\",\"scan\":"
             "%s,\"kernel\":\"%s\",\"exact\":%s,\"device0\":\"%s\","
             "\"result\":\"%s\"",
             r->size, r->n, clr_op_name(a->op), clr_type_name(a->type),
             scan ? "true" : "false", clr_kernel_name(a->opt.kernel),
             a->opt.exact ? "true" : "false", d.device_name, gotv);
      json_indices(&rep, "result", &r->result);
      if (verified) {
        printf(",\"reference\":\"%s\"", wantv);
        json_indices(&rep, "reference", ref);
      } else {
        printf(",\"reference\":null");
      }
      printf(",\"verified\":%s,\"error\":%.17g,\"bound\":%.17g,"
             "\"total_ms\":%.6f,\"combine_ms\":%.6f,\"gbps\":%.6f,\"parts\":[",
             verified ? (ok ? "true" : "false") : "null", err, bound, total,
             combine, gbps);
      for (int i = 0; i < r->size; i++)
        printf("%s{\"n\":%llu,\"local_ms\":%.6f}", i ? "," : "",
               (unsigned long long)parts[2 * i], locals[i]);
      printf("]}\n");
    } else {
      printf("ranks:      %d (rank 0 on %s)\n", r->size, d.device_name);
      printf("data:       %s, over the ranks\n", r->desc);
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
    fflush(stdout);
  }
  free(parts);
  free(locals);
  if (e != MPI_SUCCESS)
    return mpi_fail(r, call, e);
  if (!room)
    return fail(r, CLI_EXIT_RUNTIME, "out of host memory for the report");
  return 0;
}

/* Every stage ends in settle: a failure anywhere is every rank's. */
static int run(mpi_run *r, int argc, char **argv, cli_args *args) {
  test_die(r, "options");
  int rc = agree_options(r, parse(r, argc, argv, args));
  if (rc != 0)
    return rc;
  const cli_args *a = r->a;
  if (a->action == CLI_ACTION_HELP || a->action == CLI_ACTION_VERSION) {
    if (r->rank == 0) {
      if (a->action == CLI_ACTION_HELP) {
        print_usage(stdout);
      } else {
        printf("clreduce-mpi %s (commit %s)\n", CLR_VERSION,
               clr_build_commit() ? clr_build_commit()
                                  : "unknown: not built from a git checkout");
      }
    }
    return 0;
  }
  test_die(r, "setup");
  if ((rc = settle(r, setup(r), 0)) != 0)
    return rc;
  test_die(r, "calls");
  if ((rc = settle(r, run_calls(r), 0)) != 0)
    return rc;
  test_die(r, "verify");
  int ok = 1;
  double err = 0, bound = 0;
  clr_value ref;
  memset(&ref, 0, sizeof ref);
  if (a->verify) {
    if ((rc = settle(r, verify(r, &ok, &err, &bound, &ref), 0)) != 0)
      return rc;
    /* rank 0's verdict, every rank's */
    int e = MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    rc = e == MPI_SUCCESS ? 0 : mpi_fail(r, "MPI_Bcast", e);
    if ((rc = settle(r, rc, 0)) != 0)
      return rc;
  }
  rc = report(r, a->verify, ok, err, bound, &ref);
  if (rc == 0 && a->verify && !ok)
    rc = fail(r, CLI_EXIT_VERIFY, "verification failed over %d ranks", r->size);
  return settle(r, rc, 0);
}

int main(int argc, char **argv) {
  cli_set_program_name("clreduce-mpi");
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    cli_error("MPI_Init failed");
    return CLI_EXIT_RUNTIME;
  }
  mpi_run r;
  cli_args args;
  memset(&r, 0, sizeof r);
  memset(&args, 0, sizeof args);
  int e, rc;
  /* MPI errors come back as statuses (they abort the job by default). */
  if ((e = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) !=
          MPI_SUCCESS ||
      (e = MPI_Comm_rank(MPI_COMM_WORLD, &r.rank)) != MPI_SUCCESS ||
      (e = MPI_Comm_size(MPI_COMM_WORLD, &r.size)) != MPI_SUCCESS) {
    rc = mpi_fail(&r, "setting up MPI_COMM_WORLD", e);
    cli_error("%s", r.msg);
  } else {
    rc = run(&r, argc, argv, &args);
  }
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
