/* Library-level API: names and status strings, argument checking, device
 * listing and selection, contexts (release(NULL), errors, usability after
 * errors), clr_prepare, clr_last_timing's shape, build failures with their
 * build log (a kernel directory holding a corrupted copy of the kernels),
 * a missing kernel directory, the on-disk cache keyed on the source, the
 * library staying silent without a log callback, and two contexts used
 * from two threads at once.
 *
 *   test_api --kernel-src=DIR --version=X.Y.Z
 *   test_api --overflow      (n * element size beyond SIZE_MAX) */
#include "scan_reference.h"
#include "test_files.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kernel_src; /* the source tree's cl/ */

/* ------------------------------------------------------------ names */

static void test_status_strings(void) {
  for (int i = 0; i < CLR_STATUS_COUNT; i++) {
    const char *n = clr_status_name((clr_status)i);
    const char *s = clr_status_string((clr_status)i);
    if (!TU_CHECK(n && *n && s && *s, "status %d: name / string non-empty", i))
      continue;
    TU_CHECK(strncmp(n, "CLR_", 4) == 0, "status name %s starts with CLR_", n);
    for (int j = 0; j < i; j++) {
      TU_CHECK(strcmp(n, clr_status_name((clr_status)j)) != 0,
               "status names %d and %d distinct (%s)", i, j, n);
      TU_CHECK(strcmp(s, clr_status_string((clr_status)j)) != 0,
               "status strings %d and %d distinct (%s)", i, j, s);
    }
  }
  TU_CHECK(strcmp(clr_status_name(CLR_OK), "CLR_OK") == 0, "name of CLR_OK");
  TU_CHECK(strcmp(clr_status_name(CLR_ERR_BUILD), "CLR_ERR_BUILD") == 0,
           "name of CLR_ERR_BUILD");
  TU_CHECK(strcmp(clr_status_string(CLR_ERR_BUILD),
                  "OpenCL program build failed") == 0,
           "string of CLR_ERR_BUILD");
  TU_CHECK(strcmp(clr_status_string(CLR_OK), "success") == 0,
           "string of CLR_OK");
  /* Out of range: still a printable string, never NULL. */
  const char *x = clr_status_name(CLR_STATUS_COUNT);
  const char *y = clr_status_string((clr_status)-1);
  TU_CHECK(x != NULL && y != NULL,
           "out-of-range status gives a non-NULL name and string");
}

/* What each operation must be, stated here apart from the library's table
 * (include/clreduce_ops.def), in enum order: integer types only, and its
 * result type: 'i' the input's (half: float), 'w' widened sums and
 * products (int -> long, uint -> ulong unless narrowed), 't' an int truth,
 * 'm' a mean (float for float and half, else double; none of 64-bit
 * integers), 'v' a variance (the same types, 64-bit integers too). */
static const struct {
  const char *name;
  int integer_only;
  char result;
} expected_ops[] = {
    {"sum", 0, 'w'},       {"prod", 0, 'w'},    {"min", 0, 'i'},
    {"max", 0, 'i'},       {"and", 1, 't'},     {"or", 1, 't'},
    {"argmin", 0, 'i'},    {"argmax", 0, 'i'},  {"minmax", 0, 'i'},
    {"mean", 0, 'm'},      {"xor", 1, 'i'},     {"nansum", 0, 'w'},
    {"nanmin", 0, 'i'},    {"nanmax", 0, 'i'},  {"nanargmin", 0, 'i'},
    {"nanargmax", 0, 'i'}, {"nanmean", 0, 'm'}, {"var", 0, 'v'},
    {"std", 0, 'v'}};
_Static_assert(sizeof expected_ops / sizeof expected_ops[0] == CLR_OP_COUNT,
               "every op has its expected rules");

static void test_names(void) {
  static const char *types[] = {"float", "double", "int", "uint",
                                "long",  "ulong",  "half"};
  static const size_t sizes[] = {4, 8, 4, 4, 8, 8, 2};
  _Static_assert(sizeof types / sizeof types[0] == CLR_TYPE_COUNT,
                 "every type");
  static const char *maps[] = {"none", "abs", "square", "expr"};
  _Static_assert(sizeof maps / sizeof maps[0] == CLR_MAP_COUNT, "every map");
  for (int m = 0; m < CLR_MAP_COUNT; m++) {
    clr_map back = CLR_MAP_COUNT;
    TU_CHECK(strcmp(clr_map_name((clr_map)m), maps[m]) == 0 &&
                 clr_map_from_name(maps[m], &back) == CLR_OK &&
                 back == (clr_map)m,
             "map name round trip %s", maps[m]);
  }
  TU_CHECK(strcmp(clr_map_name(CLR_MAP_COUNT), "?") == 0, "invalid map name");
  for (int t = 0; t < CLR_TYPE_COUNT; t++) {
    const char *n = clr_type_name((clr_type)t);
    TU_CHECK(n && strcmp(n, types[t]) == 0, "type name %d = %s", t,
             n ? n : "(null)");
    TU_CHECK(clr_type_size((clr_type)t) == sizes[t], "type size of %s",
             types[t]);
    clr_type back = CLR_TYPE_COUNT;
    TU_CHECK(clr_type_from_name(types[t], &back) == CLR_OK &&
                 back == (clr_type)t,
             "type name round trip %s", types[t]);
  }
  TU_CHECK(clr_type_size(CLR_TYPE_COUNT) == 0, "size of an invalid type is 0");
  for (int o = 0; o < CLR_OP_COUNT; o++) {
    const char *n = clr_op_name((clr_op)o);
    TU_CHECK(n && strcmp(n, expected_ops[o].name) == 0, "op name %d = %s", o,
             n ? n : "(null)");
    clr_op back = CLR_OP_COUNT;
    TU_CHECK(clr_op_from_name(expected_ops[o].name, &back) == CLR_OK &&
                 back == (clr_op)o,
             "op name round trip %s", expected_ops[o].name);
  }
  TU_CHECK(strcmp(clr_kernel_name(CLR_REDUCE_FIRST_ADD), "first-add") == 0,
           "kernel name of CLR_REDUCE_FIRST_ADD is first-add");
  for (int k = 0; k < CLR_KERNEL_COUNT; k++) {
    const char *n = clr_kernel_name((clr_kernel)k);
    if (!TU_CHECK(n && *n, "kernel %d has a name", k))
      continue;
    clr_kernel back = CLR_KERNEL_COUNT;
    TU_CHECK(clr_kernel_from_name(n, &back) == CLR_OK && back == (clr_kernel)k,
             "kernel name round trip %s", n);
    for (int j = 0; j < k; j++)
      TU_CHECK(strcmp(n, clr_kernel_name((clr_kernel)j)) != 0,
               "kernel names distinct: %s", n);
    TU_CHECK(clr_kernel_is_scan((clr_kernel)k) == (k >= CLR_SCAN_KOGGE_STONE),
             "clr_kernel_is_scan(%s)", n);
  }
  static const char *bad[] = {"",      "flot", "Float ",     "sum ",
                              "int32", "xyz",  "first_add_", "-"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    clr_type t;
    clr_op o;
    clr_kernel k;
    TU_EXPECT_STATUS(clr_type_from_name(bad[i], &t), CLR_ERR_INVALID_ARGUMENT,
                     "clr_type_from_name(bad)");
    TU_EXPECT_STATUS(clr_op_from_name(bad[i], &o), CLR_ERR_INVALID_ARGUMENT,
                     "clr_op_from_name(bad)");
    TU_EXPECT_STATUS(clr_kernel_from_name(bad[i], &k), CLR_ERR_INVALID_ARGUMENT,
                     "clr_kernel_from_name(bad)");
  }
  clr_type t;
  clr_op o;
  clr_kernel k;
  TU_EXPECT_STATUS(clr_type_from_name(NULL, &t), CLR_ERR_INVALID_ARGUMENT,
                   "clr_type_from_name(NULL)");
  TU_EXPECT_STATUS(clr_op_from_name(NULL, &o), CLR_ERR_INVALID_ARGUMENT,
                   "clr_op_from_name(NULL)");
  TU_EXPECT_STATUS(clr_kernel_from_name(NULL, &k), CLR_ERR_INVALID_ARGUMENT,
                   "clr_kernel_from_name(NULL)");
  TU_EXPECT_STATUS(clr_type_from_name("int", NULL), CLR_ERR_INVALID_ARGUMENT,
                   "clr_type_from_name(out NULL)");
}

static void test_supports_and_result_types(void) {
  for (int o = 0; o < CLR_OP_COUNT; o++)
    for (int t = 0; t < CLR_TYPE_COUNT; t++) {
      char rule = expected_ops[o].result;
      TU_CHECK(strcmp(clr_op_name((clr_op)o), expected_ops[o].name) == 0,
               "op %d is %s, want %s", o, clr_op_name((clr_op)o),
               expected_ops[o].name);
      int integer_only = expected_ops[o].integer_only;
      int fp = tu_is_float((clr_type)t);
      int wide_mean = rule == 'm' && (t == CLR_LONG || t == CLR_ULONG);
      clr_status s = clr_op_supports((clr_op)o, (clr_type)t);
      if ((integer_only && fp) || wide_mean)
        TU_CHECK(s == CLR_ERR_UNSUPPORTED, "clr_op_supports(%s, %s) = %s",
                 clr_op_name((clr_op)o), clr_type_name((clr_type)t),
                 clr_status_name(s));
      else
        TU_CHECK(s == CLR_OK, "clr_op_supports(%s, %s) = %s",
                 clr_op_name((clr_op)o), clr_type_name((clr_type)t),
                 clr_status_name(s));
      if ((integer_only && fp) || wide_mean)
        continue;
      for (int narrow = 0; narrow <= 1; narrow++) {
        clr_type want = (clr_type)t;
        if (rule == 't')
          want = CLR_INT;
        else if (rule == 'm' || rule == 'v') /* float for float and half,
                                                else double */
          want = t == CLR_FLOAT || t == CLR_HALF ? CLR_FLOAT : CLR_DOUBLE;
        else if (t == CLR_HALF) /* half data is computed in float */
          want = CLR_FLOAT;
        else if (rule == 'w' && !narrow && (t == CLR_INT || t == CLR_UINT))
          want = t == CLR_INT ? CLR_LONG : CLR_ULONG;
        clr_type got = clr_result_type((clr_op)o, (clr_type)t, narrow);
        TU_CHECK(got == want, "clr_result_type(%s, %s, narrow=%d) = %s",
                 clr_op_name((clr_op)o), clr_type_name((clr_type)t), narrow,
                 clr_type_name(got));
      }
    }
  TU_CHECK(clr_op_supports(CLR_OP_COUNT, CLR_INT) != CLR_OK,
           "clr_op_supports(invalid op) is not CLR_OK");
  TU_CHECK(clr_op_supports(CLR_SUM, CLR_TYPE_COUNT) != CLR_OK,
           "clr_op_supports(invalid type) is not CLR_OK");
}

static void test_version(const char *want) {
  const char *v = clr_version();
  TU_CHECK(v && want && strcmp(v, want) == 0, "clr_version() = %s, want %s",
           v ? v : "(null)", want ? want : "(not given)");
}

static void test_options_init(void) {
  clr_options o;
  memset(&o, 0xA5, sizeof o);
  clr_options_init(&o);
  TU_CHECK(o.struct_size == sizeof o && o.kernel == CLR_KERNEL_DEFAULT &&
               o.wg_size == 0 && o.coarse == 0 && o.vector_width == 0 &&
               o.layout == CLR_LAYOUT_AUTO && o.narrow_accumulator == 0 &&
               o.exclusive == 0 && o.carry_in == NULL && o.exact == 0 &&
               o.accumulate_in == CLR_TYPE_DEFAULT && o.map == CLR_MAP_NONE &&
               o.map_expr == NULL && o.index_base == 0,
           "clr_options_init gives the documented defaults");
  clr_options m = CLR_OPTIONS_INIT;
  TU_CHECK(m.struct_size == sizeof m && m.kernel == CLR_KERNEL_DEFAULT &&
               m.wg_size == 0 && m.layout == CLR_LAYOUT_AUTO &&
               m.carry_in == NULL && m.accumulate_in == CLR_TYPE_DEFAULT &&
               m.map == CLR_MAP_NONE && m.map_expr == NULL && m.index_base == 0,
           "CLR_OPTIONS_INIT gives clr_options_init's defaults");
  clr_context_config c, cm = CLR_CONTEXT_CONFIG_INIT;
  memset(&c, 0xA5, sizeof c);
  clr_context_config_init(&c);
  TU_CHECK(c.struct_size == sizeof c && c.platform == NULL &&
               c.device == NULL && c.kernel_dir == NULL &&
               c.cache_dir == NULL && c.log == NULL && c.log_user == NULL &&
               c.copy_host_data == 0 && c.max_chunk_bytes == 0 &&
               c.no_profiling == 0 && cm.struct_size == sizeof cm &&
               cm.platform == NULL && cm.no_profiling == 0,
           "clr_context_config_init and CLR_CONTEXT_CONFIG_INIT give the "
           "documented defaults");
}

/* ------------------------------------------------------------ devices */

static void test_devices(clr_context *ctx) {
  size_t count = 0;
  clr_status s = clr_list_devices(NULL, 0, &count);
  TU_EXPECT_STATUS(s, CLR_OK, "clr_list_devices(NULL, 0)");
  if (!TU_CHECK(count >= 1, "at least one device (got %zu)", count))
    return;
  clr_device_desc *d = tu_xmalloc(count * sizeof *d);
  size_t count2 = 0;
  TU_EXPECT_STATUS(clr_list_devices(d, count, &count2), CLR_OK,
                   "clr_list_devices(all)");
  TU_CHECK(count2 == count, "device count stable (%zu, %zu)", count, count2);
  int found = 0;
  for (size_t i = 0; i < count; i++) {
    TU_CHECK(d[i].platform_name[0] && d[i].device_name[0] &&
                 d[i].device_version[0],
             "device %zu has names", i);
    TU_CHECK(d[i].max_work_group_size >= 1 && d[i].compute_units >= 1 &&
                 d[i].global_mem_size > 0 && d[i].max_alloc_size > 0 &&
                 d[i].local_mem_size > 0,
             "device %zu has sizes", i);
    if (strcmp(d[i].device_name, tu_device.device_name) == 0 &&
        d[i].platform_index == tu_device.platform_index &&
        d[i].device_index == tu_device.device_index)
      found = 1;
  }
  TU_CHECK(found, "the context's device (%s, platform %u device %u) is listed",
           tu_device.device_name, tu_device.platform_index,
           tu_device.device_index);
  /* A smaller cap still reports the full count. */
  size_t count3 = 0;
  clr_device_desc one;
  TU_EXPECT_STATUS(clr_list_devices(&one, 1, &count3), CLR_OK,
                   "clr_list_devices(cap 1)");
  TU_CHECK(count3 == count, "cap 1: count %zu, want %zu", count3, count);

  /* Selection by case-insensitive substring of the device name. */
  char upper[128];
  snprintf(upper, sizeof upper, "%s", tu_device.device_name);
  for (char *p = upper; *p; p++)
    if (*p >= 'a' && *p <= 'z')
      *p = (char)(*p - 'a' + 'A');
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  cfg.device = upper;
  clr_context *c2 = NULL;
  char detail[512] = "";
  s = clr_context_create(&cfg, &c2, detail, sizeof detail);
  TU_CHECK(s == CLR_OK && c2, "device '%s' (upper case) selects it: %s %s",
           upper, clr_status_name(s), detail);
  if (c2) {
    clr_device_desc dd;
    clr_context_device(c2, &dd);
    TU_CHECK(strcmp(dd.device_name, tu_device.device_name) == 0,
             "selected device %s", dd.device_name);
  }
  clr_context_release(c2);
  /* By decimal index. */
  char idx[16];
  snprintf(idx, sizeof idx, "%u", tu_device.platform_index);
  cfg.device = NULL;
  cfg.platform = idx;
  c2 = NULL;
  s = clr_context_create(&cfg, &c2, detail, sizeof detail);
  TU_CHECK(s == CLR_OK && c2, "platform '%s' by index: %s %s", idx,
           clr_status_name(s), detail);
  clr_context_release(c2);
  /* No such device / platform. */
  cfg.platform = NULL;
  cfg.device = "no-such-device-xyzzy";
  c2 = (clr_context *)&cfg; /* must be overwritten */
  detail[0] = '\0';
  s = clr_context_create(&cfg, &c2, detail, sizeof detail);
  TU_EXPECT_STATUS(s, CLR_ERR_NO_DEVICE, "device 'no-such-device-xyzzy'");
  TU_CHECK(c2 == NULL, "failed create leaves *out NULL");
  TU_CHECK(detail[0] != '\0', "failed create fills detail");
  cfg.device = "99";
  c2 = NULL;
  s = clr_context_create(&cfg, &c2, detail, sizeof detail);
  TU_EXPECT_STATUS(s, CLR_ERR_NO_DEVICE, "device index 99");
  clr_context_release(c2);
  cfg.device = NULL;
  cfg.platform = "no-such-platform-xyzzy";
  c2 = NULL;
  s = clr_context_create(&cfg, &c2, detail, sizeof detail);
  TU_CHECK(s == CLR_ERR_NO_DEVICE || s == CLR_ERR_NO_PLATFORM,
           "platform 'no-such-platform-xyzzy': %s", clr_status_name(s));
  clr_context_release(c2);
  TU_EXPECT_STATUS(clr_context_create(NULL, NULL, detail, sizeof detail),
                   CLR_ERR_INVALID_ARGUMENT, "clr_context_create(out NULL)");
  /* detail may be NULL. */
  cfg.platform = NULL;
  cfg.device = "no-such-device-xyzzy";
  c2 = NULL;
  s = clr_context_create(&cfg, &c2, NULL, 0);
  TU_EXPECT_STATUS(s, CLR_ERR_NO_DEVICE, "create with detail NULL");
  clr_context_release(c2);
  /* Accessors. */
  TU_CHECK(clr_context_cl_context(ctx) != NULL && clr_context_queue(ctx),
           "cl_context and queue accessors");
  TU_CHECK(clr_context_cl_context(NULL) == NULL &&
               clr_context_queue(NULL) == NULL,
           "accessors of NULL give NULL");
  TU_EXPECT_STATUS(clr_context_device(ctx, NULL), CLR_ERR_INVALID_ARGUMENT,
                   "clr_context_device(out NULL)");
  free(d);
}

/* ------------------------------------------------------------ arguments */

static void check_usable(clr_context *ctx, const char *after) {
  int32_t x[6] = {1, -2, 3, 4, 5, 100};
  clr_value v;
  memset(&v, 0, sizeof v);
  clr_status s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, x, 6, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG && v.v.l == 111,
           "context usable after %s: %s, sum %" PRId64, after,
           clr_status_name(s), v.v.l);
}

static void test_invalid_arguments(clr_context *ctx) {
  float x[4] = {1, 2, 3, 4};
  clr_value v;
  clr_options o;
  clr_options_init(&o);
  struct {
    const char *what;
    clr_status got;
  } cases[] = {
      {"data NULL", clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, NULL, 4, &v)},
      {"n == 0", clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 0, &v)},
      {"result NULL", clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 4, NULL)},
      {"op CLR_OP_COUNT",
       clr_reduce_host(ctx, &o, CLR_OP_COUNT, CLR_FLOAT, x, 4, &v)},
      {"op -1", clr_reduce_host(ctx, &o, (clr_op)-1, CLR_FLOAT, x, 4, &v)},
      {"type CLR_TYPE_COUNT",
       clr_reduce_host(ctx, &o, CLR_SUM, CLR_TYPE_COUNT, x, 4, &v)},
      {"type 1000",
       clr_reduce_host(ctx, &o, CLR_SUM, (clr_type)1000, x, 4, &v)},
      {"buffer NULL",
       clr_reduce_buffer(ctx, &o, CLR_SUM, CLR_FLOAT, NULL, 0, 4, &v)},
      {"prepare bad op", clr_prepare(ctx, &o, CLR_OP_COUNT, CLR_FLOAT)},
      {"prepare bad type", clr_prepare(ctx, &o, CLR_SUM, CLR_TYPE_COUNT)},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    TU_EXPECT_STATUS(cases[i].got, CLR_ERR_INVALID_ARGUMENT, cases[i].what);
  }
  /* The detail names the failure. */
  clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 0, &v);
  TU_CHECK(clr_context_error(ctx)[0] != '\0',
           "clr_context_error is set after an invalid argument");
  TU_EXPECT_STATUS(clr_reduce_host(NULL, &o, CLR_SUM, CLR_FLOAT, x, 4, &v),
                   CLR_ERR_INVALID_ARGUMENT, "ctx NULL");
  TU_EXPECT_STATUS(clr_prepare(NULL, &o, CLR_SUM, CLR_FLOAT),
                   CLR_ERR_INVALID_ARGUMENT, "prepare ctx NULL");
  clr_timing tm = CLR_TIMING_INIT;
  TU_EXPECT_STATUS(clr_last_timing(NULL, &tm), CLR_ERR_INVALID_ARGUMENT,
                   "clr_last_timing(NULL)");
  TU_EXPECT_STATUS(clr_last_timing(ctx, NULL), CLR_ERR_INVALID_ARGUMENT,
                   "clr_last_timing(out NULL)");
  TU_CHECK(clr_context_error(NULL) != NULL &&
               clr_context_build_log(NULL) != NULL,
           "error / build log of NULL are non-NULL strings");
  /* and / or on floating types. */
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_AND, CLR_FLOAT, x, 4, &v),
                   CLR_ERR_UNSUPPORTED, "and on float");
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_OR, CLR_DOUBLE, x, 2, &v),
                   CLR_ERR_UNSUPPORTED, "or on double");
  TU_EXPECT_STATUS(clr_prepare(ctx, &o, CLR_AND, CLR_DOUBLE),
                   CLR_ERR_UNSUPPORTED, "prepare and on double");
  check_usable(ctx, "invalid arguments");
  /* opt == NULL means defaults. */
  memset(&v, 0, sizeof v);
  TU_CHECK(clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, 4, &v) == CLR_OK &&
               v.type == CLR_FLOAT && v.v.f == 10.0f,
           "opt NULL: sum 1..4 = %g", (double)v.v.f);
  TU_CHECK(clr_prepare(ctx, NULL, CLR_MAX, CLR_ULONG) == CLR_OK,
           "clr_prepare(opt NULL)");
  /* clr_prepare then the call it prepared. */
  uint64_t u[3] = {5, UINT64_MAX, 7};
  o.kernel = CLR_REDUCE_FIRST_ADD;
  TU_CHECK(clr_prepare(ctx, &o, CLR_MAX, CLR_ULONG) == CLR_OK,
           "clr_prepare first-add max ulong");
  clr_timing t1 = CLR_TIMING_INIT;
  clr_last_timing(ctx, &t1);
  TU_CHECK(t1.build_ms >= 0.0 && isfinite(t1.build_ms),
           "build_ms after prepare is a number (%g)", t1.build_ms);
  memset(&v, 0, sizeof v);
  TU_CHECK(clr_reduce_host(ctx, &o, CLR_MAX, CLR_ULONG, u, 3, &v) == CLR_OK &&
               v.type == CLR_ULONG && v.v.ul == UINT64_MAX,
           "prepared first-add max ulong");
}

/* reduce.min_groups_cu's cases: the coarse int sum of x[0, len), 4 ints a
 * load, work-groups of 32 (many from a small input), two launches, under
 * saved's tuning with groups_per_cu 1024, min_vectors m and
 * min_groups_cu g; its status, value and timing. */
static clr_status spread_sum(clr_context *ctx, const clr_tuning *saved,
                             size_t m, unsigned g, const int32_t *x, size_t len,
                             clr_value *v, tu_timing *tm) {
  clr_tuning t = *saved;
  t.reduce_groups_per_cu = 1024;
  t.reduce_min_vectors = m;
  t.reduce_min_groups_cu = g;
  t.reduce_single_launch = 0;
  TU_EXPECT_STATUS(clr_set_tuning(ctx, &t), CLR_OK, "reduce.min_groups_cu");
  clr_options o;
  clr_options_init(&o);
  o.kernel = CLR_REDUCE_COARSE;
  o.vector_width = 4;
  o.wg_size = 32;
  clr_status s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, x, len, v);
  *tm = tu_last_timing(ctx);
  return s;
}

/* The shape clr_last_timing reports: consistent, never timing values. */
static void test_timing_shape(clr_context *ctx) {
  size_t n = 1000003;
  int32_t *x = tu_xmalloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = (int32_t)(i % 1000) - 500;
  int64_t want = 0;
  for (size_t i = 0; i < n; i++)
    want += x[i];
  for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
    clr_options o;
    clr_options_init(&o);
    o.kernel = tu_reduce_kernels[ki];
    clr_value v;
    clr_status s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, x, n, &v);
    const char *kn = clr_kernel_name(o.kernel);
    if (!TU_CHECK(s == CLR_OK && v.v.l == want, "%s: sum = %" PRId64, kn,
                  v.v.l))
      continue;
    tu_timing tm;
    TU_EXPECT_STATUS(tu_get_timing(ctx, &tm), CLR_OK, "clr_last_timing");
    TU_CHECK(tm.chunks == 1, "%s: chunks %zu", kn, tm.chunks);
    if (!TU_CHECK(tm.n_passes >= 1 && tm.n_passes <= CLR_MAX_PASSES,
                  "%s: n_passes %zu", kn, tm.n_passes))
      continue;
    TU_CHECK(tm.passes[0].n_in == n, "%s: first pass reads %zu", kn,
             tm.passes[0].n_in);
    for (size_t p = 0; p < tm.n_passes; p++) {
      const clr_pass_info *pi = &tm.passes[p];
      TU_CHECK(pi->local_size >= 1 && pi->global_size >= pi->local_size &&
                   pi->global_size % pi->local_size == 0,
               "%s pass %zu: global %zu local %zu", kn, p, pi->global_size,
               pi->local_size);
      TU_CHECK(pi->ms >= 0.0 && isfinite(pi->ms), "%s pass %zu: ms is a number",
               kn, p);
      if (p + 1 < tm.n_passes)
        TU_CHECK(tm.passes[p + 1].n_in < pi->n_in &&
                     tm.passes[p + 1].n_in == pi->global_size / pi->local_size,
                 "%s pass %zu reads the %zu partials of pass %zu (reads %zu)",
                 kn, p + 1, pi->global_size / pi->local_size, p,
                 tm.passes[p + 1].n_in);
    }
    const clr_pass_info *last = &tm.passes[tm.n_passes - 1];
    TU_CHECK(last->global_size == last->local_size || last->folds,
             "%s: the last pass runs one work-group (global %zu local %zu) "
             "or folds the partials itself",
             kn, last->global_size, last->local_size);
    for (size_t p = 0; p + 1 < tm.n_passes; p++)
      TU_CHECK(!tm.passes[p].folds, "%s: pass %zu folds, yet %zu follow", kn, p,
               tm.n_passes - p - 1);
    TU_CHECK(tm.kernel_ms >= 0 && tm.h2d_ms >= 0 && tm.d2h_ms >= 0 &&
                 tm.build_ms >= 0 && tm.total_ms >= 0 &&
                 isfinite(tm.kernel_ms) && isfinite(tm.total_ms),
             "%s: timings are non-negative numbers", kn);
  }
  /* reduce.min_vectors: below groups_per_cu x compute units work-groups
   * (made large here), a device-sized coarse launch gives each work-item
   * at least that many loads: ceil(ceil(vectors / m) / wg) work-groups. */
  clr_tuning saved = CLR_TUNING_INIT, t = CLR_TUNING_INIT;
  if (!TU_CHECK(clr_get_tuning(ctx, &saved) == CLR_OK, "clr_get_tuning"))
    goto done;
  static const size_t mins[] = {1, 3, 16, 1000, 65536};
  for (size_t i = 0; i < sizeof mins / sizeof *mins; i++) {
    t = saved;
    t.reduce_groups_per_cu = 1024;
    t.reduce_min_vectors = mins[i];
    t.reduce_min_groups_cu = 0; /* (below) */
    TU_EXPECT_STATUS(clr_set_tuning(ctx, &t), CLR_OK, "reduce.min_vectors");
    clr_options o;
    clr_options_init(&o);
    o.kernel = CLR_REDUCE_COARSE;
    o.vector_width = 4;
    clr_value v;
    clr_status s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, x, n, &v);
    if (!TU_CHECK(s == CLR_OK && v.v.l == want,
                  "min_vectors %zu: sum = %" PRId64, mins[i], v.v.l))
      continue;
    tu_timing tm = tu_last_timing(ctx);
    size_t wg = tm.passes[0].local_size, nv = n / 4;
    size_t groups = ((nv + mins[i] - 1) / mins[i] + wg - 1) / wg;
    TU_CHECK(tm.passes[0].global_size == groups * wg,
             "min_vectors %zu: %zu work-groups of %zu (global %zu)", mins[i],
             groups, wg, tm.passes[0].global_size);
  }
  /* reduce.min_groups_cu: a first pass that min_vectors sizes at more
   * than one work-group takes at least G x compute units of them, but no
   * more than give each work-item a load; one group stays one; a pass over
   * the partials is still sized by min_vectors, so it stays one group. */
  clr_device_desc dd;
  if (!TU_CHECK(clr_context_device(ctx, &dd) == CLR_OK, "clr_context_device"))
    goto restore;
  /* n; a prefix where G x compute units passes one load a work-item (the
   * cap); the same prefix in one group (no floor) */
  static const size_t mins2[3] = {1000, 4, 65536};
  size_t lens[3] = {n, 1001, 1001};
  int64_t sums[3] = {want, 0, 0};
  for (size_t i = 0; i < lens[1]; i++)
    sums[1] += x[i];
  sums[2] = sums[1];
  static const unsigned spreads[] = {0, 1, 3, 1024};
  for (size_t i = 0; i < 3 * sizeof spreads / sizeof *spreads; i++) {
    unsigned g = spreads[i / 3];
    size_t len = lens[i % 3], m = mins2[i % 3];
    clr_value v;
    tu_timing tm;
    clr_status s = spread_sum(ctx, &saved, m, g, x, len, &v, &tm);
    if (!TU_CHECK(s == CLR_OK && v.v.l == sums[i % 3],
                  "min_groups_cu %u, n %zu: sum = %" PRId64, g, len, v.v.l))
      continue;
    size_t wg = tm.passes[0].local_size, nv = len / 4;
    size_t groups = ((nv + m - 1) / m + wg - 1) / wg;
    size_t spread = (size_t)g * dd.compute_units, one_load = (nv + wg - 1) / wg;
    if (spread > one_load)
      spread = one_load;
    if (groups > 1 && groups < spread)
      groups = spread;
    TU_CHECK(tm.passes[0].global_size == groups * wg,
             "min_groups_cu %u on %u compute units, n %zu, min_vectors "
             "%zu: %zu work-groups of %zu (global %zu)",
             g, dd.compute_units, len, m, groups, wg, tm.passes[0].global_size);
    TU_CHECK(tm.n_passes == (groups > 1 ? 2u : 1u) &&
                 tm.passes[tm.n_passes - 1].global_size ==
                     tm.passes[tm.n_passes - 1].local_size,
             "min_groups_cu %u, n %zu: %zu passes, the last of global %zu "
             "(its partials fold in one work-group)",
             g, len, tm.n_passes, tm.passes[tm.n_passes - 1].global_size);
  }
  /* A pass over partials is never spread: with min_vectors 4 the first
   * pass leaves so many partials that the second takes several work-groups,
   * as many as min_vectors alone gives them. */
  {
    clr_value v;
    tu_timing tm;
    clr_status s = spread_sum(ctx, &saved, 4, 1024, x, n, &v, &tm);
    if (TU_CHECK(s == CLR_OK && v.v.l == want && tm.n_passes >= 3,
                 "partials: sum = %" PRId64 " in %zu passes (want 3 or more)",
                 v.v.l, tm.n_passes)) {
      size_t wg = tm.passes[1].local_size, nv = tm.passes[1].n_in / 4;
      size_t groups = ((nv + 3) / 4 + wg - 1) / wg,
             target = (size_t)1024 * dd.compute_units;
      if (groups > target)
        groups = target;
      TU_CHECK(tm.passes[1].global_size == groups * wg,
               "partials: the second pass over %zu takes %zu work-groups of "
               "%zu (global %zu), not spread",
               tm.passes[1].n_in, groups, wg, tm.passes[1].global_size);
    }
  }
restore:
  TU_EXPECT_STATUS(clr_set_tuning(ctx, &saved), CLR_OK, "tuning restored");
done:
  free(x);
}

/* A context without profiling (clr_context_config.no_profiling; on
 * NVIDIA's OpenCL the cheaper one for small calls): the same answers from
 * host arrays (copied, in one chunk and in several) and buffers, for every
 * reduction kernel, max and a scan; no event times (0), the wall clock
 * and the shape still reported. */
static void test_no_profiling(void) {
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_src,
                            .copy_host_data = 1,
                            .max_chunk_bytes = 64 * 1024,
                            .no_profiling = 1};
  clr_context *ctx = tu_context_from(&cfg);
  static const size_t sizes[] = {1, 1000, 65537, 1000003};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    /* (a host array's first pass reads its first chunk) */
    size_t n = sizes[si], chunks = (n * 4 + 65535) / 65536,
           first = n < 16384 ? n : 16384;
    int32_t *x = tu_xmalloc(n * sizeof *x);
    int64_t want = 0, *scanned = tu_xmalloc(n * sizeof *scanned);
    int32_t top = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
      x[i] = (int32_t)(i * 7919 % 2001) - 1000;
      want += x[i];
      top = x[i] > top ? x[i] : top;
    }
    cl_int err;
    cl_mem buf = clCreateBuffer(clr_context_cl_context(ctx),
                                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                n * sizeof *x, x, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateBuffer: %d", (int)err);
    for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
      clr_options o;
      clr_options_init(&o);
      o.kernel = tu_reduce_kernels[ki];
      const char *kn = clr_kernel_name(o.kernel);
      for (int form = 0; form < 2; form++) {
        clr_value v;
        clr_status s =
            form ? clr_reduce_buffer(ctx, &o, CLR_SUM, CLR_INT, buf, 0, n, &v)
                 : clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, x, n, &v);
        const char *fn = form ? "buffer" : "host";
        if (!TU_CHECK(s == CLR_OK && v.type == CLR_LONG && v.v.l == want,
                      "no profiling, %s %s n=%zu: %s, sum %" PRId64
                      " (want %" PRId64 ")",
                      kn, fn, n, clr_status_name(s), v.v.l, want))
          continue;
        tu_timing tm = tu_last_timing(ctx);
        TU_CHECK(tm.kernel_ms == 0 && tm.h2d_ms == 0 && tm.d2h_ms == 0 &&
                     tm.passes[0].ms == 0 && tm.total_ms > 0 &&
                     tm.n_passes >= 1 &&
                     tm.passes[0].n_in == (form ? n : first),
                 "no profiling, %s %s n=%zu: kernel %g h2d %g d2h %g pass "
                 "%g ms, total %g ms, %zu passes (first reads %zu)",
                 kn, fn, n, tm.kernel_ms, tm.h2d_ms, tm.d2h_ms, tm.passes[0].ms,
                 tm.total_ms, tm.n_passes, tm.passes[0].n_in);
        TU_CHECK(tm.chunks == (form ? 1 : chunks),
                 "no profiling, %s %s n=%zu: %zu chunks (want %zu)", kn, fn, n,
                 tm.chunks, form ? (size_t)1 : chunks);
      }
    }
    clr_value v;
    clr_status s = clr_reduce_host(ctx, NULL, CLR_MAX, CLR_INT, x, n, &v);
    TU_CHECK(s == CLR_OK && v.v.i == top, "no profiling, max n=%zu: %s, %d", n,
             clr_status_name(s), v.v.i);
    clr_options so;
    clr_options_init(&so);
    so.accumulate_in = CLR_LONG;
    s = clr_scan_host(ctx, &so, CLR_SUM, CLR_INT, x, scanned, n);
    clr_scan_check chk = {.ok = 0};
    if (s == CLR_OK)
      clr_ref_scan_check_to(CLR_SUM, CLR_INT, CLR_LONG, 0, x, scanned, n, 0, 0,
                            &chk);
    TU_CHECK(s == CLR_OK && chk.ok,
             "no profiling, scan n=%zu: %s, %zu elements wrong", n,
             clr_status_name(s), chk.n_bad);
    clReleaseMemObject(buf);
    free(scanned);
    free(x);
  }
  clr_context_release(ctx);
}

/* "Timing and shape of the last successful call": a failed call in
 * between does not wipe it. */
static void test_timing_after_failure(clr_context *ctx) {
  int32_t x[1000];
  for (int i = 0; i < 1000; i++)
    x[i] = i;
  clr_value v;
  clr_status s = clr_reduce_host(ctx, NULL, CLR_MAX, CLR_INT, x, 1000, &v);
  tu_timing before, after;
  tu_get_timing(ctx, &before);
  TU_CHECK(s == CLR_OK && v.v.i == 999 && before.n_passes >= 1 &&
               before.passes[0].n_in == 1000,
           "max of 0..999 and its timing (%s, %d, %zu passes)",
           clr_status_name(s), v.v.i, before.n_passes);
  s = clr_reduce_host(ctx, NULL, CLR_MAX, CLR_INT, x, 0, &v);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "n == 0 between timings");
  s = clr_reduce_host(ctx, NULL, CLR_AND, CLR_FLOAT, x, 10, &v);
  TU_EXPECT_STATUS(s, CLR_ERR_UNSUPPORTED, "and float between timings");
  tu_get_timing(ctx, &after);
  TU_CHECK(after.n_passes == before.n_passes && after.chunks == before.chunks &&
               after.n_passes >= 1 && after.passes[0].n_in == 1000 &&
               after.error_depth == before.error_depth,
           "clr_last_timing after failed calls still describes the last "
           "successful call (n_passes %zu -> %zu, passes[0].n_in %zu)",
           before.n_passes, after.n_passes,
           after.n_passes ? after.passes[0].n_in : 0);
}

/* n * sizeof(type) beyond SIZE_MAX: rejected, never read past the array.
 * (Run as its own test: a library that reads on would crash it.) */
static void test_size_overflow(clr_context *ctx) {
  float x[4] = {1, 2, 3, 4};
  clr_value v;
  clr_status s =
      clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, SIZE_MAX / 4 + 2, &v);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT || s == CLR_ERR_OUT_OF_MEMORY,
           "n = SIZE_MAX/4 + 2 floats (bytes overflow size_t): %s",
           clr_status_name(s));
  s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_DOUBLE, x, SIZE_MAX / 2, &v);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT || s == CLR_ERR_OUT_OF_MEMORY,
           "n = SIZE_MAX/2 doubles: %s", clr_status_name(s));
  check_usable(ctx, "an overflowing n");
}

/* ------------------------------------------------------------ hardening */

/* Coarse factors whose products with the work-group size or a work-item's
 * index wrap size_t / ulong.  Each call must give the exact answer (the
 * library clamps a factor beyond n) or refuse with
 * CLR_ERR_INVALID_ARGUMENT and a detail: never a wrong answer. */
static const size_t huge_coarse[] = {(size_t)1 << 62,
                                     ((size_t)1 << 62) + 1,
                                     ((size_t)1 << 56) + 1,
                                     ((size_t)1 << 63) + 8,
                                     SIZE_MAX,
                                     SIZE_MAX / 3,
                                     (size_t)1 << 40,
                                     ((size_t)1 << 32) + 16,
                                     100000};

#define N_HUGE_COARSE (sizeof huge_coarse / sizeof huge_coarse[0])

static void test_launch_overflow(clr_context *ctx) {
  enum { N = 3001 };
  int32_t *x = tu_xmalloc(N * sizeof *x), *out = tu_xmalloc(N * sizeof *out);
  int32_t *want = tu_xmalloc(N * sizeof *want);
  int64_t sum = 0;
  tu_rng r = {17};
  for (size_t i = 0; i < N; i++) {
    x[i] = (int32_t)tu_below(&r, 2001) - 1000;
    sum += x[i];
    want[i] = (int32_t)sum; /* no wrap: |sum| < 2^31 */
  }
  static const clr_layout layouts[] = {CLR_LAYOUT_AUTO, CLR_LAYOUT_STRIDED,
                                       CLR_LAYOUT_CONTIGUOUS};
  /* Every reduction kernel (coarse only matters to the coarse one, but no
   * kernel may misuse it), every layout of the coarse kernel. */
  for (size_t ci = 0; ci < N_HUGE_COARSE; ci++) {
    for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
      int coarse = tu_reduce_kernels[ki] == CLR_REDUCE_COARSE;
      for (size_t li = 0; li < (coarse ? 3u : 1u); li++) {
        clr_options o;
        clr_options_init(&o);
        o.kernel = tu_reduce_kernels[ki];
        o.coarse = huge_coarse[ci];
        o.layout = layouts[li];
        clr_value v;
        memset(&v, 0, sizeof v);
        clr_status s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, x, N, &v);
        const char *kn = clr_kernel_name(o.kernel);
        if (s == CLR_OK)
          TU_CHECK(v.type == CLR_LONG && v.v.l == sum,
                   "reduce %s layout %d coarse=%zu: sum %" PRId64
                   ", want %" PRId64,
                   kn, (int)o.layout, o.coarse, v.v.l, sum);
        else
          TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
                       clr_context_error(ctx)[0] != '\0',
                   "reduce %s layout %d coarse=%zu: %s (%s), want CLR_OK or "
                   "CLR_ERR_INVALID_ARGUMENT with a detail",
                   kn, (int)o.layout, o.coarse, clr_status_name(s),
                   clr_context_error(ctx));
      }
    }
  }
  /* The same through clr_reduce_buffer (an offset, so the kernel's index
   * arithmetic starts off zero). */
  cl_int err;
  cl_mem buf = clCreateBuffer(clr_context_cl_context(ctx),
                              CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              N * sizeof *x, x, &err);
  if (!TU_CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", (int)err))
    buf = NULL;
  for (size_t ci = 0; buf && ci < N_HUGE_COARSE; ci++) {
    clr_options o;
    clr_options_init(&o);
    o.coarse = huge_coarse[ci];
    o.layout = CLR_LAYOUT_CONTIGUOUS;
    clr_value v;
    memset(&v, 0, sizeof v);
    clr_status s =
        clr_reduce_buffer(ctx, &o, CLR_SUM, CLR_INT, buf, 1, N - 1, &v);
    TU_CHECK((s == CLR_OK && v.v.l == sum - x[0]) ||
                 (s == CLR_ERR_INVALID_ARGUMENT &&
                  clr_context_error(ctx)[0] != '\0'),
             "reduce_buffer coarse=%zu: %s, sum %" PRId64 ", want %" PRId64,
             o.coarse, clr_status_name(s), v.v.l, sum - x[0]);
  }
  if (buf)
    clReleaseMemObject(buf);
  /* Every scan kernel, and the tuned one (CLR_KERNEL_DEFAULT). */
  static const clr_kernel scans[] = {
      CLR_SCAN_KOGGE_STONE, CLR_SCAN_KOGGE_STONE_DB, CLR_SCAN_BRENT_KUNG,
      CLR_SCAN_DECOUPLED, CLR_KERNEL_DEFAULT};
  for (size_t ci = 0; ci < N_HUGE_COARSE; ci++) {
    for (size_t ki = 0; ki < sizeof scans / sizeof scans[0]; ki++) {
      for (int wg = 0; wg <= 16; wg += 16) {
        clr_options o;
        clr_options_init(&o);
        o.kernel = scans[ki];
        o.coarse = huge_coarse[ci];
        o.wg_size = (size_t)wg; /* 16: a tile that wraps to 0 at 2^60 */
        memset(out, 0x5a, N * sizeof *out);
        clr_status s = clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, x, out, N);
        const char *kn = clr_kernel_name(o.kernel);
        if (s == CLR_OK) {
          size_t bad = 0;
          while (bad < N && out[bad] == want[bad])
            bad++;
          TU_CHECK(bad == N,
                   "scan %s wg=%d coarse=%zu: element %zu is %d, want %d", kn,
                   wg, o.coarse, bad, bad < N ? out[bad] : 0,
                   bad < N ? want[bad] : 0);
        } else {
          TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
                       clr_context_error(ctx)[0] != '\0',
                   "scan %s wg=%d coarse=%zu: %s (%s), want CLR_OK or "
                   "CLR_ERR_INVALID_ARGUMENT with a detail",
                   kn, wg, o.coarse, clr_status_name(s),
                   clr_context_error(ctx));
        }
      }
    }
  }
  /* A coarse factor beyond n is documented as clamped: the tiled scans
   * and the coarse reduction must answer (not refuse) 2^62. */
  clr_options o;
  clr_options_init(&o);
  o.coarse = (size_t)1 << 62;
  o.kernel = CLR_SCAN_KOGGE_STONE;
  TU_EXPECT_STATUS(clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, x, out, N), CLR_OK,
                   "kogge-stone scan, coarse 2^62 (clamped to n)");
  o.kernel = CLR_REDUCE_COARSE;
  o.layout = CLR_LAYOUT_CONTIGUOUS;
  clr_value v;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, x, N, &v), CLR_OK,
                   "contiguous coarse reduction, coarse 2^62");
  free(x);
  free(out);
  free(want);
}

/* The same detail must not survive into the next failure. */
static void expect_new_detail(clr_context *ctx, clr_status got, clr_status want,
                              const char *what, const char *needle) {
  const char *d = clr_context_error(ctx);
  TU_CHECK(got == want && strstr(d, needle) != NULL,
           "%s: got %s with detail '%s', want %s with a detail naming '%s'",
           what, clr_status_name(got), d, clr_status_name(want), needle);
}

/* Options and arguments every entry point must refuse, each with its own
 * detail (none kept from the previous failure). */
static void test_option_validation(clr_context *ctx) {
  int32_t in[2000], out[2000];
  for (int i = 0; i < 2000; i++)
    in[i] = out[i] = i % 7;
  clr_options o;
  clr_value v;
  clr_status s;
  /* Scan kernels: an invalid enum, and reduction kernels other than the
   * default (which means "the tuned scan"). */
  const clr_kernel bad_kernels[] = {
      (clr_kernel)99,         (clr_kernel)-1,        CLR_KERNEL_COUNT,
      CLR_REDUCE_INTERLEAVED, CLR_REDUCE_SEQUENTIAL, CLR_REDUCE_FIRST_ADD};
  for (size_t i = 0; i < sizeof bad_kernels / sizeof bad_kernels[0]; i++) {
    char what[96];
    clr_options_init(&o);
    o.kernel = bad_kernels[i];
    clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v); /* stale */
    memset(out, 0x5a, sizeof out);
    s = clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, in, out, 100);
    snprintf(what, sizeof what, "clr_scan_host kernel %d", (int)o.kernel);
    expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, what, "kernel");
    TU_CHECK(out[0] == 0x5a5a5a5a, "%s: output untouched", what);
    clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
    s = clr_prepare(ctx, &o, CLR_SUM, CLR_INT);
    if ((unsigned)o.kernel >= CLR_KERNEL_COUNT) {
      snprintf(what, sizeof what, "clr_prepare kernel %d", (int)o.kernel);
      expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, what, "kernel");
      clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
      s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, in, 10, &v);
      snprintf(what, sizeof what, "clr_reduce_host kernel %d", (int)o.kernel);
      expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, what, "kernel");
    }
  }
  /* Vector widths: 3 and 32 for reductions and scans alike. */
  const unsigned bad_vec[] = {3, 5, 32, 6};
  for (size_t i = 0; i < sizeof bad_vec / sizeof bad_vec[0]; i++) {
    char what[96];
    clr_options_init(&o);
    o.vector_width = bad_vec[i];
    for (int k = 0; k < 3; k++) {
      o.kernel = k == 0 ? CLR_KERNEL_DEFAULT
                        : (k == 1 ? CLR_SCAN_KOGGE_STONE : CLR_SCAN_DECOUPLED);
      clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
      memset(out, 0x5a, sizeof out);
      s = clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, in, out, 100);
      snprintf(what, sizeof what, "clr_scan_host %s vec=%u",
               clr_kernel_name(o.kernel), o.vector_width);
      expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, what, "vector width");
      TU_CHECK(out[0] == 0x5a5a5a5a, "%s: output untouched", what);
    }
    o.kernel = CLR_REDUCE_COARSE;
    clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
    s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, in, 100, &v);
    snprintf(what, sizeof what, "clr_reduce_host vec=%u", o.vector_width);
    expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, what, "vector width");
  }
  clr_options_init(&o);
  o.layout = (clr_layout)7;
  clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
  s = clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, in, out, 100);
  expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, "scan layout 7",
                    "layout");
  /* Partial overlap of a host scan's input and output. */
  clr_options_init(&o);
  const struct {
    int in_at, out_at;
  } overlaps[] = {{0, 1}, {1, 0}, {0, 999}, {999, 0}, {10, 500}};
  for (size_t i = 0; i < sizeof overlaps / sizeof overlaps[0]; i++) {
    for (int i2 = 0; i2 < 2000; i2++)
      in[i2] = i2 % 7;
    clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
    s = clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, in + overlaps[i].in_at,
                      in + overlaps[i].out_at, 1000);
    char what[96];
    snprintf(what, sizeof what, "scan in=a+%d out=a+%d n=1000",
             overlaps[i].in_at, overlaps[i].out_at);
    expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, what, "overlap");
    int untouched = 1;
    for (int i2 = 0; i2 < 2000; i2++)
      untouched &= in[i2] == i2 % 7;
    TU_CHECK(untouched, "%s: array untouched", what);
  }
  /* Adjacent (not overlapping) and exactly in place are fine. */
  for (int i2 = 0; i2 < 2000; i2++)
    in[i2] = i2 % 7;
  s = clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, in, in + 1000, 1000);
  TU_CHECK(s == CLR_OK && in[1999] == in[1998] + 999 % 7 && in[1000] == 0,
           "adjacent scan: %s, last %d", clr_status_name(s), in[1999]);
  s = clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, in + 1000, in + 1000, 1000);
  TU_EXPECT_STATUS(s, CLR_OK, "in-place scan");

  /* clr_scan_buffer: sub-buffers of one buffer that partially overlap. */
  cl_context clc = clr_context_cl_context(ctx);
  cl_device_id dev = NULL;
  cl_uint align_bits = 0;
  cl_int err = clGetCommandQueueInfo(clr_context_queue(ctx), CL_QUEUE_DEVICE,
                                     sizeof dev, &dev, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                          &align_bits, NULL);
  size_t align = align_bits / 8 ? align_bits / 8 : 1;
  size_t n = 1000, bytes = n * sizeof(int32_t);
  size_t step = (bytes / 2 + align - 1) / align * align; /* < bytes */
  cl_mem parent = NULL, a = NULL, b = NULL, c = NULL;
  if (err == CL_SUCCESS)
    parent = clCreateBuffer(clc, CL_MEM_READ_WRITE, 4 * bytes + 4 * align, NULL,
                            &err);
  cl_buffer_region ra = {0, bytes}, rb = {step, bytes},
                   rc = {(2 * bytes + align - 1) / align * align, bytes};
  if (err == CL_SUCCESS)
    a = clCreateSubBuffer(parent, CL_MEM_READ_WRITE,
                          CL_BUFFER_CREATE_TYPE_REGION, &ra, &err);
  if (err == CL_SUCCESS)
    b = clCreateSubBuffer(parent, CL_MEM_READ_WRITE,
                          CL_BUFFER_CREATE_TYPE_REGION, &rb, &err);
  if (err == CL_SUCCESS)
    c = clCreateSubBuffer(parent, CL_MEM_READ_WRITE,
                          CL_BUFFER_CREATE_TYPE_REGION, &rc, &err);
  if (TU_CHECK(err == CL_SUCCESS && step < bytes,
               "sub-buffers (align %zu bytes): %d", align, (int)err)) {
    clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
    s = clr_scan_buffer(ctx, &o, CLR_SUM, CLR_INT, a, b, n);
    expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT,
                      "clr_scan_buffer overlapping sub-buffers", "overlap");
    clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
    s = clr_scan_buffer(ctx, &o, CLR_SUM, CLR_INT, b, parent, n);
    expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT,
                      "clr_scan_buffer sub-buffer inside its parent",
                      "overlap");
    /* Disjoint sub-buffers: a correct scan. */
    for (int i2 = 0; i2 < 1000; i2++)
      in[i2] = i2 % 5 - 2;
    err = clEnqueueWriteBuffer(clr_context_queue(ctx), a, CL_TRUE, 0, bytes, in,
                               0, NULL, NULL);
    s = clr_scan_buffer(ctx, &o, CLR_SUM, CLR_INT, a, c, n);
    int32_t got[1000];
    if (s == CLR_OK && err == CL_SUCCESS)
      err = clEnqueueReadBuffer(clr_context_queue(ctx), c, CL_TRUE, 0, bytes,
                                got, 0, NULL, NULL);
    int ok = s == CLR_OK && err == CL_SUCCESS;
    int32_t run = 0;
    for (int i2 = 0; ok && i2 < 1000; i2++) {
      run += in[i2];
      ok = got[i2] == run;
    }
    TU_CHECK(ok, "clr_scan_buffer between disjoint sub-buffers: %s (%d)",
             clr_status_name(s), (int)err);
  }
  if (c)
    clReleaseMemObject(c);
  if (b)
    clReleaseMemObject(b);
  if (a)
    clReleaseMemObject(a);
  if (parent)
    clReleaseMemObject(parent);

  /* Each failing call names its own failure: alternate two different
   * refusals through every entry point and the tuning and bandwidth
   * calls. */
  clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
  s = clr_set_tuning(ctx, NULL);
  expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT, "clr_set_tuning(NULL)",
                    "tuning");
  clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
  double ms = 0;
  s = clr_measure_read_bandwidth(ctx, 1 << 20, 0, &ms);
  expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT,
                    "clr_measure_read_bandwidth(repeats 0)", "repeats");
  clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
  s = clr_measure_call_floor(ctx, 0, &ms);
  expect_new_detail(ctx, s, CLR_ERR_INVALID_ARGUMENT,
                    "clr_measure_call_floor(repeats 0)", "repeats");
  s = clr_measure_call_floor(NULL, 3, &ms);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "clr_measure_call_floor(NULL)");
  s = clr_measure_call_floor(ctx, 3, &ms);
  TU_CHECK(s == CLR_OK && ms > 0, "clr_measure_call_floor: %s, %g us",
           clr_status_name(s), ms);
  clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, 0, &v);
  s = clr_reduce_host(ctx, NULL, CLR_AND, CLR_FLOAT, in, 10, &v);
  expect_new_detail(ctx, s, CLR_ERR_UNSUPPORTED, "reduce and float", "integer");
  s = clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, NULL, 0, 10, &v);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
               strstr(clr_context_error(ctx), "integer") == NULL &&
               clr_context_error(ctx)[0] != '\0',
           "reduce_buffer(NULL) after 'and float': %s, detail '%s'",
           clr_status_name(s), clr_context_error(ctx));
  s = clr_scan_host(ctx, NULL, CLR_OR, CLR_INT, in, out, 10);
  expect_new_detail(ctx, s, CLR_ERR_UNSUPPORTED, "scan or", "'or'");
  s = clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, NULL, NULL, 10);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
               strstr(clr_context_error(ctx), "'or'") == NULL &&
               clr_context_error(ctx)[0] != '\0',
           "scan_buffer(NULL) after 'scan or': %s, detail '%s'",
           clr_status_name(s), clr_context_error(ctx));
  s = clr_prepare(ctx, NULL, CLR_OR, CLR_DOUBLE);
  expect_new_detail(ctx, s, CLR_ERR_UNSUPPORTED, "prepare or double",
                    "integer");
  check_usable(ctx, "option validation");
}

/* ------------------------------------------------------------ files */

/* Copy every file of the kernel directory into a fresh temporary
 * directory; the file named corrupt (if any) gets text appended.  Returns
 * the malloc'ed dir. */
static char *copy_kernels(const char *corrupt, const char *append) {
  char tmpl[] = "/tmp/clreduce-test-kernels-XXXXXX";
  char *dir = mkdtemp(tmpl);
  if (!dir)
    tu_die("mkdtemp: %s", strerror(errno));
  tf_copy_dir(kernel_src, dir, corrupt, append);
  char *r = tu_xmalloc(strlen(dir) + 1);
  strcpy(r, dir);
  return r;
}

/* Walk dir depth first: remove everything (remove != 0), or count the
 * files. */
static size_t walk_tree(const char *dir, int remove) {
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
      n += walk_tree(p, remove);
    else if (remove)
      unlink(p);
    else
      n++;
  }
  closedir(d);
  if (remove)
    rmdir(dir);
  return n;
}

static void remove_tree(const char *dir) { walk_tree(dir, 1); }
static size_t count_files(const char *dir) { return walk_tree(dir, 0); }

static clr_context *context_with(const char *kernel_dir, const char *cache) {
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_dir,
                            .cache_dir = cache};
  return tu_context_from(&cfg);
}

#define CORRUPTION "\nclreduce_test_corruption !!! this is not OpenCL C ;\n"

/* A corrupted interleaved kernel: its build fails with CLR_ERR_BUILD and
 * a build log naming the error; the other kernels still work in the same
 * context, and so does the interleaved one in a context with good sources.
 * The on-disk cache must not hand out a binary of the old source. */
static void test_build_failure(void) {
  char cache_tmpl[] = "/tmp/clreduce-test-cache-XXXXXX";
  char *cache = mkdtemp(cache_tmpl);
  if (!cache)
    tu_die("mkdtemp: %s", strerror(errno));
  int32_t x[100];
  for (int i = 0; i < 100; i++)
    x[i] = i;
  clr_value v;
  clr_options o;
  clr_options_init(&o);
  o.kernel = CLR_REDUCE_INTERLEAVED;

  /* 1. Good copy with a fresh cache: builds, and fills the cache. */
  char *good = copy_kernels(NULL, NULL);
  clr_context *c = context_with(good, cache);
  clr_status s = clr_reduce_host(c, &o, CLR_SUM, CLR_INT, x, 100, &v);
  TU_CHECK(s == CLR_OK && v.v.l == 4950,
           "good copy: interleaved sum %s %" PRId64, clr_status_name(s), v.v.l);
  TU_CHECK(clr_context_build_log(c)[0] == '\0',
           "no build log without a failed build");
  clr_context_release(c);
  TU_CHECK(count_files(cache) > 0,
           "the on-disk cache %s holds files after a "
           "build",
           cache);

  /* 2. Corrupt the interleaved source in place: same cache dir. */
  char path[4096];
  snprintf(path, sizeof path, "%s/reduce_interleaved.cl", good);
  FILE *f = fopen(path, "ab");
  if (!f)
    tu_die("cannot open %s", path);
  fputs(CORRUPTION, f);
  fclose(f);
  for (int with_cache = 1; with_cache >= 0; with_cache--) {
    c = context_with(good, with_cache ? cache : "");
    const char *what = with_cache ? "corrupted source, warm cache"
                                  : "corrupted source, no cache";
    s = clr_reduce_host(c, &o, CLR_SUM, CLR_INT, x, 100, &v);
    TU_CHECK(s == CLR_ERR_BUILD, "%s: got %s, want CLR_ERR_BUILD", what,
             clr_status_name(s));
    const char *log = clr_context_build_log(c);
    TU_CHECK(log && strstr(log, "clreduce_test_corruption") != NULL,
             "%s: the build log names the error (log: %.300s)", what,
             log ? log : "(null)");
    TU_CHECK(strstr(clr_context_error(c), "reduce_interleaved.cl") != NULL,
             "%s: the error detail names the file (%s)", what,
             clr_context_error(c));
    s = clr_prepare(c, &o, CLR_MAX, CLR_LONG);
    TU_EXPECT_STATUS(s, CLR_ERR_BUILD, "clr_prepare of the corrupted kernel");
    /* Other kernels: fine in the same context. */
    for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
      if (tu_reduce_kernels[ki] == CLR_REDUCE_INTERLEAVED)
        continue;
      clr_options o2;
      clr_options_init(&o2);
      o2.kernel = tu_reduce_kernels[ki];
      memset(&v, 0, sizeof v);
      s = clr_reduce_host(c, &o2, CLR_SUM, CLR_INT, x, 100, &v);
      TU_CHECK(s == CLR_OK && v.v.l == 4950,
               "%s: %s still works after the build failure: %s %" PRId64, what,
               clr_kernel_name(o2.kernel), clr_status_name(s), v.v.l);
    }
    /* The log of the last failed build stays until the next failure. */
    TU_CHECK(strstr(clr_context_build_log(c), "clreduce_test_corruption") !=
                 NULL,
             "%s: build log kept after later successful calls", what);
    clr_context_release(c);
  }
  /* 3. A good kernel dir with the same cache: still fine. */
  c = context_with(kernel_src, cache);
  s = clr_reduce_host(c, &o, CLR_SUM, CLR_INT, x, 100, &v);
  TU_CHECK(s == CLR_OK && v.v.l == 4950, "good sources after a failure: %s",
           clr_status_name(s));
  clr_context_release(c);

  /* 4. Damaged cache entries (truncated, then garbage) are ignored: the
   * kernels are built from source again. */
  for (int damage = 0; damage < 2; damage++) {
    DIR *d = opendir(cache);
    struct dirent *e;
    size_t damaged = 0;
    while (d && (e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.')
        continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", cache, e->d_name);
      struct stat st;
      if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      if (damage == 0) {
        if (truncate(p, st.st_size / 2) == 0)
          damaged++;
      } else {
        FILE *g = fopen(p, "r+b");
        if (g) {
          for (long i = 0; i < (long)st.st_size; i += 7)
            fputc((int)(i * 31) & 0xff, g);
          fclose(g);
          damaged++;
        }
      }
    }
    if (d)
      closedir(d);
    c = context_with(kernel_src, cache);
    memset(&v, 0, sizeof v);
    s = clr_reduce_host(c, &o, CLR_SUM, CLR_INT, x, 100, &v);
    TU_CHECK(damaged > 0 && s == CLR_OK && v.v.l == 4950,
             "%zu %s cache entries: rebuilt from source (%s, %" PRId64 ")",
             damaged, damage ? "overwritten" : "truncated", clr_status_name(s),
             v.v.l);
    clr_context_release(c);
  }

  /* 5. A corrupted common prelude: every kernel fails to build. */
  char *bad_common = copy_kernels("common.cl", CORRUPTION);
  c = context_with(bad_common, "");
  for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
    clr_options o2;
    clr_options_init(&o2);
    o2.kernel = tu_reduce_kernels[ki];
    s = clr_reduce_host(c, &o2, CLR_MIN, CLR_FLOAT, x, 10, &v);
    TU_CHECK(s == CLR_ERR_BUILD, "corrupted common.cl: %s gives %s",
             clr_kernel_name(o2.kernel), clr_status_name(s));
  }
  clr_context_release(c);

  remove_tree(good);
  remove_tree(bad_common);
  remove_tree(cache);
  free(good);
  free(bad_common);
}

/* Missing kernel directory or file: CLR_ERR_KERNEL_SOURCE, at creation or
 * at the first call, with a detail naming the path. */
static void test_missing_kernels(void) {
  const char *dirs[] = {"/nonexistent/clreduce-kernels", NULL};
  char *partial = copy_kernels(NULL, NULL);
  char path[4096];
  snprintf(path, sizeof path, "%s/reduce_sequential.cl", partial);
  unlink(path);
  dirs[1] = partial;
  for (int i = 0; i < 2; i++) {
    clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
    cfg.kernel_dir = dirs[i];
    cfg.cache_dir = "";
    clr_context *c = NULL;
    char detail[512] = "";
    clr_status s = clr_context_create(&cfg, &c, detail, sizeof detail);
    if (s != CLR_OK) {
      TU_EXPECT_STATUS(s, CLR_ERR_KERNEL_SOURCE, "create with missing kernels");
      TU_CHECK(strstr(detail, dirs[i]) != NULL, "detail names %s: %s", dirs[i],
               detail);
      continue;
    }
    float x[3] = {1, 2, 3};
    clr_value v;
    clr_options o;
    clr_options_init(&o);
    o.kernel = CLR_REDUCE_SEQUENTIAL;
    s = clr_reduce_host(c, &o, CLR_SUM, CLR_FLOAT, x, 3, &v);
    TU_EXPECT_STATUS(s, CLR_ERR_KERNEL_SOURCE, dirs[i]);
    TU_CHECK(strstr(clr_context_error(c), dirs[i]) != NULL,
             "detail names the directory: %s", clr_context_error(c));
    if (i == 1) { /* other kernels are there */
      o.kernel = CLR_REDUCE_COARSE;
      s = clr_reduce_host(c, &o, CLR_SUM, CLR_FLOAT, x, 3, &v);
      TU_CHECK(s == CLR_OK && v.v.f == 6.0f,
               "coarse works with reduce_sequential.cl missing: %s",
               clr_status_name(s));
    }
    clr_context_release(c);
  }
  remove_tree(partial);
  free(partial);
}

/* ------------------------------------------------------------ silence */

static size_t log_calls;
static void count_log(void *user, const char *msg) {
  (void)msg;
  (*(size_t *)user)++;
}

/* Read a captured file; returns its malloc'ed text. */
static char *slurp(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return NULL;
  char *text = tu_xmalloc((size_t)st.st_size + 1);
  ssize_t got = pread(fd, text, (size_t)st.st_size, 0);
  text[got > 0 ? got : 0] = '\0';
  return text;
}

/* Whether every line of text is clang's own summary ("2 errors
 * generated."), which PoCL's compiler prints on stderr by itself. */
static int only_compiler_noise(const char *text) {
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
    int k = 0;
    char tail[64] = "";
    if (len > 0 && !(sscanf(line, "%d %63[^\n]", &k, tail) == 2 &&
                     (strcmp(tail, "errors generated.") == 0 ||
                      strcmp(tail, "error generated.") == 0 ||
                      strcmp(tail, "warnings generated.") == 0 ||
                      strcmp(tail, "warning generated.") == 0)))
      return 0;
    p += len + (nl ? 1 : 0);
  }
  return 1;
}

/* Without a log callback the library prints nothing: stdout stays empty,
 * and stderr holds at most the OpenCL compiler's own "N errors
 * generated." lines (PoCL's clang prints them; the library does not). */
static void test_silence(void) {
  char *bad = copy_kernels("reduce_first_add.cl", CORRUPTION);
  char tmpl_out[] = "/tmp/clreduce-test-stdout-XXXXXX";
  char tmpl_err[] = "/tmp/clreduce-test-stderr-XXXXXX";
  int fd_out = mkstemp(tmpl_out), fd_err = mkstemp(tmpl_err);
  if (fd_out < 0 || fd_err < 0)
    tu_die("mkstemp: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  dup2(fd_out, 1);
  dup2(fd_err, 2);
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  cfg.kernel_dir = bad;
  cfg.cache_dir = "";
  clr_context *c = NULL;
  clr_status s1 = clr_context_create(&cfg, &c, NULL, 0);
  clr_status s2 = CLR_ERR_OPENCL, s3 = CLR_ERR_OPENCL, s4 = CLR_ERR_OPENCL;
  float x[5] = {1, 2, 3, 4, 5};
  clr_value v;
  if (c) {
    clr_options o;
    clr_options_init(&o);
    o.kernel = CLR_REDUCE_FIRST_ADD;
    s2 = clr_reduce_host(c, &o, CLR_SUM, CLR_FLOAT, x, 5, &v);
    s3 = clr_reduce_host(c, NULL, CLR_SUM, CLR_FLOAT, x, 0, &v);
    s4 = clr_reduce_host(c, NULL, CLR_MAX, CLR_FLOAT, x, 5, &v);
  }
  clr_context_release(c);
  cfg.device = "no-such-device-xyzzy";
  c = NULL;
  clr_status s5 = clr_context_create(&cfg, &c, NULL, 0);
  clr_context_release(c);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  char *out_text = slurp(fd_out), *err_text = slurp(fd_err);
  close(fd_out);
  close(fd_err);
  unlink(tmpl_out);
  unlink(tmpl_err);
  TU_CHECK(s1 == CLR_OK && s2 == CLR_ERR_BUILD &&
               s3 == CLR_ERR_INVALID_ARGUMENT && s4 == CLR_OK &&
               s5 == CLR_ERR_NO_DEVICE,
           "silence run: create %s, corrupted build %s, n=0 %s, max %s, "
           "no device %s",
           clr_status_name(s1), clr_status_name(s2), clr_status_name(s3),
           clr_status_name(s4), clr_status_name(s5));
  TU_CHECK(out_text && out_text[0] == '\0',
           "the library wrote to stdout without a log callback: '%.200s'",
           out_text ? out_text : "(unreadable)");
  TU_CHECK(err_text && only_compiler_noise(err_text),
           "the library wrote to stderr without a log callback: '%.200s'",
           err_text ? err_text : "(unreadable)");
  free(out_text);
  free(err_text);

  /* With a callback: no crash, and the callback is what gets any text. */
  cfg.device = NULL;
  cfg.log = count_log;
  cfg.log_user = &log_calls;
  c = NULL;
  s1 = clr_context_create(&cfg, &c, NULL, 0);
  TU_EXPECT_STATUS(s1, CLR_OK, "create with a log callback");
  if (s1 == CLR_OK) {
    clr_options o;
    clr_options_init(&o);
    s2 = clr_reduce_host(c, &o, CLR_SUM, CLR_FLOAT, x, 5, &v);
    TU_CHECK(s2 == CLR_OK && v.v.f == 15.0f, "sum with a log callback: %s",
             clr_status_name(s2));
  }
  clr_context_release(c);
  printf("log callback called %zu times\n", log_calls);
  remove_tree(bad);
  free(bad);
}

/* ------------------------------------------------------------ threads */

typedef struct thread_job {
  int id;
  int failures;
  char msg[256];
} thread_job;

static void *thread_main(void *arg) {
  thread_job *job = arg;
  clr_context *c = NULL;
  char detail[256] = "";
  if (clr_context_create(NULL, &c, detail, sizeof detail) != CLR_OK) {
    job->failures++;
    snprintf(job->msg, sizeof job->msg, "create: %s", detail);
    return NULL;
  }
  size_t n = 50001;
  int64_t *x = malloc(n * sizeof *x);
  if (!x) {
    job->failures++;
    clr_context_release(c);
    return NULL;
  }
  for (int round = 0; round < 20; round++) {
    int64_t want = 0;
    for (size_t i = 0; i < n; i++) {
      x[i] = (int64_t)(i * 7 + (size_t)round) * (job->id ? 1 : -1);
      want += x[i];
    }
    clr_options o;
    clr_options_init(&o);
    o.kernel = tu_reduce_kernels[(size_t)round % TU_N_REDUCE_KERNELS];
    clr_value v;
    clr_status s = clr_reduce_host(c, &o, CLR_SUM, CLR_LONG, x, n, &v);
    if (s != CLR_OK || v.v.l != want) {
      job->failures++;
      snprintf(job->msg, sizeof job->msg,
               "thread %d round %d: %s got %" PRId64 " want %" PRId64, job->id,
               round, clr_status_name(s), v.v.l, want);
    }
  }
  free(x);
  clr_context_release(c);
  return NULL;
}

static void test_threads(void) {
  pthread_t th[2];
  thread_job jobs[2];
  memset(jobs, 0, sizeof jobs);
  for (int i = 0; i < 2; i++) {
    jobs[i].id = i;
    if (pthread_create(&th[i], NULL, thread_main, &jobs[i]) != 0)
      tu_die("pthread_create failed");
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(th[i], NULL);
    TU_CHECK(jobs[i].failures == 0,
             "two contexts in two threads: thread %d: %d failures (%s)", i,
             jobs[i].failures, jobs[i].msg);
  }
}

int main(int argc, char **argv) {
  const char *version = NULL;
  int overflow_only = 0;
  const tu_option options[] = {{"--overflow", NULL, &overflow_only},
                               {"--kernel-src", &kernel_src, NULL},
                               {"--version", &version, NULL}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  if (!kernel_src)
    kernel_src = getenv("CLREDUCE_KERNEL_DIR");
  if (!kernel_src)
    tu_die("--kernel-src=DIR or CLREDUCE_KERNEL_DIR is needed");

  if (overflow_only) {
    clr_context *ctx = tu_context();
    test_size_overflow(ctx);
    clr_context_release(ctx);
    return tu_finish("test_api --overflow");
  }

  clr_context_release(NULL); /* a no-op */
  TU_CHECK(1, "clr_context_release(NULL) returned");
  test_status_strings();
  test_names();
  test_supports_and_result_types();
  test_version(version);
  test_options_init();
  tu_section("names, statuses, options");

  clr_context *ctx = tu_context();
  test_devices(ctx);
  tu_section("devices");
  test_invalid_arguments(ctx);
  tu_section("invalid arguments");
  test_timing_shape(ctx);
  test_timing_after_failure(ctx);
  test_no_profiling();
  tu_section("timing shape");
  test_launch_overflow(ctx);
  tu_section("launch overflow");
  test_option_validation(ctx);
  tu_section("option validation");
  clr_context_release(ctx);

  test_build_failure();
  tu_section("build failure");
  test_missing_kernels();
  tu_section("missing kernels");
  test_silence();
  tu_section("silence");
  test_threads();
  tu_section("threads");
  return tu_finish("test_api");
}
