/* clreduce-bench --host and --latency (host_paths.c). */
#ifndef CLR_BENCH_HOST_PATHS_H
#define CLR_BENCH_HOST_PATHS_H

#include "clreduce.h"

#include <stddef.h>

/* Host-array calls against plain pageable and pinned copies, at each
 * size (HOST_STEPS progress steps a size); 0, 1 (a wrong answer) or 3 (a
 * failure). */
#define HOST_STEPS 15
int bench_host_paths(clr_context *ctx, const size_t *sizes, size_t n_sizes,
                     unsigned repeat);
/* Small calls against the device's call floor; 0, 1 or 3. */
int bench_latency(clr_context *ctx, unsigned repeat, const char *label);

#endif
