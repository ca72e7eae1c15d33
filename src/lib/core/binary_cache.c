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
 * foreign file, a hash collision or a stale entry is a miss.  A miss is
 * rebuilt from source and rewritten.  Entries are written to a unique
 * temporary file in the cache directory (mkstemp), flushed to disk and
 * renamed into place (atomic on POSIX), so readers never see a partial
 * entry.
 *
 * The checksum only finds accidents: anyone who can write the directory
 * can write an entry with a right checksum and a lying payload, and
 * drivers do not check what they are given (PoCL 3.1 reads a binary's
 * length fields unchecked and crashes in clCreateProgramWithBinary on a
 * truncated one).  So two more defences stand between an entry and the
 * driver:
 *
 * 1. The payload's own format, where it is known
 *    (clr_cache_payload_check): on PoCL the "poclbin" container must be
 *    of the version the running PoCL writes and, for PoCL 3.1 to 7, is
 *    walked whole (every length field within the payload and the walk
 *    ending exactly at its end, file names inside PoCL's cache directory,
 *    shared objects ELF, bitcode LLVM's); on NVIDIA the payload must be
 *    PTX text; an ELF image's tables must lie inside it.
 *
 * 2. A crash cannot repeat.  Before the payload reaches the driver the
 *    entry is marked as being loaded: a file "<entry>.loading" made with
 *    O_EXCL that holds the loader's process id and start time.  It is
 *    removed once the program loaded, built and gave its kernel
 *    (clr_binary_cache_done).  A mark whose process is gone is what a
 *    crash during a load leaves behind, so the next run finding it drops
 *    the entry (and the mark) and builds from source.  A mark of a
 *    live process is a concurrent load: the entry is loaded without a
 *    mark of its own (so a crash there repeats at most once more, in
 *    the next run, which does mark it).  Where no mark can be made (a
 *    read-only directory) the entry is not loaded at all.
 *
 * Any entry the driver refuses or cannot load (clCreateProgramWithBinary
 * or clBuildProgram failing, a binary status other than success, another
 * number of devices, the kernel missing) is deleted and the program built
 * from source, as for a damaged one.
 *
 * What none of this can find is a forged entry that is a valid program
 * for the device (another kernel's binary with the same kernel name): a
 * PoCL binary carries native code PoCL loads, so the cache directory must
 * be trusted like the kernel directory, writable by its user only (it is
 * made 0755 and its entries 0600). */
#include "binary_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* ---- the payload's own format */

/* A bounded little-endian reader: any read past the end sets bad. */
typedef struct {
  const unsigned char *p;
  size_t len, at;
  int bad;
} reader;

static uint64_t rd_le(reader *r, int bytes) {
  uint64_t v = 0;
  if (r->bad || r->len - r->at < (size_t)bytes) {
    r->bad = 1;
    return 0;
  }
  for (int i = bytes - 1; i >= 0; i--)
    v = (v << 8) | r->p[r->at + (size_t)i];
  r->at += (size_t)bytes;
  return v;
}

/* Skip n bytes, which must lie before end (<= r->len). */
static const unsigned char *rd_skip(reader *r, uint64_t n, size_t end) {
  if (r->bad || end < r->at || n > end - r->at) {
    r->bad = 1;
    return NULL;
  }
  const unsigned char *at = r->p + r->at;
  r->at += (size_t)n;
  return at;
}

#define POCL_MAGIC "poclbin\0"
#define POCL_HEADER 77        /* magic .. program build hash (41 bytes) */
#define POCL_MAX_NAME 1024    /* bytes of a file or kernel name, at most */
#define POCL_MAX_COUNT 100000 /* kernels, arguments, locals, files */

/* A file name PoCL writes under its cache directory: '/'-separated parts,
 * none empty, "." or "..", no NUL. */
static int pocl_path_ok(const unsigned char *s, size_t n) {
  if (n == 0 || n > POCL_MAX_NAME || s[0] != '/' || s[n - 1] == '/')
    return 0;
  size_t part = 0;
  for (size_t i = 1; i <= n; i++) {
    if (i == n || s[i] == '/') {
      size_t k = i - part - 1; /* the part is s[part + 1 .. i) */
      if (k == 0 || (k == 1 && s[part + 1] == '.') ||
          (k == 2 && s[part + 1] == '.' && s[part + 2] == '.'))
        return 0;
      part = i;
    } else if (s[i] == '\0')
      return 0;
  }
  return 1;
}

/* The files of one region of n bytes: (u32 length, name, u32 length,
 * content) records filling it exactly.  Shared objects must be ELF and
 * LLVM bitcode must have its magic (raw or wrapped). */
static const char *pocl_files(reader *r, uint64_t n) {
  if (r->bad || n > r->len - r->at)
    return "a file region runs past the binary";
  size_t end = r->at + (size_t)n;
  for (unsigned count = 0; r->at < end; count++) {
    uint64_t name_len = rd_le(r, 4);
    const unsigned char *name = rd_skip(r, name_len, end);
    if (!name || count >= POCL_MAX_COUNT || !pocl_path_ok(name, name_len))
      return "a file name is out of bounds or leaves the cache directory";
    uint64_t len = rd_le(r, 4);
    const unsigned char *data = rd_skip(r, len, end);
    if (!data)
      return "a file runs past its region";
    if (name_len >= 3 && memcmp(name + name_len - 3, ".so", 3) == 0 &&
        (len < 64 || memcmp(data, "\177ELF", 4) != 0))
      return "a shared object is not ELF";
    if (name_len >= 3 && memcmp(name + name_len - 3, ".bc", 3) == 0 &&
        (len < 8 || (memcmp(data, "BC\xc0\xde", 4) != 0 &&
                     memcmp(data, "\xde\xc0\x17\x0b", 4) != 0)))
      return "a bitcode file is not LLVM bitcode";
  }
  return r->bad ? "a file runs past its region" : NULL;
}

/* A string of the kernel metadata: u32 length and bytes, before end. */
static const unsigned char *pocl_string(reader *r, size_t end, uint64_t *n) {
  *n = rd_le(r, 4);
  if (*n > POCL_MAX_NAME * 64)
    r->bad = 1;
  return rd_skip(r, *n, end);
}

/* PoCL's binary container ("poclbin"), whose version must be the one the
 * running PoCL writes where that is known (pocl_version_of).  Versions 9
 * (PoCL 3.1) to 11 (PoCL 4 to 7) are walked; others (PoCL 3.0 and older
 * write 8) get the header check only.
 * PoCL reads its length fields unchecked, so every one is checked here:
 * header; root file regions; each kernel's record (struct size, files
 * size, argument info size, name; for version 9 the whole metadata:
 * counts, local sizes, attributes, each argument) and its files; the
 * last kernel ending exactly at the end. */
static const char *pocl_check(const unsigned char *bin, size_t len,
                              uint64_t expected) {
  reader r = {bin, len, 0, 0};
  if (len < POCL_HEADER + 8 || memcmp(bin, POCL_MAGIC, 8) != 0)
    return "not a PoCL binary (magic or size)";
  r.at = 16;
  uint64_t version = rd_le(&r, 4);
  uint64_t kernels = rd_le(&r, 4);
  uint64_t flags = rd_le(&r, 8);
  uint64_t roots = rd_le(&r, 4);
  if (expected && version != expected)
    return "not the PoCL binary version this PoCL writes";
  if (version < 9 || version > 11)
    return NULL; /* a layout not walked here: the loading mark guards it */
  if (kernels == 0 || kernels > POCL_MAX_COUNT || roots > POCL_MAX_COUNT)
    return "a PoCL kernel or file count out of range";
  /* Version 9's build hash: 40 characters and a NUL. */
  if (version == 9 &&
      (bin[POCL_HEADER - 1] != '\0' || memchr(bin + 36, '\0', 40) != NULL))
    return "a PoCL build hash that is not text";
  r.at = POCL_HEADER;
  if (version >= 10 && (flags & 2)) /* program-scope variables' size */
    rd_le(&r, 8);
  for (uint64_t i = 0; i < roots; i++) {
    uint64_t n = rd_le(&r, 8);
    const char *why = pocl_files(&r, n);
    if (why)
      return why;
  }
  for (uint64_t k = 0; k < kernels; k++) {
    size_t start = r.at;
    uint64_t size = rd_le(&r, 8), files = rd_le(&r, 8);
    uint64_t arginfo = rd_le(&r, 4);
    if (r.bad || size > len - start || size < 20 || files > size - 20)
      return "a PoCL kernel record runs past the binary";
    size_t meta_end = start + (size_t)(size - files);
    uint64_t n;
    const unsigned char *name = pocl_string(&r, meta_end, &n);
    if (!name || n == 0 || n > POCL_MAX_NAME || memchr(name, '\0', n))
      return "a PoCL kernel name out of bounds";
    if (version == 9) {
      uint64_t args = rd_le(&r, 4), locals = rd_le(&r, 4);
      if (args > POCL_MAX_COUNT || locals > POCL_MAX_COUNT)
        return "a PoCL argument or local count out of range";
      rd_skip(&r, 3 * 8 + locals * 8, meta_end); /* wg size, locals */
      pocl_string(&r, meta_end, &n);             /* attributes */
      rd_le(&r, 8);                              /* has_arg_metadata */
      size_t args_start = r.at;
      for (uint64_t a = 0; a < args && !r.bad; a++) {
        rd_skip(&r, 4 + 4 + 8 + 4 + 4, meta_end); /* qualifiers, type */
        pocl_string(&r, meta_end, &n);            /* name */
        pocl_string(&r, meta_end, &n);            /* type name */
      }
      if (r.bad || r.at > meta_end || r.at - args_start != arginfo ||
          r.at != meta_end)
        return "a PoCL kernel's metadata disagrees with its sizes";
    }
    r.at = meta_end;
    const char *why = pocl_files(&r, files);
    if (why)
      return why;
  }
  if (r.bad || r.at != len)
    return "a PoCL binary whose records do not end at its end";
  return NULL;
}

/* The binary version a PoCL release writes, from its driver version
 * ("3.1+debian"): 9 for 3.1, 11 for 4 to 7; 0 when not known. */
static uint64_t pocl_version_of(const char *driver) {
  char *end = NULL;
  long major = driver ? strtol(driver, &end, 10) : 0;
  long minor = end && *end == '.' ? strtol(end + 1, NULL, 10) : -1;
  if (major == 3 && minor == 1)
    return 9;
  if (major >= 4 && major <= 7)
    return 11;
  return 0;
}

/* NVIDIA's binaries are PTX: text starting with a comment or .version,
 * followed by a few NULs at most. */
static const char *ptx_check(const unsigned char *bin, size_t len) {
  size_t n = len;
  while (n > 0 && bin[n - 1] == '\0')
    n--;
  /* (NVIDIA's driver 580 ends its PTX with two NULs: a little padding is
   * allowed, not a payload of NULs) */
  if (n < 8 || len - n > 16)
    return "not PTX text (size or NUL bytes)";
  if (memcmp(bin, "//", 2) != 0 && memcmp(bin, ".version", 8) != 0)
    return "not PTX text (start)";
  for (size_t i = 0; i < n; i++)
    if (bin[i] == '\0' ||
        (bin[i] < 0x20 && bin[i] != '\t' && bin[i] != '\n' && bin[i] != '\r'))
      return "not PTX text (control bytes)";
  return NULL;
}

/* An ELF image (other drivers' binaries, when ELF): its header and the
 * tables it points at inside the payload. */
static const char *elf_check(const unsigned char *bin, size_t len) {
  if (len < 64 || (bin[4] != 1 && bin[4] != 2) || (bin[5] != 1 && bin[5] != 2))
    return "an ELF binary with a bad header";
  if (bin[4] == 2 && bin[5] == 1) { /* 64-bit little-endian */
    uint64_t phoff = get_le64(bin + 32), shoff = get_le64(bin + 40);
    uint64_t phnum = (uint64_t)bin[56] | (uint64_t)bin[57] << 8;
    uint64_t phsz = (uint64_t)bin[54] | (uint64_t)bin[55] << 8;
    uint64_t shnum = (uint64_t)bin[60] | (uint64_t)bin[61] << 8;
    uint64_t shsz = (uint64_t)bin[58] | (uint64_t)bin[59] << 8;
    if (phoff > len || phnum * phsz > len - phoff || shoff > len ||
        shnum * shsz > len - shoff)
      return "an ELF binary whose tables run past its end";
  }
  return NULL;
}

int clr_cache_payload_check(const char *platform, const char *driver,
                            const unsigned char *bin, size_t len,
                            const char **why) {
  const char *reason = NULL;
  if (len == 0)
    reason = "an empty binary";
  else if (platform && strstr(platform, "Portable Computing Language"))
    reason = pocl_check(bin, len, pocl_version_of(driver));
  else if (platform && strstr(platform, "NVIDIA"))
    reason = ptx_check(bin, len);
  else if (len >= 4 && memcmp(bin, "\177ELF", 4) == 0)
    reason = elf_check(bin, len);
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

/* ---- the loading mark */

/* The start time of process pid (clock ticks since boot, field 22 of
 * /proc/PID/stat), so a reused process id is not taken for the process
 * that wrote a mark.  0 when unknown (no /proc). */
static unsigned long long process_start(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the command name may hold anything */
  if (!p)
    return 0;
  /* Fields 3 to 21 after the name, then the start time. */
  for (int field = 2; field < 22 && p; field++)
    p = strchr(p + 1, ' ');
  return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* 1 when the mark at path was written by a process that still runs (or
 * is being written now); 0 when it is left over from one that stopped. */
static int mark_is_live(const char *path, long *pid_out) {
  char buf[64];
  struct stat st;
  *pid_out = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT; /* gone meanwhile: its loader finished */
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    n = read(fd, buf, sizeof buf - 1);
  close(fd);
  long pid = 0;
  unsigned long long start = 0;
  if (n > 0) {
    buf[n] = '\0';
    if (sscanf(buf, "%ld %llu", &pid, &start) != 2)
      pid = 0;
  }
  if (pid <= 0)
    /* Empty or unreadable: a loader between creating and writing it, or
     * one that stopped there; seconds tell them apart. */
    return n == 0 && time(NULL) - st.st_mtime < 10;
  *pid_out = pid;
  unsigned long long now = process_start(pid);
  if (now != 0 || start != 0)
    return now == start;
  return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* Leave the mark of this process on an entry about to be loaded.  1 when
 * the entry may be loaded (*owned: the mark is this call's); 0 when not
 * (the entry dropped when a stopped loader's mark was found). */
static int mark_loading(clr_context *ctx, const char *path, const char *mark,
                        int *owned) {
  *owned = 0;
  int fd =
      open(mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    char buf[64];
    long pid = (long)getpid();
    int n = snprintf(buf, sizeof buf, "%ld %llu\n", pid, process_start(pid));
    int bad = write_all(fd, buf, (size_t)n) != 0;
    bad |= close(fd) != 0;
    if (bad) {
      unlink(mark);
      clr_log(ctx, "binary cache: not loading entry %s: cannot write %s", path,
              mark);
      return 0;
    }
    *owned = 1;
    return 1;
  }
  if (errno != EEXIST) {
    clr_log(ctx,
            "binary cache: not loading entry %s: cannot mark it as being "
            "loaded (%s)",
            path, strerror(errno));
    return 0;
  }
  long pid = 0;
  if (mark_is_live(mark, &pid)) {
    clr_log(ctx, "binary cache: entry %s is being loaded by process %ld too",
            path, pid);
    return 1;
  }
  clr_log(ctx,
          "binary cache: dropping entry %s: a process stopped while loading "
          "it (a crash in the driver?)",
          path);
  unlink(path);
  unlink(mark);
  return 0;
}

/* 1 when name is one of the program's kernels. */
static int has_kernel(cl_program prog, const char *name) {
  size_t size = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size) !=
          CL_SUCCESS ||
      size == 0 || size > ((size_t)1 << 20))
    return 0;
  char *names = malloc(size + 1);
  if (!names)
    return 0;
  int found = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, size, names, NULL) ==
      CL_SUCCESS) {
    names[size] = '\0';
    size_t n = strlen(name);
    for (const char *p = names; *p;) {
      size_t k = strcspn(p, ";");
      if (k == n && memcmp(p, name, n) == 0)
        found = 1;
      p += k + (p[k] == ';');
    }
  }
  free(names);
  return found;
}

/* The driver's part: program, build, checks.  NULL with *what set. */
static cl_program load_binary(clr_context *ctx, const char *options,
                              const char *kernel, const unsigned char *bin,
                              size_t bin_len, char *what, size_t size) {
  cl_int err = CL_SUCCESS, bin_status = CL_SUCCESS;
  const unsigned char *bins[1] = {bin};
  cl_program prog = clCreateProgramWithBinary(
      ctx->cl, 1, &ctx->device, &bin_len, bins, &bin_status, &err);
  if (err != CL_SUCCESS || bin_status != CL_SUCCESS) {
    if (prog && err == CL_SUCCESS)
      clReleaseProgram(prog);
    snprintf(what, size, "the driver refuses it (%s)",
             clr_cl_error_name(err != CL_SUCCESS ? err : bin_status));
    return NULL;
  }
  cl_uint devices = 0;
  cl_build_status build = CL_BUILD_NONE;
  err = clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL);
  if (err != CL_SUCCESS)
    snprintf(what, size, "it does not build (%s)", clr_cl_error_name(err));
  else if ((err = clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof devices,
                                   &devices, NULL)) != CL_SUCCESS ||
           devices != 1)
    snprintf(what, size, "it is for %u devices (%s)", (unsigned)devices,
             clr_cl_error_name(err));
  else if ((err = clGetProgramBuildInfo(prog, ctx->device,
                                        CL_PROGRAM_BUILD_STATUS, sizeof build,
                                        &build, NULL)) != CL_SUCCESS ||
           build != CL_BUILD_SUCCESS)
    snprintf(what, size, "its build status is %d (%s)", (int)build,
             clr_cl_error_name(err));
  else if (!has_kernel(prog, kernel))
    snprintf(what, size, "it has no kernel %s", kernel);
  else
    return prog;
  clReleaseProgram(prog);
  return NULL;
}

int clr_binary_cache_load(clr_context *ctx, const char *options,
                          const char *source, size_t source_len,
                          const char *kernel, cl_program *out,
                          clr_cache_claim *claim) {
  char key[CLR_CACHE_MAX_KEY + 1], hex[40];
  memset(claim, 0, sizeof *claim);
  if (!ctx->cache_dir ||
      !make_key(ctx, options, source, source_len, key, sizeof key, hex))
    return 0;
  entry_path(ctx, hex, claim->path, sizeof claim->path);
  snprintf(claim->mark, sizeof claim->mark, "%s.loading", claim->path);
  const char *path = claim->path, *why = NULL;
  size_t len = 0;
  unsigned char *buf = read_entry(path, &len, &why);
  if (!buf) {
    long pid = 0;
    if (why)
      clr_log(ctx, "binary cache: ignoring damaged entry %s: %s", path, why);
    else if (access(claim->mark, F_OK) == 0 && !mark_is_live(claim->mark, &pid))
      unlink(claim->mark); /* left by a crash, the entry since dropped */
    return 0;
  }
  const unsigned char *bin = NULL;
  size_t bin_len = 0;
  int ok = 0;
  if (!clr_cache_entry_parse(buf, len, key, &bin, &bin_len, &why) ||
      !clr_cache_payload_check(ctx->desc.platform_name,
                               ctx->desc.driver_version, bin, bin_len, &why)) {
    clr_log(ctx, "binary cache: ignoring damaged entry %s: %s", path, why);
    goto done;
  }
  if (!mark_loading(ctx, path, claim->mark, &claim->owned))
    goto done;
  claim->active = 1;
  /* Past this line a crash in the driver leaves the mark behind. */
  clr_log(ctx, "binary cache: loading entry %s", path);
  char what[160];
  cl_program prog =
      load_binary(ctx, options, kernel, bin, bin_len, what, sizeof what);
  if (!prog) {
    clr_log(ctx, "binary cache: dropping entry %s: %s", path, what);
    clr_binary_cache_done(ctx, claim, 0);
    goto done;
  }
  *out = prog;
  ok = 1;
done:
  free(buf);
  return ok;
}

void clr_binary_cache_done(clr_context *ctx, clr_cache_claim *claim, int ok) {
  if (!claim->active)
    return;
  if (!ok && unlink(claim->path) != 0 && errno != ENOENT)
    clr_log(ctx, "binary cache: cannot remove %s: %s", claim->path,
            strerror(errno));
  if (ok) { /* used now: its access time orders the eviction */
    const struct timespec use[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    utimensat(AT_FDCWD, claim->path, use, 0);
  }
  if (claim->owned)
    unlink(claim->mark);
  claim->active = 0;
  claim->owned = 0;
}

/* ---- the size cap: least recently used entries go */

/* The cap in bytes: $CLREDUCE_CACHE_MAX_BYTES (a count with an optional
 * K, M or G suffix, powers of 1024; 0 for no cap), else the default.
 * 0 when the variable holds no such count (*cap: the default). */
static int cap_from_env(uint64_t *cap) {
  const char *e = getenv("CLREDUCE_CACHE_MAX_BYTES");
  *cap = CLR_CACHE_DEFAULT_MAX_BYTES;
  if (!e || !*e)
    return 1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(e, &end, 10);
  unsigned shift = 0;
  if (end && *end && strchr("kK", *end))
    shift = 10;
  else if (end && *end && strchr("mM", *end))
    shift = 20;
  else if (end && *end && strchr("gG", *end))
    shift = 30;
  if (shift)
    end++;
  if (errno || end == e || *end || *e == '-' || (v >> (64 - 1 - shift)))
    return 0;
  *cap = (uint64_t)v << shift;
  return 1;
}

/* The cap, a bad $CLREDUCE_CACHE_MAX_BYTES said so in the log. */
static uint64_t cache_cap(clr_context *ctx) {
  uint64_t cap;
  if (!cap_from_env(&cap))
    clr_log(ctx,
            "binary cache: ignoring CLREDUCE_CACHE_MAX_BYTES='%s' (a byte "
            "count, K, M or G after it; 0 for no cap)",
            getenv("CLREDUCE_CACHE_MAX_BYTES"));
  return cap;
}

/* 1 when a directory entry's name is a cache entry's ("<hash>.clbin";
 * not a temporary file, "<hash>.clbin.XXXXXX", nor a loading mark). */
static int is_entry_name(const char *name) {
  size_t len = strlen(name);
  return len >= 7 && len < 64 && strcmp(name + len - 6, ".clbin") == 0;
}

typedef struct cached_file {
  char name[64];
  uint64_t bytes;
  struct timespec used; /* the later of access and modification times */
} cached_file;

static int older_first(const void *a, const void *b) {
  const struct timespec *x = &((const cached_file *)a)->used,
                        *y = &((const cached_file *)b)->used;
  if (x->tv_sec != y->tv_sec)
    return x->tv_sec < y->tv_sec ? -1 : 1;
  return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* After a store: while the entries hold more than the cap, the least
 * recently used (loaded or written) go, never keep (the one just
 * written).  Best effort: a failure leaves the cache as it is. */
static void evict(clr_context *ctx, const char *keep) {
  uint64_t cap = cache_cap(ctx), total = 0;
  if (cap == 0)
    return;
  DIR *d = opendir(ctx->cache_dir);
  if (!d)
    return;
  cached_file *files = NULL;
  size_t n = 0, room = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    struct stat st;
    char path[4200];
    if (!is_entry_name(e->d_name))
      continue;
    snprintf(path, sizeof path, "%s/%s", ctx->cache_dir, e->d_name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (n == room) {
      size_t r = room ? 2 * room : 64;
      cached_file *f = realloc(files, r * sizeof *f);
      if (!f)
        break;
      files = f;
      room = r;
    }
    memcpy(files[n].name, e->d_name, len + 1);
    files[n].bytes = (uint64_t)st.st_size;
    files[n].used = older_first(&(cached_file){.used = st.st_atim},
                                &(cached_file){.used = st.st_mtim}) > 0
                        ? st.st_atim
                        : st.st_mtim;
    total += files[n].bytes;
    n++;
  }
  closedir(d);
  if (total > cap && n > 0) {
    qsort(files, n, sizeof *files, older_first);
    for (size_t i = 0; i < n && total > cap; i++) {
      char path[4200];
      snprintf(path, sizeof path, "%s/%s", ctx->cache_dir, files[i].name);
      if (strcmp(path, keep) == 0)
        continue;
      if (unlink(path) == 0 || errno == ENOENT) {
        total -= files[i].bytes;
        clr_log(ctx,
                "binary cache: evicted %s (the cache is capped at %llu "
                "bytes)",
                path, (unsigned long long)cap);
      }
    }
  }
  free(files);
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
  } else {
    evict(ctx, path);
  }
done:
  free(bin);
}

/* ---- the cache seen and cleared without a context (clr_cache_*) */

size_t clr_cache_dir_resolve(const char *configured,
                             char dir[CLR_CACHE_DIR_MAX]) {
  const char *env = getenv("CLREDUCE_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n = -1;
  if (configured)
    n = snprintf(dir, CLR_CACHE_DIR_MAX, "%s", configured);
  else if (env)
    n = snprintf(dir, CLR_CACHE_DIR_MAX, "%s", env);
  else if (xdg && *xdg)
    n = snprintf(dir, CLR_CACHE_DIR_MAX, "%s/clreduce", xdg);
  else if (home && *home)
    n = snprintf(dir, CLR_CACHE_DIR_MAX, "%s/.cache/clreduce", home);
  if (n <= 0 || n >= CLR_CACHE_DIR_MAX) {
    dir[0] = '\0';
    return 0;
  }
  return (size_t)n;
}

clr_status clr_cache_dir_of(const char *configured, char *buf, size_t size) {
  char dir[CLR_CACHE_DIR_MAX];
  if (!buf || size == 0)
    return CLR_ERR_INVALID_ARGUMENT;
  size_t n = clr_cache_dir_resolve(configured, dir);
  if (n >= size) {
    buf[0] = '\0';
    return CLR_ERR_INVALID_ARGUMENT;
  }
  memcpy(buf, dir, n + 1);
  return CLR_OK;
}

/* detail := "<what> <path>: <the error's text>". */
static void io_detail(char *detail, size_t size, const char *what,
                      const char *path, int err) {
  if (detail && size)
    snprintf(detail, size, "%s %s: %s", what, path, strerror(err));
}

/* 1 when name is a loading mark ("<entry>.loading") of an entry's name. */
static int is_mark_name(const char *name) {
  size_t len = strlen(name);
  char entry[64];
  if (len <= 8 || len - 8 >= sizeof entry ||
      strcmp(name + len - 8, ".loading") != 0)
    return 0;
  memcpy(entry, name, len - 8);
  entry[len - 8] = '\0';
  return is_entry_name(entry);
}

/* The entries of the cache directory dir: counted (clear 0) or removed
 * (clear 1), *entries and *bytes the entries counted or removed.  Clearing
 * then removes the loading marks of processes that stopped whose entries
 * are gone; a live process's mark stays, as do other files and
 * directories (tuning/).  A directory that does not exist holds none. */
static clr_status walk_entries(const char *dir, int clear, uint64_t *entries,
                               uint64_t *bytes, char *detail,
                               size_t detail_size) {
  clr_status status = CLR_OK;
  *entries = 0;
  *bytes = 0;
  if (detail && detail_size)
    detail[0] = '\0';
  if (!*dir)
    return CLR_OK; /* the cache is disabled */
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT)
      return CLR_OK;
    io_detail(detail, detail_size, "cannot read the cache directory", dir,
              errno);
    return CLR_ERR_IO;
  }
  /* Pass 0: the entries; pass 1 (clearing): the marks left behind. */
  for (int pass = 0; pass < 1 + clear; pass++) {
    struct dirent *e;
    if (pass)
      rewinddir(d);
    errno = 0;
    while ((e = readdir(d)) != NULL) {
      char path[CLR_CACHE_DIR_MAX + 300];
      struct stat st;
      int mark = pass == 1;
      if (!(mark ? is_mark_name(e->d_name) : is_entry_name(e->d_name)))
        continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        errno = 0; /* gone meanwhile, or no entry of ours */
        continue;
      }
      if (mark) {
        char entry[sizeof path];
        long pid = 0;
        snprintf(entry, sizeof entry, "%.*s", (int)(strlen(path) - 8), path);
        if (lstat(entry, &st) != 0 && errno == ENOENT &&
            !mark_is_live(path, &pid))
          unlink(path); /* best effort: a stale mark is harmless */
      } else if (!clear) {
        *entries += 1;
        *bytes += (uint64_t)st.st_size;
      } else if (unlink(path) == 0) {
        *entries += 1;
        *bytes += (uint64_t)st.st_size;
      } else if (errno != ENOENT && status == CLR_OK) {
        io_detail(detail, detail_size, "cannot remove", path, errno);
        status = CLR_ERR_IO;
      }
      errno = 0;
    }
    if (errno != 0 && status == CLR_OK) {
      io_detail(detail, detail_size, "cannot read the cache directory", dir,
                errno);
      status = CLR_ERR_IO;
    }
  }
  closedir(d);
  return status;
}

clr_status clr_cache_usage_of(const char *configured, uint64_t *entries,
                              uint64_t *bytes, uint64_t *max_bytes,
                              char *detail, size_t detail_size) {
  char dir[CLR_CACHE_DIR_MAX];
  uint64_t n = 0, size = 0, cap = 0;
  clr_cache_dir_resolve(configured, dir);
  cap_from_env(&cap);
  clr_status s = walk_entries(dir, 0, &n, &size, detail, detail_size);
  if (entries)
    *entries = n;
  if (bytes)
    *bytes = size;
  if (max_bytes)
    *max_bytes = cap;
  return s;
}

clr_status clr_cache_clear_of(const char *configured, uint64_t *removed,
                              uint64_t *bytes, char *detail,
                              size_t detail_size) {
  char dir[CLR_CACHE_DIR_MAX];
  uint64_t n = 0, size = 0;
  clr_cache_dir_resolve(configured, dir);
  clr_status s = walk_entries(dir, 1, &n, &size, detail, detail_size);
  if (removed)
    *removed = n;
  if (bytes)
    *bytes = size;
  return s;
}
