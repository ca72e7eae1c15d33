/* clreduce: generate or read data, reduce or scan it on an OpenCL device,
 * time it, verify it against the CPU reference and report. */
#include "args.h"
#include "cli.h"
#include "datagen.h"
#include "exact_matrix.h"
#include "exact_sum.h"
#include "expr_eval.h"
#include "fileio.h"
#include "npy.h"
#include "report.h"
#include "scan_reference.h"
#include "segment_reference.h"

#include "progress.h"

#include "clr_config.h"
#include "clr_version.h"
#include "clreduce.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Everything one run owns; released by run_release. */
typedef struct run_state {
  cli_args *args;    /* load_input sets the type from a .npy --input */
  clr_context *ctx;  /* the device's, or the group's first device's   */
  clr_group *group;  /* several devices (--device=all or a list), or NULL */
  void *data;        /* the input values                                 */
  void *data2;       /* a dot product's second array, or NULL            */
  void *out;         /* scans: the device's output; segments: the results */
  int pinned[3];     /* data, data2, out came from clr_host_alloc        */
  uint64_t *offsets; /* segments: n_segments + 1 offsets              */
  uint64_t *ranges;  /* --ranges: n_segments (offset, length) pairs     */
  size_t n_segments; /* 0: not segmented; a matrix: its results      */
  int matrix;        /* --shape: a matrix's columns or rows (n_segments) */
  size_t n;
  size_t elem_size;
  double *kernel_ms, *h2d_ms, *d2h_ms; /* one per timed run       */
  double *wall_ms, *combine_ms;        /* the same, several devices */
  char data_desc[512];
  char what[128];          /* "coarse sum of float", for messages          */
  char segments_desc[256]; /* "1000 of length 100", "5 from 'f'"  */
  clr_map_eval map_eval;   /* a map expression's CPU evaluator */
  clr_expr_reference expr_ref; /* and its reference                */
  cli_report rep;
} run_state;

/* The arrays that move between host and device: from clr_host_alloc
 * (page-locked where the device has its own memory: copies at the bus's
 * speed), else from malloc.  which: 0 data, 1 data2, 2 out. */
static void *alloc_moving(run_state *st, size_t count, size_t size, int which) {
  /* (Pinned memory is one context's: a group's devices stage their parts
   * from ordinary memory, each through its own pinned blocks.) */
  void *p = count <= SIZE_MAX / size && !st->group
                ? clr_host_alloc(st->ctx, count * size > 0 ? count * size : 1)
                : NULL;
  st->pinned[which] = p != NULL;
  return p ? p : count <= SIZE_MAX / size ? malloc(count * size) : NULL;
}

static void free_moving(run_state *st, void *p, int which) {
  if (st->pinned[which])
    clr_host_free(st->ctx, p);
  else
    free(p);
}

static void run_release(run_state *st) {
  clr_map_eval_free(&st->map_eval);
  free_moving(st, st->data, 0);
  free_moving(st, st->data2, 1);
  free_moving(st, st->out, 2);
  free(st->offsets);
  free(st->ranges);
  free(st->kernel_ms);
  free(st->h2d_ms);
  free(st->d2h_ms);
  free(st->wall_ms);
  free(st->combine_ms);
  if (st->group)
    clr_group_release(st->group); /* and its contexts */
  else
    clr_context_release(st->ctx);
}

static int out_of_memory(size_t count, size_t size, const char *what) {
  cli_error("out of host memory: %zu %s of %zu bytes", count, what, size);
  return CLI_EXIT_RUNTIME;
}

/* A library failure on the context: its status, detail and, for a failed
 * build, the build log on the following lines.  The exit status is
 * cli_exit_status's: a value the library refuses (CLR_ERR_INVALID_ARGUMENT:
 * a --wg above the kernel's limit, a --coarse it cannot hold;
 * CLR_ERR_UNSUPPORTED: an op the kernel cannot do) came from the command
 * line and is a usage error; everything else is a runtime error. */
static int library_error(const run_state *st, const char *doing, clr_status s) {
  char what[256];
  snprintf(what, sizeof what, "%s %s", doing, st->what);
  const char *detail = st->group && clr_group_error(st->group)[0]
                           ? clr_group_error(st->group)
                           : clr_context_error(st->ctx);
  int rc = cli_status_error(what, s, detail);
  if (s == CLR_ERR_BUILD) {
    const char *log = clr_context_build_log(st->ctx);
    if (log && log[0]) {
      size_t len = strlen(log);
      fputs(log, stderr);
      if (log[len - 1] != '\n')
        fputc('\n', stderr);
    }
  }
  return rc;
}

/* What load_input's .npy reader asks and finds (cli_header_reader). */
typedef struct npy_read {
  cli_npy_ask ask;
  cli_npy_plan plan; /* plan.found: a .npy header was read */
} npy_read;

/* A .npy header, known by its magic (never by the file's name), refused
 * by cli_npy_input_plan's rules and messages (clreduce-mpi's too) when
 * clreduce cannot read it as one array of the type and count it needs. */
static int npy_header(void *ctx, const char *path, const unsigned char *buf,
                      size_t len, int at_end, cli_input_header *h) {
  npy_read *r = ctx;
  int rc = cli_npy_input_plan(path, buf, len, at_end, &r->ask, &r->plan);
  if (rc != 0) {
    cli_error("%s", r->plan.msg);
    return rc;
  }
  h->need = r->plan.need;
  if (r->plan.found) {
    h->size = len;
    h->elem_size = r->plan.elem_size;
    h->count = r->plan.npy.count;
  }
  return 0;
}

/* --input (raw values of --type, or a .npy file whose dtype gives the
 * type without --type), or the element count for generated data. */
static int load_input(run_state *st) {
  cli_args *a = st->args;
  if (!a->input) {
    const char *tname = clr_type_name(a->type);
    st->n = (size_t)a->n;
    if (a->n > SIZE_MAX || st->n > SIZE_MAX / clr_type_size(a->type)) {
      cli_error("--n=%llu %s values do not fit in this machine's memory",
                (unsigned long long)a->n, tname);
      return CLI_EXIT_RUNTIME;
    }
    return 0;
  }
  /* --n bounds the read: a pipe or device gives its first n values (and
   * /dev/zero ends); a regular file must hold exactly n. */
  cli_progress_phase("reading '%s'", a->input);
  /* (a matrix's .npy file holds R*C values, --n or not) */
  char shape_by[96];
  snprintf(shape_by, sizeof shape_by, "--shape=%llux%llu",
           (unsigned long long)a->rows, (unsigned long long)a->cols);
  npy_read r1 = {.ask = {.option = "--input",
                         .type = a->type,
                         .type_by = a->type_given ? "--type" : NULL,
                         .n = a->rows && !a->n_given ? a->rows * a->cols : a->n,
                         .n_by = a->n_given ? "--n"
                                 : a->rows  ? shape_by
                                            : NULL}};
  int rc = cli_read_input_hdr(a->input, clr_type_size(a->type),
                              clr_type_name(a->type), a->n_given ? a->n : 0,
                              npy_header, &r1, &st->data, &st->n);
  if (rc != 0)
    return rc;
  if (r1.plan.found)
    a->type = r1.plan.npy.type;
  /* The checks of the op on the type, left for now (cli_parse_args_
   * input_type). */
  if (!a->type_given && (rc = cli_check_type(a)) != 0)
    return rc;
  const char *tname = clr_type_name(a->type);
  if (a->n_given && a->n != (uint64_t)st->n) {
    cli_error("--n=%llu does not match the %zu %s values in '%s'",
              (unsigned long long)a->n, st->n, tname, a->input);
    return CLI_EXIT_USAGE;
  }
  if (a->rows && (uint64_t)st->n != a->rows * a->cols) {
    cli_error("%s needs %llu values: '%s' holds %zu %s values", shape_by,
              (unsigned long long)(a->rows * a->cols), a->input, st->n, tname);
    return CLI_EXIT_USAGE;
  }
  char file[320];
  cli_npy_describe(file, sizeof file, a->input, &r1.plan);
  snprintf(st->data_desc, sizeof st->data_desc, "%zu %s from %s", st->n, tname,
           file);
  if (a->input2) {
    size_t n2 = 0;
    cli_progress_phase("reading '%s'", a->input2);
    npy_read r2 = {.ask = {.option = "--input2",
                           .type = a->type,
                           .type_by = a->type_given ? "--type" : "--input",
                           .n = st->n,
                           .n_by = "--input"}};
    rc = cli_read_input_hdr(a->input2, clr_type_size(a->type), tname, st->n,
                            npy_header, &r2, &st->data2, &n2);
    if (rc != 0)
      return rc;
    if (n2 != st->n) {
      cli_error("--input2 '%s' holds %zu %s values, --input %zu", a->input2, n2,
                tname, st->n);
      return CLI_EXIT_USAGE;
    }
    cli_npy_describe(file, sizeof file, a->input2, &r2.plan);
    size_t len = strlen(st->data_desc);
    snprintf(st->data_desc + len, sizeof st->data_desc - len, " and from %s",
             file);
  }
  return 0;
}

/* --segments (a file of offsets) or --segment-length (rows of the
 * data); their values are checked by the library (a bad one is a usage
 * error). */
static int load_segments(run_state *st) {
  const cli_args *a = st->args;
  if (a->rows) {
    /* a matrix: a result per column (axis 0) or row (axis 1) */
    size_t rows = (size_t)a->rows, cols = (size_t)a->cols;
    st->matrix = 1;
    st->n_segments = a->axis == 0 ? cols : rows;
    if (a->axis == 0)
      snprintf(st->segments_desc, sizeof st->segments_desc,
               "%zu column%s of %zu row%s", cols, cols == 1 ? "" : "s", rows,
               rows == 1 ? "" : "s");
    else
      snprintf(st->segments_desc, sizeof st->segments_desc, "%zu row%s of %zu",
               rows, rows == 1 ? "" : "s", cols);
    return 0;
  }
  if (a->ranges) {
    size_t count = 0;
    cli_progress_phase("reading '%s'", a->ranges);
    int rc = cli_read_input(a->ranges, 2 * sizeof(uint64_t),
                            "(offset, length) pair of 64-bit values",
                            (void **)&st->ranges, &count);
    if (rc != 0)
      return rc;
    if (count == 0) {
      cli_error("--ranges '%s' holds no range", a->ranges);
      return CLI_EXIT_USAGE;
    }
    st->n_segments = count;
    snprintf(st->segments_desc, sizeof st->segments_desc,
             "%zu ranges from '%s'", count, a->ranges);
    return 0;
  }
  if (a->segments) {
    size_t count = 0;
    cli_progress_phase("reading '%s'", a->segments);
    int rc = cli_read_input(a->segments, sizeof(uint64_t), "64-bit offset",
                            (void **)&st->offsets, &count);
    if (rc != 0)
      return rc;
    if (count < 2) {
      cli_error("--segments '%s' holds %zu offset: a segment needs two (0 "
                "and n)",
                a->segments, count);
      return CLI_EXIT_USAGE;
    }
    st->n_segments = count - 1;
    snprintf(st->segments_desc, sizeof st->segments_desc, "%zu from '%s'",
             st->n_segments, a->segments);
    return 0;
  }
  uint64_t len = a->segment_length;
  size_t rows = (size_t)(st->n / len + (st->n % len != 0));
  st->offsets = malloc((rows + 1) * sizeof *st->offsets);
  if (!st->offsets)
    return out_of_memory(rows + 1, sizeof *st->offsets, "offsets");
  for (size_t s = 0; s <= rows; s++)
    st->offsets[s] = s == rows ? st->n : s * len;
  st->n_segments = rows;
  snprintf(st->segments_desc, sizeof st->segments_desc, "%zu of length %llu%s",
           rows, (unsigned long long)len,
           st->n % len ? " (the last shorter)" : "");
  return 0;
}

/* --device=all (any case, as the library reads it), or a comma-separated
 * list: several devices. */
static int several_devices(const char *d) {
  return d && (strcasecmp(d, "all") == 0 || strchr(d, ',') != NULL);
}

/* The group's devices, their weights, into the report. */
static int describe_group(run_state *st) {
  cli_report *r = &st->rep;
  double w[CLR_GROUP_MAX_DEVICES];
  r->n_devices = clr_group_size(st->group);
  clr_group_weights(st->group, w);
  for (size_t i = 0; i < r->n_devices; i++) {
    clr_status s = clr_context_device(clr_group_context(st->group, i),
                                      &r->parts[i].device);
    if (s != CLR_OK)
      return cli_status_error("querying the devices", s, NULL);
    r->parts[i].weight = w[i];
  }
  return 0;
}

/* -v: the library's log lines on stderr. */
static void log_stderr(void *user, const char *message) {
  (void)user;
  if (cli_before_message)
    cli_before_message();
  fprintf(stderr, "clreduce: %s\n", message);
}

static int create_context(run_state *st) {
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  char detail[512] = "";
  cfg.platform = st->args->platform;
  cfg.device = st->args->device;
  if (st->args->verbose)
    cfg.log = log_stderr;
  clr_status s;
  if (several_devices(cfg.device)) {
    s = clr_group_create(&cfg, cfg.device, &st->group, detail, sizeof detail);
    st->ctx = s == CLR_OK ? clr_group_context(st->group, 0) : NULL;
  } else {
    s = clr_context_create(&cfg, &st->ctx, detail, sizeof detail);
  }
  if (s != CLR_OK) {
    st->ctx = NULL;
    st->group = NULL;
    int rc = cli_status_error(several_devices(cfg.device)
                                  ? "creating the OpenCL contexts"
                                  : "creating the OpenCL context",
                              s, detail);
    /* a --platform or --device that selects nothing: a usage error */
    return cli_selects_nothing(st->args, s) ? CLI_EXIT_USAGE : rc;
  }
  if (st->group) {
    int rc = describe_group(st);
    if (rc != 0)
      return rc;
  }
  st->rep.kernel_dir = clr_context_kernel_dir(st->ctx);
  s = clr_context_device(st->ctx, &st->rep.device);
  if (s != CLR_OK)
    return cli_status_error("querying the device", s,
                            clr_context_error(st->ctx));
  return 0;
}

static int generate_data(run_state *st) {
  const cli_args *a = st->args;
  if (st->data)
    return 0; /* read from --input */
  st->data = alloc_moving(st, st->n, st->elem_size, 0);
  if (!st->data)
    return out_of_memory(st->n, st->elem_size, "input values");
  /* (clr_gen_data_slice reports each block: both arrays' planned here) */
  cli_progress_phase_work((uint64_t)st->n * (a->dot ? 2 : 1),
                          "generating %zu %s values", st->n,
                          clr_type_name(a->type));
  /* In clreduce-mpi's blocks (clr_gen_data_slice over the whole array):
   * the same --n and --seed give the same array there, whatever the
   * number of ranks. */
  if (!clr_gen_data_slice(a->op, a->type, a->seed, st->n, 0, st->data, st->n,
                          st->data_desc, sizeof st->data_desc))
    return out_of_memory(CLR_GEN_BLOCK, st->elem_size, "generated values");
  if (a->dot) { /* the second array: the next seed's */
    char desc[256];
    st->data2 = alloc_moving(st, st->n, st->elem_size, 1);
    if (!st->data2)
      return out_of_memory(st->n, st->elem_size, "second-array values");
    if (!clr_gen_data_slice(a->op, a->type, a->seed + 1, st->n, 0, st->data2,
                            st->n, desc, sizeof desc))
      return out_of_memory(CLR_GEN_BLOCK, st->elem_size, "generated values");
    size_t len = strlen(st->data_desc);
    snprintf(st->data_desc + len, sizeof st->data_desc - len, ", dot with %s",
             desc);
  }
  return 0;
}

/* One reduction (a dot product with --dot / --input2), over the group's
 * devices when there are several. */
static clr_status reduce_once(run_state *st, const clr_options *opt,
                              clr_value *result) {
  const cli_args *a = st->args;
  if (st->group && st->data2)
    return clr_group_dot_host(st->group, opt, a->type, st->data, st->data2,
                              st->n, result);
  if (st->group)
    return clr_group_reduce_host(st->group, opt, a->op, a->type, st->data,
                                 st->n, result);
  if (st->data2)
    return clr_dot_host(st->ctx, opt, a->type, st->data, st->data2, st->n,
                        result);
  return clr_reduce_host(st->ctx, opt, a->op, a->type, st->data, st->n, result);
}

/* The outcome of an expression's CPU reference (rc of src/check's
 * expression calls: 0, 1 refused with why, -1 out of memory) as the
 * command's status. */
static int expr_reference_status(const run_state *st, int rc, const char *why) {
  if (rc < 0)
    return out_of_memory(st->n, sizeof(double), "expression values");
  if (rc > 0) {
    cli_error("no CPU reference for %s: %s", st->what, why);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* The reference of a map expression: the expression evaluated on the CPU
 * from the input (src/check/expr_eval.c: OpenCL C's typed semantics), never
 * on the device, folded by the plain loops; its check (in run_reduce) adds
 * the allowance for the device's lawful differences (expr_eval.h). */
static int expr_reference(run_state *st, clr_reference *ref) {
  const cli_args *a = st->args;
  char why[512];
  int rc = clr_map_eval_init(&st->map_eval, a->opt.map_expr, a->type,
                             st->data2 != NULL, why, sizeof why);
  if (rc == 0)
    rc = clr_ref_reduce_expr(&st->map_eval, &a->opt, a->op, a->type, st->data,
                             st->data2, st->n, &st->expr_ref, why, sizeof why);
  if ((rc = expr_reference_status(st, rc, why)) != 0)
    return rc;
  *ref = st->expr_ref.ref;
  return 0;
}

/* The CPU reference of the run: the plain loop, or through the values a
 * built-in map or a dot product gives (var and std: with --ddof's
 * divisor). */
static int make_reference(run_state *st, clr_reference *ref) {
  const cli_args *a = st->args;
  clr_type rt = clr_options_result_type(&a->opt, a->op, a->type);
  if (a->opt.map == CLR_MAP_EXPR)
    return expr_reference(st, ref);
  if (!clr_ref_reduce_opt(&a->opt, a->op, a->type, st->data, st->data2, st->n,
                          ref))
    return out_of_memory(st->n, clr_type_size(rt), "mapped values");
  return 0;
}

static int prepare(run_state *st) {
  const cli_args *a = st->args;
  clr_timing t = CLR_TIMING_INIT;
  cli_progress_phase("%s: building the kernels", st->what);
  if (st->group) { /* every device's programs, at once */
    clr_group_timing gt;
    clr_status s = clr_group_prepare(st->group, &a->opt, a->op, a->type);
    if (s != CLR_OK)
      return library_error(st, "building", s);
    clr_group_last_timing(st->group, &gt);
    st->rep.build_ms = gt.total_ms;
    return 0;
  }
  clr_status s = clr_prepare(st->ctx, &a->opt, a->op, a->type);
  if (s != CLR_OK)
    return library_error(st, "building", s);
  s = clr_last_timing(st->ctx, &t);
  if (s != CLR_OK)
    return library_error(st, "reading the build time of", s);
  st->rep.build_ms = t.build_ms;
  return 0;
}

/* The last call's timing: the context's, or over a group's devices the
 * first used device's shape and, the parts running at once, the slowest
 * part's times; each part's into the report. */
static clr_status last_timing(run_state *st, clr_timing *t) {
  if (!st->group)
    return clr_last_timing(st->ctx, t);
  cli_report *r = &st->rep;
  size_t counts[CLR_GROUP_MAX_DEVICES];
  clr_group_timing gt;
  clr_group_last_timing(st->group, &gt);
  clr_group_split(st->group, st->n, counts);
  int first = 1;
  for (size_t i = 0; i < r->n_devices; i++) {
    clr_timing ti = CLR_TIMING_INIT;
    struct cli_device_part *p = &r->parts[i];
    p->n = counts[i];
    p->kernel_ms = p->h2d_ms = p->d2h_ms = 0;
    if (!counts[i])
      continue;
    clr_status s = clr_last_timing(clr_group_context(st->group, i), &ti);
    if (s != CLR_OK)
      return s;
    p->kernel_ms = ti.kernel_ms;
    p->h2d_ms = ti.h2d_ms;
    p->d2h_ms = ti.d2h_ms;
    if (first)
      *t = ti;
    first = 0;
    t->kernel_ms = ti.kernel_ms > t->kernel_ms ? ti.kernel_ms : t->kernel_ms;
    t->h2d_ms = ti.h2d_ms > t->h2d_ms ? ti.h2d_ms : t->h2d_ms;
    t->d2h_ms = ti.d2h_ms > t->d2h_ms ? ti.d2h_ms : t->d2h_ms;
  }
  t->total_ms = gt.total_ms;
  t->error_depth = gt.error_depth;
  return CLR_OK;
}

/* The reported run's timing, t, and its passes, read from the context
 * whose shape t has (last_timing: the context's, or a group's first
 * device with elements). */
static void report_timing(run_state *st, const clr_timing *t) {
  cli_report *r = &st->rep;
  clr_context *shape = st->ctx;
  for (size_t i = 0; st->group && i < r->n_devices; i++)
    if (r->parts[i].n) {
      shape = clr_group_context(st->group, i);
      break;
    }
  r->timing = *t;
  r->n_passes = 0;
  for (size_t i = 0; i < t->n_passes && i < CLR_MAX_PASSES; i++) {
    clr_pass_info p = CLR_PASS_INFO_INIT;
    if (clr_last_timing_pass(shape, i, &p) != CLR_OK)
      break;
    r->passes[r->n_passes++] = p;
  }
}

/* Record timed run i (0-based) from the last call's timing. */
static int record_timing(run_state *st, unsigned i, clr_timing *t) {
  clr_status s = last_timing(st, t);
  if (s != CLR_OK)
    return library_error(st, "reading the timing of", s);
  st->kernel_ms[i] = t->kernel_ms;
  st->h2d_ms[i] = t->h2d_ms;
  st->d2h_ms[i] = t->d2h_ms;
  if (st->group) {
    clr_group_timing gt;
    clr_group_last_timing(st->group, &gt);
    st->wall_ms[i] = gt.total_ms;
    st->combine_ms[i] = gt.combine_ms;
  }
  return 0;
}

/* After run `run` of a call that returned s: the failure, or the timing
 * (timed runs, 1-based, are recorded; the warm-up, run 0, is only read). */
/* The progress line's phase before run (0: the warm-up) of the loops. */
static void run_phase(const run_state *st, unsigned run) {
  if (run == 0)
    cli_progress_phase("%s: the warm-up run", st->what);
  else
    cli_progress_phase("%s: timed run %u of %u", st->what, run,
                       st->args->repeat);
}

static int after_run(run_state *st, unsigned run, clr_status s, clr_timing *t) {
  cli_progress_phase("%s: run %u of %u done", st->what, run, st->args->repeat);
  if (s != CLR_OK)
    return library_error(st, "running", s);
  if (run > 0)
    return record_timing(st, run - 1, t);
  if ((s = last_timing(st, t)) != CLR_OK)
    return library_error(st, "reading the timing of", s);
  return 0;
}

/* One warm-up and --repeat timed reductions, each checked against the
 * reference (when verifying). */
static int run_reduce(run_state *st) {
  const cli_args *a = st->args;
  cli_report *r = &st->rep;
  clr_reference ref;
  /* An exact sum has one right answer: checked by equality with the CPU's
   * exact sum, not against an error bound.  (clr_ref_exact_sum is the
   * reference of the op sum alone: a mean in exact mode keeps its bound.) */
  int exact = a->opt.exact && a->op == CLR_SUM &&
              (a->type == CLR_FLOAT || a->type == CLR_DOUBLE);
  clr_value exact_ref;
  for (unsigned run = 0; run <= a->repeat; run++) {
    clr_value result;
    clr_timing t = CLR_TIMING_INIT;
    run_phase(st, run);
    clr_status s = reduce_once(st, &a->opt, &result);
    int rc = after_run(st, run, s, &t);
    if (rc != 0)
      return rc;
    if (run == 0 && st->data2)
      r->build_ms = t.build_ms; /* clr_prepare builds one-array kernels */
    /* After the warm-up, which shows a bad map expression or option
     * before the reference spends time on it. */
    if (run == 0 && a->verify) {
      cli_progress_phase("%s: the CPU reference", st->what);
      if ((rc = make_reference(st, &ref)) != 0)
        return rc;
      if (exact) {
        cli_progress_phase("%s: the CPU's exact sum", st->what);
        clr_ref_exact_sum(a->type, st->data, st->n, &exact_ref);
      }
    }
    int keep = run == a->repeat && r->runs_failed == 0;
    if (a->verify) {
      clr_check chk;
      if (exact) {
        memset(&chk, 0, sizeof chk);
        chk.ok = clr_ref_exact_equal(&exact_ref, &result);
        chk.exact = 1;
        chk.error = chk.ok ? 0.0
                           : fabs(clr_value_as_double(&result) -
                                  clr_value_as_double(&exact_ref));
        ref.value = exact_ref;
      } else {
        if (a->opt.map == CLR_MAP_EXPR)
          clr_ref_check_expr(&st->expr_ref, &result, t.error_depth, &chk);
        else
          clr_ref_check(&ref, &result, t.error_depth, &chk);
      }
      r->runs_checked++;
      if (!chk.ok && r->runs_failed++ == 0) {
        r->failed_run = run + 1;
        keep = 1;
      }
      if (keep) {
        r->reference = ref.value;
        r->exact = chk.exact;
        r->overflowed = chk.overflowed;
        r->error = chk.error;
        r->bound = chk.bound;
        r->verdict = chk.ok ? CLI_VERIFY_PASSED : CLI_VERIFY_FAILED;
      }
    }
    if (keep) {
      r->result = result;
      report_timing(st, &t);
    }
  }
  return 0;
}

/* A check of every element (a scan) or segment into the report: the
 * verdict, the last one's reference, the worst one. */
static void report_elements(cli_report *r, const clr_scan_check *chk) {
  r->elements = *chk;
  r->verdict = chk->ok ? CLI_VERIFY_PASSED : CLI_VERIFY_FAILED;
  r->reference = chk->ref_last;
  r->exact = chk->exact;
  r->error = chk->worst_error;
  r->bound = chk->worst_bound;
}

/* count values of type at data to path: a 1-D .npy file when its name
 * ends in .npy, else raw bytes (elem_size each: records where that is not
 * the type's size, which .npy does not take). */
static int write_array(const char *option, const char *path, clr_type type,
                       size_t elem_size, const void *data, size_t count) {
  if (!cli_npy_name(path))
    return cli_write_output(path, data, count * elem_size);
  unsigned char head[128];
  uint64_t shape[1] = {count};
  size_t hsize = elem_size == clr_type_size(type)
                     ? cli_npy_header(head, sizeof head, type, 1, shape)
                     : 0;
  if (hsize == 0) {
    cli_error("%s=%s: these values (%zu-byte records) have no .npy dtype: "
              "give a name not ending in .npy for raw bytes",
              option, path, elem_size);
    return CLI_EXIT_USAGE;
  }
  return cli_write_output2(path, head, hsize, data, count * elem_size);
}

/* --output gets the count values of st->out (type, elem_size bytes each)
 * when they passed (or were not checked). */
static int write_output(run_state *st, clr_type type, size_t elem_size,
                        size_t count) {
  const cli_args *a = st->args;
  if (!a->output || st->rep.verdict == CLI_VERIFY_FAILED)
    return 0;
  int rc = write_array("--output", a->output, type, elem_size, st->out, count);
  if (rc == 0)
    st->rep.output = a->output;
  return rc;
}

/* --save-input: the input array (generated or read; a dot product's
 * first), before the run. */
static int save_input(run_state *st) {
  const cli_args *a = st->args;
  if (!a->save_input)
    return 0;
  return write_array("--save-input", a->save_input, a->type, st->elem_size,
                     st->data, st->n);
}

/* One warm-up and --repeat timed scans (segmented with --scan and
 * segments); the last output is checked, element by element. */
static int run_scan(run_state *st) {
  const cli_args *a = st->args;
  cli_report *r = &st->rep;
  clr_type otype = clr_scan_output_type(&a->opt, a->type);
  size_t osize = clr_type_size(otype);
  st->out = alloc_moving(st, st->n, osize, 2);
  if (!st->out)
    return out_of_memory(st->n, osize, "output values");
  for (unsigned run = 0; run <= a->repeat; run++) {
    clr_timing t = CLR_TIMING_INIT;
    run_phase(st, run);
    clr_status s =
        st->group     ? clr_group_scan_host(st->group, &a->opt, a->op, a->type,
                                            st->data, st->out, st->n)
        : st->offsets ? clr_scan_segments_host(st->ctx, &a->opt, a->op, a->type,
                                               st->data, st->out, st->n,
                                               st->offsets, st->n_segments)
                      : clr_scan_host(st->ctx, &a->opt, a->op, a->type,
                                      st->data, st->out, st->n);
    int rc = after_run(st, run, s, &t);
    if (rc != 0)
      return rc;
    if (run == 0 && st->offsets) /* (no clr_prepare built them) */
      r->build_ms = t.build_ms;
    if (run > 0)
      report_timing(st, &t);
  }
  /* The result is the last element: the scan's total (inclusive). */
  memset(&r->result, 0, sizeof r->result);
  r->result.type = otype;
  memcpy(&r->result.v, (unsigned char *)st->out + (st->n - 1) * osize, osize);
  if (a->verify) {
    clr_scan_check chk;
    cli_progress_phase("%s: checking every element against the CPU", st->what);
    if (st->offsets)
      clr_ref_segmented_scan_check(
          a->op, a->type, otype, a->opt.exclusive, st->data, st->out,
          st->offsets, st->n_segments, r->timing.error_depth, 0, &chk);
    else
      clr_ref_scan_check_to(a->op, a->type, otype, a->opt.exclusive, st->data,
                            st->out, st->n, r->timing.error_depth, 0, &chk);
    report_elements(r, &chk);
  }
  return write_output(st, otype, osize, st->n);
}

/* The check of segments, ranges or a matrix's columns or rows of a map
 * expression against its CPU reference (src/check/expr_eval.c), each
 * element's i counted from the array's first element (a matrix's: its
 * flat index r*C + c), as the kernels count it. */
static int expr_segments_check(run_state *st, clr_segments_check *chk) {
  const cli_args *a = st->args;
  char why[512];
  int rc = clr_map_eval_init(&st->map_eval, a->opt.map_expr, a->type, 0, why,
                             sizeof why);
  if (rc == 0 && st->matrix)
    rc = clr_ref_matrix_check_expr(
        &st->map_eval, &a->opt, a->op, a->type, st->data, (size_t)a->rows,
        (size_t)a->cols, (size_t)a->cols, a->axis, st->out,
        st->rep.timing.error_depth, chk, why, sizeof why);
  else if (rc == 0)
    rc = clr_ref_segments_check_expr(
        &st->map_eval, &a->opt, a->op, a->type, st->data, st->offsets,
        st->ranges, st->n_segments, st->out, st->rep.timing.error_depth, chk,
        why, sizeof why);
  return expr_reference_status(st, rc, why);
}

/* One warm-up and --repeat timed segmented reductions (or reductions of
 * ranges); the last results are checked segment by segment and written
 * to --output. */
static int run_segments(run_state *st) {
  const cli_args *a = st->args;
  cli_report *r = &st->rep;
  clr_type rt = clr_options_result_type(&a->opt, a->op, a->type);
  size_t rsize = clr_result_bytes(&a->opt, a->op, a->type), S = st->n_segments;
  st->out = alloc_moving(st, S, rsize, 2);
  if (!st->out)
    return out_of_memory(S, rsize, "segment results");
  /* a matrix (--shape): clr_run's CLR_REQ_MATRIX of host arrays */
  clr_request q;
  clr_request_init(&q);
  q.kind = CLR_REQ_MATRIX;
  q.op = a->op;
  q.type = a->type;
  q.input.host = st->data;
  q.output.host = st->out;
  q.options = &a->opt;
  q.rows = (size_t)a->rows;
  q.cols = (size_t)a->cols;
  q.axis = a->axis;
  for (unsigned run = 0; run <= a->repeat; run++) {
    clr_timing t = CLR_TIMING_INIT;
    run_phase(st, run);
    clr_status s =
        st->matrix ? clr_run(st->ctx, &q, NULL)
        : st->ranges
            ? clr_reduce_ranges_host(st->ctx, &a->opt, a->op, a->type, st->data,
                                     st->n, st->ranges, S, st->out)
            : clr_reduce_segments_host(st->ctx, &a->opt, a->op, a->type,
                                       st->data, st->n, st->offsets, S,
                                       st->out);
    int rc = after_run(st, run, s, &t);
    if (rc != 0)
      return rc;
    if (run == 0)
      r->build_ms = t.build_ms;
    else
      report_timing(st, &t);
  }
  r->result = clr_result_at(a->op, rt, st->out, S - 1); /* the last one's */
  if (a->verify)
    cli_progress_phase("%s: checking every %s against the CPU", st->what,
                       cli_segment_unit(r));
  if (a->verify && a->opt.map == CLR_MAP_EXPR) {
    clr_segments_check chk;
    int rc = expr_segments_check(st, &chk);
    if (rc != 0)
      return rc;
    report_elements(r, &chk);
  } else if (a->verify && st->matrix &&
             clr_ref_exact_matrix_applies(&a->opt, a->op, a->type)) {
    /* exact sums (and means) of a matrix: each column's or row's by
     * equality with the CPU's exact sum of it (a mean: that sum divided
     * once), no error bound */
    clr_segments_check chk;
    if (!clr_ref_matrix_check_exact(&a->opt, a->op, a->type, st->data,
                                    (size_t)a->rows, (size_t)a->cols,
                                    (size_t)a->cols, a->axis, st->out, &chk))
      return out_of_memory(S, rsize, "reference values");
    report_elements(r, &chk);
  } else if (a->verify) {
    clr_segments_check chk;
    /* (ranges: each where it lies, each distinct one once; the options
     * give the map, the result type and var's and std's ddof) */
    int ok = st->matrix
                 ? clr_ref_matrix_check_opt(&a->opt, a->op, a->type, st->data,
                                            (size_t)a->rows, (size_t)a->cols,
                                            (size_t)a->cols, a->axis, st->out,
                                            r->timing.error_depth, &chk)
             : st->ranges
                 ? clr_ref_ranges_check_opt(&a->opt, a->op, a->type, st->data,
                                            st->ranges, S, st->out,
                                            r->timing.error_depth, &chk)
                 : clr_ref_segments_check_opt(&a->opt, a->op, a->type, st->data,
                                              st->offsets, S, st->out,
                                              r->timing.error_depth, &chk);
    if (!ok)
      return out_of_memory(S, rsize, "reference values");
    report_elements(r, &chk);
  }
  return write_output(st, rt, rsize, S);
}

/* The one line on stderr for a failed verification (the report on stdout
 * has the details): what ran, what the device returned, what the CPU
 * reference says, and the error against its bound. */
static void verify_failure_message(const run_state *st) {
  const cli_report *r = &st->rep;
  const cli_args *a = st->args;
  char got[64], want[64], outnote[64] = "";
  if (r->is_scan || r->segments) {
    const char *unit = cli_per_segment(r) ? cli_segment_unit(r) : "element";
    const char *where = cli_per_segment(r) ? cli_segment_unit(r) : "index";
    size_t count = cli_per_segment(r) ? r->segments : r->n;
    cli_format_number(&r->elements.got_worst, got, sizeof got);
    cli_format_number(&r->elements.ref_worst, want, sizeof want);
    if (a->output)
      snprintf(outnote, sizeof outnote, "; --output not written");
    if (r->exact)
      cli_error("verification failed (%s%s%s): %zu of %zu %ss differ from "
                "the reference, first at %s %zu: result %s, reference %s%s",
                r->exclusive ? "exclusive " : "", st->what,
                cli_per_segment(r) ? "" : " scan", r->elements.n_bad, count,
                unit, where, r->elements.worst_index, got, want, outnote);
    else
      cli_error("verification failed (%s%s%s): %zu of %zu %ss outside their "
                "error bound, worst at %s %zu: result %s, reference %s, "
                "error %.3g, bound %.3g%s",
                r->exclusive ? "exclusive " : "", st->what,
                cli_per_segment(r) ? "" : " scan", r->elements.n_bad, count,
                unit, where, r->elements.worst_index, got, want, r->error,
                r->bound, outnote);
    return;
  }
  char runs[96] = "", gotr[320], wantr[320];
  cli_format_result(r, &r->result, gotr, sizeof gotr);
  cli_format_result(r, &r->reference, wantr, sizeof wantr);
  if (r->runs_checked > 1)
    snprintf(runs, sizeof runs,
             " (%u of %u runs failed, the first was run %u; run 1 is the "
             "warm-up)",
             r->runs_failed, r->runs_checked, r->failed_run);
  if (r->exact)
    cli_error("verification failed (%s): result %s, reference %s (an exact "
              "match is required)%s",
              st->what, gotr, wantr, runs);
  else
    cli_error("verification failed (%s): result %s, reference %s, error "
              "%.3g, bound %.3g%s",
              st->what, gotr, wantr, r->error, r->bound, runs);
}

static void summarize(run_state *st) {
  const cli_args *a = st->args;
  cli_report *r = &st->rep;
  unsigned count = a->repeat;
  r->kernel_ms = cli_median(st->kernel_ms, count); /* sorts */
  r->kernel_ms_min = st->kernel_ms[0];
  r->kernel_ms_max = st->kernel_ms[count - 1];
  r->h2d_ms = cli_median(st->h2d_ms, count);
  r->d2h_ms = cli_median(st->d2h_ms, count);
  if (st->group) {
    r->wall_ms = cli_median(st->wall_ms, count);
    r->combine_ms = cli_median(st->combine_ms, count);
  }
  /* A scan reads its input and writes its output; a dot product reads
   * two arrays. */
  double bytes = (double)st->n * (double)st->elem_size * (st->data2 ? 2 : 1);
  /* Segments: the values and the offsets; ranges: their values and
   * pairs. */
  if (st->ranges) {
    bytes = 0;
    for (size_t k = 0; k < st->n_segments; k++)
      bytes += (double)st->ranges[2 * k + 1] * (double)st->elem_size;
    bytes += (double)st->n_segments * 2 * sizeof(uint64_t);
  } else if (r->segments && !st->matrix) { /* (a matrix: its values) */
    bytes += (double)(r->segments + 1) * sizeof(uint64_t);
  }
  if (r->is_scan)
    bytes += (double)st->n *
             (double)clr_type_size(clr_scan_output_type(&a->opt, a->type));
  r->gbps = r->kernel_ms > 0 ? bytes / (r->kernel_ms * 1e-3) / 1e9 : 0.0;
  if (!st->group)
    return;
  /* Several devices: the call's bandwidth from its wall time (the parts
   * run at once: the slowest part's kernel time alone overstates it),
   * each part's from its own elements and kernel time. */
  r->gbps = r->wall_ms > 0 ? bytes / (r->wall_ms * 1e-3) / 1e9 : 0.0;
  for (size_t i = 0; i < r->n_devices; i++) {
    struct cli_device_part *p = &r->parts[i];
    double part = st->n ? bytes * (double)p->n / (double)st->n : 0.0;
    p->gbps = p->kernel_ms > 0 ? part / (p->kernel_ms * 1e-3) / 1e9 : 0.0;
  }
}

static int run_steps(run_state *st) {
  const cli_args *a = st->args;
  cli_report *r = &st->rep;
  int rc;
  /* First: a .npy --input gives the type. */
  if ((rc = load_input(st)) != 0)
    return rc;
  st->elem_size = clr_type_size(a->type);
  int segmented = a->segments || a->segment_length || a->ranges || a->rows;
  snprintf(st->what, sizeof st->what, "%s %s of %s%s%s%s",
           a->rows     ? (a->axis == 0 ? "column" : "row")
           : segmented ? "segmented"
                       : clr_kernel_name(a->opt.kernel),
           a->dot ? "dot" : clr_op_name(a->op), clr_type_name(a->type),
           a->opt.map ? " (map " : "",
           a->opt.map == CLR_MAP_EXPR ? "expression"
           : a->opt.map               ? clr_map_name(a->opt.map)
                                      : "",
           a->opt.map ? ")" : "");
  if (segmented && several_devices(a->device)) {
    cli_error("%s run on one device; --device=%s names several",
              a->rows ? "matrices (--shape)" : "segmented reductions and scans",
              a->device);
    return CLI_EXIT_USAGE;
  }
  if ((segmented && (rc = load_segments(st)) != 0) ||
      (rc = create_context(st)) != 0 || (rc = generate_data(st)) != 0 ||
      (rc = save_input(st)) != 0)
    return rc;
  /* clr_prepare builds one-array kernels: a dot product's and a segmented
   * reduction's are built (and timed) by their warm-up run. */
  if (!a->dot && !segmented && (rc = prepare(st)) != 0)
    return rc;

  st->kernel_ms = malloc(a->repeat * sizeof *st->kernel_ms);
  st->h2d_ms = malloc(a->repeat * sizeof *st->h2d_ms);
  st->d2h_ms = malloc(a->repeat * sizeof *st->d2h_ms);
  st->wall_ms = calloc(a->repeat, sizeof *st->wall_ms);
  st->combine_ms = calloc(a->repeat, sizeof *st->combine_ms);
  if (!st->kernel_ms || !st->h2d_ms || !st->d2h_ms || !st->wall_ms ||
      !st->combine_ms)
    return out_of_memory(a->repeat, sizeof(double), "timings");

  /* a segmented scan's default kernel (its own) is reported as ever */
  r->kernel =
      a->opt.kernel == CLR_KERNEL_DEFAULT ? CLR_REDUCE_COARSE : a->opt.kernel;
  r->op = a->op;
  r->ddof = a->opt.ddof;
  r->map = a->opt.map == CLR_MAP_EXPR ? a->opt.map_expr
           : a->opt.map               ? clr_map_name(a->opt.map)
                                      : NULL;
  r->dot = a->dot;
  r->exact_mode = a->opt.exact;
  r->type = a->type;
  r->is_scan = clr_kernel_is_scan(a->opt.kernel) || a->scan;
  r->exclusive = a->opt.exclusive;
  r->result_type = r->is_scan
                       ? clr_scan_output_type(&a->opt, a->type)
                       : clr_options_result_type(&a->opt, a->op, a->type);
  r->n = st->n;
  r->seed = a->seed;
  r->generated = a->input == NULL;
  r->data = st->data_desc;
  r->repeat = a->repeat;
  r->verdict = CLI_VERIFY_SKIPPED;

  r->segments = st->n_segments;
  r->segments_desc = segmented ? st->segments_desc : NULL;
  r->matrix = st->matrix;
  r->axis = a->axis;
  r->rows = (size_t)a->rows;
  r->cols = (size_t)a->cols;
  rc = r->is_scan  ? run_scan(st)
       : segmented ? run_segments(st)
                   : run_reduce(st);
  if (rc != 0)
    return rc;
  summarize(st);
  cli_progress_stop(); /* the report, where both go to one terminal */
  if (a->json)
    cli_report_json(stdout, r);
  else
    cli_report_human(stdout, r);
  if (r->verdict == CLI_VERIFY_FAILED) {
    fflush(stdout); /* the report first, where both go to one terminal */
    verify_failure_message(st);
    return CLI_EXIT_VERIFY;
  }
  return CLI_EXIT_OK;
}

static int run(cli_args *a) {
  run_state st;
  memset(&st, 0, sizeof st);
  st.args = a;
  cli_progress_start(a->progress);
  int rc = run_steps(&st);
  cli_progress_stop();
  run_release(&st);
  return rc;
}

static int list_devices(const cli_args *a) {
  size_t cap = 16, count = 0;
  clr_device_desc *devs = NULL;
  for (;;) {
    devs = calloc(cap, sizeof *devs);
    if (!devs)
      return out_of_memory(cap, sizeof *devs, "device descriptions");
    clr_status s = clr_list_devices(devs, cap, &count);
    if (s != CLR_OK) {
      free(devs);
      return cli_status_error("listing devices", s, NULL);
    }
    if (count <= cap)
      break;
    free(devs);
    cap = count;
  }
  if (a->json)
    cli_list_devices_json(stdout, devs, count);
  else
    cli_list_devices_human(stdout, devs, count);
  free(devs);
  return 0;
}

/* --cache-info, --cache-clear (clear): the program cache a run would use
 * ($CLREDUCE_CACHE_DIR ...), seen or cleared; no device needed. */
static int cache_action(const cli_args *a, int clear) {
  char dir[4096], detail[1024] = "";
  cli_cache_report r = {.dir = dir, .cleared = clear};
  clr_status s = clr_cache_dir(NULL, dir, sizeof dir);
  if (s == CLR_OK)
    s = clear
            ? clr_cache_clear(NULL, &r.entries, &r.bytes, detail, sizeof detail)
            : clr_cache_usage(NULL, &r.entries, &r.bytes, &r.max_bytes, detail,
                              sizeof detail);
  if (s != CLR_OK)
    return cli_status_error(clear ? "clearing the program cache"
                                  : "reading the program cache",
                            s, detail);
  if (a->json)
    cli_cache_json(stdout, &r);
  else
    cli_cache_human(stdout, &r);
  return CLI_EXIT_OK;
}

/* Output that could not be written (a full disk, a closed pipe) is a
 * runtime error. */
static int finish_stdout(int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error("cannot write to standard output");
    return rc ? rc : CLI_EXIT_RUNTIME;
  }
  return rc;
}

int main(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse_args_input_type(argc, argv, &args);
  if (rc != 0)
    return rc;
  switch (args.action) {
  case CLI_ACTION_HELP:
    cli_print_usage(stdout);
    rc = CLI_EXIT_OK;
    break;
  case CLI_ACTION_VERSION:
    printf("clreduce %s (commit %s)\n", CLR_VERSION,
           clr_build_commit() ? clr_build_commit()
                              : "unknown: not built from a git checkout");
    rc = CLI_EXIT_OK;
    break;
  case CLI_ACTION_LIST_KERNELS:
    cli_list_kernels(stdout, args.json);
    rc = CLI_EXIT_OK;
    break;
  case CLI_ACTION_LIST_DEVICES:
    rc = list_devices(&args);
    break;
  case CLI_ACTION_CACHE_INFO:
  case CLI_ACTION_CACHE_CLEAR:
    rc = cache_action(&args, args.action == CLI_ACTION_CACHE_CLEAR);
    break;
  default:
    rc = run(&args);
    break;
  }
  return finish_stdout(rc);
}
