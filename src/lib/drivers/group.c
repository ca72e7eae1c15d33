/* Several devices, one reduction or scan (docs/SCALING.md).
 *
 * A group holds one context per device.  A call splits its n elements into
 * contiguous parts, one a device, in proportion to the devices' weights
 * (their measured read bandwidth), runs every part at once (one host
 * thread a device, each on its own context and queue) and combines the
 * parts' results on the host in device order, so the result depends on
 * the split, never on which device finished first:
 *   reductions  each part reduced; the values folded left to right (argmin
 *               and argmax keep the first index: the parts are in index
 *               order, and each part counts its indices from its first
 *               element's, clr_options.index_base); exact sums add their
 *               superaccumulators and round once, so they are the same
 *               bits for every split;
 *   scans       each part but the last reduced to its total; the host
 *               folds the totals into every part's carry-in; each part
 *               scanned with its carry-in (clr_options.carry_in).
 * The split is a function of n and the weights alone: boundaries at
 * multiples of CLR_GROUP_GRAIN elements, weights rounded to quarter steps
 * of a power of two, so two devices measured a few percent apart weigh
 * the same and a floating-point sum does not change from run to run. */
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct clr_group {
  size_t count;
  clr_context *ctx[CLR_GROUP_MAX_DEVICES];
  int owned;  /* the contexts are released with the group */
  int serial; /* run the parts one after another (pocl_before_7) */
  double weight[CLR_GROUP_MAX_DEVICES];
  clr_group_timing timing;
  char error[1024];
};

static clr_status group_fail(clr_group *g, clr_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static clr_status group_fail(clr_group *g, clr_status st, const char *fmt,
                             ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->error, sizeof g->error, fmt, ap);
  va_end(ap);
  return st;
}

/* A part's failure, named by its device. */
static clr_status part_fail(clr_group *g, size_t i, clr_status st) {
  clr_device_desc d;
  if (clr_context_device(g->ctx[i], &d) != CLR_OK)
    d.device_name[0] = '\0';
  return group_fail(g, st, "device %zu (%s): %s", i, d.device_name,
                    clr_context_error(g->ctx[i]));
}

/* PoCL before 7.0 releases the work-group functions it has loaded by a
 * search that can pick another launch shape's entry of the same kernel
 * when several threads run it at once, and aborts the process
 * ("pocl_release_dlhandle_cache: Assertion `found->ref_count > 0'":
 * fixed by pocl commit c9ac4c0c3, "fix dlhandle cache").  Its table is
 * shared by all its devices, so on a group with two such devices the
 * parts run one after another: no loss on PoCL's CPU device listed twice
 * (both use every core), the parts' concurrency lost on sub-devices. */
static int pocl_before_7(const clr_context *ctx) {
  char version[256] = "";
  if (clGetPlatformInfo(ctx->platform, CL_PLATFORM_VERSION, sizeof version,
                        version, NULL) != CL_SUCCESS)
    return 0;
  version[sizeof version - 1] = '\0';
  const char *p = strstr(version, "PoCL ");
  if (!p)
    p = strstr(version, "pocl ");
  return p && atoi(p + 5) < 7;
}

static void choose_serial(clr_group *g) {
  size_t pocl = 0;
  for (size_t i = 0; i < g->count; i++)
    pocl += (size_t)pocl_before_7(g->ctx[i]);
  g->serial = pocl > 1;
}

/* ---- weights and the split */

/* A weight rounded to a quarter step of a power of two, relative to the
 * largest: 1, 0.84, 0.71, 0.59, 0.5, ... (at least 2^-20). */
static void quantise(double *w, size_t count) {
  double top = 0;
  for (size_t i = 0; i < count; i++)
    if (w[i] > top)
      top = w[i];
  for (size_t i = 0; i < count; i++) {
    double q = round(4.0 * log2(w[i] / top)) / 4.0;
    w[i] = exp2(q < -20.0 ? -20.0 : q);
  }
}

/* The streaming read of each device, in GB/s: 64 MiB (or a quarter of one
 * allocation), the median of 5 runs after warm-up. */
static clr_status measure_weights(clr_group *g) {
  clr_device_desc d[CLR_GROUP_MAX_DEVICES];
  for (size_t i = 0; i < g->count; i++) {
    clr_status st = clr_context_device(g->ctx[i], &d[i]);
    if (st != CLR_OK)
      return part_fail(g, i, st);
  }
  for (size_t i = 0; i < g->count; i++) {
    double ms = 0;
    clr_status st;
    size_t bytes = (size_t)64 << 20;
    if (d[i].max_alloc_size / 4 < bytes)
      bytes = (size_t)(d[i].max_alloc_size / 4) & ~(size_t)4095;
    if (bytes < 4096)
      bytes = 4096;
    st = clr_measure_read_bandwidth(g->ctx[i], bytes, 5, &ms);
    if (st != CLR_OK)
      return part_fail(g, i, st);
    g->weight[i] = ms > 0 ? (double)bytes / ms : 1.0;
  }
  /* Devices of one model (name and driver) weigh the same, their
   * measurements' mean: two identical GPUs split evenly whatever the
   * noise of the day (PoCL's CPU device listed twice measured 16% apart
   * on this 2-core machine). */
  double mean[CLR_GROUP_MAX_DEVICES];
  for (size_t i = 0; i < g->count; i++) {
    double sum = 0;
    size_t same = 0;
    for (size_t j = 0; j < g->count; j++)
      if (strcmp(d[i].device_name, d[j].device_name) == 0 &&
          strcmp(d[i].driver_version, d[j].driver_version) == 0) {
        sum += g->weight[j];
        same++;
      }
    mean[i] = sum / (double)same;
  }
  memcpy(g->weight, mean, g->count * sizeof *mean);
  quantise(g->weight, g->count);
  return CLR_OK;
}

CLR_API clr_status clr_group_split(const clr_group *g, size_t n,
                                   size_t *counts) {
  if (!g || !counts)
    return CLR_ERR_INVALID_ARGUMENT;
  double total = 0, upto = 0;
  for (size_t i = 0; i < g->count; i++)
    total += g->weight[i];
  size_t at = 0;
  for (size_t i = 0; i < g->count; i++) {
    upto += g->weight[i];
    size_t end = n;
    if (i + 1 < g->count) {
      double e = floor((double)n * (upto / total) / CLR_GROUP_GRAIN);
      end = e * CLR_GROUP_GRAIN >= (double)n ? n : (size_t)e * CLR_GROUP_GRAIN;
      if (end < at)
        end = at;
    }
    counts[i] = end - at;
    at = end;
  }
  return CLR_OK;
}

CLR_API clr_status clr_group_weights(const clr_group *g, double *weights) {
  if (!g || !weights)
    return CLR_ERR_INVALID_ARGUMENT;
  memcpy(weights, g->weight, g->count * sizeof *weights);
  return CLR_OK;
}

CLR_API clr_status clr_group_set_weights(clr_group *g, const double *weights) {
  if (!g || !weights)
    return CLR_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < g->count; i++)
    if (!(weights[i] > 0) || !isfinite(weights[i]))
      return group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                        "weight %zu is %g: weights are positive and finite", i,
                        weights[i]);
  memcpy(g->weight, weights, g->count * sizeof *weights);
  g->error[0] = '\0';
  return CLR_OK;
}

/* ---- creating a group */

static clr_group *new_group(void) {
  clr_group *g = calloc(1, sizeof *g);
  return g;
}

CLR_API void clr_group_release(clr_group *g) {
  if (!g)
    return;
  if (g->owned)
    for (size_t i = 0; i < g->count; i++)
      clr_context_release(g->ctx[i]);
  free(g);
}

/* The group's platform (clr_platform_choose) and its devices ("all"). */
static clr_status all_devices(const clr_context_config *cfg, unsigned *plat,
                              unsigned *devs, size_t *count, char *detail,
                              size_t detail_size) {
  clr_status st = clr_platform_choose(cfg->platform, plat, detail, detail_size);
  if (st != CLR_OK)
    return st;
  clr_device_desc list[CLR_GROUP_MAX_DEVICES * 2];
  size_t total = 0;
  st = clr_list_devices(list, sizeof list / sizeof list[0], &total);
  if (st != CLR_OK) {
    snprintf(detail, detail_size, "no OpenCL platform found");
    return st;
  }
  if (total > sizeof list / sizeof list[0])
    total = sizeof list / sizeof list[0];
  *count = 0;
  for (size_t i = 0; i < total && *count < CLR_GROUP_MAX_DEVICES; i++)
    if (list[i].platform_index == *plat)
      devs[(*count)++] = list[i].device_index;
  return CLR_OK;
}

/* detail, or scratch when the caller passed none, emptied. */
static char *detail_buffer(char *detail, size_t *size, char *scratch,
                           size_t scratch_size) {
  if (!detail) {
    detail = scratch;
    *size = scratch_size;
  }
  if (*size)
    detail[0] = '\0';
  return detail;
}

CLR_API clr_status clr_group_create(const clr_context_config *cfg,
                                    const char *devices, clr_group **out,
                                    char *detail, size_t detail_size) {
  char scratch[8];
  detail = detail_buffer(detail, &detail_size, scratch, sizeof scratch);
  if (!out || !devices || !*devices) {
    snprintf(detail, detail_size, "no device list (\"all\" or \"0,1\")");
    return CLR_ERR_INVALID_ARGUMENT;
  }
  *out = NULL;
  clr_context_config c;
  clr_status st = clr_config_read(cfg, &c, detail, detail_size);
  if (st != CLR_OK)
    return st;
  /* The selectors, one per device: "all" expanded to platform and device
   * indices, or the list's items as clr_context_config.device takes them. */
  char names[CLR_GROUP_MAX_DEVICES][64], plat_name[16] = "";
  size_t count = 0;
  /* One platform for the whole list, as for "all": a device index means
   * the same platform's device whatever platform comes first. */
  unsigned plat = 0, devs[CLR_GROUP_MAX_DEVICES];
  size_t on_platform = 0;
  st = all_devices(&c, &plat, devs, &on_platform, detail, detail_size);
  if (st != CLR_OK)
    return st;
  snprintf(plat_name, sizeof plat_name, "%u", plat);
  c.platform = plat_name;
  if (clr_contains_nocase(devices, "all") && strlen(devices) == 3) {
    count = on_platform;
    for (size_t i = 0; i < count; i++)
      snprintf(names[i], sizeof names[i], "%u", devs[i]);
  } else {
    const char *p = devices;
    for (;;) {
      size_t len = strcspn(p, ",");
      if (len == 0 || len >= sizeof names[0] ||
          count == CLR_GROUP_MAX_DEVICES) {
        snprintf(detail, detail_size,
                 len == 0 ? "empty device in the list '%s'"
                 : len >= sizeof names[0]
                     ? "a device selector in '%s' is too long"
                     : "more than 64 devices in '%s'",
                 devices);
        return CLR_ERR_INVALID_ARGUMENT;
      }
      memcpy(names[count], p, len);
      names[count++][len] = '\0';
      if (p[len] == '\0')
        break;
      p += len + 1;
    }
  }
  if (count == 0) {
    snprintf(detail, detail_size, "no OpenCL device on platform %s", plat_name);
    return CLR_ERR_NO_DEVICE;
  }
  clr_group *g = new_group();
  if (!g) {
    snprintf(detail, detail_size, "out of host memory");
    return CLR_ERR_OUT_OF_MEMORY;
  }
  g->owned = 1;
  for (size_t i = 0; i < count; i++) {
    char why[512] = "";
    c.device = names[i];
    st = clr_context_create(&c, &g->ctx[i], why, sizeof why);
    if (st != CLR_OK) {
      snprintf(detail, detail_size, "device %zu ('%s'): %s", i, names[i], why);
      clr_group_release(g);
      return st;
    }
    g->count = i + 1;
  }
  choose_serial(g);
  st = measure_weights(g);
  if (st != CLR_OK) {
    snprintf(detail, detail_size, "%s", g->error);
    clr_group_release(g);
    return st;
  }
  *out = g;
  return CLR_OK;
}

CLR_API clr_status clr_group_create_from(clr_context *const *contexts,
                                         size_t count, clr_group **out,
                                         char *detail, size_t detail_size) {
  char scratch[8];
  detail = detail_buffer(detail, &detail_size, scratch, sizeof scratch);
  if (!out || !contexts || count == 0 || count > CLR_GROUP_MAX_DEVICES) {
    snprintf(detail, detail_size,
             "a group takes 1 to %d contexts (given %zu%s)",
             CLR_GROUP_MAX_DEVICES, count, contexts ? "" : ", NULL");
    return CLR_ERR_INVALID_ARGUMENT;
  }
  *out = NULL;
  for (size_t i = 0; i < count; i++)
    for (size_t j = 0; j <= i; j++)
      if (!contexts[i] || (j < i && contexts[j] == contexts[i])) {
        snprintf(detail, detail_size,
                 contexts[i] ? "context %zu appears twice"
                             : "context %zu is "
                               "NULL",
                 i);
        return CLR_ERR_INVALID_ARGUMENT;
      }
  clr_group *g = new_group();
  if (!g) {
    snprintf(detail, detail_size, "out of host memory");
    return CLR_ERR_OUT_OF_MEMORY;
  }
  memcpy(g->ctx, contexts, count * sizeof *contexts);
  g->count = count;
  choose_serial(g);
  clr_status st = measure_weights(g);
  if (st != CLR_OK) {
    snprintf(detail, detail_size, "%s", g->error);
    clr_group_release(g);
    return st;
  }
  *out = g;
  return CLR_OK;
}

CLR_API size_t clr_group_size(const clr_group *g) { return g ? g->count : 0; }

CLR_API clr_context *clr_group_context(const clr_group *g, size_t i) {
  return g && i < g->count ? g->ctx[i] : NULL;
}

CLR_API const char *clr_group_error(const clr_group *g) {
  return g ? g->error : "no group (NULL)";
}

CLR_API clr_status clr_group_last_timing(const clr_group *g,
                                         clr_group_timing *out) {
  if (!g || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  *out = g->timing;
  return CLR_OK;
}

/* ---- running the parts at once */

/* One part of a call: device i, elements [begin, begin + n). */
typedef struct part {
  clr_group *g;
  size_t i, begin, n;
  clr_status (*run)(struct part *);
  const void *call; /* the call's arguments (reduce_call / scan_call) */
  clr_status st;
  clr_value value;
  clr_exact_acc acc;
} part;

static void *part_thread(void *arg) {
  part *p = arg;
  p->st = p->run(p);
  return NULL;
}

/* Which parts run_parts runs: those with elements, or every device's (a
 * call that is not split, such as building the programs). */
typedef enum { WITH_ELEMENTS, EVERY_DEVICE } which_parts;

/* Run the parts (which), device 0's on this thread, the others on threads
 * of their own (in turn, should a thread not start, or on a serial group);
 * the first failure in device order is the call's. */
static clr_status run_parts(clr_group *g, part *parts, which_parts which) {
  pthread_t tid[CLR_GROUP_MAX_DEVICES];
  int started[CLR_GROUP_MAX_DEVICES] = {0}, busy[CLR_GROUP_MAX_DEVICES] = {0};
  for (size_t i = 0; i < g->count; i++)
    busy[i] = which == EVERY_DEVICE || parts[i].n;
  for (size_t i = 1; i < g->count && !g->serial; i++)
    if (busy[i])
      started[i] = pthread_create(&tid[i], NULL, part_thread, &parts[i]) == 0;
  if (busy[0])
    parts[0].st = parts[0].run(&parts[0]);
  for (size_t i = 1; i < g->count; i++) {
    if (started[i])
      pthread_join(tid[i], NULL);
    else if (busy[i])
      parts[i].st = parts[i].run(&parts[i]);
  }
  for (size_t i = 0; i < g->count; i++)
    if (busy[i] && parts[i].st != CLR_OK)
      return part_fail(g, i, parts[i].st);
  return CLR_OK;
}

/* The parts of n elements, split by the weights (counts given: as they
 * are). */
static void make_parts(clr_group *g, size_t n, const size_t *counts,
                       clr_status (*run)(part *), const void *call,
                       part *parts) {
  size_t split[CLR_GROUP_MAX_DEVICES];
  if (!counts) {
    clr_group_split(g, n, split);
    counts = split;
  }
  for (size_t i = 0, at = 0; i < g->count; i++) {
    memset(&parts[i], 0, sizeof parts[i]);
    parts[i].g = g;
    parts[i].i = i;
    parts[i].begin = at;
    parts[i].n = counts[i];
    parts[i].run = run;
    parts[i].call = call;
    at += counts[i];
  }
}

/* The deepest rounding chain of the parts' last calls. */
static size_t deepest(const clr_group *g, const part *parts) {
  size_t depth = 0;
  for (size_t i = 0; i < g->count; i++) {
    clr_timing t = CLR_TIMING_INIT;
    if (parts[i].n && clr_last_timing(g->ctx[i], &t) == CLR_OK &&
        t.error_depth > depth)
      depth = t.error_depth;
  }
  return depth;
}

/* The caller's options read (clr_options_read) into *copy, *opt pointed
 * at it; a refusal is the group's error. */
static clr_status take_options(clr_group *g, const clr_options **opt,
                               clr_options *copy) {
  char why[CLR_DETAIL_SIZE];
  clr_status st = clr_options_read(*opt, copy, why, sizeof why);
  *opt = copy;
  return st == CLR_OK ? CLR_OK : group_fail(g, st, "%s", why);
}

/* ---- reductions */

typedef struct reduce_args {
  const clr_options *opt;
  clr_op op; /* what runs (a mean: its sum; a dot product: CLR_SUM) */
  clr_type type;
  int dot, exact;
  const void *x, *y;     /* host arrays, or */
  const cl_mem *bufs;    /* one buffer a device, */
  const size_t *offsets; /* from these elements (NULL: 0) */
} reduce_args;

static clr_status reduce_part(part *p) {
  const reduce_args *a = p->call;
  clr_context *ctx = p->g->ctx[p->i];
  size_t esize = clr_type_size(a->type);
  clr_options o = *a->opt;
  o.index_base += p->begin;
  if (a->bufs) {
    size_t off = a->offsets ? a->offsets[p->i] : 0;
    if (a->exact)
      return clr_exact_add_buffer(ctx, &o, a->type, a->bufs[p->i], off, p->n,
                                  &p->acc);
    return clr_reduce_buffer(ctx, &o, a->op, a->type, a->bufs[p->i], off, p->n,
                             &p->value);
  }
  const char *x = (const char *)a->x + p->begin * esize;
  if (a->exact)
    return clr_exact_add_host(ctx, &o, a->type, x, p->n, &p->acc);
  if (a->dot)
    return clr_dot_host(ctx, &o, a->type, x,
                        (const char *)a->y + p->begin * esize, p->n, &p->value);
  return clr_reduce_host(ctx, &o, a->op, a->type, x, p->n, &p->value);
}

static clr_status group_reduce(clr_group *g, const clr_options *opt, clr_op op,
                               clr_type type, reduce_args *a, size_t n,
                               const size_t *counts, clr_value *result) {
  clr_options defaults;
  double t0 = clr_now_ms();
  memset(&g->timing, 0, sizeof g->timing);
  g->error[0] = '\0';
  if (!result)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT, "result must not be NULL");
  clr_status st = take_options(g, &opt, &defaults);
  if (st != CLR_OK)
    return st;
  if (n == 0)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT, "n must be at least 1");
  uint64_t count = n; /* a mean's divisor */
  if (clr_op_info(op) && clr_mean_counts(op, type)) {
    /* first the count of numbers (so that the sum's timing stands) */
    clr_options co;
    char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
    clr_value c;
    reduce_args ca = *a;
    ca.dot = 0;
    clr_count_options(opt, &co, expr, sizeof expr);
    st = group_reduce(g, &co, CLR_SUM, type, &ca, n, counts, &c);
    if (st != CLR_OK)
      return st;
    count = c.v.ul;
  }
  a->opt = opt;
  a->type = type;
  a->op = clr_op_info(op) ? clr_op_info(op)->runs : op;
  a->exact = !a->dot && opt->exact && a->op == CLR_SUM &&
             clr_type_is_float(type) && type != CLR_HALF;
  part parts[CLR_GROUP_MAX_DEVICES];
  make_parts(g, n, counts, reduce_part, a, parts);
  for (size_t i = 0; i < g->count; i++)
    if (a->exact)
      clr_exact_acc_init(&parts[i].acc, type);
  st = run_parts(g, parts, WITH_ELEMENTS);
  double t1 = clr_now_ms();
  if (st != CLR_OK)
    return st;
  /* Fold the parts in device order. */
  int have = 0;
  size_t used = 0;
  for (size_t i = 0; i < g->count; i++) {
    if (!parts[i].n)
      continue;
    used++;
    if (a->exact && have)
      clr_exact_acc_merge(&parts[0].acc, &parts[i].acc);
    else if (a->exact)
      parts[0].acc = parts[i].acc;
    else if (have)
      clr_value_combine(a->op, result, &parts[i].value);
    else
      *result = parts[i].value;
    have = 1;
  }
  if (a->exact)
    clr_exact_acc_value(&parts[0].acc, result);
  if (clr_op_flags(op) & CLR_OPF_MEAN)
    clr_opt_sum_to_mean(opt, type, count, result);
  result->op = op; /* the call's (a mean's, not its sum's) */
  g->timing.parts_ms = t1 - t0;
  g->timing.combine_ms = clr_now_ms() - t1;
  g->timing.devices_used = used;
  g->timing.error_depth = deepest(g, parts) + (used - 1);
  g->timing.total_ms = clr_now_ms() - t0;
  return CLR_OK;
}

CLR_API clr_status clr_group_reduce_host(clr_group *g, const clr_options *opt,
                                         clr_op op, clr_type type,
                                         const void *data, size_t n,
                                         clr_value *result) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  if (!data)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT, "data must not be NULL");
  reduce_args a = {.x = data};
  return group_reduce(g, opt, op, type, &a, n, NULL, result);
}

CLR_API clr_status clr_group_dot_host(clr_group *g, const clr_options *opt,
                                      clr_type type, const void *x,
                                      const void *y, size_t n,
                                      clr_value *result) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  if (!x || !y)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT, "x and y must not be NULL");
  reduce_args a = {.x = x, .y = y, .dot = 1};
  return group_reduce(g, opt, CLR_SUM, type, &a, n, NULL, result);
}

/* counts[i] elements of buffer i from offsets[i]: the parts of one array,
 * in device order, n their sum. */
static clr_status check_counts(clr_group *g, const cl_mem *bufs,
                               const size_t *counts, size_t *n) {
  *n = 0;
  if (!bufs || !counts)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                      "buffers and counts must not be NULL");
  for (size_t i = 0; i < g->count; i++) {
    if (counts[i] > SIZE_MAX - *n)
      return group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                        "the counts overflow size_t");
    *n += counts[i];
  }
  return CLR_OK;
}

CLR_API clr_status clr_group_reduce_buffers(clr_group *g,
                                            const clr_options *opt, clr_op op,
                                            clr_type type, const cl_mem *bufs,
                                            const size_t *offsets,
                                            const size_t *counts,
                                            clr_value *result) {
  size_t n;
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = check_counts(g, bufs, counts, &n);
  if (st != CLR_OK)
    return st;
  reduce_args a = {.bufs = bufs, .offsets = offsets};
  return group_reduce(g, opt, op, type, &a, n, counts, result);
}

/* ---- scans */

typedef struct scan_args {
  const clr_options *opt;
  clr_op op;
  clr_type type, out_type;
  const void *in;
  void *out;
  const cl_mem *in_bufs, *out_bufs;
  const size_t *in_offsets, *out_offsets;
  int totals; /* this round reduces (else it scans) */
  clr_value carry[CLR_GROUP_MAX_DEVICES]; /* each part's carry-in */
  int has_carry[CLR_GROUP_MAX_DEVICES];
} scan_args;

/* Round 1: a part's total in the output type (the reduction accumulating
 * in it, so integer sums wrap as the scan's do). */
static clr_status scan_total(part *p, const scan_args *a, clr_context *ctx) {
  clr_options o;
  clr_options_init(&o);
  o.accumulate_in = a->out_type;
  if (a->in_bufs)
    return clr_reduce_buffer(ctx, &o, a->op, a->type, a->in_bufs[p->i],
                             a->in_offsets ? a->in_offsets[p->i] : 0, p->n,
                             &p->value);
  return clr_reduce_host(
      ctx, &o, a->op, a->type,
      (const char *)a->in + p->begin * clr_type_size(a->type), p->n, &p->value);
}

static clr_status scan_part(part *p) {
  const scan_args *a = p->call;
  clr_context *ctx = p->g->ctx[p->i];
  if (a->totals)
    return scan_total(p, a, ctx);
  clr_options o = *a->opt;
  o.carry_in = a->has_carry[p->i] ? (const void *)&a->carry[p->i].v : NULL;
  if (a->in_bufs)
    return clr_scan_buffer_range(
        ctx, &o, a->op, a->type, a->in_bufs[p->i],
        a->in_offsets ? a->in_offsets[p->i] : 0, a->out_bufs[p->i],
        a->out_offsets ? a->out_offsets[p->i] : 0, p->n);
  return clr_scan_host(ctx, &o, a->op, a->type,
                       (const char *)a->in + p->begin * clr_type_size(a->type),
                       (char *)a->out + p->begin * clr_type_size(a->out_type),
                       p->n);
}

static clr_status group_scan(clr_group *g, const clr_options *opt, clr_op op,
                             clr_type type, scan_args *a, size_t n,
                             const size_t *counts) {
  clr_options defaults;
  double t0 = clr_now_ms();
  memset(&g->timing, 0, sizeof g->timing);
  g->error[0] = '\0';
  clr_status st = take_options(g, &opt, &defaults);
  if (st != CLR_OK)
    return st;
  if (n == 0)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT, "n must be at least 1");
  if ((unsigned)type >= CLR_TYPE_COUNT)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT, "unknown type %d",
                      (int)type);
  a->opt = opt;
  a->op = op;
  a->type = type;
  a->out_type = clr_opt_scan_output_type(opt, type);
  part parts[CLR_GROUP_MAX_DEVICES];
  make_parts(g, n, counts, scan_part, a, parts);
  /* Round 1: the totals of every part with a later part after it. */
  size_t last = 0, used = 0;
  for (size_t i = 0; i < g->count; i++)
    if (parts[i].n) {
      last = i;
      used++;
    }
  size_t keep_last = parts[last].n;
  parts[last].n = 0;
  a->totals = 1;
  st = used > 1 ? run_parts(g, parts, WITH_ELEMENTS) : CLR_OK;
  size_t total_depth = st == CLR_OK && used > 1 ? deepest(g, parts) : 0;
  parts[last].n = keep_last;
  if (st != CLR_OK)
    return st;
  double t1 = clr_now_ms();
  /* The carries, folded in device order from the caller's carry-in. */
  clr_value run;
  int have = opt->carry_in != NULL;
  memset(&run, 0, sizeof run);
  run.type = a->out_type;
  if (have)
    memcpy(&run.v, opt->carry_in, clr_type_size(a->out_type));
  for (size_t i = 0; i < g->count; i++) {
    if (!parts[i].n)
      continue;
    a->carry[i] = run;
    a->has_carry[i] = have;
    if (i == last)
      break;
    if (have)
      clr_value_combine(op, &run, &parts[i].value);
    else
      run = parts[i].value;
    have = 1;
  }
  double t2 = clr_now_ms();
  /* Round 2: every part scanned from its carry. */
  a->totals = 0;
  st = run_parts(g, parts, WITH_ELEMENTS);
  if (st != CLR_OK)
    return st;
  double t3 = clr_now_ms();
  g->timing.parts_ms = (t1 - t0) + (t3 - t2);
  g->timing.combine_ms = t2 - t1;
  g->timing.devices_used = used;
  /* A prefix in part k went through the carry's chain (the totals' depth
   * and one combine a part before it) and its own scan's. */
  g->timing.error_depth = total_depth + used + deepest(g, parts);
  g->timing.total_ms = clr_now_ms() - t0;
  return CLR_OK;
}

CLR_API clr_status clr_group_scan_host(clr_group *g, const clr_options *opt,
                                       clr_op op, clr_type type, const void *in,
                                       void *out, size_t n) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  if (!in || !out)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                      "in and out must not be NULL");
  scan_args a = {.in = in, .out = out};
  return group_scan(g, opt, op, type, &a, n, NULL);
}

CLR_API clr_status clr_group_scan_buffers(
    clr_group *g, const clr_options *opt, clr_op op, clr_type type,
    const cl_mem *in, const size_t *in_offsets, const cl_mem *out,
    const size_t *out_offsets, const size_t *counts) {
  size_t n;
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = check_counts(g, in, counts, &n);
  if (st == CLR_OK && !out)
    st = group_fail(g, CLR_ERR_INVALID_ARGUMENT, "out must not be NULL");
  if (st != CLR_OK)
    return st;
  scan_args a = {.in_bufs = in,
                 .out_bufs = out,
                 .in_offsets = in_offsets,
                 .out_offsets = out_offsets};
  return group_scan(g, opt, op, type, &a, n, counts);
}

/* ---- building ahead */

typedef struct prepare_args {
  const clr_options *opt;
  clr_op op;
  clr_type type;
} prepare_args;

static clr_status prepare_part(part *p) {
  const prepare_args *a = p->call;
  return clr_prepare(p->g->ctx[p->i], a->opt, a->op, a->type);
}

CLR_API clr_status clr_group_prepare(clr_group *g, const clr_options *opt,
                                     clr_op op, clr_type type) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  double t0 = clr_now_ms();
  memset(&g->timing, 0, sizeof g->timing);
  g->error[0] = '\0';
  clr_options copy;
  clr_status st = take_options(g, &opt, &copy);
  if (st != CLR_OK)
    return st;
  prepare_args a = {opt, op, type};
  part parts[CLR_GROUP_MAX_DEVICES];
  make_parts(g, 0, NULL, prepare_part, &a, parts); /* no elements to split */
  st = run_parts(g, parts, EVERY_DEVICE);
  g->timing.total_ms = clr_now_ms() - t0;
  return st;
}
