/* Internal declarations shared by the library's translation units. */
#ifndef CLR_INTERNAL_H
#define CLR_INTERNAL_H

#include "clreduce.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CLR_DETAIL_SIZE 512
#define CLR_MAX_PROGRAMS 64
#define CLR_MAX_MAP_EXPR 4096 /* characters of a map expression */
/* What clr_count_options adds around a map expression, at most. */
#define CLR_COUNT_EXPR_EXTRA 32
/* Most kernels one library call fetches; callers hold pointers to them
 * until the call returns, so the cache is only trimmed between calls. */
#define CLR_PROGRAMS_PER_CALL 8
#define CLR_MAX_SCAN_LEVELS 12

/* A call's timing as the context records it: clr_timing's fields and
 * every pass (clr_last_timing, clr_last_timing_pass give them out). */
typedef struct clr_call_timing {
  double kernel_ms, h2d_ms, d2h_ms, build_ms, total_ms;
  size_t chunks;
  size_t n_passes;
  clr_pass_info passes[CLR_MAX_PASSES];
  size_t error_depth;
} clr_call_timing;

/* Where the context's tuning came from (clr_tuning_origin). */
#define CLR_TUNING_ORIGIN_SIZE 4096

/* One built program and its single kernel, keyed by source + options. */
typedef struct clr_program_entry {
  char key[768]; /* "<source file>|<build options>" */
  char *prelude; /* the spec's prelude (malloc'd), part of the key */
  cl_program program;
  cl_kernel kernel;
  size_t max_wg;       /* CL_KERNEL_WORK_GROUP_SIZE           */
  cl_ulong local_used; /* CL_KERNEL_LOCAL_MEM_SIZE (without arguments) */
} clr_program_entry;

/* Threads that copy a staged transfer at most (pinned.c). */
#define CLR_MAX_STAGE_THREADS 16

/* Helper threads a context keeps (crew.c): clr_crew_run runs fn(arg) on
 * `threads` threads at once, the caller's and threads - 1 helpers, and
 * returns when every one has returned.  Zeroed: no helpers yet. */
#define CLR_CREW_MAX (CLR_MAX_STAGE_THREADS - 1)
typedef struct clr_crew clr_crew;
typedef struct clr_crew_member {
  clr_crew *crew;
  unsigned index;
  unsigned long seen; /* the last job it saw posted */
} clr_crew_member;
struct clr_crew {
  pthread_t tid[CLR_CREW_MAX];
  clr_crew_member member[CLR_CREW_MAX];
  unsigned started;     /* helpers running */
  unsigned want, busy;  /* of them, in the job posted; not yet done */
  unsigned long posted; /* jobs posted */
  void (*fn)(void *);
  void *arg;
  int quit, ready; /* ready: lock and conditions made */
  pthread_mutex_t lock;
  pthread_cond_t go, done;
};
void clr_crew_run(clr_crew *c, unsigned threads, void (*fn)(void *), void *arg);
void clr_crew_release(clr_crew *c);

/* Pinned staging (pinned.c): page-locked blocks, mapped for the host, that
 * the staging threads fill (or empty) together, one block at a time. */
#define CLR_STAGE_SLOTS 4 /* pinned blocks in flight, src/lib/pinned.c */
typedef struct clr_pinned_slot {
  cl_mem mem;  /* CL_MEM_ALLOC_HOST_PTR */
  void *ptr;   /* mapped for the context's lifetime */
  cl_event ev; /* the transfer in flight from or to it, or NULL */
} clr_pinned_slot;
typedef struct clr_span {
  cl_ulong start, end; /* profiling times; start > end: empty */
} clr_span;
/* A caller's array from clr_host_alloc: pinned (mem set) or, on devices
 * that share the host's memory, aligned ordinary memory (mem NULL). */
typedef struct clr_host_block {
  cl_mem mem;
  void *ptr;
  size_t bytes;
} clr_host_block;
typedef struct clr_pinned {
  clr_pinned_slot slot[CLR_STAGE_SLOTS];
  size_t slots, slot_bytes;
  clr_span span;        /* staged writes done or in flight, not yet counted */
  clr_host_block *host; /* clr_host_alloc's arrays, n_host of them */
  size_t n_host, cap_host;
  clr_host_block bounce; /* small transfers' block (clr_bounce_write) */
  cl_event bounce_ev;    /* its last write, or NULL */
  clr_crew crew;         /* the staging's helper threads */
  size_t host_cache;     /* the host's last-level cache in bytes, 0 unknown */
} clr_pinned;

/* A device buffer the context keeps between calls, grown on demand. */
typedef struct clr_buffer {
  cl_mem mem;
  size_t bytes;
} clr_buffer;

struct clr_context {
  cl_platform_id platform;
  cl_device_id device;
  cl_context cl;
  cl_command_queue queue; /* every command of the library goes here:
                             clr_queue */
  /* Adopted out-of-order queue (retained; clr_context_queue returns it):
   * queue is then the context's own in-order queue on the same cl_context
   * and device, and each call first waits for this one.  NULL otherwise. */
  cl_command_queue caller_queue;
  cl_int caller_err; /* of that wait in the call in progress */
  int async_call;    /* the call in progress returns without waiting */
  /* During clr_scan_buffer_async_carry: the buffer its scan copies the
   * carry-in from (after the wait list); NULL otherwise. */
  cl_mem scan_carry;
  /* A marker after the last asynchronous call's commands (retained), or
   * NULL: while it is not complete, they may wait for the caller's
   * events, and release must not wait for them. */
  cl_event async_tail;
  int profiling;
  int host_unified; /* CL_DEVICE_HOST_UNIFIED_MEMORY: zero-copy staging */
  clr_device_desc desc;
  unsigned native_vec[CLR_TYPE_COUNT]; /* CL_DEVICE_NATIVE_VECTOR_WIDTH_* */
  uint64_t cache_bytes;     /* CL_DEVICE_GLOBAL_MEM_CACHE_SIZE (0: unknown) */
  int int64_atomics;        /* cl_khr_int64_base_atomics               */
  uint64_t max_chunk_bytes; /* clr_context_config's; 0: device's limit */

  char *kernel_dir; /* resolved at creation */
  char *cache_dir;  /* NULL: on-disk cache disabled */
  clr_log_fn log;
  void *log_user;

  clr_program_entry programs[CLR_MAX_PROGRAMS];
  size_t n_programs;

  clr_buffer input;      /* host data staged for a call        */
  clr_buffer input2;     /* the second array of a dot product  */
  clr_buffer output;     /* scan output staging                */
  clr_buffer partial[2]; /* ping-pong partials between passes  */
  clr_buffer aux[2];     /* chunk results                      */
  clr_buffer scan_levels[CLR_MAX_SCAN_LEVELS]; /* tile totals per level */
  clr_buffer carry;       /* scan carry-in [0] and carry-out [1]  */
  clr_buffer tile_bounds; /* segmented: where each tile starts   */
  clr_buffer ticket;      /* single-launch reduction's counter, 0
                             between launches (each resets it)   */
  clr_pinned pinned;      /* staging blocks for host arrays       */
  clr_buffer lookback[3]; /* decoupled scan: ticket and flags, aggregates,
                             inclusive prefixes; kept between calls */
  cl_uint scan_ticket;    /* decoupled scan: its ticket counter's value */
  int ticket_ready;       /* ticket's counter zeroed since it was made */
  cl_uint scan_epoch;     /* decoupled scan: the last launch's epoch      */
  int scan_slots;         /* lookback[1..2] hold tagged slots (1) or flagged
                             words (0) since they were last zeroed */
  clr_buffer fold_slots;  /* single-launch reduction: the partials, each
                             32-bit word with the launch's epoch */
  cl_uint fold_epoch;     /* the last single launch's epoch (0: none since
                             the slots were zeroed) */

  /* A caller's scratch (clr_request.scratch) for the call in progress,
   * or NULL: every clr_buffer_reserve is then carved from it (scratch.c). */
  struct clr_arena *arena;
  /* Device scratch the context allocated for itself since it was made:
   * reserves that made a buffer, and clr_temp_buffer's (diagnostics). */
  uint64_t scratch_allocs;

  clr_tuning tuning; /* launch parameters for this device */
  char tuning_origin[CLR_TUNING_ORIGIN_SIZE]; /* clr_tuning_origin */
  clr_call_timing timing;                     /* of the call in progress */
  clr_call_timing last_timing;                /* of the last successful call */
  char detail[CLR_DETAIL_SIZE];
  char *build_log;
};

/* ---- error.c: the bottom of the library (every unit reports through it) */
const char *clr_cl_error_name(cl_int err);
/* The one mapping of an OpenCL error to a status: allocation and resource
 * errors are CLR_ERR_OUT_OF_MEMORY, the rest CLR_ERR_OPENCL. */
clr_status clr_status_from_cl(cl_int err);
/* Record a formatted detail on the context and return status. */
clr_status clr_fail(clr_context *ctx, clr_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Map an OpenCL error from call `what` to a status and record it. */
clr_status clr_cl_fail(clr_context *ctx, const char *what, cl_int err);
/* A line to the context's log callback, if it has one. */
void clr_log(clr_context *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Evaluate an OpenCL call; on error record it and return its status (a
 * call with nothing to undo on failure). */
#define CLR_CL_RETURN(ctx, call)                                               \
  do {                                                                         \
    cl_int clr_err_ = (call);                                                  \
    if (clr_err_ != CL_SUCCESS)                                                \
      return clr_cl_fail((ctx), #call, clr_err_);                              \
  } while (0)

/* Evaluate an OpenCL call; on error record it and jump to `fail` with
 * `st` set.  Requires locals `clr_status st` and a label `fail`. */
#define CLR_CL_CHECK(ctx, call)                                                \
  do {                                                                         \
    cl_int clr_err_ = (call);                                                  \
    if (clr_err_ != CL_SUCCESS) {                                              \
      st = clr_cl_fail((ctx), #call, clr_err_);                                \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

/* ---- status.c: the rows of the tables (clreduce_types.def,
 * clreduce_ops.def, kernels.def) and the rules read off them */
typedef struct clr_type_row {
  const char *name; /* "float"                                       */
  const char *id;   /* "FLOAT": the kernels' -DCLR_IN_FLOAT=1        */
  size_t size;
  int kind;          /* CLR_KIND_*                                    */
  clr_type computes; /* what the kernels compute an element in        */
  clr_type wide;     /* what sums and products accumulate in          */
} clr_type_row;
typedef struct clr_op_row {
  const char *name; /* "nanmin"                                      */
  const char *id;   /* "NANMIN"                                      */
  clr_op runs;      /* what the drivers compute (a mean: its sum)    */
  clr_op combine;   /* the kernels' combine: -DCLR_OP_<its id>=1     */
  clr_op partial;   /* what folds partial results                    */
  int identity;     /* CLR_ID_*                                      */
  int result;       /* CLR_RES_*                                     */
  unsigned flags;   /* CLR_OPF_*                                     */
  const char *summary;
} clr_op_row;
/* A type's or an operation's row; NULL when t / op is out of range. */
const clr_type_row *clr_type_info(clr_type t);
const clr_op_row *clr_op_info(clr_op op);
/* The operation's flags (0 when out of range). */
unsigned clr_op_flags(clr_op op);
/* The result types of options already read (clr_options_take: never
 * NULL, struct_size this library's): what clr_options_result_type,
 * clr_scan_output_type and clr_result_bytes give for them. */
clr_type clr_opt_result_type(const clr_options *opt, clr_op op, clr_type t);
clr_type clr_opt_scan_output_type(const clr_options *opt, clr_type t);
size_t clr_opt_result_bytes(const clr_options *opt, clr_op op, clr_type t);
/* combine.c: clr_value_sum_to_mean of options already read. */
clr_status clr_opt_sum_to_mean(const clr_options *opt, clr_type type,
                               uint64_t n, clr_value *v);
/* A sized struct (include/clreduce.h, "sized structs"): its fields after
 * struct_size, in order, and how a caller initialises one. */
typedef struct clr_field_span {
  const char *name;
  size_t begin, end; /* offsetof, and offsetof + sizeof */
} clr_field_span;
#define CLR_FIELD_SPAN(T, f)                                                   \
  { #f, offsetof(T, f), offsetof(T, f) + sizeof(((T *)0)->f) }
/* 1 when f is T's last field: its end, rounded up to T's alignment, is
 * sizeof(T) (the tables of fields below assert it). */
#define CLR_IS_LAST_FIELD(T, f)                                                \
  ((offsetof(T, f) + sizeof(((T *)0)->f) + _Alignof(T) - 1) / _Alignof(T) *    \
       _Alignof(T) ==                                                          \
   sizeof(T))
typedef struct clr_struct_layout {
  const char *name; /* "clr_options" */
  const char *init; /* "call clr_options_init, or use CLR_OPTIONS_INIT" */
  size_t size;      /* this library's sizeof */
  const clr_field_span *fields;
  size_t n_fields;
} clr_struct_layout;
/* CLR_OK when a caller's struct_size is one the library takes for the
 * struct: the end of one of its fields (or the padding after it) up to
 * this library's sizeof.  Else CLR_ERR_INVALID_ARGUMENT (0: not
 * initialised) or CLR_ERR_VERSION, with the reason in why. */
clr_status clr_struct_size_check(const clr_struct_layout *l, uint32_t size,
                                 char *why, size_t why_size);
/* Bytes 4 .. size of src to dst: every field but struct_size, of a
 * struct whose struct_size (size) was checked; reading a caller's struct
 * over the defaults, or writing a full one into the caller's. */
void clr_struct_fields_copy(void *dst, const void *src, uint32_t size);
/* The names of the operations that have every one of flags, in table
 * order: "sum, prod, min and max". */
void clr_op_list(char *buf, size_t size, unsigned flags);
int clr_type_is_float(clr_type t);
/* 1 when acc can accumulate elements of in exactly as they are: the same
 * kind, at least as wide (clr_options.accumulate_in). */
int clr_accumulator_fits(clr_type in, clr_type acc);
/* 1 for the indexed operations (a value and an index: CLR_OPF_INDEXED). */
int clr_op_is_indexed(clr_op op);
/* 1 for var and std (CLR_OPF_MOMENTS: (count, mean, M2) records). */
int clr_op_is_moments(clr_op op);
/* 1 for the operations whose kernels fold records, not values (indexed
 * and moments): cl/records.cl or cl/moments.cl, the drivers' record
 * paths. */
int clr_op_is_record(clr_op op);

/* ---- moments.c: var and std results from (mean, M2, count) records */
/* A whole array's record (mean, M2, n of type rt) as the clr_value of op. */
clr_value clr_moments_value(const clr_options *opt, clr_op op, clr_type rt,
                            const void *record);
/* count records of a host array made (value, mean, count) in place. */
void clr_moments_finish_host(const clr_options *opt, clr_op op, clr_type rt,
                             void *records, size_t count);
/* The same for count records of a buffer from element offset, on the
 * device (data of type type), run to completion. */
clr_status clr_moments_finish_buffer(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, clr_type rt,
                                     cl_mem records, size_t offset,
                                     size_t count);
/* The same enqueued in the context's queue and not waited for: after
 * wait (NULL: the queue's order alone), its event to *done (done may be
 * NULL).  For the asynchronous calls, chained after the passes that wrote
 * the records; no scratch. */
clr_status clr_moments_finish_enqueue(clr_context *ctx, const clr_options *opt,
                                      clr_op op, clr_type type, clr_type rt,
                                      cl_mem records, size_t offset,
                                      size_t count, cl_event wait,
                                      cl_event *done);
/* The finish's kernel built ahead (CLR_OK at once for other ops): an
 * enqueued call fetches it before its first command, so that nothing
 * fails once a command waits for the caller's events. */
clr_status clr_moments_finish_prepare(clr_context *ctx, clr_op op,
                                      clr_type type, clr_type rt);
/* 1 when a mean (op) of t divides by a count of its numbers, not by n: a
 * NaN-skipping mean of floating data. */
int clr_mean_counts(clr_op op, clr_type t);
/* The options of that count: *opt's, with a map expression (into expr, of
 * size bytes) that gives 1 for a number and 0 for a NaN (the map's value
 * tested, when opt has one), summed in ulong on the coarse kernel. */
void clr_count_options(const clr_options *opt, clr_options *o, char *expr,
                       size_t size);
/* The operation's identity (its identity column) as a value of type t. */
clr_scalar clr_op_identity(clr_op op, clr_type t);
/* The file under cl/ with the kernel's own algorithm (kernels.def). */
const char *clr_kernel_source(clr_kernel k);
/* 1 when needle occurs in hay, ignoring ASCII case (an empty needle
 * occurs everywhere: callers that want it to match nothing say so). */
int clr_contains_nocase(const char *hay, const char *needle);

/* ---- the kernel sources and the shipped tuning files built into the
 * library (-Dembed_kernels; generated by embed_kernels.py), each table
 * sorted by name and ending with a {NULL, NULL} row */
typedef struct clr_embedded_file {
  const char *name; /* "reduce_coarse.cl", "pocl-cpu.txt" */
  const char *text;
} clr_embedded_file;
#if CLR_EMBEDDED_KERNELS
extern const clr_embedded_file clr_embedded_kernels[];
extern const clr_embedded_file clr_embedded_tuning[];
#endif
/* What clr_context_kernel_dir says when the sources are the built-in ones,
 * and the directory part of a built-in tuning file's origin. */
#define CLR_EMBEDDED_KERNEL_DIR "(built into the library)"

/* ---- install_paths.c: the installed data files */
/* The directory of leaf ("cl": the kernel sources, "tuning": the shipped
 * tuning files) holding the file probe: under the compiled-in prefix,
 * else under the prefix the loaded library sits in (a moved install),
 * else in the source tree.  1 with out filled; 0 with out set to the
 * compiled-in directory when none holds it. */
int clr_installed_dir(const char *leaf, const char *probe, char *out,
                      size_t size);
/* The directories clr_installed_dir looks in for leaf, in its order,
 * separated by ", " (for a message when none holds the files). */
void clr_installed_dirs_tried(const char *leaf, char *out, size_t size);

/* ---- device.c */
clr_status clr_select_device(const char *platform, const char *device,
                             cl_platform_id *out_platform,
                             cl_device_id *out_device, char *detail,
                             size_t detail_size);
/* CL_SUCCESS, or the error of the first of the limits (memory sizes,
 * work-group size) that could not be read. */
cl_int clr_describe_device(cl_platform_id p, cl_device_id d, unsigned pi,
                           unsigned di, clr_device_desc *out);
/* The indices of platform and device in the discovery order
 * clr_list_devices reports (left unchanged when not found: a device the
 * caller made, such as a sub-device, has none). */
void clr_device_indices(cl_platform_id platform, cl_device_id device,
                        unsigned *platform_index, unsigned *device_index);

/* ---- scratch.c: a caller's scratch memory (clr_request.scratch).
 * A plan names the buffers a call reserves (slots: a clr_buffer of the
 * context, or a tag of the driver's for a clr_temp_buffer) and the most
 * bytes each gets; the caller's scratch is cut into them in plan order,
 * each at the device's base address alignment.  While an arena is the
 * context's (clr_arena_enter .. clr_arena_leave), the planned buffers are
 * sub-buffers of the caller's and the context's own are put aside. */
#define CLR_SCRATCH_SLOTS 24
typedef struct clr_scratch_plan {
  size_t count;
  const void *slot[CLR_SCRATCH_SLOTS];
  size_t bytes[CLR_SCRATCH_SLOTS];
  int overflow; /* more slots than CLR_SCRATCH_SLOTS (an internal error) */
} clr_scratch_plan;
typedef struct clr_arena {
  clr_scratch_plan plan;
  cl_mem root;  /* the caller's buffer (a sub-buffer's parent) */
  size_t base;  /* its first byte in root */
  size_t align; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes */
  size_t at[CLR_SCRATCH_SLOTS];       /* a slot's byte in root */
  cl_mem sub[CLR_SCRATCH_SLOTS];      /* made on first use */
  clr_buffer kept[CLR_SCRATCH_SLOTS]; /* the context's buffer, put aside */
  cl_uint scan_ticket, scan_epoch, fold_epoch;
  int ticket_ready, scan_slots;
} clr_arena;
/* Room for bytes in slot (the most of every call to it). */
void clr_scratch_need(clr_scratch_plan *p, const void *slot, size_t bytes);
/* The caller's bytes the plan takes at alignment align. */
size_t clr_scratch_total(const clr_scratch_plan *p, size_t align);
/* The device's base address alignment in bytes (at least 1). */
size_t clr_scratch_align(clr_context *ctx);
/* The caller's scratch (buffer from byte offset, bytes long) made the
 * context's arena for one call, a checks's refusal otherwise
 * (CLR_ERR_INVALID_ARGUMENT: too small, misaligned). */
clr_status clr_arena_enter(clr_context *ctx, clr_arena *a,
                           const clr_scratch_plan *plan, cl_mem buffer,
                           size_t offset, size_t bytes);
/* The context's own buffers and state back, the sub-buffers released. */
void clr_arena_leave(clr_context *ctx, clr_arena *a);
/* clr_buffer_reserve while an arena is the context's. */
clr_status clr_arena_reserve(clr_context *ctx, clr_buffer *buf, size_t bytes);
/* A device buffer of bytes for the call only: tag's slot of the arena,
 * else a new buffer; the caller releases *mem (clReleaseMemObject). */
clr_status clr_temp_buffer(clr_context *ctx, const void *tag, size_t bytes,
                           cl_mem *mem);

/* ---- context.c */
/* The one reading of a caller's config, which every public entry point
 * that takes one does first: cfg's first struct_size bytes over the
 * defaults into *copy (cfg NULL: the defaults).  CLR_OK, or the refusal of
 * clr_struct_size_check with *copy the defaults and the reason in why. */
clr_status clr_config_read(const clr_context_config *cfg,
                           clr_context_config *copy, char *why,
                           size_t why_size);
/* Make sure *buf holds at least bytes; CLR_OK or an error status. */
clr_status clr_buffer_reserve(clr_context *ctx, clr_buffer *buf, size_t bytes,
                              cl_mem_flags flags);
void clr_buffer_release(clr_buffer *buf);
/* Zero the count buffers on the device, in queue order (nothing waits on
 * the host).  On failure they are released, so that the next reserve
 * makes them anew and its caller zeroes them again. */
clr_status clr_zero_buffers(clr_context *ctx, clr_buffer *const *bufs,
                            size_t count);
/* NVIDIA's OpenCL on a GPU, which builds inline PTX (warp shuffles) but
 * has no subgroup extension. */
static inline int clr_device_takes_ptx(const clr_context *ctx) {
  return ctx->desc.is_gpu && strstr(ctx->desc.platform_name, "NVIDIA") != NULL;
}
/* The queue every command of the call in progress goes to: the context's
 * own (or the caller's in-order queue it adopted), or for a clr_run or
 * clr_enqueue that names a queue, that queue (queue.c swaps it in for the
 * call and back).  Read here by every unit but the context's own. */
static inline cl_command_queue clr_queue(const clr_context *ctx) {
  return ctx->queue;
}
/* Where a command's event goes when it is taken only for its time: ev on
 * a profiling queue, NULL (no event: cheaper) on one without. */
static inline cl_event *clr_timed(const clr_context *ctx, cl_event *ev) {
  return ctx->profiling ? ev : NULL;
}
/* ---- clock.c */
double clr_now_ms(void);
double clr_event_ms(cl_event start, cl_event end); /* 0 without profiling */
/* From the end of `before` to the start of `after` (0 without profiling). */
double clr_event_gap_ms(cl_event before, cl_event after);
/* ---- call.c: a call's frame */
/* A call's timing, the work done: its chunks (launches), error depth and
 * total time since t0 (clr_now_ms at its start). */
void clr_timing_done(clr_context *ctx, size_t chunks, size_t error_depth,
                     double t0);
/* Every public entry point that runs kernels brackets its work with these:
 * begin clears the error detail and the timing, trims the program cache
 * and, on an adopted out-of-order queue, waits for the caller's earlier
 * commands (its status must be checked before caller buffers are used);
 * end finishes the context's own queue, publishes the timing when the call
 * succeeded and returns st (begin's failure, if any, wins). */
clr_status clr_begin_call(clr_context *ctx);
clr_status clr_end_call(clr_context *ctx, clr_status st);
/* The whole body of a public entry point on a context: a NULL context
 * refused, the call opened (clr_begin_call), `call` (a clr_status
 * expression: the work) run when that succeeded, the call closed. */
#define CLR_PUBLIC_CALL(ctx, call)                                             \
  do {                                                                         \
    if (!(ctx))                                                                \
      return CLR_ERR_INVALID_ARGUMENT;                                         \
    clr_status clr_call_st_ = clr_begin_call(ctx);                             \
    if (clr_call_st_ == CLR_OK)                                                \
      clr_call_st_ = (call);                                                   \
    return clr_end_call((ctx), clr_call_st_);                                  \
  } while (0)
/* An asynchronous call's events: the first command waits for wait_list,
 * the last returns *done (when done is not NULL). */
typedef struct clr_async {
  cl_uint num_events;
  const cl_event *wait_list;
  cl_event *done;
} clr_async;
/* The same for asynchronous entry points: begin sets *event to NULL and
 * fills *async with the caller's events; the caller's queue is not waited
 * for (its wait list orders the call) and, on success, nothing is
 * finished; a failed call finishes what it enqueued. */
void clr_begin_async_call(clr_context *ctx, clr_async *async,
                          cl_uint num_events, const cl_event *wait_list,
                          cl_event *event);
clr_status clr_end_async_call(clr_context *ctx, clr_status st);

/* ---- buffer_check.c */
#define CLR_ACCESS_READ 1u  /* a kernel of the call reads the buffer  */
#define CLR_ACCESS_WRITE 2u /* a kernel of the call writes the buffer */
/* A caller's cl_mem: a buffer of ctx->cl, with the kernel access the call
 * needs, holding elements [offset, offset + n) of type (sizes unchecked for
 * an invalid type).  CLR_OK or a refusal naming `what`. */
clr_status clr_check_buffer(clr_context *ctx, cl_mem mem, size_t offset,
                            size_t n, clr_type type, unsigned access,
                            const char *what);
/* The same for elements of esize bytes (0: sizes unchecked). */
clr_status clr_check_buffer_elems(clr_context *ctx, cl_mem mem, size_t offset,
                                  size_t n, size_t esize, unsigned access,
                                  const char *what);

/* ---- staging.c */
typedef struct clr_staged {
  cl_mem mem;
  int wrapped; /* zero-copy USE_HOST_PTR buffer, released with the stage */
  int pinned;  /* copied through pinned blocks (pinned.c) */
  cl_event write_event;
  void *host;
  size_t bytes;
} clr_staged;
/* Make bytes at host visible to the device (copy into pool, or wrap). */
clr_status clr_stage_in(clr_context *ctx, clr_buffer *pool, void *host,
                        size_t bytes, int writable, clr_staged *out);
/* Bring the device's writes back into the host array. */
clr_status clr_stage_out(clr_context *ctx, clr_staged *s);
/* Wait for the copy (adding its time to h2d_ms) and release. */
void clr_stage_release(clr_context *ctx, clr_staged *s);
int clr_is_aligned(const void *p, size_t bytes);
/* Largest chunk, in elements, a host array is streamed in. */
size_t clr_chunk_elems(const clr_context *ctx, size_t esize);
/* The number of chunks n elements are streamed in. */
size_t clr_chunk_count(const clr_context *ctx, size_t n, size_t esize);
/* One streamed chunk: its buffers (mem2: of the second array, or mem when
 * there is none), its index, its first element and its length. */
typedef struct clr_chunk {
  cl_mem mem, mem2;
  size_t index, begin, len;
} clr_chunk;
/* Stream n elements of esize bytes at data (and at data2 when not NULL,
 * chunk by chunk beside it) to the device, staged as clr_stage_in does,
 * calling fn with each chunk; stops at the first failure.  Sets
 * timing.chunks. */
typedef clr_status (*clr_chunk_fn)(clr_context *ctx, void *user,
                                   const clr_chunk *c);
clr_status clr_stream_chunks(clr_context *ctx, const void *data,
                             const void *data2, size_t n, size_t esize,
                             clr_chunk_fn fn, void *user);

/* ---- pinned.c: host arrays through pinned blocks, several threads */
void clr_pinned_init(clr_context *ctx);
void clr_pinned_release(clr_context *ctx);
/* 1 when a transfer of the bytes at host goes through the pinned blocks:
 * a device that does not share the host's memory, stage.threads > 0, at
 * least 1 MiB (or one stage.block_kib block, if smaller), and host not in
 * one of clr_host_alloc's pinned arrays (those are copied directly). */
int clr_pinned_applies(const clr_context *ctx, const void *host, size_t bytes);
/* 1 when a transfer of the bytes at host goes through the small pinned
 * block instead: below the blocks' threshold, otherwise as above. */
int clr_bounce_applies(const clr_context *ctx, const void *host, size_t bytes);
/* bytes at host to element 0 of dev through the small block: one memcpy,
 * one write (its event in *ev; the next bounce write waits for it before
 * it fills the block again). */
clr_status clr_bounce_write(clr_context *ctx, cl_mem dev, const void *host,
                            size_t bytes, cl_event *ev);
/* bytes at host to element 0 of dev.  Returns with the last blocks' writes
 * in flight on the queue (what is enqueued next runs after them);
 * clr_pinned_settle waits for them. */
clr_status clr_pinned_write(clr_context *ctx, cl_mem dev, const void *host,
                            size_t bytes);
/* Wait for the staged writes, adding their time (the span from the first
 * one's start to the last one's end) to *ms (may be NULL). */
void clr_pinned_settle(clr_context *ctx, double *ms);
/* bytes from element 0 of dev to host, blocking; adds the time to *ms. */
clr_status clr_pinned_read(clr_context *ctx, cl_mem dev, void *host,
                           size_t bytes, double *ms);

/* ---- program.c */
/* Options for one specialisation of a kernel source. */
typedef struct clr_build_spec {
  const char *source; /* file name under the kernel directory, e.g.
                         "reduce_coarse.cl" */
  const char *kernel; /* kernel function name */
  clr_type in;
  clr_type acc;
  clr_op op;
  unsigned vec;    /* 0: not passed */
  unsigned layout; /* 0: not passed */
  int aligned;
  const char *extra;   /* further -D options, or NULL */
  const char *source2; /* appended after source, or NULL */
  const char *helpers; /* shared functions put before source, or NULL */
  clr_map map;         /* -DCLR_MAP when not CLR_MAP_NONE */
  unsigned inputs;     /* -DCLR_INPUTS=2 when 2 */
  const char *prelude; /* text before common.cl (a map expression's
                          #define), or NULL */
} clr_build_spec;

/* A kernel's arguments are listed in one place per kernel, in the
 * kernel's order, and set together: CLR_ARG(variable) passes a value,
 * CLR_LOCAL(bytes) local memory. */
typedef struct clr_arg {
  size_t size;
  const void *value; /* NULL: local memory of size bytes */
} clr_arg;
#define CLR_ARG(x) ((clr_arg){sizeof(x), &(x)})
#define CLR_LOCAL(bytes) ((clr_arg){(bytes), NULL})
#define CLR_SET_ARGS(ctx, kernel, ...)                                         \
  CLR_SET_ARGS_FROM(ctx, kernel, 0, __VA_ARGS__)
/* The same from argument `first` on (a kernel's optional tail, whose
 * place its build options decide). */
#define CLR_SET_ARGS_FROM(ctx, kernel, first, ...)                             \
  clr_set_args((ctx), (kernel), (first), (const clr_arg[]){__VA_ARGS__},       \
               sizeof((const clr_arg[]){__VA_ARGS__}) / sizeof(clr_arg))
/* Set argument index of k (kernels whose later arguments depend on their
 * build options). */
clr_status clr_set_arg_at(clr_context *ctx, cl_kernel k, cl_uint index,
                          clr_arg arg);
/* Set arguments first .. first + count of k to args; CLR_OK or the first
 * failure, recorded. */
clr_status clr_set_args(clr_context *ctx, cl_kernel k, cl_uint first,
                        const clr_arg *args, size_t count);

/* Build (or fetch) the program for spec; *out points into the context's
 * cache.  Adds build time to ctx->timing.build_ms. */
clr_status clr_get_kernel(clr_context *ctx, const clr_build_spec *spec,
                          clr_program_entry **out);
void clr_release_programs(clr_context *ctx);

/* ---- launch.c: launch shapes (explicit options, then the tuning, then
 * the device type decide) */
typedef struct clr_launch {
  size_t local;    /* work-group size                          */
  size_t global;   /* work-items                               */
  size_t groups;   /* work-groups = partials produced          */
  size_t per_item; /* coarse: vectors per work-item (contiguous)*/
  size_t depth;    /* longest rounding chain added by the pass  */
} clr_launch;

/* Resolve vector width and layout for the coarse kernel before building. */
void clr_choose_coarse_shape(const clr_context *ctx, const clr_options *opt,
                             clr_type in, clr_type acc, unsigned vec_bytes,
                             unsigned *vec, clr_layout *layout);
/* Work-group size for a built kernel: requested (opt->wg_size) if set and
 * legal, else preferred (0: 256) shrunk to what the kernel and local
 * memory allow. */
clr_status clr_choose_wg(clr_context *ctx, const clr_program_entry *k,
                         size_t requested, size_t preferred, size_t elem_bytes,
                         size_t local_elems_per_item, size_t *out);
/* The work-group size of a kernel whose size is built into it (the
 * segmented tiles: reqd_work_group_size), before it is built: requested
 * if set, else preferred halved to the device's limit. */
size_t clr_built_in_wg(const clr_context *ctx, size_t requested,
                       size_t preferred);
/* Scan shape: vector width of the tile reduction and elements per
 * work-item (a multiple of it), for input `type` scanned into `acc`
 * under `op`. */
void clr_choose_scan_shape(const clr_context *ctx, const clr_options *opt,
                           clr_type type, clr_type acc, clr_op op,
                           unsigned *vec, size_t *per_item);
/* Launch shape of one reduction pass over n elements, every quantity
 * computed with overflow checks: CLR_OK, or CLR_ERR_INVALID_ARGUMENT (with
 * a detail) when the shape cannot be represented.  A coarse factor beyond
 * n is clamped to n (see clr_options.coarse).  first_pass: the pass over
 * the input (reduce.min_groups_cu applies), not over partials. */
clr_status clr_reduce_launch(clr_context *ctx, clr_kernel kernel,
                             const clr_options *opt, size_t n, size_t wg,
                             unsigned vec, clr_layout layout, int first_pass,
                             clr_launch *out);
/* The rounding depth one work-group of wg items adds folding `values`
 * values: a strided chain per item, then the tree (the single-launch
 * reduction's last group over the partials). */
size_t clr_fold_depth(size_t values, size_t wg);
/* The smallest k with 2^k >= x (0 for x <= 1): a tree's levels. */
size_t clr_ceil_log2(size_t x);

/* ---- tuning.c: the per-device tuning (built-in defaults, shipped and
 * user files; the file format is described there) */
void clr_default_tuning(const clr_context *ctx, clr_tuning *t);
/* Defaults, then the shipped file matching the device, then the user's. */
void clr_load_tuning(clr_context *ctx);
/* The user's tuning file for this device; 0 when there is no cache dir. */
int clr_user_tuning_path(const clr_context *ctx, char *path, size_t size);
clr_status clr_save_tuning(clr_context *ctx, const char *path);

/* ---- call.c */
/* The one reading of a caller's options, which every public entry point
 * that takes them does first: opt's first struct_size bytes over the
 * defaults into *copy (opt NULL: the defaults; struct_size this
 * library's).  CLR_OK, or the refusal of clr_struct_size_check with *copy
 * the defaults and the reason in why. */
clr_status clr_options_read(const clr_options *opt, clr_options *copy,
                            char *why, size_t why_size);
/* The same on a context: a refusal recorded as its detail. */
clr_status clr_options_take(clr_context *ctx, const clr_options *opt,
                            clr_options *copy);
/* The one check of a call's options and arguments, for reductions and
 * scans (scan != 0): kernel, op and type enums, n, vector width, layout.
 * CLR_OK, or a refusal with its detail recorded. */
clr_status clr_validate_call(clr_context *ctx, const clr_options *opt,
                             clr_op op, clr_type type, size_t n, int scan);
/* The start of every reduction and scan: the caller's *opt read into
 * *defaults (clr_options_take) and *opt pointed at it, a reduction's
 * CLR_KERNEL_DEFAULT made CLR_REDUCE_COARSE (a scan's stays: the scan
 * driver runs the tuned scan), the two pointers a and b (named by names)
 * present, then clr_validate_call. */
clr_status clr_start_work(clr_context *ctx, const clr_options **opt,
                          clr_options *defaults, const void *a, const void *b,
                          const char *names, clr_op op, clr_type type, size_t n,
                          int scan);

/* ---- exact.c: exact float / double sums (clr_options.exact) */
/* 1 when the call is an exact sum this unit computes. */
int clr_exact_applies(const clr_options *opt, clr_op op, clr_type type);
clr_status clr_exact_prepare(clr_context *ctx, const clr_options *opt,
                             clr_type type);
/* The exact sum rounded into *result, or, with into (not NULL), its
 * superaccumulator added to *into (result untouched). */
clr_status clr_exact_host(clr_context *ctx, const clr_options *opt,
                          clr_type type, const void *data, size_t n,
                          clr_value *result, clr_exact_acc *into);
clr_status clr_exact_buffer(clr_context *ctx, const clr_options *opt,
                            clr_type type, cl_mem buf, size_t offset, size_t n,
                            clr_value *result, clr_exact_acc *into);
/* clr_enqueue's exact sum: accumulated and rounded on the device (the
 * bits of clr_exact_buffer's), written to element dst_index of dst; the
 * first command waits for async's events, the last gives async->done. */
clr_status clr_exact_buffer_async(clr_context *ctx, const clr_options *opt,
                                  clr_type type, cl_mem buf, size_t offset,
                                  size_t n, cl_mem dst, size_t dst_index,
                                  const clr_async *async);
/* The accumulator clr_exact_buffer (async 0) or clr_exact_buffer_async
 * (async 1) reserves, into sp; its kernels built. */
clr_status clr_exact_scratch(clr_context *ctx, const clr_options *opt,
                             clr_type type, int async, clr_scratch_plan *sp);
/* A superaccumulator read back (cl/reduce_exact.cl) rounded to nearest. */
clr_value clr_exact_round(clr_type type, const int64_t *record);
/* Exact sums of a matrix's rows or columns (matrix.c): cl/reduce_exact.cl's
 * clr_exact_axis (runs: clr_exact_runs, the CPUs' kernel, of vec =
 * CLR_EXACT_RUNS_VEC lanes), clr_exact_round (of records) and
 * clr_exact_zero for float or double, with the length of their
 * superaccumulator (words, and a record's bytes: the words and the flags)
 * and of the expansion (terms). */
#define CLR_EXACT_RUNS_VEC 8
typedef struct clr_exact_kernels {
  clr_program_entry *axis, *round, *zero;
  size_t words, rec_bytes;
  unsigned terms, vec;
} clr_exact_kernels;
clr_status clr_exact_axis_kernels(clr_context *ctx, clr_type type, int runs,
                                  clr_exact_kernels *k);

/* ---- reduce.c */
/* The buffers a reduction (in2 NULL) or dot product of n buffer elements
 * reserves, into sp: into_buffer, the call into an output buffer
 * (clr_enqueue's, and clr_run's with an output), else clr_run's value;
 * the checks of the options first. */
clr_status clr_reduce_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem in,
                              size_t in_offset, cl_mem in2, size_t in2_offset,
                              size_t n, int into_buffer, clr_scratch_plan *sp);

/* ---- matrix.c */
/* A matrix request (clr_request's MATRIX kind), host arrays (in_host and
 * out_host) or buffers (in, out at their offsets), in a call frame of its
 * own: the rows or columns (axis 1 or 0) of rows x cols elements, pitch
 * apart (0: cols), a result each. */
clr_status clr_matrix_call(clr_context *ctx, const clr_options *opt, clr_op op,
                           clr_type type, const void *in_host, cl_mem in,
                           size_t in_offset, size_t rows, size_t cols,
                           size_t pitch, int axis, void *out_host, cl_mem out,
                           size_t out_offset);
/* clr_enqueue of a matrix of buffers, in its own asynchronous call frame:
 * the same launches, the first after the wait list, *event (may be NULL)
 * the last's; every kernel built and buffer reserved before the first. */
clr_status clr_matrix_enqueue(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem in,
                              size_t in_offset, size_t rows, size_t cols,
                              size_t pitch, int axis, cl_mem out,
                              size_t out_offset, cl_uint num_events,
                              const cl_event *wait_list, cl_event *event);
/* The buffers a matrix of buffers reserves (exactly: its dry run), into
 * sp; the call's checks first. */
clr_status clr_matrix_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem in,
                              size_t in_offset, size_t rows, size_t cols,
                              size_t pitch, int axis, cl_mem out,
                              size_t out_offset, clr_scratch_plan *sp);

/* ---- ranges.c */
/* clr_enqueue of a ranges reduction of buffers (request.c), in its own
 * asynchronous call frame: on the device with nothing read back
 * (cl/reduce_ranges.cl), the ranges checked there, the verdict written to
 * element status_offset of status (NULL: not written), a bad range taken
 * as empty. */
clr_status clr_ranges_enqueue(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem data,
                              size_t data_offset, size_t n, cl_mem ranges,
                              size_t ranges_offset, size_t n_ranges,
                              cl_mem results, size_t results_offset,
                              cl_mem status, size_t status_offset,
                              cl_uint num_events, const cl_event *wait_list,
                              cl_event *event);
/* The buffers a ranges reduction of n buffer elements reserves in a
 * caller's scratch, into sp: clr_enqueue's passes, which clr_run takes
 * there too (its batches' buffers depend on the ranges); the checks
 * first. */
clr_status clr_ranges_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, size_t n,
                              size_t n_ranges, clr_scratch_plan *sp);

/* ---- scan.c */
clr_status clr_scan_prepare(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type);
/* The carry buffer (ctx->carry): [0] carry-in, [1] carry-out.  Loads the
 * user's carry_in (of the output type) into [0] and sets *flags to 1, or
 * to 0 when there is none. */
clr_status clr_scan_init_carry(clr_context *ctx, const clr_options *opt,
                               clr_type type, cl_uint *flags);
/* A scan chunk's arrays to the device: len elements of esize bytes at src
 * into ctx->input (writable unless separate), and with separate (unified
 * memory used in place with out != in, or a wider output type) the output
 * staged beside it into ctx->output; *res is the one read back into dst. */
clr_status clr_stage_scan_chunk(clr_context *ctx, void *src, void *dst,
                                size_t len, size_t esize, size_t osize,
                                int separate, clr_staged *sin, clr_staged *sout,
                                clr_staged **res);
/* The running value a chunk left in carry[1] becomes the next chunk's
 * carry-in, carry[0] (osize bytes, in queue order); *flags then 1. */
clr_status clr_scan_chain_carry(clr_context *ctx, size_t osize, cl_uint *flags);
/* clr_scan_buffer_range inside a call already begun (the library's own
 * passes: reduce-by-key's run numbers). */
clr_status clr_scan_buffer_in_call(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, cl_mem in,
                                   size_t in_offset, cl_mem out,
                                   size_t out_offset, size_t n);
/* The same enqueued in queue order after the call's earlier commands,
 * nothing waited for on the host (an asynchronous call's inner scan). */
clr_status clr_scan_buffer_async_in_call(clr_context *ctx,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem in,
                                         size_t in_offset, cl_mem out,
                                         size_t out_offset, size_t n);
/* clr_scan_buffer_async whose carry-in is read on the device, from
 * element 0 of carry (a buffer of ctx's cl_context, one value of the
 * output type), once the wait list is complete: a carry the host writes
 * later (group.c: an asynchronous scan's, once every total is in).
 * opt->carry_in must be NULL. */
clr_status clr_scan_buffer_async_carry(clr_context *ctx, const clr_options *opt,
                                       clr_op op, clr_type type, cl_mem in,
                                       size_t in_offset, cl_mem out,
                                       size_t out_offset, size_t n,
                                       cl_mem carry, cl_uint num_events,
                                       const cl_event *wait_list,
                                       cl_event *event);
/* The buffers a scan of n buffer elements (clr_scan_buffer_range, from
 * those offsets) reserves, into sp; the call's checks first. */
clr_status clr_scan_scratch(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type, size_t in_offset, size_t out_offset,
                            size_t n, clr_scratch_plan *sp);
/* In place means in == out (and one type): a partial overlap would have
 * work-items read elements that others have already overwritten.  For
 * host arrays, and for buffers (as sub-buffers of one buffer, or as
 * buffers over overlapping host memory); CLR_OK or a refusal. */
clr_status clr_check_scan_host_overlap(clr_context *ctx, const void *in,
                                       const void *out, size_t n, size_t esize,
                                       size_t osize);
clr_status clr_check_scan_buffers_overlap(clr_context *ctx, cl_mem in,
                                          size_t in_offset, cl_mem out,
                                          size_t out_offset, size_t in_esize,
                                          size_t out_esize, size_t n);

/* ---- request.c, for group.c (clr_group_run): the request read over
 * the defaults and checked as clr_run checks it (the failure recorded on
 * ctx), the fields a group takes none of (queue, scratch, status,
 * run_count) refused; *out gets it with its host operands pointing at
 * their first elements (offsets applied, then 0), *host whether its
 * operands are host arrays. */
clr_status clr_request_read_for_group(clr_context *ctx, const clr_request *r,
                                      const clr_value *result, clr_request *out,
                                      int *host);

/* ---- segmented.c */
/* The segmented reductions inside a call (clr_begin_call done): what
 * clr_reduce_segments_host / _buffer do, for the ranges (ranges.c) and
 * by-key calls built on them.  Each sets the call's timing (kernel_ms
 * added up). */
clr_status clr_segments_host_call(clr_context *ctx, const clr_options *opt,
                                  clr_op op, clr_type type, const void *data,
                                  size_t n, const uint64_t *offsets,
                                  size_t n_segments, void *results);
clr_status clr_segments_buffer_call(clr_context *ctx, const clr_options *opt,
                                    clr_op op, clr_type type, cl_mem data,
                                    size_t data_offset, size_t n,
                                    cl_mem offsets, size_t offsets_offset,
                                    size_t n_segments, cl_mem results,
                                    size_t results_offset);
/* clr_enqueue of a by-key of buffers (request.c): the runs found, their
 * offsets built (padded to n + 1 with n) and the values reduced as n
 * segments on the device, the count of runs written to element
 * count_index of count_buf (cl_ulong); nothing waited for on the host.
 * unique_keys and results have room for n runs; past the count, results
 * hold an empty segment's value and unique_keys are not written. */
clr_status clr_reduce_by_key_enqueue(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type key_type,
    cl_mem keys, size_t keys_offset, clr_type type, cl_mem values,
    size_t values_offset, size_t n, cl_mem unique_keys,
    size_t unique_keys_offset, cl_mem results, size_t results_offset,
    cl_mem count_buf, size_t count_index, cl_uint num_events,
    const cl_event *wait_list, cl_event *event);
/* The buffers a by-key of n buffer elements reserves (either form: the
 * enqueued one exactly, clr_run's at most), into sp; its checks first. */
clr_status clr_by_key_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type key_type, clr_type type,
                              size_t n, clr_scratch_plan *sp);
/* The first offset that breaks "0, never decreasing, n at the end" as a
 * refusal, else CLR_OK with *longest the longest segment's length + 1. */
clr_status clr_check_offsets(clr_context *ctx, const uint64_t *offsets,
                             size_t n_segments, size_t n, size_t *longest);
/* The same for n_segments + 1 offsets in a buffer from element
 * offsets_off, checked on the device (flags read back); *row (row may be
 * NULL) is the rows' length when the segments are rows (rows_of's sense),
 * else 0; *longest (may be NULL) is short_units when no segment has more
 * units (elements + 1) than that, else SIZE_MAX (not known; short_units 0
 * asks nothing). */
clr_status clr_check_offsets_buffer(clr_context *ctx, cl_mem offsets,
                                    cl_ulong offsets_off, cl_ulong n_segments,
                                    size_t n, size_t *row, cl_ulong short_units,
                                    size_t *longest);

/* clr_enqueue of a segmented reduction of buffers (request.c): the work
 * of clr_segments_buffer_call with no host sync, in an asynchronous
 * call's frame (clr_begin_async_call .. clr_end_async_call).  The offsets
 * are checked on the device (clr_offsets_sanitise), the verdict written
 * to status (NULL: not written). */
clr_status clr_segments_enqueue(clr_context *ctx, const clr_options *opt,
                                clr_op op, clr_type type, cl_mem data,
                                size_t data_offset, size_t n, cl_mem offsets,
                                size_t offsets_offset, size_t n_segments,
                                cl_mem results, size_t results_offset,
                                cl_mem status, size_t status_offset,
                                cl_uint num_events, const cl_event *wait_list,
                                cl_event *event);
/* n_segments + 1 offsets from element offsets_off checked on the device
 * with nothing read back: the first kernel waits for async's wait list,
 * then *safe (ctx->partial[1]) holds from element 0 a copy of them, or
 * when they are no partition of [0, n) the partition 0, ..., 0, n, which
 * the call's kernels read instead (cl/reduce_segmented.cl, "the enqueued
 * check").  With status, its cl_ulong at element status_off receives the
 * verdict: 0, or 1 + the index of the first bad offset. */
clr_status clr_offsets_sanitise(clr_context *ctx, cl_mem offsets,
                                size_t offsets_off, size_t n_segments, size_t n,
                                cl_mem status, size_t status_off,
                                const clr_async *async, cl_mem *safe);
/* Caller scratch (scratch.c): the buffer clr_offsets_sanitise reserves
 * for n_segments (its kernels built), and clr_check_offsets_buffer's. */
clr_status clr_offsets_sanitise_scratch(clr_context *ctx, size_t n_segments,
                                        clr_scratch_plan *sp);
void clr_check_offsets_scratch(clr_context *ctx, clr_scratch_plan *sp);
/* The buffers a segmented reduction of n buffer elements in n_segments
 * reserves under clr_run or clr_enqueue (the larger of each), into sp;
 * its checks first.  clr_run's launch may need less (an upper bound). */
clr_status clr_segments_scratch(clr_context *ctx, const clr_options *opt,
                                clr_op op, clr_type type, size_t n,
                                size_t n_segments, clr_scratch_plan *sp);
/* A byte range of a buffer a call uses, named for a refusal. */
typedef struct clr_byte_range {
  cl_mem mem;
  size_t at, bytes;
  const char *what;
} clr_byte_range;
/* clr_enqueue's status (NULL: none, CLR_OK): one writable cl_ulong at
 * element status_off, in none of the ranges (of the same cl_mem), else a
 * refusal. */
clr_status clr_check_status_buffer(clr_context *ctx, cl_mem status,
                                   size_t status_off,
                                   const clr_byte_range *ranges,
                                   size_t n_ranges);

/* ---- scan_segmented.c */
/* clr_enqueue of a segmented scan by offsets of buffers (request.c), as
 * clr_segments_enqueue. */
clr_status clr_scan_segments_enqueue(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_mem offsets, size_t offsets_offset, size_t n_segments, cl_mem status,
    size_t status_offset, cl_uint num_events, const cl_event *wait_list,
    cl_event *event);
/* The buffers a segmented scan of n buffer elements reserves, by offsets
 * (n_segments of them: clr_run's check and clr_enqueue's copy both) or by
 * heads, into sp; its checks first. */
clr_status clr_sscan_scratch(clr_context *ctx, const clr_options *opt,
                             clr_op op, clr_type type, size_t n, int by_offsets,
                             size_t n_segments, clr_scratch_plan *sp);

/* ==== Hardening: the on-disk readers' pure parts, which take
 * bytes and need no OpenCL device, so they can be fuzzed
 * (tests/fuzz/fuzz_cache_entry.c, tests/fuzz/fuzz_tuning.c). */

/* ---- binary_cache.c: one cache entry (format in binary_cache.c) */
#define CLR_CACHE_HEADER_SIZE 32
#define CLR_CACHE_MAX_KEY 4096             /* bytes of key text, at most   */
#define CLR_CACHE_MAX_PAYLOAD (1ULL << 30) /* bytes of program binary      */
/* Fill the fixed header of an entry holding key and payload (checksum
 * included); the entry is the header, then the key, then the payload. */
void clr_cache_entry_header(unsigned char hdr[CLR_CACHE_HEADER_SIZE],
                            const char *key, size_t key_len,
                            const unsigned char *payload, size_t payload_len);
/* Verify a whole entry of len bytes: magic, lengths within their limits
 * and summing to len, checksum, and (unless expected_key is NULL) the key
 * text.  1 with *payload pointing into buf; 0 with *payload NULL and *why
 * (may be NULL) set to a static reason. */
int clr_cache_entry_parse(const unsigned char *buf, size_t len,
                          const char *expected_key,
                          const unsigned char **payload, size_t *payload_len,
                          const char **why);

/* ---- tuning.c: tuning text (format in tuning.c) */
#define CLR_TUNING_MAX_FILE 65536 /* bytes; larger files are refused */
/* Apply the key=value lines of text (len bytes, NUL bytes allowed) to *t
 * (may be NULL), each value checked against its key's limits; the last
 * match= value goes to match (may be NULL; "" when none). */
void clr_tuning_parse(const char *text, size_t len, clr_tuning *t, char *match,
                      size_t match_size);
/* 1 when every value of t is within its key's limits; else 0 and a
 * message naming the first bad key in why (may be NULL). */
int clr_tuning_check(const clr_tuning *t, char *why, size_t why_size);
/* t as key=value lines that clr_tuning_parse reads back; like snprintf,
 * returns the length the whole text needs. */
size_t clr_tuning_format(const clr_tuning *t, char *buf, size_t size);

#endif
