/* Tuning files: small "key=value" text files, one per device.
 *
 *   # comment
 *   match=H100              (shipped files: a substring of the device name)
 *   reduce.wg=256
 *   reduce.vec_bytes=16
 *   reduce.layout=strided   (or contiguous)
 *   reduce.groups_per_cu=8
 *   scan.wg=256
 *   scan.per_item=1
 *   scan.kernel=decoupled   (the scan used when none is named)
 *   decoupled.items=8       (elements per work-item of the decoupled scan)
 *   decoupled.wg=128        (its work-group size)
 *
 * Shipped files live in data/tuning/ (installed to share/clreduce/tuning,
 * or $CLREDUCE_TUNING_DIR); the most specific match (longest match=) wins.
 * The user's file, written by clr_autotune, is <cache dir>/tuning/<device
 * name with every character but letters and digits replaced by _>.txt and
 * overrides the shipped one.  Unknown keys are ignored; bad values are
 * ignored key by key, so a damaged file cannot make a context unusable. */
#include "clr_config.h"
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0)
    return 0;
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return 1;
  }
  return 0;
}

static void trim(char *s) {
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  size_t i = 0;
  while (s[i] && isspace((unsigned char)s[i]))
    i++;
  memmove(s, s + i, strlen(s + i) + 1);
}

static int parse_size(const char *v, size_t lo, size_t hi, size_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || end == v || *end || !isdigit((unsigned char)v[0]) || x < lo ||
      x > hi)
    return 0;
  *out = (size_t)x;
  return 1;
}

/* Apply one file to t; writes the match= value into match (may be NULL).
 * Returns 0 when the file cannot be read. */
static int read_file(const char *path, clr_tuning *t, char *match,
                     size_t match_size) {
  FILE *f = fopen(path, "r");
  char line[512];
  if (!f)
    return 0;
  if (match && match_size)
    match[0] = '\0';
  while (fgets(line, sizeof line, f)) {
    /* A line longer than the buffer: keep its start, drop the rest, so
     * the tail of a long comment is never read as a setting. */
    if (!strchr(line, '\n')) {
      int c;
      while ((c = getc(f)) != EOF && c != '\n')
        ;
    }
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    char *eq = strchr(line, '=');
    if (!eq)
      continue;
    *eq = '\0';
    char *key = line, *val = eq + 1;
    trim(key);
    trim(val);
    size_t x;
    if (strcmp(key, "match") == 0 && match)
      snprintf(match, match_size, "%s", val);
    else if (!t)
      continue;
    else if (strcmp(key, "reduce.wg") == 0 && parse_size(val, 1, 65536, &x))
      t->reduce_wg = x;
    else if (strcmp(key, "reduce.vec_bytes") == 0 &&
             parse_size(val, 1, 128, &x))
      t->reduce_vec_bytes = (unsigned)x;
    else if (strcmp(key, "reduce.layout") == 0 && strcmp(val, "strided") == 0)
      t->reduce_layout = CLR_LAYOUT_STRIDED;
    else if (strcmp(key, "reduce.layout") == 0 &&
             strcmp(val, "contiguous") == 0)
      t->reduce_layout = CLR_LAYOUT_CONTIGUOUS;
    else if (strcmp(key, "reduce.groups_per_cu") == 0 &&
             parse_size(val, 1, 1024, &x))
      t->reduce_groups_per_cu = (unsigned)x;
    else if (strcmp(key, "scan.wg") == 0 && parse_size(val, 1, 65536, &x))
      t->scan_wg = x;
    else if (strcmp(key, "scan.per_item") == 0 &&
             parse_size(val, 1, 1 << 20, &x))
      t->scan_per_item = x;
    else if (strcmp(key, "scan.kernel") == 0) {
      clr_kernel k;
      if (clr_kernel_from_name(val, &k) == CLR_OK && clr_kernel_is_scan(k))
        t->scan_kernel = k;
    } else if (strcmp(key, "decoupled.items") == 0 &&
               parse_size(val, 1, 64, &x))
      t->decoupled_items = x;
    else if (strcmp(key, "decoupled.wg") == 0 && parse_size(val, 1, 65536, &x))
      t->decoupled_wg = x;
  }
  fclose(f);
  return 1;
}

static const char *shipped_dir(void) {
  const char *env = getenv("CLREDUCE_TUNING_DIR");
  struct stat st;
  if (env && *env)
    return env;
  if (stat(CLR_INSTALLED_TUNING_DIR, &st) == 0)
    return CLR_INSTALLED_TUNING_DIR;
  return CLR_SOURCE_TUNING_DIR;
}

static void load_shipped(clr_context *ctx) {
  const char *dir = shipped_dir();
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
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (!read_file(path, NULL, match, sizeof match))
      continue;
    size_t ml = strlen(match);
    if (contains_nocase(ctx->desc.device_name, match) &&
        (ml > best_len || (ml == best_len && strcmp(path, best) < 0))) {
      best_len = ml;
      snprintf(best, sizeof best, "%s", path);
    }
  }
  closedir(d);
  if (best_len && read_file(best, &ctx->tuning, NULL, 0))
    snprintf(ctx->tuning.origin, sizeof ctx->tuning.origin, "%s", best);
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
  load_shipped(ctx);
  if (clr_user_tuning_path(ctx, path, sizeof path) &&
      read_file(path, &ctx->tuning, NULL, 0))
    snprintf(ctx->tuning.origin, sizeof ctx->tuning.origin, "%s", path);
}

CLR_API clr_status clr_get_tuning(const clr_context *ctx, clr_tuning *out) {
  if (!ctx || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  *out = ctx->tuning;
  return CLR_OK;
}

CLR_API clr_status clr_set_tuning(clr_context *ctx, const clr_tuning *t) {
  if (!ctx || !t)
    return CLR_ERR_INVALID_ARGUMENT;
  if (t->reduce_wg == 0 || t->scan_wg == 0 || t->scan_per_item == 0 ||
      !clr_kernel_is_scan(t->scan_kernel) || t->decoupled_items == 0 ||
      t->decoupled_items > 64 || t->decoupled_wg == 0 ||
      t->reduce_vec_bytes == 0 || t->reduce_groups_per_cu == 0 ||
      (t->reduce_layout != CLR_LAYOUT_STRIDED &&
       t->reduce_layout != CLR_LAYOUT_CONTIGUOUS))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "tuning values must be positive, with a concrete layout");
  ctx->tuning = *t;
  return CLR_OK;
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

clr_status clr_save_tuning(clr_context *ctx, const char *path) {
  char tmp[4200];
  const clr_tuning *t = &ctx->tuning;
  if (make_parent_dirs(path) != 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "cannot create %s: %s", path,
                    strerror(errno));
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "cannot write %s: %s", tmp,
                    strerror(errno));
  fprintf(f,
          "# clreduce tuning, written by clr_autotune\n"
          "# device: %s\n# driver: %s\n"
          "reduce.wg=%zu\nreduce.vec_bytes=%u\nreduce.layout=%s\n"
          "reduce.groups_per_cu=%u\nscan.wg=%zu\nscan.per_item=%zu\n"
          "scan.kernel=%s\ndecoupled.items=%zu\ndecoupled.wg=%zu\n",
          ctx->desc.device_name, ctx->desc.driver_version, t->reduce_wg,
          t->reduce_vec_bytes,
          t->reduce_layout == CLR_LAYOUT_STRIDED ? "strided" : "contiguous",
          t->reduce_groups_per_cu, t->scan_wg, t->scan_per_item,
          clr_kernel_name(t->scan_kernel), t->decoupled_items, t->decoupled_wg);
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "cannot write %s", path);
  }
  return CLR_OK;
}
