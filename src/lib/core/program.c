/* Where a kernel gets built: kernel sources are read from the kernel
 * directory (common.cl prelude + one algorithm file), specialised by -D
 * options for type, operation and shape, built for the context's device
 * (or loaded from the on-disk binary cache) and kept in the context. */
#include "binary_cache.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a whole file; NULL with errno set on failure.  From the sources
 * built into the library when dir says so. */
static char *read_text(const char *dir, const char *name, size_t *len) {
#if CLR_EMBEDDED_KERNELS
  if (strcmp(dir, CLR_EMBEDDED_KERNEL_DIR) == 0) {
    for (const clr_embedded_file *k = clr_embedded_kernels; k->name; k++)
      if (strcmp(k->name, name) == 0) {
        size_t n = strlen(k->text);
        char *copy = malloc(n + 1);
        if (!copy) {
          errno = ENOMEM;
          return NULL;
        }
        memcpy(copy, k->text, n + 1);
        *len = n;
        return copy;
      }
    errno = ENOENT;
    return NULL;
  }
#endif
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (cap - size < 4096) {
      cap = cap ? cap * 2 : 16384;
      char *nb = realloc(buf, cap + 1);
      if (!nb) {
        free(buf);
        fclose(f);
        errno = ENOMEM;
        return NULL;
      }
      buf = nb;
    }
    size_t got = fread(buf + size, 1, cap - size, f);
    size += got;
    if (got == 0)
      break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  buf[size] = '\0';
  *len = size;
  return buf;
}

/* The -D options cl/common.cl decodes, named from the tables' rows:
 * -DCLR_IN_<type>=1 and -DCLR_ACC_<type>=1 (clreduce_types.def's ids),
 * -DCLR_OP_<combine>=1 (the op row's combine, clreduce_ops.def) and a
 * -DCLR_OP_<flag>=1 for each of the row's flags a kernel branches on;
 * CLR_MAP 0..3 = none, abs, square, expression; CLR_LAYOUT 1, 2 =
 * strided, contiguous. */
_Static_assert(CLR_MAP_NONE == 0 && CLR_MAP_ABS == 1 && CLR_MAP_SQUARE == 2 &&
                   CLR_MAP_EXPR == 3 && CLR_MAP_COUNT == 4,
               "cl/common.cl's CLR_MAP codes");
_Static_assert(CLR_LAYOUT_STRIDED == 1 && CLR_LAYOUT_CONTIGUOUS == 2,
               "the kernels' CLR_LAYOUT codes");

/* The op row's flags the kernels see, as -DCLR_OP_<name>=1. */
static const struct {
  unsigned flag;
  const char *name;
} kernel_flags[] = {{CLR_OPF_INDEXED, "IS_INDEXED"},
                    {CLR_OPF_LOGICAL, "IS_LOGICAL"},
                    {CLR_OPF_SKIPS_NAN, "SKIPS_NAN"},
                    {CLR_OPF_MOMENTS, "IS_MOMENTS"}};

static void build_options(const clr_build_spec *s, char *buf, size_t size) {
  const clr_op_row *op = clr_op_info(s->op);
  int n = snprintf(buf, size,
                   "-cl-std=CL1.2 -DCLR_IN_%s=1 -DCLR_ACC_%s=1 "
                   "-DCLR_OP_%s=1",
                   clr_type_info(s->in)->id, clr_type_info(s->acc)->id,
                   clr_op_info(op->combine)->id);
  /* NaN skipping means nothing to integers: their kernels are the plain
   * operation's */
  unsigned flags = op->flags;
  if (!clr_type_is_float(s->acc))
    flags &= ~CLR_OPF_SKIPS_NAN;
  for (size_t i = 0; i < sizeof kernel_flags / sizeof kernel_flags[0]; i++)
    if ((flags & kernel_flags[i].flag) && n > 0 && (size_t)n < size)
      n += snprintf(buf + n, size - (size_t)n, " -DCLR_OP_%s=1",
                    kernel_flags[i].name);
  if (s->vec && n > 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, " -DCLR_VEC=%u", s->vec);
  if (s->layout && n > 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, " -DCLR_LAYOUT=%u", s->layout);
  if (s->aligned && n > 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, " -DCLR_ALIGNED=1");
  if (s->map && n > 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, " -DCLR_MAP=%d", (int)s->map);
  if (s->inputs == 2 && n > 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, " -DCLR_INPUTS=2");
  if (s->extra && n > 0 && (size_t)n < size)
    snprintf(buf + n, size - (size_t)n, " %s", s->extra);
}

static void keep_build_log(clr_context *ctx, cl_program prog) {
  size_t len = 0;
  free(ctx->build_log);
  ctx->build_log = NULL;
  if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                            &len) != CL_SUCCESS)
    return;
  ctx->build_log = malloc(len + 1);
  if (!ctx->build_log)
    return;
  if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, len,
                            ctx->build_log, NULL) != CL_SUCCESS)
    len = 0;
  ctx->build_log[len] = '\0';
}

/* A successful build's log (the compiler's warnings), to the context's
 * log callback a line at a time, never to stderr; the context keeps only
 * a failed build's log. */
static void log_build_warnings(clr_context *ctx, const clr_build_spec *s,
                               const char *options, cl_program prog) {
  size_t len = 0;
  if (!ctx->log ||
      clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                            &len) != CL_SUCCESS ||
      len < 2)
    return;
  char *text = malloc(len + 1);
  if (!text)
    return;
  if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, len, text,
                            NULL) != CL_SUCCESS)
    len = 0;
  text[len] = '\0';
  int header = 0;
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, "\n");
    size_t blank = strspn(p, " \t\r");
    if (blank < n) {
      if (!header++)
        clr_log(ctx, "build log of %s%s%s (options '%s'):", s->source,
                s->source2 ? " + " : "", s->source2 ? s->source2 : "", options);
      clr_log(ctx, "  %.*s", (int)(n < 480 ? n : 480), p);
    }
    p += n + (p[n] == '\n');
  }
  free(text);
}

/* Build from source text (prelude + algorithm). */
static clr_status build_from_source(clr_context *ctx, const clr_build_spec *s,
                                    const char *options, const char *text,
                                    size_t text_len, cl_program *out) {
  cl_int err;
  const char *strings[1] = {text};
  cl_program prog =
      clCreateProgramWithSource(ctx->cl, 1, strings, &text_len, &err);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clCreateProgramWithSource", err);
  err = clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    keep_build_log(ctx, prog);
    clReleaseProgram(prog);
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS)
      return clr_fail(ctx, CLR_ERR_BUILD,
                      "building %s/%s%s%s failed (%s, options '%s'%s%.200s); "
                      "see the build log",
                      ctx->kernel_dir, s->source, s->source2 ? " + " : "",
                      s->source2 ? s->source2 : "", clr_cl_error_name(err),
                      options, s->prelude ? ", after " : "",
                      s->prelude ? s->prelude : "");
    return clr_cl_fail(ctx, "clBuildProgram", err);
  }
  log_build_warnings(ctx, s, options, prog);
  *out = prog;
  return CLR_OK;
}

/* A kernel source that cannot be read: what was tried, and the two ways
 * to give the library its kernels.  The installed directory not found
 * anywhere lists every place looked in (install_paths.c); a directory
 * given by clr_context_config.kernel_dir or $CLREDUCE_KERNEL_DIR is
 * named alone. */
static clr_status source_missing(clr_context *ctx, const char *name, int err) {
  static const char fix[] =
      "set $CLREDUCE_KERNEL_DIR to a copy of the kernel sources (cl/), or "
      "build the library with -Dembed_kernels=true to carry them";
  char found[4096], tried[CLR_DETAIL_SIZE];
  if (!clr_installed_dir("cl", "common.cl", found, sizeof found) &&
      strcmp(found, ctx->kernel_dir) == 0) {
    clr_installed_dirs_tried("cl", tried, sizeof tried);
    return clr_fail(ctx, CLR_ERR_KERNEL_SOURCE,
                    "cannot read kernel source %s: no installed kernel "
                    "directory found (%s); tried %s",
                    name, fix, tried);
  }
  return clr_fail(ctx, CLR_ERR_KERNEL_SOURCE,
                  "cannot read kernel source %s/%s: %s (%s)", ctx->kernel_dir,
                  name, strerror(err), fix);
}

/* Concatenate the prelude, common.cl, the shared helpers, for argmin,
 * argmax and minmax records.cl (their (value, index) records), for var and
 * std moments.cl (their (count, mean, M2) records), the
 * algorithm source and the optional second source (the scan kernels'
 * shared tile kernel). */
static clr_status load_source(clr_context *ctx, const clr_build_spec *s,
                              char **text, size_t *len) {
  const char *records = clr_op_is_indexed(s->op)   ? "records.cl"
                        : clr_op_is_moments(s->op) ? "moments.cl"
                                                   : NULL;
  const char *names[5] = {"common.cl", s->helpers, records, s->source,
                          s->source2};
  char *parts[5] = {NULL, NULL, NULL, NULL, NULL};
  size_t lens[5] = {0, 0, 0, 0, 0};
  size_t pre = s->prelude ? strlen(s->prelude) : 0, total = pre + 1;
  clr_status st = CLR_OK;
  for (int i = 0; i < 5; i++) {
    if (!names[i])
      continue;
    parts[i] = read_text(ctx->kernel_dir, names[i], &lens[i]);
    if (!parts[i]) {
      st = source_missing(ctx, names[i], errno);
      goto done;
    }
    total += lens[i] + 1;
  }
  char *all = malloc(total + 1);
  if (!all) {
    st = clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "out of host memory");
    goto done;
  }
  size_t at = 0;
  if (pre) {
    memcpy(all, s->prelude, pre);
    at = pre;
    all[at++] = '\n';
  }
  for (int i = 0; i < 5; i++) {
    if (!parts[i])
      continue;
    memcpy(all + at, parts[i], lens[i]);
    at += lens[i];
    all[at++] = '\n';
  }
  all[at] = '\0';
  *text = all;
  *len = at;
done:
  for (int i = 0; i < 5; i++)
    free(parts[i]);
  return st;
}

static void release_entry(clr_program_entry *e) {
  free(e->prelude);
  if (e->kernel)
    clReleaseKernel(e->kernel);
  if (e->program)
    clReleaseProgram(e->program);
  memset(e, 0, sizeof *e);
}

void clr_release_programs(clr_context *ctx) {
  for (size_t i = 0; i < ctx->n_programs; i++)
    release_entry(&ctx->programs[i]);
  ctx->n_programs = 0;
}

clr_status clr_get_kernel(clr_context *ctx, const clr_build_spec *spec,
                          clr_program_entry **out) {
  char options[512], key[768];
  clr_status st;
  cl_int err;
  if ((spec->in == CLR_DOUBLE || spec->acc == CLR_DOUBLE) &&
      !ctx->desc.has_fp64)
    return clr_fail(ctx, CLR_ERR_NO_FP64,
                    "device '%s' has no double-precision support (cl_khr_fp64)",
                    ctx->desc.device_name);
  build_options(spec, options, sizeof options);
  snprintf(key, sizeof key, "%s+%s+%s|%s|%s",
           spec->helpers ? spec->helpers : "", spec->source,
           spec->source2 ? spec->source2 : "", spec->kernel, options);
  const char *prelude = spec->prelude ? spec->prelude : "";
  for (size_t i = 0; i < ctx->n_programs; i++)
    if (strcmp(ctx->programs[i].key, key) == 0 &&
        strcmp(ctx->programs[i].prelude, prelude) == 0) {
      *out = &ctx->programs[i];
      return CLR_OK;
    }
  /* Never evict here: the caller may hold entries fetched earlier in this
   * call.  clr_begin_call keeps CLR_PROGRAMS_PER_CALL slots free. */
  if (ctx->n_programs == CLR_MAX_PROGRAMS)
    return clr_fail(ctx, CLR_ERR_OPENCL,
                    "internal: more than %d kernels in one call",
                    CLR_PROGRAMS_PER_CALL);

  double t0 = clr_now_ms();
  char *text = NULL;
  size_t text_len = 0;
  st = load_source(ctx, spec, &text, &text_len);
  if (st != CLR_OK)
    return st;
  cl_program prog = NULL;
  /* A cached program stays marked as being loaded until its kernel is
   * made (binary_cache.c), so a crash in the driver meanwhile drops the
   * entry for the next run instead of repeating. */
  clr_cache_claim claim;
  if (!clr_binary_cache_load(ctx, options, text, text_len, spec->kernel, &prog,
                             &claim)) {
    st = build_from_source(ctx, spec, options, text, text_len, &prog);
    if (st == CLR_OK)
      clr_binary_cache_store(ctx, options, text, text_len, prog);
  }
  free(text);
  if (st != CLR_OK)
    return st;

  clr_program_entry *e = &ctx->programs[ctx->n_programs];
  memset(e, 0, sizeof *e);
  e->program = prog;
  e->prelude = malloc(strlen(prelude) + 1);
  if (!e->prelude) {
    clr_binary_cache_done(ctx, &claim, 1);
    release_entry(e);
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  strcpy(e->prelude, prelude);
  e->kernel = clCreateKernel(prog, spec->kernel, &err);
  /* A cached program that gives no kernel is dropped from the cache. */
  clr_binary_cache_done(ctx, &claim, err == CL_SUCCESS);
  if (err != CL_SUCCESS) {
    e->kernel = NULL;
    release_entry(e);
    return clr_cl_fail(ctx, "clCreateKernel", err);
  }
  err = clGetKernelWorkGroupInfo(e->kernel, ctx->device,
                                 CL_KERNEL_WORK_GROUP_SIZE, sizeof e->max_wg,
                                 &e->max_wg, NULL);
  if (err == CL_SUCCESS)
    err = clGetKernelWorkGroupInfo(e->kernel, ctx->device,
                                   CL_KERNEL_LOCAL_MEM_SIZE,
                                   sizeof e->local_used, &e->local_used, NULL);
  if (err != CL_SUCCESS) {
    release_entry(e);
    return clr_cl_fail(ctx, "clGetKernelWorkGroupInfo", err);
  }
  snprintf(e->key, sizeof e->key, "%s", key);
  ctx->n_programs++;
  ctx->timing.build_ms += clr_now_ms() - t0;
  *out = e;
  return CLR_OK;
}

clr_status clr_set_args(clr_context *ctx, cl_kernel k, cl_uint first,
                        const clr_arg *args, size_t count) {
  clr_status st = CLR_OK;
  for (size_t i = 0; i < count && st == CLR_OK; i++)
    st = clr_set_arg_at(ctx, k, first + (cl_uint)i, args[i]);
  return st;
}

clr_status clr_set_arg_at(clr_context *ctx, cl_kernel k, cl_uint index,
                          clr_arg arg) {
  cl_int err = clSetKernelArg(k, index, arg.size, arg.value);
  if (err != CL_SUCCESS)
    return clr_fail(ctx, clr_status_from_cl(err),
                    "clSetKernelArg (argument %u) failed: %s (%d)",
                    (unsigned)index, clr_cl_error_name(err), (int)err);
  return CLR_OK;
}
