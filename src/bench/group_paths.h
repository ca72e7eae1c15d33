/* clreduce-bench --group (group_paths.c). */
#ifndef CLR_BENCH_GROUP_PATHS_H
#define CLR_BENCH_GROUP_PATHS_H

#include "clreduce.h"

#include <stddef.h>

/* A float sum over the devices `devices` names (clr_group_create) against
 * the group's first device alone, resident buffers and host arrays, at
 * each size (GROUP_STEPS progress steps a size); 0, 1 (a wrong answer) or
 * 3 (a failure). */
#define GROUP_STEPS 4
int bench_group(const clr_context_config *cfg, const char *devices,
                const size_t *sizes, size_t n_sizes, unsigned repeat);

#endif
