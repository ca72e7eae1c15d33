/* On-disk cache of built program binaries, so a second run skips the
 * OpenCL compiler.
 *
 * An entry is keyed by everything that changes the binary: platform name,
 * device name and version, driver version, build options and the full
 * source text.  The file name is a 128-bit hash of that key; the file
 * starts with a header holding the key text itself, which is compared on
 * load, so a hash collision or a stale entry is a miss, not a wrong
 * program.  Entries are written to a temporary file and renamed into
 * place (atomic on POSIX), so readers never see a partial entry; an entry
 * that fails to load or build is ignored and rewritten from source. */
#include "binary_cache.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "CLRBIN1\n"

static uint64_t fnv1a(const void *data, size_t len, uint64_t h) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* The key text: one line per field, then the source hash. */
static int make_key(const clr_context *ctx, const char *options,
                    const char *source, size_t source_len, char *key,
                    size_t size, char *file_hex) {
  uint64_t hs1 = fnv1a(source, source_len, 0xcbf29ce484222325ULL);
  uint64_t hs2 = fnv1a(source, source_len, 0x84222325cbf29ce4ULL);
  int n =
      snprintf(key, size,
               "platform=%s\ndevice=%s\nversion=%s\ndriver=%s\n"
               "options=%s\nsource=%016llx%016llx/%zu\n",
               ctx->desc.platform_name, ctx->desc.device_name,
               ctx->desc.device_version, ctx->desc.driver_version, options,
               (unsigned long long)hs1, (unsigned long long)hs2, source_len);
  if (n < 0 || (size_t)n >= size)
    return 0;
  uint64_t h1 = fnv1a(key, (size_t)n, 0xcbf29ce484222325ULL);
  uint64_t h2 = fnv1a(key, (size_t)n, 0x9e3779b97f4a7c15ULL);
  snprintf(file_hex, 40, "%016llx%016llx", (unsigned long long)h1,
           (unsigned long long)h2);
  return 1;
}

static void entry_path(const clr_context *ctx, const char *hex, char *path,
                       size_t size) {
  snprintf(path, size, "%s/%s.clbin", ctx->cache_dir, hex);
}

/* mkdir -p */
static int make_dirs(const char *dir) {
  char tmp[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof tmp)
    return -1;
  memcpy(tmp, dir, len + 1);
  for (char *p = tmp + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  }
  if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
    return -1;
  return 0;
}

int clr_binary_cache_load(clr_context *ctx, const char *options,
                          const char *source, size_t source_len,
                          cl_program *out) {
  char key[2048], hex[40], path[4096];
  if (!ctx->cache_dir ||
      !make_key(ctx, options, source, source_len, key, sizeof key, hex))
    return 0;
  entry_path(ctx, hex, path, sizeof path);
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  int ok = 0;
  unsigned char *bin = NULL;
  char *stored = NULL;
  char magic[sizeof MAGIC - 1];
  uint64_t key_len = 0, bin_len = 0;
  if (fread(magic, 1, sizeof magic, f) != sizeof magic ||
      memcmp(magic, MAGIC, sizeof magic) != 0 ||
      fread(&key_len, sizeof key_len, 1, f) != 1 || key_len != strlen(key) ||
      fread(&bin_len, sizeof bin_len, 1, f) != 1 || bin_len == 0 ||
      bin_len > (1u << 30))
    goto done;
  stored = malloc((size_t)key_len);
  bin = malloc((size_t)bin_len);
  if (!stored || !bin ||
      fread(stored, 1, (size_t)key_len, f) != (size_t)key_len ||
      memcmp(stored, key, (size_t)key_len) != 0 ||
      fread(bin, 1, (size_t)bin_len, f) != (size_t)bin_len)
    goto done;
  {
    cl_int err, bin_status = CL_SUCCESS;
    size_t len = (size_t)bin_len;
    const unsigned char *bins[1] = {bin};
    cl_program prog = clCreateProgramWithBinary(ctx->cl, 1, &ctx->device, &len,
                                                bins, &bin_status, &err);
    if (err != CL_SUCCESS || bin_status != CL_SUCCESS)
      goto done;
    if (clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL) !=
        CL_SUCCESS) {
      clReleaseProgram(prog);
      goto done;
    }
    *out = prog;
    ok = 1;
  }
done:
  if (!ok)
    clr_log(ctx, "binary cache: ignoring unusable entry %s", path);
  free(stored);
  free(bin);
  fclose(f);
  return ok;
}

void clr_binary_cache_store(clr_context *ctx, const char *options,
                            const char *source, size_t source_len,
                            cl_program prog) {
  char key[2048], hex[40], path[4096], tmp[4200];
  size_t bin_len = 0;
  unsigned char *bin = NULL;
  FILE *f = NULL;
  if (!ctx->cache_dir ||
      !make_key(ctx, options, source, source_len, key, sizeof key, hex))
    return;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_len, &bin_len,
                       NULL) != CL_SUCCESS ||
      bin_len == 0)
    return;
  bin = malloc(bin_len);
  unsigned char *bins[1] = {bin};
  if (!bin || clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins,
                               NULL) != CL_SUCCESS)
    goto done;
  if (make_dirs(ctx->cache_dir) != 0) {
    clr_log(ctx, "binary cache: cannot create %s: %s", ctx->cache_dir,
            strerror(errno));
    goto done;
  }
  entry_path(ctx, hex, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  f = fopen(tmp, "wb");
  if (!f)
    goto done;
  uint64_t key_len = strlen(key), blen = bin_len;
  int bad = fwrite(MAGIC, 1, sizeof MAGIC - 1, f) != sizeof MAGIC - 1 ||
            fwrite(&key_len, sizeof key_len, 1, f) != 1 ||
            fwrite(&blen, sizeof blen, 1, f) != 1 ||
            fwrite(key, 1, key_len, f) != key_len ||
            fwrite(bin, 1, bin_len, f) != bin_len;
  bad |= fclose(f) != 0;
  f = NULL;
  if (bad || rename(tmp, path) != 0) {
    clr_log(ctx, "binary cache: cannot write %s", path);
    unlink(tmp);
  }
done:
  free(bin);
}
