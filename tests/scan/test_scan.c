/* Tests of the prefix scans: clr_scan_host and clr_scan_buffer.
 *
 *   test_scan --part=PART [--kernel=NAME] [--tu_verbose]
 *
 * Parts (meson runs each as its own test, the matrix once per kernel):
 *   matrix       one scan kernel (--kernel): every op x type x inclusive /
 *                exclusive over awkward sizes (1, 2, 3, 7, primes, 2^k +- 1,
 *                work-group size -1 / +0 / +1) and launch shapes, random
 *                data with fixed seeds
 *   levels       tiles small enough that the tile totals need two, three
 *                and more levels of block sums; the pass count is asserted
 *   inplace      in == out for host arrays and cl_mem buffers, unaligned
 *                host arrays, inputs and guard elements left untouched, and
 *                a context with copy_host_data = 1 (the copy path)
 *   carry        carry_in for every op and type, and a scan split in two
 *                halves chained through carry_in against one scan
 *   adversarial  all equal, alternating signs, integer extremes that wrap,
 *                NaN / inf, signed zeros, float sums exact in any order
 *   errors       and / or, n == 0, NULL pointers, buffers too small, bad
 *                enums, defaults (opt == NULL, a reduction kernel)
 *   big          3,000,001 elements in the default shape (suite 'slow')
 *
 * Checking: every element of every scan goes through clr_ref_scan_check
 * (exact for integers and float / double min and max; the a-priori bound
 * with the library's error depth for float / double sum and prod); on a
 * failure the worst index, its values and error / bound are printed.
 * Integer extremes, float sums of order-independent data and the non-finite
 * cases are also compared, element by element, with expectations computed
 * here (wrapping done in uint64_t arithmetic, not with clr_combine).
 *
 * Carry-in method (one for every type): a scan of x with carry c must equal
 * the INCLUSIVE scan of the sequence e = [c, x0, x1, ...] shifted by one.
 * Inclusive: [c, out0 .. out(n-1)] is checked as the inclusive scan of e
 * (n + 1 elements); exclusive: out0 .. out(n-1) is checked as the inclusive
 * scan of e0 .. e(n-1).  clr_ref_scan_check's rules apply unchanged.
 *
 * A missing OpenCL platform or device fails the program (exit 1). */
#include "scan_reference.h"
#include "test_util.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integer types: the low bits of a 64-bit pattern (so this wraps);
 * floating types: the signed value. */
#define put_bits(t, d, i, b)                                                   \
  (tu_is_float(t) ? tu_store_f((t), (d), (i), (double)(int64_t)(b))            \
                  : tu_store_bits((t), (d), (i), (b)))

/* ------------------------------------------------------------ the matrix */

static const clr_kernel scan_kernels[] = {
    CLR_SCAN_KOGGE_STONE, CLR_SCAN_KOGGE_STONE_DB, CLR_SCAN_BRENT_KUNG,
    CLR_SCAN_DECOUPLED};
#define N_KERNELS (sizeof scan_kernels / sizeof scan_kernels[0])
static const clr_op scan_ops[] = {CLR_SUM, CLR_PROD, CLR_MIN, CLR_MAX};
#define N_OPS (sizeof scan_ops / sizeof scan_ops[0])
static const clr_type all_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                     CLR_UINT,  CLR_LONG,   CLR_ULONG};
#define N_TYPES (sizeof all_types / sizeof all_types[0])
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* An op with a type, for sweeps over a chosen subset. */
typedef struct op_type {
  clr_op op;
  clr_type type;
} op_type;

/* Whether a sweep covers kernel k, op o, type t (indices): all of them,
 * except that the decoupled scan gets half the op x type pairs (its PoCL
 * compiles are slow). */
static int swept(size_t k, size_t o, size_t t) {
  return scan_kernels[k] != CLR_SCAN_DECOUPLED || (o + t) % 2 == 0;
}

/* One op x type pair of a sweep, with its indices o and t into scan_ops and
 * all_types (the seeds use them).  Start from {0}:
 *   for (sweep_pair p = {0}; next_pair(&p);)      every pair
 *   for (sweep_pair p = {0}; next_swept(&p, k);)  those swept() covers on k */
typedef struct sweep_pair {
  size_t o, t;
  clr_op op;
  clr_type type;
  size_t visited; /* pairs stepped over so far */
} sweep_pair;

static int next_pair(sweep_pair *p) {
  if (p->visited == N_OPS * N_TYPES)
    return 0;
  p->o = p->visited / N_TYPES;
  p->t = p->visited % N_TYPES;
  p->visited++;
  p->op = scan_ops[p->o];
  p->type = all_types[p->t];
  return 1;
}

static int next_swept(sweep_pair *p, size_t k) {
  while (next_pair(p))
    if (swept(k, p->o, p->t))
      return 1;
  return 0;
}

/* tu_section for what on kernel k (an index): "<what> <kernel name>". */
static void kernel_section(const char *what, size_t k) {
  char name[64];
  snprintf(name, sizeof name, "%s %s", what, clr_kernel_name(scan_kernels[k]));
  tu_section(name);
}

/* Elements after the n written ones, which no scan may touch. */
#define GUARD 16
#define GUARD_BYTE 0xA5

/* ------------------------------------------------------------ values */

static int is_fp(clr_type t) { return t == CLR_FLOAT || t == CLR_DOUBLE; }
static int is_signed(clr_type t) { return t == CLR_INT || t == CLR_LONG; }
static size_t esz(clr_type t) { return clr_type_size(t); }
static unsigned bits_of(clr_type t) { return (unsigned)esz(t) * 8; }

static void *at(void *base, clr_type t, size_t i) {
  return (unsigned char *)base + i * esz(t);
}
static const void *cat(const void *base, clr_type t, size_t i) {
  return (const unsigned char *)base + i * esz(t);
}

static void value_put(void *data, size_t i, const clr_value *v) {
  memcpy(at(data, v->type, i), &v->v, esz(v->type));
}

static double fp_of(const clr_value *v) {
  return v->type == CLR_FLOAT ? (double)v->v.f : v->v.d;
}

/* The extremes of an integer type as 64-bit patterns. */
static uint64_t type_max_bits(clr_type t) {
  switch (t) {
  case CLR_INT:
    return (uint64_t)INT32_MAX;
  case CLR_UINT:
    return UINT32_MAX;
  case CLR_LONG:
    return (uint64_t)INT64_MAX;
  default:
    return UINT64_MAX;
  }
}

static uint64_t type_min_bits(clr_type t) {
  switch (t) {
  case CLR_INT:
    return (uint64_t)(int64_t)INT32_MIN;
  case CLR_LONG:
    return (uint64_t)INT64_MIN;
  default:
    return 0;
  }
}

/* ------------------------------------------------------------ PRNG */

/* ------------------------------------------------------------ data */

typedef enum data_kind {
  DATA_RANDOM, /* random values suited to the op (below)             */
  DATA_TREND,  /* min / max: a new extreme every few elements         */
} data_kind;

/* Random data for op:
 *   sum   floats: uniform in [-0.75, 1.25); integers: all 64 random bits
 *         (the running sums wrap all the time)
 *   prod  floats: 1 + (u - 0.5) / 256 (no over- or underflow); integers:
 *         random odd bit patterns (products wrap and never become 0)
 *   min / max  floats: uniform in [-1000, 1000), every eighth element a
 *         repeat of an earlier one; integers: all random bits
 * DATA_TREND (min / max): values that drift towards the extreme, so the
 * running min / max changes all along the array. */
static void fill_data(clr_op op, clr_type t, data_kind kind, void *d, size_t n,
                      uint64_t seed) {
  tu_rng r = {seed};
  int fp = is_fp(t);
  if (kind == DATA_TREND && (op == CLR_MIN || op == CLR_MAX)) {
    int64_t base = is_signed(t) || fp ? -(int64_t)n : 0;
    for (size_t i = 0; i < n; i++) {
      int64_t step = (int64_t)(op == CLR_MIN ? n - i : i);
      tu_store_i(t, d, i, base + 2 * step + (int64_t)tu_below(&r, 5));
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    if (op == CLR_SUM)
      tu_store_random(&r, t, d, i, -0.75, 1.25, 0);
    else if (op == CLR_PROD)
      tu_store_random(&r, t, d, i, 1.0 - 1.0 / 512, 1.0 + 1.0 / 512, 1);
    else if (i > 0 && tu_below(&r, 8) == 0) /* min / max: a repeat */
      memcpy(at(d, t, i), cat(d, t, (size_t)tu_below(&r, i)), esz(t));
    else
      tu_store_random(&r, t, d, i, -1000.0, 1000.0, 0);
  }
}

/* One element of random data for op (a carry value, say). */
static clr_value random_value(clr_op op, clr_type t, uint64_t seed) {
  unsigned char buf[8];
  fill_data(op, t, DATA_RANDOM, buf, 1, seed);
  return clr_value_at(t, buf, 0);
}

/* ------------------------------------------------------------ context */

static clr_device_desc device;

/* A context on the default device; CLREDUCE_KERNEL_DIR and
 * CLREDUCE_CACHE_DIR come from the environment.  Any failure is fatal. */
static clr_context *make_context(int copy_host_data) {
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  clr_context *ctx = NULL;
  char detail[512] = "";
  cfg.copy_host_data = copy_host_data;
  clr_status s = clr_context_create(&cfg, &ctx, detail, sizeof detail);
  if (s != CLR_OK || !ctx)
    tu_die("clr_context_create(copy_host_data=%d): %s (%s): %s", copy_host_data,
           clr_status_name(s), clr_status_string(s), detail);
  if (clr_context_device(ctx, &device) != CLR_OK)
    tu_die("clr_context_device: %s", clr_context_error(ctx));
  return ctx;
}

/* make_context(0) with its tuning changed by edit.  Fatal on failure. */
static clr_context *make_tuned_context(void (*edit)(clr_tuning *)) {
  clr_context *ctx = make_context(0);
  clr_tuning t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &t) != CLR_OK)
    tu_die("clr_get_tuning: %s", clr_context_error(ctx));
  edit(&t);
  if (clr_set_tuning(ctx, &t) != CLR_OK)
    tu_die("clr_set_tuning: %s", clr_context_error(ctx));
  return ctx;
}

/* Double scans must fail with CLR_ERR_NO_FP64 where the device lacks it. */
static int available(clr_type t) { return t != CLR_DOUBLE || device.has_fp64; }

/* ------------------------------------------------------------ cases */

typedef struct shape {
  size_t wg;     /* clr_options.wg_size; 0: the library's choice       */
  size_t coarse; /* clr_options.coarse: elements per work-item         */
  unsigned vec;  /* clr_options.vector_width; 0: the library's choice  */
} shape;

typedef struct scase {
  clr_kernel kernel;
  clr_op op;
  clr_type type;
  int exclusive;
  shape sh;
  const void *carry; /* NULL: none                                      */
  const char *label; /* the data, and anything else worth printing      */
} scase;

static clr_options options_of(const scase *c) {
  clr_options o;
  clr_options_init(&o);
  o.kernel = c->kernel;
  o.wg_size = c->sh.wg;
  o.coarse = c->sh.coarse;
  o.vector_width = c->sh.vec;
  o.exclusive = c->exclusive;
  o.carry_in = c->carry;
  return o;
}

static void describe(const scase *c, size_t n, char *buf, size_t size) {
  char cb[64] = "";
  if (c->carry) {
    clr_value cv = clr_value_at(c->type, c->carry, 0);
    char vb[48];
    snprintf(cb, sizeof cb, " carry=%s", tu_fmt(&cv, vb, sizeof vb));
  }
  snprintf(buf, size, "%s %s %s %s n=%zu wg=%zu coarse=%zu vec=%u%s [%s]",
           clr_kernel_name(c->kernel), clr_op_name(c->op),
           clr_type_name(c->type), c->exclusive ? "exclusive" : "inclusive", n,
           c->sh.wg, c->sh.coarse, c->sh.vec, cb, c->label ? c->label : "");
}

/* Compare out (a device scan of in) with the CPU reference, every element;
 * on failure print the worst element. */
static int check_ref(const char *desc, clr_op op, clr_type t, int exclusive,
                     const void *in, const void *out, size_t n, size_t depth) {
  clr_scan_check chk;
  char gb[64], wb[64];
  clr_ref_scan_check(op, t, exclusive, in, out, n, depth, &chk);
  return tu_check(
      chk.ok,
      "%s: %zu of %zu elements wrong; worst index %zu: got %s, want "
      "%s (error %g, bound %g, ratio %g, depth %zu)",
      desc, chk.n_bad, n, chk.worst_index,
      tu_fmt(&chk.got_worst, gb, sizeof gb),
      tu_fmt(&chk.ref_worst, wb, sizeof wb), chk.worst_error, chk.worst_bound,
      chk.worst_ratio, depth);
}

/* out must equal want element for element (NaN matches NaN). */
static int check_equal(const char *desc, const char *what, clr_type t,
                       const void *out, const void *want, size_t n) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++) {
    clr_value g = clr_value_at(t, out, i), w = clr_value_at(t, want, i);
    if (!tu_same(&g, &w) && bad++ == 0)
      first = i;
  }
  char gb[64] = "", wb[64] = "";
  if (bad) {
    clr_value g = clr_value_at(t, out, first), w = clr_value_at(t, want, first);
    tu_fmt(&g, gb, sizeof gb);
    tu_fmt(&w, wb, sizeof wb);
  }
  return tu_check(bad == 0,
                  "%s: %s: %zu of %zu elements differ, first at %zu: "
                  "got %s, want %s",
                  desc, what, bad, n, first, gb, wb);
}

/* check_equal where the two calls compared promise the same bits: the
 * decoupled scan's float sums and products are repeatable run to run, but
 * its CPU shape folds a run in vector lanes or one by one as the two
 * calls' alignment allows, which rounds differently (both within the
 * bound, which check_ref asserts); those are compared by check_ref only.
 * (scan-big compares the CPU shape bit for bit where the shapes agree.) */
static int check_same(const scase *c, const char *desc, const char *what,
                      clr_type t, const void *got, const void *want, size_t n) {
  if (c->kernel == CLR_SCAN_DECOUPLED &&
      (c->type == CLR_FLOAT || c->type == CLR_DOUBLE) &&
      (c->op == CLR_SUM || c->op == CLR_PROD))
    return 1;
  return check_equal(desc, what, t, got, want, n);
}

static int guard_intact(const void *out, size_t n, clr_type t) {
  const unsigned char *g = (const unsigned char *)out + n * esz(t);
  for (size_t i = 0; i < GUARD * esz(t); i++)
    if (g[i] != GUARD_BYTE)
      return 0;
  return 1;
}

/* An output array of n elements plus GUARD guard elements. */
static void *new_output(clr_type t, size_t n) {
  void *out = tu_xmalloc((n + GUARD) * esz(t));
  memset(out, GUARD_BYTE, (n + GUARD) * esz(t));
  return out;
}

/* The error depth of the last call must make the float bound meaningful. */
static int check_depth(const char *desc, const scase *c, size_t depth) {
  if (!is_fp(c->type) || c->op != CLR_SUM)
    return 1;
  double u = clr_unit_roundoff(c->type);
  return tu_check(depth >= 1 && clr_gamma((double)depth, u) <= 0.01,
                  "%s: implausible error_depth %zu", desc, depth);
}

/* Run clr_scan_host(in -> out) and check what the call itself promises:
 * the status (CLR_ERR_NO_FP64 for doubles on a device without them), the
 * input left as it was (when out != in), nothing written past n.  out must
 * come from new_output (or be in).  *depth receives the error depth.
 * Returns 1 when the scan ran and those checks passed. */
static int run_host(clr_context *ctx, const scase *c, const void *in, void *out,
                    size_t n, size_t *depth) {
  char desc[320];
  describe(c, n, desc, sizeof desc);
  clr_options o = options_of(c);
  size_t bytes = n * esz(c->type);
  void *copy = NULL;
  if (out != in) {
    copy = tu_xmalloc(bytes);
    memcpy(copy, in, bytes);
  }
  clr_status s = clr_scan_host(ctx, &o, c->op, c->type, in, out, n);
  int ok;
  if (!available(c->type)) {
    tu_check(s == CLR_ERR_NO_FP64, "%s: no fp64: got %s, want CLR_ERR_NO_FP64",
             desc, clr_status_name(s));
    ok = 0;
  } else {
    ok = tu_check(s == CLR_OK, "%s: clr_scan_host returned %s: %s", desc,
                  clr_status_name(s), clr_context_error(ctx));
  }
  if (ok) {
    clr_timing tm = CLR_TIMING_INIT;
    ok = tu_check(clr_last_timing(ctx, &tm) == CLR_OK, "%s: clr_last_timing",
                  desc);
    *depth = tm.error_depth;
    ok &= check_depth(desc, c, *depth);
  }
  if (copy) {
    ok &= tu_check(memcmp(copy, in, bytes) == 0, "%s: the input was modified",
                   desc);
    ok &= tu_check(guard_intact(out, n, c->type),
                   "%s: elements after n were written", desc);
    free(copy);
  }
  return ok;
}

/* Scan in on the host path into a fresh array and check every element
 * against the reference.  With result, the output is returned (the caller
 * frees it); otherwise freed. */
static int scan_check(clr_context *ctx, const scase *c, const void *in,
                      size_t n, void **result, size_t *depth_out) {
  char desc[320];
  size_t depth = 0;
  void *out = new_output(c->type, n);
  int ok = run_host(ctx, c, in, out, n, &depth);
  if (ok) {
    describe(c, n, desc, sizeof desc);
    ok = check_ref(desc, c->op, c->type, c->exclusive, in, out, n, depth);
  }
  if (depth_out)
    *depth_out = depth;
  if (result && ok)
    *result = out;
  else
    free(out);
  if (result && !ok)
    *result = NULL;
  return ok;
}

/* Launches of one scan of n elements with tiles of `tile` elements: one
 * tile-total reduction and one tile scan per level that has several tiles,
 * plus the last level's single tile scan. */
static size_t expected_passes(size_t n, size_t tile) {
  if (n <= tile)
    return 1;
  return 2 + expected_passes(n / tile + (n % tile != 0), tile);
}

/* ------------------------------------------------------------ buffers */

/* clr_scan_buffer of c from in to out (n elements), its status checked
 * (CLR_ERR_NO_FP64 for double where the device has no fp64): 1 with the
 * error depth in *depth when it ran. */
static int scan_buffer_ran(clr_context *ctx, const scase *c, cl_mem in,
                           cl_mem out, size_t n, const char *desc,
                           size_t *depth) {
  clr_options opt = options_of(c);
  clr_status s = clr_scan_buffer(ctx, &opt, c->op, c->type, in, out, n);
  if (!tu_check(s == (available(c->type) ? CLR_OK : CLR_ERR_NO_FP64),
                "%s: clr_scan_buffer returned %s: %s", desc, clr_status_name(s),
                clr_context_error(ctx)) ||
      s != CLR_OK)
    return 0;
  clr_timing tm = CLR_TIMING_INIT;
  clr_last_timing(ctx, &tm);
  *depth = tm.error_depth;
  return 1;
}

/* ------------------------------------------------------------ matrix */

typedef struct shape_sizes {
  shape sh;
  const size_t *sizes;
  size_t count;
} shape_sizes;

static const size_t sz_default[] = {1,    2,    3,    7,    97,    1009,
                                    1023, 1025, 4095, 4097, 65535, 65537};
static const size_t sz_wg64[] = {1,    2,    3,    7,     63,   64,
                                 65,   97,   1009, 1023,  1025, 4095,
                                 4096, 4097, 8191, 65535, 65537};
static const size_t sz_wg256[] = {255, 256, 257, 1009, 65535, 65536, 65537};
static const size_t sz_wg63[] = {62, 63, 64, 65, 3968, 3969, 3970};
static const size_t sz_wg65[] = {64, 65, 66, 97, 4224, 4225, 4226};
static const size_t sz_wg255[] = {254, 255, 256, 65025, 65026};
static const size_t sz_wg257[] = {256, 257, 258, 66049, 66050};
/* Runs of 8 per work-item: the library's vector width for the type (as in
 * the default CPU shape), partial vectors at the end, several levels. */
static const size_t sz_wg64c8[] = {7, 9, 511, 512, 513, 4097, 32767, 32769};
static const size_t sz_wg63c8[] = {503, 504, 505, 254017};
/* Work-groups of one item, runs of 40: the CPU shapes (the decoupled
 * scan's chained runs, the tiled scan's groups of one), vectors of 8 and
 * a partial one at the end of every run, many runs chained. */
static const size_t sz_wg1c40[] = {1, 39, 40, 41, 4097, 65537};

#define SHAPE(w, c, v, arr)                                                    \
  { {w, c, v}, arr, COUNT(arr) }
static const shape_sizes matrix_shapes[] = {
    SHAPE(0, 0, 0, sz_default), SHAPE(64, 1, 0, sz_wg64),
    SHAPE(256, 1, 0, sz_wg256), SHAPE(63, 1, 0, sz_wg63),
    SHAPE(65, 1, 0, sz_wg65),   SHAPE(255, 1, 0, sz_wg255),
    SHAPE(257, 1, 0, sz_wg257), SHAPE(64, 8, 0, sz_wg64c8),
    SHAPE(63, 8, 0, sz_wg63c8), SHAPE(1, 40, 0, sz_wg1c40),
};

/* A work-group size beyond what the device allows for this kernel (an
 * NVIDIA GPU caps these kernels at 256, PoCL at 4096) must be refused
 * with CLR_ERR_INVALID_ARGUMENT and a message naming the limit; such a
 * shape is then reported and skipped, never silently passed.  Returns 1
 * when the shape runs here. */
static int shape_fits(clr_context *ctx, clr_kernel k, clr_op op, clr_type type,
                      const shape *sh) {
  scase c = {k, op, type, 0, *sh, NULL, "probe"};
  clr_options o = options_of(&c);
  if (sh->wg == 0 || !available(type))
    return 1;
  clr_status s = clr_prepare(ctx, &o, op, type);
  if (s == CLR_OK)
    return 1;
  tu_check(s == CLR_ERR_INVALID_ARGUMENT &&
               strstr(clr_context_error(ctx), "exceeds this kernel's limit"),
           "%s %s %s wg=%zu: clr_prepare returned %s: %s", clr_kernel_name(k),
           clr_op_name(op), clr_type_name(type), sh->wg, clr_status_name(s),
           clr_context_error(ctx));
  printf("note: %s %s %s wg=%zu skipped on this device: %s\n",
         clr_kernel_name(k), clr_op_name(op), clr_type_name(type), sh->wg,
         clr_context_error(ctx));
  return 0;
}

static void no_slots(clr_tuning *t) { t->decoupled_slots = 0; }

/* The decoupled scan's look-back through flags and 32-bit words
 * (decoupled.slots=0: the GPU shape of devices without 64-bit atomics),
 * every op x type in work-groups of 64 or 63; then one context switching
 * between slots and flags, which share its look-back buffers. */
static void matrix_flags(void *in) {
  clr_context *fc = make_tuned_context(no_slots);
  for (sweep_pair p = {0}; next_pair(&p);) {
    const shape_sizes *ss = &matrix_shapes[(p.o + p.t) % 2 ? 1 : 3];
    if (!shape_fits(fc, CLR_SCAN_DECOUPLED, p.op, p.type, &ss->sh))
      continue;
    for (size_t i = 0; i < ss->count; i++) {
      size_t n = ss->sizes[i];
      fill_data(p.op, p.type, DATA_RANDOM, in, n, tu_seed(p.op, p.type, n, 99));
      for (int ex = 0; ex < 2; ex++) {
        scase c = {CLR_SCAN_DECOUPLED, p.op, p.type, ex, ss->sh, NULL, "flags"};
        scan_check(fc, &c, in, n, NULL, NULL);
      }
    }
  }
  clr_tuning t = CLR_TUNING_INIT;
  if (tu_check(clr_get_tuning(fc, &t) == CLR_OK, "clr_get_tuning: %s",
               clr_context_error(fc))) {
    size_t n = 65537;
    for (int round = 0; round < 4; round++) {
      t.decoupled_slots = round % 2 == 0;
      if (!tu_check(clr_set_tuning(fc, &t) == CLR_OK, "clr_set_tuning: %s",
                    clr_context_error(fc)))
        break;
      fill_data(CLR_SUM, CLR_INT, DATA_RANDOM, in, n,
                tu_seed(CLR_SUM, CLR_INT, n, 100 + (size_t)round));
      scase c = {CLR_SCAN_DECOUPLED,
                 CLR_SUM,
                 CLR_INT,
                 0,
                 {64, 1, 0},
                 NULL,
                 round % 2 ? "flags after slots" : "slots after flags"};
      scan_check(fc, &c, in, n, NULL, NULL);
    }
  }
  clr_context_release(fc);
  tu_section("matrix decoupled through flags");
}

static void part_matrix(clr_context *ctx, clr_kernel k) {
  size_t max_n = 0;
  for (size_t s = 0; s < COUNT(matrix_shapes); s++)
    for (size_t i = 0; i < matrix_shapes[s].count; i++)
      if (matrix_shapes[s].sizes[i] > max_n)
        max_n = matrix_shapes[s].sizes[i];
  void *in = tu_xmalloc(max_n * 8);
  for (sweep_pair p = {0}; next_pair(&p);) {
    for (size_t s = 0; s < COUNT(matrix_shapes); s++) {
      const shape_sizes *ss = &matrix_shapes[s];
      /* Every op x type runs the first three shapes (default, 64, 256);
       * the other shapes take every third op x type in turn, so each
       * shape still meets every op and every type.  (Each shape is a
       * separate program per op x type: a cold PoCL compiles them all,
       * and CI must stay within its time.) */
      if (s >= 3 && (p.o * N_TYPES + p.t + s) % 3 != 0)
        continue;
      if (!shape_fits(ctx, k, p.op, p.type, &ss->sh))
        continue;
      for (size_t i = 0; i < ss->count; i++) {
        size_t n = ss->sizes[i];
        /* min / max alternate random and trending data over sizes */
        data_kind kind = (p.op == CLR_MIN || p.op == CLR_MAX) && i % 2
                             ? DATA_TREND
                             : DATA_RANDOM;
        fill_data(p.op, p.type, kind, in, n, tu_seed(p.op, p.type, n, s));
        for (int ex = 0; ex < 2; ex++) {
          scase c = {k,
                     p.op,
                     p.type,
                     ex,
                     ss->sh,
                     NULL,
                     kind == DATA_TREND ? "trend" : "random"};
          scan_check(ctx, &c, in, n, NULL, NULL);
        }
      }
    }
    char name[96];
    snprintf(name, sizeof name, "matrix %s %s %s", clr_kernel_name(k),
             clr_op_name(p.op), clr_type_name(p.type));
    tu_section(name);
  }
  if (k == CLR_SCAN_DECOUPLED)
    matrix_flags(in);
  free(in);
}

/* ------------------------------------------------------------ levels */

static void check_passes(clr_context *ctx, const scase *c, size_t n) {
  char desc[320];
  tu_timing tm;
  describe(c, n, desc, sizeof desc);
  if (!tu_check(tu_get_timing(ctx, &tm) == CLR_OK, "%s: clr_last_timing", desc))
    return;
  size_t tile = c->sh.wg * c->sh.coarse;
  /* The decoupled scan is one pass whatever n: tiles chain through the
   * look-back, not through levels of block sums. */
  size_t want = c->kernel == CLR_SCAN_DECOUPLED ? 1 : expected_passes(n, tile);
  size_t groups = n / tile + (n % tile != 0);
  tu_check(tm.n_passes == want && tm.chunks == 1 && tm.passes[0].n_in == n &&
               tm.passes[0].local_size == c->sh.wg &&
               tm.passes[0].global_size == groups * c->sh.wg,
           "%s: %zu passes (want %zu), chunks %zu, first pass n_in %zu local "
           "%zu global %zu (want %zu, %zu, %zu)",
           desc, tm.n_passes, want, tm.chunks, tm.passes[0].n_in,
           tm.passes[0].local_size, tm.passes[0].global_size, n, c->sh.wg,
           groups * c->sh.wg);
}

static void part_levels(clr_context *ctx) {
  /* wg 4 x coarse 2 = tiles of 8: n = 1000 gives 125 tile totals, then 16,
   * then 2: three levels of block sums (7 passes).  vec 1 keeps the
   * programs shared with the matrix; vec 2 (the library's choice for
   * coarse 2) follows for a subset. */
  static const size_t sizes8[] = {1,  7,   8,   9,   63,   64,
                                  65, 511, 512, 513, 1000, 4097};
  static const shape sh8 = {4, 2, 1};
  size_t max_n = 70000;
  void *in = tu_xmalloc(max_n * 8);
  tu_check(expected_passes(1000, 8) == 7, "1000 elements in tiles of 8 need "
                                          "three levels of block sums");
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (sweep_pair p = {0}; next_pair(&p);) {
      /* half the op x type pairs per kernel, alternating (compile time) */
      if ((k + p.o + p.t) % 2 != 0)
        continue;
      for (size_t i = 0; i < COUNT(sizes8); i++) {
        size_t n = sizes8[i];
        fill_data(p.op, p.type, DATA_RANDOM, in, n,
                  tu_seed(k, p.o * 8 + p.t, n, 8));
        for (int ex = 0; ex < 2; ex++) {
          scase c = {scan_kernels[k],     p.op, p.type, ex, sh8, NULL,
                     "random, tiles of 8"};
          if (scan_check(ctx, &c, in, n, NULL, NULL))
            check_passes(ctx, &c, n);
        }
      }
    }
    kernel_section("levels tiles-of-8", k);
  }

  /* Other shapes with three or more levels; odd tiles; vec 2. */
  static const struct {
    shape sh;
    size_t n;
  } more[] = {
      {{64, 1, 0}, 65537},  /* 1025 tiles, 17, 1: 5 passes          */
      {{256, 1, 0}, 65537}, /* 257 tiles, 2, 1: 5 passes            */
      {{3, 3, 0}, 1000},    /* tiles of 9: 112, 13, 2: 7 passes      */
      {{5, 1, 0}, 3126},    /* tiles of 5: 626, 126, 26, 6, 2        */
      {{2, 1, 0}, 2048},    /* tiles of 2: ten levels                */
      {{4, 2, 0}, 1000},    /* vec 2                                */
      {{4, 2, 0}, 4097},    /* vec 2                                */
      {{2, 4, 0}, 1001},    /* vec 4 (or the type's width)           */
  };
  static const op_type subset[] = {{CLR_SUM, CLR_FLOAT},  {CLR_SUM, CLR_INT},
                                   {CLR_MAX, CLR_DOUBLE}, {CLR_MIN, CLR_ULONG},
                                   {CLR_PROD, CLR_LONG},  {CLR_PROD, CLR_FLOAT},
                                   {CLR_MIN, CLR_INT},    {CLR_MAX, CLR_UINT}};
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (size_t m = 0; m < COUNT(more); m++) {
      for (size_t j = 0; j < COUNT(subset); j++) {
        /* three of the eight op / type pairs per shape, in turn */
        if ((j + m + k) % 3 != 0)
          continue;
        size_t n = more[m].n;
        fill_data(subset[j].op, subset[j].type, DATA_RANDOM, in, n,
                  tu_seed(k, m, n, j));
        for (int ex = 0; ex < 2; ex++) {
          scase c = {scan_kernels[k], subset[j].op, subset[j].type,       ex,
                     more[m].sh,      NULL,         "random, many levels"};
          if (scan_check(ctx, &c, in, n, NULL, NULL))
            check_passes(ctx, &c, n);
        }
      }
    }
    kernel_section("levels other shapes", k);
  }

  /* Far more levels than any real input needs (tiles of 2): the call must
   * either scan correctly or fail cleanly, never return a wrong scan. */
  {
    size_t n = 1 << 14;
    fill_data(CLR_SUM, CLR_INT, DATA_RANDOM, in, n, 77);
    scase c = {CLR_SCAN_KOGGE_STONE,   CLR_SUM, CLR_INT, 0, {2, 1, 0}, NULL,
               "tiles of 2, 13 levels"};
    char desc[320];
    describe(&c, n, desc, sizeof desc);
    clr_options o = options_of(&c);
    void *out = new_output(CLR_INT, n);
    clr_status s = clr_scan_host(ctx, &o, c.op, c.type, in, out, n);
    if (s == CLR_OK) {
      check_ref(desc, c.op, c.type, 0, in, out, n, 0);
    } else {
      tu_check(s == CLR_ERR_INVALID_ARGUMENT || s == CLR_ERR_UNSUPPORTED,
               "%s: failed with %s (%s), want success or a clean "
               "CLR_ERR_INVALID_ARGUMENT",
               desc, clr_status_name(s), clr_context_error(ctx));
      tu_check(clr_context_error(ctx)[0] != '\0',
               "%s: a failure leaves a detail", desc);
    }
    free(out);
    tu_section("levels deep recursion");
  }
  free(in);
}

/* ------------------------------------------------------------ in place */

static const shape inplace_shapes[] = {
    {0, 0, 0}, {64, 1, 0}, {4, 2, 1}, {64, 8, 0}};
static const size_t inplace_sizes[] = {1, 7, 1000, 4097, 65537, 100003};

/* Host arrays scanned in place must equal the same scan out of place, bit
 * for bit (same kernels, same order), and the reference. */
static void inplace_host(clr_context *ctx, const char *ctx_name,
                         clr_context *ctx_other) {
  size_t max_n = 100003;
  void *in = tu_xmalloc(max_n * 8);
  void *work = new_output(CLR_LONG, max_n);
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (sweep_pair p = {0}; next_swept(&p, k);) {
      for (size_t s = 0; s < COUNT(inplace_shapes); s++) {
        /* two sizes per shape and type, rotating */
        for (size_t j = 0; j < 2; j++) {
          size_t n =
              inplace_sizes[(s + p.t + p.o + j * 3) % COUNT(inplace_sizes)];
          int ex = (int)((k + p.o + p.t + j) % 2);
          scase c = {scan_kernels[k],   p.op, p.type,  ex,
                     inplace_shapes[s], NULL, ctx_name};
          char desc[320];
          describe(&c, n, desc, sizeof desc);
          fill_data(p.op, p.type, DATA_RANDOM, in, n, tu_seed(k, p.o, p.t, n));
          /* out of place, on this context */
          void *ref_out = NULL;
          if (!scan_check(ctx, &c, in, n, &ref_out, NULL))
            continue;
          /* in place */
          size_t depth = 0;
          memcpy(work, in, n * esz(p.type));
          memset(at(work, p.type, n), GUARD_BYTE, GUARD * esz(p.type));
          if (run_host(ctx, &c, work, work, n, &depth)) {
            char d2[400];
            snprintf(d2, sizeof d2, "%s in place", desc);
            check_ref(d2, p.op, p.type, ex, in, work, n, depth);
            check_same(&c, d2, "in place against out of place", p.type, work,
                       ref_out, n);
            tu_check(guard_intact(work, n, p.type),
                     "%s: elements after n were written", d2);
          }
          /* the other context (zero-copy against copy) gives the same */
          if (ctx_other && s % 2 == 0) {
            void *other = NULL;
            if (scan_check(ctx_other, &c, in, n, &other, NULL)) {
              check_same(&c, desc, "copy against zero-copy context", p.type,
                         other, ref_out, n);
              free(other);
            }
          }
          free(ref_out);
        }
      }
    }
  }
  free(work);
  free(in);
}

/* Unaligned host arrays: in and out start 1 and 3 elements into their
 * allocations, so vector loads and zero-copy wrapping see odd addresses. */
static void unaligned_host(clr_context *ctx, const char *ctx_name) {
  size_t n = 4097;
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (size_t t = 0; t < N_TYPES; t++) {
      clr_type type = all_types[t];
      clr_op op = t % 2 ? CLR_SUM : CLR_MAX;
      unsigned char *inb = tu_xmalloc((n + 1) * esz(type));
      unsigned char *outb = tu_xmalloc((n + 3 + GUARD) * esz(type));
      memset(outb, GUARD_BYTE, (n + 3 + GUARD) * esz(type));
      void *in = at(inb, type, 1), *out = at(outb, type, 3);
      fill_data(op, type, DATA_RANDOM, in, n, tu_seed(k, t, n, 13));
      for (int ex = 0; ex < 2; ex++) {
        shape sh = {0, 0, 0};
        scase c = {scan_kernels[k], op, type, ex, sh, NULL, ctx_name};
        char desc[320], d2[400];
        describe(&c, n, desc, sizeof desc);
        snprintf(d2, sizeof d2, "%s unaligned", desc);
        size_t depth = 0;
        if (run_host(ctx, &c, in, out, n, &depth))
          check_ref(d2, op, type, ex, in, out, n, depth);
        tu_check(outb[0] == GUARD_BYTE && outb[3 * esz(type) - 1] == GUARD_BYTE,
                 "%s: elements before out were written", d2);
      }
      free(inb);
      free(outb);
    }
  }
}

/* clr_scan_buffer: in != out (input buffer unchanged, out's elements past
 * n unchanged), in == out (elements past n unchanged), and the result
 * equal to the host path's. */
static void inplace_buffers(clr_context *ctx) {
  static const size_t sizes[] = {1, 7, 1000, 65537};
  static const shape shapes[] = {{0, 0, 0}, {4, 2, 1}, {64, 1, 0}};
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (sweep_pair p = {0}; next_swept(&p, k);) {
      size_t n = sizes[(k + p.o + p.t) % COUNT(sizes)];
      shape sh = shapes[(p.o + p.t) % COUNT(shapes)];
      size_t es = esz(p.type), bytes = n * es, gbytes = (n + GUARD) * es;
      unsigned char *in = tu_xmalloc(gbytes);
      fill_data(p.op, p.type, DATA_RANDOM, in, n + GUARD,
                tu_seed(k, p.o, p.t, 99));
      unsigned char *got = tu_xmalloc(gbytes);
      for (int ex = 0; ex < 2; ex++) {
        scase c = {scan_kernels[k], p.op, p.type, ex, sh, NULL, "cl_mem"};
        char desc[320], d2[400];
        describe(&c, n, desc, sizeof desc);
        void *host_out = NULL;
        size_t depth = 0;
        /* the host path's answer for the same data */
        if (!scan_check(ctx, &c, in, n, &host_out, NULL))
          continue;
        /* in != out; both buffers GUARD elements longer than n */
        cl_mem bin = tu_new_buffer(ctx, gbytes, in);
        unsigned char *sentinel = tu_xmalloc(gbytes);
        memset(sentinel, GUARD_BYTE, gbytes);
        cl_mem bout = tu_new_buffer(ctx, gbytes, sentinel);
        snprintf(d2, sizeof d2, "%s buffer in != out", desc);
        if (scan_buffer_ran(ctx, &c, bin, bout, n, d2, &depth)) {
          tu_read_buffer(ctx, bout, gbytes, got);
          check_ref(d2, p.op, p.type, ex, in, got, n, depth);
          check_same(&c, d2, "buffer against host path", p.type, got, host_out,
                     n);
          tu_check(memcmp(got + bytes, sentinel, GUARD * es) == 0,
                   "%s: out's elements past n were written", d2);
          tu_read_buffer(ctx, bin, gbytes, got);
          tu_check(memcmp(got, in, gbytes) == 0, "%s: the input buffer changed",
                   d2);
        }
        clReleaseMemObject(bout);
        free(sentinel);
        /* in == out */
        snprintf(d2, sizeof d2, "%s buffer in == out", desc);
        if (scan_buffer_ran(ctx, &c, bin, bin, n, d2, &depth)) {
          tu_read_buffer(ctx, bin, gbytes, got);
          check_ref(d2, p.op, p.type, ex, in, got, n, depth);
          check_same(&c, d2, "in place buffer against host path", p.type, got,
                     host_out, n);
          tu_check(memcmp(got + bytes, in + bytes, GUARD * es) == 0,
                   "%s: elements past n were written", d2);
        }
        clReleaseMemObject(bin);
        free(host_out);
      }
      free(got);
      free(in);
    }
  }
}

/* Non-temporal stores (a CPU scan's output past the cache, clr_scan_run in
 * cl/scan_lanes.cl): a context whose scan.stream_bytes is 1 stores every
 * scan that way; out of place, in place, and into outputs 3 elements into
 * their allocation (aligned to no vector: plain stores) and 16 bytes in
 * (to half a vector of 32 bytes: stored in halves), the same elements as
 * ctx's scan and right against the reference.  (GPUs never stream: there
 * this repeats ctx's scans.) */
static void stream_everything(clr_tuning *t) { t->scan_stream_bytes = 1; }

static void streamed_stores(clr_context *ctx) {
  static const size_t sizes[] = {1, 9, 4097, 100003};
  static const clr_type types[] = {CLR_FLOAT, CLR_INT, CLR_DOUBLE, CLR_ULONG};
  clr_context *nt = make_tuned_context(stream_everything);
  size_t max_n = sizes[COUNT(sizes) - 1];
  void *in = tu_xmalloc(max_n * 8), *work = new_output(CLR_ULONG, max_n);
  /* 64-byte aligned, so that the outputs below start where they say */
  size_t outb_bytes = ((max_n + 4 + GUARD) * 8 + 63) / 64 * 64;
  unsigned char *outb = aligned_alloc(64, outb_bytes);
  if (!outb)
    tu_die("out of memory");
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (size_t ti = 0; ti < COUNT(types); ti++) {
      for (size_t si = 0; si < COUNT(sizes); si++) {
        size_t n = sizes[si], es = esz(types[ti]);
        clr_op op = scan_ops[(k + ti + si) % N_OPS];
        int ex = (int)((k + si) % 2);
        scase c = {scan_kernels[k],      op, types[ti], ex, {0, 0, 0}, NULL,
                   "scan.stream_bytes=1"};
        char desc[320], d2[400];
        describe(&c, n, desc, sizeof desc);
        fill_data(op, types[ti], DATA_RANDOM, in, n, tu_seed(k, ti, si, 77));
        void *want = NULL, *got = NULL;
        if (!scan_check(ctx, &c, in, n, &want, NULL))
          continue;
        if (scan_check(nt, &c, in, n, &got, NULL))
          check_same(&c, desc, "streamed against ctx's stores", types[ti], got,
                     want, n);
        free(got);
        size_t depth = 0;
        memcpy(work, in, n * es);
        memset(at(work, types[ti], n), GUARD_BYTE, GUARD * es);
        snprintf(d2, sizeof d2, "%s in place", desc);
        if (run_host(nt, &c, work, work, n, &depth)) {
          check_same(&c, d2, "streamed in place against ctx's stores",
                     types[ti], work, want, n);
          tu_check(guard_intact(work, n, types[ti]),
                   "%s: elements after n were written", d2);
        }
        /* 0: aligned to a whole vector; 16 bytes in: to half a vector of
         * 32 bytes (stored in halves); 3 elements in: to neither */
        size_t skips[] = {0, 16 / es, 3};
        for (size_t m = 0; m < COUNT(skips); m++) {
          size_t skip = skips[m];
          memset(outb, GUARD_BYTE, (n + 4 + GUARD) * es);
          void *out = at(outb, types[ti], skip);
          snprintf(d2, sizeof d2, "%s, output %zu elements in", desc, skip);
          if (run_host(nt, &c, in, out, n, &depth)) {
            check_same(&c, d2, "streamed against ctx's stores", types[ti], out,
                       want, n);
            tu_check(skip == 0 || (outb[0] == GUARD_BYTE &&
                                   outb[skip * es - 1] == GUARD_BYTE),
                     "%s: elements before out were written", d2);
          }
        }
        free(want);
      }
    }
  }
  free(outb);
  free(work);
  free(in);
  clr_context_release(nt);
}

static void part_inplace(clr_context *ctx) {
  streamed_stores(ctx);
  tu_section("non-temporal stores (scan.stream_bytes=1)");
  clr_context *copy_ctx = make_context(1);
  inplace_host(ctx, "zero-copy context", copy_ctx);
  tu_section("in place host arrays (and against the copy path)");
  inplace_host(copy_ctx, "copy_host_data context", NULL);
  tu_section("in place host arrays, copy_host_data context");
  unaligned_host(ctx, "zero-copy context");
  unaligned_host(copy_ctx, "copy_host_data context");
  tu_section("unaligned host arrays");
  inplace_buffers(ctx);
  tu_section("cl_mem buffers in != out and in == out");
  clr_context_release(copy_ctx);
}

/* ------------------------------------------------------------ carry */

/* A scan of in with carry c, checked as the inclusive scan of [c, in...]
 * shifted by one (see the top of the file). */
static int check_carry(const char *desc, clr_op op, clr_type t, int exclusive,
                       const void *carry, const void *in, const void *out,
                       size_t n, size_t depth) {
  size_t es = esz(t);
  unsigned char *e = tu_xmalloc((n + 1) * es), *g = tu_xmalloc((n + 1) * es);
  size_t m;
  memcpy(e, carry, es);
  memcpy(e + es, in, n * es);
  if (!exclusive) {
    memcpy(g, carry, es);
    memcpy(g + es, out, n * es);
    m = n + 1;
  } else {
    memcpy(g, out, n * es);
    m = n;
  }
  int ok = check_ref(desc, op, t, 0, e, g, m, depth);
  free(e);
  free(g);
  return ok;
}

/* Carry values worth trying for op on t: a random one, the identity (the
 * result must then equal the scan without carry bit for bit) and an
 * extreme one. */
static int carry_values(clr_op op, clr_type t, uint64_t seed, clr_value *v,
                        const char **names) {
  int c = 0;
  v[c] = random_value(op, t, seed);
  names[c++] = "random carry";
  v[c] = clr_identity(op, t);
  names[c++] = "identity carry";
  unsigned char buf[8];
  if (is_fp(t)) {
    switch (op) {
    case CLR_SUM:
      tu_store_f(t, buf, 0, -1.0e6);
      break;
    case CLR_PROD:
      tu_store_f(t, buf, 0, -0.5);
      break;
    case CLR_MIN:
      tu_store_f(t, buf, 0, NAN);
      break;
    default:
      tu_store_f(t, buf, 0, INFINITY);
      break;
    }
  } else {
    switch (op) {
    case CLR_SUM:
      put_bits(t, buf, 0, type_max_bits(t)); /* wraps at once */
      break;
    case CLR_PROD:
      put_bits(t, buf, 0, type_min_bits(t) ? type_min_bits(t) : 2);
      break;
    case CLR_MIN:
      put_bits(t, buf, 0, type_min_bits(t));
      break;
    default:
      put_bits(t, buf, 0, type_max_bits(t));
      break;
    }
  }
  v[c] = clr_value_at(t, buf, 0);
  names[c++] = "extreme carry";
  return c;
}

static void carry_in_scans(clr_context *ctx) {
  static const struct {
    shape sh;
    size_t n;
  } cases[] = {{{0, 0, 0}, 1},    {{0, 0, 0}, 2},    {{64, 1, 0}, 7},
               {{4, 2, 1}, 1000}, {{0, 0, 0}, 4097}, {{64, 8, 0}, 4097}};
  void *in = tu_xmalloc(4097 * 8);
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (sweep_pair p = {0}; next_swept(&p, k);) {
      for (size_t i = 0; i < COUNT(cases); i++) {
        size_t n = cases[i].n;
        clr_value cv[4];
        const char *cn[4];
        int nc = carry_values(p.op, p.type, tu_seed(k, p.o, p.t, i), cv, cn);
        fill_data(p.op, p.type, DATA_RANDOM, in, n, tu_seed(p.o, p.t, i, 3));
        for (int ex = 0; ex < 2; ex++) {
          scase plain = {scan_kernels[k], p.op, p.type,    ex,
                         cases[i].sh,     NULL, "no carry"};
          void *no_carry = NULL;
          if (!scan_check(ctx, &plain, in, n, &no_carry, NULL))
            continue;
          for (int j = 0; j < nc; j++) {
            unsigned char carry[8];
            value_put(carry, 0, &cv[j]);
            scase c = plain;
            c.carry = carry;
            c.label = cn[j];
            char desc[320];
            describe(&c, n, desc, sizeof desc);
            void *out = new_output(p.type, n);
            size_t depth = 0;
            if (run_host(ctx, &c, in, out, n, &depth)) {
              check_carry(desc, p.op, p.type, ex, carry, in, out, n, depth);
              /* Bit for bit, except where the decoupled scan sums
               * floats: which predecessors' values a tile combines
               * depends on timing, so the rounding may differ from run
               * to run (check_carry has bounded the error). */
              int reorders = scan_kernels[k] == CLR_SCAN_DECOUPLED &&
                             (p.type == CLR_FLOAT || p.type == CLR_DOUBLE) &&
                             (p.op == CLR_SUM || p.op == CLR_PROD);
              if (j == 1 && !reorders)
                check_equal(desc, "identity carry against no carry", p.type,
                            out, no_carry, n);
            }
            free(out);
          }
          free(no_carry);
        }
      }
    }
    kernel_section("carry-in", k);
  }
  free(in);
}

/* Scan x in two halves, the second with the first half's last inclusive
 * value as carry_in, and compare with one continuous scan: bit for bit
 * for integers and min / max, within the bound of the combined depth for
 * float sums and products. */
static void carry_halves(clr_context *ctx) {
  static const struct {
    shape sh;
    size_t n;
    size_t splits[4];
  } cases[] = {
      {{4, 2, 1}, 1000, {1, 8, 500, 999}},
      {{0, 0, 0}, 4097, {1, 2048, 4096, 3000}},
      /* four levels of tiles: 4097 -> 257 -> 17 -> 2 -> 1 */
      {{16, 1, 0}, 4097, {16, 256, 2049, 4096}},
  };
  size_t max_n = 4097;
  void *in = tu_xmalloc(max_n * 8);
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (sweep_pair p = {0}; next_swept(&p, k);) {
      size_t es = esz(p.type);
      int exact = !is_fp(p.type) || p.op == CLR_MIN || p.op == CLR_MAX;
      for (size_t i = 0; i < COUNT(cases); i++) {
        size_t n = cases[i].n;
        fill_data(p.op, p.type, DATA_RANDOM, in, n,
                  tu_seed(k, p.o, p.t, i + 40));
        /* the first half's inclusive scans, one per split */
        for (int ex = 0; ex < 2; ex++) {
          scase whole = {scan_kernels[k], p.op, p.type,      ex,
                         cases[i].sh,     NULL, "continuous"};
          void *full = NULL;
          size_t d_full = 0;
          if (!scan_check(ctx, &whole, in, n, &full, &d_full))
            continue;
          for (size_t s = 0; s < 4; s++) {
            size_t h = cases[i].splits[s];
            scase first_inc = whole;
            first_inc.exclusive = 0;
            first_inc.label = "first half, inclusive";
            void *fi = NULL;
            size_t d1 = 0, d2 = 0;
            if (!scan_check(ctx, &first_inc, in, h, &fi, &d1))
              continue;
            unsigned char carry[8];
            memcpy(carry, at(fi, p.type, h - 1), es);
            void *joined = new_output(p.type, n);
            int ok = 1;
            if (ex) {
              scase first_ex = whole;
              first_ex.label = "first half, exclusive";
              void *fe = NULL;
              ok = scan_check(ctx, &first_ex, in, h, &fe, NULL);
              if (ok)
                memcpy(joined, fe, h * es);
              free(fe);
            } else {
              memcpy(joined, fi, h * es);
            }
            scase second = whole;
            second.carry = carry;
            second.label = "second half with the first half's total";
            void *out2 = new_output(p.type, n - h);
            ok = ok &&
                 run_host(ctx, &second, cat(in, p.type, h), out2, n - h, &d2);
            if (ok) {
              memcpy(at(joined, p.type, h), out2, (n - h) * es);
              char desc[320], d3[400];
              describe(&whole, n, desc, sizeof desc);
              snprintf(d3, sizeof d3, "%s split at %zu", desc, h);
              check_ref(d3, p.op, p.type, ex, in, joined, n, d1 + d2);
              if (exact)
                check_same(&whole, d3, "two halves against one scan", p.type,
                           joined, full, n);
            }
            free(out2);
            free(joined);
            free(fi);
          }
          free(full);
        }
      }
    }
    kernel_section("carry halves", k);
  }
  free(in);
}

/* carry_in with clr_scan_buffer, in place and not. */
static void carry_buffers(clr_context *ctx) {
  size_t n = 1000;
  shape sh = {4, 2, 1};
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (sweep_pair p = {0}; next_pair(&p);) {
      size_t bytes = n * esz(p.type);
      void *in = tu_xmalloc(bytes), *got = tu_xmalloc(bytes);
      fill_data(p.op, p.type, DATA_RANDOM, in, n, tu_seed(k, p.o, p.t, 55));
      clr_value cv = random_value(p.op, p.type, tu_seed(k, p.o, p.t, 56));
      unsigned char carry[8];
      value_put(carry, 0, &cv);
      for (int ex = 0; ex < 2; ex++) {
        for (int same = 0; same < 2; same++) {
          scase c = {scan_kernels[k],
                     p.op,
                     p.type,
                     ex,
                     sh,
                     carry,
                     same ? "cl_mem in == out" : "cl_mem in != out"};
          char desc[320];
          describe(&c, n, desc, sizeof desc);
          cl_mem bin = tu_new_buffer(ctx, bytes, in);
          cl_mem bout = same ? bin : tu_new_buffer(ctx, bytes, NULL);
          size_t depth = 0;
          if (scan_buffer_ran(ctx, &c, bin, bout, n, desc, &depth)) {
            tu_read_buffer(ctx, bout, bytes, got);
            check_carry(desc, p.op, p.type, ex, carry, in, got, n, depth);
          }
          if (!same)
            clReleaseMemObject(bout);
          clReleaseMemObject(bin);
        }
      }
      free(in);
      free(got);
    }
  }
  tu_section("carry-in with cl_mem buffers");
}

/* In place with a carry; and a carry that the call must only read. */
static void carry_inplace(clr_context *ctx) {
  size_t n = 4097;
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (size_t t = 0; t < N_TYPES; t++) {
      clr_type type = all_types[t];
      clr_op op = scan_ops[(k + t) % N_OPS];
      size_t es = esz(type);
      void *in = tu_xmalloc(n * es), *work = new_output(type, n);
      fill_data(op, type, DATA_RANDOM, in, n, tu_seed(k, t, 1, 2));
      memcpy(work, in, n * es);
      clr_value cv = random_value(op, type, tu_seed(k, t, 3, 4));
      unsigned char carry[8], carry_copy[8];
      value_put(carry, 0, &cv);
      memcpy(carry_copy, carry, es);
      scase c = {scan_kernels[k],      op, type, 1, {64, 1, 0}, carry,
                 "in place with carry"};
      char desc[320];
      describe(&c, n, desc, sizeof desc);
      size_t depth = 0;
      if (run_host(ctx, &c, work, work, n, &depth))
        check_carry(desc, op, type, 1, carry, in, work, n, depth);
      tu_check(memcmp(carry, carry_copy, es) == 0, "%s: carry_in was modified",
               desc);
      free(in);
      free(work);
    }
  }
  tu_section("carry-in in place");
}

static void part_carry(clr_context *ctx) {
  carry_in_scans(ctx);
  carry_halves(ctx);
  carry_buffers(ctx);
  carry_inplace(ctx);
}

/* ------------------------------------------------------------ adversarial */

/* The sequential scan with clr_combine (each step rounded to the type):
 * exact in any order for the data it is used with here. */
static void sequential_scan(clr_op op, clr_type t, const void *in, void *want,
                            size_t n) {
  clr_value acc = clr_identity(op, t);
  for (size_t i = 0; i < n; i++) {
    acc = clr_combine(op, acc, clr_value_at(t, in, i));
    value_put(want, i, &acc);
  }
}

/* One adversarial data set: the input and, optionally, the inclusive scan
 * expected bit for bit (exclusive: shifted by one, the identity first). */
typedef struct adv {
  char name[96];
  clr_op op;
  clr_type type;
  void *in;
  void *want; /* NULL: only the reference check */
} adv;

static void adv_run(clr_context *ctx, const adv *a, size_t n) {
  static const shape shapes[] = {{0, 0, 0}, {64, 1, 0}, {4, 2, 1}};
  size_t es = esz(a->type);
  void *want_ex = NULL;
  if (a->want) {
    want_ex = tu_xmalloc(n * es);
    clr_value id = clr_identity(a->op, a->type);
    value_put(want_ex, 0, &id);
    memcpy(at(want_ex, a->type, 1), a->want, (n - 1) * es);
  }
  for (size_t k = 0; k < N_KERNELS; k++) {
    for (size_t s = 0; s < COUNT(shapes); s++) {
      for (int ex = 0; ex < 2; ex++) {
        scase c = {scan_kernels[k], a->op, a->type, ex,
                   shapes[s],       NULL,  a->name};
        char desc[320];
        describe(&c, n, desc, sizeof desc);
        size_t depth = 0;
        void *out = new_output(a->type, n);
        if (run_host(ctx, &c, a->in, out, n, &depth)) {
          check_ref(desc, a->op, a->type, ex, a->in, out, n, depth);
          if (a->want)
            check_equal(desc, "expected values", a->type, out,
                        ex ? want_ex : a->want, n);
        }
        free(out);
      }
    }
  }
  free(want_ex);
}

/* (k+1) * x and x^(k+1) modulo 2^bits, in uint64_t arithmetic. */
static uint64_t mul_wrap(uint64_t a, uint64_t b, unsigned bits) {
  uint64_t p = a * b;
  return bits == 32 ? p & 0xffffffffu : p;
}

static void adv_integers(clr_context *ctx, clr_type t, size_t n) {
  adv a;
  size_t es = esz(t);
  unsigned bits = bits_of(t);
  uint64_t mask = bits == 32 ? 0xffffffffu : UINT64_MAX;
  a.type = t;
  a.in = tu_xmalloc(n * es);
  a.want = tu_xmalloc(n * es);

  /* sum of the type's maximum, n times: (i+1) * max wraps */
  a.op = CLR_SUM;
  snprintf(a.name, sizeof a.name, "all equal: %s max, sums wrap",
           clr_type_name(t));
  for (size_t i = 0; i < n; i++) {
    put_bits(t, a.in, i, type_max_bits(t));
    put_bits(t, a.want, i, mul_wrap(type_max_bits(t), i + 1, bits));
  }
  adv_run(ctx, &a, n);

  /* sum of the type's minimum (0 for unsigned: use 2^(bits-1)) */
  {
    uint64_t m =
        is_signed(t) ? type_min_bits(t) & mask : (uint64_t)1 << (bits - 1);
    snprintf(a.name, sizeof a.name, "all equal: 2^%u, sums alternate with 0",
             bits - 1);
    for (size_t i = 0; i < n; i++) {
      put_bits(t, a.in, i, m);
      put_bits(t, a.want, i, i % 2 ? 0 : m);
    }
    adv_run(ctx, &a, n);
  }

  /* alternating signs: +max, -max, ... (unsigned: max, 1) */
  snprintf(a.name, sizeof a.name, "alternating +max / -max");
  for (size_t i = 0; i < n; i++) {
    put_bits(t, a.in, i,
             i % 2 ? (0 - type_max_bits(t)) & mask : type_max_bits(t));
    put_bits(t, a.want, i, i % 2 ? 0 : type_max_bits(t));
  }
  adv_run(ctx, &a, n);

  /* products of 3 (and of -3 alternating): 3^(i+1) wraps */
  a.op = CLR_PROD;
  for (int alt = 0; alt < 2; alt++) {
    snprintf(a.name, sizeof a.name, "%s, products wrap",
             alt ? "alternating 3 / -3" : "all equal: 3");
    uint64_t p = 1;
    for (size_t i = 0; i < n; i++) {
      uint64_t x = alt && i % 2 ? (0 - (uint64_t)3) & mask : 3;
      put_bits(t, a.in, i, x);
      p = mul_wrap(p, x, bits);
      put_bits(t, a.want, i, p);
    }
    adv_run(ctx, &a, n);
  }

  /* products that reach 0: even factors (2^bits divides the product) */
  snprintf(a.name, sizeof a.name, "all equal: 2, products wrap to 0");
  {
    uint64_t p = 1;
    for (size_t i = 0; i < n; i++) {
      put_bits(t, a.in, i, 2);
      p = mul_wrap(p, 2, bits);
      put_bits(t, a.want, i, p);
    }
    if (n > bits) {
      clr_value last = clr_value_at(t, a.want, n - 1);
      tu_check(last.v.ul == 0, "2^%zu wraps to 0 in %u bits", n, bits);
    }
  }
  adv_run(ctx, &a, n);

  /* min / max: the type's extremes, -1, 0, 1 in a cycle, with the extreme
   * first appearing late */
  for (int is_max = 0; is_max < 2; is_max++) {
    a.op = is_max ? CLR_MAX : CLR_MIN;
    uint64_t ext = is_max ? type_max_bits(t) : type_min_bits(t) & mask;
    uint64_t other = is_max ? type_min_bits(t) & mask : type_max_bits(t);
    size_t first = n - n / 3;
    snprintf(a.name, sizeof a.name, "extremes, the %s first at %zu",
             is_max ? "maximum" : "minimum", first);
    static const int64_t cyc[] = {0, -1, 1, 5, -7};
    for (size_t i = 0; i < n; i++) {
      uint64_t x;
      if (i == first || (i > first && i % 5 == 0))
        x = ext;
      else if (i % 7 == 3)
        x = other;
      else
        x = (uint64_t)cyc[i % 5] & mask;
      put_bits(t, a.in, i, x);
    }
    /* the expectation: at and after `first` it is the extreme */
    sequential_scan(a.op, t, a.in, a.want, n);
    {
      clr_value e = clr_value_at(t, a.want, first);
      unsigned char eb[8];
      put_bits(t, eb, 0, ext);
      clr_value ev = clr_value_at(t, eb, 0);
      tu_check(tu_same(&e, &ev),
               "%s: the sequential scan reaches the "
               "extreme at %zu",
               a.name, first);
    }
    adv_run(ctx, &a, n);
  }

  /* all equal, for min and max */
  for (int is_max = 0; is_max < 2; is_max++) {
    a.op = is_max ? CLR_MAX : CLR_MIN;
    snprintf(a.name, sizeof a.name, "all equal: 42");
    for (size_t i = 0; i < n; i++) {
      put_bits(t, a.in, i, 42);
      put_bits(t, a.want, i, 42);
    }
    adv_run(ctx, &a, n);
  }
  free(a.in);
  free(a.want);
}

static void adv_floats(clr_context *ctx, clr_type t, size_t n) {
  adv a;
  size_t es = esz(t);
  double big = t == CLR_FLOAT ? FLT_MAX : DBL_MAX;
  a.type = t;
  a.in = tu_xmalloc(n * es);
  a.want = tu_xmalloc(n * es);

  /* sums exact in any order (small integers; +-(1 + i/1024)) */
  a.op = CLR_SUM;
  snprintf(a.name, sizeof a.name, "all equal: 1.0, exact");
  for (size_t i = 0; i < n; i++) {
    tu_store_f(t, a.in, i, 1.0);
    tu_store_f(t, a.want, i, (double)(i + 1));
  }
  adv_run(ctx, &a, n);
  snprintf(a.name, sizeof a.name, "alternating +-(1 + i/1024), exact");
  for (size_t i = 0; i < n; i++)
    tu_store_f(t, a.in, i, (i % 2 ? -1.0 : 1.0) * (1.0 + (double)i / 1024.0));
  sequential_scan(CLR_SUM, t, a.in, a.want, n);
  adv_run(ctx, &a, n);
  /* all equal 0.1 and alternating large values: the bound */
  void *saved_want = a.want;
  a.want = NULL;
  snprintf(a.name, sizeof a.name, "all equal: 0.1");
  for (size_t i = 0; i < n; i++)
    tu_store_f(t, a.in, i, 0.1);
  adv_run(ctx, &a, n);
  snprintf(a.name, sizeof a.name, "alternating +-1e6 plus small values");
  for (size_t i = 0; i < n; i++)
    tu_store_f(t, a.in, i, (i % 2 ? -1.0e6 : 1.0e6) + (double)(i % 11) * 0.37);
  adv_run(ctx, &a, n);
  a.want = saved_want;

  /* overflow: the largest finite value twice is +inf in any order */
  snprintf(a.name, sizeof a.name, "all equal: the largest finite value");
  for (size_t i = 0; i < n; i++) {
    tu_store_f(t, a.in, i, big);
    tu_store_f(t, a.want, i, i == 0 ? big : INFINITY);
  }
  adv_run(ctx, &a, n);

  /* +inf at n/3, -inf at 2n/3: finite, then +inf, then NaN; and a NaN */
  {
    size_t p = n / 3, m = 2 * n / 3;
    snprintf(a.name, sizeof a.name, "+inf at %zu, -inf at %zu", p, m);
    tu_rng r = {17};
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, a.in, i, (double)((int64_t)tu_below(&r, 17) - 8));
    tu_store_f(t, a.in, p, INFINITY);
    tu_store_f(t, a.in, m, -INFINITY);
    sequential_scan(CLR_SUM, t, a.in, a.want, n);
    clr_value vp = clr_value_at(t, a.want, p), vm = clr_value_at(t, a.want, m);
    tu_check(isinf(fp_of(&vp)) && isnan(fp_of(&vm)),
             "the expected sums are +inf at %zu and NaN at %zu", p, m);
    adv_run(ctx, &a, n);
    snprintf(a.name, sizeof a.name, "NaN at %zu", p);
    tu_store_f(t, a.in, m, 3.0);
    tu_store_f(t, a.in, p, NAN);
    sequential_scan(CLR_SUM, t, a.in, a.want, n);
    adv_run(ctx, &a, n);
  }

  /* products exact in any order: +-1, +-2, +-0.5 */
  a.op = CLR_PROD;
  snprintf(a.name, sizeof a.name, "alternating signs, powers of two, exact");
  for (size_t i = 0; i < n; i++)
    tu_store_f(t, a.in, i,
               (i % 2 ? -1.0 : 1.0) * (i % 3 == 0   ? 2.0
                                       : i % 3 == 1 ? 0.5
                                                    : 1.0));
  sequential_scan(CLR_PROD, t, a.in, a.want, n);
  adv_run(ctx, &a, n);
  snprintf(a.name, sizeof a.name, "all equal: -1, exact");
  for (size_t i = 0; i < n; i++) {
    tu_store_f(t, a.in, i, -1.0);
    tu_store_f(t, a.want, i, i % 2 ? 1.0 : -1.0);
  }
  adv_run(ctx, &a, n);

  /* min / max: NaN propagates, infinities, signed zeros */
  for (int is_max = 0; is_max < 2; is_max++) {
    a.op = is_max ? CLR_MAX : CLR_MIN;
    double inf = is_max ? INFINITY : -INFINITY;
    size_t p = n / 4, q = n / 2;
    /* the infinity at p, the NaN at q */
    snprintf(a.name, sizeof a.name, "%s at %zu, NaN at %zu",
             is_max ? "+inf" : "-inf", p, q);
    tu_rng r = {23};
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, a.in, i, 2000.0 * tu_unit(&r) - 1000.0);
    tu_store_f(t, a.in, p, inf);
    tu_store_f(t, a.in, q, NAN);
    sequential_scan(a.op, t, a.in, a.want, n);
    {
      int ok = 1;
      for (size_t i = 0; i < n; i++) {
        clr_value w = clr_value_at(t, a.want, i);
        double x = fp_of(&w);
        ok &= i < p ? isfinite(x) : i < q ? x == inf : isnan(x);
      }
      tu_check(ok, "%s: expectation finite, then infinite, then NaN", a.name);
    }
    adv_run(ctx, &a, n);
    /* NaN in the first element */
    snprintf(a.name, sizeof a.name, "NaN first");
    tu_store_f(t, a.in, 0, NAN);
    sequential_scan(a.op, t, a.in, a.want, n);
    adv_run(ctx, &a, n);

    /* signed zeros: min turns -0 at p (from +0), max turns +0 at p */
    snprintf(a.name, sizeof a.name, "signed zeros, %s first at %zu",
             is_max ? "+0" : "-0", p);
    double base = is_max ? -0.0 : 0.0, flip = is_max ? 0.0 : -0.0;
    for (size_t i = 0; i < n; i++) {
      int after = i >= p;
      tu_store_f(t, a.in, i, i == p || (after && i % 3 == 0) ? flip : base);
      tu_store_f(t, a.want, i, after ? flip : base);
    }
    adv_run(ctx, &a, n);

    /* all equal */
    snprintf(a.name, sizeof a.name, "all equal: -42.5");
    for (size_t i = 0; i < n; i++) {
      tu_store_f(t, a.in, i, -42.5);
      tu_store_f(t, a.want, i, -42.5);
    }
    adv_run(ctx, &a, n);
  }
  free(a.in);
  free(a.want);
}

static void part_adversarial(clr_context *ctx) {
  static const size_t sizes[] = {7, 4097};
  for (size_t t = 0; t < N_TYPES; t++) {
    for (size_t i = 0; i < COUNT(sizes); i++) {
      if (is_fp(all_types[t]))
        adv_floats(ctx, all_types[t], sizes[i]);
      else
        adv_integers(ctx, all_types[t], sizes[i]);
    }
    char name[64];
    snprintf(name, sizeof name, "adversarial %s", clr_type_name(all_types[t]));
    tu_section(name);
  }
}

/* ------------------------------------------------------------ errors */

static void part_errors(clr_context *ctx) {
  size_t n = 100;
  int32_t in[100], out[100 + GUARD], sentinel[100 + GUARD];
  for (size_t i = 0; i < n; i++)
    in[i] = (int32_t)i - 50;
  memset(sentinel, GUARD_BYTE, sizeof sentinel);
  clr_options opt;
  clr_options_init(&opt);
  char what[160];

  /* and / or: CLR_ERR_UNSUPPORTED for every scan kernel and type, host and
   * buffer, and the output untouched */
  cl_mem bin = tu_new_buffer(ctx, sizeof in, in);
  cl_mem bout = tu_new_buffer(ctx, sizeof sentinel, sentinel);
  for (size_t k = 0; k < N_KERNELS; k++) {
    opt.kernel = scan_kernels[k];
    for (clr_op op = CLR_AND; op <= CLR_OR; op++) {
      for (size_t t = 0; t < N_TYPES; t++) {
        clr_type type = all_types[t];
        snprintf(what, sizeof what, "%s %s of %s",
                 clr_kernel_name(scan_kernels[k]), clr_op_name(op),
                 clr_type_name(type));
        memcpy(out, sentinel, sizeof out);
        clr_status s = clr_scan_host(ctx, &opt, op, type, in, out, 10);
        tu_check(s == CLR_ERR_UNSUPPORTED,
                 "clr_scan_host %s: got %s, want CLR_ERR_UNSUPPORTED", what,
                 clr_status_name(s));
        tu_check(memcmp(out, sentinel, sizeof out) == 0,
                 "clr_scan_host %s: output written on failure", what);
        tu_check(clr_context_error(ctx)[0] != '\0',
                 "clr_scan_host %s: no error detail", what);
        s = clr_scan_buffer(ctx, &opt, op, type, bin, bout, 10);
        tu_check(s == CLR_ERR_UNSUPPORTED,
                 "clr_scan_buffer %s: got %s, want CLR_ERR_UNSUPPORTED", what,
                 clr_status_name(s));
        s = clr_kernel_supports(scan_kernels[k], op, type);
        tu_check(s == CLR_ERR_UNSUPPORTED,
                 "clr_kernel_supports %s: got %s, want CLR_ERR_UNSUPPORTED",
                 what, clr_status_name(s));
        s = clr_prepare(ctx, &opt, op, type);
        tu_check(s == CLR_ERR_UNSUPPORTED,
                 "clr_prepare %s: got %s, want CLR_ERR_UNSUPPORTED", what,
                 clr_status_name(s));
      }
    }
    for (size_t o = 0; o < N_OPS; o++)
      for (size_t t = 0; t < N_TYPES; t++)
        tu_check(clr_kernel_supports(scan_kernels[k], scan_ops[o],
                                     all_types[t]) == CLR_OK,
                 "clr_kernel_supports %s %s %s is CLR_OK",
                 clr_kernel_name(scan_kernels[k]), clr_op_name(scan_ops[o]),
                 clr_type_name(all_types[t]));
  }
  tu_read_buffer(ctx, bout, sizeof out, out);
  tu_check(memcmp(out, sentinel, sizeof out) == 0,
           "the output buffer is untouched after the and/or failures");
  tu_section("errors: and / or are unsupported");

  /* n == 0, NULL pointers, NULL context, bad enums */
  clr_options_init(&opt);
  opt.kernel = CLR_SCAN_BRENT_KUNG;
  memcpy(out, sentinel, sizeof out);
  struct {
    const char *what;
    clr_status s;
  } host_cases[] = {
      {"n == 0", clr_scan_host(ctx, &opt, CLR_SUM, CLR_INT, in, out, 0)},
      {"n == 0, exclusive, opt NULL",
       clr_scan_host(ctx, NULL, CLR_MAX, CLR_INT, in, out, 0)},
      {"in == NULL", clr_scan_host(ctx, &opt, CLR_SUM, CLR_INT, NULL, out, n)},
      {"out == NULL", clr_scan_host(ctx, &opt, CLR_SUM, CLR_INT, in, NULL, n)},
      {"both NULL", clr_scan_host(ctx, &opt, CLR_SUM, CLR_INT, NULL, NULL, n)},
      {"ctx == NULL", clr_scan_host(NULL, &opt, CLR_SUM, CLR_INT, in, out, n)},
      {"op out of range",
       clr_scan_host(ctx, &opt, CLR_OP_COUNT, CLR_INT, in, out, n)},
      {"type out of range",
       clr_scan_host(ctx, &opt, CLR_SUM, CLR_TYPE_COUNT, in, out, n)},
      {"negative op",
       clr_scan_host(ctx, &opt, (clr_op)-1, CLR_INT, in, out, n)},
  };
  for (size_t i = 0; i < COUNT(host_cases); i++)
    tu_check(host_cases[i].s == CLR_ERR_INVALID_ARGUMENT,
             "clr_scan_host %s: got %s, want CLR_ERR_INVALID_ARGUMENT",
             host_cases[i].what, clr_status_name(host_cases[i].s));
  tu_check(memcmp(out, sentinel, sizeof out) == 0,
           "clr_scan_host: output untouched by the invalid calls");

  /* buffers: NULL, n == 0, too small (in, out, both), n exactly fitting */
  cl_mem small = tu_new_buffer(ctx, (n - 1) * sizeof(int32_t), in);
  cl_mem exact = tu_new_buffer(ctx, n * sizeof(int32_t), sentinel);
  cl_mem tiny = tu_new_buffer(ctx, 2, NULL); /* less than one int */
  /* clr_scan_buffer(ctx, &opt, CLR_SUM, type, in, out, n) */
  const struct {
    const char *what;
    clr_context *ctx;
    cl_mem in, out;
    clr_type type;
    size_t n;
  } buf_cases[] = {
      {"n == 0", ctx, bin, bout, CLR_INT, 0},
      {"in == NULL", ctx, NULL, bout, CLR_INT, n},
      {"out == NULL", ctx, bin, NULL, CLR_INT, n},
      {"ctx == NULL", NULL, bin, bout, CLR_INT, n},
      {"in one element too small", ctx, small, bout, CLR_INT, n},
      {"out one element too small", ctx, bin, small, CLR_INT, n},
      {"in place, one element too small", ctx, small, small, CLR_INT, n},
      {"out smaller than one element", ctx, bin, tiny, CLR_INT, 1},
      {"in too small for long (fits as int)", ctx, bin, bout, CLR_LONG, n},
      {"n far beyond the buffers", ctx, bin, bout, CLR_INT, SIZE_MAX / 2},
      {"type out of range", ctx, bin, bout, CLR_TYPE_COUNT, n},
  };
  for (size_t i = 0; i < COUNT(buf_cases); i++) {
    clr_status s =
        clr_scan_buffer(buf_cases[i].ctx, &opt, CLR_SUM, buf_cases[i].type,
                        buf_cases[i].in, buf_cases[i].out, buf_cases[i].n);
    tu_check(s == CLR_ERR_INVALID_ARGUMENT,
             "clr_scan_buffer %s: got %s, want CLR_ERR_INVALID_ARGUMENT",
             buf_cases[i].what, clr_status_name(s));
  }
  tu_read_buffer(ctx, bout, sizeof out, out);
  tu_check(memcmp(out, sentinel, sizeof out) == 0,
           "clr_scan_buffer: the output untouched by the invalid calls");
  /* the small buffer holds the first n - 1 inputs, unchanged */
  {
    int32_t back[100];
    tu_read_buffer(ctx, small, (n - 1) * sizeof(int32_t), back);
    tu_check(memcmp(back, in, (n - 1) * sizeof(int32_t)) == 0,
             "clr_scan_buffer: a too-small in-place buffer is untouched");
  }
  /* a buffer of exactly n elements is enough */
  {
    clr_status s = clr_scan_buffer(ctx, &opt, CLR_SUM, CLR_INT, bin, exact, n);
    int32_t back[100];
    if (tu_check(s == CLR_OK,
                 "clr_scan_buffer with buffers of exactly n: %s: %s",
                 clr_status_name(s), clr_context_error(ctx))) {
      tu_read_buffer(ctx, exact, sizeof back, back);
      check_ref("clr_scan_buffer, buffers of exactly n", CLR_SUM, CLR_INT, 0,
                in, back, n, 0);
    }
  }
  clReleaseMemObject(small);
  clReleaseMemObject(exact);
  clReleaseMemObject(tiny);
  tu_section("errors: n == 0, NULL, small buffers, bad enums");

  /* a work-group size beyond the device's limit */
  {
    clr_options big;
    clr_options_init(&big);
    big.kernel = CLR_SCAN_KOGGE_STONE;
    big.wg_size = (size_t)1 << 30;
    memcpy(out, sentinel, sizeof out);
    clr_status s = clr_scan_host(ctx, &big, CLR_SUM, CLR_INT, in, out, n);
    tu_check(s == CLR_ERR_INVALID_ARGUMENT,
             "wg_size 2^30: got %s, want CLR_ERR_INVALID_ARGUMENT",
             clr_status_name(s));
    tu_check(memcmp(out, sentinel, sizeof out) == 0,
             "wg_size 2^30: output untouched");
  }
  tu_section("errors: work-group size too large");

  /* the context still works after all that; defaults */
  {
    int32_t got[100 + GUARD];
    clr_timing tm = CLR_TIMING_INIT;
    memcpy(got, sentinel, sizeof got);
    clr_status s = clr_scan_host(ctx, NULL, CLR_SUM, CLR_INT, in, got, n);
    if (tu_check(s == CLR_OK, "opt == NULL: %s: %s", clr_status_name(s),
                 clr_context_error(ctx))) {
      check_ref("opt == NULL (inclusive by default)", CLR_SUM, CLR_INT, 0, in,
                got, n, 0);
      tu_check(
          clr_last_timing(ctx, &tm) == CLR_OK && tm.chunks == 1 &&
              tm.n_passes >= 1 && tm.error_depth >= 1,
          "clr_last_timing after a scan: chunks %zu, passes %zu, depth %zu",
          tm.chunks, tm.n_passes, tm.error_depth);
    }
    /* CLR_KERNEL_DEFAULT selects the device's tuned scan (tuning); a
     * reduction kernel, even the coarse one, is refused */
    float fin[1000], fks[1000], fred[1000];
    tu_rng r = {5};
    for (size_t i = 0; i < 1000; i++)
      fin[i] = (float)(2.0 * tu_unit(&r) - 1.0);
    clr_tuning tuning = CLR_TUNING_INIT;
    clr_get_tuning(ctx, &tuning);
    clr_options_init(&opt);
    opt.kernel = tuning.scan_kernel;
    s = clr_scan_host(ctx, &opt, CLR_SUM, CLR_FLOAT, fin, fks, 1000);
    clr_options_init(&opt);
    tu_check(opt.kernel == CLR_KERNEL_DEFAULT,
             "clr_options_init's kernel is CLR_KERNEL_DEFAULT (%d)",
             (int)opt.kernel);
    clr_status s2 =
        clr_scan_host(ctx, &opt, CLR_SUM, CLR_FLOAT, fin, fred, 1000);
    if (tu_check(s == CLR_OK && s2 == CLR_OK,
                 "float sums with the tuned scan named and with "
                 "CLR_KERNEL_DEFAULT: %s, %s",
                 clr_status_name(s), clr_status_name(s2)))
      check_same(&(scase){tuning.scan_kernel,
                          CLR_SUM,
                          CLR_FLOAT,
                          0,
                          {0, 0, 0},
                          NULL,
                          "default"},
                 "CLR_KERNEL_DEFAULT in clr_scan_host",
                 "against the tuned scan kernel named", CLR_FLOAT, fred, fks,
                 1000);
    opt.kernel = CLR_REDUCE_COARSE;
    memcpy(got, sentinel, sizeof got);
    s = clr_scan_host(ctx, &opt, CLR_SUM, CLR_INT, in, got, n);
    tu_check(s == CLR_ERR_INVALID_ARGUMENT &&
                 strstr(clr_context_error(ctx), "CLR_KERNEL_DEFAULT") &&
                 memcmp(got, sentinel, sizeof got) == 0,
             "the coarse reduction kernel in clr_scan_host: %s (%s), output "
             "untouched",
             clr_status_name(s), clr_context_error(ctx));
  }
  tu_section("errors: the context still works; defaults");
  clReleaseMemObject(bin);
  clReleaseMemObject(bout);
}

/* ------------------------------------------------------------ big */

static void never_spin(clr_tuning *t) { t->decoupled_spin = 0; }

static void part_big(clr_context *ctx) {
  size_t n = 3000001;
  static const op_type subset[] = {{CLR_SUM, CLR_FLOAT},  {CLR_SUM, CLR_DOUBLE},
                                   {CLR_SUM, CLR_INT},    {CLR_PROD, CLR_ULONG},
                                   {CLR_MAX, CLR_FLOAT},  {CLR_MIN, CLR_LONG},
                                   {CLR_PROD, CLR_FLOAT}, {CLR_MIN, CLR_UINT}};
  /* (64 x 8: the default's vector width on PoCL, so its programs are the
   * default shape's: the part compiles each kernel once a type.  The
   * decoupled scan's PoCL default is its CPU shape, whose programs 1 x 40
   * shares: 75001 runs chained.) */
  static const shape shapes[] = {{0, 0, 0}, {64, 8, 0}};
  static const shape cpu_shape = {1, 40, 0};
  void *in = tu_xmalloc(n * 8);
  clr_context *copy_ctx = make_context(1),
              *nospin_ctx = make_tuned_context(never_spin);
  for (size_t j = 0; j < COUNT(subset); j++) {
    clr_op op = subset[j].op;
    clr_type type = subset[j].type;
    fill_data(op, type, j % 2 ? DATA_TREND : DATA_RANDOM, in, n,
              tu_seed(j, 3000001, 0, 0));
    for (size_t k = 0; k < N_KERNELS; k++) {
      for (size_t s = 0; s < COUNT(shapes); s++) {
        for (int ex = 0; ex < 2; ex++) {
          int cpu = s == 1 && scan_kernels[k] == CLR_SCAN_DECOUPLED;
          scase c = {scan_kernels[k],
                     op,
                     type,
                     ex,
                     cpu ? cpu_shape : shapes[s],
                     NULL,
                     "big"};
          if (!scan_check(ctx, &c, in, n, NULL, NULL))
            continue;
          if (s == 1) /* 5860 tiles of 512, 12, 1: three levels */
            check_passes(ctx, &c, n);
        }
      }
    }
    /* The CPU shape computing its predecessors' prefixes itself (spin 0:
     * a run never waits) gives the same bits as waiting for them. */
    {
      scase c = {CLR_SCAN_DECOUPLED, op, type, (int)(j % 2), cpu_shape, NULL,
                 "big, CPU shape"};
      scase c0 = c;
      c0.label = "big, CPU shape, decoupled.spin=0";
      void *waited = NULL, *computed = NULL;
      if (scan_check(ctx, &c, in, n, &waited, NULL) &&
          scan_check(nospin_ctx, &c0, in, n, &computed, NULL)) {
        char desc[320];
        describe(&c0, n, desc, sizeof desc);
        check_equal(desc, "spin 0 against the default", type, computed, waited,
                    n);
        /* in place: a late run's fold must not count once that run has
         * begun writing over its input */
        size_t depth = 0;
        void *work = new_output(type, n);
        memcpy(work, in, n * esz(type));
        if (run_host(nospin_ctx, &c0, work, work, n, &depth))
          check_equal(desc, "spin 0 in place against the default", type, work,
                      waited, n);
        free(work);
      }
      free(waited);
      free(computed);
    }
    /* copy path, in place and not */
    scase c = {
        scan_kernels[j % N_KERNELS], op, type, (int)(j % 2), {0, 0, 0}, NULL,
        "big, copy_host_data"};
    void *res = NULL;
    if (scan_check(copy_ctx, &c, in, n, &res, NULL)) {
      size_t depth = 0;
      void *work = new_output(type, n);
      memcpy(work, in, n * esz(type));
      memset(at(work, type, n), GUARD_BYTE, GUARD * esz(type));
      if (run_host(copy_ctx, &c, work, work, n, &depth)) {
        char desc[320];
        describe(&c, n, desc, sizeof desc);
        check_same(&c, desc, "in place against out of place", type, work, res,
                   n);
        tu_check(guard_intact(work, n, type), "%s: elements after n written",
                 desc);
      }
      free(work);
      free(res);
    }
    char name[64];
    snprintf(name, sizeof name, "big %s %s", clr_op_name(op),
             clr_type_name(type));
    tu_section(name);
  }
  clr_context_release(copy_ctx);
  clr_context_release(nospin_ctx);
  free(in);
}

/* ------------------------------------------------------------ main */

static int arg_value(const char *arg, const char *key, const char **val) {
  size_t k = strlen(key);
  if (strncmp(arg, key, k) == 0 && arg[k] == '=') {
    *val = arg + k + 1;
    return 1;
  }
  return 0;
}

/* The parts besides the matrix (which takes --kernel). */
static const struct {
  const char *name;
  void (*run)(clr_context *ctx);
} parts[] = {{"levels", part_levels}, {"inplace", part_inplace},
             {"carry", part_carry},   {"adversarial", part_adversarial},
             {"errors", part_errors}, {"big", part_big}};

int main(int argc, char **argv) {
  const char *part = NULL, *kname = NULL;
  for (int i = 1; i < argc; i++) {
    if (arg_value(argv[i], "--part", &part) ||
        arg_value(argv[i], "--kernel", &kname))
      continue;
    if (strcmp(argv[i], "--tu_verbose") == 0) {
      tu_verbose = 1;
      continue;
    }
    fprintf(stderr, "usage: test_scan --part=matrix|levels|inplace|carry|"
                    "adversarial|errors|big [--kernel=NAME] [--tu_verbose]\n");
    return 2;
  }
  if (!part) {
    fprintf(stderr, "test_scan: --part is required\n");
    return 2;
  }
  clr_context *ctx = make_context(0);
  printf("device: %s (%s), fp64 %s\n", device.device_name, device.platform_name,
         device.has_fp64 ? "yes" : "no");
  if (strcmp(part, "matrix") == 0) {
    clr_kernel k;
    if (!kname || clr_kernel_from_name(kname, &k) != CLR_OK ||
        !clr_kernel_is_scan(k))
      tu_die(
          "--part=matrix needs --kernel=kogge-stone|kogge-stone-db|brent-kung");
    part_matrix(ctx, k);
  } else {
    size_t i = 0;
    while (i < COUNT(parts) && strcmp(part, parts[i].name) != 0)
      i++;
    if (i == COUNT(parts))
      tu_die("unknown part '%s'", part);
    parts[i].run(ctx);
  }
  clr_context_release(ctx);
  printf("test_scan --part=%s%s%s: %zu passed, %zu failed\n", part,
         kname ? " --kernel=" : "", kname ? kname : "", tu_passed, tu_failed);
  return tu_failed == 0 && tu_passed > 0 ? 0 : 1;
}
