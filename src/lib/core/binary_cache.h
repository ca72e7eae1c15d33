/* On-disk cache of built program binaries (see binary_cache.c). */
#ifndef CLR_BINARY_CACHE_H
#define CLR_BINARY_CACHE_H

#include "internal.h"

/* 1 and *out set when a valid cached binary was found and built. */
int clr_binary_cache_load(clr_context *ctx, const char *options,
                          const char *source, size_t source_len,
                          cl_program *out);
/* Best effort: failures to write are ignored (and logged). */
void clr_binary_cache_store(clr_context *ctx, const char *options,
                            const char *source, size_t source_len,
                            cl_program prog);

#endif
