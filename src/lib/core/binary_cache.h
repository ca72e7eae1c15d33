/* On-disk cache of built program binaries (see binary_cache.c). */
#ifndef CLR_BINARY_CACHE_H
#define CLR_BINARY_CACHE_H

#include "internal.h"

/* An entry being loaded: its path and the mark that says so. */
typedef struct clr_cache_claim {
  char path[4096];
  char mark[4200];
  int active; /* a loaded program awaits clr_binary_cache_done */
  int owned;  /* the mark is this load's */
} clr_cache_claim;

/* 1 and *out set when a valid cached binary was found, loaded and built,
 * and has the kernel named kernel; then the caller must call
 * clr_binary_cache_done with claim once it made its kernel (or failed). */
int clr_binary_cache_load(clr_context *ctx, const char *options,
                          const char *source, size_t source_len,
                          const char *kernel, cl_program *out,
                          clr_cache_claim *claim);
/* The end of a load: ok 1 keeps the entry, 0 deletes it (it loaded but
 * gave no kernel); either way the loading mark goes. */
void clr_binary_cache_done(clr_context *ctx, clr_cache_claim *claim, int ok);
/* The cache's size cap unless $CLREDUCE_CACHE_MAX_BYTES sets one. */
#define CLR_CACHE_DEFAULT_MAX_BYTES ((uint64_t)256 << 20)

/* Bytes of a cache directory's name, its NUL included, at most: a longer
 * one could not be opened (PATH_MAX), so it disables the cache. */
#define CLR_CACHE_DIR_MAX 4096

/* The cache directory of a context whose clr_context_config.cache_dir is
 * configured (NULL: not set): configured, else $CLREDUCE_CACHE_DIR, else
 * $XDG_CACHE_HOME/clreduce, else $HOME/.cache/clreduce, into dir.  Its
 * length; 0 with dir "" when the cache is disabled (configured or
 * $CLREDUCE_CACHE_DIR set and empty, neither XDG_CACHE_HOME nor HOME set,
 * or a name too long).  The one resolution, for clr_context_create and
 * the clr_cache_* calls. */
size_t clr_cache_dir_resolve(const char *configured,
                             char dir[CLR_CACHE_DIR_MAX]);
/* clr_cache_dir, clr_cache_usage and clr_cache_clear for a config whose
 * cache_dir is configured (read by context.c, which has the public
 * calls). */
clr_status clr_cache_dir_of(const char *configured, char *buf, size_t size);
clr_status clr_cache_usage_of(const char *configured, uint64_t *entries,
                              uint64_t *bytes, uint64_t *max_bytes,
                              char *detail, size_t detail_size);
clr_status clr_cache_clear_of(const char *configured, uint64_t *removed,
                              uint64_t *bytes, char *detail,
                              size_t detail_size);

/* Best effort: failures to write are ignored (and logged).  After a
 * store, least recently used entries go while the cache holds more than
 * its cap. */
void clr_binary_cache_store(clr_context *ctx, const char *options,
                            const char *source, size_t source_len,
                            cl_program prog);

/* The payload's own format where the platform's is known: PoCL's
 * "poclbin" container walked whole (driver: the driver version, which
 * says the container's version), NVIDIA's PTX text, an ELF image's
 * tables.  1 when it may be given to the driver; 0 with *why (may be
 * NULL) set to a static reason.  Pure: no OpenCL, fuzzed by
 * tests/fuzz/fuzz_cache_entry.c. */
int clr_cache_payload_check(const char *platform, const char *driver,
                            const unsigned char *bin, size_t len,
                            const char **why);

#endif
