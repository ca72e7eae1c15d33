/* clreduce: parallel reductions and prefix scans on any OpenCL device.
 *
 * The library keeps no global state: everything lives in an opaque
 * clr_context.  It never prints (unless a log callback is given) and never
 * exits; every entry point returns a clr_status, and the context keeps a
 * one-line detail of the last failure and the OpenCL build log of the last
 * failed build.
 *
 * Thread safety: distinct contexts may be used from distinct threads at the
 * same time.  One context must not be used by two threads at once; several
 * threads may use it in turn (with their own locking).  A context belongs
 * to the process that made it: after fork() the child must not use or
 * release it (its OpenCL objects, and the helper threads a context keeps
 * for host arrays, are the parent's).
 *
 * What holds for every function below unless its own comment says
 * otherwise:
 *
 * Blocking.  A function that takes a context or a group returns when its
 * work is done: results returned, host arrays and buffers written, the
 * caller's host arrays free to reuse.  The asynchronous ones say so in
 * their names or comments (clr_enqueue, the *_async functions): they
 * return once their commands are enqueued, and an event (or a callback)
 * says when the work is done.  The functions that take no context (names,
 * types, the clr_value accessors, the sized structs' copies, the cache
 * calls) never touch a device; clr_list_devices asks the OpenCL
 * platforms.
 *
 * Errors.  Every function that can fail returns a clr_status; a call on a
 * context that fails records a one-line detail in the context
 * (clr_context_error), and a call that makes a context or reads the
 * cache writes it to its detail argument.  A NULL context or group gives
 * CLR_ERR_INVALID_ARGUMENT.  After a failure the call's outputs
 * (results, host arrays, buffers) hold nothing to rely on, but nothing
 * was written outside them, and the context remains usable (unless the
 * OpenCL implementation itself failed: after CLR_ERR_OPENCL or
 * CLR_ERR_OUT_OF_MEMORY from a lost device, make a new context).
 *
 * Ownership.  Pointers and OpenCL objects passed in are borrowed for the
 * call (an asynchronous call's: until its event completes): the library
 * neither frees, releases nor keeps them (clr_context_create_from_queue
 * retains its queue, and says so).  Strings returned are the library's:
 * static ones (names, status strings, clr_version) live forever; a
 * context's (clr_context_error, clr_context_build_log,
 * clr_context_kernel_dir, clr_tuning_origin) until that string next
 * changes or the context is released, so copy one to keep it.  Events a
 * call returns are the caller's to release (clReleaseEvent).
 *
 * Threads.  The functions that take no context may run in any thread at
 * any time.  A context, and a group, is used by one thread at a time.
 */
#ifndef CLREDUCE_H
#define CLREDUCE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CLR_BUILDING_DLL)
#define CLR_API __declspec(dllexport)
#elif defined(__GNUC__)
#define CLR_API __attribute__((visibility("default")))
#else
#define CLR_API
#endif

/* ------------------------------------------------------------------ status */

/* X(name, message) */
#define CLR_STATUS_MAP(X)                                                      \
  X(CLR_OK, "success")                                                         \
  X(CLR_ERR_INVALID_ARGUMENT, "invalid argument")                              \
  X(CLR_ERR_UNSUPPORTED, "operation not supported for this type or kernel")    \
  X(CLR_ERR_NO_PLATFORM, "no OpenCL platform found")                           \
  X(CLR_ERR_NO_DEVICE, "no matching OpenCL device")                            \
  X(CLR_ERR_NO_FP64, "device has no double-precision (fp64) support")          \
  X(CLR_ERR_KERNEL_SOURCE, "kernel source file could not be read")             \
  X(CLR_ERR_BUILD, "OpenCL program build failed")                              \
  X(CLR_ERR_OUT_OF_MEMORY, "out of device or host memory")                     \
  X(CLR_ERR_OPENCL, "OpenCL call failed")                                      \
  X(CLR_ERR_IO, "file or directory could not be read or changed")              \
  X(CLR_ERR_RANGE, "value does not fit the requested type or buffer")          \
  X(CLR_ERR_VERSION, "struct from an incompatible clreduce header")

typedef enum clr_status {
#define CLR_X_ENUM(name, msg) name,
  CLR_STATUS_MAP(CLR_X_ENUM)
#undef CLR_X_ENUM
      CLR_STATUS_COUNT
} clr_status;

/* "CLR_ERR_BUILD" */
CLR_API const char *clr_status_name(clr_status s);
/* "OpenCL program build failed" */
CLR_API const char *clr_status_string(clr_status s);

/* ------------------------------------------------------------ sized structs
 */

/* The structs a caller fills or passes (clr_options, clr_context_config,
 * clr_request, clr_timing, clr_pass_info, clr_tuning) start with uint32_t
 * struct_size: sizeof the struct in the header the caller was built with,
 * set by the struct's init function or _INIT macro.  New fields are only
 * ever added at the end (never into the padding that ended an earlier
 * layout), so a program built with an older (shorter) header keeps working
 * with a newer library:
 *   - a struct the library reads (clr_options, clr_context_config,
 *     clr_request, the clr_tuning of clr_set_tuning): only its first
 *     struct_size bytes are read; the fields past them take their
 *     defaults (clr_set_tuning: the context's current values);
 *   - a struct the library fills (clr_timing, clr_pass_info, the
 *     clr_tuning of clr_get_tuning): only its first struct_size bytes are
 *     written.
 * A struct_size of 0 (a zeroed struct: memset, = {0}) is refused with
 * CLR_ERR_INVALID_ARGUMENT and a detail naming the init function; one
 * above this library's sizeof (a newer header than the library), below
 * the struct's first field's end, or that ends inside a field is refused
 * with CLR_ERR_VERSION and a detail naming the sizes.  A NULL struct, where
 * a call takes one as input, still means all the defaults. */

/* ------------------------------------------------------ types and operations
 */

/* The element types (clreduce_types.def: one row a type) and the
 * operations (clreduce_ops.def: one row an operation, its rules in the
 * columns).  Both tables are installed beside this header; a program may
 * read them as this header does (define the row macro, include the file). */

/* clreduce_types.def's kind column. */
#define CLR_KIND_FLOAT 0    /* IEEE floating point (half: binary16)   */
#define CLR_KIND_SIGNED 1   /* two's complement integer             */
#define CLR_KIND_UNSIGNED 2 /* unsigned integer                     */

typedef enum clr_type {
#define CLR_TYPE_ROW(id, name, size, kind, computes, wide) CLR_##id,
#include "clreduce_types.def"
#undef CLR_TYPE_ROW
  CLR_TYPE_COUNT,
  /* No type: "the default" where an option takes a type
   * (clr_options.accumulate_in: the rule of clr_result_type and
   * clr_scan_output_type).  A fixed value that no row of the table
   * reaches; the functions that take a type refuse it as they refuse
   * any value past CLR_TYPE_COUNT. */
  CLR_TYPE_DEFAULT = 255
} clr_type;

/* clreduce_ops.def's flags column: which calls take an operation. */
#define CLR_OPF_SCAN 0x01u    /* scans take it                          */
#define CLR_OPF_INTEGER 0x02u /* integer types only (but see LOGICAL)   */
/* LOGICAL: tests elements for non-zero and gives 0 or 1; any type through
 * a map expression's values. */
#define CLR_OPF_LOGICAL 0x04u
#define CLR_OPF_INDEXED 0x08u   /* a value and its first index (records)  */
#define CLR_OPF_SKIPS_NAN 0x10u /* NaN elements are left out              */
#define CLR_OPF_MEAN 0x20u      /* a sum divided by a count, on the host  */
#define CLR_OPF_MOMENTS 0x40u   /* (count, mean, M2) records: var, std    */
/* clreduce_ops.def's identity column. */
#define CLR_ID_ZERO 0
#define CLR_ID_ONE 1
#define CLR_ID_TOP 2        /* +inf, or the type's largest value         */
#define CLR_ID_BOTTOM 3     /* -inf, or the type's smallest value        */
#define CLR_ID_NAN_TOP 4    /* NaN for floating types, else TOP          */
#define CLR_ID_NAN_BOTTOM 5 /* NaN for floating types, else BOTTOM       */
/* clreduce_ops.def's result column. */
#define CLR_RES_INPUT 0 /* the input type (half: float)                    */
#define CLR_RES_WIDE 1  /* the type's wide type unless narrow_accumulator */
#define CLR_RES_TRUTH 2 /* int, 0 or 1                                      */
#define CLR_RES_MEAN 3  /* float for float and half data, else double      */

typedef enum clr_op {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   what)                                                       \
  CLR_##id,
#include "clreduce_ops.def"
#undef CLR_OP_ROW
  CLR_OP_COUNT
} clr_op;

/* A map applied to every element before the reduction, in the same pass
 * (clr_options.map): transform-reduce.  The built-in maps work in the
 * result type: x is converted to it first, so the squares of ints summed
 * in long do not overflow. */
typedef enum clr_map {
  CLR_MAP_NONE = 0,
  CLR_MAP_ABS,    /* |x|: with CLR_SUM the L1 norm, with CLR_ARGMAX the
                     BLAS i_amax */
  CLR_MAP_SQUARE, /* x * x: with CLR_SUM the squared L2 norm */
  /* clr_options.map_expr: an OpenCL C expression of x (the element; half
   * data decoded to float), i (its index from the first element of the
   * call, a ulong) and, for clr_dot_*, y (the element of the second
   * array), converted to the result type: "x > 0.5f" counts, "fabs(x -
   * 3.0f)".  At most 4096 characters, every token from a whitelist:
   * x, i, y; integer literals (decimal, hex, octal; suffixes u, l, ul)
   * and floating ones (1.0 double, 1.0f float, exponents, hex floats);
   * the constants M_PI, M_PI_F, M_E, M_E_F, M_LN2, M_LN2_F, M_SQRT2,
   * M_SQRT2_F, INFINITY, NAN, MAXFLOAT, FLT_MAX, FLT_MIN, FLT_EPSILON,
   * DBL_MAX, DBL_MIN, DBL_EPSILON, INT_MAX, INT_MIN, UINT_MAX, LONG_MAX,
   * LONG_MIN, ULONG_MAX; the operators ?: || && | ^ & == != < > <= >=
   * << >> + - * / % and unary + - ! ~; parentheses; casts to char,
   * uchar, short, ushort, int, uint, long, ulong, float, double; and
   * calls, with their number of arguments, of OpenCL C's fabs sqrt cbrt
   * rsqrt exp exp2 exp10 expm1 log log2 log10 log1p pow pown powr sin
   * cos tan asin acos atan atan2 sinh cosh tanh floor ceil round trunc
   * rint fmin fmax fmod fdim copysign hypot fma mad isnan isinf isfinite
   * signbit sign min max clamp abs abs_diff popcount clz.  Anything else
   * (statements, digraphs, keywords, other names, strings, comments,
   * assignments, a newline) is refused with CLR_ERR_INVALID_ARGUMENT and
   * a detail naming the token and its column; a whitelisted expression
   * the compiler refuses (a type error: x % 2 of a float) gives
   * CLR_ERR_BUILD with the build log (clr_context_build_log). */
  CLR_MAP_EXPR,
  CLR_MAP_COUNT
} clr_map;

typedef enum clr_kernel {
  /* reductions */
  CLR_REDUCE_INTERLEAVED, /* interleaved addressing, tid % (2*s) == 0    */
  CLR_REDUCE_SEQUENTIAL,  /* sequential addressing, stride halving         */
  CLR_REDUCE_FIRST_ADD,   /* two elements added while loading              */
  CLR_REDUCE_COARSE,      /* many elements per work-item in registers      */
  /* prefix scans */
  CLR_SCAN_KOGGE_STONE,    /* stride doubling, two barriers per step        */
  CLR_SCAN_KOGGE_STONE_DB, /* double-buffered, one barrier per step         */
  CLR_SCAN_BRENT_KUNG,     /* work-efficient up-sweep / down-sweep          */
  CLR_SCAN_DECOUPLED,      /* single pass, decoupled look-back (GPUs)       */
  CLR_KERNEL_COUNT,
  /* No kernel: "the default" (clr_options.kernel, clr_options_init's):
   * a reduction runs CLR_REDUCE_COARSE, a scan the device's tuned scan
   * (clr_tuning.scan_kernel: decoupled look-back on GPUs).  A fixed
   * value past the kernels; clr_kernel_name and the other functions that
   * take a kernel refuse it. */
  CLR_KERNEL_DEFAULT = 255
} clr_kernel;

CLR_API const char *clr_type_name(clr_type t); /* "float", "half", ...      */
CLR_API size_t clr_type_size(clr_type t);      /* bytes, 0 if invalid       */
CLR_API const char *clr_op_name(clr_op op);    /* "sum", "and", ...         */
CLR_API const char *
clr_map_name(clr_map m); /* "none", "abs", "square", "expr" */
CLR_API const char *clr_kernel_name(clr_kernel k); /* "first-add", ...      */
/* What the kernel teaches, one line ("" if invalid). */
CLR_API const char *clr_kernel_description(clr_kernel k);
/* Parse a name; return CLR_ERR_INVALID_ARGUMENT if unknown. */
CLR_API clr_status clr_type_from_name(const char *s, clr_type *out);
CLR_API clr_status clr_op_from_name(const char *s, clr_op *out);
CLR_API clr_status clr_map_from_name(const char *s, clr_map *out);
CLR_API clr_status clr_kernel_from_name(const char *s, clr_kernel *out);
CLR_API int clr_kernel_is_scan(clr_kernel k);

/* The type a reduction's result (and its accumulator) has: the op's
 * result column (clreduce_ops.def) applied to t.  Sum and prod of 32-bit
 * integers accumulate in 64 bits (int -> long, uint -> ulong), as NumPy
 * does, unless narrow_accumulator is set; and / or give an int (0 or 1);
 * half data gives float; mean gives float for float and half data, else
 * double; everything else keeps the input type.  Integer overflow wraps
 * modulo 2^bits.
 */
CLR_API clr_type clr_result_type(clr_op op, clr_type t, int narrow_accumulator);
/* CLR_OK when op applies to t (CLR_OPF_INTEGER operations need an integer
 * type, unless they are logical and a map expression gives the values
 * they test; a mean needs a sum that cannot wrap: not long or ulong). */
CLR_API clr_status clr_op_supports(clr_op op, clr_type t);
/* CLR_OK when kernel k can compute op on t: clr_op_supports, scans
 * take the CLR_OPF_SCAN operations only, and the indexed operations run on
 * the coarse kernel only (CLR_ERR_UNSUPPORTED otherwise). */
CLR_API clr_status clr_kernel_supports(clr_kernel k, clr_op op, clr_type t);
/* 1 when kernel k takes maps (clr_options.map) and computes dot products
 * and the indexed operations (the coarse reduction); 0 otherwise. */
CLR_API int clr_kernel_takes_maps(clr_kernel k);

typedef union clr_scalar {
  float f;
  double d;
  int32_t i;
  uint32_t u;
  int64_t l;
  uint64_t ul;
} clr_scalar;

/* A reduction's result.  It says what it holds: type is the result type
 * (clr_options_result_type: which member of v, and of max, holds the
 * number: f for CLR_FLOAT, d for CLR_DOUBLE, i, u, l and ul for CLR_INT,
 * CLR_UINT, CLR_LONG and CLR_ULONG; never CLR_HALF, whose results are
 * float), and op is the operation that made it (which of index, max and
 * max_index mean something).  Every call that returns a clr_value sets
 * both: clr_reduce_host, clr_reduce_buffer, clr_dot_host and
 * clr_dot_buffer (op CLR_SUM), clr_group_reduce_host / _buffers,
 * clr_group_dot_host, clr_mpi_reduce_host / _buffer, clr_exact_acc_value
 * (CLR_SUM), clr_result_at (its op: decoding clr_reduce_buffer_async's
 * result, or a segmented, ranges or by-key result, read back from the
 * device) and clr_value_sum_to_mean (CLR_MEAN, or CLR_NANMEAN for a
 * CLR_NANSUM's sum).  A mean has op CLR_MEAN or CLR_NANMEAN, not its sum's.
 * Read it through the accessors below (clr_value_as_double,
 * clr_value_as_int64, clr_value_format ...), which follow type, rather
 * than a member of v chosen by hand.
 *
 * Layout: op sits in the four bytes that followed type before it existed
 * (padding, wherever 8-byte members are 8-aligned: x86-64, AArch64, 64-bit
 * Windows), so the struct's size (40 bytes) and its other members' offsets
 * are those of earlier versions.  A value made by the caller and zeroed
 * (memset, = {0}) has op 0, CLR_SUM: a plain number.  clr_value_combine
 * keeps acc's op and type. */
typedef struct clr_value {
  clr_type type;      /* the result type: which member of v and max      */
  clr_op op;          /* the operation that made the value               */
  clr_scalar v;       /* the result; CLR_MINMAX: the minimum; CLR_VAR,
                         CLR_STD: the variance, the standard deviation   */
  uint64_t index;     /* the indexed operations (CLR_OPF_INDEXED: argmin,
                         argmax, nanargmin, nanargmax, minmax): the first
                         index of v, UINT64_MAX where there is none (a
                         NaN-skipping op over NaNs only, an empty
                         segment); 0 for the other operations            */
  clr_scalar max;     /* CLR_MINMAX: the maximum; CLR_VAR, CLR_STD: the
                         mean                                            */
  uint64_t max_index; /* CLR_MINMAX: its first index                      */
} clr_value;

/* The room clr_value_format's longest text and its NUL take. */
#define CLR_VALUE_FORMAT_SIZE 128

/* The value's type (v->type); CLR_TYPE_COUNT, no type, for NULL. */
CLR_API clr_type clr_value_type(const clr_value *v);
/* The operation that made it (v->op); CLR_OP_COUNT for NULL. */
CLR_API clr_op clr_value_op(const clr_value *v);
/* The number as a double: exact for every type but long and ulong beyond
 * 2^53 in magnitude (rounded to nearest).  NaN for NULL or a value whose
 * type is no result type (CLR_HALF, out of range).  CLR_MINMAX: the
 * minimum (clr_value_minmax_parts gives the maximum). */
CLR_API double clr_value_as_double(const clr_value *v);
/* The number as a 64-bit integer, exactly: CLR_OK and *out set when the
 * value is an integer that int64_t (uint64_t) holds, of any type: 3.0 of a
 * float gives 3, -0.0 gives 0.  CLR_ERR_RANGE, *out untouched, when it is
 * not: a fraction (0.5), NaN, an infinity, a magnitude out of the range
 * (a ulong above INT64_MAX as int64, a negative number as uint64).
 * CLR_ERR_INVALID_ARGUMENT for NULL or a value of no result type. */
CLR_API clr_status clr_value_as_int64(const clr_value *v, int64_t *out);
CLR_API clr_status clr_value_as_uint64(const clr_value *v, uint64_t *out);
/* The first index of the value (v->index): for argmin, argmax, nanargmin,
 * nanargmax and minmax (the minimum's) the first element that holds it,
 * counted from the call's first element plus clr_options.index_base;
 * UINT64_MAX where there is none (no number among the elements of a
 * NaN-skipping op) and for NULL; 0 for the other operations. */
CLR_API uint64_t clr_value_index(const clr_value *v);
/* A CLR_MINMAX value's two parts as values of their own: *min gets the
 * minimum and its index (op CLR_ARGMIN), *max the maximum and its index
 * (op CLR_ARGMAX: v and index are minmax's max and max_index), each of
 * v's type; either pointer may be NULL.  CLR_ERR_INVALID_ARGUMENT for a
 * value whose op is not CLR_MINMAX. */
CLR_API clr_status clr_value_minmax_parts(const clr_value *v, clr_value *min,
                                          clr_value *max);
/* The value as text in buf (size bytes, NUL-terminated), as the clreduce
 * command line prints a result:
 *   the number: float with 9 significant digits ("%.9g"), double with 17
 *   ("%.17g"), so that strtod (then a cast to float, for a float) gives
 *   back the same bits; integers exactly, in decimal; "nan" ("-nan" with
 *   the sign bit set), "inf" and "-inf" on every platform;
 *   argmin, argmax, nanargmin, nanargmax: "<number> at index <index>";
 *   minmax: "min <number> at index <index>, max <number> at index <index>";
 *   an index of UINT64_MAX (none) is written -1.
 * Any other op (CLR_SUM for a zeroed value): the number alone.
 * CLR_VALUE_FORMAT_SIZE bytes hold any value's text.  CLR_ERR_RANGE when
 * size is too small (buf then holds as much of the text as fits, when
 * size > 0); CLR_ERR_INVALID_ARGUMENT for NULL v or buf or a value of no
 * result type (buf, when size > 0, is then ""). */
CLR_API clr_status clr_value_format(const clr_value *v, char *buf, size_t size);

/* ---------------------------------------------------------------- devices */

typedef struct clr_device_desc {
  unsigned platform_index;
  unsigned device_index;
  char platform_name[128];
  char device_name[128];
  char device_version[128];
  char driver_version[64];
  int is_gpu;
  int is_cpu;
  int has_fp64;
  unsigned compute_units;
  uint64_t global_mem_size;
  uint64_t max_alloc_size;
  uint64_t local_mem_size;
  size_t max_work_group_size;
} clr_device_desc;

/* Fill up to cap descriptors; *count receives the number of devices found
 * (which may exceed cap).  CLR_ERR_NO_PLATFORM when there is none. */
CLR_API clr_status clr_list_devices(clr_device_desc *out, size_t cap,
                                    size_t *count);

/* ---------------------------------------------------------------- context */

typedef struct clr_context clr_context;

typedef void (*clr_log_fn)(void *user, const char *message);

typedef struct clr_context_config {
  /* sizeof(clr_context_config): set by clr_context_config_init or
   * CLR_CONTEXT_CONFIG_INIT (see "sized structs" above). */
  uint32_t struct_size;
  /* NULL: any.  A decimal index, or a case-insensitive substring of the
   * platform / device name. */
  const char *platform;
  /* NULL: the first GPU, else the first device of any kind. */
  const char *device;
  /* NULL: $CLREDUCE_KERNEL_DIR, then the installed kernel directory. */
  const char *kernel_dir;
  /* NULL: $CLREDUCE_CACHE_DIR, then $XDG_CACHE_HOME/clreduce, then
   * ~/.cache/clreduce.  "" disables the on-disk program cache. */
  const char *cache_dir;
  /* Optional: progress and diagnostics, a successful build's compiler
   * warnings included (a line each).  The library is silent without. */
  clr_log_fn log;
  void *log_user;
  /* Nonzero: always copy host arrays to device buffers.  By default they
   * are wrapped in place (CL_MEM_USE_HOST_PTR, no copy) on devices that
   * share memory with the host, such as CPUs. */
  int copy_host_data;
  /* Host arrays are streamed to the device in chunks of at most this many
   * bytes (rounded down to 64 elements, at least 64).  0: the device's
   * limit (one allocation, at most a quarter of its memory). */
  uint64_t max_chunk_bytes;
  /* 1: the context's own queue without CL_QUEUE_PROFILING_ENABLE, for
   * callers whose calls are small and many.  Timings (clr_last_timing's
   * kernel_ms, h2d_ms, d2h_ms and pass times) are then 0, total_ms stays,
   * and reductions take no events for timing: on NVIDIA's OpenCL a
   * profiling queue and a timed launch add 12-15 us to every call
   * (docs/perf-log/small-calls.md).  A context around the caller's
   * queue follows that queue's own properties instead. */
  int no_profiling;
} clr_context_config;

/* The defaults: every field 0 or NULL but struct_size.  C programs may
 * write clr_context_config c = CLR_CONTEXT_CONFIG_INIT; and set fields
 * after it. */
#define CLR_CONTEXT_CONFIG_INIT                                                \
  {                                                                            \
    (uint32_t)sizeof(clr_context_config), NULL, NULL, NULL, NULL, NULL, NULL,  \
        0, 0, 0                                                                \
  }
/* The same for a config already declared.  Inline: it writes the size of
 * the header the program was built with, never more. */
static inline void clr_context_config_init(clr_context_config *c) {
  if (c) {
    const clr_context_config d = CLR_CONTEXT_CONFIG_INIT;
    *c = d;
  }
}
/* The config a context takes from cfg: the first cfg->struct_size bytes
 * of *cfg, the fields past them at their defaults (cfg NULL: all the
 * defaults), written into the first out->struct_size bytes of *out (set
 * by clr_context_config_init).  CLR_OK; CLR_ERR_VERSION or
 * CLR_ERR_INVALID_ARGUMENT for a struct_size of either that this library
 * does not take, or out NULL (see "sized structs"), with *out untouched
 * and the reason in detail (may be NULL; "" on success).  What every call
 * that takes a config does first; for libraries built on clreduce that
 * read a caller's config (clreduce-mpi's clr_mpi_context_create). */
CLR_API clr_status clr_context_config_copy(const clr_context_config *cfg,
                                           clr_context_config *out,
                                           char *detail, size_t detail_size);

/* Create a context on the chosen device, with its own command queue (with
 * profiling enabled unless cfg->no_profiling).  detail (may be NULL) receives a
 * one-line reason on failure.  cfg may be NULL for all defaults.  A context is
 * not thread-safe by itself: distinct contexts may be used (and created) by
 * distinct threads at once; one context by several threads only in turn,
 * under the caller's lock.  fork(): a child may not use its parent's
 * contexts, and once the parent has made one, a context the child makes
 * on PoCL hangs (PoCL's threads do not survive a fork; seen with PoCL
 * 3.1): make contexts after forking, or exec in the child. */
CLR_API clr_status clr_context_create(const clr_context_config *cfg,
                                      clr_context **out, char *detail,
                                      size_t detail_size);

/* Create a context around an existing command queue (retained, released
 * with the context), so buffers of the caller's cl_context can be reduced
 * in place.  Timings are 0 unless the queue has profiling enabled.
 *
 * Ordering, on any queue: every call sees the results of all commands the
 * caller enqueued on this queue before the call, and has finished using
 * (and writing) the caller's buffers when it returns, so commands enqueued
 * after it see its results.  On an in-order queue the library enqueues its
 * commands on the queue itself.  On an out-of-order queue
 * (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) it creates an in-order queue of
 * its own on the same cl_context and device (profiling as on the caller's)
 * for its commands, and each call first waits for the caller's queue
 * (clFinish) and finishes its own before returning.  clr_context_queue
 * returns the caller's queue either way.  Commands on the caller's other
 * queues are the caller's to order (finish them before the call). */
CLR_API clr_status clr_context_create_from_queue(cl_command_queue queue,
                                                 const clr_context_config *cfg,
                                                 clr_context **out,
                                                 char *detail,
                                                 size_t detail_size);

/* Release everything the context created.  NULL is a no-op.  It never
 * waits for the caller's events: blocking calls have finished when they
 * return, and asynchronous calls still pending (waiting for a wait list
 * the caller completes later) are left to complete after the release —
 * OpenCL keeps the buffers and kernels their commands use until then,
 * their events stay valid, and the caller's buffers must stay alive until
 * those events complete.  With nothing pending it waits for the queue.
 * Host memory from clr_host_alloc is freed here: no pending command may
 * use it. */
CLR_API void clr_context_release(clr_context *ctx);

/* The context's device, copied into *out (the caller's; nothing to free).
 * Does not block; CLR_ERR_INVALID_ARGUMENT for a NULL argument. */
CLR_API clr_status clr_context_device(const clr_context *ctx,
                                      clr_device_desc *out);
/* The context's OpenCL context and in-order queue (during a call made with
 * clr_request.queue: that call's queue).  Borrowed, not retained: valid
 * until clr_context_release (for an adopted queue, the caller's own
 * objects); clRetainContext / clRetainCommandQueue to keep them longer,
 * and never release them without such a retain.  NULL for a NULL ctx.
 * Commands the caller enqueues on the queue are ordered with the
 * library's.  Do not block; safe to call from any thread that may use
 * the context (a context is not thread-safe: one call at a time). */
CLR_API cl_context clr_context_cl_context(const clr_context *ctx);
CLR_API cl_command_queue clr_context_queue(const clr_context *ctx);

/* One-line detail of the last failure on this context ("" if none);
 * "no context (NULL)" for ctx NULL, the reason every call given a NULL
 * context returns CLR_ERR_INVALID_ARGUMENT.  Never NULL.  Every call that
 * takes a (non-const) context and fails records its own detail, replacing
 * the previous one; the getters that take a const context
 * (clr_context_device, clr_get_tuning, clr_last_timing) fail only on a
 * NULL argument and leave it unchanged. */
CLR_API const char *clr_context_error(const clr_context *ctx);
/* OpenCL build log of the last failed build ("" if none). */
CLR_API const char *clr_context_build_log(const clr_context *ctx);
/* The directory the kernel sources are read from ("" for NULL):
 * clr_context_config.kernel_dir, $CLREDUCE_KERNEL_DIR, "(built into the
 * library)" (-Dembed_kernels), or the installed copy, found also when the
 * install prefix was moved. */
CLR_API const char *clr_context_kernel_dir(const clr_context *ctx);

/* Host memory for the arrays the host functions take (clr_reduce_host,
 * clr_scan_host ...), the way CUDA programs use cudaMallocHost: on a
 * device that does not share the host's memory it is page-locked (a
 * mapped CL_MEM_ALLOC_HOST_PTR buffer), and copies from and to it run at
 * the bus's speed with no staging copy; elsewhere it is ordinary
 * page-aligned memory, used in place.  Any part of it may be passed (an
 * offset into it, a shorter length).  NULL on failure, with the reason in
 * clr_context_error.  Freed by clr_host_free, or by clr_context_release
 * (after which it must not be used).  Page-locked memory is scarce: keep
 * it to the arrays that move. */
CLR_API void *clr_host_alloc(clr_context *ctx, size_t bytes);
/* Free an array of clr_host_alloc's (NULL: nothing to do).  Another
 * pointer gives CLR_ERR_INVALID_ARGUMENT. */
CLR_API clr_status clr_host_free(clr_context *ctx, void *p);

/* ---------------------------------------------------------- program cache */

/* The on-disk cache of built programs, seen and cleared.  These calls need
 * no OpenCL platform, device or context: they read the configuration and
 * the environment ($CLREDUCE_CACHE_DIR, $XDG_CACHE_HOME, $HOME,
 * $CLREDUCE_CACHE_MAX_BYTES) as clr_context_create does, and touch the
 * cache directory only.  config may be NULL (the defaults); only its
 * cache_dir is read.  They block while they read the directory (and
 * remove files), take no lock, keep nothing, and may run while other
 * threads and processes use the same cache.  detail (may be NULL)
 * receives a one-line reason on failure, "" on success. */

/* The directory a context made with config would cache its programs in,
 * into buf (size bytes, NUL-terminated): config->cache_dir, else
 * $CLREDUCE_CACHE_DIR, else $XDG_CACHE_HOME/clreduce, else
 * $HOME/.cache/clreduce; "" when the cache is disabled (cache_dir or
 * $CLREDUCE_CACHE_DIR set and empty, neither XDG_CACHE_HOME nor HOME set,
 * or a name of 4096 bytes or more, which no file call could open).  The
 * directory need not exist.  4096 bytes always suffice.
 * CLR_ERR_INVALID_ARGUMENT (buf "" where size > 0) for buf NULL or
 * smaller than the name and its NUL. */
CLR_API clr_status clr_cache_dir(const clr_context_config *config, char *buf,
                                 size_t size);

/* How many program entries the cache holds and their size in bytes, and
 * the size cap past which the least recently used ones go
 * ($CLREDUCE_CACHE_MAX_BYTES, else 256 MiB; 0: no cap; a value that is no
 * byte count gives the default, as it does to a context).  Any of
 * entries, bytes, max_bytes may be NULL.  Only entries count: not the
 * user's tuning files (tuning/), loading marks or the temporary files of
 * a write in progress.  A disabled cache and a directory that does not
 * exist hold 0 entries of 0 bytes.  CLR_ERR_IO when the directory cannot
 * be read (counts 0). */
CLR_API clr_status clr_cache_usage(const clr_context_config *config,
                                   uint64_t *entries, uint64_t *bytes,
                                   uint64_t *max_bytes, char *detail,
                                   size_t detail_size);

/* Remove the cache's program entries; *removed (may be NULL) receives how
 * many went, *bytes (may be NULL) their size.  Everything else stays: the
 * user's tuning files (tuning/, written by clr_autotune), the directory
 * itself, other files, and the loading mark of an entry a running process
 * is loading (the marks of processes that stopped, whose entries are
 * gone, go too).  Safe beside running processes: a process that has
 * opened or read an entry keeps what it read, and one that finds an entry
 * gone builds the program from source and stores it again.  A disabled
 * cache or a missing directory removes nothing (CLR_OK).  CLR_ERR_IO when
 * the directory cannot be read or an entry cannot be removed (the first
 * such in detail); the others are still removed, and counted. */
CLR_API clr_status clr_cache_clear(const clr_context_config *config,
                                   uint64_t *removed, uint64_t *bytes,
                                   char *detail, size_t detail_size);

/* ---------------------------------------------------------------- options */

typedef enum clr_layout {
  CLR_LAYOUT_AUTO = 0,
  CLR_LAYOUT_STRIDED,    /* consecutive work-items read consecutive elements
                            (coalesced: right for GPUs) */
  CLR_LAYOUT_CONTIGUOUS, /* each work-item reads one contiguous chunk
                            (right for CPUs, where PoCL runs a work-group's
                            items one after another) */
} clr_layout;

/* coarse accepts any value: for the coarse reduction and the tiled scans,
 * a factor larger than the elements a pass (a scan launch) reads is
 * clamped to that number: one work-item then reads them all, which is what
 * any larger factor means, so the result is the same.  The decoupled scan
 * keeps its elements in registers and takes 1..64 (more gives
 * CLR_ERR_INVALID_ARGUMENT).  A shape whose sizes or indices would
 * overflow is refused with CLR_ERR_INVALID_ARGUMENT, never run.
 * vector_width other than 0, 1, 2, 4, 8, 16, or a layout or kernel that is
 * no enum value (nor CLR_KERNEL_DEFAULT), gives CLR_ERR_INVALID_ARGUMENT
 * (scans included). */
typedef struct clr_options {
  uint32_t struct_size;   /* sizeof(clr_options): set by clr_options_init
                             or CLR_OPTIONS_INIT ("sized structs" above) */
  clr_kernel kernel;      /* CLR_KERNEL_DEFAULT: the coarse reduction, or
                             the device's tuned scan; else a kernel of the
                             call's kind                                 */
  size_t wg_size;         /* work-group size; 0 = chosen for the device     */
  size_t coarse;          /* coarse kernel: elements per work-item; 0 = auto */
  unsigned vector_width;  /* coarse kernel: 1,2,4,8,16; 0 = auto            */
  clr_layout layout;      /* coarse kernel access pattern                   */
  int narrow_accumulator; /* nonzero: 32-bit int sum/prod stay 32-bit       */
  int exclusive;          /* scans: exclusive instead of inclusive          */
  const void *carry_in;   /* scans: optional value (of the output type,
                             clr_scan_output_type) combined before the
                             first element                                 */
  /* Nonzero: float and double sums are exact: the floating-point number
   * nearest the true sum of the elements (ties to even), so the same bits
   * on every device, shape, chunking and order of the elements; inf and
   * NaN as IEEE addition gives them, +-inf when the exact sum overflows
   * (docs/EXACT.md).  Reductions with the coarse kernel (the default)
   * only.  Integer sums, min and max are exact anyway; prod and float
   * scans give CLR_ERR_UNSUPPORTED. */
  int exact;
  /* CLR_TYPE_DEFAULT for the default rule (clr_result_type; scans:
   * clr_scan_output_type), else a type: accumulate and return the result
   * (a scan: write its output) in that type, of the input's kind and at
   * least as wide (float data summed in double; int in int or long; uint
   * in uint or ulong; half in float or double).  Another type, and/or or
   * an exact sum with it: CLR_ERR_UNSUPPORTED; a value that is neither a
   * type nor CLR_TYPE_DEFAULT: CLR_ERR_INVALID_ARGUMENT. */
  clr_type accumulate_in;
  /* Reductions with the coarse kernel: a map applied to each element in
   * the same pass (clr_map); CLR_MAP_EXPR takes map_expr.  With a map
   * expression the result type may be any (accumulate_in: "x > 0.5f"
   * counted in CLR_LONG), and and / or apply to float data too.  Scans,
   * exact sums and the seed kernels give CLR_ERR_UNSUPPORTED. */
  clr_map map;
  const char *map_expr;
  /* The index of the first element: a map expression's i counts from it
   * (every reduction: segments, rows and ranges too), and so do argmin,
   * argmax and minmax indices of reductions and dot products (per segment
   * they stay counted from the segment's first element), so parts of one
   * array reduced apart (clr_group, MPI ranks) report the whole array's
   * indices.  0 by default. */
  uint64_t index_base;
  /* CLR_VAR and CLR_STD: delta degrees of freedom, the variance's divisor
   * n - ddof (0 by default, NumPy's; 1 for the unbiased sample variance,
   * PyTorch's default).  Other operations ignore it. */
  uint64_t ddof;
} clr_options;

/* The defaults (clr_options_init's): kernel CLR_KERNEL_DEFAULT,
 * accumulate_in CLR_TYPE_DEFAULT, layout CLR_LAYOUT_AUTO, map
 * CLR_MAP_NONE, every other field 0 or NULL.  C programs may write
 * clr_options o = CLR_OPTIONS_INIT; and set fields after it.  (A struct
 * zeroed by hand is refused: its kernel would be CLR_REDUCE_INTERLEAVED
 * and its accumulate_in CLR_FLOAT.) */
#define CLR_OPTIONS_INIT                                                       \
  {                                                                            \
    (uint32_t)sizeof(clr_options), CLR_KERNEL_DEFAULT, 0, 0, 0,                \
        CLR_LAYOUT_AUTO, 0, 0, NULL, 0, CLR_TYPE_DEFAULT, CLR_MAP_NONE, NULL,  \
        0, 0                                                                   \
  }
/* The same for options already declared.  Inline: it writes the size of
 * the header the program was built with, never more. */
static inline void clr_options_init(clr_options *o) {
  if (o) {
    const clr_options d = CLR_OPTIONS_INIT;
    *o = d;
  }
}
/* The options a call takes from opt: the first opt->struct_size bytes of
 * *opt, the fields past them at their defaults (opt NULL: all the
 * defaults), written into the first out->struct_size bytes of *out (set by
 * clr_options_init).  CLR_OK; CLR_ERR_VERSION or CLR_ERR_INVALID_ARGUMENT
 * for a struct_size of either that this library does not take, or out
 * NULL (see "sized structs"), with *out untouched and the reason in detail
 * (may be NULL; "" on success).  Every call that takes options reads them
 * so; for libraries built on clreduce that read a caller's options
 * (clreduce-mpi). */
CLR_API clr_status clr_options_copy(const clr_options *opt, clr_options *out,
                                    char *detail, size_t detail_size);

/* Deprecated (removed after the next release): accumulate_in holds the
 * type itself now (before 1.0 it held the type plus 1, and 0 meant the
 * default, now CLR_TYPE_DEFAULT). */
#define CLR_ACCUMULATE_IN(t) ((clr_type)(t))

/* The type a scan with these options writes (and combines in): the input
 * type (integer sums wrap), float for half data, or opt->accumulate_in
 * when not CLR_TYPE_DEFAULT (an int scan written as long; opt may be
 * NULL).  CLR_TYPE_COUNT for options refused (see "sized structs"). */
CLR_API clr_type clr_scan_output_type(const clr_options *opt, clr_type t);

/* The bytes one result of clr_reduce_buffer_async, of a segmented
 * reduction or of reduce-by-key takes in its results array or buffer (0
 * for an invalid op or type, or options refused): a value of
 * clr_options_result_type, or for argmin, argmax and minmax a record (see
 * clr_reduce_buffer_async). */
CLR_API size_t clr_result_bytes(const clr_options *opt, clr_op op, clr_type t);

/* Result i of such an array (results as read back from the device),
 * decoded: for argmin, argmax and minmax the record's value(s) and
 * index(es) (UINT64_MAX for an empty segment's).  result_type is
 * clr_options_result_type(opt, op, t). */
CLR_API clr_value clr_result_at(clr_op op, clr_type result_type,
                                const void *results, size_t i);

/* Fold next into acc (both of one result type, not half): acc = acc op
 * next, with the kernels' semantics: integer sums and products wrap; a NaN
 * wins min and max (the first); -0 orders below +0; for argmin, argmax and
 * minmax next is the later part, so a tie keeps acc's index.  For results
 * of parts of one array reduced apart (by device, rank or time) in order.
 * Each op folds by its row's partial column (clreduce_ops.def): the
 * NaN-skipping ones skip a NaN part (nanmin, nanargmax ...) or, for a sum,
 * keep it (a part's NaN is inf - inf, not an element); CLR_MEAN and
 * CLR_NANMEAN fold sums (see clr_value_sum_to_mean).  CLR_VAR and CLR_STD
 * give CLR_ERR_UNSUPPORTED: clr_value_merge_moments merges them. */
CLR_API clr_status clr_value_combine(clr_op op, clr_value *acc,
                                     const clr_value *next);
/* Var and std of parts of one array reduced apart (by device, rank or
 * time): parts[i] of counts[i] elements, each computed with ddof 0 (v its
 * variance, or deviation for CLR_STD; max its mean), merged in order by
 * Chan, Golub and LeVeque's pairwise formula in long double; *out gets
 * op's value of the whole (CLR_VAR or CLR_STD, the parts' type): the
 * variance M2 / (sum of counts - ddof), NaN where that is not positive,
 * or its root, and the mean (NaN for no element).  A part of count 0 is
 * skipped.  CLR_ERR_INVALID_ARGUMENT for NULLs, k = 0, an op other than
 * var and std, or parts of other ops or types (float or double, all
 * alike).  clr_value_combine cannot fold them: a value keeps no M2 where
 * its count is at most ddof. */
CLR_API clr_status clr_value_merge_moments(clr_op op, const clr_value *parts,
                                           const uint64_t *counts, size_t k,
                                           uint64_t ddof, clr_value *out);
/* A sum of n elements of type (of the type CLR_SUM returns with opt)
 * made the mean CLR_MEAN returns: divided through long double, rounded
 * once to clr_options_result_type(opt, CLR_MEAN, type).  For CLR_NANMEAN
 * n is the count of numbers; n = 0 (no number) gives NaN.  opt is read
 * as a call reads it (NULL: the defaults; refused: its status, v
 * unchanged). */
CLR_API clr_status clr_value_sum_to_mean(const clr_options *opt, clr_type type,
                                         uint64_t n, clr_value *v);

/* The type a reduction with these options returns: clr_result_type, or
 * opt->accumulate_in when not CLR_TYPE_DEFAULT (opt may be NULL: the
 * defaults).  CLR_TYPE_COUNT for options refused (see "sized structs"). */
CLR_API clr_type clr_options_result_type(const clr_options *opt, clr_op op,
                                         clr_type t);

/* --------------------------------------------------------------- requests */

/* One call shape for every kind of work: a request descriptor, filled by
 * name, run by clr_run (blocking) or clr_enqueue (returning an event), on
 * the context's queue or a queue given per call.  The entry points of the
 * sections below (clr_reduce_host, clr_scan_buffer_range,
 * clr_reduce_by_key_buffer ...) are the same work with positional
 * arguments; a request names every part instead. */

/* The work a request asks for.  New kinds are added before
 * CLR_REQ_KIND_COUNT. */
typedef enum clr_request_kind {
  CLR_REQ_REDUCE,        /* one value of op over n elements of input       */
  CLR_REQ_SCAN,          /* prefix scan of input into output               */
  CLR_REQ_DOT,           /* sum of input[k] * input2[k] (op CLR_SUM)       */
  CLR_REQ_SEGMENTS,      /* a value per segment: segments holds
                            n_segments + 1 offsets (uint64)                */
  CLR_REQ_RANGES,        /* a value per range: segments holds n_segments
                            (offset, length) pairs (uint64)                */
  CLR_REQ_BY_KEY,        /* a value per run of equal keys: segments holds
                            the n keys (key_type)                          */
  CLR_REQ_SCAN_SEGMENTS, /* scans restarting at each segment: segments
                            holds n_segments + 1 offsets (uint64)          */
  CLR_REQ_SCAN_HEADS,    /* the same, segments given by n flag bytes
                            (uint8: nonzero starts a segment)              */
  CLR_REQ_MATRIX,        /* a value per column (axis 0) or per row (axis
                            1) of a row-major matrix: rows, cols, pitch   */
  CLR_REQ_KIND_COUNT
} clr_request_kind;

/* "reduce", "scan", "dot", "segments", "ranges", "by-key",
 * "scan-segments", "scan-heads", "matrix"; "?" for no kind. */
CLR_API const char *clr_request_kind_name(clr_request_kind k);

/* An array a request reads or writes: a host array (host) or a buffer of
 * the context's cl_context (buffer), exactly one of them, from element
 * offset (in elements of the operand: input's type, the output's result
 * or output type, uint64 for offsets and ranges, bytes for heads, keys of
 * key_type; for host arrays too).  All zero: no operand.  An output's
 * host array is written through host. */
typedef struct clr_operand {
  const void *host;
  cl_mem buffer;
  size_t offset;
} clr_operand;

/* A request.  Set it up with clr_request_init (or CLR_REQUEST_INIT),
 * then name the parts its kind takes; a part a kind does not take must
 * stay as clr_request_init left it.  Per kind (every array: operand
 * offsets as above; all host arrays or all buffers, never mixed):
 *   REDUCE         input (n elements of type); clr_run returns the value
 *                  in *result, or with output (a buffer: clr_enqueue
 *                  always) writes it to element output.offset of it, as
 *                  clr_reduce_buffer_async (clr_result_bytes a result).
 *   SCAN           input -> output (n elements each, output of
 *                  clr_scan_output_type; the same operand scans in place).
 *   DOT            input (x) and input2 (y); op CLR_SUM; *result, or
 *                  with output (a buffer: clr_enqueue always) the sum at
 *                  element output.offset of it, as clr_dot_buffer_async.
 *   SEGMENTS       input, segments (n_segments + 1 offsets), output
 *                  (n_segments results of clr_result_bytes).
 *   RANGES         input, segments (2 * n_segments uint64: offset, length
 *                  a range), output (n_segments results).
 *   BY_KEY         input (n values of type), segments (n keys of
 *                  key_type), output (a result a run) and output_keys (a
 *                  key a run), room for n runs (buffers under clr_run:
 *                  for the runs only); the number of runs goes to *n_runs
 *                  (clr_enqueue: to run_count, on the device, and both
 *                  outputs must have room for n runs, checked up front,
 *                  since the count is not known on the host; past the
 *                  count, output holds unspecified values (what an empty
 *                  segment gives) and output_keys is not written).
 *   SCAN_SEGMENTS  input -> output, segments (n_segments + 1 offsets).
 *   SCAN_HEADS     input -> output, segments (n flag bytes).
 *   MATRIX         input (rows x cols elements, pitch apart), output
 *                  (cols results for axis 0, rows for axis 1, of
 *                  clr_result_bytes each); n stays 0 (see rows below).
 * Each kind has the rules, options and refusals of its entry point
 * (clr_reduce_host / _buffer, clr_scan_host / _buffer_range, clr_dot_*,
 * clr_reduce_segments_*, clr_reduce_ranges_*, clr_reduce_by_key_*,
 * clr_scan_segments_*, clr_scan_heads_*), which clr_run calls. */
typedef struct clr_request {
  /* sizeof(clr_request): clr_request_init or CLR_REQUEST_INIT ("sized
   * structs" above). */
  uint32_t struct_size;
  clr_request_kind kind; /* default CLR_REQ_REDUCE */
  clr_op op;             /* default CLR_SUM */
  /* The elements' type (BY_KEY: the values'); CLR_TYPE_DEFAULT, the
   * default, is refused: every request names its type. */
  clr_type type;
  /* Elements of input (and of input2 and a scan's output; BY_KEY: of the
   * keys and of the values). */
  size_t n;
  clr_operand input;    /* the elements (DOT: x) */
  clr_operand input2;   /* DOT: y */
  clr_operand segments; /* offsets, ranges, keys or heads (see above) */
  /* SEGMENTS and SCAN_SEGMENTS: the segments; RANGES: the ranges. */
  size_t n_segments;
  /* BY_KEY: the keys' type, int, uint, long or ulong; CLR_TYPE_DEFAULT
   * (the default) for the other kinds. */
  clr_type key_type;
  clr_operand output;         /* where the results go (see above) */
  clr_operand output_keys;    /* BY_KEY: the runs' keys */
  size_t *n_runs;             /* BY_KEY: receives the number of runs */
  const clr_options *options; /* NULL: the defaults */
  /* NULL: the context's queue.  Else a queue of the context's cl_context
   * and device (else CLR_ERR_INVALID_ARGUMENT) that the call runs on, as
   * the context's own queue for the call: after the commands already on
   * that queue (in order), its event a command of that queue; the
   * context then returns to its own queue, its later calls ordered after
   * this one on the device (a marker and a barrier, no host wait).  An
   * out-of-order queue is taken as clr_context_create_from_queue takes
   * one: the call waits for it (clr_enqueue: for its wait list only) and
   * runs on the context's in-order queue. */
  cl_command_queue queue;

  /* The fields below came after the first clr_request: a program built
   * with an older header passes a smaller struct_size, and they keep
   * their defaults (unset). */

  /* Scratch memory for the call, instead of the context's own (which the
   * context allocates on first need and keeps): a buffer of the context's
   * cl_context (scratch.host stays NULL), readable and writable, from byte
   * scratch.offset (in bytes, whatever the kind; the byte it names in the
   * buffer, or in a sub-buffer's parent, a multiple of the device's
   * CL_DEVICE_MEM_BASE_ADDR_ALIGN, else CLR_ERR_INVALID_ARGUMENT),
   * scratch_bytes long: at least what clr_request_scratch_size gives for
   * the request (less: CLR_ERR_INVALID_ARGUMENT naming both sizes); not
   * overlapping the request's operands.  The call owns those bytes until
   * it returns (clr_enqueue: until its event completes); their contents
   * before and after mean nothing; the context keeps no reference to the
   * buffer.  Taken by every kind of buffers; host arrays (staged through
   * the context's own buffers) give CLR_ERR_UNSUPPORTED.  RANGES under
   * clr_run computes in it as clr_enqueue does (the ranges checked and
   * reduced on the device, only the verdict read back: a bad range still
   * refused), so a float sum may differ in its last bits from clr_run's
   * without scratch. */
  clr_operand scratch;
  size_t scratch_bytes;
  /* clr_enqueue of SEGMENTS, SCAN_SEGMENTS (their offsets) and RANGES
   * (their ranges), which are checked on the device and not read back: a
   * buffer whose cl_ulong at element status.offset receives 0 when every
   * offset (range) is good, else 1 + the index of a bad one; with a bad
   * one, no element is read through it and the outputs' contents are
   * unspecified.  Unset: the same check, its verdict not written. */
  clr_operand status;
  /* clr_enqueue of BY_KEY: the number of runs, written on the device as
   * the cl_ulong at element run_count.offset of run_count.buffer (n_runs,
   * the host's, stays NULL there). */
  clr_operand run_count;
  /* MATRIX: a row-major matrix of rows x cols elements (both at least 1)
   * from input's first, row r starting pitch elements after row r - 1
   * (pitch 0: cols; a sub-matrix of a wider one: that one's width).  axis
   * 0 folds each column over the rows (a result per column, NumPy's
   * a.sum(axis=0)), axis 1 each row over the columns (a result per row).
   * Every operation of clr_reduce_host but exact sums (var and std too:
   * a record per result, see clreduce_ops.def; nanmean divides each
   * column's or row's sum by its own count of numbers, NaN where it has
   * none), with
   * maps (an expression's i: the element's index from input's first,
   * r * pitch + c, from index_base), argmin, argmax and minmax indices
   * within the axis folded (the row for axis 0, the column for axis 1).
   * The matrix is read once, in memory order (columns: never through a
   * transposed copy).  Host arrays larger than one device allocation are
   * streamed in blocks of rows (axis 1: a row must fit one allocation).
   * The other kinds leave these 0. */
  size_t rows;
  size_t cols;
  size_t pitch;
  int axis;
} clr_request;

/* The defaults: kind CLR_REQ_REDUCE, op CLR_SUM, type and key_type
 * CLR_TYPE_DEFAULT, every other field 0 or NULL. */
#define CLR_REQUEST_INIT                                                       \
  {                                                                            \
    (uint32_t)sizeof(clr_request), CLR_REQ_REDUCE, CLR_SUM, CLR_TYPE_DEFAULT,  \
        0, {NULL, NULL, 0}, {NULL, NULL, 0}, {NULL, NULL, 0}, 0,               \
        CLR_TYPE_DEFAULT, {NULL, NULL, 0}, {NULL, NULL, 0}, NULL, NULL, NULL,  \
        {NULL, NULL, 0}, 0, {NULL, NULL, 0}, {NULL, NULL, 0}, 0, 0, 0, 0       \
  }
/* The same for a request already declared.  Inline: it writes the size of
 * the header the program was built with, never more. */
static inline void clr_request_init(clr_request *r) {
  if (r) {
    const clr_request d = CLR_REQUEST_INIT;
    *r = d;
  }
}

/* Run the request and return when it is done (its outputs written, its
 * host arrays free to reuse).  result: the value of a REDUCE or a DOT
 * without output; NULL for every other request.  The request is
 * checked first, each refusal CLR_ERR_INVALID_ARGUMENT with a one-line
 * detail (clr_context_error) and nothing run: a NULL request, a
 * struct_size of 0 (CLR_ERR_VERSION for one this library does not take:
 * above its sizeof, inside a field, or shorter than the first
 * clr_request, which had every field up to queue), an unknown kind,
 * a type not set, an operand with both host and buffer, one the kind needs
 * and lacks or does not take, host arrays and buffers mixed, result NULL
 * where a value is returned or given where none is; then the entry point
 * checks the rest as it always does. */
CLR_API clr_status clr_run(clr_context *ctx, const clr_request *r,
                           clr_value *result);

/* Enqueue the request and return without waiting: its first command waits
 * for the num_events events of wait_list; *event (event may be NULL)
 * completes when its outputs are written (release it with
 * clReleaseEvent); nothing waits on the host, so calls chain on the
 * device.  Every kind of buffers runs so:
 *   REDUCE and DOT    into an output buffer (clr_reduce_buffer_async,
 *                     clr_dot_buffer_async); exact sums and means finished
 *                     on the device, the bits of the blocking call's;
 *   SCAN, SCAN_HEADS  clr_scan_buffer_async, clr_scan_heads_buffer_async;
 *   SEGMENTS, SCAN_SEGMENTS, RANGES
 *                     their offsets or ranges checked on the device, the
 *                     verdict to status: with a bad one nothing is read
 *                     through it (a bad range is taken as empty);
 *   BY_KEY            the number of runs to run_count, the outputs with
 *                     room for n runs;
 *   MATRIX            the blocking call's launches, chained.
 * Var and std finish their records in place with a kernel chained after
 * the passes (matrix rows: the passes' last writes), whose event *event
 * is.  Host arrays give
 * CLR_ERR_UNSUPPORTED (they are copied and read back on the host: use
 * clr_run); the checks of clr_run otherwise. */
CLR_API clr_status clr_enqueue(clr_context *ctx, const clr_request *r,
                               cl_uint num_events, const cl_event *wait_list,
                               cl_event *event);

/* The bytes of device scratch the request takes as its scratch
 * (clr_request.scratch): what its call would otherwise allocate in the
 * context's own buffers and release (every buffer its driver reserves,
 * the small fixed ones too, each rounded up to the device's base address
 * alignment), computed without enqueuing anything (its kernels may be
 * built).  The request is read and checked as the call that takes it
 * would (clr_enqueue's when it gives run_count or status, else
 * clr_run's); the size serves both calls (a REDUCE or DOT with an output
 * runs as clr_enqueue's under clr_run too; without one, clr_run's value).
 * One byte less is refused.  Exact (the call reserves all of it) for
 * SCAN, SCAN_HEADS, MATRIX (0 where no launch cuts its rows into pieces),
 * RANGES, REDUCE and DOT (the partials of its passes, the single launch's
 * ticket and slots, an exact sum's accumulator, a mean's sum and count)
 * and BY_KEY under clr_enqueue; upper bounds otherwise: BY_KEY under clr_run
 * (its runs are at most n), SEGMENTS and SCAN_SEGMENTS (both calls'
 * buffers: clr_run's check of the offsets and clr_enqueue's checked copy
 * of them; SEGMENTS' launch sized for segments of any length, which
 * clr_run learns on the device).  CLR_ERR_UNSUPPORTED for host arrays
 * (see scratch above). */
CLR_API clr_status clr_request_scratch_size(clr_context *ctx,
                                            const clr_request *r,
                                            size_t *bytes);

/* ---------------------------------------------------------- entry points */

/* Thin wrappers kept for compatibility (clr_prepare aside); new code uses
 * clr_run / clr_enqueue ("requests" above). */

/* Build (or fetch from cache) the programs a call would use, so build time
 * can be measured apart from the run.  Sets clr_timing.build_ms. */
CLR_API clr_status clr_prepare(clr_context *ctx, const clr_options *opt,
                               clr_op op, clr_type type);

/* Reduce n elements of a host array.  Any n >= 1; arrays larger than one
 * device allocation are streamed in chunks.  result->type is
 * clr_result_type(op, type, opt->narrow_accumulator).  opt may be NULL. */
CLR_API clr_status clr_reduce_host(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, const void *data,
                                   size_t n, clr_value *result);

/* Reduce n elements of a buffer of the context's cl_context, starting at
 * element offset.  The buffer is only read.  A cl_mem of another
 * cl_context, a CL_MEM_WRITE_ONLY buffer, or a range past the buffer's end
 * gives CLR_ERR_INVALID_ARGUMENT with a message (clr_context_error). */
CLR_API clr_status clr_reduce_buffer(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, cl_mem buf,
                                     size_t offset, size_t n,
                                     clr_value *result);

/* The asynchronous form of clr_reduce_buffer: enqueue the reduction and
 * return without waiting.  Its first command waits for the num_events
 * events of wait_list (may be 0 / NULL); the result (one value of
 * clr_options_result_type) is written to element result_index of the
 * caller's
 * buffer result, which its next kernels can read; *event (when event is
 * not NULL) completes when it is there (release it with clReleaseEvent).
 * Nothing is read back to the host, so a GPU pipeline chains calls with no
 * host sync.  On an in-order queue the call is ordered after the caller's
 * earlier commands anyway; beside an out-of-order queue
 * (clr_context_create_from_queue) only the wait list orders it.  Buffers
 * must stay alive and unwritten until the event completes.  clr_last_timing
 * then has the passes' shapes but no times.  result's elements are
 * clr_result_bytes(opt, op, type) bytes: one value of
 * clr_options_result_type, or for argmin, argmax and minmax a record of
 * the minimum (at byte 0), the maximum (at the value size), the index of
 * the minimum (a uint64_t at twice the value size) and of the maximum (8
 * bytes later); argmin fills the minimum's half, argmax the maximum's;
 * for var and std a record of the variance (or standard deviation) at
 * byte 0, the mean at the value size, both of clr_options_result_type,
 * and the count of elements (a uint64_t at twice the value size), made so
 * by a kernel enqueued after the passes, whose event *event is
 * (clr_result_at decodes it).  Exact sums are rounded on the device (the
 * bits clr_reduce_buffer gives) and means divided there as
 * clr_reduce_buffer divides (its long double division emulated bit for
 * bit where the host's long double has 53 to 64 significand bits;
 * elsewhere a mean gives CLR_ERR_UNSUPPORTED). */
CLR_API clr_status clr_reduce_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem buf, size_t offset, size_t n, cl_mem result, size_t result_index,
    cl_uint num_events, const cl_event *wait_list, cl_event *event);

/* Prefix scan of n elements from in to out (out == in scans in place).
 * Output has the type clr_scan_output_type: the input type (integer sums
 * wrap), float for half data, or accumulate_in (of the input's kind, at
 * least as wide: int scanned into long, float into double; then in and
 * out are two arrays).  Sum, prod, min and max.
 * opt->kernel names the scan; CLR_KERNEL_DEFAULT there (the default of
 * clr_options_init) selects the device's tuned scan (clr_tuning.scan_kernel:
 * decoupled look-back on GPUs); a reduction kernel (CLR_REDUCE_COARSE
 * included), or a value that is no kernel, gives CLR_ERR_INVALID_ARGUMENT.  opt
 * may be NULL.  in and out are either the same array (in place) or do not
 * overlap at all: a partial overlap gives CLR_ERR_INVALID_ARGUMENT (for
 * clr_scan_buffer: two sub-buffers of one buffer, or buffers over the same host
 * memory). */
CLR_API clr_status clr_scan_host(clr_context *ctx, const clr_options *opt,
                                 clr_op op, clr_type type, const void *in,
                                 void *out, size_t n);
/* Buffers of the context's cl_context, each of at least n elements: in
 * readable (not CL_MEM_WRITE_ONLY), out writable (not CL_MEM_READ_ONLY;
 * in place, in must be both), else CLR_ERR_INVALID_ARGUMENT. */
CLR_API clr_status clr_scan_buffer(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, cl_mem in,
                                   cl_mem out, size_t n);
/* clr_scan_buffer over elements [in_offset, in_offset + n) of in, written
 * to [out_offset, out_offset + n) of out: the same buffer with equal
 * offsets scans in place, ranges of one buffer that do not overlap are
 * two arrays, and a partial overlap gives CLR_ERR_INVALID_ARGUMENT (as
 * does a range past a buffer's end). */
CLR_API clr_status clr_scan_buffer_range(clr_context *ctx,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem in,
                                         size_t in_offset, cl_mem out,
                                         size_t out_offset, size_t n);
/* The asynchronous form of clr_scan_buffer_range, as
 * clr_reduce_buffer_async: the first command waits for the wait list,
 * *event completes when out holds the scan, nothing waits on the host
 * (the decoupled scan's state buffers are zeroed on the device, in queue
 * order).  A carry_in value is copied during the call. */
CLR_API clr_status clr_scan_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_uint num_events, const cl_event *wait_list, cl_event *event);

/* Dot product: the sum of x[k] * y[k] (in the result type, as a sum of
 * type would be) over n elements of two arrays of one type, read once in
 * one pass; with opt->map CLR_MAP_EXPR the sum of map_expr over x, y and
 * i instead ("fabs(x - y)": the L1 distance).  Host arrays of any n are
 * streamed together. */
CLR_API clr_status clr_dot_host(clr_context *ctx, const clr_options *opt,
                                clr_type type, const void *x, const void *y,
                                size_t n, clr_value *result);
CLR_API clr_status clr_dot_buffer(clr_context *ctx, const clr_options *opt,
                                  clr_type type, cl_mem x, size_t x_offset,
                                  cl_mem y, size_t y_offset, size_t n,
                                  clr_value *result);
/* The asynchronous form of clr_dot_buffer, as clr_reduce_buffer_async:
 * the first pass waits for the num_events events of wait_list, the sum
 * (one value of clr_options_result_type(opt, CLR_SUM, type)) is written
 * to element result_index of the buffer result (elements of
 * clr_result_bytes(opt, CLR_SUM, type) bytes), *event completes when it
 * is there; nothing waits on the host, clr_last_timing has the passes'
 * shapes but no times.  Exact dot products give CLR_ERR_UNSUPPORTED (as
 * clr_dot_buffer), y NULL CLR_ERR_INVALID_ARGUMENT. */
CLR_API clr_status clr_dot_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_type type, cl_mem x,
    size_t x_offset, cl_mem y, size_t y_offset, size_t n, cl_mem result,
    size_t result_index, cl_uint num_events, const cl_event *wait_list,
    cl_event *event);

/* ------------------------------------------------ exact sums in parts */

/* The superaccumulator of an exact float or double sum (clr_options.exact):
 * the parts of one sum (arrays on several devices, MPI ranks, pieces summed
 * at different times) add into it exactly, in any order and grouping, and
 * it is rounded once at the end, so the result has the same bits as one
 * exact sum of all the elements.  words[] are the 32-bit digits of a fixed-
 * point number whose bit 0 is the type's smallest denormal (12 words for
 * float, 69 for double; the rest stay 0), the last one signed; flags note
 * infinities, NaN and an element other than -0.  Two accumulators merge
 * by adding their words as integers and or-ing their flags: MPI_SUM over
 * MPI_INT64_T and MPI_BOR over MPI_UINT32_T combine ranks' accumulators
 * (up to 2^29 of them) for clr_exact_acc_value. */
#define CLR_EXACT_WORDS 70
typedef struct clr_exact_acc {
  clr_type type; /* CLR_FLOAT or CLR_DOUBLE */
  uint32_t flags;
  int64_t words[CLR_EXACT_WORDS];
} clr_exact_acc;

/* An empty accumulator (the sum of no elements, -0) of float or double. */
CLR_API clr_status clr_exact_acc_init(clr_exact_acc *acc, clr_type type);
/* Add the exact sum of n elements to acc (of the same type).  opt gives
 * the shape as for clr_reduce_host (exact is implied; may be NULL). */
CLR_API clr_status clr_exact_add_host(clr_context *ctx, const clr_options *opt,
                                      clr_type type, const void *data, size_t n,
                                      clr_exact_acc *acc);
CLR_API clr_status clr_exact_add_buffer(clr_context *ctx,
                                        const clr_options *opt, clr_type type,
                                        cl_mem buf, size_t offset, size_t n,
                                        clr_exact_acc *acc);
/* dst += src (the same type), exactly.  CLR_ERR_INVALID_ARGUMENT, dst
 * unchanged, for a word beyond 2^62 in magnitude in either, or a sum
 * whose top word would be. */
CLR_API clr_status clr_exact_acc_merge(clr_exact_acc *dst,
                                       const clr_exact_acc *src);
/* The accumulator rounded once to nearest, ties to even: what
 * clr_reduce_host with exact set returns for all its parts together.
 * CLR_ERR_INVALID_ARGUMENT for a word beyond 2^62 in magnitude (more than
 * 2^29 accumulators summed without merging). */
CLR_API clr_status clr_exact_acc_value(const clr_exact_acc *acc,
                                       clr_value *out);

/* ------------------------------------------------- segmented reductions */

/* Thin wrappers kept for compatibility; new code uses clr_run /
 * clr_enqueue ("requests" above). */

/* One reduction per segment, all in one call: segments given CSR-style by
 * n_segments + 1 offsets, segment s being elements [offsets[s],
 * offsets[s + 1]) of data.  So offsets[0] is 0, they never decrease and
 * offsets[n_segments] is n; a segment may be empty, and its result is
 * then the operation's identity (0 for sum and or, 1 for prod and and,
 * +inf or the type's largest value for min, -inf or its lowest for max).
 * Any lengths, mixed: the work is split evenly over the elements and the
 * segment ends together (merge path), so a segment of 3e7 elements beside
 * a million of length 1 keeps every work-item busy.  results receives
 * n_segments results of clr_result_bytes(opt, op, type) bytes each: a
 * value of clr_options_result_type(opt, op, type), or for argmin, argmax
 * and minmax the record clr_reduce_buffer_async describes, its index (or
 * indices) counted from the segment's first element, the first index of
 * the extreme value (UINT64_MAX for an empty segment); clr_result_at
 * decodes one.  Every operation of clr_reduce_host (a mean: the sum
 * divided by the segment's length; NaN for an empty segment; var and std:
 * a (value, mean, count) record each, see clreduce_ops.def), with opt->map
 * (built-in maps, and expressions of x and i, i counted from index_base at
 * the first element of data); accumulate_in and narrow_accumulator as
 * for clr_reduce_host.  opt->layout chooses the form: CLR_LAYOUT_STRIDED (the
 * GPUs' default) gives each work-group a tile in local memory,
 * CLR_LAYOUT_CONTIGUOUS (the CPUs') each work-item a run of its own;
 * opt->coarse, when set, is the elements plus segment ends each work-item takes
 * (by default 16 in tiles, 8 for 8-byte results, as local memory allows; 2048
 * in runs; at most 2^32), opt->wg_size the work-group size; vector_width does
 * not apply.  n >= 1 and n_segments
 * >= 1.  Offsets that are no such partition give CLR_ERR_INVALID_ARGUMENT
 * naming the first bad one, and nothing is read through them.  Host data
 * larger than one device allocation is streamed in chunks (the offsets and
 * the results must each fit in one).  clr_timing.error_depth bounds every
 * segment's chain of roundings (and no segment's exceeds its length). */
CLR_API clr_status clr_reduce_segments_host(clr_context *ctx,
                                            const clr_options *opt, clr_op op,
                                            clr_type type, const void *data,
                                            size_t n, const uint64_t *offsets,
                                            size_t n_segments, void *results);
/* The same over buffers of the context's cl_context: n elements of data
 * from element data_offset; n_segments + 1 cl_ulong offsets (relative to
 * data_offset) from element offsets_offset of offsets; the results written
 * from element results_offset of results.  The offsets are checked on the
 * device before any element is read through them (one flag read back).
 * Enqueued (clr_enqueue of a SEGMENTS request) nothing is read back: the
 * check's verdict goes to the request's status, a bad offset leaves the
 * results unspecified but reads and writes nothing out of bounds, and the
 * work is split by the merge path whatever the segments' lengths. */
CLR_API clr_status clr_reduce_segments_buffer(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem data, size_t data_offset, size_t n, cl_mem offsets,
    size_t offsets_offset, size_t n_segments, cl_mem results,
    size_t results_offset);

/* Reduce-by-key (CUB's ReduceByKey, Thrust's reduce_by_key): the runs of
 * equal consecutive keys (int, uint, long or ulong; sorted or not: each
 * run is a group) give one key and one result each, in order.  keys and
 * values are n elements each; unique_keys (of key_type) and results (of
 * clr_result_bytes each; argmin's index counts from the run's first
 * element) must have room for as many runs as there can be (n); *n_runs
 * receives their number.  The same operations, maps and
 * options as clr_reduce_segments_host, which reduces the runs once they
 * are found: the keys are read on the host, where they are (twice: to
 * count the runs, then to list them). */
CLR_API clr_status clr_reduce_by_key_host(clr_context *ctx,
                                          const clr_options *opt, clr_op op,
                                          clr_type key_type, const void *keys,
                                          clr_type type, const void *values,
                                          size_t n, void *unique_keys,
                                          void *results, size_t *n_runs);
/* The same over buffers, on the device: n keys from element keys_offset
 * of keys and n values from element values_offset of values; the runs'
 * keys written from element unique_keys_offset of unique_keys and their
 * results from element results_offset of results, each of which needs
 * room for the runs only (checked once they are counted).  keys and
 * unique_keys must not overlap.  The runs are found by two small kernels
 * and a scan over a context buffer of n ulongs (8n bytes); only their
 * count is read back (8 bytes). */
CLR_API clr_status clr_reduce_by_key_buffer(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type key_type,
    cl_mem keys, size_t keys_offset, clr_type type, cl_mem values,
    size_t values_offset, size_t n, cl_mem unique_keys,
    size_t unique_keys_offset, cl_mem results, size_t results_offset,
    size_t *n_runs);

/* Batches: one reduction per range of one array, all in one call.  Range
 * r is elements [ranges[2r], ranges[2r] + ranges[2r + 1]) (offset and
 * length, 64-bit) of data: in any order, overlapping or not, empty ones
 * allowed (their result is the identity); each must lie within [0, n),
 * else CLR_ERR_INVALID_ARGUMENT names the first that does not.  The same
 * operations, types and options as clr_reduce_segments_host, on which it
 * is built: sorted disjoint ranges are reduced where they lie (the gaps
 * between them, when no larger than twice their elements, read and
 * dropped), other short ones (under 65536 elements) copied together
 * first, unless a map expression reads i (the element's index in data,
 * from index_base, whatever the batch): then every batch is read in place,
 * and unsorted or overlapping short ranges take a batch each.  results
 * receives n_ranges results of clr_result_bytes (argmin's index counted
 * from the range's first element).
 * For the rows of a row-major matrix, clr_reduce_segments_host with
 * offsets 0, L, 2L, ... is the direct form. */
CLR_API clr_status clr_reduce_ranges_host(clr_context *ctx,
                                          const clr_options *opt, clr_op op,
                                          clr_type type, const void *data,
                                          size_t n, const uint64_t *ranges,
                                          size_t n_ranges, void *results);
/* The same over buffers: n elements of data from element data_offset,
 * 2 * n_ranges cl_ulongs of ranges (relative to data_offset) from
 * element ranges_offset, the results from element results_offset.  The
 * ranges are read back to the host (16 bytes a range) to plan the
 * batches; the data stays on the device.  Returns when the results are
 * written. */
CLR_API clr_status clr_reduce_ranges_buffer(clr_context *ctx,
                                            const clr_options *opt, clr_op op,
                                            clr_type type, cl_mem data,
                                            size_t data_offset, size_t n,
                                            cl_mem ranges, size_t ranges_offset,
                                            size_t n_ranges, cl_mem results,
                                            size_t results_offset);

/* ---------------------------------------------------- segmented scans */

/* Thin wrappers kept for compatibility; new code uses clr_run /
 * clr_enqueue ("requests" above). */

/* Prefix scans that restart at every segment head, all in one call: the
 * scan of clr_scan_host (the same ops, types, output type, opt->exclusive
 * and in-place rule) within each segment.  An exclusive scan gives a
 * segment's first element the identity.  opt->carry_in, when set, is
 * combined before element 0 as part of the first segment.  Segments are
 * given CSR-style as for clr_reduce_segments_host (n_segments + 1 offsets:
 * 0, never decreasing, n at the end; empty segments allowed; a bad one is
 * refused, naming it, before anything is read through it), or by a flag
 * byte an element (heads[i] != 0: a segment starts at element i; element
 * 0 always starts one).  Any lengths: the work is split evenly over the
 * elements, whatever the segments.  opt->coarse, when set, is the
 * elements a work-item scans (at least 2; by default 2048 on CPUs; on
 * GPUs, in tiles of local memory, 32, or 8 of 8-byte types, at most 32),
 * opt->wg_size the work-group size; opt->layout the form (runs:
 * contiguous, tiles: strided); opt->kernel stays at its
 * default, and maps and exact sums do not apply.  Host arrays larger than
 * one device allocation are streamed in chunks.  clr_timing.error_depth
 * bounds every output's chain of roundings (with offsets, never more than
 * the longest segment). */
CLR_API clr_status clr_scan_segments_host(clr_context *ctx,
                                          const clr_options *opt, clr_op op,
                                          clr_type type, const void *in,
                                          void *out, size_t n,
                                          const uint64_t *offsets,
                                          size_t n_segments);
CLR_API clr_status clr_scan_heads_host(clr_context *ctx, const clr_options *opt,
                                       clr_op op, clr_type type, const void *in,
                                       void *out, size_t n,
                                       const uint8_t *heads);
/* The same over buffers of the context's cl_context: n elements from
 * element in_offset of in to element out_offset of out; n_segments + 1
 * cl_ulong offsets from element offsets_offset of offsets (checked on the
 * device first: one flag read back), or n flag bytes from byte
 * heads_offset of heads. */
CLR_API clr_status clr_scan_segments_buffer(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_mem offsets, size_t offsets_offset, size_t n_segments);
CLR_API clr_status clr_scan_heads_buffer(clr_context *ctx,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem in,
                                         size_t in_offset, cl_mem out,
                                         size_t out_offset, size_t n,
                                         cl_mem heads, size_t heads_offset);
/* The asynchronous form of clr_scan_heads_buffer, as
 * clr_reduce_buffer_async: the first pass waits for the num_events events
 * of wait_list, *event (the last pass's) completes when out holds the
 * scan, nothing waits on the host (clr_last_timing: the passes' shapes,
 * no times); a carry_in value is copied during the call. */
CLR_API clr_status clr_scan_heads_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_mem heads, size_t heads_offset, cl_uint num_events,
    const cl_event *wait_list, cl_event *event);

/* ---------------------------------------------------------- several devices */

/* A group of contexts, one per device, that runs one reduction or scan
 * over all of them (docs/SCALING.md): the n elements are split into
 * contiguous parts in proportion to the devices' weights (their read
 * bandwidth, measured when the group is made), every device works on its
 * part at once (a host thread each), and the parts' results are combined
 * on the host in device order.  The result depends on the split (n and
 * the weights), never on timing: an exact sum is the same bits for every
 * split, other floating-point results for every run with the same
 * weights.  A group is used by one thread at a time, and its contexts by
 * no one else during its calls. */
#define CLR_GROUP_MAX_DEVICES 64
/* Parts start at multiples of this many elements. */
#define CLR_GROUP_GRAIN 4096
typedef struct clr_group clr_group;

/* The platform a context takes when no device is named, and a group's:
 * of the platforms that platform selects (as clr_context_config.platform
 * takes it: NULL or "" all of them, a decimal index, else a substring of
 * the platform's name, ignoring case), the first with a GPU, else the
 * first with any device.  *index receives its index (as
 * clr_device_desc.platform_index; written in decimal, it selects that
 * platform alone).  CLR_ERR_NO_PLATFORM when there is no platform or none
 * matches, CLR_ERR_NO_DEVICE when those that match have no device; detail
 * (may be NULL) receives a one-line reason on failure. */
CLR_API clr_status clr_platform_choose(const char *platform, unsigned *index,
                                       char *detail, size_t detail_size);
/* A context of cfg (cfg->device ignored; cfg may be NULL) on each device
 * that devices names, all of one platform: the one
 * clr_platform_choose(cfg->platform) picks.  "all": every device of it;
 * or a comma-separated list of its devices, by index or name as
 * clr_context_config.device takes them ("0,1").  Measures each device's
 * read bandwidth (64 MiB, a few milliseconds on a GPU) for the weights.
 * detail (may be NULL) receives a one-line reason on failure. */
CLR_API clr_status clr_group_create(const clr_context_config *cfg,
                                    const char *devices, clr_group **out,
                                    char *detail, size_t detail_size);
/* A group over the caller's contexts (1 to CLR_GROUP_MAX_DEVICES distinct
 * ones, kept by the caller: clr_group_release leaves them), such as
 * contexts on the sub-devices clCreateSubDevices makes. */
CLR_API clr_status clr_group_create_from(clr_context *const *contexts,
                                         size_t count, clr_group **out,
                                         char *detail, size_t detail_size);
/* Release the group (NULL: nothing), and the contexts it made
 * (clr_group_create's; clr_group_create_from's stay the caller's).  A
 * pending asynchronous call is waited for first (clr_group_wait): never
 * release a group from its call's done callback. */
CLR_API void clr_group_release(clr_group *g);
CLR_API size_t clr_group_size(const clr_group *g);
/* Device i's context (NULL past the end): its clr_last_timing describes
 * its part of the group's last call. */
CLR_API clr_context *clr_group_context(const clr_group *g, size_t i);
/* One-line detail of the group's last failure ("" if none), naming the
 * device when a part failed. */
CLR_API const char *clr_group_error(const clr_group *g);
/* The weights (clr_group_size values): measured GB/s, the mean over
 * devices of one model (name and driver), rounded to quarter steps of a
 * power of two relative to the largest; setting them fixes the split
 * whatever the bandwidth of the day. */
CLR_API clr_status clr_group_weights(const clr_group *g, double *weights);
CLR_API clr_status clr_group_set_weights(clr_group *g, const double *weights);
/* How n elements are split: counts[i] consecutive elements to device i. */
CLR_API clr_status clr_group_split(const clr_group *g, size_t n,
                                   size_t *counts);
/* Build (or load) every device's programs for the call, at once. */
CLR_API clr_status clr_group_prepare(clr_group *g, const clr_options *opt,
                                     clr_op op, clr_type type);
/* clr_reduce_host over the group: every operation, map, option and exact
 * sum, indices counted over the whole array. */
CLR_API clr_status clr_group_reduce_host(clr_group *g, const clr_options *opt,
                                         clr_op op, clr_type type,
                                         const void *data, size_t n,
                                         clr_value *result);
CLR_API clr_status clr_group_dot_host(clr_group *g, const clr_options *opt,
                                      clr_type type, const void *x,
                                      const void *y, size_t n,
                                      clr_value *result);
/* Data that already lives on the devices: counts[i] elements of buffer
 * bufs[i] (of device i's context) from element offsets[i] (offsets may be
 * NULL: 0), the parts of one array in device order; a count may be 0. */
CLR_API clr_status clr_group_reduce_buffers(clr_group *g,
                                            const clr_options *opt, clr_op op,
                                            clr_type type, const cl_mem *bufs,
                                            const size_t *offsets,
                                            const size_t *counts,
                                            clr_value *result);
/* clr_scan_host over the group: every part but the last is reduced to its
 * total, the host folds the totals (after opt->carry_in) into each part's
 * carry-in, and every part is scanned with it, so the input is read twice
 * and the output written once. */
CLR_API clr_status clr_group_scan_host(clr_group *g, const clr_options *opt,
                                       clr_op op, clr_type type, const void *in,
                                       void *out, size_t n);
/* The same over buffers: counts[i] elements of in[i] from in_offsets[i]
 * written to out[i] from out_offsets[i] (offsets may be NULL). */
CLR_API clr_status clr_group_scan_buffers(
    clr_group *g, const clr_options *opt, clr_op op, clr_type type,
    const cl_mem *in, const size_t *in_offsets, const cl_mem *out,
    const size_t *out_offsets, const size_t *counts);

/* A request (see "requests") run over the group, blocking, as clr_run
 * runs it on one context: REDUCE and DOT of host arrays return their
 * value in *result (clr_group_reduce_host, clr_group_dot_host); SCAN
 * writes input's scan to output (clr_group_scan_host; result NULL).  The
 * request is checked as clr_run checks it, and also refused with
 * CLR_ERR_INVALID_ARGUMENT when it names a queue, scratch, status or
 * run_count: each device runs its part on its own context.  Other kinds
 * give CLR_ERR_UNSUPPORTED naming the kind, and so do buffers: a group's
 * data lives in one buffer a device, which one clr_request cannot name
 * (clr_group_reduce_buffers, clr_group_scan_buffers take them).  The
 * detail of a refusal is clr_group_error's.  Nothing of r is kept; the
 * host arrays are free again when the call returns.  A call while an
 * asynchronous call is pending on the group is refused
 * (CLR_ERR_INVALID_ARGUMENT), as is every group call that runs work. */
CLR_API clr_status clr_group_run(clr_group *g, const clr_request *r,
                                 clr_value *result);

/* Asynchronous group calls.  A call checks its arguments, enqueues every
 * device's part on its context's queue (after that device's wait list:
 * num_events[i] events of wait_lists[i]; num_events NULL: none) and
 * returns; nothing waits on the host.  When every part is done, the
 * group folds them in device order (the bits of the blocking call's
 * result), then calls done(g, status, user) once (done may be NULL),
 * then marks the call complete, which wakes clr_group_wait.
 *
 * done runs on a thread of the OpenCL implementation (an event
 * callback), or on the calling thread before the call returns when the
 * work was done already.  It may read the result and clr_group_error,
 * but must not call clr_group_wait or clr_group_release on g (they wait
 * for done to return) nor start another call on g (refused: the call is
 * still pending until done returns), and, as any OpenCL callback, should
 * be short and never block on OpenCL work.
 *
 * events (may be NULL): clr_group_size entries, each an event the caller
 * releases (clReleaseEvent): device i's part's last command (a
 * reduction: the read of its value to the host; a scan: the scan of its
 * part into out[i]), or for a device with no elements a marker after its
 * wait list.  Later commands on the devices wait for them: calls chain
 * with no host sync, across groups over the same contexts too
 * (clr_group_create_from), since a call touches its contexts only until
 * it returns.
 *
 * One asynchronous call may be pending on a group at a time: another
 * call on it (asynchronous or blocking, clr_group_run,
 * clr_group_prepare, clr_group_set_weights) returns
 * CLR_ERR_INVALID_ARGUMENT at once until the pending one completes.
 * The contexts themselves are free once the call returns (a context is
 * used by one thread at a time: the group's callbacks never touch them).
 * The buffers and *result must stay alive, and the buffers unwritten,
 * until the call completes.
 *
 * Errors: a refusal (the checks of the blocking call; exact sums, which
 * round their superaccumulators on the host, CLR_ERR_UNSUPPORTED) or a
 * failure while enqueueing is returned at once, with the detail in
 * clr_group_error; whatever the call had enqueued is then finished
 * (blocking), nothing stays pending, done is never called and events are
 * NULL.  A failure once the call is under way (a command whose event
 * completes with an error status) is reported to done and by
 * clr_group_wait, as CLR_ERR_OPENCL naming the device in clr_group_error;
 * *result (an output) is then unspecified.  CLR_OK from the call means
 * done will be called exactly once, when every part's last command has
 * completed: a wait-list event that never completes, or whose failure the
 * implementation does not pass on to the commands after it (PoCL 3.1
 * leaves them waiting), leaves the call pending.
 *
 * Thread safety: the group's state is locked; done may run on another
 * thread while the caller goes on: often an OpenCL implementation's
 * event-callback thread, where OpenCL forbids blocking calls (clFinish,
 * clWaitForEvents, blocking reads and writes, program builds), so done
 * must not make them, nor call clr_group_wait or clr_group_release on its
 * group; it should note the status and return.  clr_group_error and
 * clr_group_last_timing describe the asynchronous call once it has
 * completed (after clr_group_wait, or within done for the error). */
typedef void (*clr_group_done_fn)(clr_group *g, clr_status status, void *user);
/* clr_group_reduce_buffers, asynchronous: every operation but exact
 * sums; a mean's sum divided on the host when the parts are in. */
CLR_API clr_status clr_group_reduce_buffers_async(
    clr_group *g, const clr_options *opt, clr_op op, clr_type type,
    const cl_mem *bufs, const size_t *offsets, const size_t *counts,
    const cl_uint *num_events, const cl_event *const *wait_lists,
    cl_event *events, clr_value *result, clr_group_done_fn done, void *user);
/* clr_group_scan_buffers, asynchronous: every part but the last reduced
 * to its total and read back; each later part's scan waits on its device
 * for its carry-in, which the group writes (on a queue of its own beside
 * the context's) once the totals are in, from an event callback: the
 * caller is never blocked.  opt->carry_in is copied during the call. */
CLR_API clr_status clr_group_scan_buffers_async(
    clr_group *g, const clr_options *opt, clr_op op, clr_type type,
    const cl_mem *in, const size_t *in_offsets, const cl_mem *out,
    const size_t *out_offsets, const size_t *counts, const cl_uint *num_events,
    const cl_event *const *wait_lists, cl_event *events, clr_group_done_fn done,
    void *user);
/* Block until the group's pending asynchronous call has completed (its
 * done returned) and return its status; with none pending, at once,
 * the last asynchronous call's status (CLR_OK if there was none).  Safe
 * from any thread but done's; CLR_ERR_INVALID_ARGUMENT for NULL. */
CLR_API clr_status clr_group_wait(clr_group *g);

typedef struct clr_group_timing {
  double total_ms;     /* wall clock of the whole call                     */
  double parts_ms;     /* the devices' work: from the start to the slowest
                          part's end (scans: both rounds)                  */
  double combine_ms;   /* folding the parts' values (scans: the carries)   */
  size_t devices_used; /* parts with elements                              */
  size_t error_depth;  /* as clr_timing.error_depth, for the whole call    */
} clr_group_timing;

/* The timing of the group's last call, copied into *out (the caller's);
 * the fields a failed call did not reach are 0.  Does not block;
 * CLR_ERR_INVALID_ARGUMENT for a NULL argument. */
CLR_API clr_status clr_group_last_timing(const clr_group *g,
                                         clr_group_timing *out);

/* ----------------------------------------------------------------- timing */

/* The most passes a call's timing describes (clr_timing.n_passes). */
#define CLR_MAX_PASSES 64

/* One pass of the last call: clr_last_timing_pass. */
typedef struct clr_pass_info {
  uint32_t struct_size; /* sizeof(clr_pass_info): CLR_PASS_INFO_INIT  */
  size_t n_in;          /* elements read by this pass          */
  size_t global_size;   /* work-items launched                 */
  size_t local_size;    /* work-group size                     */
  double ms;            /* kernel time from profiling events (a
                           segmented reduction's tile pass on a GPU: from
                           the partition pass's end to the finishing pass's
                           start, the carry pyramid and the gaps between
                           launches included: it takes no event of its
                           own)                                          */
  int folds;            /* 1: its work-group that started last also
                           folded every group's partial into the result
                           (tuning reduce.single_launch): no later pass */
} clr_pass_info;

typedef struct clr_timing {
  uint32_t struct_size; /* sizeof(clr_timing): CLR_TIMING_INIT        */
  double kernel_ms;     /* first pass's start to last pass's end, summed over
                           chunks when the input was streamed                */
  double h2d_ms;        /* host-to-device transfer; 0 on devices that share
                           memory with the host, where host arrays are used in
                           place (see clr_context_config.copy_host_data)      */
  double d2h_ms;        /* device-to-host transfer                           */
  double build_ms;      /* program builds (or cache loads) during the call   */
  double total_ms;      /* wall clock of the whole call                      */
  size_t chunks;        /* 1 unless the input was streamed                   */
  size_t n_passes;      /* passes of the first chunk (at most CLR_MAX_PASSES),
                           each described by clr_last_timing_pass            */
  /* Longest chain of roundings any result went through: the k of the
   * a-priori floating-point error bound gamma_k * sum|x|. */
  size_t error_depth;
} clr_timing;

/* Set struct_size, every other field 0: clr_timing t = CLR_TIMING_INIT;
 * and clr_pass_info p = CLR_PASS_INFO_INIT; before the calls that fill
 * them. */
#define CLR_TIMING_INIT                                                        \
  { (uint32_t)sizeof(clr_timing), 0, 0, 0, 0, 0, 0, 0, 0 }
#define CLR_PASS_INFO_INIT                                                     \
  { (uint32_t)sizeof(clr_pass_info), 0, 0, 0, 0, 0 }

/* Timing and shape of the last successful call on this context, into the
 * first out->struct_size bytes of *out (CLR_TIMING_INIT).
 * CLR_ERR_INVALID_ARGUMENT for NULL or a struct_size of 0,
 * CLR_ERR_VERSION for one this library does not take ("sized structs");
 * neither records a detail (the context is const). */
CLR_API clr_status clr_last_timing(const clr_context *ctx, clr_timing *out);
/* Pass i (0 .. clr_timing.n_passes - 1) of the same call, into the first
 * out->struct_size bytes of *out (CLR_PASS_INFO_INIT).
 * CLR_ERR_INVALID_ARGUMENT for i past n_passes or NULL, and the struct_size
 * refusals of clr_last_timing. */
CLR_API clr_status clr_last_timing_pass(const clr_context *ctx, size_t i,
                                        clr_pass_info *out);

/* ----------------------------------------------------------------- tuning */

/* Launch parameters chosen per device.  A context starts from built-in
 * defaults for its device type, then reads, if present, a shipped file
 * (data/tuning/, installed under share/clreduce/tuning, or
 * $CLREDUCE_TUNING_DIR) whose match= line (or one of its |-separated
 * alternatives) is a substring of the device name, then the user's file
 * written by clr_autotune (<cache dir>/tuning/<device>.txt).  Explicit
 * clr_options still win. */
typedef struct clr_tuning {
  uint32_t struct_size;          /* sizeof(clr_tuning): CLR_TUNING_INIT  */
  size_t reduce_wg;              /* coarse reduction work-group size     */
  unsigned reduce_vec_bytes;     /* bytes per load (16: float4)          */
  clr_layout reduce_layout;      /* strided or contiguous                */
  unsigned reduce_groups_per_cu; /* work-groups per compute unit        */
  size_t scan_wg;                /* scan work-group size                 */
  size_t scan_per_item;          /* scan elements per work-item          */
  clr_kernel scan_kernel;        /* the scan used when none is named     */
  size_t decoupled_items;        /* decoupled scan: elements per item    */
  size_t decoupled_wg;           /* decoupled scan: work-group size      */
  size_t decoupled_run_items;    /* decoupled scan with decoupled_wg 1
                                    (the CPU shape): elements per run    */
  unsigned decoupled_spin;       /* the CPU shape: reads of the previous
                                    run's flag before a run computes its
                                    prefix itself (never a long wait)    */
  unsigned exact_terms;          /* exact sums: floating-point expansion
                                    terms, 1..8 (speed only, never bits) */
  unsigned exact_vec_bytes;      /* exact sums: bytes per load           */
  unsigned exact_int64_atomics;  /* exact sums: 1 uses 64-bit local atomics
                                    where the device has them; 0: 32-bit */
  unsigned minmax_vec_bytes;     /* minmax: bytes per load (wider than a
                                    sum's: more independent compares
                                    per load)                          */
  unsigned reduce_single_launch; /* coarse reduction: 1 has the last
                                    work-group of the first pass fold the
                                    partials (one launch, not two)       */
  unsigned stage_threads;        /* host arrays on devices that do not
                                    share the host's memory: threads
                                    copying through pinned blocks, 0..16
                                    (0: one direct write from the array);
                                    the context keeps the helper threads
                                    it starts (every signal blocked,
                                    parked between calls) until
                                    clr_context_release                 */
  unsigned stage_block_kib;      /* the pinned blocks' size, KiB (one
                                    write or read each, its pieces copied
                                    by the threads together); a context
                                    keeps four once it has staged a large
                                    array */
  size_t seg_units;              /* segmented reductions in tiles (GPUs):
                                    units (elements and segment ends) a
                                    work-item, accumulators of 4 bytes or
                                    less                                 */
  size_t seg_units_wide;         /* the same, 8-byte accumulators        */
  size_t reduce_min_vectors;     /* coarse reduction sized by the device:
                                    at least this many loads a work-item
                                    (fewer work-groups for small n)      */
  size_t scan_stream_bytes;      /* CPU scans store their output
                                    non-temporally when the bytes they
                                    touch (output, and input unless in
                                    place) exceed this; 0: the device's
                                    cache size                           */
  unsigned warp_shuffles;        /* NVIDIA's OpenCL: 1 uses warp shuffles
                                    (inline PTX) in work-groups of whole
                                    warps (the coarse reduction's tree,
                                    the decoupled scan, segmented tiles);
                                    0: local memory only                 */
  unsigned decoupled_slots;      /* decoupled scan (GPU shape), where the
                                    device has 64-bit atomics: 1 passes
                                    aggregates and prefixes in 64-bit
                                    slots tagged with the launch (one
                                    round trip, no flags, no fences);
                                    0: flags and 32-bit words            */
  unsigned reduce_min_groups_cu; /* coarse reduction sized by the device:
                                    its first pass takes at least this
                                    many work-groups a compute unit where
                                    n gives each work-item a load,
                                    whatever reduce_min_vectors asks (a
                                    small input over every compute unit);
                                    0: no floor                          */
} clr_tuning;

/* struct_size set, every other field 0: clr_tuning t = CLR_TUNING_INIT;
 * before clr_get_tuning fills it (C; in C++, clr_tuning t{}; and set
 * struct_size). */
#define CLR_TUNING_INIT                                                        \
  { .struct_size = (uint32_t)sizeof(clr_tuning) }

/* The context's tuning, copied into the first out->struct_size bytes of
 * *out (CLR_TUNING_INIT); the caller's struct, nothing kept or to free.
 * Does not block; the refusals of clr_last_timing. */
CLR_API clr_status clr_get_tuning(const clr_context *ctx, clr_tuning *out);
/* Apply t's first t->struct_size bytes (the fields past them keep the
 * context's values), every value checked against its key's limits
 * (CLR_ERR_INVALID_ARGUMENT naming the first bad one; nothing applied).
 * The values are copied: t is not kept.  Nothing is built or enqueued
 * here: a later call that needs a program for the new values builds (or
 * loads) it then. */
CLR_API clr_status clr_set_tuning(clr_context *ctx, const clr_tuning *t);
/* Where the context's tuning came from: "built-in defaults for a <device
 * type>", the tuning file's path, "(built into the library)/<file>" for a
 * shipped file built in (-Dembed_kernels), or after clr_set_tuning
 * "set by the caller"; "" for NULL.  Borrowed: valid until the context's
 * tuning next changes (clr_set_tuning, clr_autotune) or the context is
 * released. */
CLR_API const char *clr_tuning_origin(const clr_context *ctx);

/* Search the coarse reduction's and the scan's parameters on this device
 * (float sum over n elements, median kernel time), apply the winner to the
 * context and store it in the user's tuning file, whose path is written to
 * saved_path (may be NULL).  Progress goes to the log callback.  Takes
 * seconds to minutes. */
CLR_API clr_status clr_autotune(clr_context *ctx, size_t n, char *saved_path,
                                size_t path_size);

/* Measure the device's read bandwidth: a plain streaming kernel reads a
 * buffer of `bytes` (at most one device allocation) in the access pattern
 * the coarse reduction uses; after two warm-up runs, the median kernel time
 * of `repeats` runs is returned.  GB/s = bytes / median_ms / 1e6. */
CLR_API clr_status clr_measure_read_bandwidth(clr_context *ctx, size_t bytes,
                                              unsigned repeats,
                                              double *median_ms);

/* Measure the floor of a small call on this device: one kernel launch (a
 * single work-group) and one blocking read of 8 bytes, the least a call
 * that returns a value from the device does.  Wall clock, median of
 * `repeats` runs after two warm-up runs, in microseconds. */
CLR_API clr_status clr_measure_call_floor(clr_context *ctx, unsigned repeats,
                                          double *median_us);

/* "1.0.0" */
CLR_API const char *clr_version(void);

#ifdef __cplusplus
}
#endif
#endif /* CLREDUCE_H */
