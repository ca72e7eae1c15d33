/* Status codes and the names of types, operations and kernels (OpenCL
 * errors and the failure detail: error.c). */
#include "clr_config.h"
#include "internal.h"

#include <ctype.h>
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

static const char *const type_names[CLR_TYPE_COUNT] = {
    "float", "double", "int", "uint", "long", "ulong", "half"};
static const size_t type_sizes[CLR_TYPE_COUNT] = {4, 8, 4, 4, 8, 8, 2};
static const char *const op_names[CLR_OP_COUNT] = {
    "sum", "prod",   "min",    "max",    "and",
    "or",  "argmin", "argmax", "minmax", "mean"};
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
static const char *const kernel_names[CLR_KERNEL_COUNT] = {
#define CLR_KERNEL(id, name, scan, ops, source, what) [id] = name,
#include "kernels.def"
};
/* Every clr_kernel has its row, in order. */
_Static_assert(0
#define CLR_KERNEL(id, name, scan, ops, source, what) +1
#include "kernels.def"
                   == CLR_KERNEL_COUNT,
               "kernels.def must have one row per clr_kernel");

CLR_API const char *clr_type_name(clr_type t) {
  return (unsigned)t < CLR_TYPE_COUNT ? type_names[t] : "?";
}
CLR_API size_t clr_type_size(clr_type t) {
  return (unsigned)t < CLR_TYPE_COUNT ? type_sizes[t] : 0;
}
CLR_API const char *clr_op_name(clr_op op) {
  return (unsigned)op < CLR_OP_COUNT ? op_names[op] : "?";
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

static int lookup(const char *s, const char *const *names, int count) {
  if (!s)
    return -1;
  for (int i = 0; i < count; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return -1;
}

/* clr_type_from_name and its kin: a name's index in its table. */
#define CLR_FROM_NAME(fn, T, names, count)                                     \
  CLR_API clr_status fn(const char *s, T *out) {                               \
    int i = lookup(s, names, count);                                           \
    if (i < 0 || !out)                                                         \
      return CLR_ERR_INVALID_ARGUMENT;                                         \
    *out = (T)i;                                                               \
    return CLR_OK;                                                             \
  }
CLR_FROM_NAME(clr_type_from_name, clr_type, type_names, CLR_TYPE_COUNT)
CLR_FROM_NAME(clr_op_from_name, clr_op, op_names, CLR_OP_COUNT)
CLR_FROM_NAME(clr_map_from_name, clr_map, map_names, CLR_MAP_COUNT)
CLR_FROM_NAME(clr_kernel_from_name, clr_kernel, kernel_names, CLR_KERNEL_COUNT)
#undef CLR_FROM_NAME

CLR_API int clr_kernel_is_scan(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT && kernels[k].scan;
}

CLR_API int clr_kernel_takes_maps(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT && kernels[k].ops >= 2;
}

int clr_op_is_indexed(clr_op op) {
  return op == CLR_ARGMIN || op == CLR_ARGMAX || op == CLR_MINMAX;
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
  return t == CLR_FLOAT || t == CLR_DOUBLE || t == CLR_HALF;
}

CLR_API clr_type clr_result_type(clr_op op, clr_type t, int narrow) {
  if (op == CLR_MEAN)
    return t == CLR_FLOAT || t == CLR_HALF ? CLR_FLOAT : CLR_DOUBLE;
  if (op == CLR_AND || op == CLR_OR)
    return CLR_INT;
  if (t == CLR_HALF)
    return CLR_FLOAT;
  if ((op == CLR_SUM || op == CLR_PROD) && !narrow) {
    if (t == CLR_INT)
      return CLR_LONG;
    if (t == CLR_UINT)
      return CLR_ULONG;
  }
  return t;
}

CLR_API clr_type clr_options_result_type(const clr_options *opt, clr_op op,
                                         clr_type t) {
  if (opt && opt->accumulate_in && opt->accumulate_in <= CLR_TYPE_COUNT &&
      op != CLR_AND && op != CLR_OR) {
    clr_type acc = (clr_type)(opt->accumulate_in - 1);
    if (op == CLR_MEAN) /* the mean of a sum in acc */
      return acc == CLR_FLOAT ? CLR_FLOAT : CLR_DOUBLE;
    return acc;
  }
  return clr_result_type(op, t, opt ? opt->narrow_accumulator : 0);
}

CLR_API clr_type clr_scan_output_type(const clr_options *opt, clr_type t) {
  if (opt && opt->accumulate_in && opt->accumulate_in <= CLR_TYPE_COUNT)
    return (clr_type)(opt->accumulate_in - 1);
  return t == CLR_HALF ? CLR_FLOAT : t;
}

CLR_API size_t clr_result_bytes(const clr_options *opt, clr_op op, clr_type t) {
  if ((unsigned)op >= CLR_OP_COUNT || (unsigned)t >= CLR_TYPE_COUNT)
    return 0;
  size_t s = clr_type_size(clr_options_result_type(opt, op, t));
  /* cl/reduce_extrema.cl's record: two values, two 64-bit indices */
  return clr_op_is_indexed(op) ? 2 * s + 16 : s;
}

CLR_API clr_value clr_result_at(clr_op op, clr_type result_type,
                                const void *results, size_t i) {
  clr_value v;
  memset(&v, 0, sizeof v);
  if ((unsigned)op >= CLR_OP_COUNT || (unsigned)result_type >= CLR_TYPE_COUNT ||
      !results)
    return v;
  v.type = result_type;
  size_t s = clr_type_size(result_type);
  const unsigned char *r = (const unsigned char *)results;
  if (!clr_op_is_indexed(op)) {
    memcpy(&v.v, r + i * s, s);
    return v;
  }
  r += i * (2 * s + 16); /* lo, hi, ilo, ihi */
  int max = op == CLR_ARGMAX;
  memcpy(&v.v, r + (max ? s : 0), s);
  memcpy(&v.index, r + 2 * s + (max ? 8 : 0), 8);
  if (op == CLR_MINMAX) {
    memcpy(&v.max, r + s, s);
    memcpy(&v.max_index, r + 2 * s + 8, 8);
  }
  return v;
}

int clr_accumulator_fits(clr_type in, clr_type acc) {
  switch (in) {
  case CLR_FLOAT:
  case CLR_HALF:
    return acc == CLR_FLOAT || acc == CLR_DOUBLE;
  case CLR_INT:
    return acc == CLR_INT || acc == CLR_LONG;
  case CLR_UINT:
    return acc == CLR_UINT || acc == CLR_ULONG;
  default:
    return acc == in;
  }
}

CLR_API clr_status clr_op_supports(clr_op op, clr_type t) {
  if ((unsigned)op >= CLR_OP_COUNT || (unsigned)t >= CLR_TYPE_COUNT)
    return CLR_ERR_INVALID_ARGUMENT;
  if ((op == CLR_AND || op == CLR_OR) && clr_type_is_float(t))
    return CLR_ERR_UNSUPPORTED;
  if (op == CLR_MEAN && (t == CLR_LONG || t == CLR_ULONG))
    return CLR_ERR_UNSUPPORTED;
  return CLR_OK;
}

CLR_API clr_status clr_kernel_supports(clr_kernel k, clr_op op, clr_type t) {
  clr_status st = clr_op_supports(op, t);
  if (st != CLR_OK || (unsigned)k >= CLR_KERNEL_COUNT)
    return st != CLR_OK ? st : CLR_ERR_INVALID_ARGUMENT;
  if (kernels[k].ops < 1 && (op == CLR_AND || op == CLR_OR))
    return CLR_ERR_UNSUPPORTED;
  if (kernels[k].ops < 2 && clr_op_is_indexed(op))
    return CLR_ERR_UNSUPPORTED;
  return CLR_OK;
}

CLR_API void clr_options_init(clr_options *o) {
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->kernel = CLR_REDUCE_COARSE;
  o->layout = CLR_LAYOUT_AUTO;
}

CLR_API const char *clr_version(void) { return CLR_VERSION; }
