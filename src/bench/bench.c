/* clreduce-bench: every kernel over a range of sizes, timed with the
 * library's profiling events (median of many runs after a warm-up),
 * against the device's own read bandwidth measured in the same run by a
 * plain streaming kernel.  Prints a table; writes CSV, JSON and an SVG
 * plot of GB/s against n on request.  --autotune searches and stores the
 * device's launch parameters instead.  Progress goes to stderr. */
#include "args.h"
#include "cli.h"
#include "clreduce.h"
#include "datagen.h"
#include "exact_sum.h"
#include "fileio.h"
#include "group_paths.h"
#include "host_paths.h"
#include "plot.h"
#include "reference.h"
#include "scan_reference.h"
#include "segment_reference.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
/* What a row measures: a kernel (clr_kernel), the exact sum (--exact:
 * clr_options.exact, whose kernel is its own), or a segmented reduction
 * of one shape (--segments): random lengths 1..200, three long segments,
 * rows of 1000. */
enum {
  ENTRY_EXACT = CLR_KERNEL_COUNT,
  ENTRY_SEG_RANDOM,
  ENTRY_SEG_LONG,
  ENTRY_SEG_ROWS,
  N_ENTRIES
};

static const char *entry_name(int e) {
  static const char *const extra[] = {"exact", "seg-random", "seg-3-long",
                                      "seg-rows-1000"};
  return e >= ENTRY_EXACT ? extra[e - ENTRY_EXACT]
                          : clr_kernel_name((clr_kernel)e);
}

static int is_segmented(int e) { return e >= ENTRY_SEG_RANDOM; }

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
  double kernel_ms, kernel_ms_min, call_ms, h2d_ms, gbps, stream_gbps;
  int verified; /* 1 yes, 0 failed, -1 not checked */
} row;

typedef struct bench_opts {
  clr_type type;
  clr_op op;
  int kernels[N_ENTRIES];
  uint64_t min_n, max_n;
  unsigned per_decade, repeat;
  const char *csv, *json, *svg, *platform, *device;
  int autotune, verify;
  uint64_t autotune_n;
  clr_map map;                         /* --map */
  const char *map_expr;                /* --map=EXPR */
  int dot;                             /* --dot: x . y of two arrays */
  int host, latency;                   /* --host, --latency (host_paths.c) */
  const char *group;                   /* --group=DEVICES (group_paths.c) */
  long stage_threads, stage_block_kib; /* -1: the device's tuning */
  long single_launch;                  /* -1: the device's tuning */
} bench_opts;

static void usage(FILE *f) {
  /* The types and operations from their tables (clreduce_types.def,
   * clreduce_ops.def), as clreduce --help lists them. */
  fputs("usage: clreduce-bench [options]\n"
        "  --type=T         ",
        f);
  cli_print_type_help(f, 19, CLI_DEFAULT_TYPE);
  fputs("  --op=OP          ", f);
  cli_print_op_help(f, 19, CLI_DEFAULT_OP);
  fputs(
      "  --map=M          abs, square or an OpenCL C expression of x and i,\n"
      "                   applied before the reduction (the coarse kernel;\n"
      "                   an expression is not verified here: clreduce\n"
      "                   --map checks it against a sequential loop)\n"
      "  --dot            the dot product of two arrays (--op=sum; GB/s and\n"
      "                   the stream read count both arrays)\n"
      "  --kernels=LIST   comma-separated kernel names (default: all that\n"
      "                   support the op)\n"
      "  --min-n=N        smallest size (default 1e3)\n"
      "  --max-n=N        largest size (default 1e8, capped to one device\n"
      "                   allocation)\n"
      "  --per-decade=K   sizes per decade: 1 (1e3, 1e4...) or 3 (1,2,5)\n"
      "  --repeat=R       timed runs per point, median reported (default "
      "20)\n"
      "  --csv=FILE --json=FILE --svg=FILE   write the results\n"
      "  --platform=P --device=D             choose the device\n"
      "  --no-verify      skip the CPU check of each kernel's first run\n"
      "  --exact          float/double sum: add the exact sum (verified by\n"
      "                   equality with the CPU's exact sum)\n"
      "  --segments       segmented reductions of three shapes: random\n"
      "                   lengths 1..200, three long segments, rows of 1000\n"
      "                   (GB/s count the values and the offsets)\n"
      "  --host           host arrays (float sum, scan) at each size: whole\n"
      "                   calls beside plain pageable and pinned copies\n"
      "  --stage-threads=T --stage-block-kib=K  the tuning keys stage.threads\n"
      "                   and stage.block_kib for this run\n"
      "  --single-launch=0|1  the tuning key reduce.single_launch\n"
      "  --latency        small calls (n = 1e3, 1e4) beside the device's\n"
      "                   floor (one launch + a blocking 8-byte read)\n"
      "  --group=DEVICES  a float sum over several devices ('all', '0,1')\n"
      "                   against the first alone: resident buffers and\n"
      "                   host arrays, wall clock of whole calls\n"
      "  --autotune[=N]   search the launch parameters on N elements\n"
      "                   (default 2^25), store them, and exit\n"
      "  --help\n",
      f);
}

/* The table on stdout is a result too: a full disk or a closed pipe
 * there is a runtime error (3). */
static int finish_stdout(int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "clreduce-bench: cannot write to standard output\n");
    return rc ? rc : 3;
  }
  return rc;
}

static int parse(int argc, char **argv, bench_opts *o) {
  static const struct option longopts[] = {
      {"type", required_argument, 0, 't'},
      {"op", required_argument, 0, 'o'},
      {"kernels", required_argument, 0, 'k'},
      {"min-n", required_argument, 0, 'a'},
      {"max-n", required_argument, 0, 'b'},
      {"per-decade", required_argument, 0, 'p'},
      {"repeat", required_argument, 0, 'r'},
      {"csv", required_argument, 0, 'c'},
      {"json", required_argument, 0, 'j'},
      {"svg", required_argument, 0, 's'},
      {"platform", required_argument, 0, 'P'},
      {"device", required_argument, 0, 'D'},
      {"no-verify", no_argument, 0, 'V'},
      {"exact", no_argument, 0, 'E'},
      {"map", required_argument, 0, 'M'},
      {"dot", no_argument, 0, 'X'},
      {"autotune", optional_argument, 0, 'A'},
      {"segments", no_argument, 0, 'S'},
      {"host", no_argument, 0, 'H'},
      {"latency", no_argument, 0, 'L'},
      {"group", required_argument, 0, 'G'},
      {"stage-threads", required_argument, 0, 'T'},
      {"stage-block-kib", required_argument, 0, 'B'},
      {"single-launch", required_argument, 0, 'O'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  int c, any_kernel = 0;
  const char *why = NULL;
  uint64_t v;
  memset(o, 0, sizeof *o);
  o->type = CLI_DEFAULT_TYPE;
  o->op = CLI_DEFAULT_OP;
  o->min_n = 1000;
  o->max_n = 100000000;
  o->per_decade = 1;
  o->repeat = 20;
  o->stage_threads = o->stage_block_kib = o->single_launch = -1;
  o->verify = 1;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case 't':
      if (clr_type_from_name(optarg, &o->type) != CLR_OK) {
        fprintf(stderr, "clreduce-bench: unknown type '%s' (try --help)\n",
                optarg);
        return 2;
      }
      break;
    case 'o':
      if (clr_op_from_name(optarg, &o->op) != CLR_OK) {
        char ops[512];
        cli_op_list(ops, sizeof ops, 0);
        fprintf(stderr, "clreduce-bench: unknown op '%s' (valid: %s)\n", optarg,
                ops);
        return 2;
      }
      break;
    case 'M':
      if (!*optarg)
        goto bad;
      if (clr_map_from_name(optarg, &o->map) != CLR_OK ||
          o->map == CLR_MAP_EXPR || o->map == CLR_MAP_NONE) {
        o->map = CLR_MAP_EXPR;
        o->map_expr = optarg;
      }
      break;
    case 'X':
      o->dot = 1;
      break;
    case 'H':
      o->host = 1;
      break;
    case 'L':
      o->latency = 1;
      break;
    case 'G':
      if (!*optarg)
        goto bad;
      o->group = optarg;
      break;
    case 'O':
      if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0) {
        fprintf(stderr, "clreduce-bench: --single-launch is 0 or 1\n");
        return 2;
      }
      o->single_launch = optarg[0] - '0';
      break;
    case 'T':
    case 'B': {
      uint64_t v;
      const char *why = NULL;
      if (cli_parse_u64(optarg, &v, &why) != 0 || v > (1u << 20)) {
        fprintf(stderr, "clreduce-bench: bad --%s '%s'\n",
                c == 'T' ? "stage-threads" : "stage-block-kib", optarg);
        return 2;
      }
      *(c == 'T' ? &o->stage_threads : &o->stage_block_kib) = (long)v;
      break;
    }
    case 'S':
      o->kernels[ENTRY_SEG_RANDOM] = o->kernels[ENTRY_SEG_LONG] =
          o->kernels[ENTRY_SEG_ROWS] = any_kernel = 1;
      break;
    case 'k': {
      char *list = strdup(optarg), *save = NULL;
      if (!list)
        return 3;
      for (char *tok = strtok_r(list, ",", &save); tok;
           tok = strtok_r(NULL, ",", &save)) {
        clr_kernel k;
        if (clr_kernel_from_name(tok, &k) != CLR_OK) {
          fprintf(stderr, "clreduce-bench: unknown kernel '%s'\n", tok);
          free(list);
          return 2;
        }
        o->kernels[k] = any_kernel = 1;
      }
      free(list);
      break;
    }
    case 'a':
    case 'b':
    case 'A':
      if (c == 'A' && !optarg) {
        o->autotune = 1;
        break;
      }
      if (cli_parse_count(optarg, &v, &why) != 0) {
        fprintf(stderr, "clreduce-bench: bad size '%s': %s\n", optarg, why);
        return 2;
      }
      if (c == 'a')
        o->min_n = v;
      else if (c == 'b')
        o->max_n = v;
      else
        o->autotune = 1, o->autotune_n = v;
      break;
    case 'p':
    case 'r':
      if (cli_parse_u64(optarg, &v, &why) != 0 || v == 0 || v > 100000) {
        fprintf(stderr, "clreduce-bench: bad value '%s'\n", optarg);
        return 2;
      }
      if (c == 'p')
        o->per_decade = v >= 3 ? 3 : 1;
      else
        o->repeat = (unsigned)v;
      break;
    case 'c':
      o->csv = optarg;
      break;
    case 'j':
      o->json = optarg;
      break;
    case 's':
      o->svg = optarg;
      break;
    case 'P':
      o->platform = optarg;
      break;
    case 'D':
      o->device = optarg;
      break;
    case 'V':
      o->verify = 0;
      break;
    case 'E':
      o->kernels[ENTRY_EXACT] = 1;
      break;
    case 'h':
      usage(stdout);
      exit(finish_stdout(0));
    default:
      goto bad;
    }
  }
  if (optind < argc || o->min_n > o->max_n)
    goto bad;
  if (!any_kernel)
    for (int k = 0; k < CLR_KERNEL_COUNT; k++)
      o->kernels[k] = 1;
  /* Only the kernels that can compute the op on the type (the library's
   * rule, clr_kernel_supports: scans take the CLR_OPF_SCAN ops, the
   * indexed ones run on the coarse kernel). */
  for (int k = 0; k < CLR_KERNEL_COUNT; k++)
    if (clr_kernel_supports((clr_kernel)k, o->op, o->type) ==
            CLR_ERR_UNSUPPORTED &&
        clr_op_supports(o->op, o->type) == CLR_OK)
      o->kernels[k] = 0;
  if (o->kernels[ENTRY_EXACT] &&
      (o->op != CLR_SUM || (o->type != CLR_FLOAT && o->type != CLR_DOUBLE))) {
    fprintf(stderr, "clreduce-bench: --exact is for float and double sums\n");
    return 2;
  }
  /* Maps and dot products: the kernels that take them. */
  for (int k = 0; k < CLR_KERNEL_COUNT; k++)
    if ((o->map || o->dot) && !clr_kernel_takes_maps((clr_kernel)k))
      o->kernels[k] = 0;
  /* Segments take every op of the plain reduction (the library refuses,
   * with its reason, one it has no per-segment form of), of one array. */
  if (o->kernels[ENTRY_SEG_RANDOM] && o->dot) {
    fprintf(stderr, "clreduce-bench: --segments reduces one array: no "
                    "--dot\n");
    return 2;
  }
  if (o->dot && o->op != CLR_SUM) {
    fprintf(stderr, "clreduce-bench: --dot sums x * y: --op=sum\n");
    return 2;
  }
  char refusal[512];
  if (cli_op_type_refusal(o->op, o->type, o->map == CLR_MAP_EXPR, refusal,
                          sizeof refusal)) {
    fprintf(stderr, "clreduce-bench: %s\n", refusal);
    return 2;
  }
  return 0;
bad:
  fprintf(stderr, "clreduce-bench: bad arguments (try --help)\n");
  return 2;
}

static size_t make_sizes(const bench_opts *o, uint64_t cap, size_t *sizes) {
  static const double steps3[] = {1, 2, 5};
  size_t count = 0;
  for (double decade = 1; decade <= 1e19 && count < MAX_SIZES; decade *= 10)
    for (unsigned s = 0; s < (o->per_decade == 3 ? 3u : 1u); s++) {
      double v = decade * (o->per_decade == 3 ? steps3[s] : 1.0);
      if (v >= (double)o->min_n && v <= (double)o->max_n && v <= (double)cap &&
          count < MAX_SIZES)
        sizes[count++] = (size_t)v;
    }
  return count;
}

static void log_stderr(void *user, const char *msg) {
  (void)user;
  fprintf(stderr, "%s\n", msg);
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
  clr_value v;
} bench_call;

static clr_status call_once(bench_call *c) {
  const bench_opts *o = c->o;
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

/* The warm-up's answer against the CPU: 1 right, 0 wrong, -1 not
 * checked (an expression map has no CPU reference), -2 out of memory. */
static int check_once(const bench_call *c, size_t depth) {
  const bench_opts *o = c->o;
  clr_type rt = clr_options_result_type(&c->opt, o->op, o->type);
  if (!o->verify || o->map == CLR_MAP_EXPR)
    return -1;
  if (is_segmented(c->entry)) {
    clr_segments_check chk;
    return clr_ref_segments_check(o->map, o->op, o->type, rt, c->data,
                                  c->offsets, c->segments, c->out, depth, &chk)
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
  if (!clr_ref_reduce_mapped(o->map, o->op, o->type, rt, c->data,
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
                          size_t n, row *r) {
  bench_call c = {.ctx = ctx, .o = o, .entry = entry, .n = n};
  c.data = data;
  c.data2 = data2;
  c.out = out;
  clr_options_init(&c.opt);
  c.opt.kernel =
      entry < CLR_KERNEL_COUNT ? (clr_kernel)entry : CLR_REDUCE_COARSE;
  c.opt.exact = entry == ENTRY_EXACT;
  c.opt.map = o->map;
  c.opt.map_expr = o->map_expr;
  uint64_t *offsets =
      is_segmented(entry) ? segment_offsets(entry, n, &c.segments) : NULL;
  c.offsets = offsets;
  /* Segments' results: a value each, or a record for the indexed ops. */
  void *results =
      offsets
          ? malloc(c.segments * clr_result_bytes(&c.opt, o->op, o->type) + 1)
          : NULL;
  if (results)
    c.out = results;
  double *km = malloc(o->repeat * sizeof *km);
  double *cm = malloc(o->repeat * sizeof *cm);
  double *hm = malloc(o->repeat * sizeof *hm);
  clr_status st = km && cm && hm && (results || !is_segmented(entry))
                      ? CLR_OK
                      : CLR_ERR_OUT_OF_MEMORY;
  clr_timing t;
  memset(r, 0, sizeof *r);
  r->kernel = entry;
  r->n = n;
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

static void write_csv(FILE *f, const row *rows, size_t n) {
  fprintf(f, "kernel,n,kernel_ms,kernel_ms_min,gbps,stream_gbps,pct_stream,"
             "call_ms,h2d_ms,verified\n");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s,%zu,%.6f,%.6f,%.3f,%.3f,%.1f,%.6f,%.6f,%s\n",
            entry_name(rows[i].kernel), rows[i].n, rows[i].kernel_ms,
            rows[i].kernel_ms_min, rows[i].gbps, rows[i].stream_gbps,
            rows[i].stream_gbps > 0 ? 100.0 * rows[i].gbps / rows[i].stream_gbps
                                    : 0.0,
            rows[i].call_ms, rows[i].h2d_ms,
            rows[i].verified < 0 ? ""
            : rows[i].verified   ? "yes"
                                 : "no");
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
  fputs("{\"device\": ", f);
  json_string(f, dev->device_name);
  fputs(", \"platform\": ", f);
  json_string(f, dev->platform_name);
  fprintf(f, ", \"type\": \"%s\", \"op\": \"%s\", \"repeat\": %u,",
          clr_type_name(o->type), clr_op_name(o->op), o->repeat);
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
  for (size_t i = 0; i < n; i++)
    fprintf(f,
            "  {\"kernel\": \"%s\", \"n\": %zu, \"kernel_ms\": %.6f, "
            "\"kernel_ms_min\": %.6f, \"gbps\": %.3f, \"stream_gbps\": %.3f, "
            "\"call_ms\": %.6f, \"h2d_ms\": %.6f, \"verified\": %s}%s\n",
            entry_name(rows[i].kernel), rows[i].n, rows[i].kernel_ms,
            rows[i].kernel_ms_min, rows[i].gbps, rows[i].stream_gbps,
            rows[i].call_ms, rows[i].h2d_ms,
            rows[i].verified < 0 ? "null"
            : rows[i].verified   ? "true"
                                 : "false",
            i + 1 < n ? "," : "");
  fputs(" ]}\n", f);
}

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
  plot_svg(f, title, "GB/s (scans: read + write)", series, ns);
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
 * device written in place; every write checked).  0, or 3 after a
 * one-line message naming path. */
static int write_results(const char *path, int kind, const results *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    fprintf(stderr, "clreduce-bench: out of host memory writing '%s'\n", path);
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
    fprintf(stderr, "clreduce-bench: out of host memory writing '%s'\n", path);
    return 3;
  }
  int rc = cli_write_output(path, buf, len) == 0 ? 0 : 3;
  free(buf);
  return rc;
}

int main(int argc, char **argv) {
  bench_opts o;
  cli_set_program_name("clreduce-bench"); /* messages of fileio.c, diag.c */
  int rc = parse(argc, argv, &o);
  if (rc)
    return rc;
  char detail[512];
  clr_context *ctx = NULL;
  clr_context_config cfg = {0};
  cfg.platform = o.platform;
  cfg.device = o.device;
  cfg.log = log_stderr;
  clr_status st = clr_context_create(&cfg, &ctx, detail, sizeof detail);
  if (st != CLR_OK) {
    fprintf(stderr, "clreduce-bench: %s: %s\n", clr_status_string(st), detail);
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
      fprintf(stderr, "clreduce-bench: autotune failed: %s: %s\n",
              clr_status_string(st), clr_context_error(ctx));
    clr_context_release(ctx);
    return finish_stdout(st == CLR_OK ? 0 : 3);
  }
  size_t esize = clr_type_size(o.type);
  size_t sizes[MAX_SIZES];
  size_t n_sizes = make_sizes(&o, dev.max_alloc_size / esize, sizes);
  if (n_sizes == 0) {
    fprintf(stderr, "clreduce-bench: no size in range\n");
    clr_context_release(ctx);
    return 2;
  }
  if (o.stage_threads >= 0 || o.stage_block_kib >= 0 || o.single_launch >= 0) {
    clr_tuning t;
    clr_get_tuning(ctx, &t);
    if (o.stage_threads >= 0)
      t.stage_threads = (unsigned)o.stage_threads;
    if (o.stage_block_kib >= 0)
      t.stage_block_kib = (unsigned)o.stage_block_kib;
    if (o.single_launch >= 0)
      t.reduce_single_launch = (unsigned)o.single_launch;
    if (clr_set_tuning(ctx, &t) != CLR_OK) {
      fprintf(stderr, "clreduce-bench: %s\n", clr_context_error(ctx));
      clr_context_release(ctx);
      return 2;
    }
  }
  if (o.group) {
    clr_context_config gcfg = cfg;
    gcfg.log = NULL;
    clr_context_release(ctx); /* the group makes its own */
    return finish_stdout(bench_group(&gcfg, o.group, sizes, n_sizes, o.repeat));
  }
  if (o.host || o.latency) {
    rc = o.host ? bench_host_paths(ctx, sizes, n_sizes, o.repeat) : 0;
    if (o.latency && rc == 0)
      rc = bench_latency(ctx, o.repeat, "the default context (timed)");
    clr_context_release(ctx);
    if (o.latency && rc == 0) { /* the same without profiling */
      clr_context_config ucfg = cfg;
      ucfg.no_profiling = 1;
      ctx = NULL;
      if (clr_context_create(&ucfg, &ctx, detail, sizeof detail) != CLR_OK) {
        fprintf(stderr, "clreduce-bench: %s\n", detail);
        return finish_stdout(3);
      }
      rc = bench_latency(ctx, o.repeat, "a context with no_profiling");
      clr_context_release(ctx);
    }
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
    fprintf(stderr, "clreduce-bench: out of host memory\n");
    rc = 3;
    goto done;
  }
  char desc[256];
  clr_gen_data(o.op, o.type, 42, data, max_n, desc, sizeof desc);
  if (data2) {
    char desc2[256];
    clr_gen_data(o.op, o.type, 43, data2, max_n, desc2, sizeof desc2);
  }
  clr_tuning tun;
  clr_get_tuning(ctx, &tun);
  printf("device:  %s (%s, %s)\ntuning:  %s\ndata:    %s\n", dev.device_name,
         dev.platform_name, dev.device_version, tun.origin, desc);
  /* First-call costs: program build (or binary-cache load) per kernel. */
  printf("\nfirst-call costs (program build or cache load):\n");
  for (int k = 0; k < N_ENTRIES; k++) {
    if (!o.kernels[k])
      continue;
    /* A dot product's kernels take two arrays, a segmented reduction
     * has its own: built (and timed) by their first call, below. */
    if (o.dot || is_segmented(k)) {
      printf("  %-15s build with the first call\n", entry_name(k));
      continue;
    }
    clr_options opt;
    clr_timing t;
    clr_options_init(&opt);
    opt.kernel = k == ENTRY_EXACT ? CLR_REDUCE_COARSE : (clr_kernel)k;
    opt.exact = k == ENTRY_EXACT;
    opt.map = o.map;
    opt.map_expr = o.map_expr;
    st = clr_prepare(ctx, &opt, o.op, o.type);
    if (st != CLR_OK) {
      fprintf(stderr, "clreduce-bench: %s: %s: %s\n", entry_name(k),
              clr_status_string(st), clr_context_error(ctx));
      rc = cli_exit_status(st); /* 2: the library refused what was asked */
      goto done;
    }
    clr_last_timing(ctx, &t);
    build_ms[k] = t.build_ms;
    printf("  %-15s build %8.1f ms\n", entry_name(k), t.build_ms);
  }
  printf("\n%-15s %12s %11s %9s %9s %11s %9s %s\n", "kernel", "n", "kernel ms",
         "GB/s", "% stream", "call ms", "h2d ms", "ok");
  size_t total = 0, done_count = 0;
  for (int k = 0; k < N_ENTRIES; k++)
    total += o.kernels[k] ? n_sizes : 0;
  for (size_t s = 0; s < n_sizes; s++) {
    size_t n = sizes[s];
    double ms = 0;
    /* The stream read of every byte the row reads: both arrays of a dot
     * product. */
    size_t read_bytes = n * esize * (o.dot ? 2 : 1);
    if (clr_measure_read_bandwidth(ctx, read_bytes, o.repeat, &ms) == CLR_OK &&
        ms > 0)
      stream[s] = (double)read_bytes / ms / 1e6;
    printf("%-15s %12zu %11.4f %9.2f %9s %11s %9s\n", "(stream read)", n, ms,
           stream[s], "100", "", "");
    for (int k = 0; k < N_ENTRIES; k++) {
      if (!o.kernels[k])
        continue;
      row *r = &rows[n_rows];
      fprintf(stderr, "[%zu/%zu] %s n=%zu\n", ++done_count, total,
              entry_name(k), n);
      st = measure(ctx, &o, k, data, data2, out, n, r);
      if (st != CLR_OK) {
        fprintf(stderr, "clreduce-bench: %s n=%zu: %s: %s\n", entry_name(k), n,
                clr_status_string(st), clr_context_error(ctx));
        rc = cli_exit_status(st); /* 2: the library refused what was asked */
        goto done;
      }
      r->stream_gbps = stream[s];
      failed |= r->verified == 0;
      printf("%-15s %12zu %11.4f %9.2f %9.1f %11.4f %9.4f %s\n",
             entry_name(r->kernel), n, r->kernel_ms, r->gbps,
             stream[s] > 0 ? 100.0 * r->gbps / stream[s] : 0.0, r->call_ms,
             r->h2d_ms,
             r->verified < 0 ? "-"
             : r->verified   ? "yes"
                             : "FAILED");
      fflush(stdout);
      n_rows++;
    }
  }
  /* Each file is written (or fails with its own message); any failure is
   * exit 3. */
  const results res = {&dev,    &o,   build_ms, n_rows,
                       n_sizes, rows, sizes,    stream};
  if (o.csv && write_results(o.csv, OUT_CSV, &res) != 0)
    rc = 3;
  if (o.json && write_results(o.json, OUT_JSON, &res) != 0)
    rc = 3;
  if (o.svg && write_results(o.svg, OUT_SVG, &res) != 0)
    rc = 3;
  if (failed && rc == 0) {
    fprintf(stderr, "clreduce-bench: some results FAILED verification\n");
    rc = 1;
  }
done:
  free(data);
  free(data2);
  free(out);
  free(rows);
  clr_context_release(ctx);
  return finish_stdout(rc);
}
