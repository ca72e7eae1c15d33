/* Small helpers shared by the C test programs: a seeded PRNG, pass / fail
 * counting with readable messages, context creation, data generation and
 * "reduce on the device, compare with the CPU reference" in one call.
 *
 * Header-only (static functions) so every test program stays one file. */
#ifndef CLR_TEST_UTIL_H
#define CLR_TEST_UTIL_H

#include "clreduce.h"
#include "datagen.h"
#include "half.h"
#include "reference.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define TU_UNUSED __attribute__((unused))
#define TU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TU_NORETURN __attribute__((noreturn))
#else
#define TU_UNUSED
#define TU_PRINTF(a, b)
#define TU_NORETURN
#endif

/* ------------------------------------------------------------ counting */

static TU_UNUSED size_t tu_passed, tu_failed;
static TU_UNUSED int tu_verbose;

/* Record one outcome; on failure print "FAIL: <message>". */
static TU_PRINTF(2, 3) TU_UNUSED int tu_check(int ok, const char *fmt, ...) {
  if (ok) {
    tu_passed++;
    if (tu_verbose) {
      va_list ap;
      va_start(ap, fmt);
      printf("ok: ");
      vprintf(fmt, ap);
      printf("\n");
      va_end(ap);
    }
    return 1;
  }
  tu_failed++;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  return 0;
}

#define TU_CHECK(cond, ...) tu_check((cond) ? 1 : 0, __VA_ARGS__)

/* Assert a status; the message names the call and both statuses. */
#define TU_EXPECT_STATUS(got, want, what)                                      \
  tu_check((got) == (want), "%s: got %s, want %s", (what),                     \
           clr_status_name(got), clr_status_name(want))

/* Print the closing "N passed, N failed" line; return the exit code. */
/* Under AddressSanitizer the leak check runs here, at the end of main,
 * while PoCL's worker threads are parked, rather than at exit, where it
 * races with the threads' teardown (LeakSanitizer's stop-the-world tracer
 * crashed once, "Tracer caught signal 11", in a CI run whose checks had
 * all passed).  It is done once: the exit-time check is then skipped. */
#if defined(__SANITIZE_ADDRESS__)
#define TU_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_LEAK_CHECK 1
#endif
#endif
#ifdef TU_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

static TU_UNUSED int tu_finish(const char *program) {
  printf("%s: %zu passed, %zu failed\n", program, tu_passed, tu_failed);
  fflush(stdout);
#ifdef TU_LEAK_CHECK
  __lsan_do_leak_check();
#endif
  return tu_failed == 0 && tu_passed > 0 ? 0 : 1;
}

/* Print "<name>: ok" or "<name>: FAILED" for the checks since the last
 * section. */
static TU_UNUSED void tu_section(const char *name) {
  static size_t failed_at_last;
  printf("%s: %s\n", name, tu_failed > failed_at_last ? "FAILED" : "ok");
  fflush(stdout);
  failed_at_last = tu_failed;
}

/* Fatal setup error: the suite must fail, never skip. */
static TU_NORETURN TU_PRINTF(1, 2) TU_UNUSED void tu_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FATAL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  exit(1);
}

static TU_UNUSED void *tu_xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p)
    tu_die("out of host memory (%zu bytes)", bytes);
  return p;
}

/* ------------------------------------------------------------ PRNG */

/* splitmix64: tiny, seedable, good enough for test data. */
typedef struct tu_rng {
  uint64_t s;
} tu_rng;

static TU_UNUSED uint64_t tu_next(tu_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static TU_UNUSED double tu_unit(tu_rng *r) {
  return (double)(tu_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, bound). */
static TU_UNUSED uint64_t tu_below(tu_rng *r, uint64_t bound) {
  return bound ? tu_next(r) % bound : 0;
}

/* A seed derived from the parameters of a case, so every case gets
 * different but reproducible data. */
static TU_UNUSED uint64_t tu_seed(uint64_t a, uint64_t b, uint64_t c,
                                  uint64_t d) {
  tu_rng r = {a * 1000003u ^ b * 10007u ^ c * 101u ^ d};
  return tu_next(&r);
}

/* ------------------------------------------------------------ values */

static TU_UNUSED int tu_is_float(clr_type t) {
  return t == CLR_FLOAT || t == CLR_DOUBLE || t == CLR_HALF;
}

/* Element i of an array of type t from a double (rounded; half to the
 * nearest binary16) or from a bit pattern cut to the type's width
 * (src/check/datagen.c). */
#define tu_store_f clr_store_fp
#define tu_store_bits clr_store_bits

static TU_UNUSED void tu_store_i(clr_type t, void *data, size_t i, int64_t x) {
  switch (t) {
  case CLR_HALF:
    ((uint16_t *)data)[i] = clr_half_from_float((float)x);
    break;
  case CLR_FLOAT:
    ((float *)data)[i] = (float)x;
    break;
  case CLR_DOUBLE:
    ((double *)data)[i] = (double)x;
    break;
  default: /* two's complement: the bits, cut to the type's width */
    tu_store_bits(t, data, i, (uint64_t)x);
    break;
  }
}

static TU_UNUSED const char *tu_fmt(const clr_value *v, char *buf,
                                    size_t size) {
  clr_value_format(v, buf, size);
  return buf;
}

/* x as a value of type t (floating types: rounded). */
static TU_UNUSED clr_value tu_int_value(clr_type t, int64_t x) {
  return tu_is_float(t) ? clr_fp_value(t, (long double)x)
                        : clr_int_value(t, (uint64_t)x);
}

static TU_UNUSED clr_value tu_fp_value(clr_type t, double x) {
  return clr_fp_value(t, x);
}

/* Bitwise equality of two values of the same type (NaN == NaN, -0 != +0). */
static TU_UNUSED int tu_same(const clr_value *a, const clr_value *b) {
  if (a->type != b->type)
    return 0;
  size_t sz = clr_type_size(a->type);
  if (tu_is_float(a->type)) {
    double x = a->type == CLR_FLOAT ? a->v.f : a->v.d;
    double y = b->type == CLR_FLOAT ? b->v.f : b->v.d;
    if (isnan(x) && isnan(y))
      return 1;
  }
  return memcmp(&a->v, &b->v, sz) == 0;
}

/* ------------------------------------------------------------ context */

static TU_UNUSED clr_device_desc tu_device;

/* A context made from cfg; any failure, a missing platform included, is
 * fatal (the suite must fail, not skip): the message names the config's
 * kernel and cache directories.  Sets tu_device. */
static TU_UNUSED clr_context *tu_context_from(const clr_context_config *cfg) {
  clr_context *ctx = NULL;
  char detail[512] = "";
  clr_status s = clr_context_create(cfg, &ctx, detail, sizeof detail);
  if (s != CLR_OK || !ctx)
    tu_die("clr_context_create(kernel dir %s, cache %s): %s (%s): %s",
           cfg->kernel_dir ? cfg->kernel_dir : "default",
           cfg->cache_dir ? cfg->cache_dir : "default", clr_status_name(s),
           clr_status_string(s), detail);
  if (clr_context_device(ctx, &tu_device) != CLR_OK)
    tu_die("clr_context_device failed: %s", clr_context_error(ctx));
  return ctx;
}

/* A context with all defaults (the environment supplies
 * CLREDUCE_KERNEL_DIR and CLREDUCE_CACHE_DIR) but host arrays streamed in
 * chunks of at most chunk_bytes (0: the device's largest allocation),
 * copied to the device when copy is set (else used in place where the
 * device shares memory). */
static TU_UNUSED clr_context *tu_context_chunked(uint64_t chunk_bytes,
                                                 int copy) {
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .max_chunk_bytes = chunk_bytes,
                            .copy_host_data = copy};
  return tu_context_from(&cfg);
}

static TU_UNUSED clr_context *tu_context(void) {
  return tu_context_chunked(0, 0);
}

/* A call's timing with its passes: clr_timing's fields, then pass i of
 * clr_last_timing_pass in passes[i]. */
typedef struct tu_timing {
  double kernel_ms, h2d_ms, d2h_ms, build_ms, total_ms;
  size_t chunks, n_passes, error_depth;
  clr_pass_info passes[CLR_MAX_PASSES];
} tu_timing;

/* The last successful call's timing and passes, into *out (zeros past
 * n_passes): clr_last_timing's status, or the first failing
 * clr_last_timing_pass's. */
static TU_UNUSED clr_status tu_get_timing(const clr_context *ctx,
                                          tu_timing *out) {
  clr_timing t = CLR_TIMING_INIT;
  memset(out, 0, sizeof *out);
  clr_status s = clr_last_timing(ctx, &t);
  if (s != CLR_OK)
    return s;
  out->kernel_ms = t.kernel_ms;
  out->h2d_ms = t.h2d_ms;
  out->d2h_ms = t.d2h_ms;
  out->build_ms = t.build_ms;
  out->total_ms = t.total_ms;
  out->chunks = t.chunks;
  out->n_passes = t.n_passes;
  out->error_depth = t.error_depth;
  for (size_t i = 0; i < t.n_passes && i < CLR_MAX_PASSES; i++) {
    out->passes[i].struct_size = (uint32_t)sizeof out->passes[i];
    s = clr_last_timing_pass(ctx, i, &out->passes[i]);
    if (s != CLR_OK)
      return s;
  }
  return CLR_OK;
}

/* The last successful call's timing (tu_get_timing; fatal if none). */
static TU_UNUSED tu_timing tu_last_timing(clr_context *ctx) {
  tu_timing tm;
  if (tu_get_timing(ctx, &tm) != CLR_OK)
    tu_die("clr_last_timing failed");
  return tm;
}

/* A call past one device allocation must have streamed: its timing's
 * chunks above 1 (what: the case). */
static TU_UNUSED void tu_check_streamed(clr_context *ctx, const char *what) {
  tu_timing tm = tu_last_timing(ctx);
  tu_check(tm.chunks > 1, "%s: %zu chunks, want more than one", what,
           tm.chunks);
}

/* The OpenCL device of tu_context's context (after tu_context), for the
 * cl_contexts and queues a test makes itself. */
/* A read-write buffer of ctx's cl_context, copied from init when given. */
static TU_UNUSED cl_mem tu_new_buffer(clr_context *ctx, size_t bytes,
                                      const void *init) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(clr_context_cl_context(ctx),
                            CL_MEM_READ_WRITE |
                                (init ? CL_MEM_COPY_HOST_PTR : (cl_mem_flags)0),
                            bytes, (void *)init, &err);
  if (!m || err != CL_SUCCESS)
    tu_die("clCreateBuffer(%zu bytes) failed: %d", bytes, (int)err);
  return m;
}

/* The first bytes of m into dst, on ctx's queue (blocking). */
static TU_UNUSED void tu_read_buffer(clr_context *ctx, cl_mem m, size_t bytes,
                                     void *dst) {
  cl_int err = clEnqueueReadBuffer(clr_context_queue(ctx), m, CL_TRUE, 0, bytes,
                                   dst, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    tu_die("clEnqueueReadBuffer(%zu bytes) failed: %d", bytes, (int)err);
}

static TU_UNUSED cl_device_id tu_cl_device(void) {
  cl_platform_id plats[8];
  cl_uint np = 0;
  if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0)
    tu_die("no OpenCL platform");
  cl_platform_id plat =
      plats[tu_device.platform_index < np ? tu_device.platform_index : 0];
  cl_device_id devs[16];
  cl_uint nd = 0;
  if (clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS ||
      nd == 0)
    tu_die("no OpenCL device");
  return devs[tu_device.device_index < nd ? tu_device.device_index : 0];
}

/* A context on kernel_dir and cache_dir (NULL: the defaults), host data
 * copied when copy is set; NULL with the status in *st and the reason in
 * detail when it cannot be made. */
static TU_UNUSED clr_context *tu_context_at(const char *kernel_dir,
                                            const char *cache_dir, int copy,
                                            clr_status *st, char *detail,
                                            size_t detail_size) {
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_dir,
                            .cache_dir = cache_dir,
                            .copy_host_data = copy};
  clr_context *ctx = NULL;
  *st = clr_context_create(&cfg, &ctx, detail, detail_size);
  return *st == CLR_OK ? ctx : NULL;
}

/* The device's fp64 support decides what double cases must return. */
static TU_UNUSED int tu_type_available(clr_type t) {
  return t != CLR_DOUBLE || tu_device.has_fp64;
}

/* ------------------------------------------------------------ run + check */

typedef struct tu_case {
  const char *label; /* free text: data variant etc.                      */
  clr_options opt;
  clr_op op;
  clr_type type;
  const void *data;
  size_t n;
  const clr_value *exact; /* optional: the answer must equal this exactly */
  int exact_ref;          /* the reference is exact for this data: the
                             answer must equal it bit for bit           */
} tu_case;

static TU_UNUSED void tu_describe(const tu_case *c, char *buf, size_t size) {
  snprintf(buf, size,
           "%s %s %s n=%zu wg=%zu coarse=%zu vw=%u layout=%d narrow=%d [%s]",
           clr_kernel_name(c->opt.kernel), clr_op_name(c->op),
           clr_type_name(c->type), c->n, c->opt.wg_size, c->opt.coarse,
           c->opt.vector_width, (int)c->opt.layout, c->opt.narrow_accumulator,
           c->label ? c->label : "");
}

/* Check a device result against the CPU reference of the same data (and
 * against c->exact when given).  Also checks the result type and that the
 * error depth is plausible. */
static TU_UNUSED int tu_verify(const tu_case *c, const clr_value *got,
                               const clr_timing *tm) {
  char desc[256], gb[64], wb[64];
  tu_describe(c, desc, sizeof desc);
  clr_type rt = clr_options_result_type(&c->opt, c->op, c->type);
  if (!tu_check(got->type == rt, "%s: result type %s, want %s", desc,
                clr_type_name(got->type), clr_type_name(rt)))
    return 0;
  clr_reference ref;
  clr_ref_reduce_to(c->op, c->type, rt, c->data, c->n, &ref);
  size_t depth = tm ? tm->error_depth : 0;
  int ok = 1;
  if (tu_is_float(c->type) && c->op == CLR_SUM && c->n > 1) {
    /* The bound gamma_k * sum|x| is only meaningful for a sane k. */
    ok &= tu_check(depth >= 1 && depth <= c->n - 1 + 64,
                   "%s: implausible error_depth %zu", desc, depth);
  }
  clr_check chk;
  clr_ref_check(&ref, got, depth, &chk);
  ok &=
      tu_check(chk.ok, "%s: got %s, want %s (error %g, bound %g, depth %zu)",
               desc, tu_fmt(got, gb, sizeof gb),
               tu_fmt(&ref.value, wb, sizeof wb), chk.error, chk.bound, depth);
  if (c->exact_ref) {
    ok &=
        tu_check(tu_same(got, &ref.value),
                 "%s: got %s, want exactly %s (order-independent data)", desc,
                 tu_fmt(got, gb, sizeof gb), tu_fmt(&ref.value, wb, sizeof wb));
  }
  if (c->exact) {
    ok &= tu_check(tu_same(got, c->exact), "%s: got %s, want exactly %s", desc,
                   tu_fmt(got, gb, sizeof gb), tu_fmt(c->exact, wb, sizeof wb));
  }
  return ok;
}

/* Reduce a host array and verify.  Returns the call's status (CLR_OK
 * when it ran, whether or not the answer checked out: that is counted). */
static TU_UNUSED clr_status tu_run_host(clr_context *ctx, const tu_case *c) {
  char desc[256];
  clr_value got;
  memset(&got, 0, sizeof got);
  clr_status s =
      clr_reduce_host(ctx, &c->opt, c->op, c->type, c->data, c->n, &got);
  if (!tu_type_available(c->type)) {
    tu_describe(c, desc, sizeof desc);
    tu_check(s == CLR_ERR_NO_FP64, "%s: no fp64, got %s", desc,
             clr_status_name(s));
    return s;
  }
  if (s != CLR_OK) {
    tu_describe(c, desc, sizeof desc);
    tu_check(0, "%s: clr_reduce_host returned %s: %s", desc, clr_status_name(s),
             clr_context_error(ctx));
    return s;
  }
  clr_timing tm = CLR_TIMING_INIT;
  clr_status ts = clr_last_timing(ctx, &tm);
  if (ts != CLR_OK) {
    tu_describe(c, desc, sizeof desc);
    tu_check(0, "%s: clr_last_timing returned %s", desc, clr_status_name(ts));
    return s;
  }
  tu_verify(c, &got, &tm);
  return s;
}

/* ------------------------------------------------------------ data */

/* Data variants for the kernel x op x type x size matrix. */
typedef enum tu_variant {
  TU_RANDOM,     /* random values suited to the op                        */
  TU_EXACT,      /* float sum / prod: values whose result is exact in any
                    order (small integers, powers of two); skipped else     */
  TU_BASE,       /* and / or: all elements neutral (and: all non-zero,
                    or: all zero); skipped else                             */
  TU_PLANT_LAST, /* the dominant element (min, max, zero for and, ...)
                    planted at the last index                              */
  TU_PLANT_MID,  /* ... at a random index                                  */
  TU_N_VARIANTS
} tu_variant;

static TU_UNUSED const char *tu_variant_name(tu_variant v) {
  static const char *names[] = {"random", "exact", "base", "plant-last",
                                "plant-mid"};
  return (unsigned)v < TU_N_VARIANTS ? names[v] : "?";
}

/* An op and a type with the variant of data to reduce. */
typedef struct tu_op_data {
  clr_op op;
  clr_type type;
  tu_variant variant;
} tu_op_data;

/* Whether a variant applies to op / type. */
static TU_UNUSED int tu_variant_applies(tu_variant v, clr_op op, clr_type t) {
  switch (v) {
  case TU_EXACT:
    return tu_is_float(t) && (op == CLR_SUM || op == CLR_PROD);
  case TU_BASE:
    return op == CLR_AND || op == CLR_OR;
  default:
    return 1;
  }
}

/* Whether a variant's data has an order-independent, exactly known
 * reference (so the device must match it bit for bit). */
static TU_UNUSED int tu_variant_exact(tu_variant v, clr_op op, clr_type t) {
  if (!tu_is_float(t))
    return 1; /* integers: always exact */
  if (op == CLR_MIN || op == CLR_MAX)
    return 1;
  return v == TU_EXACT;
}

/* Random bits of an integer type, never zero. */
static TU_UNUSED uint64_t tu_nonzero_bits(tu_rng *r, clr_type t) {
  uint64_t b = tu_next(r);
  if (t == CLR_INT || t == CLR_UINT)
    b &= 0xffffffffu;
  return b ? b : 1;
}

/* Element i of random data: uniform in [lo, hi) for floating types,
 * random bits with the bits of ones set for integers (1: odd). */
static TU_UNUSED void tu_store_random(tu_rng *r, clr_type t, void *data,
                                      size_t i, double lo, double hi,
                                      uint64_t ones) {
  if (tu_is_float(t))
    tu_store_f(t, data, i, lo + (hi - lo) * tu_unit(r));
  else
    tu_store_bits(t, data, i, tu_next(r) | ones);
}

/* Fill data[0..n) of type t for op with a variant. */
static TU_UNUSED void tu_fill(clr_op op, clr_type t, tu_variant v, void *data,
                              size_t n, uint64_t seed) {
  tu_rng r = {seed};
  int fp = tu_is_float(t);
  if (v == TU_EXACT && fp && op == CLR_SUM) {
    /* Small integers: every partial sum stays below 2^24 in magnitude,
     * so any order gives the exact sum. */
    int64_t lim = 8;
    while (lim > 1 && (uint64_t)lim * n >= (1u << 24))
      lim /= 2;
    for (size_t i = 0; i < n; i++)
      tu_store_i(t, data, i, (int64_t)tu_below(&r, 2 * lim + 1) - lim);
    return;
  }
  if (v == TU_EXACT && fp && op == CLR_PROD) {
    /* +-1 everywhere, and at most 48 elements of +-2 or +-0.5: every
     * partial product is +-2^k with |k| <= 48, so exact in any order. */
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, data, i, (tu_next(&r) & 1) ? 1.0 : -1.0);
    size_t k = n < 48 ? n : 48;
    for (size_t j = 0; j < k; j++) {
      size_t i = (size_t)tu_below(&r, n);
      double m = (tu_next(&r) & 1) ? 2.0 : 0.5;
      tu_store_f(t, data, i, (tu_next(&r) & 1) ? m : -m);
    }
    return;
  }
  /* Base data: sums in [-1, 1); products near 1 (floats: no over- or
   * underflow for millions of elements) or odd (integers: the wrapped
   * product stays non-zero); min, max and the indexed ops in [-1000,
   * 1000); and / or with one in four elements against the grain (random
   * data only). */
  int flip = v == TU_RANDOM;
  for (size_t i = 0; i < n; i++) {
    if (op == CLR_AND || op == CLR_OR) {
      int against = flip && tu_below(&r, 4) == 0;
      tu_store_bits(t, data, i,
                    against == (op == CLR_OR) ? tu_nonzero_bits(&r, t) : 0);
    } else if (op == CLR_PROD) {
      tu_store_random(&r, t, data, i, 1.0 - 1.0 / 1024, 1.0 + 1.0 / 1024, 1);
    } else if (op == CLR_SUM || op == CLR_MEAN) {
      tu_store_random(&r, t, data, i, -1.0, 1.0, 0);
    } else {
      tu_store_random(&r, t, data, i, -1000.0, 1000.0, 0);
    }
  }
  if (v != TU_PLANT_LAST && v != TU_PLANT_MID)
    return;
  size_t at = v == TU_PLANT_LAST ? n - 1 : (size_t)tu_below(&r, n);
  switch (op) {
  case CLR_SUM:
  case CLR_MEAN:
    if (fp)
      tu_store_f(t, data, at, 1000.0);
    else
      tu_store_bits(t, data, at, 0x5a5a5a5a5a5a5a5aull);
    break;
  case CLR_PROD:
    if (fp)
      tu_store_f(t, data, at, -3.0);
    else
      tu_store_bits(t, data, at, 0);
    break;
  case CLR_MIN:
  case CLR_ARGMIN:
  case CLR_MINMAX:
    switch (t) {
    case CLR_FLOAT:
    case CLR_DOUBLE:
    case CLR_HALF:
      tu_store_f(t, data, at, -1.0e6);
      break;
    case CLR_INT:
      tu_store_i(t, data, at, INT32_MIN);
      break;
    case CLR_LONG:
      tu_store_i(t, data, at, INT64_MIN);
      break;
    default:
      tu_store_bits(t, data, at, 0);
      break;
    }
    break;
  case CLR_MAX:
  case CLR_ARGMAX:
    switch (t) {
    case CLR_FLOAT:
    case CLR_DOUBLE:
    case CLR_HALF:
      tu_store_f(t, data, at, 1.0e6);
      break;
    case CLR_INT:
      tu_store_i(t, data, at, INT32_MAX);
      break;
    case CLR_LONG:
      tu_store_i(t, data, at, INT64_MAX);
      break;
    default:
      tu_store_bits(t, data, at, UINT64_MAX);
      break;
    }
    break;
  case CLR_AND:
    tu_store_bits(t, data, at, 0);
    break;
  default: /* CLR_OR: a value whose low 32 bits are zero for 64-bit types */
    tu_store_bits(t, data, at,
                  (t == CLR_LONG || t == CLR_ULONG) ? (1ull << 40) : 1u << 31);
    break;
  }
}

/* Parse "--key=value" style size_t arguments; returns 1 when matched. */
static TU_UNUSED int tu_arg(const char *arg, const char *key,
                            const char **val) {
  size_t k = strlen(key);
  if (strncmp(arg, key, k) == 0 && arg[k] == '=') {
    *val = arg + k + 1;
    return 1;
  }
  return 0;
}

/* The reduction kernels (scans get their own test program). */
static TU_UNUSED const clr_kernel tu_reduce_kernels[] = {
    CLR_REDUCE_INTERLEAVED, CLR_REDUCE_SEQUENTIAL, CLR_REDUCE_FIRST_ADD,
    CLR_REDUCE_COARSE};
#define TU_N_REDUCE_KERNELS                                                    \
  (sizeof tu_reduce_kernels / sizeof tu_reduce_kernels[0])

static TU_UNUSED const clr_type tu_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                              CLR_UINT,  CLR_LONG,   CLR_ULONG};
#define TU_N_TYPES (sizeof tu_types / sizeof tu_types[0])

static TU_UNUSED const clr_op tu_ops[] = {CLR_SUM, CLR_PROD, CLR_MIN,
                                          CLR_MAX, CLR_AND,  CLR_OR};
#define TU_N_OPS (sizeof tu_ops / sizeof tu_ops[0])

/* ------------------------------------------------------------ reliability
 * (tests/reliability/: Oclgrind, fault injection, concurrency) */

/* A check tied to a known bug: a failure of a bug listed in
 * $CLR_KNOWN_BUGS (comma-separated ids) is reported but tolerated. */
static TU_PRINTF(3, 4) TU_UNUSED
    int tu_known(const char *id, int ok, const char *fmt, ...) {
  va_list ap;
  if (ok) {
    tu_passed++;
    return 1;
  }
  const char *list = getenv("CLR_KNOWN_BUGS");
  size_t len = strlen(id);
  int tolerated = 0;
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, id, len) == 0)
      tolerated = 1;
    p = end ? end + 1 : p + n;
  }
  if (tolerated)
    tu_passed++;
  else
    tu_failed++;
  va_start(ap, fmt);
  printf("%s (known bug %s): ", tolerated ? "TOLERATED" : "FAIL", id);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  return 0;
}

/* One option of a test program: --name=VALUE into *value, or (value
 * NULL) the flag --name setting *flag. */
typedef struct tu_option {
  const char *name;
  const char **value;
  int *flag;
} tu_option;

/* Parse argv against the n options (and -v: verbose); any other argument
 * is fatal. */
static TU_UNUSED void tu_parse_args(int argc, char **argv,
                                    const tu_option *options, size_t n) {
  for (int i = 1; i < argc; i++) {
    size_t j = 0;
    if (strcmp(argv[i], "-v") == 0) {
      tu_verbose = 1;
      continue;
    }
    for (; j < n; j++) {
      const tu_option *o = &options[j];
      if (o->value ? tu_arg(argv[i], o->name, o->value)
                   : strcmp(argv[i], o->name) == 0) {
        if (o->flag)
          *o->flag = 1;
        break;
      }
    }
    if (j == n)
      tu_die("unknown argument %s", argv[i]);
  }
}
#define TU_N_OPTIONS(a) (sizeof(a) / sizeof((a)[0]))

/* The value of --name=VALUE among argv, or NULL. */
static TU_UNUSED const char *tu_arg_value(int argc, char **argv,
                                          const char *name) {
  const char *v;
  for (int i = 1; i < argc; i++)
    if (tu_arg(argv[i], name, &v))
      return v;
  return NULL;
}

/* Small values whose every sum, product and prefix is exact in every type
 * (seeded): products of 2, -1, 1 and 0.5; and/or with some zeros; sums of
 * integers in [-1000, 1000] ([0, 2000] unsigned). */
static TU_UNUSED void tu_fill_exact(clr_type t, clr_op op, void *data, size_t n,
                                    uint64_t seed) {
  tu_rng r = {seed * 0x2545F4914F6CDD1Dull + 12345u};
  for (size_t i = 0; i < n; i++) {
    uint64_t u = tu_next(&r);
    double x;
    if (op == CLR_PROD) {
      unsigned k = (unsigned)(u % 64);
      x = k == 0 ? 2.0 : k == 1 ? -1.0 : 1.0;
      if (k == 2 && tu_is_float(t))
        x = 0.5;
    } else if (op == CLR_AND || op == CLR_OR) {
      x = (op == CLR_AND ? u % 97 != 0 : u % 97 == 0) ? (double)(u % 5 + 1) : 0;
    } else {
      x = (double)(int64_t)(u % 2001) - 1000.0;
      if (t == CLR_UINT || t == CLR_ULONG)
        x = (double)(u % 2001);
    }
    if (tu_is_float(t))
      tu_store_f(t, data, i, x);
    else
      tu_store_i(t, data, i, (int64_t)x);
  }
}

/* Exact reference scan (the tu_fill_exact data keeps every prefix
 * exact). */
static TU_UNUSED void tu_scan_ref(clr_op op, clr_type t, int exclusive,
                                  const void *carry_in, const void *in,
                                  void *out, size_t n) {
  size_t es = clr_type_size(t);
  clr_value run = clr_identity(op, t);
  if (carry_in)
    run = clr_combine(op, run, clr_value_at(t, carry_in, 0));
  for (size_t i = 0; i < n; i++) {
    clr_value x = clr_value_at(t, in, i);
    if (exclusive) {
      memcpy((char *)out + i * es, &run.v, es);
      run = clr_combine(op, run, x);
    } else {
      run = clr_combine(op, run, x);
      memcpy((char *)out + i * es, &run.v, es);
    }
  }
}

/* Index of the first element where two arrays differ, or n. */
static TU_UNUSED size_t tu_first_diff(clr_type t, const void *a, const void *b,
                                      size_t n) {
  size_t es = clr_type_size(t);
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0)
      return i;
  return n;
}

/* tu_fmt of a value passed by value. */
static TU_UNUSED const char *tu_fmtv(clr_value v, char *buf, size_t size) {
  clr_value_format(&v, buf, size);
  return buf;
}

/* A CLR_REQ_MATRIX request of op over a rows x cols matrix of t (pitch 0:
 * cols), a result per column (axis 0) or row (axis 1); operands unset. */
static inline clr_request tu_matrix_request(clr_op op, clr_type t, size_t rows,
                                            size_t cols, size_t pitch,
                                            int axis) {
  clr_request r;
  clr_request_init(&r);
  r.kind = CLR_REQ_MATRIX;
  r.op = op;
  r.type = t;
  r.rows = rows;
  r.cols = cols;
  r.pitch = pitch;
  r.axis = axis;
  return r;
}

#endif
