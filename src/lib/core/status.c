/* Status codes and the names of types, operations and kernels (OpenCL
 * errors and the failure detail: error.c). */
#include "clr_config.h"
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

CLR_API const char *clr_status_name(clr_status s) {
  switch (s) {
#define CLR_X_NAME(name, msg)                                                  \
  case name:                                                                   \
    return #name;
    CLR_STATUS_MAP(CLR_X_NAME)
#undef CLR_X_NAME
  default:
    return "CLR_ERR_UNKNOWN";
  }
}

CLR_API const char *clr_status_string(clr_status s) {
  switch (s) {
#define CLR_X_MSG(name, msg)                                                   \
  case name:                                                                   \
    return msg;
    CLR_STATUS_MAP(CLR_X_MSG)
#undef CLR_X_MSG
  default:
    return "unknown status";
  }
}

static const clr_type_row type_rows[CLR_TYPE_COUNT] = {
#define CLR_TYPE_ROW(id, name, size, kind, computes, wide)                     \
  [CLR_##id] = {name, #id, size, kind, CLR_##computes, CLR_##wide},
#include "clreduce_types.def"
#undef CLR_TYPE_ROW
};
static const clr_op_row op_rows[CLR_OP_COUNT] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   what)                                                       \
  [CLR_##id] = {name,     #id,    CLR_##runs, CLR_##combine, CLR_##partial,    \
                identity, result, flags,      what},
#include "clreduce_ops.def"
#undef CLR_OP_ROW
};
static const char *const map_names[CLR_MAP_COUNT] = {"none", "abs", "square",
                                                     "expr"};

typedef struct kernel_row {
  const char *name;
  int scan;
  int ops;
  const char *source;
  const char *description;
} kernel_row;

static const kernel_row kernels[CLR_KERNEL_COUNT] = {
#define CLR_KERNEL(id, name, scan, ops, source, what)                          \
  [id] = {name, scan, ops, source, what},
#include "kernels.def"
};
/* Every clr_kernel has its row, in order. */
_Static_assert(0
#define CLR_KERNEL(id, name, scan, ops, source, what) +1
#include "kernels.def"
                   == CLR_KERNEL_COUNT,
               "kernels.def must have one row per clr_kernel");

/* Row i of a table, or NULL past its end. */
#define CLR_ROW_AT(rows, i)                                                    \
  ((size_t)(i) < sizeof(rows) / sizeof((rows)[0]) ? &(rows)[i] : NULL)
const clr_type_row *clr_type_info(clr_type t) {
  return CLR_ROW_AT(type_rows, t);
}
const clr_op_row *clr_op_info(clr_op op) { return CLR_ROW_AT(op_rows, op); }
unsigned clr_op_flags(clr_op op) {
  const clr_op_row *r = clr_op_info(op);
  return r ? r->flags : 0u;
}

CLR_API const char *clr_type_name(clr_type t) {
  const clr_type_row *r = clr_type_info(t);
  return r ? r->name : "?";
}
CLR_API size_t clr_type_size(clr_type t) {
  const clr_type_row *r = clr_type_info(t);
  return r ? r->size : 0;
}
CLR_API const char *clr_op_name(clr_op op) {
  const clr_op_row *r = clr_op_info(op);
  return r ? r->name : "?";
}
CLR_API const char *clr_map_name(clr_map m) {
  return (unsigned)m < CLR_MAP_COUNT ? map_names[m] : "?";
}
CLR_API const char *clr_kernel_name(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT ? kernels[k].name : "?";
}
CLR_API const char *clr_kernel_description(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT ? kernels[k].description : "";
}
const char *clr_kernel_source(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT ? kernels[k].source : NULL;
}

/* The row whose name (the member `name` of rows of `stride` bytes) is s;
 * -1 when none is. */
static int lookup(const char *s, const void *rows, size_t stride, int count) {
  if (!s)
    return -1;
  for (int i = 0; i < count; i++) {
    const char *name = *(const char *const *)(const void *)((const char *)rows +
                                                            (size_t)i * stride);
    if (strcmp(s, name) == 0)
      return i;
  }
  return -1;
}

/* clr_type_from_name and its kin: a name's index in its table (whose rows
 * start with their name). */
#define CLR_FROM_NAME(fn, T, rows, count)                                      \
  CLR_API clr_status fn(const char *s, T *out) {                               \
    int i = lookup(s, rows, sizeof rows[0], count);                            \
    if (i < 0 || !out)                                                         \
      return CLR_ERR_INVALID_ARGUMENT;                                         \
    *out = (T)i;                                                               \
    return CLR_OK;                                                             \
  }
CLR_FROM_NAME(clr_type_from_name, clr_type, type_rows, CLR_TYPE_COUNT)
CLR_FROM_NAME(clr_op_from_name, clr_op, op_rows, CLR_OP_COUNT)
CLR_FROM_NAME(clr_map_from_name, clr_map, map_names, CLR_MAP_COUNT)
CLR_FROM_NAME(clr_kernel_from_name, clr_kernel, kernels, CLR_KERNEL_COUNT)
#undef CLR_FROM_NAME

CLR_API int clr_kernel_is_scan(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT && kernels[k].scan;
}

CLR_API int clr_kernel_takes_maps(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT && kernels[k].ops >= 2;
}

int clr_op_is_indexed(clr_op op) {
  return (clr_op_flags(op) & CLR_OPF_INDEXED) != 0;
}

int clr_op_is_moments(clr_op op) {
  return (clr_op_flags(op) & CLR_OPF_MOMENTS) != 0;
}

int clr_op_is_record(clr_op op) {
  return (clr_op_flags(op) & (CLR_OPF_INDEXED | CLR_OPF_MOMENTS)) != 0;
}

int clr_contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0)
    return 1;
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return 1;
  }
  return 0;
}

int clr_type_is_float(clr_type t) {
  const clr_type_row *r = clr_type_info(t);
  return r && r->kind == CLR_KIND_FLOAT;
}

/* A mean's result type when its sum is in sum_type: float stays float,
 * everything else gives double. */
static clr_type mean_type(clr_type sum_type) {
  return sum_type == CLR_FLOAT ? CLR_FLOAT : CLR_DOUBLE;
}

CLR_API clr_type clr_result_type(clr_op op, clr_type t, int narrow) {
  const clr_op_row *o = clr_op_info(op);
  const clr_type_row *r = clr_type_info(t);
  if (!o || !r)
    return t;
  switch (o->result) {
  case CLR_RES_TRUTH:
    return CLR_INT;
  case CLR_RES_MEAN:
    return mean_type(r->computes);
  case CLR_RES_WIDE:
    return narrow ? r->computes : r->wide;
  default:
    return r->computes;
  }
}

clr_type clr_opt_result_type(const clr_options *opt, clr_op op, clr_type t) {
  const clr_op_row *o = clr_op_info(op);
  if (o && clr_type_info(opt->accumulate_in) && o->result != CLR_RES_TRUTH) {
    clr_type acc = opt->accumulate_in;
    return o->result == CLR_RES_MEAN ? mean_type(acc) : acc;
  }
  return clr_result_type(op, t, opt->narrow_accumulator);
}

clr_type clr_opt_scan_output_type(const clr_options *opt, clr_type t) {
  if (clr_type_info(opt->accumulate_in))
    return opt->accumulate_in;
  const clr_type_row *r = clr_type_info(t);
  return r ? r->computes : t;
}

size_t clr_opt_result_bytes(const clr_options *opt, clr_op op, clr_type t) {
  if (!clr_op_info(op) || !clr_type_info(t))
    return 0;
  size_t s = clr_type_size(clr_opt_result_type(opt, op, t));
  /* cl/records.cl's record: two values, two 64-bit indices; cl/moments.cl's
   * (and a finished result's): two values and a 64-bit count */
  return clr_op_is_indexed(op)   ? 2 * s + 16
         : clr_op_is_moments(op) ? 2 * s + 8
                                 : s;
}

CLR_API clr_value clr_result_at(clr_op op, clr_type result_type,
                                const void *results, size_t i) {
  clr_value v;
  memset(&v, 0, sizeof v);
  const clr_op_row *o = clr_op_info(op);
  if (!o || !clr_type_info(result_type) || !results)
    return v;
  v.type = result_type;
  v.op = op;
  size_t s = clr_type_size(result_type);
  const unsigned char *r = (const unsigned char *)results;
  if (o->flags & CLR_OPF_MOMENTS) { /* finished: value, mean, count */
    r += i * (2 * s + 8);
    memcpy(&v.v, r, s);
    memcpy(&v.max, r + s, s);
    return v;
  }
  if (!(o->flags & CLR_OPF_INDEXED)) {
    memcpy(&v.v, r + i * s, s);
    return v;
  }
  r += i * (2 * s + 16); /* lo, hi, ilo, ihi */
  int max = o->combine == CLR_ARGMAX;
  memcpy(&v.v, r + (max ? s : 0), s);
  memcpy(&v.index, r + 2 * s + (max ? 8 : 0), 8);
  if (o->combine == CLR_MINMAX) {
    memcpy(&v.max, r + s, s);
    memcpy(&v.max_index, r + 2 * s + 8, 8);
  }
  return v;
}

int clr_accumulator_fits(clr_type in, clr_type acc) {
  const clr_type_row *i = clr_type_info(in), *a = clr_type_info(acc);
  if (!i || !a)
    return 0;
  const clr_type_row *c = clr_type_info(i->computes);
  return a->kind == c->kind && a->size >= c->size;
}

clr_scalar clr_op_identity(clr_op op, clr_type t) {
  clr_scalar v;
  memset(&v, 0, sizeof v);
  const clr_op_row *o = clr_op_info(op);
  const clr_type_row *r = clr_type_info(t);
  if (!o || !r)
    return v;
  int fp = r->kind == CLR_KIND_FLOAT;
  int id = o->identity;
  if (id == CLR_ID_NAN_TOP || id == CLR_ID_NAN_BOTTOM) {
    if (fp) {
      if (t == CLR_DOUBLE)
        v.d = (double)NAN;
      else
        v.f = NAN;
      return v;
    }
    id = id == CLR_ID_NAN_TOP ? CLR_ID_TOP : CLR_ID_BOTTOM;
  }
  int top = id == CLR_ID_TOP;
  switch (id) {
  case CLR_ID_ONE:
    if (t == CLR_DOUBLE)
      v.d = 1.0;
    else if (fp)
      v.f = 1.0f;
    else if (r->size == 8)
      v.ul = 1;
    else
      v.u = 1;
    break;
  case CLR_ID_TOP:
  case CLR_ID_BOTTOM:
    if (t == CLR_DOUBLE)
      v.d = top ? (double)INFINITY : -(double)INFINITY;
    else if (fp)
      v.f = top ? INFINITY : -INFINITY;
    else if (r->kind == CLR_KIND_UNSIGNED && r->size == 8)
      v.ul = top ? UINT64_MAX : 0;
    else if (r->kind == CLR_KIND_UNSIGNED)
      v.u = top ? UINT32_MAX : 0;
    else if (r->size == 8)
      v.l = top ? INT64_MAX : INT64_MIN;
    else
      v.i = top ? INT32_MAX : INT32_MIN;
    break;
  default: /* CLR_ID_ZERO: all bits zero */
    break;
  }
  return v;
}

void clr_op_list(char *buf, size_t size, unsigned flags) {
  size_t at = 0, count = 0, total = 0;
  for (int op = 0; op < CLR_OP_COUNT; op++)
    total += (op_rows[op].flags & flags) == flags;
  if (size)
    buf[0] = '\0';
  for (int op = 0; op < CLR_OP_COUNT && at < size; op++) {
    if ((op_rows[op].flags & flags) != flags)
      continue;
    count++;
    int w = snprintf(buf + at, size - at, "%s%s",
                     count == 1       ? ""
                     : count == total ? " and "
                                      : ", ",
                     op_rows[op].name);
    if (w < 0)
      break;
    at += (size_t)w;
  }
}

int clr_mean_counts(clr_op op, clr_type t) {
  unsigned f = clr_op_flags(op);
  return (f & CLR_OPF_MEAN) && (f & CLR_OPF_SKIPS_NAN) && clr_type_is_float(t);
}

#define CLR_COUNT_EXPR "isnan((float)(%s)) ? 0 : 1"
_Static_assert(sizeof CLR_COUNT_EXPR - 2 < CLR_COUNT_EXPR_EXTRA,
               "CLR_COUNT_EXPR_EXTRA holds the count's wrapping");

void clr_count_options(const clr_options *opt, clr_options *o, char *expr,
                       size_t size) {
  *o = *opt;
  if (opt->map == CLR_MAP_EXPR)
    snprintf(expr, size, CLR_COUNT_EXPR, opt->map_expr ? opt->map_expr : "");
  else /* abs and square keep a NaN a NaN, and nothing else */
    snprintf(expr, size, CLR_COUNT_EXPR, "x");
  o->map = CLR_MAP_EXPR;
  o->map_expr = expr;
  o->kernel = CLR_REDUCE_COARSE;
  o->accumulate_in = CLR_ULONG;
  o->narrow_accumulator = 0;
  o->exact = 0;
}

CLR_API clr_status clr_op_supports(clr_op op, clr_type t) {
  const clr_op_row *o = clr_op_info(op);
  const clr_type_row *r = clr_type_info(t);
  if (!o || !r)
    return CLR_ERR_INVALID_ARGUMENT;
  if ((o->flags & CLR_OPF_INTEGER) && r->kind == CLR_KIND_FLOAT)
    return CLR_ERR_UNSUPPORTED;
  /* a mean of a sum that wraps */
  if ((o->flags & CLR_OPF_MEAN) && r->kind != CLR_KIND_FLOAT &&
      clr_type_size(r->wide) <= r->size)
    return CLR_ERR_UNSUPPORTED;
  return CLR_OK;
}

CLR_API clr_status clr_kernel_supports(clr_kernel k, clr_op op, clr_type t) {
  clr_status st = clr_op_supports(op, t);
  if (st != CLR_OK || (unsigned)k >= CLR_KERNEL_COUNT)
    return st != CLR_OK ? st : CLR_ERR_INVALID_ARGUMENT;
  unsigned f = clr_op_flags(op);
  if (kernels[k].scan && !(f & CLR_OPF_SCAN))
    return CLR_ERR_UNSUPPORTED;
  if (kernels[k].ops < 1 && (f & CLR_OPF_LOGICAL))
    return CLR_ERR_UNSUPPORTED;
  if (kernels[k].ops < 2 && (f & (CLR_OPF_INDEXED | CLR_OPF_MOMENTS)))
    return CLR_ERR_UNSUPPORTED;
  return CLR_OK;
}

clr_status clr_struct_size_check(const clr_struct_layout *l, uint32_t size,
                                 char *why, size_t why_size) {
  if (size == 0) {
    snprintf(why, why_size,
             "%s.struct_size is 0: the struct was not initialised (%s)",
             l->name, l->init);
    return CLR_ERR_INVALID_ARGUMENT;
  }
  if (size > l->size) {
    snprintf(why, why_size,
             "%s.struct_size is %u bytes, more than the %zu of this "
             "library's %s (clreduce %s): a struct from a newer clreduce "
             "header than the library",
             l->name, (unsigned)size, l->size, l->name, CLR_VERSION);
    return CLR_ERR_VERSION;
  }
  if (size < l->fields[0].end) {
    snprintf(why, why_size,
             "%s.struct_size is %u bytes, less than the smallest %s (%zu "
             "bytes, up to its field %s): no clreduce header's struct",
             l->name, (unsigned)size, l->name, l->fields[0].end,
             l->fields[0].name);
    return CLR_ERR_VERSION;
  }
  for (size_t i = 0; i < l->n_fields; i++)
    if (size > l->fields[i].begin && size < l->fields[i].end) {
      snprintf(why, why_size,
               "%s.struct_size is %u bytes, which ends inside its field %s "
               "(bytes %zu to %zu): no clreduce header's struct",
               l->name, (unsigned)size, l->fields[i].name, l->fields[i].begin,
               l->fields[i].end);
      return CLR_ERR_VERSION;
    }
  return CLR_OK;
}

void clr_struct_fields_copy(void *dst, const void *src, uint32_t size) {
  memcpy((char *)dst + sizeof(uint32_t), (const char *)src + sizeof(uint32_t),
         size - sizeof(uint32_t));
}

CLR_API const char *clr_version(void) { return CLR_VERSION; }
