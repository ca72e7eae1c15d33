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

typedef struct group_call group_call;

struct clr_group {
  size_t count;
  clr_context *ctx[CLR_GROUP_MAX_DEVICES];
  int owned;  /* the contexts are released with the group */
  int serial; /* run the parts one after another (pocl_before_7) */
  double weight[CLR_GROUP_MAX_DEVICES];
  clr_group_timing timing;
  char error[1024];
  /* The asynchronous calls (clr_group_*_async): lock guards pending,
   * last_status and error while a call may be pending; done is signalled
   * when the pending call's completion has run (done callback included). */
  pthread_mutex_t lock;
  pthread_cond_t done;
  int pending;            /* an asynchronous call has not completed */
  clr_status last_status; /* the last asynchronous call's */
  /* A queue a device beside its context's (made on first need): an
   * asynchronous scan's carries are written there once the totals are in,
   * while the context's own queue holds the scans that wait for them. */
  cl_command_queue carry_queue[CLR_GROUP_MAX_DEVICES];
};

static clr_status group_fail(clr_group *g, clr_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static clr_status group_fail(clr_group *g, clr_status st, const char *fmt,
                             ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&g->lock);
  vsnprintf(g->error, sizeof g->error, fmt, ap);
  pthread_mutex_unlock(&g->lock);
  va_end(ap);
  return st;
}

/* A call while an asynchronous one is pending is refused: its completion
 * writes the group's result, error and timing. */
static clr_status check_idle(clr_group *g, const char *call) {
  pthread_mutex_lock(&g->lock);
  int pending = g->pending;
  pthread_mutex_unlock(&g->lock);
  return pending ? group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                              "%s: an asynchronous call is pending on this "
                              "group (clr_group_wait for it first)",
                              call)
                 : CLR_OK;
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
  if (check_idle(g, "clr_group_set_weights") != CLR_OK)
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
  if (!g)
    return NULL;
  if (pthread_mutex_init(&g->lock, NULL) != 0) {
    free(g);
    return NULL;
  }
  if (pthread_cond_init(&g->done, NULL) != 0) {
    pthread_mutex_destroy(&g->lock);
    free(g);
    return NULL;
  }
  return g;
}

CLR_API void clr_group_release(clr_group *g) {
  if (!g)
    return;
  clr_group_wait(g); /* a pending call completes first */
  for (size_t i = 0; i < g->count; i++)
    if (g->carry_queue[i])
      clReleaseCommandQueue(g->carry_queue[i]);
  if (g->owned)
    for (size_t i = 0; i < g->count; i++)
      clr_context_release(g->ctx[i]);
  pthread_cond_destroy(&g->done);
  pthread_mutex_destroy(&g->lock);
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
  if (clr_op_is_moments(a->op)) /* a part's M2: its ddof-0 variance */
    o.ddof = 0;
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
  clr_status st = check_idle(g, "clr_group_reduce");
  if (st != CLR_OK)
    return st;
  double t0 = clr_now_ms();
  memset(&g->timing, 0, sizeof g->timing);
  g->error[0] = '\0';
  if (!result)
    return group_fail(g, CLR_ERR_INVALID_ARGUMENT, "result must not be NULL");
  st = take_options(g, &opt, &defaults);
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
  /* Fold the parts in device order (var and std: merged after). */
  int have = 0;
  size_t used = 0;
  clr_value moments[CLR_GROUP_MAX_DEVICES];
  uint64_t moment_counts[CLR_GROUP_MAX_DEVICES];
  for (size_t i = 0; i < g->count; i++) {
    if (!parts[i].n)
      continue;
    if (clr_op_is_moments(op)) {
      moments[used] = parts[i].value;
      moment_counts[used++] = parts[i].n;
      continue;
    }
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
  if (clr_op_is_moments(op) &&
      (st = clr_value_merge_moments(op, moments, moment_counts, used, opt->ddof,
                                    result)) != CLR_OK)
    return group_fail(g, st, "the parts' var / std did not merge");
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
  clr_status st = check_idle(g, "clr_group_scan");
  if (st != CLR_OK)
    return st;
  double t0 = clr_now_ms();
  memset(&g->timing, 0, sizeof g->timing);
  g->error[0] = '\0';
  st = take_options(g, &opt, &defaults);
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
  clr_status st = check_idle(g, "clr_group_prepare");
  if (st != CLR_OK)
    return st;
  double t0 = clr_now_ms();
  memset(&g->timing, 0, sizeof g->timing);
  g->error[0] = '\0';
  clr_options copy;
  st = take_options(g, &opt, &copy);
  if (st != CLR_OK)
    return st;
  prepare_args a = {opt, op, type};
  part parts[CLR_GROUP_MAX_DEVICES];
  make_parts(g, 0, NULL, prepare_part, &a, parts); /* no elements to split */
  st = run_parts(g, parts, EVERY_DEVICE);
  g->timing.total_ms = clr_now_ms() - t0;
  return st;
}

/* ---- requests */

CLR_API clr_status clr_group_run(clr_group *g, const clr_request *r,
                                 clr_value *result) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = check_idle(g, "clr_group_run");
  if (st != CLR_OK)
    return st;
  /* The request's checks are clr_run's (request.c), their detail recorded
   * on device 0's context, then the group's. */
  clr_request q;
  int host = 0;
  st = clr_request_read_for_group(g->ctx[0], r, result, &q, &host);
  if (st != CLR_OK)
    return group_fail(g, st, "%s", clr_context_error(g->ctx[0]));
  const char *kind = clr_request_kind_name(q.kind);
  if (q.kind != CLR_REQ_REDUCE && q.kind != CLR_REQ_DOT &&
      q.kind != CLR_REQ_SCAN)
    return group_fail(g, CLR_ERR_UNSUPPORTED,
                      "clr_group_run takes reduce, dot and scan requests, "
                      "not a %s request",
                      kind);
  if (!host)
    return group_fail(g, CLR_ERR_UNSUPPORTED,
                      "clr_group_run takes host arrays: a group's buffers "
                      "are one a device (a %s request names one), so use "
                      "clr_group_%s_buffers",
                      kind, q.kind == CLR_REQ_SCAN ? "scan" : "reduce");
  switch (q.kind) {
  case CLR_REQ_REDUCE:
    return clr_group_reduce_host(g, q.options, q.op, q.type, q.input.host, q.n,
                                 result);
  case CLR_REQ_DOT:
    return clr_group_dot_host(g, q.options, q.type, q.input.host, q.input2.host,
                              q.n, result);
  default:
    return clr_group_scan_host(g, q.options, q.op, q.type, q.input.host,
                               (void *)q.output.host, q.n);
  }
}

/* ---- asynchronous calls
 *
 * Everything is enqueued before the call returns, each device's part on
 * its context's queue; nothing of the call touches a context after that.
 * A reduction's parts are each reduced into a small buffer of the group's
 * (clr_reduce_buffer_async) and read back without blocking; the reads'
 * event callbacks (OpenCL's threads) count down, and the last folds the
 * values in device order, as the blocking call does.  A scan's parts but
 * the last are reduced to their totals and read back the same way; every
 * part after the first is scanned from a carry buffer whose copy waits
 * for a user event.  When the last total is in, its callback folds the
 * carries, writes each into its buffer on the group's carry queue of the
 * device (the context's own holds the scan that waits) and completes the
 * device's user event once that write is done.  The callback that sees
 * the last event complete finishes the call: it writes the result,
 * releases the call's objects, calls done, and wakes clr_group_wait. */

#define RESULT_MAX 64 /* clr_result_bytes at most (a record: 32) */

typedef struct async_part {
  group_call *call;
  size_t i, n, begin;
  cl_mem res[2];    /* the part's value or total, [1] a nanmean's count */
  cl_event read[2]; /* their reads into host[] */
  unsigned char host[2][RESULT_MAX];
  cl_mem carry;   /* a scan's gated part: its carry-in */
  cl_event gate;  /* a user event the carry's copy waits for */
  int gate_given; /* carry_written completes and releases gate */
  unsigned char carry_host[16];
  cl_event scan; /* the part's scan */
  int enqueued;  /* something of the part is on its queue */
} async_part;

struct group_call {
  clr_group *g;
  int scan, counts; /* a scan; a nanmean counting its numbers */
  clr_op op, runs;
  clr_type type, rtype; /* rtype: a part's value (a scan: its total) */
  clr_options opt;
  uint64_t n;
  clr_value *result;
  clr_group_done_fn done;
  void *user;
  size_t left;        /* callbacks to come, + 1 while the call is set up */
  size_t totals_left; /* a scan's total reads to come */
  clr_status st;      /* the first failure (lowest device) */
  size_t failed;
  char why[CLR_DETAIL_SIZE];
  int have_carry_in;
  clr_scalar carry_in;
  double t0;
  size_t used;
  async_part part[CLR_GROUP_MAX_DEVICES];
};

static void call_fail(group_call *c, size_t i, clr_status st, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));
static void call_fail(group_call *c, size_t i, clr_status st, const char *fmt,
                      ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&c->g->lock);
  if (c->st == CLR_OK || i < c->failed) {
    c->st = st;
    c->failed = i;
    int k = snprintf(c->why, sizeof c->why, "device %zu: ", i);
    vsnprintf(c->why + k, sizeof c->why - (size_t)k, fmt, ap);
  }
  pthread_mutex_unlock(&c->g->lock);
  va_end(ap);
}

static void release_part(async_part *p) {
  for (int k = 0; k < 2; k++) {
    if (p->read[k])
      clReleaseEvent(p->read[k]);
    if (p->res[k])
      clReleaseMemObject(p->res[k]);
  }
  if (p->scan)
    clReleaseEvent(p->scan);
  if (p->carry)
    clReleaseMemObject(p->carry);
  if (p->gate && !p->gate_given)
    clReleaseEvent(p->gate);
  memset(p->read, 0, sizeof p->read);
  memset(p->res, 0, sizeof p->res);
  p->scan = p->gate = NULL;
  p->carry = NULL;
}

/* The call is over: its result, its objects released, done called, and
 * then the group idle (clr_group_wait returns). */
static void finish(group_call *c) {
  clr_group *g = c->g;
  double t1 = clr_now_ms();
  if (c->st == CLR_OK && !c->scan) {
    clr_value v;
    uint64_t count = c->n;
    int have = 0;
    memset(&v, 0, sizeof v);
    if (c->counts)
      count = 0;
    /* var and std: the parts' values (ddof 0) and counts, merged after */
    clr_value moments[CLR_GROUP_MAX_DEVICES];
    uint64_t moment_counts[CLR_GROUP_MAX_DEVICES];
    size_t k = 0;
    for (size_t i = 0; i < g->count; i++) {
      async_part *p = &c->part[i];
      if (!p->n)
        continue;
      clr_value part = clr_result_at(c->runs, c->rtype, p->host[0], 0);
      if (clr_op_is_moments(c->op)) {
        moments[k] = part;
        moment_counts[k++] = p->n;
        continue;
      }
      if (have)
        clr_value_combine(c->runs, &v, &part);
      else
        v = part;
      have = 1;
      if (c->counts)
        count += clr_result_at(CLR_SUM, CLR_ULONG, p->host[1], 0).v.ul;
    }
    if (clr_op_flags(c->op) & CLR_OPF_MEAN)
      clr_opt_sum_to_mean(&c->opt, c->type, count, &v);
    if (clr_op_is_moments(c->op) && k)
      c->st = clr_value_merge_moments(c->op, moments, moment_counts, k,
                                      c->opt.ddof, &v);
    v.op = c->op;
    *c->result = v;
  }
  for (size_t i = 0; i < g->count; i++)
    release_part(&c->part[i]);
  clr_status st = c->st;
  clr_group_done_fn done = c->done;
  void *user = c->user;
  pthread_mutex_lock(&g->lock);
  g->last_status = st;
  if (st != CLR_OK)
    snprintf(g->error, sizeof g->error, "%s", c->why);
  memset(&g->timing, 0, sizeof g->timing);
  g->timing.total_ms = clr_now_ms() - c->t0;
  g->timing.parts_ms = t1 - c->t0;
  g->timing.combine_ms = clr_now_ms() - t1;
  g->timing.devices_used = c->used;
  pthread_mutex_unlock(&g->lock);
  free(c);
  if (done)
    done(g, st, user);
  pthread_mutex_lock(&g->lock);
  g->pending = 0;
  pthread_cond_broadcast(&g->done);
  pthread_mutex_unlock(&g->lock);
}

/* One of the call's callbacks (or the set-up) is over: 1 when it was the
 * last, whose caller then finishes the call. */
static int count_down(group_call *c, int total, int *totals_in) {
  pthread_mutex_lock(&c->g->lock);
  c->left--;
  if (total)
    c->totals_left--;
  *totals_in = total && c->totals_left == 0;
  int last = c->left == 0;
  pthread_mutex_unlock(&c->g->lock);
  return last;
}

static void CL_CALLBACK carry_written(cl_event ev, cl_int status, void *arg) {
  async_part *p = arg;
  cl_event gate = p->gate;
  if (status < 0)
    call_fail(p->call, p->i, CLR_ERR_OPENCL,
              "writing its scan's carry-in failed: %s (%d)",
              clr_cl_error_name(status), (int)status);
  clReleaseEvent(ev);
  /* The last touch of the call: the scan this releases may finish it. */
  clSetUserEventStatus(gate, CL_COMPLETE);
  clReleaseEvent(gate);
}

/* Every total is in (a scan): each gated part's carry folded in device
 * order from the caller's carry-in, as group_scan does, and written. */
static void write_carries(group_call *c) {
  clr_group *g = c->g;
  clr_value run;
  int have = c->have_carry_in;
  memset(&run, 0, sizeof run);
  run.type = c->rtype;
  run.v = c->carry_in;
  size_t osize = clr_type_size(c->rtype);
  for (size_t i = 0; i < g->count; i++) {
    async_part *p = &c->part[i];
    if (!p->n)
      continue;
    if (p->gate) {
      memcpy(p->carry_host, &run.v, osize);
      cl_event w = NULL;
      cl_int err = clEnqueueWriteBuffer(g->carry_queue[i], p->carry, CL_FALSE,
                                        0, osize, p->carry_host, 0, NULL, &w);
      if (err == CL_SUCCESS)
        err = clFlush(g->carry_queue[i]);
      if (err == CL_SUCCESS) {
        p->gate_given = 1;
        err = clSetEventCallback(w, CL_COMPLETE, carry_written, p);
        if (err != CL_SUCCESS)
          p->gate_given = 0;
      }
      if (err != CL_SUCCESS) {
        call_fail(c, i, clr_status_from_cl(err),
                  "enqueueing its scan's carry-in failed: %s (%d)",
                  clr_cl_error_name(err), (int)err);
        if (w)
          clReleaseEvent(w);
        /* The call has failed; its queue drains (the scan's output is
         * unspecified). */
        clSetUserEventStatus(p->gate, CL_COMPLETE);
      }
    }
    if (!p->res[0])
      break; /* the last part: no total */
    clr_value total = clr_result_at(c->op, c->rtype, p->host[0], 0);
    if (have)
      clr_value_combine(c->op, &run, &total);
    else
      run = total;
    have = 1;
  }
}

static void CL_CALLBACK read_done(cl_event ev, cl_int status, void *arg) {
  async_part *p = arg;
  group_call *c = p->call;
  (void)ev;
  if (status < 0)
    call_fail(c, p->i, CLR_ERR_OPENCL,
              "its %s or reading it back failed: %s (%d)",
              c->scan ? "total" : "reduction", clr_cl_error_name(status),
              (int)status);
  int totals_in = 0;
  int last = count_down(c, c->scan, &totals_in);
  if (totals_in)
    write_carries(c);
  if (last)
    finish(c);
}

static void CL_CALLBACK scan_done(cl_event ev, cl_int status, void *arg) {
  async_part *p = arg;
  group_call *c = p->call;
  int totals_in;
  (void)ev;
  if (status < 0)
    call_fail(c, p->i, CLR_ERR_OPENCL, "its scan failed: %s (%d)",
              clr_cl_error_name(status), (int)status);
  if (count_down(c, 0, &totals_in))
    finish(c);
}

/* The call made pending, or refused: one at a time. */
static clr_status begin_async(clr_group *g, const char *call) {
  pthread_mutex_lock(&g->lock);
  int pending = g->pending;
  if (!pending) {
    g->pending = 1;
    g->error[0] = '\0';
    memset(&g->timing, 0, sizeof g->timing);
  }
  pthread_mutex_unlock(&g->lock);
  return pending ? group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                              "%s: an asynchronous call is pending on this "
                              "group (clr_group_wait for it first)",
                              call)
                 : CLR_OK;
}

/* A refusal or failure before the call was under way: whatever it
 * enqueued finished (its gates opened first), its objects released, the
 * group idle; st returned, done never called. */
static clr_status abandon(group_call *c, clr_status st) {
  clr_group *g = c->g;
  for (size_t i = 0; i < g->count; i++)
    if (c->part[i].gate)
      clSetUserEventStatus(c->part[i].gate, CL_COMPLETE);
  for (size_t i = 0; i < g->count; i++) {
    if (c->part[i].enqueued)
      clFinish(clr_queue(g->ctx[i]));
    if (g->carry_queue[i])
      clFinish(g->carry_queue[i]);
    release_part(&c->part[i]);
  }
  free(c);
  pthread_mutex_lock(&g->lock);
  g->pending = 0;
  g->last_status = st;
  pthread_cond_broadcast(&g->done);
  pthread_mutex_unlock(&g->lock);
  return st;
}

/* The call's checks shared by both forms: the wait lists, the counts and
 * the options; a new call (pending) on success.  A refusal leaves the
 * group idle. */
static clr_status new_call(clr_group *g, const char *name, const cl_mem *bufs,
                           const size_t *counts, const cl_uint *num_events,
                           const cl_event *const *wait_lists,
                           const clr_options *opt, clr_group_done_fn done,
                           void *user, group_call **out) {
  size_t n = 0;
  *out = NULL;
  clr_status st = begin_async(g, name);
  if (st != CLR_OK)
    return st;
  group_call *c = calloc(1, sizeof *c);
  if (!c) {
    group_fail(g, CLR_ERR_OUT_OF_MEMORY, "%s: out of host memory", name);
    pthread_mutex_lock(&g->lock);
    g->pending = 0;
    pthread_mutex_unlock(&g->lock);
    return CLR_ERR_OUT_OF_MEMORY;
  }
  c->g = g;
  c->done = done;
  c->user = user;
  c->t0 = clr_now_ms();
  st = check_counts(g, bufs, counts, &n);
  if (st == CLR_OK && n == 0)
    st = group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                    "the counts add up to 0: n must be at least 1");
  for (size_t i = 0; st == CLR_OK && i < g->count; i++)
    if (num_events && num_events[i] && (!wait_lists || !wait_lists[i]))
      st = group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                      "device %zu: %u events to wait for, but no wait list", i,
                      (unsigned)num_events[i]);
  if (st == CLR_OK) {
    const clr_options *o = opt;
    st = take_options(g, &o, &c->opt);
  }
  if (st != CLR_OK)
    return abandon(c, st);
  c->n = n;
  for (size_t i = 0, at = 0; i < g->count; i++) {
    c->part[i].call = c;
    c->part[i].i = i;
    c->part[i].n = counts[i];
    c->part[i].begin = at;
    at += counts[i];
    c->used += counts[i] != 0;
  }
  *out = c;
  return CLR_OK;
}

/* Device i's wait list. */
static cl_uint events_of(const cl_uint *num_events,
                         const cl_event *const *wait_lists, size_t i,
                         const cl_event **list) {
  *list = num_events && num_events[i] ? wait_lists[i] : NULL;
  return num_events ? num_events[i] : 0;
}

/* A part with no elements: its event a marker after its wait list. */
static clr_status empty_part(group_call *c, size_t i, cl_uint nev,
                             const cl_event *wl, cl_event *events) {
  if (!events)
    return CLR_OK;
  cl_int err =
      clEnqueueMarkerWithWaitList(clr_queue(c->g->ctx[i]), nev, wl, &events[i]);
  c->part[i].enqueued = 1;
  if (err != CL_SUCCESS)
    return group_fail(c->g, clr_status_from_cl(err),
                      "device %zu: clEnqueueMarkerWithWaitList failed: %s (%d)",
                      i, clr_cl_error_name(err), (int)err);
  return CLR_OK;
}

/* A small buffer of device i's context for a part's value, read back into
 * host once after (the in-order queue orders it). */
static clr_status result_buffer(group_call *c, size_t i, size_t bytes,
                                cl_mem *mem) {
  cl_int err;
  *mem = clCreateBuffer(c->g->ctx[i]->cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (err != CL_SUCCESS)
    return group_fail(c->g, clr_status_from_cl(err),
                      "device %zu: clCreateBuffer of its result failed: %s "
                      "(%d)",
                      i, clr_cl_error_name(err), (int)err);
  return CLR_OK;
}

static clr_status read_back(group_call *c, size_t i, cl_mem mem, size_t bytes,
                            void *host, cl_event *ev) {
  cl_int err = clEnqueueReadBuffer(clr_queue(c->g->ctx[i]), mem, CL_FALSE, 0,
                                   bytes, host, 0, NULL, ev);
  if (err == CL_SUCCESS)
    err = clFlush(clr_queue(c->g->ctx[i]));
  if (err != CL_SUCCESS)
    return group_fail(c->g, clr_status_from_cl(err),
                      "device %zu: reading its result back failed: %s (%d)", i,
                      clr_cl_error_name(err), (int)err);
  return CLR_OK;
}

/* Every callback set (the set-up's count held), events[] retained for the
 * caller; then the set-up's count dropped: the call is under way. */
static clr_status start_call(group_call *c, cl_event *events) {
  clr_group *g = c->g;
  size_t callbacks = 0;
  for (size_t i = 0; i < g->count; i++) {
    async_part *p = &c->part[i];
    callbacks +=
        (p->read[0] != NULL) + (p->read[1] != NULL) + (p->scan != NULL);
    c->totals_left += c->scan && p->read[0];
  }
  c->left = callbacks + 1;
  for (size_t i = 0; i < g->count; i++) {
    async_part *p = &c->part[i];
    cl_event mine = c->scan ? p->scan : p->read[0];
    if (events && p->n) {
      clRetainEvent(mine);
      events[i] = mine;
    }
  }
  /* From here the callbacks may run (and the call finish) at any time. */
  int totals_in = 0;
  for (size_t i = 0; i < g->count; i++) {
    async_part *p = &c->part[i];
    struct {
      cl_event ev;
      void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    } cb[3] = {
        {p->read[1], read_done}, {p->read[0], read_done}, {p->scan, scan_done}};
    for (int k = 0; k < 3; k++) {
      if (!cb[k].ev)
        continue;
      cl_int err = clSetEventCallback(cb[k].ev, CL_COMPLETE, cb[k].fn, p);
      if (err == CL_SUCCESS)
        continue;
      /* No callback to come: wait for the event here, and count it. */
      call_fail(c, i, clr_status_from_cl(err),
                "clSetEventCallback failed: %s (%d)", clr_cl_error_name(err),
                (int)err);
      int is_total = c->scan && cb[k].fn == read_done;
      clWaitForEvents(1, &cb[k].ev); /* the caller's thread: may block */
      count_down(c, is_total, &totals_in);
      if (totals_in)
        write_carries(c);
    }
  }
  int last = count_down(c, 0, &totals_in);
  if (last)
    finish(c);
  return CLR_OK;
}

CLR_API clr_status clr_group_reduce_buffers_async(
    clr_group *g, const clr_options *opt, clr_op op, clr_type type,
    const cl_mem *bufs, const size_t *offsets, const size_t *counts,
    const cl_uint *num_events, const cl_event *const *wait_lists,
    cl_event *events, clr_value *result, clr_group_done_fn done, void *user) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; events && i < g->count; i++)
    events[i] = NULL;
  group_call *c;
  clr_status st = new_call(g, "clr_group_reduce_buffers_async", bufs, counts,
                           num_events, wait_lists, opt, done, user, &c);
  if (st != CLR_OK)
    return st;
  opt = &c->opt;
  if (!result)
    return abandon(
        c, group_fail(g, CLR_ERR_INVALID_ARGUMENT, "result must not be NULL"));
  if (!clr_op_info(op) || !clr_type_info(type))
    return abandon(c, group_fail(g, CLR_ERR_INVALID_ARGUMENT,
                                 "unknown operation %d or type %d", (int)op,
                                 (int)type));
  c->result = result;
  c->op = op;
  c->type = type;
  c->runs = clr_op_info(op)->runs;
  c->counts = clr_mean_counts(op, type);
  if (opt->exact && c->runs == CLR_SUM && clr_type_is_float(type))
    return abandon(c, group_fail(g, CLR_ERR_UNSUPPORTED,
                                 "an exact sum is rounded on the host from "
                                 "every part's superaccumulator: use "
                                 "clr_group_reduce_buffers"));
  c->rtype = clr_opt_result_type(opt, c->runs, type);
  size_t bytes = clr_opt_result_bytes(opt, c->runs, type);
  for (size_t i = 0; st == CLR_OK && i < g->count; i++) {
    async_part *p = &c->part[i];
    const cl_event *wl;
    cl_uint nev = events_of(num_events, wait_lists, i, &wl);
    if (!p->n) {
      st = empty_part(c, i, nev, wl, events);
      continue;
    }
    clr_context *ctx = g->ctx[i];
    size_t off = offsets ? offsets[i] : 0;
    clr_options o = *opt;
    o.index_base += p->begin;
    if (clr_op_is_moments(op)) /* a part's M2: its ddof-0 variance */
      o.ddof = 0;
    if (c->counts) { /* a nanmean: first the count of numbers */
      clr_options co;
      char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
      clr_count_options(&o, &co, expr, sizeof expr);
      size_t cbytes = clr_opt_result_bytes(&co, CLR_SUM, type);
      st = result_buffer(c, i, cbytes, &p->res[1]);
      if (st == CLR_OK) {
        st = clr_reduce_buffer_async(ctx, &co, CLR_SUM, type, bufs[i], off,
                                     p->n, p->res[1], 0, nev, wl, NULL);
        p->enqueued = 1;
        if (st != CLR_OK)
          st = part_fail(g, i, st);
      }
      if (st == CLR_OK)
        st = read_back(c, i, p->res[1], cbytes, p->host[1], &p->read[1]);
    }
    if (st == CLR_OK)
      st = result_buffer(c, i, bytes, &p->res[0]);
    if (st == CLR_OK) {
      st = clr_reduce_buffer_async(ctx, &o, c->runs, type, bufs[i], off, p->n,
                                   p->res[0], 0, nev, wl, NULL);
      p->enqueued = 1;
      if (st != CLR_OK)
        st = part_fail(g, i, st);
    }
    if (st == CLR_OK)
      st = read_back(c, i, p->res[0], bytes, p->host[0], &p->read[0]);
  }
  if (st != CLR_OK) {
    for (size_t i = 0; events && i < g->count; i++)
      if (events[i]) {
        clReleaseEvent(events[i]);
        events[i] = NULL;
      }
    return abandon(c, st);
  }
  return start_call(c, events);
}

/* Device i's carry queue, made on first need. */
static clr_status carry_queue(clr_group *g, size_t i) {
  if (g->carry_queue[i])
    return CLR_OK;
  cl_int err;
  g->carry_queue[i] =
      clCreateCommandQueue(g->ctx[i]->cl, g->ctx[i]->device, 0, &err);
  if (err != CL_SUCCESS) {
    g->carry_queue[i] = NULL;
    return group_fail(g, clr_status_from_cl(err),
                      "device %zu: clCreateCommandQueue (its carry queue) "
                      "failed: %s (%d)",
                      i, clr_cl_error_name(err), (int)err);
  }
  return CLR_OK;
}

CLR_API clr_status clr_group_scan_buffers_async(
    clr_group *g, const clr_options *opt, clr_op op, clr_type type,
    const cl_mem *in, const size_t *in_offsets, const cl_mem *out,
    const size_t *out_offsets, const size_t *counts, const cl_uint *num_events,
    const cl_event *const *wait_lists, cl_event *events, clr_group_done_fn done,
    void *user) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; events && i < g->count; i++)
    events[i] = NULL;
  group_call *c;
  clr_status st = new_call(g, "clr_group_scan_buffers_async", in, counts,
                           num_events, wait_lists, opt, done, user, &c);
  if (st != CLR_OK)
    return st;
  opt = &c->opt;
  if (!out)
    return abandon(
        c, group_fail(g, CLR_ERR_INVALID_ARGUMENT, "out must not be NULL"));
  if ((unsigned)type >= CLR_TYPE_COUNT)
    return abandon(c, group_fail(g, CLR_ERR_INVALID_ARGUMENT, "unknown type %d",
                                 (int)type));
  c->scan = 1;
  c->op = c->runs = op;
  c->type = type;
  c->rtype = clr_opt_scan_output_type(opt, type);
  size_t osize = clr_type_size(c->rtype);
  if (opt->carry_in) {
    c->have_carry_in = 1;
    memcpy(&c->carry_in, opt->carry_in, osize);
  }
  /* The totals: the reduction accumulating in the output type, so
   * integer sums wrap as the scan's do (group_scan's round 1). */
  clr_options to;
  clr_options_init(&to);
  to.accumulate_in = c->rtype;
  size_t tbytes = clr_opt_result_bytes(&to, op, type);
  size_t first = g->count, last = 0;
  for (size_t i = 0; i < g->count; i++)
    if (c->part[i].n) {
      first = first < i ? first : i;
      last = i;
    }
  cl_event *lists = NULL;
  for (size_t i = 0; st == CLR_OK && i < g->count; i++) {
    async_part *p = &c->part[i];
    const cl_event *wl;
    cl_uint nev = events_of(num_events, wait_lists, i, &wl);
    if (!p->n) {
      st = empty_part(c, i, nev, wl, events);
      continue;
    }
    clr_context *ctx = g->ctx[i];
    cl_mem src = in[i], dst = out[i];
    size_t ioff = in_offsets ? in_offsets[i] : 0;
    size_t ooff = out_offsets ? out_offsets[i] : 0;
    if (i != last) { /* round 1: the part's total, read back */
      st = result_buffer(c, i, tbytes, &p->res[0]);
      if (st == CLR_OK) {
        st = clr_reduce_buffer_async(ctx, &to, op, type, src, ioff, p->n,
                                     p->res[0], 0, nev, wl, NULL);
        p->enqueued = 1;
        if (st != CLR_OK)
          st = part_fail(g, i, st);
      }
      if (st == CLR_OK)
        st = read_back(c, i, p->res[0], tbytes, p->host[0], &p->read[0]);
      nev = 0; /* the queue is in order: round 2 comes after round 1 */
      wl = NULL;
    }
    if (st != CLR_OK)
      break;
    /* round 2: the scan, from its carry */
    clr_options o = *opt;
    o.carry_in = i == first ? opt->carry_in : NULL;
    if (i == first) {
      st = clr_scan_buffer_async(ctx, &o, op, type, src, ioff, dst, ooff, p->n,
                                 nev, wl, &p->scan);
      if (st != CLR_OK)
        st = part_fail(g, i, st);
    } else {
      cl_int err;
      st = carry_queue(g, i);
      if (st == CLR_OK) {
        p->carry =
            clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, osize, NULL, &err);
        if (err == CL_SUCCESS)
          p->gate = clCreateUserEvent(ctx->cl, &err);
        if (err != CL_SUCCESS)
          st = group_fail(g, clr_status_from_cl(err),
                          "device %zu: its carry buffer or gate could not be "
                          "made: %s (%d)",
                          i, clr_cl_error_name(err), (int)err);
      }
      if (st == CLR_OK) {
        free(lists);
        lists = malloc(((size_t)nev + 1) * sizeof *lists);
        if (!lists)
          st = group_fail(g, CLR_ERR_OUT_OF_MEMORY, "out of host memory");
      }
      if (st == CLR_OK) {
        if (nev)
          memcpy(lists, wl, nev * sizeof *lists);
        lists[nev] = p->gate;
        st = clr_scan_buffer_async_carry(ctx, &o, op, type, src, ioff, dst,
                                         ooff, p->n, p->carry, nev + 1, lists,
                                         &p->scan);
        if (st != CLR_OK)
          st = part_fail(g, i, st);
      }
    }
    p->enqueued = 1;
    if (st == CLR_OK) {
      cl_int err = clFlush(clr_queue(ctx));
      if (err != CL_SUCCESS)
        st = group_fail(g, clr_status_from_cl(err),
                        "device %zu: clFlush failed: %s (%d)", i,
                        clr_cl_error_name(err), (int)err);
    }
  }
  free(lists);
  if (st != CLR_OK) {
    for (size_t i = 0; events && i < g->count; i++)
      if (events[i]) {
        clReleaseEvent(events[i]);
        events[i] = NULL;
      }
    return abandon(c, st);
  }
  return start_call(c, events);
}

CLR_API clr_status clr_group_wait(clr_group *g) {
  if (!g)
    return CLR_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g->lock);
  while (g->pending)
    pthread_cond_wait(&g->done, &g->lock);
  clr_status st = g->last_status;
  pthread_mutex_unlock(&g->lock);
  return st;
}
