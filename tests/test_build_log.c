/* The kernels build without warnings, and the library never writes to
 * stderr while building them.
 *
 *   test_build_log [--verbose]
 *
 * A representative set of kernel variants is built and run on small
 * arrays, from source (PoCL's program cache in a fresh directory, the
 * library's on-disk cache off): every file of cl/ (a file added there
 * without a variant here fails the test), every op of clreduce_ops.def,
 * float, double, int and half, exact sums, maps, scans, segments (tiles
 * and runs), rows, ranges, matrices, reduce-by-key and segmented scans.  The
 * context's log callback collects what the library logs (a successful
 * build's log goes there, a line at a time), and fd 2 is a file for the
 * whole time: PoCL's clang prints "N warnings generated." there itself,
 * so a warning in a kernel would show in both.  Checks: every call
 * succeeds, no logged line holds "warning", and the file stays empty. */
#include "test_util.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ the log */

static char log_text[1 << 20];
static size_t log_len, log_warnings;

static int has_warning(const char *s) {
  for (; *s; s++)
    if (strncasecmp(s, "warning", 7) == 0)
      return 1;
  return 0;
}

static void collect(void *user, const char *message) {
  (void)user;
  if (has_warning(message))
    log_warnings++;
  size_t n = strlen(message);
  if (log_len + n + 2 < sizeof log_text) {
    memcpy(log_text + log_len, message, n);
    log_len += n;
    log_text[log_len++] = '\n';
    log_text[log_len] = '\0';
  }
}

/* ------------------------------------------------------------ the files */

/* The cl/ files the calls below build; the directory may hold no other. */
static const char *const covered[] = {"common.cl",
                                      "records.cl",
                                      "moments.cl",
                                      "moments_finish.cl",
                                      "load_mapped.cl",
                                      "reduce_interleaved.cl",
                                      "reduce_sequential.cl",
                                      "reduce_first_add.cl",
                                      "reduce_coarse.cl",
                                      "reduce_extrema.cl",
                                      "reduce_exact.cl",
                                      "stream_read.cl",
                                      "scan_kogge_stone.cl",
                                      "scan_kogge_stone_db.cl",
                                      "scan_brent_kung.cl",
                                      "scan_decoupled.cl",
                                      "scan_lanes.cl",
                                      "scan_tile.cl",
                                      "scan_segmented.cl",
                                      "reduce_segmented.cl",
                                      "reduce_rows.cl",
                                      "reduce_columns.cl",
                                      "gather_ranges.cl",
                                      "reduce_ranges.cl",
                                      "reduce_mean.cl",
                                      "key_runs.cl"};

static void check_coverage(const char *kernel_dir) {
  DIR *d = opendir(kernel_dir);
  struct dirent *e;
  if (!TU_CHECK(d != NULL, "kernel directory %s readable", kernel_dir))
    return;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name), i;
    if (len < 4 || strcmp(e->d_name + len - 3, ".cl") != 0)
      continue;
    for (i = 0; i < sizeof covered / sizeof *covered; i++)
      if (strcmp(covered[i], e->d_name) == 0)
        break;
    TU_CHECK(i < sizeof covered / sizeof *covered,
             "%s/%s has a variant in this test", kernel_dir, e->d_name);
  }
  closedir(d);
}

/* ------------------------------------------------------------ the calls */

#define N 5000
#define SEGMENTS 7

static unsigned char data[N * 8], data2[N * 8], out[N * 8], keys[N * 4];
static unsigned char results[SEGMENTS * 64];

static void fill(clr_type t) {
  for (size_t i = 0; i < N; i++)
    if (tu_is_float(t))
      tu_store_f(t, data, i, (double)(i % 97) * 0.25 - 5.0);
    else
      tu_store_i(t, data, i, (int64_t)(i % 97) - 40);
  memcpy(data2, data, sizeof data2);
}

static void expect_ok(clr_context *ctx, clr_status s, const char *what,
                      clr_op op, clr_type t) {
  TU_CHECK(s == CLR_OK, "%s, %s of %s: %s (%s)", what, clr_op_name(op),
           clr_type_name(t), clr_status_name(s), clr_context_error(ctx));
}

static void reduce(clr_context *ctx, const clr_options *o, clr_op op,
                   clr_type t, const char *what) {
  clr_value v;
  fill(t);
  expect_ok(ctx, clr_reduce_host(ctx, o, op, t, data, N, &v), what, op, t);
}

static void scan(clr_context *ctx, const clr_options *o, clr_op op, clr_type t,
                 const char *what) {
  fill(t);
  expect_ok(ctx, clr_scan_host(ctx, o, op, t, data, out, N), what, op, t);
}

/* Segments of mixed lengths (one empty), in tiles or in runs. */
static void segments(clr_context *ctx, clr_layout layout, int scan_them,
                     clr_op op, clr_type t) {
  static const uint64_t offsets[SEGMENTS + 1] = {0,    10,   10,   700,
                                                 1500, 3000, 4100, N};
  clr_options o;
  clr_options_init(&o);
  o.layout = layout;
  fill(t);
  clr_status s = scan_them
                     ? clr_scan_segments_host(ctx, &o, op, t, data, out, N,
                                              offsets, SEGMENTS)
                     : clr_reduce_segments_host(ctx, &o, op, t, data, N,
                                                offsets, SEGMENTS, results);
  expect_ok(ctx, s,
            scan_them ? (layout == CLR_LAYOUT_STRIDED ? "segmented scan, tiles"
                                                      : "segmented scan, runs")
            : layout == CLR_LAYOUT_STRIDED ? "segments, tiles"
                                           : "segments, runs",
            op, t);
}

static void builds(clr_context *ctx) {
  clr_options o;
  static const clr_kernel reductions[] = {
      CLR_REDUCE_INTERLEAVED, CLR_REDUCE_SEQUENTIAL, CLR_REDUCE_FIRST_ADD,
      CLR_REDUCE_COARSE};
  static const clr_kernel scans[] = {CLR_SCAN_KOGGE_STONE,
                                     CLR_SCAN_KOGGE_STONE_DB,
                                     CLR_SCAN_BRENT_KUNG, CLR_SCAN_DECOUPLED};
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT, CLR_HALF};

  /* The reduction kernels; the coarse one in both layouts. */
  for (size_t k = 0; k < sizeof reductions / sizeof *reductions; k++) {
    clr_options_init(&o);
    o.kernel = reductions[k];
    reduce(ctx, &o, CLR_SUM, CLR_FLOAT, clr_kernel_name(o.kernel));
  }
  clr_options_init(&o);
  o.layout = CLR_LAYOUT_STRIDED;
  reduce(ctx, &o, CLR_SUM, CLR_FLOAT, "coarse, strided");
  /* Every op of the table, on float where it takes float, else on int;
   * the min and max of every type. */
  for (int op = 0; op < CLR_OP_COUNT; op++) {
    clr_type t =
        clr_op_supports((clr_op)op, CLR_FLOAT) == CLR_OK ? CLR_FLOAT : CLR_INT;
    reduce(ctx, NULL, (clr_op)op, t, "coarse");
  }
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    reduce(ctx, NULL, CLR_SUM, types[i], "coarse");
    reduce(ctx, NULL, CLR_MINMAX, types[i], "coarse");
  }
  reduce(ctx, NULL, CLR_ARGMAX, CLR_HALF, "coarse");
  reduce(ctx, NULL, CLR_NANARGMIN, CLR_DOUBLE, "coarse");
  /* Exact sums. */
  clr_options_init(&o);
  o.exact = 1;
  reduce(ctx, &o, CLR_SUM, CLR_FLOAT, "exact");
  reduce(ctx, &o, CLR_SUM, CLR_DOUBLE, "exact");
  /* Maps: built in, and expressions of x and i. */
  clr_options_init(&o);
  o.map = CLR_MAP_ABS;
  reduce(ctx, &o, CLR_SUM, CLR_HALF, "map abs");
  o.map = CLR_MAP_SQUARE;
  reduce(ctx, &o, CLR_MAX, CLR_INT, "map square");
  o.map = CLR_MAP_EXPR;
  o.map_expr = "x * x + (float)i";
  reduce(ctx, &o, CLR_SUM, CLR_FLOAT, "map expression");
  o.map_expr = "x > 0.5f";
  o.accumulate_in = CLR_LONG;
  reduce(ctx, &o, CLR_SUM, CLR_FLOAT, "map expression counted in long");
  o.accumulate_in = CLR_TYPE_DEFAULT;
  o.map_expr = "x > 1";
  reduce(ctx, &o, CLR_AND, CLR_DOUBLE, "map expression, and");
  o.map_expr = "abs(x) + i";
  reduce(ctx, &o, CLR_ARGMAX, CLR_INT, "map expression, argmax");
  /* A dot product. */
  clr_value v;
  fill(CLR_FLOAT);
  expect_ok(ctx, clr_dot_host(ctx, NULL, CLR_FLOAT, data, data2, N, &v), "dot",
            CLR_SUM, CLR_FLOAT);
  /* The scan kernels, each op a scan takes, every type, exclusive. */
  for (size_t k = 0; k < sizeof scans / sizeof *scans; k++) {
    clr_options_init(&o);
    o.kernel = scans[k];
    scan(ctx, &o, CLR_SUM, CLR_FLOAT, clr_kernel_name(o.kernel));
    o.exclusive = 1;
    scan(ctx, &o, CLR_MAX, CLR_INT, clr_kernel_name(o.kernel));
  }
  clr_options_init(&o);
  o.kernel = CLR_SCAN_DECOUPLED;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    scan(ctx, &o, CLR_PROD, types[i], "decoupled");
  scan(ctx, &o, CLR_XOR, CLR_INT, "decoupled");
  scan(ctx, &o, CLR_MIN, CLR_HALF, "decoupled");
  /* Segments in tiles and in runs, segmented scans. */
  static const clr_layout layouts[] = {CLR_LAYOUT_STRIDED,
                                       CLR_LAYOUT_CONTIGUOUS};
  for (size_t l = 0; l < 2; l++) {
    segments(ctx, layouts[l], 0, CLR_SUM, CLR_FLOAT);
    segments(ctx, layouts[l], 0, CLR_ARGMIN, CLR_DOUBLE);
    segments(ctx, layouts[l], 0, CLR_MINMAX, CLR_HALF);
    segments(ctx, layouts[l], 0, CLR_MEAN, CLR_INT);
    segments(ctx, layouts[l], 1, CLR_SUM, CLR_FLOAT);
    segments(ctx, layouts[l], 1, CLR_MAX, CLR_HALF);
    segments(ctx, layouts[l], 1, CLR_PROD, CLR_DOUBLE);
  }
  /* Rows: segments of one length, in one launch (the tiled form, enough
   * rows of 512 elements to fill the device). */
  size_t n_rows = 4 * (size_t)tu_device.compute_units;
  n_rows = n_rows < 64 ? 64 : n_rows;
  float *matrix = tu_xmalloc(n_rows * 512 * sizeof *matrix);
  uint64_t *rows = tu_xmalloc((n_rows + 1) * sizeof *rows);
  unsigned char *row_results =
      tu_xmalloc(n_rows * clr_result_bytes(NULL, CLR_MINMAX, CLR_DOUBLE));
  for (size_t i = 0; i < n_rows * 512; i++)
    matrix[i] = (float)(i % 13);
  for (size_t i = 0; i <= n_rows; i++)
    rows[i] = i * 512;
  clr_options_init(&o);
  o.layout = CLR_LAYOUT_STRIDED;
  expect_ok(ctx,
            clr_reduce_segments_host(ctx, &o, CLR_SUM, CLR_FLOAT, matrix,
                                     n_rows * 512, rows, n_rows, row_results),
            "rows", CLR_SUM, CLR_FLOAT);
  expect_ok(ctx,
            clr_reduce_segments_host(ctx, &o, CLR_ARGMAX, CLR_FLOAT, matrix,
                                     n_rows * 512, rows, n_rows, row_results),
            "rows", CLR_ARGMAX, CLR_FLOAT);
  free(matrix);
  free(rows);
  free(row_results);
  /* Matrices: columns and rows, both layouts (vector loads, lanes,
   * partials of values and of records, CPU runs), means. */
  static const clr_op matrix_ops[] = {CLR_SUM, CLR_ARGMAX, CLR_MEAN, CLR_STD};
  static const clr_type matrix_types[] = {CLR_FLOAT, CLR_HALF};
  float *mx = tu_xmalloc(2000 * 64 * sizeof *mx);
  unsigned char *mres = tu_xmalloc(2000 * 32);
  for (size_t i = 0; i < 2000 * 64; i++)
    mx[i] = (float)(i % 7);
  for (size_t l = 0; l < 2; l++)
    for (size_t k = 0; k < 3; k++)
      for (size_t t = 0; t < 2; t++)
        for (int axis = 0; axis < 2; axis++) {
          clr_options mo = CLR_OPTIONS_INIT;
          mo.layout = layouts[l];
          clr_request r = CLR_REQUEST_INIT;
          r.kind = CLR_REQ_MATRIX;
          r.op = matrix_ops[k];
          r.type = matrix_types[t];
          r.rows = axis ? 8 : 2000; /* 8 long rows: cut into pieces */
          r.cols = axis ? 16000 : 64;
          r.axis = axis;
          r.input.host = mx;
          r.output.host = mres;
          r.options = &mo;
          expect_ok(ctx, clr_run(ctx, &r, NULL), axis ? "rows" : "columns",
                    r.op, r.type);
        }
  free(mx);
  free(mres);
  /* Ranges of a buffer: short, unsorted and overlapping, copied together
   * on the device first. */
  static const uint64_t ranges[2 * 4] = {3000, 50, 10, 40, 20, 100, 4000, 7};
  fill(CLR_FLOAT);
  cl_mem d_data = tu_new_buffer(ctx, N * 4, data);
  cl_mem d_ranges = tu_new_buffer(ctx, sizeof ranges, ranges);
  cl_mem d_results = tu_new_buffer(ctx, N * 16, NULL);
  expect_ok(ctx,
            clr_reduce_ranges_buffer(ctx, NULL, CLR_SUM, CLR_FLOAT, d_data, 0,
                                     N, d_ranges, 0, 4, d_results, 0),
            "ranges", CLR_SUM, CLR_FLOAT);
  expect_ok(ctx,
            clr_reduce_ranges_buffer(ctx, NULL, CLR_MINMAX, CLR_FLOAT, d_data,
                                     0, N, d_ranges, 0, 4, d_results, 0),
            "ranges", CLR_MINMAX, CLR_FLOAT);
  /* Enqueued: ranges on the device (a NaN-skipping mean: counts and the
   * division too), an exact sum rounded and a mean divided there. */
  static const clr_op enqueued[3] = {CLR_MINMAX, CLR_NANMEAN, CLR_MEAN};
  for (int k = 0; k < 3; k++) {
    clr_request r = CLR_REQUEST_INIT;
    clr_options ex = CLR_OPTIONS_INIT;
    ex.exact = k == 2;
    r.kind = k < 2 ? CLR_REQ_RANGES : CLR_REQ_REDUCE;
    r.op = enqueued[k];
    r.type = CLR_FLOAT;
    r.n = N;
    r.input.buffer = d_data;
    r.segments.buffer = k < 2 ? d_ranges : NULL;
    r.n_segments = k < 2 ? 4 : 0;
    r.output.buffer = d_results;
    r.options = &ex;
    cl_event ev = NULL;
    expect_ok(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), "enqueued", r.op,
              CLR_FLOAT);
    if (ev) {
      clWaitForEvents(1, &ev);
      clReleaseEvent(ev);
    }
  }
  /* Reduce by key on the device: runs of equal keys. */
  for (size_t i = 0; i < N; i++) {
    int32_t k = (int32_t)(i / 300);
    memcpy(keys + 4 * i, &k, 4);
  }
  cl_mem d_keys = tu_new_buffer(ctx, N * 4, keys);
  cl_mem d_unique = tu_new_buffer(ctx, N * 4, NULL);
  size_t n_runs = 0;
  expect_ok(ctx,
            clr_reduce_by_key_buffer(ctx, NULL, CLR_SUM, CLR_INT, d_keys, 0,
                                     CLR_FLOAT, d_data, 0, N, d_unique, 0,
                                     d_results, 0, &n_runs),
            "reduce by key", CLR_SUM, CLR_FLOAT);
  clReleaseMemObject(d_data);
  clReleaseMemObject(d_ranges);
  clReleaseMemObject(d_results);
  clReleaseMemObject(d_keys);
  clReleaseMemObject(d_unique);
  /* The streaming kernel of the bandwidth measurement. */
  double ms = 0;
  expect_ok(ctx, clr_measure_read_bandwidth(ctx, 1 << 20, 1, &ms),
            "read bandwidth", CLR_SUM, CLR_FLOAT);
}

int main(int argc, char **argv) {
  tu_verbose = argc > 1 && strcmp(argv[1], "--verbose") == 0;
  /* PoCL reads its cache directory when the platform starts: a fresh one
   * makes it compile every program. */
  char pocl_cache[] = "/tmp/clreduce-build-log-XXXXXX";
  if (!mkdtemp(pocl_cache))
    tu_die("mkdtemp failed");
  setenv("POCL_CACHE_DIR", pocl_cache, 1);

  /* fd 2 into a file for everything that touches OpenCL. */
  char err_path[] = "/tmp/clreduce-build-log-stderr-XXXXXX";
  int err_fd = mkstemp(err_path);
  int saved = dup(2);
  if (err_fd < 0 || saved < 0)
    tu_die("cannot make a file for stderr");
  fflush(stderr);
  dup2(err_fd, 2);

  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .cache_dir = "",
                            .log = collect};
  clr_context *ctx = tu_context_from(&cfg);
  builds(ctx);
  char kernel_dir[4096];
  snprintf(kernel_dir, sizeof kernel_dir, "%s", clr_context_kernel_dir(ctx));
  clr_context_release(ctx);

  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  tu_section("kernel variants built and run");

  check_coverage(kernel_dir);
  TU_CHECK(log_warnings == 0,
           "no warning in the build logs (%zu lines with one)", log_warnings);
  if (log_warnings || tu_verbose)
    printf("the library's log:\n%s", log_text);
  struct stat st;
  int empty = fstat(err_fd, &st) == 0 && st.st_size == 0;
  TU_CHECK(empty, "nothing written to stderr while building");
  if (!empty) {
    char buf[4096];
    ssize_t got = pread(err_fd, buf, sizeof buf - 1, 0);
    buf[got > 0 ? got : 0] = '\0';
    printf("stderr held:\n%s\n", buf);
  }
  close(err_fd);
  unlink(err_path);
  /* PoCL's cache: a tree of small files. */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", pocl_cache);
  if (system(cmd) != 0)
    printf("note: could not remove %s\n", pocl_cache);
  tu_section("build logs and stderr");
  return tu_finish("test_build_log");
}
