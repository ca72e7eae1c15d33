/* The on-disk program binary cache and the per-device tuning files.
 *
 * Binary cache: a fresh cache directory fills with entries (and no
 * temporary files); a second context reuses them untouched; truncated,
 * overwritten and swapped (stale) entries fall back to a source build and
 * are rewritten valid; so do entries damaged at every position (a byte
 * flipped in the header, key or payload, a truncated payload with its
 * length made to agree, an empty file, huge lengths), checked against the
 * entry format independently of the library; so do crafted entries, whose
 * header and checksum are right but whose payload lies (cut, zeroed,
 * random, another kernel's, and on PoCL each length field of its container
 * at an extreme, a file name leaving its directory, files zeroed), each
 * run in a child process that must not crash; a crash while an entry is
 * loaded (simulated) is not repeated by the next run, which drops the
 * entry; a kernel directory whose source differs gets new entries while an
 * identical copy reuses the old ones; an unusable cache directory never
 * makes a call fail; PoCL without a writable cache directory of its own
 * makes context creation fail saying so.
 *
 * Tuning: of two shipped files in $CLREDUCE_TUNING_DIR whose match= lines
 * are substrings of the device name the longer wins (a non-matching longer
 * one never does), and only the winner applies; the user's file in
 * <cache dir>/tuning/ overrides it; bad values are ignored key by key;
 * clr_set_tuning rejects bad tunings and leaves the old one, accepted ones
 * change the launches; a FIFO, a directory or /dev/zero where a tuning file
 * (or a cache entry) is read is refused without blocking (checked in a
 * child process under alarm()), an oversized tuning file is refused whole;
 * tiny legal scan tunings (scan.wg=1, scan.per_item=1) still scan right
 * with every tiled scan kernel; clr_autotune writes the user's file, which a
 * new context then reports as its origin.
 *
 * Every case runs in its own fresh directory under --work-dir, removed
 * when the whole program passes.  Results are checked against the CPU
 * reference of src/check.
 *
 *   test_cache_tuning --work-dir=DIR [--kernel-dir=DIR] [-v] */
#include "test_files.h"
#include "test_plain.h"
#include "test_util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *kernel_src; /* the source tree's cl/ */
static const char *work_dir;   /* every case's directory goes under here */
static char *no_tuning_dir;    /* an empty $CLREDUCE_TUNING_DIR */
static char device_name[128];

#define N_REDUCE 100003
#define N_SCAN 70001

static float *rdata;   /* float sum input */
static int32_t *sdata; /* int sum scan input */
static int32_t *sref;  /* its inclusive scan, wrapping */

/* ------------------------------------------------------------ files */

static char *xstrdup(const char *s) {
  char *p = tu_xmalloc(strlen(s) + 1);
  strcpy(p, s);
  return p;
}

/* mkdir -p: dir, after its missing parents. */
static void mkdir_p(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
    return;
  const char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    char *parent = xstrdup(dir);
    parent[slash - dir] = '\0';
    mkdir_p(parent);
    free(parent);
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    tu_die("mkdir %s: %s", dir, strerror(errno));
}

/* A fresh directory <work dir>/<name>-XXXXXX (malloc'ed). */
static char *new_case_dir(const char *name) {
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/%s-XXXXXX", work_dir, name);
  if (!mkdtemp(tmpl))
    tu_die("mkdtemp %s: %s", tmpl, strerror(errno));
  return xstrdup(tmpl);
}

static char *join(const char *dir, const char *name) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return xstrdup(p);
}

/* The end of a case: its directory removed, and the paths of the
 * directory and the cache inside it (NULL: none) freed. */
static void end_case(char *dir, char *cache) {
  free(cache);
  tf_remove_tree(dir);
  free(dir);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0)
    tu_die("cannot write %s: %s", path, strerror(errno));
}

/* Writes text as the file name of the directory dir; returns its path
 * (malloc'ed). */
static char *write_file_in(const char *dir, const char *name,
                           const char *text) {
  char *path = join(dir, name);
  write_text(path, text);
  return path;
}

/* A copy of the kernel directory; when name is set, that file gets text
 * appended. */
static char *copy_kernels(const char *into, const char *name,
                          const char *append) {
  mkdir_p(into);
  tf_copy_dir(kernel_src, into, name, append);
  return xstrdup(into);
}

/* ------------------------------------------------------------ cache dir */

#define MAX_ENTRIES 64
#define MAGIC "CLRBIN2\n"

typedef struct entry {
  char name[256];
  off_t size;
  ino_t ino;
  struct timespec mtime;
} entry;

typedef struct listing {
  entry e[MAX_ENTRIES];
  size_t n;        /* *.clbin files */
  size_t others;   /* anything else but the tuning/ directory */
  char other[256]; /* the name of one of them */
} listing;

/* The file name of the cache directory cache, whole (malloc'ed; NULL when
 * unreadable), its size in *len. */
static unsigned char *read_entry(const char *cache, const char *name,
                                 size_t *len) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", cache, name);
  *len = 0;
  return tu_read_file(p, len);
}

static void list_cache(const char *dir, listing *l) {
  memset(l, 0, sizeof *l);
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    const char *nm = e->d_name;
    size_t len = strlen(nm);
    struct stat st;
    char p[4096];
    if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
      continue;
    snprintf(p, sizeof p, "%s/%s", dir, nm);
    if (lstat(p, &st) != 0)
      continue;
    if (strcmp(nm, "tuning") == 0 && S_ISDIR(st.st_mode))
      continue;
    if (S_ISREG(st.st_mode) && len > 6 && strcmp(nm + len - 6, ".clbin") == 0 &&
        l->n < MAX_ENTRIES) {
      snprintf(l->e[l->n].name, sizeof l->e[l->n].name, "%s", nm);
      l->e[l->n].size = st.st_size;
      l->e[l->n].ino = st.st_ino;
      l->e[l->n].mtime = st.st_mtim;
      l->n++;
    } else {
      l->others++;
      snprintf(l->other, sizeof l->other, "%s", nm);
    }
  }
  closedir(d);
}

static const entry *find_entry(const listing *l, const char *name) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->e[i].name, name) == 0)
      return &l->e[i];
  return NULL;
}

/* Entries of b that are not in a. */
static size_t count_new(const listing *a, const listing *b) {
  size_t k = 0;
  for (size_t i = 0; i < b->n; i++)
    k += find_entry(a, b->e[i].name) == NULL;
  return k;
}

/* 1 when entry b is another file than a, or a rewritten one (an entry
 * dropped before it is rebuilt may get the same inode again). */
static int rewritten(const entry *a, const entry *b) {
  return a->ino != b->ino || a->mtime.tv_sec != b->mtime.tv_sec ||
         a->mtime.tv_nsec != b->mtime.tv_nsec;
}

/* Same names, sizes and inodes: nothing was rewritten. */
static int same_listing(const listing *a, const listing *b) {
  if (a->n != b->n || a->others != b->others)
    return 0;
  for (size_t i = 0; i < a->n; i++) {
    const entry *x = find_entry(b, a->e[i].name);
    if (!x || x->size != a->e[i].size || rewritten(x, &a->e[i]))
      return 0;
  }
  return 1;
}

/* ------------------------------------------------------------ contexts */

static clr_context *context_at(const char *kernel_dir, const char *cache) {
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_dir,
                            .cache_dir = cache};
  return tu_context_from(&cfg);
}

/* Float sum of rdata, checked against the reference.  The value and the
 * timing go to *v and *tm (may be NULL).  Returns 1 when it ran and
 * checked out. */
static int reduce_ok(clr_context *ctx, const clr_options *opt,
                     const char *label, clr_value *v, tu_timing *tm) {
  tu_case c;
  clr_value got;
  clr_timing t = CLR_TIMING_INIT;
  memset(&c, 0, sizeof c);
  memset(&got, 0, sizeof got);
  c.label = label;
  if (opt)
    c.opt = *opt;
  else
    clr_options_init(&c.opt);
  c.op = CLR_SUM;
  c.type = CLR_FLOAT;
  c.data = rdata;
  c.n = N_REDUCE;
  clr_status s =
      clr_reduce_host(ctx, &c.opt, CLR_SUM, CLR_FLOAT, rdata, N_REDUCE, &got);
  if (!tu_check(s == CLR_OK, "%s: float sum: %s (%s)", label,
                clr_status_name(s), clr_context_error(ctx)))
    return 0;
  if (!TU_CHECK(clr_last_timing(ctx, &t) == CLR_OK, "%s: clr_last_timing",
                label))
    return 0;
  if (v)
    *v = got;
  if (tm && !TU_CHECK(tu_get_timing(ctx, tm) == CLR_OK,
                      "%s: clr_last_timing_pass", label))
    return 0;
  return tu_verify(&c, &got, &t);
}

/* Inclusive int sum scan of sdata into out, checked exactly.  opt may be
 * NULL (the tuned scan). */
static int scan_ok(clr_context *ctx, const clr_options *opt, const char *label,
                   int32_t *out, tu_timing *tm) {
  memset(out, 0x5a, N_SCAN * sizeof *out);
  clr_status s = clr_scan_host(ctx, opt, CLR_SUM, CLR_INT, sdata, out, N_SCAN);
  if (!tu_check(s == CLR_OK, "%s: int sum scan: %s (%s)", label,
                clr_status_name(s), clr_context_error(ctx)))
    return 0;
  if (tm &&
      !TU_CHECK(tu_get_timing(ctx, tm) == CLR_OK, "%s: clr_last_timing", label))
    return 0;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < N_SCAN; i++)
    if (out[i] != sref[i] && bad++ == 0)
      first = i;
  return TU_CHECK(bad == 0,
                  "%s: int sum scan: %zu wrong elements, first at %zu "
                  "(got %" PRId32 ", want %" PRId32 ")",
                  label, bad, first, bad ? out[first] : 0,
                  bad ? sref[first] : 0);
}

/* A reduction and a scan in a new context on (kernel_dir, cache). */
static void run_both(const char *kernel_dir, const char *cache,
                     const char *label, clr_value *v, int32_t *scan_out) {
  char what[512];
  clr_context *c = context_at(kernel_dir, cache);
  snprintf(what, sizeof what, "%s (cache %s)", label, cache);
  reduce_ok(c, NULL, what, v, NULL);
  scan_ok(c, NULL, what, scan_out, NULL);
  /* An int sum too: its first pass (int -> long) and its later passes
   * (long) are two more programs, so the cache holds an entry for each
   * kind of damage below (a float sum's passes share one program). */
  clr_value iv;
  TU_CHECK(clr_reduce_host(c, NULL, CLR_SUM, CLR_INT, rdata, N_REDUCE, &iv) ==
               CLR_OK,
           "%s: int sum (%s)", what, clr_context_error(c));
  clr_context_release(c);
}

/* ------------------------------------------------------------ binary cache */

/* Fill, reuse, damage, rewrite. */
static void test_cache_fill_and_damage(void) {
  char *dir = new_case_dir("cache-damage");
  char *cache = join(dir, "nested/cache"); /* does not exist yet */
  int32_t *out1 = tu_xmalloc(N_SCAN * sizeof *out1);
  int32_t *out2 = tu_xmalloc(N_SCAN * sizeof *out2);
  clr_value v1, v2;
  listing l1, l2, l3, l4;
  memset(&v1, 0, sizeof v1);
  memset(&v2, 0, sizeof v2);

  /* 1. An empty cache fills with entries, no temporary files. */
  run_both(kernel_src, cache, "empty cache", &v1, out1);
  list_cache(cache, &l1);
  TU_CHECK(l1.n >= 2, "empty cache: %zu entries after a reduction and a scan",
           l1.n);
  TU_CHECK(l1.others == 0,
           "empty cache: no temporary or foreign files left (%zu, e.g. %s)",
           l1.others, l1.other);
  for (size_t i = 0; i < l1.n; i++) {
    size_t len;
    unsigned char *b = read_entry(cache, l1.e[i].name, &len);
    TU_CHECK(b && len > 24 && memcmp(b, MAGIC, 8) == 0,
             "entry %s starts with the cache magic (%zu bytes)", l1.e[i].name,
             len);
    free(b);
  }

  /* 2. A second context: the same results, the entries used untouched. */
  run_both(kernel_src, cache, "warm cache", &v2, out2);
  TU_CHECK(tu_same(&v1, &v2), "warm cache: float sum identical bit for bit");
  TU_CHECK(memcmp(out1, out2, N_SCAN * sizeof *out1) == 0,
           "warm cache: scan identical");
  list_cache(cache, &l2);
  TU_CHECK(same_listing(&l1, &l2),
           "warm cache: entries reused, none added or rewritten (%zu -> %zu)",
           l1.n, l2.n);

  /* 3. Damage every entry four ways: truncated to 5 bytes, truncated to
   * half, overwritten with garbage, replaced by another entry's content
   * (a valid file with the wrong key: stale). */
  static const char *kinds[] = {"truncated to 5 bytes", "truncated to half",
                                "garbage", "another entry's content"};
  unsigned char *planted[MAX_ENTRIES], *orig[MAX_ENTRIES];
  size_t planted_len[MAX_ENTRIES], orig_len[MAX_ENTRIES];
  for (size_t i = 0; i < l2.n; i++) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", cache, l2.e[i].name);
    orig[i] = tu_read_file(p, &orig_len[i]);
    if (!orig[i])
      tu_die("cannot read %s", p);
  }
  for (size_t i = 0; i < l2.n; i++) {
    char p[4096];
    size_t len = 0;
    snprintf(p, sizeof p, "%s/%s", cache, l2.e[i].name);
    unsigned char *b = NULL;
    switch (i % 4) {
    case 0:
    case 1: {
      b = tu_read_file(p, &len);
      if (!b)
        tu_die("cannot read %s", p);
      len = i % 4 == 0 ? 5 : len / 2;
      if (truncate(p, (off_t)len) != 0)
        tu_die("truncate %s: %s", p, strerror(errno));
      break;
    }
    case 2: {
      len = (size_t)l2.e[i].size;
      b = tu_xmalloc(len);
      tu_rng r = {0xdeadbeef + i};
      for (size_t j = 0; j < len; j++)
        b[j] = (unsigned char)tu_next(&r);
      FILE *f = fopen(p, "r+b");
      if (!f || fwrite(b, 1, len, f) != len || fclose(f) != 0)
        tu_die("cannot overwrite %s", p);
      break;
    }
    default: {
      size_t j = (i + 1) % l2.n;
      len = orig_len[j];
      b = tu_xmalloc(len);
      memcpy(b, orig[j], len);
      FILE *f = fopen(p, "wb");
      if (!f || fwrite(b, 1, len, f) != len || fclose(f) != 0)
        tu_die("cannot overwrite %s", p);
      break;
    }
    }
    planted[i] = b;
    planted_len[i] = len;
  }
  for (size_t i = 0; i < l2.n; i++)
    free(orig[i]);
  TU_CHECK(l2.n >= 4, "all four kinds of damage were planted (%zu entries)",
           l2.n);

  /* 4. A new context: correct results from source builds. */
  memset(&v2, 0, sizeof v2);
  run_both(kernel_src, cache, "damaged cache", &v2, out2);
  TU_CHECK(tu_same(&v1, &v2), "damaged cache: float sum identical bit for bit");
  TU_CHECK(memcmp(out1, out2, N_SCAN * sizeof *out1) == 0,
           "damaged cache: scan identical");

  /* 5. Every damaged entry was rewritten valid. */
  list_cache(cache, &l3);
  TU_CHECK(l3.n == l2.n && count_new(&l2, &l3) == 0 && l3.others == 0,
           "damaged cache: the same %zu entries, no temporary files (%zu, "
           "%zu others)",
           l2.n, l3.n, l3.others);
  for (size_t i = 0; i < l2.n; i++) {
    size_t len;
    unsigned char *b = read_entry(cache, l2.e[i].name, &len);
    const entry *now = find_entry(&l3, l2.e[i].name);
    TU_CHECK(b && len > 24 && memcmp(b, MAGIC, 8) == 0 &&
                 (len != planted_len[i] || memcmp(b, planted[i], len) != 0) &&
                 now && now->ino != l2.e[i].ino,
             "entry %s (%s, %zu bytes planted) rewritten valid: %zu bytes",
             l2.e[i].name, kinds[i % 4], planted_len[i], len);
    free(b);
    free(planted[i]);
  }

  /* 6. The rewritten entries are good: a fourth context uses them as they
   * are. */
  memset(&v2, 0, sizeof v2);
  run_both(kernel_src, cache, "rewritten cache", &v2, out2);
  TU_CHECK(tu_same(&v1, &v2), "rewritten cache: float sum identical");
  list_cache(cache, &l4);
  TU_CHECK(same_listing(&l3, &l4),
           "rewritten cache: entries reused untouched (%zu -> %zu)", l3.n,
           l4.n);

  free(out1);
  free(out2);
  end_case(dir, cache);
}

/* The key holds the source, not the kernel directory's path. */
static void test_cache_source_key(void) {
  char *dir = new_case_dir("cache-source");
  char *cache = join(dir, "cache");
  char *kd = join(dir, "kernels-same");
  char *same = copy_kernels(kd, NULL, NULL);
  free(kd);
  kd = join(dir, "kernels-changed");
  char *changed = copy_kernels(kd, "reduce_coarse.cl",
                               "\n// clreduce test: a changed source\n");
  free(kd);
  clr_value v0, v;
  listing l0, l1, l2;
  clr_options so;
  clr_options_init(&so);
  so.kernel = CLR_SCAN_BRENT_KUNG;
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);

  clr_context *c = context_at(kernel_src, cache);
  reduce_ok(c, NULL, "source tree", &v0, NULL);
  clr_context_release(c);
  list_cache(cache, &l0);
  TU_CHECK(l0.n >= 1, "source tree: %zu entries", l0.n);

  /* An identical copy elsewhere: the same keys, so nothing new. */
  c = context_at(same, cache);
  reduce_ok(c, NULL, "identical kernel copy", &v, NULL);
  TU_CHECK(tu_same(&v0, &v), "identical kernel copy: same float sum");
  clr_context_release(c);
  list_cache(cache, &l1);
  TU_CHECK(same_listing(&l0, &l1),
           "identical kernel copy: the entries are reused (%zu -> %zu)", l0.n,
           l1.n);

  /* reduce_coarse.cl with a comment appended: new entries, old kept. */
  c = context_at(changed, cache);
  reduce_ok(c, NULL, "changed reduce_coarse.cl", &v, NULL);
  TU_CHECK(tu_same(&v0, &v), "changed reduce_coarse.cl: same float sum");
  list_cache(cache, &l2);
  TU_CHECK(count_new(&l1, &l2) >= 1 && count_new(&l2, &l1) == 0,
           "changed reduce_coarse.cl: %zu new entries (%zu -> %zu), none "
           "removed",
           count_new(&l1, &l2), l1.n, l2.n);
  size_t kept = 0;
  for (size_t i = 0; i < l1.n; i++) {
    const entry *e = find_entry(&l2, l1.e[i].name);
    kept += e && e->ino == l1.e[i].ino && e->size == l1.e[i].size;
  }
  TU_CHECK(kept == l1.n,
           "changed reduce_coarse.cl: %zu of %zu old entries "
           "left as they were",
           kept, l1.n);
  /* The scan reads reduce_coarse.cl too (tile totals): it works from the
   * changed copy, in the same context. */
  scan_ok(c, &so, "changed reduce_coarse.cl, brent-kung scan", out, NULL);
  clr_context_release(c);
  TU_CHECK(l2.others == 0, "no temporary files (%s)", l2.other);

  free(out);
  free(same);
  free(changed);
  end_case(dir, cache);
}

/* A cache directory that cannot be created or written: calls still work. */
static void test_cache_unwritable(void) {
  char *dir = new_case_dir("cache-unwritable");
  char *file = write_file_in(dir, "a-regular-file", "not a directory\n");
  char *under = join(file, "cache");
  char *ro = join(dir, "read-only");
  mkdir_p(ro);
  const char *caches[3] = {under, file, ro};
  const char *what[3] = {"a path under a regular file", "a regular file",
                         "a read-only directory"};
  int n_cases = 2;
  if (geteuid() != 0 && chmod(ro, 0555) == 0)
    n_cases = 3; /* root writes anywhere */
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
  for (int i = 0; i < n_cases; i++) {
    char label[256];
    snprintf(label, sizeof label, "cache dir is %s", what[i]);
    clr_context *c = context_at(kernel_src, caches[i]);
    clr_tuning t = CLR_TUNING_INIT;
    TU_CHECK(clr_get_tuning(c, &t) == CLR_OK &&
                 strncmp(clr_tuning_origin(c), "built-in", 8) == 0,
             "%s: built-in tuning (%s)", label, clr_tuning_origin(c));
    reduce_ok(c, NULL, label, NULL, NULL);
    scan_ok(c, NULL, label, out, NULL);
    /* Twice: the second call finds the programs in the context. */
    reduce_ok(c, NULL, label, NULL, NULL);
    clr_context_release(c);
  }
  struct stat st;
  TU_CHECK(stat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 16,
           "the regular file is left as it was");
  listing l;
  list_cache(ro, &l);
  TU_CHECK(l.n == 0 && l.others == 0, "the read-only directory stays empty");
  chmod(ro, 0755);
  free(out);
  free(file);
  free(under);
  free(ro);
  end_case(dir, NULL);
}

/* ------------------------------------------------------------ entries */

/* The entry format, as docs and src/lib/binary_cache.c describe it: magic
 * "CLRBIN2\n", key length and payload length (64-bit little-endian), an
 * FNV-1a 64 checksum over every other byte, then key and payload.  Checked
 * here independently of the library. */
static uint64_t get_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static void put_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t fnv1a64(const unsigned char *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* 1 when b holds one whole valid entry; its key and payload lengths. */
static int entry_valid(const unsigned char *b, size_t len, size_t *key_len,
                       size_t *bin_len) {
  if (!b || len < 32 || memcmp(b, MAGIC, 8) != 0)
    return 0;
  uint64_t kl = get_le64(b + 8), bl = get_le64(b + 16);
  if (kl == 0 || bl == 0 || kl > len || bl > len || 32 + kl + bl != len)
    return 0;
  uint64_t h = fnv1a64(b, 24, 0xcbf29ce484222325ULL);
  h = fnv1a64(b + 32, len - 32, h);
  if (h != get_le64(b + 24))
    return 0;
  if (key_len)
    *key_len = (size_t)kl;
  if (bin_len)
    *bin_len = (size_t)bl;
  return 1;
}

static void write_bytes(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(b, 1, n, f) != n) || fclose(f) != 0)
    tu_die("cannot write %s: %s", path, strerror(errno));
}

static void count_damage_log(void *user, const char *msg) {
  if (strstr(msg, "binary cache: ignoring damaged entry"))
    ++*(size_t *)user;
}

/* One context with a log callback counting damaged entries. */
static clr_context *context_logged(const char *cache, size_t *damaged) {
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_src,
                            .cache_dir = cache,
                            .log = count_damage_log,
                            .log_user = damaged};
  return tu_context_from(&cfg);
}

/* Every position of an entry damaged in turn (one byte flipped in the
 * magic, each length field, the checksum, the key, the middle and the last
 * byte of the payload; truncated with its length field made to agree; an
 * empty file; huge length fields): the damage is detected before the
 * driver sees the binary, the result is right, the damage logged, and the
 * entry rewritten valid. */
static void test_cache_entry_damage(void) {
  enum {
    D_MAGIC,
    D_KEY_LEN,
    D_BIN_LEN,
    D_CHECKSUM,
    D_KEY,
    D_PAYLOAD_MID,
    D_LAST,
    D_TRUNC_CONSISTENT,
    D_EMPTY,
    D_HUGE_BIN_LEN,
    D_HUGE_KEY_LEN,
    D_COUNT
  };
  static const char *kinds[D_COUNT] = {
      "a byte of the magic flipped",
      "a byte of the key length flipped",
      "a byte of the payload length flipped",
      "a byte of the checksum flipped",
      "a byte of the key text flipped",
      "a byte in the middle of the payload flipped",
      "the last byte flipped",
      "payload truncated to half, length field rewritten to match",
      "a zero-length file",
      "a payload length of 2^62",
      "a key length of 2^63 + 40"};
  char *dir = new_case_dir("cache-entry-damage");
  char *cache = join(dir, "cache");
  clr_value v0, v;
  listing l0, l1, l2;
  size_t damaged = 0;
  memset(&v0, 0, sizeof v0);

  clr_context *c = context_logged(cache, &damaged);
  reduce_ok(c, NULL, "entry damage: first run", &v0, NULL);
  clr_context_release(c);
  list_cache(cache, &l0);
  if (!TU_CHECK(l0.n >= 1 && l0.others == 0,
                "entry damage: %zu entries after a reduction (%zu others)",
                l0.n, l0.others))
    goto out;
  for (size_t i = 0; i < l0.n; i++) {
    size_t len;
    unsigned char *b = read_entry(cache, l0.e[i].name, &len);
    TU_CHECK(entry_valid(b, len, NULL, NULL),
             "entry %s is valid: magic, lengths, checksum (%zu bytes)",
             l0.e[i].name, len);
    free(b);
  }

  for (int kind = 0; kind < D_COUNT; kind++) {
    char label[256];
    snprintf(label, sizeof label, "entry damage: %s", kinds[kind]);
    /* Damage every entry the same way. */
    for (size_t i = 0; i < l0.n; i++) {
      char p[4096];
      size_t len = 0, key_len = 0, bin_len = 0;
      snprintf(p, sizeof p, "%s/%s", cache, l0.e[i].name);
      unsigned char *b = tu_read_file(p, &len);
      if (!entry_valid(b, len, &key_len, &bin_len))
        tu_die("%s: entry %s is not valid before the damage", label, p);
      size_t payload = 32 + key_len;
      switch (kind) {
      case D_MAGIC:
        b[3] ^= 0x01;
        break;
      case D_KEY_LEN:
        b[8] ^= 0x01;
        break;
      case D_BIN_LEN:
        b[16] ^= 0x10;
        break;
      case D_CHECKSUM:
        b[27] ^= 0x80;
        break;
      case D_KEY:
        b[32 + key_len / 2] ^= 0x20;
        break;
      case D_PAYLOAD_MID:
        b[payload + bin_len / 2] ^= 0xff;
        break;
      case D_LAST:
        b[len - 1] ^= 0x01;
        break;
      case D_TRUNC_CONSISTENT:
        put_le64(b + 16, bin_len / 2);
        len = payload + bin_len / 2;
        break;
      case D_EMPTY:
        len = 0;
        break;
      case D_HUGE_BIN_LEN:
        put_le64(b + 16, (uint64_t)1 << 62);
        break;
      default:
        put_le64(b + 8, ((uint64_t)1 << 63) + 40);
        break;
      }
      write_bytes(p, b, len);
      free(b);
    }
    list_cache(cache, &l1);

    /* A new context: the right answer from a source build, the damage
     * logged, no crash. */
    damaged = 0;
    memset(&v, 0, sizeof v);
    c = context_logged(cache, &damaged);
    reduce_ok(c, NULL, label, &v, NULL);
    clr_context_release(c);
    TU_CHECK(tu_same(&v0, &v), "%s: float sum identical bit for bit", label);
    TU_CHECK(damaged >= l0.n,
             "%s: every damaged entry logged as ignored (%zu of %zu)", label,
             damaged, l0.n);

    /* Every entry rewritten (a new file) and valid again. */
    list_cache(cache, &l2);
    TU_CHECK(l2.n == l0.n && count_new(&l0, &l2) == 0 && l2.others == 0,
             "%s: the same %zu entries, no temporary files (%zu, %zu others)",
             label, l0.n, l2.n, l2.others);
    for (size_t i = 0; i < l1.n; i++) {
      size_t len;
      unsigned char *b = read_entry(cache, l1.e[i].name, &len);
      const entry *now = find_entry(&l2, l1.e[i].name);
      TU_CHECK(
          entry_valid(b, len, NULL, NULL) && now && now->ino != l1.e[i].ino,
          "%s: entry %s rewritten valid (%zu bytes)", label, l1.e[i].name, len);
      free(b);
    }
  }

  /* The rewritten entries load: a last context rewrites nothing and logs
   * no damage. */
  damaged = 0;
  list_cache(cache, &l1);
  c = context_logged(cache, &damaged);
  reduce_ok(c, NULL, "entry damage: repaired cache", &v, NULL);
  clr_context_release(c);
  list_cache(cache, &l2);
  TU_CHECK(tu_same(&v0, &v) && damaged == 0 && same_listing(&l1, &l2),
           "entry damage: the repaired entries are used as they are "
           "(%zu logged)",
           damaged);
out:
  end_case(dir, cache);
}

/* ------------------------------------------------------------ tuning */

/* The user's tuning file name: every character of the device name but
 * letters and digits replaced by '_' (at most 127 characters). */
static void user_tuning_path(const char *cache, char *path, size_t size) {
  char name[128];
  size_t i;
  for (i = 0; device_name[i] && i + 1 < sizeof name; i++) {
    unsigned char c = (unsigned char)device_name[i];
    name[i] = isalnum(c) ? (char)c : '_';
  }
  name[i] = '\0';
  snprintf(path, size, "%s/tuning/%s.txt", cache, name);
}

/* Where the tuning tuning_of (or tuning_at) last read came from: its
 * context's clr_tuning_origin, copied (the context may be gone). */
static char seen_origin[4096];

static clr_tuning tuning_of(clr_context *c) {
  clr_tuning t = CLR_TUNING_INIT;
  if (clr_get_tuning(c, &t) != CLR_OK)
    tu_die("clr_get_tuning failed");
  snprintf(seen_origin, sizeof seen_origin, "%s", clr_tuning_origin(c));
  return t;
}

/* The tuning a new context starts with, on the source tree's kernels and
 * the cache directory cache ("" for none). */
static clr_tuning tuning_at(const char *cache) {
  clr_context *c = context_at(kernel_src, cache);
  clr_tuning t = tuning_of(c);
  clr_context_release(c);
  return t;
}

static void describe(const clr_tuning *t, char *buf, size_t size) {
  snprintf(buf, size,
           "reduce wg %zu vec_bytes %u layout %d groups %u, scan wg %zu "
           "per_item %zu kernel %s, decoupled items %zu wg %zu",
           t->reduce_wg, t->reduce_vec_bytes, (int)t->reduce_layout,
           t->reduce_groups_per_cu, t->scan_wg, t->scan_per_item,
           clr_kernel_name(t->scan_kernel), t->decoupled_items,
           t->decoupled_wg);
}

/* of a context without any tuning file */
static clr_tuning defaults = CLR_TUNING_INIT;

/* Shipped files: the longest matching match= wins; the user's file wins
 * over it. */
static void test_tuning_files(void) {
  char *dir = new_case_dir("tuning-files");
  char *shipped = join(dir, "shipped");
  char *cache = join(dir, "cache");
  char buf[1024], desc[512];
  mkdir_p(shipped);

  /* Substrings of the device name: a short one and a longer one (the
   * longest prefix without '#' or trailing blanks, up to 40 characters). */
  char longm[64], shortm[8];
  size_t len = strcspn(device_name, "#\r\n");
  if (len > 40)
    len = 40;
  while (len && isspace((unsigned char)device_name[len - 1]))
    len--;
  if (len < 4)
    tu_die("device name '%s' too short for the match= test", device_name);
  memcpy(longm, device_name, len);
  longm[len] = '\0';
  memcpy(shortm, device_name, 3);
  shortm[3] = '\0';

  /* The short match sets every key; the long one all but decoupled.items,
   * which must then keep its default (only the winner applies). */
  snprintf(buf, sizeof buf,
           "# short\nmatch=%s\nreduce.wg=32\nreduce.vec_bytes=4\n"
           "reduce.layout=strided\nreduce.groups_per_cu=1\nscan.wg=32\n"
           "scan.per_item=2\nscan.kernel=kogge-stone-db\ndecoupled.items=2\n"
           "decoupled.wg=32\n",
           shortm);
  char *short_path = write_file_in(shipped, "a-short.txt", buf);
  snprintf(buf, sizeof buf,
           "# long\nmatch = %s \nreduce.wg=64\nreduce.vec_bytes=8\n"
           "reduce.layout=strided\nreduce.groups_per_cu=2\nscan.wg=64\n"
           "scan.per_item=16\nscan.kernel=brent-kung\ndecoupled.wg=64\n",
           longm);
  char *long_path = write_file_in(shipped, "m-long.txt", buf);
  /* Longer still, but no substring of the device name: never chosen. */
  char *other_path =
      write_file_in(shipped, "z-other.txt",
                    "match=clreduce-test-no-such-device-name-at-all-xyz\n"
                    "reduce.wg=16\nscan.wg=16\n");
  /* Not a .txt file: ignored even though it matches. */
  snprintf(buf, sizeof buf, "match=%s%s\nreduce.wg=8\n", longm, "");
  char *not_txt = write_file_in(shipped, "zz-longest.conf", buf);

  if (setenv("CLREDUCE_TUNING_DIR", shipped, 1) != 0)
    tu_die("setenv failed");
  clr_context *c = context_at(kernel_src, cache);
  clr_tuning t = tuning_of(c);
  describe(&t, desc, sizeof desc);
  TU_CHECK(strcmp(seen_origin, long_path) == 0,
           "shipped: origin is the longer match (%s, want %s)", seen_origin,
           long_path);
  TU_CHECK(t.reduce_wg == 64 && t.reduce_vec_bytes == 8 &&
               t.reduce_layout == CLR_LAYOUT_STRIDED &&
               t.reduce_groups_per_cu == 2 && t.scan_wg == 64 &&
               t.scan_per_item == 16 && t.scan_kernel == CLR_SCAN_BRENT_KUNG &&
               t.decoupled_wg == 64,
           "shipped: the longer match's values (%s)", desc);
  TU_CHECK(t.decoupled_items == defaults.decoupled_items,
           "shipped: a key only the losing file sets keeps its default "
           "(decoupled.items %zu, want %zu)",
           t.decoupled_items, defaults.decoupled_items);
  /* The launches follow: the coarse kernel's work-group and the scan's. */
  tu_timing tm;
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
  if (reduce_ok(c, NULL, "shipped tuning", NULL, &tm))
    TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size == 64,
             "shipped tuning: coarse pass 0 local size %zu, want 64",
             tm.n_passes ? tm.passes[0].local_size : 0);
  if (scan_ok(c, NULL, "shipped tuning (brent-kung scan)", out, &tm))
    TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size == 64,
             "shipped tuning: scan pass 0 local size %zu, want 64",
             tm.n_passes ? tm.passes[0].local_size : 0);
  clr_context_release(c);

  /* With the longer file gone, the short one wins. */
  unlink(long_path);
  t = tuning_at(cache);
  TU_CHECK(strcmp(seen_origin, short_path) == 0 && t.reduce_wg == 32 &&
               t.decoupled_items == 2 &&
               t.scan_kernel == CLR_SCAN_KOGGE_STONE_DB,
           "shipped: without the longer file the short match applies (%s)",
           seen_origin);

  /* Alternatives ("a|b", as in data/tuning/pocl-cpu.txt): a file matches
   * when one of them is a substring of the device name, and ranks by the
   * longest alternative that matches, never by one that does not. */
  char alt4[8];
  memcpy(alt4, device_name, 4);
  alt4[4] = '\0';
  snprintf(buf, sizeof buf,
           "match=%s|clreduce-test-no-such-device-name-at-all-xyz\n"
           "reduce.wg=40\n",
           shortm);
  char *alt_tie = write_file_in(shipped, "zz-alt.txt", buf);
  t = tuning_at(cache);
  TU_CHECK(strcmp(seen_origin, short_path) == 0 && t.reduce_wg == 32,
           "shipped: a longer alternative that does not match adds nothing "
           "(origin %s, want %s)",
           seen_origin, short_path);
  snprintf(buf, sizeof buf,
           "match=clreduce-test-no-such-device-name-at-all-xyz|%s|\n"
           "reduce.wg=48\n",
           alt4);
  char *alt_win = write_file_in(shipped, "b-alt.txt", buf);
  t = tuning_at(cache);
  TU_CHECK(strcmp(seen_origin, alt_win) == 0 && t.reduce_wg == 48,
           "shipped: the file whose matching alternative is longest wins "
           "(origin %s, want %s; reduce.wg %zu, want 48)",
           seen_origin, alt_win, t.reduce_wg);
  unlink(alt_tie);
  unlink(alt_win);
  free(alt_tie);
  free(alt_win);
  snprintf(buf, sizeof buf,
           "# long\nmatch = %s \nreduce.wg=64\nreduce.vec_bytes=8\n"
           "reduce.layout=strided\nreduce.groups_per_cu=2\nscan.wg=64\n"
           "scan.per_item=16\nscan.kernel=brent-kung\ndecoupled.wg=64\n",
           longm);
  write_text(long_path, buf);

  /* The user's file overrides the shipped one, key by key. */
  char user[4096];
  user_tuning_path(cache, user, sizeof user);
  char *tdir = join(cache, "tuning");
  mkdir_p(tdir);
  free(tdir);
  write_text(user, "# user\nmatch=clreduce-test-ignored-here\n"
                   "reduce.wg=128\nscan.per_item=64\nscan.kernel=kogge-stone\n"
                   "decoupled.items=16\n");
  c = context_at(kernel_src, cache);
  t = tuning_of(c);
  describe(&t, desc, sizeof desc);
  TU_CHECK(strcmp(seen_origin, user) == 0,
           "user file: origin is the user's file (%s, want %s)", seen_origin,
           user);
  TU_CHECK(t.reduce_wg == 128 && t.scan_per_item == 64 &&
               t.scan_kernel == CLR_SCAN_KOGGE_STONE && t.decoupled_items == 16,
           "user file: its values win (%s)", desc);
  TU_CHECK(t.reduce_vec_bytes == 8 && t.reduce_layout == CLR_LAYOUT_STRIDED &&
               t.reduce_groups_per_cu == 2 && t.scan_wg == 64 &&
               t.decoupled_wg == 64,
           "user file: keys it leaves out keep the shipped values (%s)", desc);
  if (reduce_ok(c, NULL, "user tuning", NULL, &tm))
    TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size == 128,
             "user tuning: coarse pass 0 local size %zu, want 128",
             tm.n_passes ? tm.passes[0].local_size : 0);
  scan_ok(c, NULL, "user tuning (kogge-stone scan)", out, NULL);
  clr_context_release(c);

  /* The user's file of another cache directory does not apply. */
  t = tuning_at("");
  TU_CHECK(strcmp(seen_origin, long_path) == 0,
           "no cache dir: the shipped file again (%s)", seen_origin);

  if (setenv("CLREDUCE_TUNING_DIR", no_tuning_dir, 1) != 0)
    tu_die("setenv failed");
  free(out);
  free(short_path);
  free(long_path);
  free(other_path);
  free(not_txt);
  free(shipped);
  end_case(dir, cache);
}

/* A damaged user file: good keys apply, bad values and unknown keys are
 * ignored one by one. */
static void test_tuning_bad_values(void) {
  char *dir = new_case_dir("tuning-bad");
  char *cache = join(dir, "cache");
  char user[4096], desc[512];
  user_tuning_path(cache, user, sizeof user);
  char *tdir = join(cache, "tuning");
  mkdir_p(tdir);
  free(tdir);

  /* A long comment line (blanks, then what looks like a setting): still a
   * comment, however the parser reads its lines. */
  char longline[1200];
  memset(longline, ' ', sizeof longline);
  longline[0] = '#';
  memcpy(longline + sizeof longline - 14, "reduce.wg=7\n", 13);

  char text[4096];
  snprintf(text, sizeof text,
           "# a damaged tuning file\n"
           "reduce.wg=0\n"
           "reduce.wg=-64\n"
           "reduce.wg=+64\n"
           "reduce.wg=0x40\n"
           "reduce.wg=64k\n"
           "reduce.wg=65537\n"
           "reduce.wg=99999999999999999999999\n"
           "reduce.wg=\n"
           " reduce.layout = strided \n"
           "reduce.layout=sideways\n"
           "reduce.layout=STRIDED-ish\n"
           "reduce.vec_bytes=abc\n"
           "reduce.vec_bytes=129\n"
           "reduce.groups_per_cu=3\r\n"
           "reduce.groups_per_cu=0\n"
           "scan.wg=0\n"
           "scan.per_item=8 # trailing comment\n"
           "scan.per_item=12x\n"
           "scan.kernel=coarse\n"
           "scan.kernel=no-such-scan\n"
           "decoupled.items=65\n"
           "decoupled.items=0\n"
           "decoupled.wg=32\n"
           "frobnicate=7\n"
           "reduce.wgg=8\n"
           "this line is garbage without an equals sign\n"
           "=\n"
           "==\n"
           "\x01\x02\xff=\xfe\n"
           "%s"
           "no newline at the end=1",
           longline);
  write_text(user, text);

  clr_context *c = context_at(kernel_src, cache);
  clr_tuning t = tuning_of(c);
  describe(&t, desc, sizeof desc);
  TU_CHECK(strcmp(seen_origin, user) == 0, "damaged file: origin %s (want %s)",
           seen_origin, user);
  TU_CHECK(t.reduce_layout == CLR_LAYOUT_STRIDED &&
               t.reduce_groups_per_cu == 3 && t.scan_per_item == 8 &&
               t.decoupled_wg == 32,
           "damaged file: the good keys apply (%s)", desc);
  TU_CHECK(t.reduce_wg == defaults.reduce_wg &&
               t.reduce_vec_bytes == defaults.reduce_vec_bytes &&
               t.scan_wg == defaults.scan_wg &&
               t.scan_kernel == defaults.scan_kernel &&
               t.decoupled_items == defaults.decoupled_items,
           "damaged file: keys with only bad values keep their defaults (%s)",
           desc);
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
  reduce_ok(c, NULL, "damaged tuning file", NULL, NULL);
  scan_ok(c, NULL, "damaged tuning file", out, NULL);
  clr_context_release(c);

  /* A file holding nothing usable: the defaults, the context works. */
  write_text(user, "reduce.wg=0\nscan.kernel=interleaved\n\n\n");
  c = context_at(kernel_src, cache);
  t = tuning_of(c);
  TU_CHECK(tu_same_tuning(&t, &defaults),
           "a file of bad values only: the defaults");
  reduce_ok(c, NULL, "tuning file of bad values only", NULL, NULL);
  clr_context_release(c);

  free(out);
  end_case(dir, cache);
}

/* clr_set_tuning: rejections leave the tuning as it was; accepted values
 * change the launches. */
static void test_set_tuning(void) {
  char *dir = new_case_dir("set-tuning");
  char *cache = join(dir, "cache");
  clr_context *c = context_at(kernel_src, cache);
  clr_tuning t0 = tuning_of(c), t, got;
  char user[4096];
  user_tuning_path(cache, user, sizeof user);

  TU_EXPECT_STATUS(clr_set_tuning(NULL, &t0), CLR_ERR_INVALID_ARGUMENT,
                   "clr_set_tuning(NULL ctx)");
  TU_EXPECT_STATUS(clr_set_tuning(c, NULL), CLR_ERR_INVALID_ARGUMENT,
                   "clr_set_tuning(NULL tuning)");
  TU_EXPECT_STATUS(clr_get_tuning(NULL, &t), CLR_ERR_INVALID_ARGUMENT,
                   "clr_get_tuning(NULL ctx)");
  TU_EXPECT_STATUS(clr_get_tuning(c, NULL), CLR_ERR_INVALID_ARGUMENT,
                   "clr_get_tuning(NULL out)");

  /* Tunings to reject: t0 with one field out of range (and both
   * work-group sizes changed, so that a partial apply would show), and one
   * of all zeros. */
  static const char *names[] = {"reduce_wg=0",
                                "reduce_vec_bytes=0",
                                "reduce_layout=auto",
                                "reduce_layout=99",
                                "reduce_groups_per_cu=0",
                                "scan_wg=0",
                                "scan_per_item=0",
                                "scan_kernel=coarse",
                                "scan_kernel=99",
                                "decoupled_items=0",
                                "decoupled_items=65",
                                "decoupled_wg=0",
                                "reduce_min_groups_cu=1025",
                                "everything zero"};
  clr_tuning bad[14];
  for (int k = 0; k < 13; k++) {
    bad[k] = t0;
    bad[k].reduce_wg = 32;
    bad[k].scan_wg = 32;
  }
  bad[0].reduce_wg = 0;
  bad[1].reduce_vec_bytes = 0;
  bad[2].reduce_layout = CLR_LAYOUT_AUTO;
  bad[3].reduce_layout = (clr_layout)99;
  bad[4].reduce_groups_per_cu = 0;
  bad[5].scan_wg = 0;
  bad[6].scan_per_item = 0;
  bad[7].scan_kernel = CLR_REDUCE_COARSE;
  bad[8].scan_kernel = (clr_kernel)99;
  bad[9].decoupled_items = 0;
  bad[10].decoupled_items = 65;
  bad[11].decoupled_wg = 0;
  bad[12].reduce_min_groups_cu = 1025;
  memset(&bad[13], 0, sizeof bad[13]);
  bad[13].struct_size = sizeof bad[13]; /* the values zero, not the size */
  for (int k = 0; k < 14; k++) {
    clr_status s = clr_set_tuning(c, &bad[k]);
    char what[128];
    snprintf(what, sizeof what, "clr_set_tuning(%s)", names[k]);
    TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, what);
    got = tuning_of(c);
    TU_CHECK(memcmp(&got, &t0, sizeof got) == 0, "%s: the tuning is unchanged",
             what);
  }
  TU_CHECK(clr_context_error(c)[0] != '\0',
           "a rejected tuning leaves an error detail");
  reduce_ok(c, NULL, "after rejected tunings", NULL, NULL);

  /* Accepted shapes: the coarse kernel launches with the tuned work-group
   * (a non-power of two included), results stay right. */
  static const size_t wgs[] = {64, 96, 32};
  for (size_t i = 0; i < sizeof wgs / sizeof *wgs; i++) {
    char label[128];
    tu_timing tm;
    t = t0;
    t.reduce_wg = wgs[i];
    t.reduce_layout = i % 2 ? CLR_LAYOUT_CONTIGUOUS : CLR_LAYOUT_STRIDED;
    t.reduce_vec_bytes = i == 2 ? 8 : 16;
    t.reduce_groups_per_cu = (unsigned)(i + 1);
    t.scan_wg = wgs[i];
    t.scan_per_item = 4 << i;
    t.scan_kernel = CLR_SCAN_KOGGE_STONE;
    clr_status s = clr_set_tuning(c, &t);
    snprintf(label, sizeof label, "set tuning reduce_wg=%zu layout %s", wgs[i],
             i % 2 ? "contiguous" : "strided");
    if (!TU_EXPECT_STATUS(s, CLR_OK, label))
      continue;
    TU_CHECK(
        strcmp(clr_tuning_origin(c), "set by the caller (clr_set_tuning)") == 0,
        "%s: the origin says so (%s)", label, clr_tuning_origin(c));
    got = tuning_of(c);
    TU_CHECK(memcmp(&got, &t, sizeof got) == 0,
             "%s: clr_get_tuning gives it "
             "back",
             label);
    if (reduce_ok(c, NULL, label, NULL, &tm))
      TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size == wgs[i] &&
                   tm.passes[0].n_in == N_REDUCE,
               "%s: coarse pass 0 local size %zu (want %zu)", label,
               tm.n_passes ? tm.passes[0].local_size : 0, wgs[i]);
    /* Explicit options still win over the tuning. */
    clr_options o;
    clr_options_init(&o);
    o.wg_size = 128;
    if (reduce_ok(c, &o, label, NULL, &tm))
      TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size == 128,
               "%s: an explicit wg_size=128 wins (%zu)", label,
               tm.n_passes ? tm.passes[0].local_size : 0);
    int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
    if (scan_ok(c, NULL, label, out, &tm))
      TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size == wgs[i],
               "%s: scan pass 0 local size %zu (want %zu)", label,
               tm.n_passes ? tm.passes[0].local_size : 0, wgs[i]);
    free(out);
  }
  clr_context_release(c);
  TU_CHECK(access(user, F_OK) != 0,
           "clr_set_tuning writes no user tuning file");
  got = tuning_at(cache);
  TU_CHECK(tu_same_tuning(&got, &t0),
           "a new context starts from the files, not the set tuning");

  end_case(dir, cache);
}

static void count_log(void *user, const char *msg) {
  if (strncmp(msg, "autotune:", 9) == 0)
    ++*(size_t *)user;
}

/* clr_autotune writes the user's file; a new context reads it. */
static void test_autotune(void) {
  char *dir = new_case_dir("autotune");
  char *cache = join(dir, "cache");
  char want[4096], saved[4096] = "";
  size_t logged = 0;
  user_tuning_path(cache, want, sizeof want);
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_src,
                            .cache_dir = cache,
                            .log = count_log,
                            .log_user = &logged};
  clr_context *c = tu_context_from(&cfg);

  TU_EXPECT_STATUS(clr_autotune(NULL, 1 << 16, saved, sizeof saved),
                   CLR_ERR_INVALID_ARGUMENT, "clr_autotune(NULL)");
  clr_status s = clr_autotune(c, (size_t)1 << 16, saved, sizeof saved);
  TU_CHECK(s == CLR_OK, "clr_autotune(1<<16): %s (%s)", clr_status_name(s),
           clr_context_error(c));
  TU_CHECK(strcmp(saved, want) == 0, "clr_autotune saved to %s (want %s)",
           saved, want);
  TU_CHECK(logged > 0, "clr_autotune reports progress to the log (%zu lines)",
           logged);
  clr_tuning tuned = tuning_of(c);
  TU_CHECK(strcmp(seen_origin, want) == 0,
           "the tuned context names the saved file (%s)", seen_origin);
  size_t len = 0;
  unsigned char *text = tu_read_file(want, &len);
  TU_CHECK(text && len > 0 && strstr((char *)text, "reduce.wg=") != NULL,
           "the user's tuning file exists and holds reduce.wg=");
  free(text);
  listing l;
  list_cache(cache, &l);
  TU_CHECK(l.others == 0, "no temporary files beside the tuning dir (%s)",
           l.other);
  char tdir[4096];
  snprintf(tdir, sizeof tdir, "%s/tuning", cache);
  DIR *d = opendir(tdir);
  size_t files = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    files += e->d_name[0] != '.';
  if (d)
    closedir(d);
  TU_CHECK(files == 1, "the tuning dir holds just the one file (%zu)", files);
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
  reduce_ok(c, NULL, "autotuned context", NULL, NULL);
  scan_ok(c, NULL, "autotuned context", out, NULL);
  clr_context_release(c);

  /* A new context on that cache reads the file back. */
  c = context_at(kernel_src, cache);
  clr_tuning t = tuning_of(c);
  char d1[512], d2[512];
  describe(&t, d1, sizeof d1);
  describe(&tuned, d2, sizeof d2);
  TU_CHECK(strcmp(seen_origin, want) == 0,
           "new context: origin is the autotuned file (%s)", seen_origin);
  TU_CHECK(tu_same_tuning(&t, &tuned), "new context: the tuned values (%s; %s)",
           d1, d2);
  tu_timing tm;
  if (reduce_ok(c, NULL, "tuned shape", NULL, &tm))
    TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size <= t.reduce_wg,
             "tuned shape: coarse pass 0 local size %zu within reduce.wg %zu",
             tm.n_passes ? tm.passes[0].local_size : 0, t.reduce_wg);
  scan_ok(c, NULL, "tuned shape", out, NULL);
  clr_context_release(c);

  free(out);
  end_case(dir, cache);
}

/* ------------------------------------------------------------ hostile files */

#define CHILD_SECONDS 30 /* a hang guard, not a timing assertion */

/* This program again (fork + exec, so the child's OpenCL state is its
 * own) in --child-run mode: a context on cache and a reduction, checked;
 * with one more argument extra (NULL: none) and the environment settings
 * env (NAME=VALUE, NULL-terminated; may be NULL) made in the child.  An
 * alarm turns a hang into SIGALRM.  Returns the wait status. */
static int child_status(const char *cache, const char *extra,
                        const char *const *env) {
  char a1[4200], a2[4200], a3[4200];
  snprintf(a1, sizeof a1, "--child-run=%s", cache);
  snprintf(a2, sizeof a2, "--kernel-dir=%s", kernel_src);
  snprintf(a3, sizeof a3, "--work-dir=%s", work_dir);
  char *args[] = {(char *)"test_cache_tuning", a1, a2, a3, (char *)extra, NULL};
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    tu_die("fork: %s", strerror(errno));
  if (pid == 0) {
    for (size_t i = 0; env && env[i]; i++)
      putenv((char *)env[i]);
    alarm(CHILD_SECONDS); /* kept across exec */
    execv("/proc/self/exe", args);
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      tu_die("waitpid: %s", strerror(errno));
  return st;
}

static int child_run(const char *cache, const char *label) {
  int st = child_status(cache, NULL, NULL);
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
    return tu_check(0,
                    "%s: context creation and a reduction hang (killed "
                    "after %d s)",
                    label, CHILD_SECONDS);
  return TU_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s: the child process passes (exit %d, signal %d)", label,
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void crash_at_load_log(void *user, const char *msg) {
  const char *entry = user;
  if (strncmp(msg, "binary cache: loading entry", 27) == 0 && entry &&
      strstr(msg, entry))
    raise(SIGKILL); /* dies as abruptly as a crash, sanitizers or not */
}

static void note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("  ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

/* ------------------------------------------------------------ crafted */

/* An entry of key and payload exactly as the library writes one: magic,
 * lengths and checksum all valid, whatever the payload says. */
static unsigned char *craft_entry(const unsigned char *key, size_t key_len,
                                  const unsigned char *payload,
                                  size_t payload_len, size_t *len) {
  *len = 32 + key_len + payload_len;
  unsigned char *b = tu_xmalloc(*len);
  memcpy(b, MAGIC, 8);
  put_le64(b + 8, key_len);
  put_le64(b + 16, payload_len);
  memcpy(b + 32, key, key_len);
  if (payload_len)
    memcpy(b + 32 + key_len, payload, payload_len);
  uint64_t h = fnv1a64(b, 24, 0xcbf29ce484222325ULL);
  put_le64(b + 24, fnv1a64(b + 32, *len - 32, h));
  return b;
}

static void put_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* Where PoCL's container (the "poclbin" binary, version 9: PoCL 3.1) keeps
 * the fields the crafted entries lie in; 0 when the payload is not one. */
typedef struct pocl_layout {
  size_t root;   /* the first root file region's size (u64) */
  size_t file;   /* its first file's name length (u32) */
  size_t kernel; /* the first kernel's record (u64 record size) */
  size_t kfile;  /* that kernel's first file's name length (u32) */
} pocl_layout;

static int pocl_layout_of(const unsigned char *b, size_t len, pocl_layout *l) {
  memset(l, 0, sizeof *l);
  if (len < 200 || memcmp(b, "poclbin", 8) != 0 || get_le32(b + 16) != 9 ||
      get_le32(b + 32) != 1)
    return 0;
  l->root = 77;
  l->file = 85;
  uint64_t root = get_le64(b + 77);
  if (root > len - 85)
    return 0;
  l->kernel = 85 + (size_t)root;
  if (l->kernel + 40 > len)
    return 0;
  uint64_t size = get_le64(b + l->kernel), files = get_le64(b + l->kernel + 8);
  if (size > len - l->kernel || files > size || files < 8)
    return 0;
  l->kfile = l->kernel + (size_t)(size - files);
  return 1;
}

/* The crafted payloads: each lies in one way while its entry's header and
 * checksum are right.  The generic ones apply to any driver, the PoCL ones
 * to PoCL's container only. */
enum {
  C_CUT_100,
  C_CUT_HALF,
  C_ONE_BYTE,
  C_ZEROS,
  C_RANDOM,
  C_RANDOM_TAIL,
  C_FOREIGN,
  C_EXTRA_BYTE,
  C_POCL_FIRST, /* the PoCL ones from here */
  C_VERSION_8 = C_POCL_FIRST,
  C_VERSION_MAX,
  C_KERNELS_MAX,
  C_KERNELS_0,
  C_ROOT_MAX,
  C_ROOT_0,
  C_NAME_LEN_MAX,
  C_FILE_LEN_MAX,
  C_DOTDOT,
  C_BITCODE_ZEROS,
  C_RECORD_MAX,
  C_RECORD_FILES,
  C_KNAME_LEN_MAX,
  C_ARGS_MAX,
  C_LOCALS_MAX,
  C_SO_ZEROS,
  C_COUNT
};

static const char *const crafted_names[C_COUNT] = {
    "payload cut to 100 bytes",
    "payload cut to half",
    "a payload of one byte",
    "payload zero-filled",
    "payload of random bytes",
    "random bytes after the first 77",
    "another kernel's binary (a scan's)",
    "the payload and one more byte",
    "PoCL binary version 8",
    "PoCL binary version 2^32 - 1",
    "PoCL kernel count 2^32 - 1",
    "PoCL kernel count 0",
    "PoCL root file region 2^64 - 1 bytes",
    "PoCL root file region 0 bytes",
    "PoCL file name length 2^32 - 1",
    "PoCL file length 2^32 - 1",
    "PoCL file name /../gram.bc (leaves the cache directory)",
    "PoCL program.bc zero-filled",
    "PoCL kernel record size 2^63",
    "PoCL kernel record all files",
    "PoCL kernel name length 2^32 - 1",
    "PoCL argument count 2^32 - 1",
    "PoCL local count 2^32 - 1",
    "PoCL kernel's first file zero-filled",
};

/* The crafted payload kind made of the real one (orig) and another
 * kernel's (foreign); NULL when kind does not apply to this payload. */
static unsigned char *craft_payload(int kind, const unsigned char *orig,
                                    size_t len, const unsigned char *foreign,
                                    size_t foreign_len, size_t *out_len) {
  pocl_layout l;
  if (kind >= C_POCL_FIRST && !pocl_layout_of(orig, len, &l))
    return NULL;
  size_t n = kind == C_EXTRA_BYTE ? len + 1 : len;
  if (kind == C_FOREIGN)
    n = foreign_len;
  unsigned char *p = tu_xmalloc(n);
  memcpy(p, kind == C_FOREIGN ? foreign : orig, kind == C_FOREIGN ? n : len);
  uint32_t seed = 12345;
  switch (kind) {
  case C_CUT_100:
    n = len < 100 ? len / 2 : 100;
    break;
  case C_CUT_HALF:
    n = len / 2;
    break;
  case C_ONE_BYTE:
    n = 1;
    break;
  case C_ZEROS:
    memset(p, 0, n);
    break;
  case C_RANDOM:
  case C_RANDOM_TAIL:
    for (size_t i = kind == C_RANDOM ? 0 : 77; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      p[i] = (unsigned char)(seed >> 24);
    }
    break;
  case C_FOREIGN:
    break;
  case C_EXTRA_BYTE: /* (a control byte: a NUL more would still be the
                       same PTX, which NVIDIA's driver loads) */
    p[len] = 1;
    break;
  case C_VERSION_8:
    put_le32(p + 16, 8);
    break;
  case C_VERSION_MAX:
    put_le32(p + 16, UINT32_MAX);
    break;
  case C_KERNELS_MAX:
    put_le32(p + 20, UINT32_MAX);
    break;
  case C_KERNELS_0:
    put_le32(p + 20, 0);
    break;
  case C_ROOT_MAX:
    put_le64(p + l.root, UINT64_MAX);
    break;
  case C_ROOT_0:
    put_le64(p + l.root, 0);
    break;
  case C_NAME_LEN_MAX:
    put_le32(p + l.file, UINT32_MAX);
    break;
  case C_FILE_LEN_MAX:
    put_le32(p + l.file + 4 + get_le32(p + l.file), UINT32_MAX);
    break;
  case C_DOTDOT:
    if (get_le32(p + l.file) < 4) {
      free(p);
      return NULL;
    }
    memcpy(p + l.file + 4, "/../", 4);
    break;
  case C_BITCODE_ZEROS: {
    size_t at = l.file + 4 + get_le32(p + l.file);
    uint32_t k = get_le32(p + at);
    if (k > len - at - 4) {
      free(p);
      return NULL;
    }
    memset(p + at + 4, 0, k);
    break;
  }
  case C_RECORD_MAX:
    put_le64(p + l.kernel, (uint64_t)1 << 63);
    break;
  case C_RECORD_FILES:
    put_le64(p + l.kernel + 8, get_le64(p + l.kernel));
    break;
  case C_KNAME_LEN_MAX:
    put_le32(p + l.kernel + 20, UINT32_MAX);
    break;
  case C_ARGS_MAX:
  case C_LOCALS_MAX: {
    size_t at = l.kernel + 24 + get_le32(p + l.kernel + 20);
    put_le32(p + at + (kind == C_ARGS_MAX ? 0 : 4), UINT32_MAX);
    break;
  }
  default: { /* C_SO_ZEROS */
    size_t at = l.kfile + 4 + get_le32(p + l.kfile);
    uint32_t k = at + 4 <= len ? get_le32(p + at) : UINT32_MAX;
    if (k > len - at - 4) {
      free(p);
      return NULL;
    }
    memset(p + at + 4, 0, k);
    break;
  }
  }
  *out_len = n;
  return p;
}

/* The number of files in the cache directory whose name ends in
 * ".loading" (a loader's mark). */
static size_t count_marks(const char *dir) {
  size_t k = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    k += n > 8 && strcmp(e->d_name + n - 8, ".loading") == 0;
  }
  if (d)
    closedir(d);
  return k;
}

/* Entries with a right header and checksum but a lying payload (cut,
 * zeroed, random, another kernel's, and on PoCL every length field of its
 * container at an extreme, a file name leaving its directory, files
 * zeroed): each run, in a child process, gets the right result (never a
 * crash), and leaves every entry rebuilt valid from source, no mark. */
/* One float reduction of op on a fresh context at cache (its program
 * stored there when new), checked against the CPU. */
static void reduce_op_at(const char *cache, clr_op op, const char *label) {
  clr_context *c = context_at(kernel_src, cache);
  tu_case tc;
  memset(&tc, 0, sizeof tc);
  tc.label = label;
  tc.op = op;
  tc.type = CLR_FLOAT;
  tc.data = rdata;
  tc.n = N_REDUCE;
  clr_options_init(&tc.opt);
  clr_value v;
  clr_timing t = CLR_TIMING_INIT;
  clr_status st =
      clr_reduce_host(c, &tc.opt, op, CLR_FLOAT, rdata, N_REDUCE, &v);
  if (tu_check(st == CLR_OK, "%s: %s: %s", label, clr_status_name(st),
               clr_context_error(c)) &&
      clr_last_timing(c, &t) == CLR_OK)
    tu_verify(&tc, &v, &t);
  clr_context_release(c);
}

/* $CLREDUCE_CACHE_MAX_BYTES: a store that takes the cache past the cap
 * evicts the least recently used entries (access times, which a load
 * sets), never the entry just written; a cap of 1 byte keeps only that
 * one.  Every run is right whatever was evicted. */
static void test_cache_cap(void) {
  char *dir = new_case_dir("cache-cap");
  char *cache = join(dir, "cache"), *probe = join(dir, "probe");
  clr_value v;
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
  setenv("CLREDUCE_CACHE_MAX_BYTES", "0", 1);
  run_both(kernel_src, cache, "uncapped", &v, out);
  reduce_op_at(probe, CLR_MAX, "a max, to learn its entry's size");
  listing l0, lp, l1, l2;
  list_cache(cache, &l0);
  list_cache(probe, &lp);
  uint64_t total = 0, new_bytes = 0;
  for (size_t i = 0; i < lp.n; i++)
    new_bytes += (uint64_t)lp.e[i].size;
  /* Entry i used at time now - 1000 + 10 i: entry 0 least recently. */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  for (size_t i = 0; i < l0.n; i++) {
    char *p = join(cache, l0.e[i].name);
    struct timespec t[2] = {{now.tv_sec - 1000 + 10 * (time_t)i, 0},
                            {now.tv_sec - 2000, 0}};
    if (utimensat(AT_FDCWD, p, t, 0) != 0)
      tu_die("utimensat %s failed", p);
    total += (uint64_t)l0.e[i].size;
    free(p);
  }
  TU_CHECK(l0.n >= 3 && lp.n >= 1, "entries to evict: %zu, new ones: %zu", l0.n,
           lp.n);
  /* A cap one byte short of all of them and the new ones (a max stores
   * one entry a program): the least recently used goes, and only it. */
  char cap[64];
  snprintf(cap, sizeof cap, "%llu",
           (unsigned long long)(total + new_bytes - 1));
  setenv("CLREDUCE_CACHE_MAX_BYTES", cap, 1);
  reduce_op_at(cache, CLR_MAX, "a max past the cap");
  list_cache(cache, &l1);
  int oldest_gone = l0.n > 0 && !find_entry(&l1, l0.e[0].name);
  int rest_kept = 1;
  for (size_t i = 1; i < l0.n; i++)
    rest_kept &= find_entry(&l1, l0.e[i].name) != NULL;
  for (size_t i = 0; i < lp.n; i++)
    rest_kept &= find_entry(&l1, lp.e[i].name) != NULL;
  TU_CHECK(oldest_gone && rest_kept && l1.n == l0.n - 1 + lp.n,
           "past the cap: the least recently used entry evicted, the %zu "
           "others and the %zu new ones kept (%zu entries after)",
           l0.n - 1, lp.n, l1.n);
  /* A 1-byte cap keeps only the entry just written, and every run is
   * still right. */
  setenv("CLREDUCE_CACHE_MAX_BYTES", "1", 1);
  reduce_op_at(cache, CLR_MIN, "a min under a 1-byte cap");
  list_cache(cache, &l2);
  TU_CHECK(l2.n == 1 && l2.others == 0,
           "a 1-byte cap keeps only the entry just written (%zu entries, %zu "
           "other files)",
           l2.n, l2.others);
  run_both(kernel_src, cache, "after the evictions", &v, out);
  /* A bad value is ignored (the default cap), never a failure. */
  setenv("CLREDUCE_CACHE_MAX_BYTES", "12 parsecs", 1);
  reduce_op_at(cache, CLR_PROD, "a bad cap");
  unsetenv("CLREDUCE_CACHE_MAX_BYTES");
  free(out);
  free(cache);
  free(probe);
  free(dir);
}

static void test_cache_crafted_entries(void) {
  char *dir = new_case_dir("cache-crafted");
  char *cache = join(dir, "cache");
  char *other = join(dir, "other");
  listing l0, l1;
  clr_context *c = context_at(kernel_src, cache);
  reduce_ok(c, NULL, "crafted: first run", NULL, NULL);
  clr_context_release(c);
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
  c = context_at(kernel_src, other);
  scan_ok(c, NULL, "crafted: a scan for a foreign binary", out, NULL);
  clr_context_release(c);
  free(out);
  list_cache(cache, &l0);
  list_cache(other, &l1);
  size_t flen = 0, fkey = 0, fbin = 0;
  unsigned char *fentry = l1.n ? read_entry(other, l1.e[0].name, &flen) : NULL;
  if (!TU_CHECK(l0.n >= 1 && l0.others == 0 &&
                    entry_valid(fentry, flen, &fkey, &fbin),
                "crafted: %zu entries of a reduction, a valid one of a scan",
                l0.n))
    goto out;
  const unsigned char *foreign = fentry + 32 + fkey;

  for (int kind = 0; kind < C_COUNT; kind++) {
    char label[256];
    snprintf(label, sizeof label, "crafted entry: %s", crafted_names[kind]);
    size_t crafted = 0;
    /* Every entry crafted the same way, each of its own valid payload. */
    for (size_t i = 0; i < l0.n; i++) {
      char p[4096];
      size_t len = 0, key_len = 0, bin_len = 0, plen = 0, elen = 0;
      snprintf(p, sizeof p, "%s/%s", cache, l0.e[i].name);
      unsigned char *b = tu_read_file(p, &len);
      if (!entry_valid(b, len, &key_len, &bin_len))
        tu_die("%s: entry %s is not valid before", label, p);
      unsigned char *pay =
          craft_payload(kind, b + 32 + key_len, bin_len, foreign, fbin, &plen);
      if (pay) {
        unsigned char *e = craft_entry(b + 32, key_len, pay, plen, &elen);
        TU_CHECK(entry_valid(e, elen, NULL, NULL),
                 "%s: the crafted entry has a valid header and checksum",
                 label);
        write_bytes(p, e, elen);
        free(e);
        free(pay);
        crafted++;
      }
      free(b);
    }
    if (crafted == 0) {
      note("%s: not this driver's container, skipped", label);
      continue;
    }
    list_cache(cache, &l1);
    child_run(cache, label);
    /* Every entry rebuilt: a new file, valid, no mark left. */
    listing l2;
    list_cache(cache, &l2);
    TU_CHECK(l2.n == l0.n && count_new(&l0, &l2) == 0 && l2.others == 0,
             "%s: the same %zu entries, no marks or temporary files (%zu, "
             "%zu others, e.g. %s)",
             label, l0.n, l2.n, l2.others, l2.others ? l2.other : "-");
    for (size_t i = 0; i < l1.n; i++) {
      size_t len;
      unsigned char *b = read_entry(cache, l1.e[i].name, &len);
      const entry *now = find_entry(&l2, l1.e[i].name);
      TU_CHECK(
          entry_valid(b, len, NULL, NULL) && now && rewritten(now, &l1.e[i]),
          "%s: entry %s rebuilt valid (%zu bytes)", label, l1.e[i].name, len);
      free(b);
    }
  }
out:
  free(fentry);
  end_case(dir, other);
  free(cache);
}

/* A crash while the driver loads an entry (a log callback of the child
 * killing it when the library says it hands an entry to the driver)
 * leaves the entry marked; the next run drops it and builds from source,
 * so the crash does not repeat; a mark of a live loader (this process) is
 * a concurrent load and kept; a mark of a process that is gone, or one
 * that is not a mark at all, drops the entry. */
static void test_cache_crash_at_load(void) {
  char *dir = new_case_dir("cache-crash");
  char *cache = join(dir, "cache");
  listing l0, l1;
  clr_context *c = context_at(kernel_src, cache);
  reduce_ok(c, NULL, "crash at load: first run", NULL, NULL);
  clr_context_release(c);
  list_cache(cache, &l0);
  if (!TU_CHECK(l0.n >= 1, "crash at load: %zu entries", l0.n))
    goto out;

  char crash_env[300];
  snprintf(crash_env, sizeof crash_env, "CLR_TEST_CRASH_ENTRY=%s",
           l0.e[0].name);
  const char *const env[] = {crash_env, NULL};
  int st = child_status(cache, "--child-crash-at-load", env);
  TU_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
           "crash at load: the first child dies in the load (signal %d)",
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  TU_CHECK(count_marks(cache) == 1, "crash at load: it leaves one mark (%zu)",
           count_marks(cache));
  st = child_status(cache, "--child-crash-at-load", env);
  TU_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "crash at load: the next child does not load the entry it crashed "
           "in, builds from source and passes (exit %d, signal %d)",
           WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  list_cache(cache, &l1);
  const entry *e0 = find_entry(&l1, l0.e[0].name);
  TU_CHECK(l1.n == l0.n && l1.others == 0 && e0 && rewritten(e0, &l0.e[0]),
           "crash at load: the entry rebuilt, the mark gone (%zu entries, "
           "%zu others)",
           l1.n, l1.others);

  /* Marks written by hand next to every entry. */
  static const char *const marks[3] = {"live", "gone", "garbage"};
  for (int m = 0; m < 3; m++) {
    char label[128], text[128];
    snprintf(label, sizeof label, "a mark of a %s loader", marks[m]);
    list_cache(cache, &l0);
    unsigned long long start = 0;
    FILE *f = fopen("/proc/self/stat", "r");
    if (f) {
      char buf[1024];
      size_t n = fread(buf, 1, sizeof buf - 1, f);
      buf[n] = '\0';
      fclose(f);
      char *p = strrchr(buf, ')');
      for (int field = 2; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
      if (p)
        start = strtoull(p + 1, NULL, 10);
    }
    if (m == 0)
      snprintf(text, sizeof text, "%ld %llu\n", (long)getpid(), start);
    else if (m == 1)
      snprintf(text, sizeof text, "%ld %llu\n", (long)getpid(), start + 1);
    else
      snprintf(text, sizeof text, "not a mark");
    for (size_t i = 0; i < l0.n; i++) {
      char p[4200];
      snprintf(p, sizeof p, "%s/%s.loading", cache, l0.e[i].name);
      write_text(p, text);
    }
    child_run(cache, label);
    list_cache(cache, &l1);
    size_t same = 0;
    for (size_t i = 0; i < l0.n; i++) {
      const entry *now = find_entry(&l1, l0.e[i].name);
      same += now && !rewritten(now, &l0.e[i]);
    }
    if (m == 0)
      TU_CHECK(same == l0.n && l1.n == l0.n && count_marks(cache) == l0.n,
               "%s: the entries loaded as they are (%zu of %zu), the marks "
               "kept",
               label, same, l0.n);
    else
      TU_CHECK(same == 0 && l1.n == l0.n && l1.others == 0,
               "%s: the entries rebuilt (%zu of %zu kept), the marks gone "
               "(%zu others)",
               label, same, l0.n, l1.others);
    if (m == 0)
      for (size_t i = 0; i < l0.n; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s.loading", cache, l0.e[i].name);
        unlink(p);
      }
  }
out:
  end_case(dir, cache);
}

/* PoCL cannot initialise without a writable cache directory of its own:
 * context creation fails saying so (the OpenCL error of the device query
 * and which variables to fix), not that no device matches. */
static void test_pocl_cache_unwritable(void) {
  if (!strstr(tu_device.platform_name, "Portable Computing Language")) {
    note("not PoCL: its cache directory case skipped");
    return;
  }
  static const char *const env[] = {"POCL_CACHE_DIR=/proc/no-such-dir",
                                    "XDG_CACHE_HOME=/proc/no-such-dir",
                                    "HOME=/nonexistent", NULL};
  int st = child_status("", "--child-expect-no-device", env);
  TU_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "PoCL with an unwritable cache: context creation fails naming the "
           "device query and POCL_CACHE_DIR (exit %d, signal %d)",
           WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* A FIFO (or a device) where a tuning file or a cache entry is read:
 * refused without blocking; an oversized tuning file is refused whole. */
static void test_tuning_not_regular(void) {
  char *dir = new_case_dir("tuning-fifo");
  char *shipped = join(dir, "shipped");
  char *cache = join(dir, "cache");
  char *tdir = join(cache, "tuning");
  char user[4096];
  listing l0, l1;
  mkdir_p(shipped);
  mkdir_p(tdir);
  user_tuning_path(cache, user, sizeof user);

  /* Fill the cache first, so the children load binaries, not compile. */
  clr_context *c = context_at(kernel_src, cache);
  reduce_ok(c, NULL, "tuning fifo: fill the cache", NULL, NULL);
  clr_context_release(c);
  list_cache(cache, &l0);

  /* 1. The user's tuning file is a FIFO with no writer. */
  if (mkfifo(user, 0644) != 0)
    tu_die("mkfifo %s: %s", user, strerror(errno));
  int ok = child_run(cache, "a FIFO as the user's tuning file");
  unlink(user);

  /* 2. The user's tuning file is a symbolic link to /dev/zero. */
  if (symlink("/dev/zero", user) != 0)
    tu_die("symlink %s: %s", user, strerror(errno));
  ok &= child_run(cache, "/dev/zero as the user's tuning file");
  unlink(user);

  /* 3. A FIFO and a directory among the shipped files, beside a good one
   * (which still applies). */
  char *fifo = join(shipped, "a-fifo.txt");
  char *subdir = join(shipped, "b-dir.txt");
  char *good = join(shipped, "c-good.txt");
  char buf[512];
  if (mkfifo(fifo, 0644) != 0)
    tu_die("mkfifo %s: %s", fifo, strerror(errno));
  mkdir_p(subdir);
  snprintf(buf, sizeof buf, "match=%.3s\nreduce.groups_per_cu=3\n",
           device_name);
  write_text(good, buf);
  if (setenv("CLREDUCE_TUNING_DIR", shipped, 1) != 0)
    tu_die("setenv failed");
  ok &= child_run(cache, "a FIFO and a directory among the shipped files");
  if (ok) { /* would hang this process on a reader that blocks */
    clr_tuning t = tuning_at(cache);
    TU_CHECK(strcmp(seen_origin, good) == 0 && t.reduce_groups_per_cu == 3,
             "shipped FIFO: the regular shipped file still applies (%s)",
             seen_origin);
  }
  if (setenv("CLREDUCE_TUNING_DIR", no_tuning_dir, 1) != 0)
    tu_die("setenv failed");

  /* 4. A FIFO in place of a cache entry: a miss, replaced by a valid
   * entry. */
  if (l0.n >= 1) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", cache, l0.e[0].name);
    unlink(p);
    if (mkfifo(p, 0644) != 0)
      tu_die("mkfifo %s: %s", p, strerror(errno));
    if (child_run(cache, "a FIFO in place of a cache entry")) {
      size_t len = 0;
      struct stat st;
      int regular = lstat(p, &st) == 0 && S_ISREG(st.st_mode);
      unsigned char *b = regular ? tu_read_file(p, &len) : NULL;
      TU_CHECK(regular && entry_valid(b, len, NULL, NULL),
               "a FIFO in place of a cache entry: replaced by a valid entry");
      free(b);
    }
    /* A FIFO left in place would block this process below too. */
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISFIFO(st.st_mode))
      unlink(p);
  }
  list_cache(cache, &l1);
  TU_CHECK(l1.n == l0.n && l1.others == 0,
           "non-regular files: the cache keeps its %zu entries, no temporary "
           "files (%zu, %zu others)",
           l0.n, l1.n, l1.others);

  /* 5. A tuning file over 64 KiB (a setting, then a long comment): refused
   * whole, the defaults apply. */
  {
    size_t big = 70000;
    char *text = tu_xmalloc(big + 1);
    memset(text, ' ', big);
    memcpy(text, "reduce.wg=32\n#", 14);
    text[big - 1] = '\n';
    text[big] = '\0';
    write_text(user, text);
    free(text);
    c = context_at(kernel_src, cache);
    clr_tuning t = tuning_of(c);
    TU_CHECK(tu_same_tuning(&t, &defaults) &&
                 strncmp(seen_origin, "built-in", 8) == 0,
             "a 70 kB tuning file is refused whole: the defaults (%s)",
             seen_origin);
    reduce_ok(c, NULL, "oversized tuning file", NULL, NULL);
    clr_context_release(c);
    unlink(user);
  }

  free(fifo);
  free(subdir);
  free(good);
  free(tdir);
  free(shipped);
  end_case(dir, cache);
}

/* The number after key in text, or dflt. */
static size_t text_value(const char *text, const char *key, size_t dflt) {
  const char *p = strstr(text, key);
  return p ? (size_t)strtoul(p + strlen(key), NULL, 10) : dflt;
}

/* Legal but tiny scan tunings (scan.wg=1, scan.per_item=1 and both): every
 * tiled scan kernel still scans right, from a file and from
 * clr_set_tuning; the values are kept as given. */
static void test_tuning_tiny_scan(void) {
  static const char *texts[] = {"scan.wg=1\nscan.per_item=1\n",
                                "scan.wg=2\nscan.per_item=1\n",
                                "scan.wg=3\nscan.per_item=2\n"};
  static const clr_kernel tiled[] = {
      CLR_SCAN_KOGGE_STONE, CLR_SCAN_KOGGE_STONE_DB, CLR_SCAN_BRENT_KUNG};
  char *dir = new_case_dir("tuning-tiny-scan");
  char *cache = join(dir, "cache");
  char *tdir = join(cache, "tuning");
  char user[4096];
  mkdir_p(tdir);
  user_tuning_path(cache, user, sizeof user);
  int32_t *out = tu_xmalloc(N_SCAN * sizeof *out);
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    char what[128];
    snprintf(what, sizeof what, "%s", texts[i]);
    for (char *q = what; *q; q++)
      if (*q == '\n')
        *q = ' ';
    write_text(user, texts[i]);
    clr_context *c = context_at(kernel_src, cache);
    clr_tuning t = tuning_of(c);
    size_t want_wg = text_value(texts[i], "scan.wg=", defaults.scan_wg);
    size_t want_pi =
        text_value(texts[i], "scan.per_item=", defaults.scan_per_item);
    TU_CHECK(t.scan_wg == want_wg && t.scan_per_item == want_pi &&
                 strcmp(seen_origin, user) == 0,
             "tuning %s: read as given (scan wg %zu, per_item %zu)", what,
             t.scan_wg, t.scan_per_item);
    for (size_t k = 0; k < sizeof tiled / sizeof *tiled; k++) {
      char label[256];
      clr_options o;
      clr_options_init(&o);
      o.kernel = tiled[k];
      snprintf(label, sizeof label, "tuning %s, %s scan", what,
               clr_kernel_name(tiled[k]));
      scan_ok(c, &o, label, out, NULL);
    }
    clr_context_release(c);
  }
  unlink(user);

  /* The same through clr_set_tuning. */
  clr_context *c = context_at(kernel_src, cache);
  clr_tuning t = tuning_of(c);
  t.scan_wg = 1;
  t.scan_per_item = 1;
  if (TU_EXPECT_STATUS(clr_set_tuning(c, &t), CLR_OK,
                       "clr_set_tuning(scan_wg=1, scan_per_item=1)"))
    for (size_t k = 0; k < sizeof tiled / sizeof *tiled; k++) {
      char label[256];
      clr_options o;
      clr_options_init(&o);
      o.kernel = tiled[k];
      snprintf(label, sizeof label, "set tuning scan_wg=1 per_item=1, %s scan",
               clr_kernel_name(tiled[k]));
      scan_ok(c, &o, label, out, NULL);
    }
  clr_context_release(c);

  free(out);
  free(tdir);
  end_case(dir, cache);
}

/* ------------------------------------------------------------ main */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* tu_section, with the seconds the section took. */
static void section(const char *name, double *t0) {
  double t = now_s();
  printf("(%.1f s) ", t - *t0);
  tu_section(name);
  *t0 = t;
}

int main(int argc, char **argv) {
  const char *child_cache = NULL;
  int crash_at_load = 0, expect_no_device = 0;
  const tu_option options[] = {
      {"--work-dir", &work_dir, NULL},
      {"--kernel-dir", &kernel_src, NULL},
      {"--child-run", &child_cache, NULL},
      {"--child-crash-at-load", NULL, &crash_at_load},
      {"--child-expect-no-device", NULL, &expect_no_device}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  if (!kernel_src)
    kernel_src = getenv("CLREDUCE_KERNEL_DIR");
  if (!kernel_src || !*kernel_src)
    tu_die("--kernel-dir=DIR or CLREDUCE_KERNEL_DIR is needed");
  if (!work_dir)
    tu_die("--work-dir=DIR is needed");
  mkdir_p(work_dir);

  rdata = tu_xmalloc(N_REDUCE * sizeof *rdata);
  tu_fill(CLR_SUM, CLR_FLOAT, TU_RANDOM, rdata, N_REDUCE, 12345);
  if (child_cache && expect_no_device) {
    /* child_status: context creation must fail saying why. */
    clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                              .kernel_dir = kernel_src,
                              .cache_dir = ""};
    clr_context *cc = NULL;
    char detail[1024] = "";
    clr_status s = clr_context_create(&cfg, &cc, detail, sizeof detail);
    TU_CHECK(s == CLR_ERR_NO_DEVICE && !cc &&
                 strstr(detail, "clGetDeviceIDs") &&
                 strstr(detail, "CL_DEVICE_NOT_FOUND") &&
                 strstr(detail, "POCL_CACHE_DIR") && !strstr(detail, "matches"),
             "no device: %s: %s", clr_status_name(s), detail);
    if (cc)
      clr_context_release(cc);
    free(rdata);
    return tu_finish("test_cache_tuning --child-expect-no-device");
  }
  if (child_cache && crash_at_load) {
    /* child_status: death where the library hands the entry named by
     * CLR_TEST_CRASH_ENTRY to the driver, as a driver crashing on a lying
     * binary would die. */
    clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                              .kernel_dir = kernel_src,
                              .cache_dir = child_cache,
                              .log = crash_at_load_log,
                              .log_user = getenv("CLR_TEST_CRASH_ENTRY")};
    clr_context *cc = tu_context_from(&cfg);
    reduce_ok(cc, NULL, "child", NULL, NULL);
    clr_context_release(cc);
    free(rdata);
    return tu_finish("test_cache_tuning --child-crash-at-load");
  }
  if (child_cache) {
    /* child_run: one context and a reduction, then exit. */
    clr_context *cc = context_at(kernel_src, child_cache);
    reduce_ok(cc, NULL, "child", NULL, NULL);
    clr_context_release(cc);
    free(rdata);
    return tu_finish("test_cache_tuning --child-run");
  }

  /* No shipped file applies unless a case says so. */
  no_tuning_dir = new_case_dir("no-tuning");
  if (setenv("CLREDUCE_TUNING_DIR", no_tuning_dir, 1) != 0)
    tu_die("setenv failed");

  sdata = tu_xmalloc(N_SCAN * sizeof *sdata);
  sref = tu_xmalloc(N_SCAN * sizeof *sref);
  tu_fill(CLR_SUM, CLR_INT, TU_RANDOM, sdata, N_SCAN, 67890);
  uint32_t acc = 0;
  for (size_t i = 0; i < N_SCAN; i++) {
    acc += (uint32_t)sdata[i];
    sref[i] = (int32_t)acc;
  }

  clr_context *c = context_at(kernel_src, "");
  clr_device_desc dd;
  if (clr_context_device(c, &dd) != CLR_OK)
    tu_die("clr_context_device failed");
  snprintf(device_name, sizeof device_name, "%s", dd.device_name);
  defaults = tuning_of(c);
  TU_CHECK(strncmp(seen_origin, "built-in defaults", 17) == 0,
           "an empty $CLREDUCE_TUNING_DIR and no cache: built-in defaults "
           "(%s)",
           seen_origin);
  clr_context_release(c);
  printf("device: %s\n", device_name);
  /* Each case, then a section line with the seconds it took. */
  static const struct {
    void (*run)(void);
    const char *section;
  } cases[] = {
      {test_cache_fill_and_damage,
       "binary cache: fill, reuse, damage, rewrite"},
      {test_cache_source_key, "binary cache: keyed on the source"},
      {test_cache_unwritable, "binary cache: unusable directory"},
      {test_cache_entry_damage,
       "binary cache: every position of an entry damaged"},
      {test_cache_crafted_entries,
       "binary cache: crafted entries with lying payloads"},
      {test_cache_crash_at_load, "binary cache: a crash while loading"},
      {test_cache_cap, "binary cache: the size cap, least recently used first"},
      {test_pocl_cache_unwritable, "device: PoCL without a cache directory"},
      {test_tuning_files, "tuning: shipped and user files"},
      {test_tuning_bad_values, "tuning: bad values"},
      {test_tuning_not_regular, "tuning: FIFOs, devices and oversized files"},
      {test_tuning_tiny_scan, "tuning: tiny scan tiles"},
      {test_set_tuning, "tuning: clr_set_tuning"},
      {test_autotune, "tuning: clr_autotune"},
  };
  double t0 = now_s();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cases[i].run();
    section(cases[i].section, &t0);
  }

  tf_remove_tree(no_tuning_dir);
  free(no_tuning_dir);
  free(rdata);
  free(sdata);
  free(sref);
  return tu_finish("test_cache_tuning");
}
