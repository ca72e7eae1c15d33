/* clreduce-bench: every kernel over a range of sizes, timed with the
 * library's profiling events (median of many runs after a warm-up),
 * against the device's own read bandwidth measured in the same run by a
 * plain streaming kernel.  Prints a table; writes CSV, JSON and an SVG
 * plot of GB/s against n on request.  --matrix times a matrix's rows or
 * columns (clr_run's CLR_REQ_MATRIX) for each of a list of shapes
 * instead of sizes.  --autotune searches and stores the device's launch
 * parameters instead.  Progress goes to stderr. */
#include "args.h"
#include "cli.h"
#include "clr_version.h"
#include "clreduce.h"
#include "datagen.h"
#include "exact_matrix.h"
#include "exact_sum.h"
#include "fileio.h"
#include "group_paths.h"
#include "host_paths.h"
#include "plot.h"
#include "progress.h"
#include "reference.h"
#include "scan_reference.h"
#include "segment_reference.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
/* What a row measures: a kernel (clr_kernel), the exact sum (--exact:
 * clr_options.exact, whose kernel is its own), a segmented reduction of
 * one shape (--segments): random lengths 1..200, three long segments,
 * rows of 1000, or a matrix's rows (axis 1) or columns (axis 0) of one
 * shape (--matrix: clr_run's CLR_REQ_MATRIX). */
enum {
  ENTRY_EXACT = CLR_KERNEL_COUNT,
  ENTRY_SEG_RANDOM,
  ENTRY_SEG_LONG,
  ENTRY_SEG_ROWS,
  ENTRY_MATRIX_ROWS,
  ENTRY_MATRIX_COLS,
  N_ENTRIES
};

static const char *entry_name(int e) {
  static const char *const extra[] = {"exact",       "seg-random",
                                      "seg-3-long",  "seg-rows-1000",
                                      "matrix-rows", "matrix-cols"};
  return e >= ENTRY_EXACT ? extra[e - ENTRY_EXACT]
                          : clr_kernel_name((clr_kernel)e);
}

static int is_segmented(int e) {
  return e >= ENTRY_SEG_RANDOM && e <= ENTRY_SEG_ROWS;
}

static int is_matrix(int e) {
  return e == ENTRY_MATRIX_ROWS || e == ENTRY_MATRIX_COLS;
}

/* A matrix of --matrix: rows x cols elements (row-major, no padding), a
 * result per row (axis 1) or per column (axis 0). */
typedef struct mshape {
  size_t rows, cols;
  int axis;
} mshape;

#define MAX_SHAPES 64

/* --matrix's shapes unless --shapes: 1e8 elements each, rows of 1e3, 100,
 * 10 and 1e4 elements, then columns of 1e5, 1e3, 1e7 and 10. */
static const mshape default_shapes[] = {
    {100000, 1000, 1}, {1000000, 100, 1}, {10000000, 10, 1}, {10000, 10000, 1},
    {100000, 1000, 0}, {1000, 100000, 0}, {10000000, 10, 0}, {10, 10000000, 0}};
#define N_DEFAULT_SHAPES (sizeof default_shapes / sizeof *default_shapes)

/* The offsets of a segmented entry's shape over n elements (malloc'd; NULL
 * when out of memory), *count segments. */
static uint64_t *segment_offsets(int e, size_t n, size_t *count) {
  size_t cap = e == ENTRY_SEG_LONG ? 3 : e == ENTRY_SEG_ROWS ? n / 1000 + 1 : n;
  uint64_t *off = malloc((cap + 1) * sizeof *off);
  uint64_t state = 12345, at = 0;
  size_t k = 0;
  if (!off)
    return NULL;
  off[0] = 0;
  while (at < n && k < cap) {
    uint64_t len = e == ENTRY_SEG_LONG   ? (n + 2) / 3
                   : e == ENTRY_SEG_ROWS ? 1000
                                         : 1 + (state >> 33) % 200;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    at = at + len > n ? n : at + len;
    off[++k] = at;
  }
  *count = k;
  return off;
}

typedef struct row {
  int kernel; /* an entry */
  size_t n;
  size_t rows, cols; /* a matrix entry's shape (n = rows * cols) */
  double kernel_ms, kernel_ms_min, call_ms, h2d_ms, gbps, stream_gbps;
  int stream_noisy; /* the stream read at this n is no reliable yardstick */
  int verified;     /* 1 yes, 0 failed, -1 not checked */
} row;

typedef struct bench_opts {
  clr_type type;
  clr_op op;
  int kernels[N_ENTRIES];
  uint64_t min_n, max_n;
  unsigned per_decade, repeat;
  const char *csv, *json, *svg, *platform, *device;
  int json_stdout;    /* --json: the JSON on stdout, no table */
  plot_scale y_scale; /* --y-scale */
  int progress;       /* --progress: the progress line on any stderr */
  int verbose;        /* -v: the library's log on stderr */
  int autotune, verify;
  uint64_t autotune_n;
  clr_map map;                         /* --map */
  const char *map_expr;                /* --map=EXPR */
  int dot;                             /* --dot: x . y of two arrays */
  int host, latency;                   /* --host, --latency (host_paths.c) */
  const char *group;                   /* --group=DEVICES (group_paths.c) */
  long stage_threads, stage_block_kib; /* -1: the device's tuning */
  long single_launch;                  /* -1: the device's tuning */
  int matrix;                          /* --matrix */
  int matrix_exact;                    /* --matrix --exact: exact sums */
  uint64_t ddof;                       /* --ddof: var's and std's divisor
                                          n - ddof                       */
  int ddof_given;
  mshape shapes[MAX_SHAPES]; /* --matrix's (--shapes) */
  size_t n_shapes;
} bench_opts;

#define HINT " (try 'clreduce-bench --help')"

/* An error line on stderr (the progress line taken off first). */
#define bench_error(...) (progress_clear(), cli_error(__VA_ARGS__))

/* The sizes a decade for each --per-decade the bench takes: its steps
 * within a decade (1e3, 3e3; 1e3, 2e3, 5e3). */
static const struct decade_steps {
  unsigned per_decade;
  double steps[3];
} decade_steps[] = {{1, {1}}, {2, {1, 3}}, {3, {1, 2, 5}}};
#define N_DECADE_STEPS (sizeof decade_steps / sizeof *decade_steps)

static void usage(FILE *f) {
  /* The kernels, types and operations from the library's tables, as
   * clreduce --help lists them. */
  fputs("Usage: clreduce-bench [OPTION]...\n"
        "Time every kernel that computes the op over a range of sizes, "
        "beside the\n"
        "device's read bandwidth measured in the same run by a plain "
        "streaming kernel;\n"
        "print a table, and write CSV, JSON and an SVG plot on request.\n"
        "\n"
        "What to run:\n"
        "  --kernel=LIST      comma-separated kernel names\n"
        "                     reduction:",
        f);
  for (int k = 0, first = 1; k < CLR_KERNEL_COUNT; k++)
    if (!clr_kernel_is_scan((clr_kernel)k)) {
      fprintf(f, "%s %s", first ? "" : ",", clr_kernel_name((clr_kernel)k));
      first = 0;
    }
  fputs("\n                     scan:", f);
  for (int k = 0, first = 1; k < CLR_KERNEL_COUNT; k++)
    if (clr_kernel_is_scan((clr_kernel)k)) {
      fprintf(f, "%s %s", first ? "" : ",", clr_kernel_name((clr_kernel)k));
      first = 0;
    }
  fputs("\n"
        "                     (default: every kernel that computes the op; "
        "one that\n"
        "                     cannot is refused; --kernels=LIST: a "
        "deprecated spelling)\n"
        "  --op=OP            ",
        f);
  cli_print_op_help(f, 21, CLI_DEFAULT_OP);
  fputs("  --type=TYPE        ", f);
  cli_print_type_help(f, 21, CLI_DEFAULT_TYPE);
  fputs("  --ddof=N           var, std: delta degrees of freedom, the divisor "
        "n - N\n"
        "                     (default 0, NumPy's default; 1 gives the "
        "sample\n"
        "                     variance, PyTorch's default); n <= N gives "
        "NaN\n",
        f);
  fputs("  --map=M            abs, square or an OpenCL C expression of x and "
        "i, applied\n"
        "                     before the reduction (the kernels that take "
        "maps; an\n"
        "                     expression is not verified here: clreduce --map "
        "checks it)\n"
        "  --dot              the dot product of two arrays (--op=sum; GB/s "
        "and the\n"
        "                     stream read count both arrays)\n"
        "  --exact            float/double sum: the exact sum too (verified by "
        "equality\n"
        "                     with the CPU's exact sum); with --matrix: exact "
        "sums of\n"
        "                     the rows and columns instead\n"
        "  --segments         segmented reductions of three shapes: random "
        "lengths\n"
        "                     1..200, three long segments, rows of 1000 (GB/s "
        "count the\n"
        "                     values and the offsets)\n",
        f);
  fputs("  --matrix           matrices instead of the sweep's sizes: a result "
        "per row\n"
        "                     (axis 1) of 1e5x1000, 1e6x100, 1e7x10, 1e4x1e4 "
        "and per\n"
        "                     column (axis 0) of 1e5x1000, 1000x1e5, 1e7x10, "
        "10x1e7\n"
        "                     (1e8 elements each), beside the stream read of "
        "the same\n"
        "                     bytes; --type, --op, --map (built-in), --repeat, "
        "--json\n"
        "  --shapes=RxC[:A],...\n"
        "                     --matrix's shapes instead: R rows of C elements, "
        "axis A\n"
        "                     (0: a result per column, 1: per row; none: "
        "both)\n"
        "\n"
        "Sizes (also those of --host and --group):\n"
        "  --min-n=N          smallest size (default 1e3)\n"
        "  --max-n=N          largest size (default 1e8, capped to one device "
        "allocation)\n"
        "  --n=N              one size: --min-n=N --max-n=N\n"
        "  --per-decade=K     sizes a decade: 1 (1e3, 1e4, ...; the default), "
        "2 (1e3,\n"
        "                     3e3, 1e4, ...) or 3 (1e3, 2e3, 5e3, 1e4, ...)\n"
        "\n"
        "Device:\n"
        "  --platform=P       platform index or name substring\n"
        "  --device=D         device index or name substring (default: first "
        "GPU,\n"
        "                     else first device)\n"
        "\n"
        "Measurement and output:\n"
        "  --repeat=R         timed runs a point after one warm-up (default "
        "20); the\n"
        "                     median is reported\n"
        "  --no-verify        skip the CPU check of each kernel's first run\n"
        "  --json             print the results as one JSON object on stdout "
        "(no table)\n"
        "  --json=FILE        write that JSON object to FILE (the table on "
        "stdout)\n"
        "  --csv=FILE         write the rows as CSV\n"
        "  --svg=FILE         write a plot of GB/s against n\n"
        "  --y-scale=S        the plot's y axis: auto (the default: log when "
        "the values\n"
        "                     span more than two decades), log or linear\n"
        "  --progress         the progress line ([row/rows] kernel n, time "
        "elapsed) on\n"
        "                     stderr even when stderr is no terminal (on a "
        "terminal it\n"
        "                     shows by default); never in the results\n"
        "  -v, --verbose      the library's log on stderr (kernel build "
        "warnings, binary\n"
        "                     cache events; with --autotune always: its "
        "progress)\n"
        "  -h, --help         print this help and exit\n"
        "  -V, --version      print the version and the git commit, and exit\n"
        "\n"
        "Other modes (a table of their own; no --csv, --json, --svg, nor the "
        "sweep's\n"
        "options):\n"
        "  --host             host arrays (float sum, scan) at each size: "
        "whole calls\n"
        "                     beside plain pageable and pinned copies\n"
        "  --latency          small calls (n = 1e3, 1e4) beside the device's "
        "floor (one\n"
        "                     launch + a blocking 8-byte read)\n"
        "  --group=DEVICES    a float sum over several devices ('all', '0,1') "
        "against\n"
        "                     the first alone: resident buffers and host "
        "arrays, wall\n"
        "                     clock of whole calls\n"
        "  --autotune[=N]     search the launch parameters on N elements "
        "(default 2^25),\n"
        "                     store them, and exit\n"
        "\n"
        "Tuning keys for this run (default: the device's tuning):\n"
        "  --stage-threads=T  stage.threads\n"
        "  --stage-block-kib=K\n"
        "                     stage.block_kib\n"
        "  --single-launch=0|1\n"
        "                     reduce.single_launch\n"
        "\n"
        "The table: '% stream' is a row's GB/s as a percentage of the "
        "(stream read)\n"
        "row of the same n, a plain kernel reading the same bytes: how close "
        "the kernel\n"
        "comes to the device's read bandwidth.  '*' marks a ratio that is no "
        "reliable\n"
        "figure: the stream read's two measurements at that n differed by "
        "more than\n"
        "20%, or the kernel beat it ('>100*'), as at small n, where launch "
        "overhead and\n"
        "timer noise dominate both.\n"
        "\n"
        "Options take their value as --opt=value or --opt value (--json, "
        "--autotune:\n"
        "--opt=value only).\n"
        "Example: clreduce-bench --per-decade=3 --svg=sum.svg --csv=sum.csv\n"
        "Exit status: 0 success, 1 a result failed verification, 2 usage "
        "error (or an\n"
        "option value the device cannot use), 3 OpenCL or runtime error (or "
        "an output\n"
        "file that cannot be written).\n",
        f);
}

/* "clreduce-bench 1.0.0 (commit 0123abcd4567+)": '+', built with
 * uncommitted changes. */
static void print_version(FILE *f) {
  const char *commit = clr_build_commit();
  fprintf(f, "clreduce-bench %s (commit %s)\n", CLR_VERSION,
          commit ? commit : "unknown: not built from a git checkout");
}

/* The table on stdout is a result too: a full disk or a closed pipe
 * there is a runtime error (3). */
static int finish_stdout(int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    bench_error("cannot write to standard output");
    return rc ? rc : 3;
  }
  return rc;
}

enum {
  OPT_TYPE = 256,
  OPT_OP,
  OPT_KERNEL,
  OPT_KERNELS, /* the deprecated spelling of --kernel */
  OPT_N,
  OPT_MIN_N,
  OPT_MAX_N,
  OPT_PER_DECADE,
  OPT_REPEAT,
  OPT_CSV,
  OPT_JSON,
  OPT_SVG,
  OPT_Y_SCALE,
  OPT_PROGRESS,
  OPT_VERBOSE,
  OPT_PLATFORM,
  OPT_DEVICE,
  OPT_NO_VERIFY,
  OPT_EXACT,
  OPT_MAP,
  OPT_DDOF,
  OPT_DOT,
  OPT_AUTOTUNE,
  OPT_SEGMENTS,
  OPT_MATRIX,
  OPT_SHAPES,
  OPT_HOST,
  OPT_LATENCY,
  OPT_GROUP,
  OPT_STAGE_THREADS,
  OPT_STAGE_BLOCK_KIB,
  OPT_SINGLE_LAUNCH,
  OPT_HELP,
  OPT_VERSION,
};

static const struct option longopts[] = {
    {"type", required_argument, NULL, OPT_TYPE},
    {"op", required_argument, NULL, OPT_OP},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"kernels", required_argument, NULL, OPT_KERNELS},
    {"n", required_argument, NULL, OPT_N},
    {"min-n", required_argument, NULL, OPT_MIN_N},
    {"max-n", required_argument, NULL, OPT_MAX_N},
    {"per-decade", required_argument, NULL, OPT_PER_DECADE},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"csv", required_argument, NULL, OPT_CSV},
    {"json", optional_argument, NULL, OPT_JSON},
    {"svg", required_argument, NULL, OPT_SVG},
    {"y-scale", required_argument, NULL, OPT_Y_SCALE},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"platform", required_argument, NULL, OPT_PLATFORM},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"no-verify", no_argument, NULL, OPT_NO_VERIFY},
    {"exact", no_argument, NULL, OPT_EXACT},
    {"map", required_argument, NULL, OPT_MAP},
    {"ddof", required_argument, NULL, OPT_DDOF},
    {"dot", no_argument, NULL, OPT_DOT},
    {"autotune", optional_argument, NULL, OPT_AUTOTUNE},
    {"segments", no_argument, NULL, OPT_SEGMENTS},
    {"matrix", no_argument, NULL, OPT_MATRIX},
    {"shapes", required_argument, NULL, OPT_SHAPES},
    {"host", no_argument, NULL, OPT_HOST},
    {"latency", no_argument, NULL, OPT_LATENCY},
    {"group", required_argument, NULL, OPT_GROUP},
    {"stage-threads", required_argument, NULL, OPT_STAGE_THREADS},
    {"stage-block-kib", required_argument, NULL, OPT_STAGE_BLOCK_KIB},
    {"single-launch", required_argument, NULL, OPT_SINGLE_LAUNCH},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}};

static const char *option_name(int code) {
  for (const struct option *o = longopts; o->name; o++)
    if (o->val == code)
      return o->name;
  return "?";
}

/* "a, b and c": the kernels that compute op on type and, with a map or a
 * dot product, take it. */
static void kernel_list(char *buf, size_t size, const bench_opts *o) {
  size_t at = 0;
  buf[0] = '\0';
  for (int k = 0; k < CLR_KERNEL_COUNT && at < size; k++) {
    if (clr_kernel_supports((clr_kernel)k, o->op, o->type) != CLR_OK ||
        ((o->map || o->dot) && !clr_kernel_takes_maps((clr_kernel)k)))
      continue;
    int w = snprintf(buf + at, size - at, "%s%s", at ? ", " : "",
                     clr_kernel_name((clr_kernel)k));
    if (w < 0)
      break;
    at += (size_t)w;
  }
  if (!buf[0])
    snprintf(buf, size, "none");
}

/* A count (1e5, 100000) of at most max; -1 after a line naming the
 * option and the value. */
static int parse_count(int code, const char *s, uint64_t max, uint64_t *out) {
  const char *why = NULL;
  if (cli_parse_count(s, out, &why) != 0) {
    bench_error("bad --%s '%s': %s" HINT, option_name(code), s, why);
    return -1;
  }
  if (*out > max) {
    bench_error("bad --%s '%s': too large (the maximum is %llu)" HINT,
                option_name(code), s, (unsigned long long)max);
    return -1;
  }
  return 0;
}

static int parse_string(int code, const char *s, const char **out) {
  if (!s || !*s) {
    bench_error("--%s needs a non-empty value" HINT, option_name(code));
    return -1;
  }
  *out = s;
  return 0;
}

/* What parse() remembers of the command line beyond bench_opts: the
 * kernels named, and the first option given of those a mode of its own
 * does not read. */
typedef struct given {
  int kernels[CLR_KERNEL_COUNT]; /* --kernel named it */
  int any_entry;                 /* --kernel or --segments */
  int sweep_only;                /* OPT_KERNEL, OPT_CSV, ...; 0: none */
  int sizes;                     /* OPT_MIN_N, OPT_N, ...; 0: none */
  int not_autotune;              /* OPT_REPEAT, OPT_STAGE_THREADS, ...  */
  int y_scale;                   /* --y-scale */
  int not_matrix;                /* OPT_KERNEL, OPT_N, ...: not --matrix's */
  int shapes;                    /* --shapes */
} given;

/* --shapes=RxC[:axis],...: a shape with its axis, or without one twice
 * (rows, axis 1, then columns, axis 0).  0, or -1 after a line naming the
 * shape. */
static int parse_shapes(const char *val, bench_opts *o) {
  o->n_shapes = 0;
  for (const char *tok = val;;) {
    size_t len = strcspn(tok, ",");
    char t[96], *x, *colon;
    uint64_t rows = 0, cols = 0, axis = 2;
    const char *why = NULL, *part_why = NULL;
    if (len >= sizeof t)
      len = sizeof t - 1; /* too long to be a shape: named cut */
    memcpy(t, tok, len);
    t[len] = '\0';
    colon = strchr(t, ':');
    if (colon)
      *colon++ = '\0';
    x = strchr(t, 'x');
    if (x)
      *x++ = '\0';
    if (!x)
      why = "is not RxC or RxC:axis (R rows of C elements)";
    else if (cli_parse_count(t, &rows, &part_why) != 0)
      why = "rows";
    else if (cli_parse_count(x, &cols, &part_why) != 0)
      why = "columns";
    else if (rows > SIZE_MAX / 16 / cols)
      why = "has too many elements";
    else if (colon && (cli_parse_u64(colon, &axis, &why) != 0 || axis > 1))
      why = "has no axis 0 (a result per column) or 1 (a result per row) "
            "after ':'";
    if (why) {
      if (part_why)
        bench_error("bad --shapes '%s': the %s of '%.*s': %s" HINT, val, why,
                    (int)len, tok, part_why);
      else
        bench_error("bad --shapes '%s': '%.*s' %s" HINT, val, (int)len, tok,
                    why);
      return -1;
    }
    for (int a = 1; a >= 0; a--) {
      if (colon && (uint64_t)a != axis)
        continue;
      if (o->n_shapes == MAX_SHAPES) {
        bench_error("bad --shapes '%s': more than %d shapes (a shape without "
                    "':axis' counts twice)" HINT,
                    val, MAX_SHAPES);
        return -1;
      }
      o->shapes[o->n_shapes++] = (mshape){(size_t)rows, (size_t)cols, a};
    }
    if (!tok[len])
      return 0;
    tok += len + 1;
  }
}

static int parse_option(int code, const char *val, bench_opts *o, given *g) {
  uint64_t v = 0;
  const char *why = NULL;
  /* Options only the sweep reads; sizes read by the sweep, --host and
   * --group. */
  switch (code) {
  case OPT_KERNEL:
  case OPT_KERNELS:
  case OPT_CSV:
  case OPT_SVG:
  case OPT_Y_SCALE:
  case OPT_DOT:
  case OPT_SEGMENTS:
  case OPT_N:
  case OPT_MIN_N:
  case OPT_MAX_N:
  case OPT_PER_DECADE:
    if (!g->not_matrix)
      g->not_matrix = code;
    break;
  }
  switch (code) {
  case OPT_TYPE:
  case OPT_OP:
  case OPT_KERNEL:
  case OPT_KERNELS:
  case OPT_CSV:
  case OPT_JSON:
  case OPT_SVG:
  case OPT_Y_SCALE:
  case OPT_NO_VERIFY:
  case OPT_EXACT:
  case OPT_MAP:
  case OPT_DDOF:
  case OPT_DOT:
  case OPT_SEGMENTS:
  case OPT_MATRIX:
  case OPT_SHAPES:
    if (!g->sweep_only)
      g->sweep_only = code;
    break;
  case OPT_N:
  case OPT_MIN_N:
  case OPT_MAX_N:
  case OPT_PER_DECADE:
    if (!g->sizes)
      g->sizes = code;
    break;
  case OPT_REPEAT:
  case OPT_STAGE_THREADS:
  case OPT_STAGE_BLOCK_KIB:
  case OPT_SINGLE_LAUNCH:
    if (!g->not_autotune)
      g->not_autotune = code;
    break;
  }
  switch (code) {
  case OPT_TYPE:
    if (clr_type_from_name(val, &o->type) != CLR_OK) {
      char names[256] = "";
      for (int t = 0; t < CLR_TYPE_COUNT; t++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 t ? ", " : "", clr_type_name((clr_type)t));
      bench_error("unknown type '%s' (valid: %s)", val, names);
      return -1;
    }
    return 0;
  case OPT_OP:
    if (clr_op_from_name(val, &o->op) != CLR_OK) {
      char ops[512];
      cli_op_list(ops, sizeof ops, 0);
      bench_error("unknown op '%s' (valid: %s)", val, ops);
      return -1;
    }
    return 0;
  case OPT_KERNEL:
  case OPT_KERNELS: {
    if (parse_string(code, val, &val) != 0)
      return -1;
    char *list = strdup(val), *save = NULL;
    if (!list) {
      bench_error("out of host memory");
      return -1;
    }
    for (char *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      clr_kernel k;
      if (clr_kernel_from_name(tok, &k) != CLR_OK) {
        char names[512] = "";
        for (int i = 0; i < CLR_KERNEL_COUNT; i++)
          snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                   i ? ", " : "", clr_kernel_name((clr_kernel)i));
        bench_error("unknown kernel '%s' in --%s '%s' (valid: %s)", tok,
                    option_name(code), val, names);
        free(list);
        return -1;
      }
      g->kernels[k] = 1;
      o->kernels[k] = g->any_entry = 1;
    }
    free(list);
    return 0;
  }
  case OPT_N:
  case OPT_MIN_N:
  case OPT_MAX_N:
    if (parse_count(code, val, UINT64_MAX, &v) != 0)
      return -1;
    if (code != OPT_MAX_N)
      o->min_n = v;
    if (code != OPT_MIN_N)
      o->max_n = v;
    return 0;
  case OPT_PER_DECADE:
    if (cli_parse_u64(val, &v, &why) == 0)
      for (size_t i = 0; i < N_DECADE_STEPS; i++)
        if (decade_steps[i].per_decade == v) {
          o->per_decade = (unsigned)v;
          return 0;
        }
    bench_error("bad --per-decade '%s': must be 1 (1e3, 1e4, ...), 2 (1e3, "
                "3e3, 1e4, ...) or 3 (1e3, 2e3, 5e3, 1e4, ...)" HINT,
                val);
    return -1;
  case OPT_REPEAT:
    if (parse_count(code, val, CLI_MAX_REPEAT, &v) != 0)
      return -1;
    o->repeat = (unsigned)v;
    return 0;
  case OPT_CSV:
    return parse_string(code, val, &o->csv);
  case OPT_JSON:
    if (!val) {
      o->json_stdout = 1;
      return 0;
    }
    return parse_string(code, val, &o->json);
  case OPT_SVG:
    return parse_string(code, val, &o->svg);
  case OPT_Y_SCALE:
    g->y_scale = 1;
    if (strcmp(val, "auto") == 0)
      o->y_scale = PLOT_Y_AUTO;
    else if (strcmp(val, "log") == 0)
      o->y_scale = PLOT_Y_LOG;
    else if (strcmp(val, "linear") == 0)
      o->y_scale = PLOT_Y_LINEAR;
    else {
      bench_error("unknown y scale '%s' in --y-scale (valid: auto, log, "
                  "linear)",
                  val);
      return -1;
    }
    return 0;
  case OPT_PROGRESS:
    o->progress = 1;
    return 0;
  case OPT_VERBOSE:
    o->verbose = 1;
    return 0;
  case OPT_PLATFORM:
    return parse_string(code, val, &o->platform);
  case OPT_DEVICE:
    return parse_string(code, val, &o->device);
  case OPT_NO_VERIFY:
    o->verify = 0;
    return 0;
  case OPT_EXACT:
    o->kernels[ENTRY_EXACT] = 1;
    return 0;
  case OPT_MAP:
    if (parse_string(code, val, &val) != 0)
      return -1;
    if (clr_map_from_name(val, &o->map) != CLR_OK || o->map == CLR_MAP_EXPR ||
        o->map == CLR_MAP_NONE) {
      o->map = CLR_MAP_EXPR;
      o->map_expr = val;
    }
    return 0;
  case OPT_DDOF:
    /* any 0 .. 2^64-1 (n <= ddof gives NaN, as NumPy); a negative one is
     * refused, as clreduce --ddof refuses it */
    if (cli_parse_u64(val, &o->ddof, &why) != 0) {
      bench_error("bad --ddof '%s': %s (0, NumPy's default, or 1, the sample "
                  "variance, PyTorch's)" HINT,
                  val, why);
      return -1;
    }
    o->ddof_given = 1;
    return 0;
  case OPT_DOT:
    o->dot = 1;
    return 0;
  case OPT_AUTOTUNE:
    o->autotune = 1;
    if (val && parse_count(code, val, SIZE_MAX, &o->autotune_n) != 0)
      return -1;
    return 0;
  case OPT_SEGMENTS:
    o->kernels[ENTRY_SEG_RANDOM] = o->kernels[ENTRY_SEG_LONG] =
        o->kernels[ENTRY_SEG_ROWS] = g->any_entry = 1;
    return 0;
  case OPT_MATRIX:
    o->matrix = 1;
    return 0;
  case OPT_SHAPES:
    g->shapes = 1;
    if (parse_string(code, val, &val) != 0)
      return -1;
    return parse_shapes(val, o);
  case OPT_HOST:
    o->host = 1;
    return 0;
  case OPT_LATENCY:
    o->latency = 1;
    return 0;
  case OPT_GROUP:
    return parse_string(code, val, &o->group);
  case OPT_STAGE_THREADS:
  case OPT_STAGE_BLOCK_KIB:
    if (cli_parse_u64(val, &v, &why) != 0) {
      bench_error("bad --%s '%s': %s" HINT, option_name(code), val, why);
      return -1;
    }
    if (v > (1u << 20)) {
      bench_error("bad --%s '%s': too large (the maximum is %u)" HINT,
                  option_name(code), val, 1u << 20);
      return -1;
    }
    *(code == OPT_STAGE_THREADS ? &o->stage_threads : &o->stage_block_kib) =
        (long)v;
    return 0;
  case OPT_SINGLE_LAUNCH:
    if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0) {
      bench_error("bad --single-launch '%s': must be 0 or 1" HINT, val);
      return -1;
    }
    o->single_launch = val[0] - '0';
    return 0;
  default:
    bench_error("internal error: unhandled option %d", code);
    return -1;
  }
}

static size_t make_sizes(const bench_opts *o, uint64_t cap, size_t *sizes) {
  const struct decade_steps *d = &decade_steps[0];
  for (size_t i = 0; i < N_DECADE_STEPS; i++)
    if (decade_steps[i].per_decade == o->per_decade)
      d = &decade_steps[i];
  size_t count = 0;
  for (double decade = 1; decade <= 1e19 && count < MAX_SIZES; decade *= 10)
    for (unsigned s = 0; s < d->per_decade; s++) {
      double v = decade * d->steps[s];
      if (v >= (double)o->min_n && v <= (double)o->max_n && v <= (double)cap &&
          count < MAX_SIZES)
        sizes[count++] = (size_t)v;
    }
  return count;
}

/* The checks between options: what cannot be honoured is refused, never
 * changed. */
static int check_options(bench_opts *o, const given *g) {
  int modes = (o->autotune != 0) + (o->group != NULL) + (o->host || o->latency);
  const char *mode = o->autotune  ? "--autotune"
                     : o->group   ? "--group"
                     : o->host    ? "--host"
                     : o->latency ? "--latency"
                                  : NULL;
  const char *what = o->autotune ? "which searches the launch parameters"
                     : o->group  ? "which times float sums over the devices"
                     : o->host   ? "which times float sums and scans of host "
                                   "arrays"
                                 : "which times small float sums";
  if (modes > 1) {
    bench_error("--autotune, --group and --host / --latency are modes of "
                "their own: give one" HINT);
    return -1;
  }
  if (mode && g->sweep_only) {
    bench_error("--%s applies to the kernel sweep, not %s (%s; its table on "
                "stdout is its result)" HINT,
                option_name(g->sweep_only), mode, what);
    return -1;
  }
  if (mode && g->sizes && (o->autotune || !o->host) && !o->group) {
    bench_error("--%s chooses the sweep's sizes, not %s's (%s)" HINT,
                option_name(g->sizes), mode,
                o->autotune ? "--autotune=N gives its size"
                            : "small calls of n = 1e3 and 1e4");
    return -1;
  }
  if (o->autotune && g->not_autotune) {
    bench_error("--%s does not apply to --autotune (which times its "
                "candidates its own way and stores the tuning it finds)" HINT,
                option_name(g->not_autotune));
    return -1;
  }
  if (g->shapes && !o->matrix) {
    bench_error("--shapes chooses the shapes of --matrix: add --matrix" HINT);
    return -1;
  }
  if (o->matrix && g->not_matrix) {
    bench_error("--%s applies to the kernel sweep, not --matrix (whose shapes "
                "give its sizes: --shapes=RxC[:axis],...)" HINT,
                option_name(g->not_matrix));
    return -1;
  }
  if (o->min_n > o->max_n) {
    bench_error("--min-n %llu is above --max-n %llu" HINT,
                (unsigned long long)o->min_n, (unsigned long long)o->max_n);
    return -1;
  }
  if (!o->autotune && (o->host || !o->latency)) {
    size_t sizes[MAX_SIZES];
    if (make_sizes(o, UINT64_MAX, sizes) == 0) {
      bench_error(
          "no size of the sweep (--per-decade=%u) lies in [%llu, %llu]" HINT,
          o->per_decade, (unsigned long long)o->min_n,
          (unsigned long long)o->max_n);
      return -1;
    }
  }
  if (g->y_scale && !o->svg) {
    bench_error("--y-scale sets the plot's axis: add --svg=FILE" HINT);
    return -1;
  }
  if (mode)
    return 0;
  if (o->kernels[ENTRY_EXACT] &&
      (o->op != CLR_SUM || (o->type != CLR_FLOAT && o->type != CLR_DOUBLE))) {
    bench_error("--exact is for float and double sums, not %s of %s" HINT,
                clr_op_name(o->op), clr_type_name(o->type));
    return -1;
  }
  if (o->kernels[ENTRY_SEG_RANDOM] && o->dot) {
    bench_error("--segments reduces one array: not with --dot" HINT);
    return -1;
  }
  if (o->dot && o->op != CLR_SUM) {
    bench_error("--dot sums the products x * y: --op=sum, not '%s'" HINT,
                clr_op_name(o->op));
    return -1;
  }
  if (o->matrix && o->map == CLR_MAP_EXPR) {
    bench_error("--matrix verifies every result on the CPU: --map=abs or "
                "--map=square, not an expression ('%s')" HINT,
                o->map_expr);
    return -1;
  }
  /* --ddof sets the variance's divisor: with another op it would change
   * nothing, so it is refused rather than ignored */
  if (o->ddof_given && !(cli_op_flags(o->op) & CLR_OPF_MOMENTS)) {
    char ops[128];
    cli_op_list(ops, sizeof ops, CLR_OPF_MOMENTS);
    bench_error("--ddof applies to %s (the divisor n - ddof), not '%s'" HINT,
                ops, clr_op_name(o->op));
    return -1;
  }
  char refusal[512];
  if (cli_op_type_refusal(o->op, o->type, o->map == CLR_MAP_EXPR, refusal,
                          sizeof refusal)) {
    bench_error("%s" HINT, refusal);
    return -1;
  }
  if (o->matrix) { /* its entries: the axes of its shapes */
    o->matrix_exact = o->kernels[ENTRY_EXACT];
    o->kernels[ENTRY_EXACT] = 0;
    if (!o->n_shapes) {
      memcpy(o->shapes, default_shapes, sizeof default_shapes);
      o->n_shapes = N_DEFAULT_SHAPES;
    }
    for (size_t i = 0; i < o->n_shapes; i++)
      o->kernels[o->shapes[i].axis ? ENTRY_MATRIX_ROWS : ENTRY_MATRIX_COLS] = 1;
    return 0;
  }
  /* The kernels: by default every one that computes the op on the type
   * (the library's rule, clr_kernel_supports: scans take the
   * CLR_OPF_SCAN ops, the indexed ones run on the coarse kernel) and
   * takes a map or a dot product when asked; one named that cannot is
   * refused. */
  char can[512];
  kernel_list(can, sizeof can, o);
  for (int k = 0; k < CLR_KERNEL_COUNT; k++) {
    int unsupported = clr_kernel_supports((clr_kernel)k, o->op, o->type) ==
                      CLR_ERR_UNSUPPORTED;
    int no_map = (o->map || o->dot) && !clr_kernel_takes_maps((clr_kernel)k);
    if (g->kernels[k] && (unsupported || no_map)) {
      if (unsupported)
        bench_error("kernel '%s' does not compute %s of %s (the kernels that "
                    "do: %s)" HINT,
                    clr_kernel_name((clr_kernel)k), clr_op_name(o->op),
                    clr_type_name(o->type), can);
      else
        bench_error("kernel '%s' takes no %s (the kernels that do: %s)" HINT,
                    clr_kernel_name((clr_kernel)k), o->dot ? "--dot" : "--map",
                    can);
      return -1;
    }
    if (!g->any_entry)
      o->kernels[k] = !unsupported && !no_map;
  }
  int any = 0;
  for (int e = 0; e < N_ENTRIES; e++)
    any |= o->kernels[e];
  if (!any) {
    bench_error("no kernel computes %s of %s%s" HINT, clr_op_name(o->op),
                clr_type_name(o->type),
                o->dot   ? " as a dot product"
                : o->map ? " with --map"
                         : "");
    return -1;
  }
  return 0;
}

/* 0, a usage error's status (2) after its one line, or -1: --help or
 * --version printed (exit 0). */
static int parse(int argc, char **argv, bench_opts *o) {
  given g;
  memset(o, 0, sizeof *o);
  memset(&g, 0, sizeof g);
  o->type = CLI_DEFAULT_TYPE;
  o->op = CLI_DEFAULT_OP;
  o->min_n = 1000;
  o->max_n = 100000000;
  o->per_decade = 1;
  o->repeat = 20;
  o->y_scale = PLOT_Y_AUTO;
  o->stage_threads = o->stage_block_kib = o->single_launch = -1;
  o->verify = 1;
  int help = 0, version = 0;
  opterr = 0; /* getopt's own messages are not one-line ones */
  optind = 0;
  for (;;) {
    int code = getopt_long(argc, argv, ":hVv", longopts, NULL);
    if (code == -1)
      break;
    if (code == 'v')
      code = OPT_VERBOSE;
    if (code == 'h' || code == OPT_HELP) {
      help = 1;
      continue;
    }
    if (code == 'V' || code == OPT_VERSION) {
      version = 1;
      continue;
    }
    if (code == ':') {
      if (optopt > 0 && optopt < 256)
        bench_error("option '-%c' needs a value" HINT, optopt);
      else if (optopt >= 256)
        bench_error("option '--%s' needs a value" HINT, option_name(optopt));
      else
        bench_error("option '%s' needs a value" HINT, argv[optind - 1]);
      return CLI_EXIT_USAGE;
    }
    if (code == '?') {
      if (optopt >= 256)
        bench_error("option '--%s' takes no value" HINT, option_name(optopt));
      else if (optopt > 0)
        bench_error("unknown option '-%c'" HINT, optopt);
      else
        bench_error("unknown or ambiguous option '%s'" HINT, argv[optind - 1]);
      return CLI_EXIT_USAGE;
    }
    if (parse_option(code, optarg, o, &g) != 0)
      return CLI_EXIT_USAGE;
  }
  if (help || version) {
    if (help)
      usage(stdout);
    else
      print_version(stdout);
    return -1;
  }
  if (optind < argc) {
    bench_error("unexpected argument '%s'%s" HINT, argv[optind],
                o->json_stdout ? " (--json prints on stdout; --json=FILE "
                                 "writes FILE)"
                               : "");
    return CLI_EXIT_USAGE;
  }
  return check_options(o, &g) != 0 ? CLI_EXIT_USAGE : 0;
}

static void log_stderr(void *user, const char *msg) {
  (void)user;
  progress_clear();
  fprintf(stderr, "clreduce-bench: %s\n", msg);
}

/* One row's calls: the arrays, options and entry, and the call's
 * result (a reduction's value; a scan's and segments' land in out). */
typedef struct bench_call {
  clr_context *ctx;
  const bench_opts *o;
  int entry;
  clr_options opt;
  const void *data, *data2;
  void *out;
  size_t n;
  const uint64_t *offsets; /* segmented entries */
  size_t segments;
  const mshape *shape; /* matrix entries */
  clr_value v;
} bench_call;

static clr_status call_once(bench_call *c) {
  const bench_opts *o = c->o;
  if (is_matrix(c->entry)) {
    clr_request r;
    clr_request_init(&r);
    r.kind = CLR_REQ_MATRIX;
    r.op = o->op;
    r.type = o->type;
    r.input.host = c->data;
    r.output.host = c->out;
    r.rows = c->shape->rows;
    r.cols = c->shape->cols;
    r.axis = c->shape->axis;
    r.options = &c->opt;
    return clr_run(c->ctx, &r, NULL);
  }
  if (is_segmented(c->entry))
    return clr_reduce_segments_host(c->ctx, &c->opt, o->op, o->type, c->data,
                                    c->n, c->offsets, c->segments, c->out);
  if (clr_kernel_is_scan(c->opt.kernel))
    return clr_scan_host(c->ctx, &c->opt, o->op, o->type, c->data, c->out,
                         c->n);
  if (o->dot)
    return clr_dot_host(c->ctx, &c->opt, o->type, c->data, c->data2, c->n,
                        &c->v);
  return clr_reduce_host(c->ctx, &c->opt, o->op, o->type, c->data, c->n, &c->v);
}

/* A matrix call's results against the CPU (clr_ref_matrix_check_opt:
 * each row reduced where it lies, each column gathered, a block of
 * adjacent columns at a time; the call's map, result type and ddof); the
 * worst wrong result on stderr.  1 right, 0 wrong, -2 out of memory. */
static int check_matrix(const bench_call *c, size_t depth) {
  const bench_opts *o = c->o;
  const mshape *m = c->shape;
  clr_segments_check chk;
  int mem = c->opt.exact
                ? clr_ref_matrix_check_exact(&c->opt, o->op, o->type, c->data,
                                             m->rows, m->cols, m->cols, m->axis,
                                             c->out, &chk)
                : clr_ref_matrix_check_opt(&c->opt, o->op, o->type, c->data,
                                           m->rows, m->cols, m->cols, m->axis,
                                           c->out, depth, &chk);
  if (!mem)
    return -2;
  if (!chk.ok) {
    char gb[CLR_VALUE_FORMAT_SIZE], wb[CLR_VALUE_FORMAT_SIZE];
    clr_value_format(&chk.got_worst, gb, sizeof gb);
    clr_value_format(&chk.ref_worst, wb, sizeof wb);
    bench_error("%s %zux%zu: %zu wrong; %s %zu is %s, want %s (error %g, "
                "bound %g, depth %zu)",
                entry_name(c->entry), m->rows, m->cols, chk.n_bad,
                m->axis ? "row" : "column", chk.worst_index, gb, wb,
                chk.worst_error, chk.worst_bound, depth);
  }
  return chk.ok;
}

/* The warm-up's answer against the CPU: 1 right, 0 wrong, -1 not
 * checked (an expression map has no CPU reference), -2 out of memory. */
static int check_once(const bench_call *c, size_t depth) {
  const bench_opts *o = c->o;
  if (!o->verify || o->map == CLR_MAP_EXPR)
    return -1;
  /* the _opt references take the call's options: its map, its result
   * type and var's and std's ddof */
  if (is_matrix(c->entry))
    return check_matrix(c, depth);
  if (is_segmented(c->entry)) {
    clr_segments_check chk;
    return clr_ref_segments_check_opt(&c->opt, o->op, o->type, c->data,
                                      c->offsets, c->segments, c->out, depth,
                                      &chk)
               ? chk.ok
               : -2;
  }
  if (clr_kernel_is_scan(c->opt.kernel)) {
    clr_scan_check chk;
    clr_ref_scan_check(o->op, o->type, 0, c->data, c->out, c->n, depth, &chk);
    return chk.ok;
  }
  if (c->opt.exact) {
    clr_value want;
    clr_ref_exact_sum(o->type, c->data, c->n, &want);
    return clr_ref_exact_equal(&want, &c->v);
  }
  clr_reference ref;
  clr_check chk;
  if (!clr_ref_reduce_opt(&c->opt, o->op, o->type, c->data,
                          o->dot ? c->data2 : NULL, c->n, &ref))
    return -2;
  clr_ref_check(&ref, &c->v, depth, &chk);
  return chk.ok;
}

/* One entry at one size: a warm-up (verified), then timed runs; GB/s
 * count every byte read (both arrays of a dot product, the offsets of
 * segments) and a scan's writes. */
static clr_status measure(clr_context *ctx, const bench_opts *o, int entry,
                          const void *data, const void *data2, void *out,
                          size_t n, const mshape *shape, row *r) {
  bench_call c = {.ctx = ctx, .o = o, .entry = entry, .n = n, .shape = shape};
  c.data = data;
  c.data2 = data2;
  c.out = out;
  clr_options_init(&c.opt);
  if (!is_matrix(entry)) /* the matrix picks its own kernels */
    c.opt.kernel =
        entry < CLR_KERNEL_COUNT ? (clr_kernel)entry : CLR_REDUCE_COARSE;
  c.opt.exact = entry == ENTRY_EXACT || (is_matrix(entry) && o->matrix_exact);
  c.opt.map = o->map;
  c.opt.map_expr = o->map_expr;
  c.opt.ddof = o->ddof;
  uint64_t *offsets =
      is_segmented(entry) ? segment_offsets(entry, n, &c.segments) : NULL;
  c.offsets = offsets;
  /* Segments' and a matrix's results: a value each, or a record for the
   * indexed ops. */
  size_t n_results = offsets ? c.segments
                     : shape ? (shape->axis ? shape->rows : shape->cols)
                             : 0;
  void *results =
      offsets || shape
          ? malloc(n_results * clr_result_bytes(&c.opt, o->op, o->type) + 1)
          : NULL;
  if (results)
    c.out = results;
  double *km = malloc(o->repeat * sizeof *km);
  double *cm = malloc(o->repeat * sizeof *cm);
  double *hm = malloc(o->repeat * sizeof *hm);
  clr_status st = km && cm && hm && (results || !(is_segmented(entry) || shape))
                      ? CLR_OK
                      : CLR_ERR_OUT_OF_MEMORY;
  clr_timing t = CLR_TIMING_INIT;
  memset(r, 0, sizeof *r);
  r->kernel = entry;
  r->n = n;
  r->rows = shape ? shape->rows : 0;
  r->cols = shape ? shape->cols : 0;
  r->verified = -1;
  for (unsigned i = 0; st == CLR_OK && i <= o->repeat; i++) {
    st = call_once(&c);
    if (st != CLR_OK)
      break;
    clr_last_timing(ctx, &t);
    if (i == 0) { /* warm-up: check it */
      r->verified = check_once(&c, t.error_depth);
      if (r->verified == -2)
        st = CLR_ERR_OUT_OF_MEMORY;
      continue;
    }
    km[i - 1] = t.kernel_ms;
    cm[i - 1] = t.total_ms;
    hm[i - 1] = t.h2d_ms;
  }
  if (st == CLR_OK) {
    r->kernel_ms = cli_median(km, o->repeat);
    r->kernel_ms_min = km[0];
    r->call_ms = cli_median(cm, o->repeat);
    r->h2d_ms = cli_median(hm, o->repeat);
    double esize = (double)clr_type_size(o->type);
    double bytes = (double)n * esize * (o->dot ? 2 : 1);
    if (clr_kernel_is_scan(c.opt.kernel))
      bytes += (double)n *
               (double)clr_type_size(clr_scan_output_type(NULL, o->type));
    if (offsets)
      bytes += (double)(c.segments + 1) * sizeof(uint64_t);
    r->gbps = r->kernel_ms > 0 ? bytes / r->kernel_ms / 1e6 : 0;
  }
  free(results);
  free(offsets);
  free(km);
  free(cm);
  free(hm);
  return st;
}

/* A row's GB/s as a percentage of the stream read's at its n (0: none). */
static double pct_stream(const row *r) {
  return r->stream_gbps > 0 ? 100.0 * r->gbps / r->stream_gbps : 0.0;
}

/* 1 when the ratio is a reliable figure: the stream read at that n was
 * steady, and the row did not beat it. */
static int stream_reliable(const row *r) {
  return !r->stream_noisy && pct_stream(r) <= 100.0;
}

static void write_csv(FILE *f, const row *rows, size_t n) {
  fprintf(f, "kernel,n,kernel_ms,kernel_ms_min,gbps,stream_gbps,pct_stream,"
             "call_ms,h2d_ms,verified,stream_reliable\n");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s,%zu,%.6f,%.6f,%.3f,%.3f,%.1f,%.6f,%.6f,%s,%s\n",
            entry_name(rows[i].kernel), rows[i].n, rows[i].kernel_ms,
            rows[i].kernel_ms_min, rows[i].gbps, rows[i].stream_gbps,
            pct_stream(&rows[i]), rows[i].call_ms, rows[i].h2d_ms,
            rows[i].verified < 0 ? ""
            : rows[i].verified   ? "yes"
                                 : "no",
            stream_reliable(&rows[i]) ? "yes" : "no");
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void write_json(FILE *f, const clr_device_desc *dev, const bench_opts *o,
                       const double *build_ms, const row *rows, size_t n) {
  const char *commit = clr_build_commit();
  fputs("{\"version\": ", f);
  json_string(f, CLR_VERSION);
  fputs(", \"commit\": ", f);
  if (commit)
    json_string(f, commit);
  else
    fputs("null", f);
  fputs(",\n \"device\": ", f);
  json_string(f, dev->device_name);
  fputs(", \"platform\": ", f);
  json_string(f, dev->platform_name);
  fprintf(f, ", \"type\": \"%s\", \"op\": \"%s\", \"repeat\": %u,",
          clr_type_name(o->type), clr_op_name(o->op), o->repeat);
  /* var's and std's divisor n - ddof; other ops have none */
  if (cli_op_flags(o->op) & CLR_OPF_MOMENTS)
    fprintf(f, " \"ddof\": %llu,", (unsigned long long)o->ddof);
  else
    fputs(" \"ddof\": null,", f);
  fputs(" \"map\": ", f);
  if (o->map)
    json_string(f, o->map == CLR_MAP_EXPR ? o->map_expr : clr_map_name(o->map));
  else
    fputs("null", f);
  fprintf(f, ", \"dot\": %s,\n", o->dot ? "true" : "false");
  fputs(" \"build_ms\": {", f);
  for (int k = 0, first = 1; k < N_ENTRIES; k++)
    if (o->kernels[k]) {
      fprintf(f, "%s\"%s\": %.3f", first ? "" : ", ", entry_name(k),
              build_ms[k]);
      first = 0;
    }
  fputs("},\n \"rows\": [\n", f);
  for (size_t i = 0; i < n; i++) {
    const row *r = &rows[i];
    fprintf(f, "  {\"kernel\": \"%s\", ", entry_name(r->kernel));
    if (is_matrix(r->kernel)) /* its shape */
      fprintf(f, "\"rows\": %zu, \"cols\": %zu, \"axis\": %d, ", r->rows,
              r->cols, r->kernel == ENTRY_MATRIX_ROWS);
    fprintf(f,
            "\"n\": %zu, \"kernel_ms\": %.6f, "
            "\"kernel_ms_min\": %.6f, \"gbps\": %.3f, \"stream_gbps\": %.3f, "
            "\"pct_stream\": %.1f, \"stream_reliable\": %s, "
            "\"call_ms\": %.6f, \"h2d_ms\": %.6f, \"verified\": %s}%s\n",
            r->n, r->kernel_ms, r->kernel_ms_min, r->gbps, r->stream_gbps,
            pct_stream(r), stream_reliable(r) ? "true" : "false", r->call_ms,
            r->h2d_ms,
            r->verified < 0 ? "null"
            : r->verified   ? "true"
                            : "false",
            i + 1 < n ? "," : "");
  }
  fputs(" ]}\n", f);
}

/* A colour a series: every entry and the stream read. */
_Static_assert(N_ENTRIES + 1 <= PLOT_COLOURS,
               "the plot's palette has a colour for every series");

static void write_svg(FILE *f, const clr_device_desc *dev, const bench_opts *o,
                      const row *rows, size_t n_rows, const size_t *sizes,
                      const double *stream, size_t n_sizes) {
  plot_series series[N_ENTRIES + 1];
  double xs[N_ENTRIES + 1][MAX_SIZES], ys[N_ENTRIES + 1][MAX_SIZES];
  size_t ns = 0;
  for (int k = 0; k < N_ENTRIES; k++) {
    if (!o->kernels[k])
      continue;
    size_t c = 0;
    for (size_t i = 0; i < n_rows; i++)
      if (rows[i].kernel == k && c < MAX_SIZES) {
        xs[ns][c] = (double)rows[i].n;
        ys[ns][c++] = rows[i].gbps;
      }
    series[ns] = (plot_series){entry_name(k), xs[ns], ys[ns], c, 0};
    ns++;
  }
  for (size_t i = 0; i < n_sizes; i++) {
    xs[ns][i] = (double)sizes[i];
    ys[ns][i] = stream[i];
  }
  series[ns] = (plot_series){"streaming read", xs[ns], ys[ns], n_sizes, 1};
  ns++;
  char title[512];
  snprintf(title, sizeof title, "clreduce: %s of %s on %s", clr_op_name(o->op),
           clr_type_name(o->type), dev->device_name);
  plot_svg(f, title, "GB/s (scans: read + write)", series, ns, o->y_scale);
}

/* What one of the result files holds. */
typedef struct results {
  const clr_device_desc *dev;
  const bench_opts *o;
  const double *build_ms; /* per entry                                  */
  size_t n_rows, n_sizes;
  const row *rows;
  const size_t *sizes; /* n_sizes, and at each the stream read's GB/s */
  const double *stream;
} results;

enum { OUT_CSV, OUT_JSON, OUT_SVG };

/* Write one result file: formatted in memory, then written by
 * cli_write_output (a unique temporary file renamed over path, or a
 * device written in place; every write checked), or onto stdout (path
 * NULL: --json).  0, or 3 after a one-line message naming path. */
static int write_results(const char *path, int kind, const results *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    bench_error("out of host memory writing '%s'",
                path ? path : "standard output");
    return 3;
  }
  if (kind == OUT_CSV)
    write_csv(f, r->rows, r->n_rows);
  else if (kind == OUT_JSON)
    write_json(f, r->dev, r->o, r->build_ms, r->rows, r->n_rows);
  else
    write_svg(f, r->dev, r->o, r->rows, r->n_rows, r->sizes, r->stream,
              r->n_sizes);
  int bad = fflush(f) != 0 || ferror(f);
  bad |= fclose(f) != 0;
  if (bad || !buf) {
    free(buf);
    bench_error("out of host memory writing '%s'",
                path ? path : "standard output");
    return 3;
  }
  int rc = 0;
  if (path)
    rc = cli_write_output(path, buf, len) == 0 ? 0 : 3;
  else if (fwrite(buf, 1, len, stdout) != len)
    rc = 3; /* reported by finish_stdout */
  free(buf);
  return rc;
}

/* The human output: stdout, or nowhere when --json prints there. */
static FILE *table;

static void tprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void tprintf(const char *fmt, ...) {
  if (!table)
    return;
  progress_clear();
  va_list ap;
  va_start(ap, fmt);
  vfprintf(table, fmt, ap);
  va_end(ap);
}

/* Two medians of the stream read that differ by more than this (a
 * fraction of the faster) make its n's ratios unreliable. */
#define STREAM_SPREAD 0.2

/* The '% stream' cell: the percentage, '*' when no reliable figure,
 * '>100*' above 100. */
static const char *pct_cell(const row *r, char *buf, size_t size) {
  double pct = pct_stream(r);
  if (pct > 100.0)
    snprintf(buf, size, ">100*");
  else
    snprintf(buf, size, "%.1f%s", pct, r->stream_noisy ? "*" : "");
  return buf;
}

/* The stream read of bytes (twice: the faster median is the yardstick,
 * the two apart by more than STREAM_SPREAD make it a noisy one): its GB/s
 * (0: failed) and *ms. */
static double stream_read(clr_context *ctx, size_t bytes, unsigned repeat,
                          double *ms, int *noisy) {
  double ms2 = 0;
  *ms = 0;
  *noisy = 0;
  if (clr_measure_read_bandwidth(ctx, bytes, repeat, ms) != CLR_OK ||
      clr_measure_read_bandwidth(ctx, bytes, repeat, &ms2) != CLR_OK ||
      *ms <= 0 || ms2 <= 0)
    return 0;
  *noisy = fabs(*ms - ms2) > STREAM_SPREAD * fmin(*ms, ms2);
  *ms = fmin(*ms, ms2);
  return (double)bytes / *ms / 1e6;
}

/* --matrix: each shape's rows or columns (clr_run's CLR_REQ_MATRIX of
 * host arrays), verified, then timed as the sweep times its entries,
 * beside the stream read of the same bytes (measured once an element
 * count, before its first shape).  The data are generated once, for the
 * largest shape; a smaller one reads its first elements. */
static int bench_matrix(clr_context *ctx, const bench_opts *o,
                        const clr_device_desc *dev) {
  size_t esize = clr_type_size(o->type), max_n = 0, n_stream = 0;
  for (size_t i = 0; i < o->n_shapes; i++)
    if (o->shapes[i].rows * o->shapes[i].cols > max_n)
      max_n = o->shapes[i].rows * o->shapes[i].cols;
  void *data = malloc(max_n * esize);
  row *rows = calloc(o->n_shapes, sizeof *rows);
  /* a stream read an element count: n, GB/s, noisy */
  struct {
    size_t n;
    double gbps;
    int noisy;
  } stream[MAX_SHAPES];
  double build_ms[N_ENTRIES] = {0};
  int rc = 0, failed = 0;
  size_t n_rows = 0;
  if (!data || !rows) {
    bench_error("out of host memory (%zu elements of %s)", max_n,
                clr_type_name(o->type));
    rc = 3;
    goto done;
  }
  char desc[256];
  clr_gen_data(o->op, o->type, 42, data, max_n, desc, sizeof desc);
  tprintf("device:  %s (%s, %s)\ntuning:  %s\ndata:    %s\n", dev->device_name,
          dev->platform_name, dev->device_version, clr_tuning_origin(ctx),
          desc);
  char ddof[48] = "";
  if (cli_op_flags(o->op) & CLR_OPF_MOMENTS)
    snprintf(ddof, sizeof ddof, " (ddof %llu)", (unsigned long long)o->ddof);
  tprintf("\nmatrices: %s%s%s of %s%s%s, row-major; matrix-rows: a result per "
          "row (axis 1),\n"
          "matrix-cols: a result per column (axis 0); kernel time: the median "
          "of %u runs\n"
          "after a verified warm-up (whose call builds the kernels); GB/s: "
          "rows x cols x\n"
          "%zu bytes over the kernel time.\n",
          o->matrix_exact ? "exact " : "", clr_op_name(o->op), ddof,
          clr_type_name(o->type), o->map ? ", map " : "",
          o->map ? clr_map_name(o->map) : "", o->repeat, esize);
  tprintf("\n%% stream: the row's GB/s as a percentage of the (stream read) "
          "row of its n, a\n"
          "plain kernel reading the same bytes.  *: no reliable ratio (the "
          "stream read's\n"
          "two measurements at that n differ by more than %.0f%%, or the "
          "kernel beat it:\n"
          ">100*).\n",
          100 * STREAM_SPREAD);
  tprintf("\n%-15s %-19s %12s %11s %9s %9s %11s %9s %s\n", "kernel", "shape",
          "n", "kernel ms", "GB/s", "% stream", "call ms", "h2d ms", "ok");
  if (table)
    fflush(table);
  progress_start(2 * o->n_shapes, o->progress);
  for (size_t i = 0; i < o->n_shapes; i++) {
    const mshape *m = &o->shapes[i];
    size_t n = m->rows * m->cols, s = 0;
    while (s < n_stream && stream[s].n != n)
      s++;
    if (s == n_stream) { /* this n's first shape */
      double ms;
      progress_step("stream read n=%zu", n);
      stream[s].n = n;
      stream[s].gbps =
          stream_read(ctx, n * esize, o->repeat, &ms, &stream[s].noisy);
      n_stream++;
      tprintf("%-15s %-19s %12zu %11.4f %9.2f %9s %11s %9s\n", "(stream read)",
              "", n, ms, stream[s].gbps, stream[s].noisy ? "100*" : "100", "",
              "");
    } else
      progress_step("stream read n=%zu (measured)", n);
    int entry = m->axis ? ENTRY_MATRIX_ROWS : ENTRY_MATRIX_COLS;
    row *r = &rows[n_rows];
    char shape[48];
    snprintf(shape, sizeof shape, "%zux%zu", m->rows, m->cols);
    progress_step("%s %s", entry_name(entry), shape);
    clr_status st = measure(ctx, o, entry, data, NULL, NULL, n, m, r);
    if (st != CLR_OK) {
      bench_error("%s %s: %s: %s", entry_name(entry), shape,
                  clr_status_string(st), clr_context_error(ctx));
      rc = cli_exit_status(st); /* 2: the library refused what was asked */
      goto done;
    }
    r->stream_gbps = stream[s].gbps;
    r->stream_noisy = stream[s].noisy || stream[s].gbps <= 0;
    failed |= r->verified == 0;
    char cell[16];
    tprintf("%-15s %-19s %12zu %11.4f %9.2f %9s %11.4f %9.4f %s\n",
            entry_name(entry), shape, n, r->kernel_ms, r->gbps,
            pct_cell(r, cell, sizeof cell), r->call_ms, r->h2d_ms,
            r->verified < 0 ? "-"
            : r->verified   ? "yes"
                            : "FAILED");
    if (table)
      fflush(table);
    n_rows++;
  }
  progress_end();
  const results res = {dev, o, build_ms, n_rows, 0, rows, NULL, NULL};
  if (o->json && write_results(o->json, OUT_JSON, &res) != 0)
    rc = 3;
  if (o->json_stdout && write_results(NULL, OUT_JSON, &res) != 0)
    rc = 3;
  if (failed && rc == 0) {
    bench_error("some results FAILED verification");
    rc = 1;
  }
done:
  progress_end();
  free(data);
  free(rows);
  return rc;
}

int main(int argc, char **argv) {
  bench_opts o;
  cli_set_program_name("clreduce-bench"); /* messages of fileio.c, diag.c */
  int rc = parse(argc, argv, &o);
  if (rc)
    return rc < 0 ? finish_stdout(0) : rc;
  table = o.json_stdout ? NULL : stdout;
  char detail[512];
  clr_context *ctx = NULL;
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  cfg.platform = o.platform;
  cfg.device = o.device;
  cfg.log = o.verbose || o.autotune ? log_stderr : NULL;
  clr_status st = clr_context_create(&cfg, &ctx, detail, sizeof detail);
  if (st != CLR_OK) {
    bench_error("%s: %s", clr_status_string(st), detail);
    return 3;
  }
  clr_device_desc dev;
  clr_context_device(ctx, &dev);
  if (o.autotune) {
    char path[4096] = "";
    st = clr_autotune(ctx, (size_t)o.autotune_n, path, sizeof path);
    if (st == CLR_OK)
      printf("tuning for %s stored in %s\n", dev.device_name,
             path[0] ? path : "(nowhere: cache disabled)");
    else
      bench_error("autotune failed: %s: %s", clr_status_string(st),
                  clr_context_error(ctx));
    clr_context_release(ctx);
    return finish_stdout(st == CLR_OK ? 0 : 3);
  }
  size_t esize = clr_type_size(o.type);
  size_t sizes[MAX_SIZES];
  uint64_t cap = dev.max_alloc_size / esize;
  size_t n_sizes = make_sizes(&o, cap, sizes);
  if (n_sizes == 0) {
    bench_error(
        "no size of the sweep (--per-decade=%u) lies in [%llu, %llu]%s" HINT,
        o.per_decade, (unsigned long long)o.min_n,
        (unsigned long long)(o.max_n < cap ? o.max_n : cap),
        o.max_n > cap ? " (--max-n capped to one device allocation)" : "");
    clr_context_release(ctx);
    return 2;
  }
  if (o.stage_threads >= 0 || o.stage_block_kib >= 0 || o.single_launch >= 0) {
    clr_tuning t = CLR_TUNING_INIT;
    clr_get_tuning(ctx, &t);
    if (o.stage_threads >= 0)
      t.stage_threads = (unsigned)o.stage_threads;
    if (o.stage_block_kib >= 0)
      t.stage_block_kib = (unsigned)o.stage_block_kib;
    if (o.single_launch >= 0)
      t.reduce_single_launch = (unsigned)o.single_launch;
    if (clr_set_tuning(ctx, &t) != CLR_OK) {
      bench_error("%s", clr_context_error(ctx));
      clr_context_release(ctx);
      return 2;
    }
  }
  if (o.group) {
    clr_context_config gcfg = cfg;
    gcfg.log = NULL;
    clr_context_release(ctx); /* the group makes its own */
    progress_start(n_sizes * GROUP_STEPS, o.progress);
    rc = bench_group(&gcfg, o.group, sizes, n_sizes, o.repeat);
    progress_end();
    return finish_stdout(rc);
  }
  if (o.host || o.latency) {
    progress_start(o.host ? n_sizes * HOST_STEPS : 0, o.progress);
    rc = o.host ? bench_host_paths(ctx, sizes, n_sizes, o.repeat) : 0;
    progress_end();
    if (o.latency && rc == 0)
      rc = bench_latency(ctx, o.repeat, "the default context (timed)");
    clr_context_release(ctx);
    if (o.latency && rc == 0) { /* the same without profiling */
      clr_context_config ucfg = cfg;
      ucfg.no_profiling = 1;
      ctx = NULL;
      if (clr_context_create(&ucfg, &ctx, detail, sizeof detail) != CLR_OK) {
        bench_error("%s", detail);
        return finish_stdout(3);
      }
      rc = bench_latency(ctx, o.repeat, "a context with no_profiling");
      clr_context_release(ctx);
    }
    return finish_stdout(rc);
  }
  if (o.matrix) {
    rc = bench_matrix(ctx, &o, &dev);
    clr_context_release(ctx);
    return finish_stdout(rc);
  }
  size_t max_n = sizes[n_sizes - 1];
  /* A scan's output is at most 8 bytes an element (half data scans into
   * float). */
  void *data = malloc(max_n * esize), *out = malloc(max_n * 8);
  void *data2 = o.dot ? malloc(max_n * esize) : NULL;
  row *rows = calloc(n_sizes * N_ENTRIES, sizeof *rows);
  double stream[MAX_SIZES] = {0}, build_ms[N_ENTRIES] = {0};
  size_t n_rows = 0;
  int failed = 0;
  if (!data || !out || !rows || (o.dot && !data2)) {
    bench_error("out of host memory");
    rc = 3;
    goto done;
  }
  char desc[256];
  clr_gen_data(o.op, o.type, 42, data, max_n, desc, sizeof desc);
  if (data2) {
    char desc2[256];
    clr_gen_data(o.op, o.type, 43, data2, max_n, desc2, sizeof desc2);
  }
  clr_tuning tun = CLR_TUNING_INIT;
  clr_get_tuning(ctx, &tun);
  tprintf("device:  %s (%s, %s)\ntuning:  %s\ndata:    %s\n", dev.device_name,
          dev.platform_name, dev.device_version, clr_tuning_origin(ctx), desc);
  /* First-call costs: program build (or binary-cache load) per kernel. */
  tprintf("\nfirst-call costs (program build or cache load):\n");
  for (int k = 0; k < N_ENTRIES; k++) {
    if (!o.kernels[k])
      continue;
    /* A dot product's kernels take two arrays, a segmented reduction
     * has its own: built (and timed) by their first call, below. */
    if (o.dot || is_segmented(k)) {
      tprintf("  %-15s build with the first call\n", entry_name(k));
      continue;
    }
    clr_options opt;
    clr_timing t = CLR_TIMING_INIT;
    clr_options_init(&opt);
    opt.kernel = k == ENTRY_EXACT ? CLR_REDUCE_COARSE : (clr_kernel)k;
    opt.exact = k == ENTRY_EXACT;
    opt.map = o.map;
    opt.map_expr = o.map_expr;
    st = clr_prepare(ctx, &opt, o.op, o.type);
    if (st != CLR_OK) {
      bench_error("%s: %s: %s", entry_name(k), clr_status_string(st),
                  clr_context_error(ctx));
      rc = cli_exit_status(st); /* 2: the library refused what was asked */
      goto done;
    }
    clr_last_timing(ctx, &t);
    build_ms[k] = t.build_ms;
    tprintf("  %-15s build %8.1f ms\n", entry_name(k), t.build_ms);
  }
  tprintf("\n%% stream: the row's GB/s as a percentage of the (stream read) "
          "row of its n, a\n"
          "plain kernel reading the same bytes.  *: no reliable ratio (the "
          "stream read's\n"
          "two measurements at that n differ by more than %.0f%%, or the "
          "kernel beat it:\n"
          ">100*); at small n launch overhead and timer noise dominate "
          "both.\n",
          100 * STREAM_SPREAD);
  tprintf("\n%-15s %12s %11s %9s %9s %11s %9s %s\n", "kernel", "n", "kernel ms",
          "GB/s", "% stream", "call ms", "h2d ms", "ok");
  if (table)
    fflush(table);
  size_t total = 0;
  for (int k = 0; k < N_ENTRIES; k++)
    total += o.kernels[k] ? n_sizes : 0;
  progress_start(total + n_sizes, o.progress);
  for (size_t s = 0; s < n_sizes; s++) {
    size_t n = sizes[s];
    double ms = 0, ms2 = 0;
    /* The stream read of every byte the row reads (both arrays of a dot
     * product), twice: the faster median is the yardstick, and the two
     * apart by more than STREAM_SPREAD make it a noisy one. */
    size_t read_bytes = n * esize * (o.dot ? 2 : 1);
    int noisy = 0;
    progress_step("stream read n=%zu", n);
    if (clr_measure_read_bandwidth(ctx, read_bytes, o.repeat, &ms) == CLR_OK &&
        clr_measure_read_bandwidth(ctx, read_bytes, o.repeat, &ms2) == CLR_OK &&
        ms > 0 && ms2 > 0) {
      noisy = fabs(ms - ms2) > STREAM_SPREAD * fmin(ms, ms2);
      ms = fmin(ms, ms2);
      stream[s] = (double)read_bytes / ms / 1e6;
    }
    tprintf("%-15s %12zu %11.4f %9.2f %9s %11s %9s\n", "(stream read)", n, ms,
            stream[s], noisy ? "100*" : "100", "", "");
    for (int k = 0; k < N_ENTRIES; k++) {
      if (!o.kernels[k])
        continue;
      row *r = &rows[n_rows];
      progress_step("%s n=%zu", entry_name(k), n);
      st = measure(ctx, &o, k, data, data2, out, n, NULL, r);
      if (st != CLR_OK) {
        bench_error("%s n=%zu: %s: %s", entry_name(k), n, clr_status_string(st),
                    clr_context_error(ctx));
        rc = cli_exit_status(st); /* 2: the library refused what was asked */
        goto done;
      }
      r->stream_gbps = stream[s];
      r->stream_noisy = noisy || stream[s] <= 0;
      failed |= r->verified == 0;
      char cell[16];
      tprintf("%-15s %12zu %11.4f %9.2f %9s %11.4f %9.4f %s\n",
              entry_name(r->kernel), n, r->kernel_ms, r->gbps,
              pct_cell(r, cell, sizeof cell), r->call_ms, r->h2d_ms,
              r->verified < 0 ? "-"
              : r->verified   ? "yes"
                              : "FAILED");
      if (table)
        fflush(table);
      n_rows++;
    }
  }
  progress_end();
  /* Each file is written (or fails with its own message); any failure is
   * exit 3. */
  const results res = {&dev,    &o,   build_ms, n_rows,
                       n_sizes, rows, sizes,    stream};
  if (o.csv && write_results(o.csv, OUT_CSV, &res) != 0)
    rc = 3;
  if (o.json && write_results(o.json, OUT_JSON, &res) != 0)
    rc = 3;
  if (o.json_stdout && write_results(NULL, OUT_JSON, &res) != 0)
    rc = 3;
  if (o.svg && write_results(o.svg, OUT_SVG, &res) != 0)
    rc = 3;
  if (failed && rc == 0) {
    bench_error("some results FAILED verification");
    rc = 1;
  }
done:
  progress_end();
  free(data);
  free(data2);
  free(out);
  free(rows);
  clr_context_release(ctx);
  return finish_stdout(rc);
}
