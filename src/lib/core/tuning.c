/* Tuning files: small "key=value" text files, one per device.
 *
 *   # comment
 *   match=H100              (shipped files: a substring of the device name;
 *                            alternatives separated by |)
 *   reduce.wg=256
 *   reduce.vec_bytes=16
 *   reduce.layout=strided   (or contiguous)
 *   reduce.groups_per_cu=8
 *   scan.wg=256
 *   scan.per_item=1
 *   scan.kernel=decoupled   (the scan used when none is named)
 *   decoupled.items=8       (elements per work-item of the decoupled scan)
 *   decoupled.wg=128        (its work-group size; 1: the CPU shape)
 *   decoupled.run_items=16384 (elements per run in the CPU shape)
 *   decoupled.spin=4096     (the CPU shape's wait before it computes)
 *   exact.terms=2           (exact sums: floating-point expansion terms)
 *   exact.vec_bytes=32      (exact sums: bytes per load)
 *   exact.int64_atomics=1   (exact sums: 64-bit local atomics if present)
 *   minmax.vec_bytes=32     (minmax: bytes per load)
 *
 * Shipped files live in data/tuning/ (installed to share/clreduce/tuning,
 * built into the library with -Dembed_kernels, or $CLREDUCE_TUNING_DIR,
 * which wins over both); the most specific match (longest match=) wins.
 * The user's file, written by clr_autotune, is <cache dir>/tuning/<device
 * name with every character but letters and digits replaced by _>.txt and
 * overrides the shipped one.  Unknown keys are ignored; bad values are
 * ignored key by key, so a damaged file cannot make a context unusable.
 * Only regular files of at most 64 KiB are read (opened without blocking,
 * so a FIFO or a device in their place is refused, not waited on).  Every
 * key's limits are in one table (tuning_keys.def), which the parser, the
 * validator of clr_set_tuning and the writer of clr_save_tuning share. */
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ the keys */

/* Every key, once: the parser, the validator (clr_set_tuning) and the
 * writer (clr_save_tuning) all go through this table, so a key's limits
 * live in one place. */
typedef enum key_type {
  KEY_SIZE,       /* size_t, min..max                */
  KEY_UINT,       /* unsigned, min..max              */
  KEY_LAYOUT,     /* clr_layout: strided, contiguous */
  KEY_SCAN_KERNEL /* clr_kernel: a scan kernel       */
} key_type;

typedef struct tuning_key {
  const char *name; /* in the file */
  key_type type;
  size_t offset; /* of the field in clr_tuning */
  size_t min, max;
  const char *doc;
} tuning_key;

static const tuning_key keys[] = {
#define CLR_TUNING_KEY(name, type, field, lo, hi, doc)                         \
  {name, type, offsetof(clr_tuning, field), lo, hi, doc},
#include "tuning_keys.def"
};
#define N_KEYS (sizeof keys / sizeof *keys)

/* A field's value widened to size_t (a negative enum becomes huge, so
 * out of range). */
static size_t get_value(const clr_tuning *t, const tuning_key *k) {
  const char *p = (const char *)t + k->offset;
  switch (k->type) {
  case KEY_SIZE:
    return *(const size_t *)(const void *)p;
  case KEY_UINT:
    return *(const unsigned *)(const void *)p;
  case KEY_LAYOUT:
    return (size_t) * (const clr_layout *)(const void *)p;
  default:
    return (size_t) * (const clr_kernel *)(const void *)p;
  }
}

/* Only called with values value_ok accepted. */
static void set_value(clr_tuning *t, const tuning_key *k, size_t v) {
  char *p = (char *)t + k->offset;
  switch (k->type) {
  case KEY_SIZE:
    *(size_t *)(void *)p = v;
    break;
  case KEY_UINT:
    *(unsigned *)(void *)p = (unsigned)v;
    break;
  case KEY_LAYOUT:
    *(clr_layout *)(void *)p = (clr_layout)v;
    break;
  default:
    *(clr_kernel *)(void *)p = (clr_kernel)v;
    break;
  }
}

static int value_ok(const tuning_key *k, size_t v) {
  switch (k->type) {
  case KEY_SIZE:
  case KEY_UINT:
    return v >= k->min && v <= k->max;
  case KEY_LAYOUT:
    return v == (size_t)CLR_LAYOUT_STRIDED ||
           v == (size_t)CLR_LAYOUT_CONTIGUOUS;
  default:
    return v < (size_t)CLR_KERNEL_COUNT && clr_kernel_is_scan((clr_kernel)v);
  }
}

/* The value text of a line (NUL-terminated, no NUL inside) into *v. */
static int parse_value(const tuning_key *k, const char *text, size_t *v) {
  switch (k->type) {
  case KEY_SIZE:
  case KEY_UINT: {
    /* Decimal digits only: no sign, no blanks, no 0x, no suffix. */
    if (!isdigit((unsigned char)text[0]))
      return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(text, &end, 10);
    if (errno || *end || x > SIZE_MAX)
      return 0;
    *v = (size_t)x;
    break;
  }
  case KEY_LAYOUT:
    if (strcmp(text, "strided") == 0)
      *v = CLR_LAYOUT_STRIDED;
    else if (strcmp(text, "contiguous") == 0)
      *v = CLR_LAYOUT_CONTIGUOUS;
    else
      return 0;
    break;
  default: {
    clr_kernel kk;
    if (clr_kernel_from_name(text, &kk) != CLR_OK)
      return 0;
    *v = (size_t)kk;
    break;
  }
  }
  return value_ok(k, *v);
}

static const char *value_text(const tuning_key *k, size_t v, char *buf,
                              size_t size) {
  switch (k->type) {
  case KEY_SIZE:
  case KEY_UINT:
    snprintf(buf, size, "%zu", v);
    return buf;
  case KEY_LAYOUT:
    return v == (size_t)CLR_LAYOUT_STRIDED ? "strided" : "contiguous";
  default:
    return clr_kernel_name((clr_kernel)v);
  }
}

int clr_tuning_check(const clr_tuning *t, char *why, size_t why_size) {
  for (size_t i = 0; i < N_KEYS; i++) {
    const tuning_key *k = &keys[i];
    size_t v = get_value(t, k);
    if (value_ok(k, v))
      continue;
    if (why && why_size) {
      if (k->type == KEY_SIZE || k->type == KEY_UINT)
        snprintf(why, why_size, "tuning %s (%s) must be %zu to %zu, not %zu",
                 k->name, k->doc, k->min, k->max, v);
      else
        snprintf(why, why_size, "tuning %s (%s) must be %s", k->name, k->doc,
                 k->type == KEY_LAYOUT ? "strided or contiguous"
                                       : "the name of a scan kernel");
    }
    return 0;
  }
  return 1;
}

size_t clr_tuning_format(const clr_tuning *t, char *buf, size_t size) {
  size_t off = 0;
  for (size_t i = 0; i < N_KEYS; i++) {
    char num[32];
    const tuning_key *k = &keys[i];
    const char *v = value_text(k, get_value(t, k), num, sizeof num);
    int n = snprintf(off < size ? buf + off : NULL, off < size ? size - off : 0,
                     "%s=%s\n", k->name, v ? v : "?");
    if (n > 0)
      off += (size_t)n;
  }
  if (size && off >= size)
    buf[size - 1] = '\0';
  return off;
}

/* ------------------------------------------------------------ the text */

static int is_blank(char c) { return isspace((unsigned char)c) != 0; }

/* [*b, *e) without leading and trailing blanks. */
static void trim_span(const char **b, const char **e) {
  while (*b < *e && is_blank(**b))
    (*b)++;
  while (*e > *b && is_blank((*e)[-1]))
    (*e)--;
}

/* A span as a C string in buf: 0 when it does not fit or holds a NUL. */
static int span_string(const char *b, const char *e, char *buf, size_t size) {
  size_t n = (size_t)(e - b);
  if (n >= size || memchr(b, '\0', n))
    return 0;
  memcpy(buf, b, n);
  buf[n] = '\0';
  return 1;
}

void clr_tuning_parse(const char *text, size_t len, clr_tuning *t, char *match,
                      size_t match_size) {
  const char *p = text, *end = text + len;
  if (match && match_size)
    match[0] = '\0';
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    const char *next = nl ? nl + 1 : end;
    /* A comment runs to the end of its line, whatever it holds. */
    const char *hash = memchr(p, '#', (size_t)(le - p));
    if (hash)
      le = hash;
    const char *eq = memchr(p, '=', (size_t)(le - p));
    if (!eq) {
      p = next;
      continue;
    }
    const char *kb = p, *ke = eq, *vb = eq + 1, *ve = le;
    trim_span(&kb, &ke);
    trim_span(&vb, &ve);
    size_t klen = (size_t)(ke - kb);
    p = next;
    if (klen == 5 && memcmp(kb, "match", 5) == 0) {
      if (match && match_size && !span_string(vb, ve, match, match_size))
        match[0] = '\0'; /* too long or binary: matches nothing */
      continue;
    }
    if (!t)
      continue;
    for (size_t i = 0; i < N_KEYS; i++) {
      const tuning_key *k = &keys[i];
      char val[64];
      size_t v;
      if (strlen(k->name) != klen || memcmp(kb, k->name, klen) != 0)
        continue;
      /* Bad values are ignored key by key. */
      if (span_string(vb, ve, val, sizeof val) && parse_value(k, val, &v))
        set_value(t, k, v);
      break;
    }
  }
}

/* ------------------------------------------------------------ defaults */

/* What a context starts from before any file: by device type. */
void clr_default_tuning(const clr_context *ctx, clr_tuning *t) {
  memset(t, 0, sizeof *t);
  t->struct_size = (uint32_t)sizeof *t;
  t->reduce_wg = 256;
  t->scan_wg = 256;
  if (ctx->desc.is_gpu) {
    t->reduce_vec_bytes = 16;
    t->reduce_layout = CLR_LAYOUT_STRIDED;
    t->reduce_groups_per_cu = 8;
    t->scan_per_item = 1;
    t->scan_kernel = CLR_SCAN_DECOUPLED;
  } else {
    /* One SIMD register a load: wider vectors make PoCL call builtins out
     * of line. */
    t->reduce_vec_bytes = ctx->native_vec[CLR_FLOAT] * 4;
    t->reduce_layout = CLR_LAYOUT_CONTIGUOUS;
    t->reduce_groups_per_cu = 4;
    t->scan_per_item = 1024;
    /* The decoupled scan's CPU shape (decoupled.wg=1): the input read from
     * memory once (data/tuning/pocl-cpu.txt, docs/perf-log/cpu.md). */
    t->scan_kernel = CLR_SCAN_DECOUPLED;
  }
  t->decoupled_items = ctx->desc.is_gpu ? 32 : 8;
  t->decoupled_wg = ctx->desc.is_gpu ? 256 : 1;
  t->decoupled_run_items = 524288;
  t->decoupled_spin = 4096;
  t->decoupled_slots = 1;
  /* Two terms catch nearly every rounding error of typical data; a third
   * costs a CPU 30% and gains an H100 nothing, one spills constantly
   * (docs/EXACT.md).  Wide loads: 32 bytes on GPUs (an H100 reads float4
   * at 0.82 of its streaming read here, float8 at 0.96), a whole AVX-512
   * register on CPUs. */
  t->exact_terms = 2;
  t->exact_vec_bytes = ctx->desc.is_gpu ? 32 : 64;
  t->exact_int64_atomics = 1;
  /* minmax carries two keys and two indices per lane: an H100 runs a float
   * minmax at 0.148 ms with float8 loads, 0.169 ms with float4, where
   * argmax is faster with float4 (0.142 ms, 0.155 with float8;
   * docs/perf-log/transforms.md). */
  t->minmax_vec_bytes = ctx->desc.is_gpu ? 32 : 64;
  /* A memcpy thread moves ~10 GB/s, a PCIe 5 x16 link ~55: every core, up
   * to 16, copies pieces of one 12 MiB block at a time (fewer threads for
   * smaller arrays: pinned.c).  On a lent H100's 16-core host 16 x 12 MiB
   * staged 1e8 floats in 8.7-9.2 ms over ten runs, 12 x 12 MiB in 8.8-9.5,
   * 12 x 3 MiB in 13.7-15.3 (docs/perf-log/staging.md, "One block at a time").
   */
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  t->stage_threads = cpus >= 16 ? 16 : cpus >= 1 ? (unsigned)cpus : 1;
  t->stage_block_kib = 12288;
  /* A second launch costs a GPU several microseconds (most of the gap to
   * the streaming read at 1e7 on the H100); a CPU runs it at once. */
  t->reduce_single_launch = ctx->desc.is_gpu ? 1 : 0;
  /* A segmented reduction's tile (cl/reduce_segmented.cl): 16 units a
   * work-item of 4-byte accumulators, 8 of 8-byte ones, the first shape
   * measured (data/tuning/nvidia-h100.txt has the H100's). */
  t->seg_units = 16;
  t->seg_units_wide = 8;
  /* Below groups_per_cu x compute units work-groups, a coarse launch gives
   * each work-item at least 16 loads, so later passes of small partials
   * take one work-group. */
  t->reduce_min_vectors = 16;
  /* GPUs: a first pass over at least two work-groups a compute unit.  On
   * the H100 1e6 floats took 62 groups of 16 loads a work-item, half the
   * SMs idle: 264 groups summed them in 0.0092-0.0103 ms against
   * 0.0110-0.0111, and 2e6 in 0.0094-0.0100 against 0.0104-0.0109; from
   * 5e6 the grid is wider anyway (docs/perf-log/reductions.md, "The profiling
   * floor and the grid at mid sizes").  A CPU's few cores are full with
   * the grid as it is. */
  t->reduce_min_groups_cu = ctx->desc.is_gpu ? 2 : 0;
  t->scan_stream_bytes = 0; /* the device's cache size */
  /* Warp shuffles (where the driver takes PTX): one barrier a tree, not
   * eight; the decoupled scan of 1e8 floats on the H100 0.368 -> 0.360 ms
   * (docs/perf-log/scans.md). */
  t->warp_shuffles = 1;
}

/* ------------------------------------------------------------ the files */

/* How specifically a match= value names the device: the length of its
 * longest '|'-separated alternative found in the name (case-insensitive),
 * 0 when none is ("pthread|cpu-": PoCL 3's and PoCL 5's CPU devices). */
static size_t match_length(const char *device_name, const char *match) {
  size_t best = 0;
  char alt[256];
  while (*match) {
    size_t n = strcspn(match, "|");
    if (n > 0 && n < sizeof alt) {
      memcpy(alt, match, n);
      alt[n] = '\0';
      if (n > best && clr_contains_nocase(device_name, alt))
        best = n;
    }
    match += n;
    if (*match == '|')
      match++;
  }
  return best;
}

/* Apply one file to t (may be NULL); writes the match= value into match
 * (may be NULL).  Returns 0 when the file cannot be read or is refused:
 * anything but a regular file (a FIFO would block, a device never ends)
 * or a file larger than CLR_TUNING_MAX_FILE. */
static int read_file(clr_context *ctx, const char *path, clr_tuning *t,
                     char *match, size_t match_size) {
  const char *why = NULL;
  char *buf = NULL;
  size_t len = 0;
  struct stat st;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return 0; /* no such file: the usual case */
  if (fstat(fd, &st) != 0)
    why = "cannot be examined";
  else if (!S_ISREG(st.st_mode))
    why = "not a regular file";
  else if (st.st_size > CLR_TUNING_MAX_FILE)
    why = "larger than 64 KiB";
  else if (!(buf = malloc(CLR_TUNING_MAX_FILE + 1)))
    why = "out of host memory";
  /* Read to the end, but never more than the limit (the file may grow
   * while it is read). */
  while (!why && len <= CLR_TUNING_MAX_FILE) {
    ssize_t r = read(fd, buf + len, CLR_TUNING_MAX_FILE + 1 - len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      why = "read error";
    if (r <= 0)
      break;
    len += (size_t)r;
  }
  if (!why && len > CLR_TUNING_MAX_FILE)
    why = "larger than 64 KiB";
  close(fd);
  if (why) {
    clr_log(ctx, "tuning: ignoring %s: %s", path, why);
    free(buf);
    return 0;
  }
  clr_tuning_parse(buf, len, t, match, match_size);
  free(buf);
  return 1;
}

/* $CLREDUCE_TUNING_DIR, else the installed files (install_paths.c). */
static const char *shipped_dir(char *buf, size_t size) {
  const char *env = getenv("CLREDUCE_TUNING_DIR");
  if (env && *env)
    return env;
  clr_installed_dir("tuning", ".", buf, size);
  return buf;
}

#if CLR_EMBEDDED_KERNELS
/* The shipped files built into the library (-Dembed_kernels), chosen as
 * the installed ones are: the longest match wins, the first name on a
 * tie (the table is sorted by name, as the paths compare). */
static void load_embedded(clr_context *ctx) {
  const clr_embedded_file *best = NULL;
  size_t best_len = 0;
  char match[256];
  for (const clr_embedded_file *f = clr_embedded_tuning; f->name; f++) {
    clr_tuning_parse(f->text, strlen(f->text), NULL, match, sizeof match);
    size_t ml = match_length(ctx->desc.device_name, match);
    if (ml > best_len) {
      best_len = ml;
      best = f;
    }
  }
  if (!best)
    return;
  clr_tuning_parse(best->text, strlen(best->text), &ctx->tuning, NULL, 0);
  snprintf(ctx->tuning_origin, sizeof ctx->tuning_origin, "%s/%s",
           CLR_EMBEDDED_KERNEL_DIR, best->name);
}
#endif

/* $CLREDUCE_TUNING_DIR, else the files built into the library, else the
 * installed ones. */
static void load_shipped(clr_context *ctx) {
  char dirbuf[4096];
#if CLR_EMBEDDED_KERNELS
  const char *env = getenv("CLREDUCE_TUNING_DIR");
  if (!env || !*env) {
    load_embedded(ctx);
    return;
  }
#endif
  const char *dir = shipped_dir(dirbuf, sizeof dirbuf);
  DIR *d = opendir(dir);
  char best[4096] = "", path[4096], match[256];
  size_t best_len = 0;
  struct dirent *e;
  if (!d)
    return;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".txt") != 0)
      continue;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
            sizeof path ||
        !read_file(ctx, path, NULL, match, sizeof match))
      continue;
    size_t ml = match_length(ctx->desc.device_name, match);
    if (ml && (ml > best_len || (ml == best_len && strcmp(path, best) < 0))) {
      best_len = ml;
      snprintf(best, sizeof best, "%s", path);
    }
  }
  closedir(d);
  if (best_len && read_file(ctx, best, &ctx->tuning, NULL, 0))
    snprintf(ctx->tuning_origin, sizeof ctx->tuning_origin, "%s", best);
}

int clr_user_tuning_path(const clr_context *ctx, char *path, size_t size) {
  char name[128];
  size_t i;
  if (!ctx->cache_dir)
    return 0;
  for (i = 0; ctx->desc.device_name[i] && i + 1 < sizeof name; i++) {
    unsigned char c = (unsigned char)ctx->desc.device_name[i];
    name[i] = isalnum(c) ? (char)c : '_';
  }
  name[i] = '\0';
  snprintf(path, size, "%s/tuning/%s.txt", ctx->cache_dir, name);
  return 1;
}

void clr_load_tuning(clr_context *ctx) {
  char path[4096];
  clr_default_tuning(ctx, &ctx->tuning);
  snprintf(ctx->tuning_origin, sizeof ctx->tuning_origin,
           "built-in defaults for a %s", ctx->desc.is_gpu ? "GPU" : "CPU");
  load_shipped(ctx);
  if (clr_user_tuning_path(ctx, path, sizeof path) &&
      read_file(ctx, path, &ctx->tuning, NULL, 0))
    snprintf(ctx->tuning_origin, sizeof ctx->tuning_origin, "%s", path);
}

/* clr_tuning's fields after struct_size (include/clreduce.h, "sized
 * structs"). */
static const clr_field_span tuning_fields[] = {
    CLR_FIELD_SPAN(clr_tuning, reduce_wg),
    CLR_FIELD_SPAN(clr_tuning, reduce_vec_bytes),
    CLR_FIELD_SPAN(clr_tuning, reduce_layout),
    CLR_FIELD_SPAN(clr_tuning, reduce_groups_per_cu),
    CLR_FIELD_SPAN(clr_tuning, scan_wg),
    CLR_FIELD_SPAN(clr_tuning, scan_per_item),
    CLR_FIELD_SPAN(clr_tuning, scan_kernel),
    CLR_FIELD_SPAN(clr_tuning, decoupled_items),
    CLR_FIELD_SPAN(clr_tuning, decoupled_wg),
    CLR_FIELD_SPAN(clr_tuning, decoupled_run_items),
    CLR_FIELD_SPAN(clr_tuning, decoupled_spin),
    CLR_FIELD_SPAN(clr_tuning, exact_terms),
    CLR_FIELD_SPAN(clr_tuning, exact_vec_bytes),
    CLR_FIELD_SPAN(clr_tuning, exact_int64_atomics),
    CLR_FIELD_SPAN(clr_tuning, minmax_vec_bytes),
    CLR_FIELD_SPAN(clr_tuning, reduce_single_launch),
    CLR_FIELD_SPAN(clr_tuning, stage_threads),
    CLR_FIELD_SPAN(clr_tuning, stage_block_kib),
    CLR_FIELD_SPAN(clr_tuning, seg_units),
    CLR_FIELD_SPAN(clr_tuning, seg_units_wide),
    CLR_FIELD_SPAN(clr_tuning, reduce_min_vectors),
    CLR_FIELD_SPAN(clr_tuning, scan_stream_bytes),
    CLR_FIELD_SPAN(clr_tuning, warp_shuffles),
    CLR_FIELD_SPAN(clr_tuning, decoupled_slots),
    CLR_FIELD_SPAN(clr_tuning, reduce_min_groups_cu),
};
_Static_assert(CLR_IS_LAST_FIELD(clr_tuning, reduce_min_groups_cu),
               "reduce_min_groups_cu is clr_tuning's last field: "
               "tuning_fields lists them all");
static const clr_struct_layout tuning_layout = {
    "clr_tuning", "use CLR_TUNING_INIT", sizeof(clr_tuning), tuning_fields,
    sizeof tuning_fields / sizeof tuning_fields[0]};

CLR_API clr_status clr_get_tuning(const clr_context *ctx, clr_tuning *out) {
  char why[8];
  if (!ctx || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st =
      clr_struct_size_check(&tuning_layout, out->struct_size, why, sizeof why);
  if (st == CLR_OK)
    clr_struct_fields_copy(out, &ctx->tuning, out->struct_size);
  return st;
}

CLR_API clr_status clr_set_tuning(clr_context *ctx, const clr_tuning *t) {
  char why[CLR_DETAIL_SIZE - 16];
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  if (!t)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "tuning must not be NULL");
  clr_status st =
      clr_struct_size_check(&tuning_layout, t->struct_size, why, sizeof why);
  if (st != CLR_OK)
    return clr_fail(ctx, st, "%s", why);
  /* the fields t has over the context's */
  clr_tuning full = ctx->tuning;
  clr_struct_fields_copy(&full, t, t->struct_size);
  if (!clr_tuning_check(&full, why, sizeof why))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s", why);
  ctx->tuning = full;
  snprintf(ctx->tuning_origin, sizeof ctx->tuning_origin,
           "set by the caller (clr_set_tuning)");
  return CLR_OK;
}

CLR_API const char *clr_tuning_origin(const clr_context *ctx) {
  return ctx ? ctx->tuning_origin : "";
}

/* mkdir -p of the directory part of path. */
static int make_parent_dirs(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  return 0;
}

/* A comment line's text: control characters (a newline would end the
 * comment and start a setting) become blanks. */
static void comment_text(const char *s, char *out, size_t size) {
  size_t i = 0;
  for (; s[i] && i + 1 < size; i++)
    out[i] = iscntrl((unsigned char)s[i]) ? ' ' : s[i];
  if (size)
    out[i] = '\0';
}

/* The file is written to a unique temporary beside it (mkstemp), flushed
 * to disk and renamed over path, so a reader sees the old file or the new
 * one, never a part. */
clr_status clr_save_tuning(clr_context *ctx, const char *path) {
  char tmp[4200], dev[256], drv[256], text[2048];
  const clr_tuning *t = &ctx->tuning;
  if (!clr_tuning_check(t, text, sizeof text))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s", text);
  if (make_parent_dirs(path) != 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "cannot create %s: %s", path,
                    strerror(errno));
  comment_text(ctx->desc.device_name, dev, sizeof dev);
  comment_text(ctx->desc.driver_version, drv, sizeof drv);
  int n = snprintf(text, sizeof text,
                   "# clreduce tuning, written by clr_autotune\n"
                   "# device: %s\n# driver: %s\n",
                   dev, drv);
  if (n < 0 || (size_t)n >= sizeof text ||
      clr_tuning_format(t, text + n, sizeof text - (size_t)n) >=
          sizeof text - (size_t)n)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "tuning text too long");
  n = snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
  if (n < 0 || (size_t)n >= sizeof tmp)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "path too long: %s", path);
  int fd = mkstemp(tmp);
  if (fd < 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "cannot write %s: %s", tmp,
                    strerror(errno));
  size_t len = strlen(text), done = 0;
  int bad = 0;
  while (done < len && !bad) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      bad = 1;
    else
      done += (size_t)w;
  }
  bad |= fsync(fd) != 0;
  bad |= close(fd) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "cannot write %s", path);
  }
  return CLR_OK;
}
