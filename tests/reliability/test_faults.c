/* Fault injection: make OpenCL calls fail, one at a time, and check that
 * the library
 *   - returns the right status (CLR_ERR_OUT_OF_MEMORY for allocation
 *     failures, CLR_ERR_BUILD for a failed build, CLR_ERR_OPENCL for any
 *     other failed call) with a detail naming the failed call, or, for the
 *     calls it documents as optional (profiling, build log, binary cache),
 *     succeeds with the right answer;
 *   - never returns CLR_OK with a wrong answer, never crashes;
 *   - leaks nothing: every OpenCL object created is released (counted by
 *     faultshim.c's wrappers of clCreate* / clRetain* / clRelease*);
 *   - leaves the context usable: the next call succeeds, with the right
 *     answer.
 *
 * This program is linked with faultshim.c and exports its symbols
 * (export_dynamic), so the calls libclreduce.so makes go through the shim.
 *
 *   test_faults --part=PART --kernel-dir=DIR --work-dir=DIR
 * PART:
 *   create        every call clr_context_create makes
 *   sweep-cold    the calls of a context's first use of each case
 *                 (builds, kernel creation, first allocations), each on a
 *                 fresh context, with the on-disk program cache off
 *   sweep-cached  the same with a warm on-disk program cache (binary
 *                 loads instead of builds)
 *   sweep-warm    every call of each case on a context that already ran
 *                 it (programs and buffers reused)
 *   build-errors  missing, unreadable and broken kernel sources
 *   program-cache more distinct programs than the context keeps (64)
 */
#include "faultshim.h"
#include "test_util.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kernel_dir, *work_dir;

/* ------------------------------------------------------------ cases */

typedef enum {
  CALL_REDUCE_HOST,
  CALL_REDUCE_BUFFER,
  CALL_SCAN_HOST,
  CALL_SCAN_BUFFER,
  CALL_SEGMENTS_HOST,  /* clr_reduce_segments_host: segments of 0..200 */
  CALL_SEGMENTS_BUFFER /* clr_reduce_segments_buffer, data at offset */
} call_kind;

static int is_segmented(call_kind k) {
  return k == CALL_SEGMENTS_HOST || k == CALL_SEGMENTS_BUFFER;
}

typedef struct fcase {
  const char *name;
  call_kind call;
  clr_kernel kernel;
  clr_op op;
  clr_type type;
  size_t n, wg, coarse;
  unsigned vec;
  clr_layout layout;
  int exclusive, in_place, carry;
  size_t offset; /* reduce_buffer */
} fcase;

static const fcase cases[] = {
    {"reduce coarse int sum (long accumulator)", CALL_REDUCE_HOST,
     CLR_REDUCE_COARSE, CLR_SUM, CLR_INT, 5003, 16, 4, 4, CLR_LAYOUT_STRIDED, 0,
     0, 0, 0},
    {"reduce sequential float max", CALL_REDUCE_HOST, CLR_REDUCE_SEQUENTIAL,
     CLR_MAX, CLR_FLOAT, 1000, 8, 0, 0, CLR_LAYOUT_AUTO, 0, 0, 0, 0},
    {"reduce_buffer first-add long min at offset 3", CALL_REDUCE_BUFFER,
     CLR_REDUCE_FIRST_ADD, CLR_MIN, CLR_LONG, 999, 8, 0, 0, CLR_LAYOUT_AUTO, 0,
     0, 0, 3},
    {"scan kogge-stone int sum with carry", CALL_SCAN_HOST,
     CLR_SCAN_KOGGE_STONE, CLR_SUM, CLR_INT, 3001, 8, 4, 0, CLR_LAYOUT_AUTO, 0,
     0, 1, 0},
    {"scan brent-kung double min exclusive in place", CALL_SCAN_HOST,
     CLR_SCAN_BRENT_KUNG, CLR_MIN, CLR_DOUBLE, 2000, 8, 2, 0, CLR_LAYOUT_AUTO,
     1, 1, 0, 0},
    {"scan_buffer kogge-stone-db long max", CALL_SCAN_BUFFER,
     CLR_SCAN_KOGGE_STONE_DB, CLR_MAX, CLR_LONG, 777, 4, 4, 0, CLR_LAYOUT_AUTO,
     0, 0, 0, 0},
    {"scan decoupled int sum with carry", CALL_SCAN_HOST, CLR_SCAN_DECOUPLED,
     CLR_SUM, CLR_INT, 1001, 8, 4, 0, CLR_LAYOUT_AUTO, 0, 0, 1, 0},
    /* coarse: the units each work-item takes, few enough for a carry
     * pyramid of two levels */
    {"segments int sum", CALL_SEGMENTS_HOST, CLR_REDUCE_COARSE, CLR_SUM,
     CLR_INT, 4001, 8, 2, 0, CLR_LAYOUT_AUTO, 0, 0, 0, 0},
    {"segments_buffer float max at offset 5", CALL_SEGMENTS_BUFFER,
     CLR_REDUCE_COARSE, CLR_MAX, CLR_FLOAT, 3001, 4, 3, 0, CLR_LAYOUT_AUTO, 0,
     0, 0, 5},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* Host data, reference and the test's own buffers for one case. */
typedef struct prepared {
  const fcase *c;
  unsigned char *in, *out, *want, carry[8];
  clr_reference ref;
  uint64_t *offsets; /* segment cases: segments + 1 of them */
  size_t segments;
  cl_mem mem_in, mem_out, mem_off; /* buffer cases: made before arming */
} prepared;

/* Segments of lengths 0 to 200 in a fixed cycle over n elements, and
 * each one's result (exact: tu_fill_exact data) in p->want. */
static void prepare_segments(prepared *p) {
  static const size_t lengths[] = {0, 3, 1, 50, 0, 200, 7, 129};
  const fcase *c = p->c;
  size_t es = clr_type_size(c->type), at = 0, s = 0;
  clr_type rt = clr_result_type(c->op, c->type, 0);
  p->offsets = tu_xmalloc((c->n + 2) * sizeof *p->offsets);
  p->offsets[0] = 0;
  while (at < c->n) {
    size_t len = lengths[s % (sizeof lengths / sizeof *lengths)];
    at = at + len > c->n ? c->n : at + len;
    p->offsets[++s] = at;
  }
  p->segments = s;
  for (s = 0; s < p->segments; s++) {
    size_t a = (size_t)p->offsets[s], len = (size_t)p->offsets[s + 1] - a;
    clr_reference ref;
    ref.value = clr_identity(c->op, rt);
    if (len)
      clr_ref_reduce(c->op, c->type, 0, p->in + (c->offset + a) * es, len,
                     &ref);
    memcpy(p->want + s * clr_type_size(rt), &ref.value.v, clr_type_size(rt));
  }
}

static void prepare_case(const fcase *c, prepared *p) {
  size_t es = clr_type_size(c->type), total = c->n + c->offset;
  memset(p, 0, sizeof *p);
  p->c = c;
  p->in = tu_xmalloc(total * es);
  /* room for a scan's output, or a result (of up to 8 bytes) a segment */
  p->out = tu_xmalloc(total * 8);
  p->want = tu_xmalloc(total * 8);
  tu_fill_exact(c->type, c->op, p->in, total, (uint64_t)c->n);
  tu_fill_exact(c->type, c->op, p->carry, 1, 7);
  if (is_segmented(c->call))
    prepare_segments(p);
  else if (c->call == CALL_REDUCE_HOST || c->call == CALL_REDUCE_BUFFER)
    clr_ref_reduce(c->op, c->type, 0, p->in + c->offset * es, c->n, &p->ref);
  else
    tu_scan_ref(c->op, c->type, c->exclusive, c->carry ? p->carry : NULL, p->in,
                p->want, c->n);
}

static void free_case(prepared *p) {
  free(p->offsets);
  free(p->in);
  free(p->out);
  free(p->want);
}

static void options_of(const fcase *c, const prepared *p, clr_options *o) {
  clr_options_init(o);
  o->kernel = c->kernel;
  o->wg_size = c->wg;
  o->coarse = c->coarse;
  o->vector_width = c->vec;
  o->layout = c->layout;
  o->exclusive = c->exclusive;
  o->carry_in = c->carry ? p->carry : NULL;
}

/* The test's own buffers (never faulted: created before arming). */
static void make_buffers(clr_context *ctx, prepared *p) {
  const fcase *c = p->c;
  size_t es = clr_type_size(c->type), bytes = (c->n + c->offset) * es;
  cl_int err;
  p->mem_in = p->mem_out = p->mem_off = NULL;
  if (c->call != CALL_REDUCE_BUFFER && c->call != CALL_SCAN_BUFFER &&
      c->call != CALL_SEGMENTS_BUFFER)
    return;
  p->mem_in = clCreateBuffer(clr_context_cl_context(ctx),
                             CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                             p->in, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer (test data): %d", (int)err);
  if (c->call == CALL_SCAN_BUFFER || c->call == CALL_SEGMENTS_BUFFER) {
    p->mem_out = clCreateBuffer(clr_context_cl_context(ctx), CL_MEM_READ_WRITE,
                                (c->n + c->offset) * 8, NULL, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateBuffer (test output): %d", (int)err);
  }
  if (c->call == CALL_SEGMENTS_BUFFER) {
    p->mem_off = clCreateBuffer(
        clr_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        (p->segments + 1) * sizeof *p->offsets, p->offsets, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateBuffer (test offsets): %d", (int)err);
  }
}

static void free_buffers(prepared *p) {
  if (p->mem_off)
    clReleaseMemObject(p->mem_off);
  if (p->mem_out)
    clReleaseMemObject(p->mem_out);
  if (p->mem_in)
    clReleaseMemObject(p->mem_in);
  p->mem_in = p->mem_out = p->mem_off = NULL;
}

/* The library call alone (what faults are injected into). */
static clr_status run_call(clr_context *ctx, prepared *p, clr_value *got) {
  const fcase *c = p->c;
  size_t es = clr_type_size(c->type);
  clr_options o;
  options_of(c, p, &o);
  memset(got, 0, sizeof *got);
  switch (c->call) {
  case CALL_REDUCE_HOST:
    return clr_reduce_host(ctx, &o, c->op, c->type, p->in, c->n, got);
  case CALL_REDUCE_BUFFER:
    return clr_reduce_buffer(ctx, &o, c->op, c->type, p->mem_in, c->offset,
                             c->n, got);
  case CALL_SCAN_HOST:
    if (c->in_place) {
      memcpy(p->out, p->in, c->n * es);
      return clr_scan_host(ctx, &o, c->op, c->type, p->out, p->out, c->n);
    }
    memset(p->out, 0xA5, c->n * es);
    return clr_scan_host(ctx, &o, c->op, c->type, p->in, p->out, c->n);
  case CALL_SCAN_BUFFER:
    return clr_scan_buffer(ctx, &o, c->op, c->type, p->mem_in, p->mem_out,
                           c->n);
  case CALL_SEGMENTS_HOST:
    memset(p->out, 0xA5, p->segments * 8);
    return clr_reduce_segments_host(ctx, &o, c->op, c->type, p->in, c->n,
                                    p->offsets, p->segments, p->out);
  default:
    return clr_reduce_segments_buffer(ctx, &o, c->op, c->type, p->mem_in,
                                      c->offset, c->n, p->mem_off, 0,
                                      p->segments, p->mem_out, 0);
  }
}

/* Is the answer of a successful call right?  Reads the output buffer of
 * buffer scans (unfaulted). */
static int answer_ok(clr_context *ctx, prepared *p, const clr_value *got,
                     char *why, size_t size) {
  const fcase *c = p->c;
  char a[64], b[64];
  if (c->call == CALL_REDUCE_HOST || c->call == CALL_REDUCE_BUFFER) {
    clr_check chk;
    clr_timing t = CLR_TIMING_INIT;
    clr_last_timing(ctx, &t);
    clr_ref_check(&p->ref, got, t.error_depth, &chk);
    snprintf(why, size, "got %s, want %s", tu_fmtv(*got, a, sizeof a),
             tu_fmtv(p->ref.value, b, sizeof b));
    return chk.ok && got->type == p->ref.value.type;
  }
  /* Scans: an element of the input type each; segments: a result each. */
  clr_type t =
      is_segmented(c->call) ? clr_result_type(c->op, c->type, 0) : c->type;
  size_t count = is_segmented(c->call) ? p->segments : c->n;
  if (c->call == CALL_SCAN_BUFFER || c->call == CALL_SEGMENTS_BUFFER) {
    cl_int err =
        clEnqueueReadBuffer(clr_context_queue(ctx), p->mem_out, CL_TRUE, 0,
                            count * clr_type_size(t), p->out, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      snprintf(why, size, "reading the output back failed (%d)", (int)err);
      return 0;
    }
  }
  size_t i = tu_first_diff(t, p->out, p->want, count);
  if (i < count)
    snprintf(why, size, "%s %zu is %s, want %s",
             is_segmented(c->call) ? "segment" : "element", i,
             tu_fmtv(clr_value_at(t, p->out, i), a, sizeof a),
             tu_fmtv(clr_value_at(t, p->want, i), b, sizeof b));
  return i == count;
}

/* ------------------------------------------------------------ contexts */

static clr_context *new_context(int copy, const char *cache_dir) {
  char detail[512] = "";
  clr_status s;
  clr_context *ctx =
      tu_context_at(kernel_dir, cache_dir, copy, &s, detail, sizeof detail);
  if (s != CLR_OK)
    tu_die("clr_context_create: %s: %s (is an OpenCL platform installed?)",
           clr_status_name(s), detail);
  if (copy) {
    /* Copied host arrays go through pinned blocks of 4 KiB, two threads:
     * every case's array spans several blocks (src/lib/pinned.c). */
    clr_tuning t = CLR_TUNING_INIT;
    clr_get_tuning(ctx, &t);
    t.stage_threads = 2;
    t.stage_block_kib = 4;
    if (clr_set_tuning(ctx, &t) != CLR_OK)
      tu_die("clr_set_tuning: %s", clr_context_error(ctx));
  }
  return ctx;
}

/* ------------------------------------------------------------ expectations */

typedef enum { MUST_FAIL, MAY_FAIL, MUST_SUCCEED } policy;

static int is_oom_error(cl_int e) {
  return e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY ||
         e == CL_OUT_OF_RESOURCES;
}

/* What a failure of fn inside a reduce / scan call must lead to. */
static policy policy_of(fs_fn fn, int binary_cache) {
  switch (fn) {
  /* Documented as optional: timings, build logs, cache stores. */
  case FS_clGetEventProfilingInfo:
  case FS_clGetProgramInfo:
  case FS_clGetProgramBuildInfo:
    return MUST_SUCCEED;
  /* A cached binary that fails to load or build is rebuilt from source. */
  case FS_clCreateProgramWithBinary:
    return MUST_SUCCEED;
  case FS_clBuildProgram:
    return binary_cache ? MUST_SUCCEED : MUST_FAIL;
  /* Used both where a failure is fatal and where it only costs a timing. */
  case FS_clWaitForEvents:
  case FS_clFinish:
  case FS_clGetDeviceInfo:
  case FS_clGetPlatformInfo:
  case FS_clGetPlatformIDs:
  case FS_clGetDeviceIDs:
  case FS_clGetCommandQueueInfo:
    return MAY_FAIL;
  default:
    return MUST_FAIL;
  }
}

static clr_status expected_status(fs_fn fn, cl_int err) {
  if (is_oom_error(err))
    return CLR_ERR_OUT_OF_MEMORY;
  if (fn == FS_clBuildProgram && err == CL_BUILD_PROGRAM_FAILURE)
    return CLR_ERR_BUILD;
  return CLR_ERR_OPENCL;
}

/* The error a generic failure of fn is injected with. */
static cl_int generic_error(fs_fn fn) {
  switch (fn) {
  case FS_clCreateBuffer:
    return CL_MEM_OBJECT_ALLOCATION_FAILURE;
  case FS_clBuildProgram:
    return CL_BUILD_PROGRAM_FAILURE;
  case FS_clEnqueueNDRangeKernel:
    return CL_INVALID_KERNEL_ARGS;
  case FS_clSetKernelArg:
    return CL_INVALID_ARG_SIZE;
  case FS_clCreateKernel:
    return CL_INVALID_KERNEL_NAME;
  default:
    return CL_INVALID_VALUE;
  }
}

static const char *cl_err_name(cl_int e) {
  switch (e) {
  case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_OUT_OF_RESOURCES:
    return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY:
    return "CL_OUT_OF_HOST_MEMORY";
  case CL_BUILD_PROGRAM_FAILURE:
    return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_KERNEL_ARGS:
    return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_ARG_SIZE:
    return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_KERNEL_NAME:
    return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_VALUE:
    return "CL_INVALID_VALUE";
  default:
    return "?";
  }
}

/* Judge one faulted call.  Returns 1 when the outcome is acceptable. */
static int judge(clr_context *ctx, prepared *p, fs_fn fn, unsigned long k,
                 cl_int err, int binary_cache, clr_status st,
                 const clr_value *got, int pending, const char *mode) {
  char why[256] = "";
  policy pol = policy_of(fn, binary_cache);
  clr_status want = expected_status(fn, err);
  const char *detail = clr_context_error(ctx);
  char what[512];
  snprintf(what, sizeof what, "[%s] %s: %s call #%lu fails with %s", mode,
           p->c->name, fs_name(fn), k, cl_err_name(err));
  /* Whatever the outcome, nothing the call enqueued may still be waiting
   * to run when it returns: it could read or write the caller's arrays
   * after the caller has reused or freed them. */
  if (p->c->call == CALL_REDUCE_HOST || p->c->call == CALL_SCAN_HOST ||
      p->c->call == CALL_SEGMENTS_HOST) {
    if (st == CLR_OK)
      tu_check(!pending, "%s: returned CLR_OK with commands still queued",
               what);
    else
      tu_known("inflight-on-error", !pending,
               "%s: returned %s with commands it enqueued still queued (they "
               "use the caller's host arrays after the call returned)",
               what, clr_status_name(st));
  }
  if (st == CLR_OK) {
    int right = answer_ok(ctx, p, got, why, sizeof why);
    if (!tu_check(right, "%s: CLR_OK with a wrong answer (%s)", what, why))
      return 0;
    return tu_check(pol != MUST_FAIL,
                    "%s: the failure was ignored (CLR_OK, right answer)", what);
  }
  if (!tu_check(pol != MUST_SUCCEED,
                "%s: returned %s (%s), but this call is optional", what,
                clr_status_name(st), detail))
    return 0;
  if (!tu_check(st == want, "%s: returned %s, want %s (detail: %s)", what,
                clr_status_name(st), clr_status_name(want), detail))
    return 0;
  /* The detail names the call (or, for a failed build, says so). */
  const char *needle = want == CLR_ERR_BUILD ? "build" : fs_name(fn);
  if (fn == FS_clFinish)
    return tu_known("finish-detail", strstr(detail, needle) != NULL,
                    "%s: detail '%s' does not mention '%s'", what, detail,
                    needle);
  return tu_check(strstr(detail, needle) != NULL,
                  "%s: detail '%s' does not mention '%s'", what, detail,
                  needle);
}

/* Calls of every function during one run, counted on ctx. */
static void count_calls(clr_context *ctx, prepared *p,
                        unsigned long counts[FS_COUNT]) {
  clr_value got;
  char why[256];
  fs_reset_counts();
  clr_status st = run_call(ctx, p, &got);
  for (int f = 0; f < FS_COUNT; f++)
    counts[f] = fs_calls((fs_fn)f);
  if (st != CLR_OK)
    tu_die("%s: unfaulted run failed: %s: %s", p->c->name, clr_status_name(st),
           clr_context_error(ctx));
  if (!answer_ok(ctx, p, &got, why, sizeof why))
    tu_die("%s: unfaulted run gave a wrong answer: %s", p->c->name, why);
}

/* A call on ctx fails with want, and the detail names name (the file or
 * directory at fault). */
static void check_fails_naming(clr_context *ctx, prepared *p, clr_status want,
                               const char *what, const char *name) {
  clr_value got;
  clr_status st = run_call(ctx, p, &got);
  tu_check(st == want, "%s: got %s, want %s", what, clr_status_name(st),
           clr_status_name(want));
  tu_check(strstr(clr_context_error(ctx), name) != NULL,
           "%s: detail '%s' does not name %s", what, clr_context_error(ctx),
           name);
}

/* A call on ctx succeeds with the right answer (what: when). */
static void check_runs(clr_context *ctx, prepared *p, const char *what) {
  clr_value got;
  char why[256];
  clr_status st = run_call(ctx, p, &got);
  tu_check(st == CLR_OK && answer_ok(ctx, p, &got, why, sizeof why),
           "%s: %s %s", what, clr_status_name(st), clr_context_error(ctx));
}

static unsigned long n_faults;

/* One run of p's call on ctx with call #k of f failing with err, its
 * enqueues held back by the gate so that a command left queued shows
 * (*pending).  *fired: how often the fault came (1 when the calls are the
 * same as in the counting run). */
static clr_status run_faulted(clr_context *ctx, prepared *p, fs_fn f,
                              unsigned long k, cl_int err, clr_value *got,
                              int *pending, unsigned long *fired) {
  fs_reset_counts();
  fs_arm(f, k, err, 0);
  fs_gate(1);
  clr_status st = run_call(ctx, p, got);
  *pending = fs_gate_pending();
  fs_gate(0);
  /* What the library should have done (inflight-on-error): wait for the
   * commands it left behind before the caller goes on. */
  if (*pending)
    clFinish(clr_context_queue(ctx));
  *fired = fs_fired();
  fs_disarm();
  n_faults++;
  return st;
}

/* After call #k of f failed on ctx, the context is still usable: the next
 * call succeeds with the right answer. */
static void check_recovers(clr_context *ctx, prepared *p, fs_fn f,
                           unsigned long k, const char *mode) {
  clr_value got;
  char why[256];
  clr_status st = run_call(ctx, p, &got);
  if (tu_check(st == CLR_OK,
               "[%s] %s: after %s call #%lu failed, "
               "the next call returned %s: %s",
               mode, p->c->name, fs_name(f), k, clr_status_name(st),
               clr_context_error(ctx)))
    tu_check(answer_ok(ctx, p, &got, why, sizeof why),
             "[%s] %s: after %s call #%lu failed, the next call "
             "gave a wrong answer: %s",
             mode, p->c->name, fs_name(f), k, why);
}

/* Calls made (also) only on a context's first use of a case: program
 * builds and binary loads, kernel creation and queries, first buffer
 * allocations.  The other calls are swept on a warm context (faster: no
 * builds), where they happen too. */
static int first_use_call(fs_fn f) {
  switch (f) {
  case FS_clCreateProgramWithSource:
  case FS_clCreateProgramWithBinary:
  case FS_clBuildProgram:
  case FS_clGetProgramInfo:
  case FS_clGetProgramBuildInfo:
  case FS_clCreateKernel:
  case FS_clGetKernelWorkGroupInfo:
  case FS_clCreateBuffer:
  case FS_clGetDeviceInfo:
    return 1;
  default:
    return 0;
  }
}

/* The calls of first_use_call(), each failed in turn on a fresh context. */
static void sweep_fresh(int copy, const char *cache_dir, const char *mode) {
  int binary_cache = cache_dir && *cache_dir;
  for (size_t ci = 0; ci < N_CASES; ci++) {
    prepared p;
    unsigned long counts[FS_COUNT];
    prepare_case(&cases[ci], &p);
    /* Count the calls of a run on a fresh context (warming the disk cache
     * first when it is on, so every build is a binary load). */
    clr_context *ctx = new_context(copy, cache_dir);
    make_buffers(ctx, &p);
    if (binary_cache) {
      clr_value got;
      run_call(ctx, &p, &got);
      free_buffers(&p);
      clr_context_release(ctx);
      ctx = new_context(copy, cache_dir);
      make_buffers(ctx, &p);
    }
    count_calls(ctx, &p, counts);
    free_buffers(&p);
    clr_context_release(ctx);
    tu_check(fs_live() == 0,
             "[%s] %s: %zu OpenCL objects alive after an "
             "unfaulted run and clr_context_release",
             mode, p.c->name, fs_live());
    for (int f = 0; f < FS_COUNT; f++)
      for (unsigned long k = 1; k <= counts[f] && first_use_call((fs_fn)f); k++)
        for (int e = 0; e < 2; e++) {
          cl_int err = e ? CL_OUT_OF_RESOURCES : generic_error((fs_fn)f);
          clr_value got;
          char live[4096];
          ctx = new_context(copy, cache_dir);
          make_buffers(ctx, &p);
          int pending;
          unsigned long fired;
          clr_status st =
              run_faulted(ctx, &p, (fs_fn)f, k, err, &got, &pending, &fired);
          if (!tu_check(fired == 1,
                        "[%s] %s: %s call #%lu never came (the "
                        "calls differ from run to run)",
                        mode, p.c->name, fs_name((fs_fn)f), k)) {
            free_buffers(&p);
            clr_context_release(ctx);
            continue;
          }
          judge(ctx, &p, (fs_fn)f, k, err, binary_cache, st, &got, pending,
                mode);
          check_recovers(ctx, &p, (fs_fn)f, k, mode);
          free_buffers(&p);
          clr_context_release(ctx);
          size_t n = fs_describe_live(live, sizeof live);
          tu_check(n == 0,
                   "[%s] %s: %s call #%lu failed with %s: %zu "
                   "OpenCL objects leaked after clr_context_release:\n%s",
                   mode, p.c->name, fs_name((fs_fn)f), k, cl_err_name(err), n,
                   live);
        }
    tu_check(fs_bad_releases() == 0,
             "[%s] %s: %zu releases of objects not "
             "alive (double releases)",
             mode, p.c->name, fs_bad_releases());
    free_case(&p);
  }
}

/* Every call of every function on a context that already ran the case:
 * the faulted call must not leak (the object count returns to the steady
 * state once the next call has succeeded). */
static void sweep_warm(int copy, const char *mode) {
  for (size_t ci = 0; ci < N_CASES; ci++) {
    prepared p;
    unsigned long counts[FS_COUNT];
    clr_value got;
    char live[4096];
    prepare_case(&cases[ci], &p);
    clr_context *ctx = new_context(copy, "");
    make_buffers(ctx, &p);
    run_call(ctx, &p, &got);
    count_calls(ctx, &p, counts);
    size_t steady = fs_live();
    for (int f = 0; f < FS_COUNT; f++)
      for (unsigned long k = 1; k <= counts[f]; k++)
        for (int e = 0; e < 2; e++) {
          cl_int err = e ? CL_OUT_OF_RESOURCES : generic_error((fs_fn)f);
          int pending;
          unsigned long fired;
          clr_status st =
              run_faulted(ctx, &p, (fs_fn)f, k, err, &got, &pending, &fired);
          if (!tu_check(fired == 1, "[%s] %s: %s call #%lu never came", mode,
                        p.c->name, fs_name((fs_fn)f), k))
            continue;
          judge(ctx, &p, (fs_fn)f, k, err, 0, st, &got, pending, mode);
          check_recovers(ctx, &p, (fs_fn)f, k, mode);
          size_t n = fs_live();
          if (!tu_check(n == steady,
                        "[%s] %s: %s call #%lu failed with %s: "
                        "%zu OpenCL objects alive afterwards, %zu before",
                        mode, p.c->name, fs_name((fs_fn)f), k, cl_err_name(err),
                        n, steady)) {
            fs_describe_live(live, sizeof live);
            printf("%s", live);
            steady = n; /* report each leak once */
          }
        }
    free_buffers(&p);
    clr_context_release(ctx);
    size_t n = fs_describe_live(live, sizeof live);
    tu_check(n == 0,
             "[%s] %s: %zu OpenCL objects alive after "
             "clr_context_release:\n%s",
             mode, p.c->name, n, live);
    tu_check(fs_bad_releases() == 0, "[%s] %s: %zu double releases", mode,
             p.c->name, fs_bad_releases());
    free_case(&p);
  }
}

/* Every call clr_context_create makes. */
static void part_create(void) {
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  clr_context *ctx = NULL;
  char detail[512];
  unsigned long counts[FS_COUNT];
  cfg.kernel_dir = kernel_dir;
  cfg.cache_dir = "";
  fs_reset_counts();
  if (clr_context_create(&cfg, &ctx, detail, sizeof detail) != CLR_OK)
    tu_die("clr_context_create: %s", detail);
  for (int f = 0; f < FS_COUNT; f++)
    counts[f] = fs_calls((fs_fn)f);
  clr_context_release(ctx);
  prepared p;
  prepare_case(&cases[0], &p);
  for (int f = 0; f < FS_COUNT; f++)
    for (unsigned long k = 1; k <= counts[f]; k++)
      for (int e = 0; e < 2; e++) {
        cl_int err = e ? CL_OUT_OF_HOST_MEMORY : CL_INVALID_VALUE;
        char live[4096], what[256];
        snprintf(what, sizeof what, "[create] %s call #%lu fails with %s",
                 fs_name((fs_fn)f), k, cl_err_name(err));
        ctx = (clr_context *)&p; /* must be reset to NULL on failure */
        detail[0] = '\0';
        fs_reset_counts();
        fs_arm((fs_fn)f, k, err, 0);
        clr_status st = clr_context_create(&cfg, &ctx, detail, sizeof detail);
        fs_disarm();
        n_faults++;
        if (st == CLR_OK) {
          /* Only lookups with a fallback (or a retry: device selection
           * makes a second round) may fail unnoticed. */
          tu_check(f == FS_clGetDeviceInfo || f == FS_clGetPlatformInfo ||
                       f == FS_clGetCommandQueueInfo ||
                       f == FS_clGetDeviceIDs ||
                       (f == FS_clGetPlatformIDs && k > 1),
                   "%s: the failure was ignored", what);
          /* ... and then the context must work. */
          clr_value got;
          char why[256];
          st = run_call(ctx, &p, &got);
          if (tu_known("device-info-ignored", st == CLR_OK,
                       "%s: clr_context_create returned CLR_OK, but a "
                       "reduction on the context returned %s: %s",
                       what, clr_status_name(st), clr_context_error(ctx)))
            tu_check(answer_ok(ctx, &p, &got, why, sizeof why),
                     "%s: wrong answer afterwards: %s", what, why);
          clr_context_release(ctx);
        } else {
          clr_status want = CLR_ERR_OPENCL;
          if (f == FS_clGetPlatformIDs)
            want = CLR_ERR_NO_PLATFORM;
          else if (f == FS_clGetDeviceIDs)
            want = CLR_ERR_NO_DEVICE;
          else if (is_oom_error(err))
            want = CLR_ERR_OUT_OF_MEMORY;
          tu_check(ctx == NULL, "%s: *out not reset to NULL", what);
          if (f == FS_clCreateContext && want == CLR_ERR_OUT_OF_MEMORY)
            tu_known("create-context-oom", st == want,
                     "%s: returned %s, want %s (detail: %s)", what,
                     clr_status_name(st), clr_status_name(want), detail);
          else
            tu_check(st == want, "%s: returned %s, want %s (detail: %s)", what,
                     clr_status_name(st), clr_status_name(want), detail);
          tu_check(detail[0] != '\0', "%s: empty detail", what);
        }
        size_t n = fs_describe_live(live, sizeof live);
        tu_check(n == 0, "%s: %zu OpenCL objects leaked:\n%s", what, n, live);
      }
  tu_check(fs_bad_releases() == 0, "[create] %zu double releases",
           fs_bad_releases());
  free_case(&p);
}

/* ------------------------------------------------------------ build errors */

/* dir/name into buf; a path that does not fit is a setup failure. */
static void join_path(char *buf, size_t size, const char *dir,
                      const char *name) {
  int w = snprintf(buf, size, "%s/%s", dir, name);
  if (w < 0 || (size_t)w >= size)
    tu_die("path too long: %s/%s", dir, name);
}

static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[8192];
  size_t got;
  if (!a || !b)
    tu_die("cannot copy %s to %s: %s", from, to, strerror(errno));
  while ((got = fread(buf, 1, sizeof buf, a)) > 0)
    if (fwrite(buf, 1, got, b) != got)
      tu_die("cannot write %s", to);
  fclose(a);
  if (fclose(b) != 0)
    tu_die("cannot write %s", to);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0)
    tu_die("cannot write %s", path);
}

static void part_build_errors(void) {
  static const char *files[] = {
      "common.cl",           "load_mapped.cl",        "reduce_coarse.cl",
      "reduce_first_add.cl", "reduce_interleaved.cl", "reduce_sequential.cl",
      "scan_brent_kung.cl",  "scan_kogge_stone.cl",   "scan_kogge_stone_db.cl",
      "scan_tile.cl",        "scan_lanes.cl"};
  char dir[4096], from[4096], to[4096], live[4096];
  join_path(dir, sizeof dir, work_dir, "kernels-build-errors");
  mkdir(work_dir, 0755);
  mkdir(dir, 0755);
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    join_path(from, sizeof from, kernel_dir, files[i]);
    join_path(to, sizeof to, dir, files[i]);
    remove(to);
    rmdir(to);
    copy_file(from, to);
  }
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  clr_context *ctx = NULL;
  char detail[512];
  cfg.kernel_dir = dir;
  cfg.cache_dir = "";
  if (clr_context_create(&cfg, &ctx, detail, sizeof detail) != CLR_OK)
    tu_die("clr_context_create: %s", detail);
  prepared p;
  fcase c = cases[1]; /* sequential float max */
  clr_value got;
  prepare_case(&c, &p);

  /* 1. a kernel that fails to build */
  join_path(to, sizeof to, dir, "reduce_sequential.cl");
  write_text(to, "__kernel void clr_reduce(__global const IN_T *in) {\n"
                 "  this is not OpenCL C;\n}\n");
  size_t before = fs_live();
  check_fails_naming(ctx, &p, CLR_ERR_BUILD, "broken kernel",
                     "reduce_sequential.cl");
  tu_check(strlen(clr_context_build_log(ctx)) > 0,
           "broken kernel: empty build log");
  tu_check(fs_live() == before,
           "broken kernel: %zu OpenCL objects alive, "
           "%zu before",
           fs_live(), before);
  /* other kernels still work on the same context */
  fcase c2 = cases[0];
  prepared p2;
  prepare_case(&c2, &p2);
  check_runs(ctx, &p2, "after a failed build, another kernel");
  /* the fixed source builds on the same context (failures are not
   * cached) */
  join_path(from, sizeof from, kernel_dir, "reduce_sequential.cl");
  copy_file(from, to);
  check_runs(ctx, &p, "after fixing the kernel source");

  /* 2. a missing kernel source */
  fcase c3 = c;
  c3.kernel = CLR_REDUCE_FIRST_ADD;
  prepared p3;
  prepare_case(&c3, &p3);
  join_path(to, sizeof to, dir, "reduce_first_add.cl");
  remove(to);
  before = fs_live();
  check_fails_naming(ctx, &p3, CLR_ERR_KERNEL_SOURCE, "missing kernel source",
                     "reduce_first_add.cl");
  tu_check(fs_live() == before, "missing kernel source: objects leaked");

  /* 3. an unreadable kernel source (a directory in its place: reading it
   * fails even for root, who ignores file permissions) */
  mkdir(to, 0755);
  clr_status st = run_call(ctx, &p3, &got);
  tu_check(st == CLR_ERR_KERNEL_SOURCE,
           "unreadable kernel source: got %s, want CLR_ERR_KERNEL_SOURCE",
           clr_status_name(st));
  tu_check(fs_live() == before, "unreadable kernel source: objects leaked");
  rmdir(to);
  join_path(from, sizeof from, kernel_dir, "reduce_first_add.cl");
  copy_file(from, to);
  check_runs(ctx, &p3, "after restoring the kernel source");
  clr_context_release(ctx);

  /* 4. a missing kernel directory */
  join_path(to, sizeof to, work_dir, "no-such-dir");
  cfg.kernel_dir = to;
  st = clr_context_create(&cfg, &ctx, detail, sizeof detail);
  if (tu_check(st == CLR_OK, "context on a missing kernel dir: %s %s",
               clr_status_name(st), detail)) {
    check_fails_naming(ctx, &p, CLR_ERR_KERNEL_SOURCE, "missing kernel dir",
                       "no-such-dir");
    clr_context_release(ctx);
  }
  size_t n = fs_describe_live(live, sizeof live);
  tu_check(n == 0, "build errors: %zu OpenCL objects leaked:\n%s", n, live);
  free_case(&p);
  free_case(&p2);
  free_case(&p3);
}

/* ------------------------------------------------------------ program cache */

/* One reduction or scan on ctx, checked; returns 1 when right. */
static int checked_call(clr_context *ctx, clr_kernel kernel, clr_op op,
                        clr_type type, unsigned long *calls) {
  fcase c;
  prepared p;
  clr_value got;
  char why[256];
  memset(&c, 0, sizeof c);
  c.name = "program cache";
  c.kernel = kernel;
  c.call = clr_kernel_is_scan(kernel) ? CALL_SCAN_HOST : CALL_REDUCE_HOST;
  c.op = op;
  c.type = type;
  c.n = 300;
  c.wg = 8;
  c.coarse = c.call == CALL_SCAN_HOST ? 2 : 0;
  prepare_case(&c, &p);
  clr_status st = run_call(ctx, &p, &got);
  (*calls)++;
  int ok =
      tu_known("program-cache-overflow", st == CLR_OK,
               "program cache: call %lu (%s %s of %s): %s: %s", *calls,
               clr_kernel_name(kernel), clr_op_name(op), clr_type_name(type),
               clr_status_name(st), clr_context_error(ctx)) &&
      tu_check(answer_ok(ctx, &p, &got, why, sizeof why),
               "program cache: call %lu (%s %s of %s): %s", *calls,
               clr_kernel_name(kernel), clr_op_name(op), clr_type_name(type),
               why);
  free_case(&p);
  return ok;
}

/* The context keeps at most 64 built programs and starts over when full;
 * a long-lived context that sees more distinct configurations must keep
 * giving right answers.  The sequence alternates a reduction that builds
 * one program (input type = accumulator type) with a scan that builds two
 * (tile scan + tile reduction), all new, so the count of kept programs
 * before a scan runs through every residue and a scan eventually starts
 * with 63 kept: its first program takes the last slot and its second
 * finds the cache full. */
static void part_program_cache(void) {
  static const clr_kernel red[] = {
      CLR_REDUCE_SEQUENTIAL, CLR_REDUCE_INTERLEAVED, CLR_REDUCE_FIRST_ADD};
  static const clr_type red_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_LONG,
                                       CLR_ULONG};
  static const clr_kernel scans[] = {
      CLR_SCAN_KOGGE_STONE, CLR_SCAN_KOGGE_STONE_DB, CLR_SCAN_BRENT_KUNG};
  static const clr_type scan_types[] = {CLR_INT,    CLR_UINT, CLR_FLOAT,
                                        CLR_DOUBLE, CLR_LONG, CLR_ULONG};
  clr_context *ctx = new_context(0, "");
  unsigned long calls = 0;
  size_t r = 0, sc = 0;
  for (int step = 0; step < 50; step++) {
    /* 3 x 4 x 4 = 48 one-program reductions, 3 x 6 x 4 = 72 scans */
    size_t ri = r++ % 48, si = sc++ % 72;
    checked_call(ctx, red[ri / 16], (clr_op)(ri % 4), red_types[ri / 4 % 4],
                 &calls);
    checked_call(ctx, scans[si / 24], (clr_op)(si % 4), scan_types[si / 4 % 6],
                 &calls);
  }
  clr_context_release(ctx);
  char live[4096];
  size_t n = fs_describe_live(live, sizeof live);
  tu_check(n == 0, "program cache: %zu OpenCL objects leaked:\n%s", n, live);
}

/* ------------------------------------------------------------ threads */

/* An int sum and an inclusive scan of a staged host array, checked
 * exactly. */
static void staged_calls(clr_context *ctx, const int *in, int *out, size_t n,
                         const char *what) {
  long long want = 0;
  for (size_t i = 0; i < n; i++)
    want += in[i];
  clr_value v;
  clr_status st = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, n, &v);
  tu_check(st == CLR_OK && v.v.i == (int32_t)want,
           "[threads] %s: sum %s, %d, want %lld", what, clr_status_name(st),
           (int)v.v.i, want);
  st = clr_scan_host(ctx, NULL, CLR_SUM, CLR_INT, in, out, n);
  size_t bad = 0;
  int run = 0;
  for (size_t i = 0; st == CLR_OK && i < n; i++) {
    run += in[i];
    bad += out[i] != run;
  }
  tu_check(st == CLR_OK && bad == 0, "[threads] %s: scan %s, %zu wrong", what,
           clr_status_name(st), bad);
}

/* Staged host arrays when the staging's helper threads cannot all start
 * (pthread_create fails with EAGAIN, as in a process out of threads): the
 * call runs on the threads it has, the next call starts the rest (the
 * context's crew, src/lib/crew.c), and every OpenCL object is released.
 * A copied context, 4 KiB blocks, 8 threads: 7 helpers in the end. */
static void part_threads(void) {
  static const struct {
    unsigned long nth;
    int sticky;
    const char *what;
  } faults[] = {{1, 1, "no helper starts"},
                {2, 1, "one helper starts, the rest fail"},
                {3, 0, "the third helper fails, once"}};
  size_t n = 100003;
  int *in = tu_xmalloc(n * sizeof *in), *out = tu_xmalloc(n * sizeof *out);
  for (size_t i = 0; i < n; i++)
    in[i] = (int)(i % 11) - 5;
  for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
    size_t before = fs_live();
    clr_context *ctx = new_context(1, "");
    clr_tuning t = CLR_TUNING_INIT;
    clr_get_tuning(ctx, &t);
    t.stage_threads = 8;
    if (clr_set_tuning(ctx, &t) != CLR_OK)
      tu_die("clr_set_tuning: %s", clr_context_error(ctx));
    fs_threads_arm(faults[f].nth, faults[f].sticky);
    staged_calls(ctx, in, out, n, faults[f].what);
    tu_check(fs_threads_fired() > 0,
             "[threads] %s: no pthread_create failed (the library made %lu)",
             faults[f].what, fs_thread_calls());
    unsigned long failed = fs_threads_fired();
    fs_threads_disarm();
    char again[256];
    snprintf(again, sizeof again, "%s, then every start succeeds",
             faults[f].what);
    staged_calls(ctx, in, out, n, again);
    /* The helpers that started, the starts that failed, and the rest. */
    tu_check(fs_thread_calls() == 7 + failed,
             "[threads] %s: %lu pthread_create calls, want %lu (7 helpers "
             "and %lu failed starts)",
             again, fs_thread_calls(), 7 + failed, failed);
    clr_context_release(ctx);
    tu_check(fs_live() == before, "[threads] %s: %zu OpenCL objects left",
             faults[f].what, fs_live() - before);
  }
  n_faults += sizeof faults / sizeof *faults;
  free(in);
  free(out);
}

int main(int argc, char **argv) {
  const char *part = tu_arg_value(argc, argv, "--part");
  kernel_dir = tu_arg_value(argc, argv, "--kernel-dir");
  work_dir = tu_arg_value(argc, argv, "--work-dir");
  if (!part || !kernel_dir || !work_dir)
    tu_die("usage: test_faults --part=PART --kernel-dir=DIR --work-dir=DIR");
  /* The shim must be the one the library calls. */
  fs_reset_counts();
  clr_context *probe = new_context(0, "");
  clr_context_release(probe);
  if (fs_calls(FS_clCreateContext) == 0)
    tu_die("the fault shim does not see the library's OpenCL calls (was "
           "test_faults linked with export_dynamic?)");
  mkdir(work_dir, 0755);
  if (strcmp(part, "create") == 0) {
    part_create();
  } else if (strcmp(part, "sweep-cold") == 0) {
    sweep_fresh(0, "", "cold");
  } else if (strcmp(part, "sweep-cached") == 0) {
    char cache[4096];
    join_path(cache, sizeof cache, work_dir, "program-cache");
    sweep_fresh(0, cache, "cached");
  } else if (strcmp(part, "sweep-warm") == 0) {
    sweep_warm(0, "warm");
    sweep_warm(1, "warm, copied");
  } else if (strcmp(part, "build-errors") == 0) {
    part_build_errors();
  } else if (strcmp(part, "program-cache") == 0) {
    part_program_cache();
  } else if (strcmp(part, "threads") == 0) {
    part_threads();
  } else {
    tu_die("unknown --part '%s'", part);
  }
  printf("%s: %lu faults injected\n", part, n_faults);
  return tu_finish("test_faults");
}
