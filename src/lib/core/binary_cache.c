/* On-disk cache of built program binaries, so a second run skips the
 * OpenCL compiler.
 *
 * An entry is keyed by everything that changes the binary: platform name,
 * device name and version, driver version, build options and the full
 * source text.  The file name is a 128-bit hash of that key.  The file is
 *
 *   offset  0  magic "CLRBIN2\n"                      8 bytes
 *           8  key length, little-endian           8 bytes
 *          16  payload (binary) length, LE          8 bytes
 *          24  FNV-1a 64 checksum, LE, over every   8 bytes
 *              other byte of the entry (magic, both lengths, key,
 *              payload)
 *          32  key text, then the payload; nothing after it.
 *
 * A loaded entry is verified in full before anything of it reaches the
 * driver (clr_cache_entry_parse): the lengths against the file's real
 * size (checked with fstat before anything is allocated), the checksum,
 * and the key text against the expected key, so a damaged, truncated or
 * foreign file, a hash collision or a stale entry is a miss, never a
 * wrong program or a crash in the driver.  A miss is rebuilt from source
 * and rewritten.  Entries are written to a unique temporary file in the
 * cache directory (mkstemp), flushed to disk and renamed into place
 * (atomic on POSIX), so readers never see a partial entry. */
#include "binary_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "CLRBIN2\n"
#define MAGIC_LEN 8
#define FNV_OFFSET 0xcbf29ce484222325ULL

static uint64_t fnv1a(const void *data, size_t len, uint64_t h) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

static void put_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* The checksum of an entry: the first 24 header bytes, key, payload. */
static uint64_t entry_checksum(const unsigned char *hdr, const void *key,
                               size_t key_len, const void *payload,
                               size_t payload_len) {
  uint64_t h = fnv1a(hdr, 24, FNV_OFFSET);
  h = fnv1a(key, key_len, h);
  return fnv1a(payload, payload_len, h);
}

void clr_cache_entry_header(unsigned char hdr[CLR_CACHE_HEADER_SIZE],
                            const char *key, size_t key_len,
                            const unsigned char *payload, size_t payload_len) {
  memcpy(hdr, MAGIC, MAGIC_LEN);
  put_le64(hdr + 8, key_len);
  put_le64(hdr + 16, payload_len);
  put_le64(hdr + 24, entry_checksum(hdr, key, key_len, payload, payload_len));
}

int clr_cache_entry_parse(const unsigned char *buf, size_t len,
                          const char *expected_key,
                          const unsigned char **payload, size_t *payload_len,
                          const char **why) {
  const char *reason = NULL;
  uint64_t key_len = 0, bin_len = 0;
  size_t want_key = expected_key ? strlen(expected_key) : 0;
  *payload = NULL;
  *payload_len = 0;
  if (len < CLR_CACHE_HEADER_SIZE)
    reason = "shorter than the header";
  else if (memcmp(buf, MAGIC, MAGIC_LEN) != 0)
    reason = "not an entry of this format (magic)";
  if (!reason) {
    key_len = get_le64(buf + 8);
    bin_len = get_le64(buf + 16);
    /* Each length within its limit first, so the sum cannot wrap. */
    if (key_len == 0 || key_len > CLR_CACHE_MAX_KEY)
      reason = "key length out of range";
    else if (bin_len == 0 || bin_len > CLR_CACHE_MAX_PAYLOAD)
      reason = "payload length out of range";
    else if (CLR_CACHE_HEADER_SIZE + key_len + bin_len != (uint64_t)len)
      reason = "lengths disagree with the file size";
  }
  if (!reason) {
    const unsigned char *key = buf + CLR_CACHE_HEADER_SIZE;
    const unsigned char *bin = key + key_len;
    if (entry_checksum(buf, key, (size_t)key_len, bin, (size_t)bin_len) !=
        get_le64(buf + 24))
      reason = "checksum mismatch";
    else if (expected_key &&
             (key_len != want_key || memcmp(key, expected_key, want_key) != 0))
      reason = "key mismatch (a stale entry or a hash collision)";
    else {
      *payload = bin;
      *payload_len = (size_t)bin_len;
    }
  }
  if (why)
    *why = reason;
  return reason == NULL;
}

/* The key text: one line per field, then the source hash. */
static int make_key(const clr_context *ctx, const char *options,
                    const char *source, size_t source_len, char *key,
                    size_t size, char *file_hex) {
  uint64_t hs1 = fnv1a(source, source_len, FNV_OFFSET);
  uint64_t hs2 = fnv1a(source, source_len, 0x84222325cbf29ce4ULL);
  int n =
      snprintf(key, size,
               "platform=%s\ndevice=%s\nversion=%s\ndriver=%s\n"
               "options=%s\nsource=%016llx%016llx/%zu\n",
               ctx->desc.platform_name, ctx->desc.device_name,
               ctx->desc.device_version, ctx->desc.driver_version, options,
               (unsigned long long)hs1, (unsigned long long)hs2, source_len);
  if (n < 0 || (size_t)n >= size || (size_t)n > CLR_CACHE_MAX_KEY)
    return 0;
  uint64_t h1 = fnv1a(key, (size_t)n, FNV_OFFSET);
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

/* The whole entry file at path into a malloc'ed buffer, its size checked
 * with fstat before anything is allocated.  Returns NULL with *why set
 * (NULL for a plain miss: no such file). */
static unsigned char *read_entry(const char *path, size_t *len,
                                 const char **why) {
  *why = NULL;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      *why = "cannot be opened";
    return NULL;
  }
  struct stat st;
  unsigned char *buf = NULL;
  if (fstat(fd, &st) != 0)
    *why = "cannot be examined (fstat)";
  else if (!S_ISREG(st.st_mode))
    *why = "not a regular file";
  else if (st.st_size < CLR_CACHE_HEADER_SIZE)
    *why = "shorter than the header";
  else if ((uint64_t)st.st_size > (uint64_t)CLR_CACHE_HEADER_SIZE +
                                      CLR_CACHE_MAX_KEY + CLR_CACHE_MAX_PAYLOAD)
    *why = "larger than any entry";
  else if (!(buf = malloc((size_t)st.st_size)))
    *why = "out of host memory";
  if (*why) {
    close(fd);
    return NULL;
  }
  size_t want = (size_t)st.st_size, got = 0;
  while (got < want) {
    ssize_t r = read(fd, buf + got, want - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  if (got != want) {
    free(buf);
    *why = "shorter than its size (changed while read)";
    return NULL;
  }
  *len = want;
  return buf;
}

int clr_binary_cache_load(clr_context *ctx, const char *options,
                          const char *source, size_t source_len,
                          cl_program *out) {
  char key[CLR_CACHE_MAX_KEY + 1], hex[40], path[4096];
  if (!ctx->cache_dir ||
      !make_key(ctx, options, source, source_len, key, sizeof key, hex))
    return 0;
  entry_path(ctx, hex, path, sizeof path);
  const char *why = NULL;
  size_t len = 0;
  unsigned char *buf = read_entry(path, &len, &why);
  if (!buf) {
    if (why)
      clr_log(ctx, "binary cache: ignoring damaged entry %s: %s", path, why);
    return 0;
  }
  const unsigned char *bin = NULL;
  size_t bin_len = 0;
  int ok = 0;
  if (!clr_cache_entry_parse(buf, len, key, &bin, &bin_len, &why)) {
    clr_log(ctx, "binary cache: ignoring damaged entry %s: %s", path, why);
    goto done;
  }
  {
    cl_int err = CL_SUCCESS, bin_status = CL_SUCCESS;
    const unsigned char *bins[1] = {bin};
    cl_program prog = clCreateProgramWithBinary(
        ctx->cl, 1, &ctx->device, &bin_len, bins, &bin_status, &err);
    if (err != CL_SUCCESS || bin_status != CL_SUCCESS) {
      if (prog && err == CL_SUCCESS)
        clReleaseProgram(prog);
      clr_log(ctx, "binary cache: the driver refuses entry %s (%s)", path,
              clr_cl_error_name(err != CL_SUCCESS ? err : bin_status));
      goto done;
    }
    cl_int berr = clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL);
    if (berr != CL_SUCCESS) {
      clReleaseProgram(prog);
      clr_log(ctx, "binary cache: entry %s does not build (%s)", path,
              clr_cl_error_name(berr));
      goto done;
    }
    *out = prog;
    ok = 1;
  }
done:
  free(buf);
  return ok;
}

/* All of len bytes to fd. */
static int write_all(int fd, const void *data, size_t len) {
  const unsigned char *p = data;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

void clr_binary_cache_store(clr_context *ctx, const char *options,
                            const char *source, size_t source_len,
                            cl_program prog) {
  char key[CLR_CACHE_MAX_KEY + 1], hex[40], path[4096], tmp[4200];
  unsigned char hdr[CLR_CACHE_HEADER_SIZE];
  size_t bin_len = 0;
  unsigned char *bin = NULL;
  if (!ctx->cache_dir ||
      !make_key(ctx, options, source, source_len, key, sizeof key, hex))
    return;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_len, &bin_len,
                       NULL) != CL_SUCCESS ||
      bin_len == 0 || bin_len > CLR_CACHE_MAX_PAYLOAD)
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
  int n = snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
  if (n < 0 || (size_t)n >= sizeof tmp)
    goto done;
  int fd = mkstemp(tmp);
  if (fd < 0) {
    clr_log(ctx, "binary cache: cannot write %s: %s", tmp, strerror(errno));
    goto done;
  }
  size_t key_len = strlen(key);
  clr_cache_entry_header(hdr, key, key_len, bin, bin_len);
  int bad = write_all(fd, hdr, sizeof hdr) != 0 ||
            write_all(fd, key, key_len) != 0 ||
            write_all(fd, bin, bin_len) != 0 || fsync(fd) != 0;
  bad |= close(fd) != 0;
  if (bad || rename(tmp, path) != 0) {
    clr_log(ctx, "binary cache: cannot write %s", path);
    unlink(tmp);
  }
done:
  free(bin);
}
