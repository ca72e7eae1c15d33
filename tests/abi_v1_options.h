/* The first sized layouts, frozen: clr_options, clr_context_config and
 * clr_request as include/clreduce.h declared them when struct_size came
 * in (API 1.0), copied here as clr_options_v1, clr_context_config_v1 and
 * clr_request_v1.  A consumer
 * built against that header passes structs of exactly these layouts, with
 * struct_size = sizeof(clr_options_v1); test sized-structs
 * (test_sized_structs.c) passes them to every later library.
 *
 * Never edit the structs.  The assertions below tie them to today's
 * header: every v1 field where today's struct has it, and (until a field
 * is added on purpose) the same size.  Adding a field to clr_options or
 * clr_context_config changes the size assertion here, and only it, from
 * == to < (the v1 fields stay put: new ones go at the end). */
#ifndef CLR_ABI_V1_OPTIONS_H
#define CLR_ABI_V1_OPTIONS_H

#include "clreduce.h"

#include <stddef.h>
#include <stdint.h>

typedef struct clr_options_v1 {
  uint32_t struct_size;
  clr_kernel kernel;
  size_t wg_size;
  size_t coarse;
  unsigned vector_width;
  clr_layout layout;
  int narrow_accumulator;
  int exclusive;
  const void *carry_in;
  int exact;
  clr_type accumulate_in;
  clr_map map;
  const char *map_expr;
  uint64_t index_base;
} clr_options_v1;

typedef struct clr_context_config_v1 {
  uint32_t struct_size;
  const char *platform;
  const char *device;
  const char *kernel_dir;
  const char *cache_dir;
  clr_log_fn log;
  void *log_user;
  int copy_host_data;
  uint64_t max_chunk_bytes;
  int no_profiling;
} clr_context_config_v1;

/* Field f of v1 sits where today's struct T has it, with the same size. */
#define CLR_V1_SAME(T, f)                                                      \
  _Static_assert(offsetof(T##_v1, f) == offsetof(T, f) &&                      \
                     sizeof(((T##_v1 *)0)->f) == sizeof(((T *)0)->f),          \
                 #T "." #f " moved: v1 consumers would break")

CLR_V1_SAME(clr_options, struct_size);
CLR_V1_SAME(clr_options, kernel);
CLR_V1_SAME(clr_options, wg_size);
CLR_V1_SAME(clr_options, coarse);
CLR_V1_SAME(clr_options, vector_width);
CLR_V1_SAME(clr_options, layout);
CLR_V1_SAME(clr_options, narrow_accumulator);
CLR_V1_SAME(clr_options, exclusive);
CLR_V1_SAME(clr_options, carry_in);
CLR_V1_SAME(clr_options, exact);
CLR_V1_SAME(clr_options, accumulate_in);
CLR_V1_SAME(clr_options, map);
CLR_V1_SAME(clr_options, map_expr);
CLR_V1_SAME(clr_options, index_base);
_Static_assert(sizeof(clr_options_v1) < sizeof(clr_options),
               "clr_options changed size: a field added on purpose makes "
               "this <, the v1 copy stays as it is");

CLR_V1_SAME(clr_context_config, struct_size);
CLR_V1_SAME(clr_context_config, platform);
CLR_V1_SAME(clr_context_config, device);
CLR_V1_SAME(clr_context_config, kernel_dir);
CLR_V1_SAME(clr_context_config, cache_dir);
CLR_V1_SAME(clr_context_config, log);
CLR_V1_SAME(clr_context_config, log_user);
CLR_V1_SAME(clr_context_config, copy_host_data);
CLR_V1_SAME(clr_context_config, max_chunk_bytes);
CLR_V1_SAME(clr_context_config, no_profiling);
_Static_assert(sizeof(clr_context_config_v1) == sizeof(clr_context_config),
               "clr_context_config changed size: a field added on purpose "
               "makes this <, the v1 copy stays as it is");

/* clr_request before scratch, status and run_count came (the first
 * growth of a sized struct on purpose: today's clr_request is longer). */
typedef struct clr_request_v1 {
  uint32_t struct_size;
  clr_request_kind kind;
  clr_op op;
  clr_type type;
  size_t n;
  clr_operand input;
  clr_operand input2;
  clr_operand segments;
  size_t n_segments;
  clr_type key_type;
  clr_operand output;
  clr_operand output_keys;
  size_t *n_runs;
  const clr_options *options;
  cl_command_queue queue;
} clr_request_v1;

CLR_V1_SAME(clr_request, struct_size);
CLR_V1_SAME(clr_request, kind);
CLR_V1_SAME(clr_request, op);
CLR_V1_SAME(clr_request, type);
CLR_V1_SAME(clr_request, n);
CLR_V1_SAME(clr_request, input);
CLR_V1_SAME(clr_request, input2);
CLR_V1_SAME(clr_request, segments);
CLR_V1_SAME(clr_request, n_segments);
CLR_V1_SAME(clr_request, key_type);
CLR_V1_SAME(clr_request, output);
CLR_V1_SAME(clr_request, output_keys);
CLR_V1_SAME(clr_request, n_runs);
CLR_V1_SAME(clr_request, options);
CLR_V1_SAME(clr_request, queue);
_Static_assert(sizeof(clr_request_v1) < sizeof(clr_request),
               "clr_request grew after v1: the v1 copy stays as it is");

#undef CLR_V1_SAME

/* The v1 defaults, as clr_options_init and clr_context_config_init of the
 * v1 header set them. */
static inline clr_options_v1 clr_options_v1_init(void) {
  clr_options_v1 o = {(uint32_t)sizeof(clr_options_v1),
                      CLR_KERNEL_DEFAULT,
                      0,
                      0,
                      0,
                      CLR_LAYOUT_AUTO,
                      0,
                      0,
                      NULL,
                      0,
                      CLR_TYPE_DEFAULT,
                      CLR_MAP_NONE,
                      NULL,
                      0};
  return o;
}

static inline clr_context_config_v1 clr_context_config_v1_init(void) {
  clr_context_config_v1 c = {(uint32_t)sizeof(clr_context_config_v1),
                             NULL,
                             NULL,
                             NULL,
                             NULL,
                             NULL,
                             NULL,
                             0,
                             0,
                             0};
  return c;
}

/* The v1 request defaults, as CLR_REQUEST_INIT of the v1 header. */
static inline clr_request_v1 clr_request_v1_init(void) {
  clr_request_v1 r = {(uint32_t)sizeof(clr_request_v1),
                      CLR_REQ_REDUCE,
                      CLR_SUM,
                      CLR_TYPE_DEFAULT,
                      0,
                      {NULL, NULL, 0},
                      {NULL, NULL, 0},
                      {NULL, NULL, 0},
                      0,
                      CLR_TYPE_DEFAULT,
                      {NULL, NULL, 0},
                      {NULL, NULL, 0},
                      NULL,
                      NULL,
                      NULL};
  return r;
}

#endif
