/* The program cache seen and cleared without a context: clr_cache_dir,
 * clr_cache_usage and clr_cache_clear.
 *
 * The directory: config->cache_dir, $CLREDUCE_CACHE_DIR,
 * $XDG_CACHE_HOME/clreduce, $HOME/.cache/clreduce in that order, "" when
 * disabled (an empty config or variable, none of them, a name too long);
 * a buffer one byte short or NULL refused.  The cap from
 * $CLREDUCE_CACHE_MAX_BYTES.  A missing directory holds nothing and
 * clears to nothing.  A context on a fresh directory fills it; the usage
 * counts exactly its *.clbin files (not temporary files, marks, tuning/,
 * other files, nor a link named like an entry).  Clearing removes those
 * entries (counted, with their bytes), a stopped process's loading mark
 * whose entry went, and nothing else: the user's tuning file, a live
 * process's mark, a temporary file and other files stay, and an entry
 * opened before the clear still reads whole.  Afterwards the usage is 0
 * and the same context and a new one still reduce right (and fill the
 * cache again).  A disabled cache: "", 0 entries, nothing cleared.  A
 * cache path that is a file: CLR_ERR_IO with the path in the detail.
 * (As root, directory permissions cannot be tested: skipped, said so.)
 *
 * --no-device: the same with entries made by hand, and no context, so no
 * OpenCL call at all: cheap under valgrind, and run without any OpenCL
 * platform.
 *
 *   test_cache_clear --work-dir=DIR [--kernel-dir=DIR] [--no-device] [-v] */
#include "test_files.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *kernel_src;
static const char *work_dir;
static int no_device; /* --no-device: entries made by hand, no context */

#define N 4099

/* ------------------------------------------------------------ files */

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) == EOF || fclose(f) != 0)
    tu_die("cannot write %s: %s", path, strerror(errno));
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* The *.clbin regular files of dir, counted here independently of the
 * library; the first one's name into first (may be NULL). */
static uint64_t count_entries(const char *dir, uint64_t *bytes, char *first,
                              size_t first_size) {
  uint64_t n = 0;
  *bytes = 0;
  if (first && first_size)
    first[0] = '\0';
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    char p[4096];
    struct stat st;
    if (len < 7 || strcmp(e->d_name + len - 6, ".clbin") != 0)
      continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (first && !first[0])
      snprintf(first, first_size, "%s", e->d_name);
    n++;
    *bytes += (uint64_t)st.st_size;
  }
  closedir(d);
  return n;
}

/* The start time of this process (field 22 of /proc/self/stat), as the
 * library writes it into a loading mark. */
static unsigned long long own_start(void) {
  char buf[1024];
  FILE *f = fopen("/proc/self/stat", "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  for (int field = 2; field < 22 && p; field++)
    p = strchr(p + 1, ' ');
  return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The id of a process that has exited (a child, reaped). */
static long dead_pid(void) {
  pid_t pid = fork();
  if (pid < 0)
    tu_die("fork: %s", strerror(errno));
  if (pid == 0)
    _exit(0);
  waitpid(pid, NULL, 0);
  return (long)pid;
}

/* ------------------------------------------------------------ env */

static void set_env(const char *name, const char *value) {
  if (value ? setenv(name, value, 1) : unsetenv(name))
    tu_die("setenv %s: %s", name, strerror(errno));
}

static void expect_dir(const clr_context_config *cfg, const char *want,
                       const char *what) {
  char buf[4096] = "x";
  clr_status s = clr_cache_dir(cfg, buf, sizeof buf);
  TU_CHECK(s == CLR_OK && strcmp(buf, want) == 0,
           "clr_cache_dir, %s: %s '%s' (want '%s')", what, clr_status_name(s),
           buf, want);
}

/* ------------------------------------------------------------ cases */

static void test_resolution(void) {
  char *saved[3];
  const char *names[3] = {"CLREDUCE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(names[i]);
    saved[i] = v ? strcpy(tu_xmalloc(strlen(v) + 1), v) : NULL;
  }
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .cache_dir = "/conf/cache"};
  set_env("CLREDUCE_CACHE_DIR", "/env/cache");
  set_env("XDG_CACHE_HOME", "/xdg");
  set_env("HOME", "/home/u");
  expect_dir(&cfg, "/conf/cache", "config first");
  expect_dir(NULL, "/env/cache", "$CLREDUCE_CACHE_DIR (config NULL)");
  cfg.cache_dir = NULL;
  expect_dir(&cfg, "/env/cache", "$CLREDUCE_CACHE_DIR (cache_dir NULL)");
  cfg.cache_dir = "";
  expect_dir(&cfg, "", "config \"\" disables");
  set_env("CLREDUCE_CACHE_DIR", "");
  expect_dir(NULL, "", "$CLREDUCE_CACHE_DIR \"\" disables");
  set_env("CLREDUCE_CACHE_DIR", NULL);
  expect_dir(NULL, "/xdg/clreduce", "$XDG_CACHE_HOME/clreduce");
  set_env("XDG_CACHE_HOME", "");
  expect_dir(NULL, "/home/u/.cache/clreduce", "~/.cache/clreduce");
  set_env("XDG_CACHE_HOME", NULL);
  expect_dir(NULL, "/home/u/.cache/clreduce", "~/.cache/clreduce (no XDG)");
  set_env("HOME", NULL);
  expect_dir(NULL, "", "neither XDG_CACHE_HOME nor HOME: disabled");

  /* A name no file call could open disables the cache. */
  char *longname = tu_xmalloc(5001);
  memset(longname, 'a', 5000);
  longname[0] = '/';
  longname[5000] = '\0';
  cfg.cache_dir = longname;
  expect_dir(&cfg, "", "a name of 5000 bytes disables");
  uint64_t entries = 1, bytes = 1;
  clr_status s = clr_cache_usage(&cfg, &entries, &bytes, NULL, NULL, 0);
  TU_CHECK(s == CLR_OK && entries == 0 && bytes == 0,
           "usage of a too-long name: %s %llu %llu", clr_status_name(s),
           (unsigned long long)entries, (unsigned long long)bytes);
  free(longname);

  /* The buffer: the name and its NUL, no less. */
  char buf[32];
  cfg.cache_dir = "/conf/cache"; /* 11 bytes */
  s = clr_cache_dir(&cfg, buf, 12);
  TU_CHECK(s == CLR_OK && strcmp(buf, "/conf/cache") == 0,
           "a buffer of the name and its NUL: %s", clr_status_name(s));
  memcpy(buf, "junk", 5);
  s = clr_cache_dir(&cfg, buf, 11);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT && buf[0] == '\0',
           "a buffer one byte short: %s, buf '%s'", clr_status_name(s), buf);
  s = clr_cache_dir(&cfg, NULL, 12);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "clr_cache_dir(buf NULL)");
  s = clr_cache_dir(&cfg, buf, 0);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "clr_cache_dir(size 0)");
  cfg.cache_dir = "";
  s = clr_cache_dir(&cfg, buf, 1);
  TU_CHECK(s == CLR_OK && buf[0] == '\0', "disabled fits one byte: %s",
           clr_status_name(s));

  for (int i = 0; i < 3; i++) {
    set_env(names[i], saved[i]);
    free(saved[i]);
  }
  tu_section("directory resolution");
}

static void expect_cap(const char *env, uint64_t want) {
  uint64_t cap = 12345;
  set_env("CLREDUCE_CACHE_MAX_BYTES", env);
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .cache_dir = ""};
  clr_status s = clr_cache_usage(&cfg, NULL, NULL, &cap, NULL, 0);
  TU_CHECK(s == CLR_OK && cap == want,
           "cap with CLREDUCE_CACHE_MAX_BYTES=%s: %s %llu (want %llu)",
           env ? env : "(unset)", clr_status_name(s), (unsigned long long)cap,
           (unsigned long long)want);
}

static void test_cap(void) {
  const char *v = getenv("CLREDUCE_CACHE_MAX_BYTES");
  char *saved = v ? strcpy(tu_xmalloc(strlen(v) + 1), v) : NULL;
  expect_cap(NULL, (uint64_t)256 << 20);
  expect_cap("", (uint64_t)256 << 20);
  expect_cap("0", 0);
  expect_cap("64M", (uint64_t)64 << 20);
  expect_cap("3k", 3072);
  expect_cap("2G", (uint64_t)2 << 30);
  expect_cap("12345", 12345);
  expect_cap("lots", (uint64_t)256 << 20);
  expect_cap("-1", (uint64_t)256 << 20);
  set_env("CLREDUCE_CACHE_MAX_BYTES", saved);
  free(saved);
  tu_section("the cap");
}

static void test_missing_and_disabled(const char *base) {
  char dir[4200], detail[256] = "x";
  snprintf(dir, sizeof dir, "%s/never/made", base);
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .cache_dir = dir};
  uint64_t entries = 9, bytes = 9, removed = 9, freed = 9;
  clr_status s =
      clr_cache_usage(&cfg, &entries, &bytes, NULL, detail, sizeof detail);
  TU_CHECK(s == CLR_OK && entries == 0 && bytes == 0 && detail[0] == '\0',
           "usage of a missing directory: %s %llu %llu '%s'",
           clr_status_name(s), (unsigned long long)entries,
           (unsigned long long)bytes, detail);
  s = clr_cache_clear(&cfg, &removed, &freed, detail, sizeof detail);
  TU_CHECK(s == CLR_OK && removed == 0 && freed == 0 && !exists(dir),
           "clear of a missing directory: %s %llu, not made",
           clr_status_name(s), (unsigned long long)removed);

  cfg.cache_dir = "";
  entries = bytes = removed = freed = 9;
  s = clr_cache_usage(&cfg, &entries, &bytes, NULL, NULL, 0);
  TU_CHECK(s == CLR_OK && entries == 0 && bytes == 0,
           "usage of a disabled cache: %s %llu %llu", clr_status_name(s),
           (unsigned long long)entries, (unsigned long long)bytes);
  s = clr_cache_clear(&cfg, &removed, &freed, NULL, 0);
  TU_CHECK(s == CLR_OK && removed == 0 && freed == 0,
           "clear of a disabled cache: %s %llu", clr_status_name(s),
           (unsigned long long)removed);
  s = clr_cache_clear(&cfg, NULL, NULL, NULL, 0);
  TU_EXPECT_STATUS(s, CLR_OK, "clear with every output NULL");

  /* A file where the directory should be. */
  char file[4200];
  snprintf(file, sizeof file, "%s/a-file", base);
  write_text(file, "not a directory\n");
  cfg.cache_dir = file;
  s = clr_cache_usage(&cfg, &entries, &bytes, NULL, detail, sizeof detail);
  TU_CHECK(s == CLR_ERR_IO && entries == 0 && strstr(detail, file) &&
               strstr(detail, "cannot read"),
           "usage of a file: %s '%s'", clr_status_name(s), detail);
  s = clr_cache_clear(&cfg, &removed, &freed, detail, sizeof detail);
  TU_CHECK(
      s == CLR_ERR_IO && removed == 0 && strstr(detail, file) && exists(file),
      "clear of a file: %s '%s', the file kept", clr_status_name(s), detail);
  tu_section("missing, disabled and unreadable caches");
}

/* A float sum of N ones on ctx. */
static int sum_ok(clr_context *ctx, const float *x, const char *what) {
  clr_value v;
  memset(&v, 0, sizeof v);
  clr_status s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, N, &v);
  return TU_CHECK(s == CLR_OK && v.v.f == (float)N, "%s: sum %s %g", what,
                  clr_status_name(s), (double)v.v.f);
}

static void test_fill_and_clear(const char *base) {
  char dir[4200], tuning[4300], path[4400], first[64];
  char live[4400], dead[4400], orphan[4400], tmp[4400], other[4400], lnk[4400];
  snprintf(dir, sizeof dir, "%s/cache", base);
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_src,
                            .cache_dir = dir};
  float *x = tu_xmalloc(N * sizeof *x);
  for (size_t i = 0; i < N; i++)
    x[i] = 1.0f;

  clr_context *ctx = NULL;
  clr_status s = CLR_OK;
  if (no_device) {
    /* Entries made by hand: the calls read names and sizes only. */
    mkdir(dir, 0755);
    for (int i = 0; i < 3; i++) {
      char name[4300], text[64];
      snprintf(name, sizeof name, "%s/%032x.clbin", dir, 0xabc0 + i);
      snprintf(text, sizeof text, "CLRBIN2\n fake entry %.*s\n", 10 * i,
               "0123456789012345678901234567890123456789");
      write_text(name, text);
    }
  } else {
    ctx = tu_context_from(&cfg);
    sum_ok(ctx, x, "a fresh cache");
    int32_t in[N], out[N];
    for (size_t i = 0; i < N; i++)
      in[i] = 1;
    s = clr_scan_host(ctx, NULL, CLR_SUM, CLR_INT, in, out, N);
    TU_CHECK(s == CLR_OK && out[N - 1] == N, "a scan: %s", clr_status_name(s));
  }

  uint64_t want_bytes = 0;
  uint64_t want = count_entries(dir, &want_bytes, first, sizeof first);
  uint64_t entries = 0, bytes = 0, cap = 1;
  char detail[512] = "x";
  s = clr_cache_usage(&cfg, &entries, &bytes, &cap, detail, sizeof detail);
  TU_CHECK(s == CLR_OK && want >= 2 && entries == want && bytes == want_bytes &&
               bytes > 0 && detail[0] == '\0',
           "usage after a sum and a scan: %s %llu entries of %llu bytes "
           "(counted here: %llu of %llu)",
           clr_status_name(s), (unsigned long long)entries,
           (unsigned long long)bytes, (unsigned long long)want,
           (unsigned long long)want_bytes);

  /* What must survive a clear, and what must not count. */
  snprintf(tuning, sizeof tuning, "%s/tuning", dir);
  mkdir(tuning, 0755);
  snprintf(path, sizeof path, "%s/tuning/Some_device.txt", dir);
  write_text(path, "reduce.wg=64\n");
  snprintf(live, sizeof live, "%s/%s.loading", dir, first);
  char text[64];
  snprintf(text, sizeof text, "%ld %llu\n", (long)getpid(), own_start());
  write_text(live, text); /* this process is loading the first entry */
  snprintf(dead, sizeof dead, "%s/0123456789abcdef0123456789abcdef.clbin", dir);
  write_text(dead, "an entry a crashed process was loading");
  snprintf(dead, sizeof dead,
           "%s/0123456789abcdef0123456789abcdef.clbin.loading", dir);
  snprintf(text, sizeof text, "%ld 12345\n", dead_pid());
  write_text(dead, text);
  snprintf(orphan, sizeof orphan,
           "%s/fedcba9876543210fedcba9876543210.clbin.loading", dir);
  write_text(orphan, text); /* a stopped process's, its entry long gone */
  snprintf(tmp, sizeof tmp, "%s/%s.Ab12Cd", dir, first);
  write_text(tmp, "a write in progress");
  snprintf(other, sizeof other, "%s/README", dir);
  write_text(other, "not the library's\n");
  snprintf(lnk, sizeof lnk, "%s/ffffffffffffffffffffffffffffffff.clbin", dir);
  if (symlink(path, lnk) != 0)
    tu_die("symlink %s: %s", lnk, strerror(errno));

  want = count_entries(dir, &want_bytes, NULL, 0);
  s = clr_cache_usage(&cfg, &entries, &bytes, NULL, NULL, 0);
  TU_CHECK(s == CLR_OK && entries == want && bytes == want_bytes,
           "usage counts only the entries: %llu of %llu bytes (want %llu of "
           "%llu)",
           (unsigned long long)entries, (unsigned long long)bytes,
           (unsigned long long)want, (unsigned long long)want_bytes);

  /* The same through the environment (config NULL). */
  const char *v = getenv("CLREDUCE_CACHE_DIR");
  char *saved = v ? strcpy(tu_xmalloc(strlen(v) + 1), v) : NULL;
  set_env("CLREDUCE_CACHE_DIR", dir);
  uint64_t env_entries = 0;
  s = clr_cache_usage(NULL, &env_entries, NULL, NULL, NULL, 0);
  TU_CHECK(s == CLR_OK && env_entries == want,
           "usage through $CLREDUCE_CACHE_DIR: %llu",
           (unsigned long long)env_entries);
  set_env("CLREDUCE_CACHE_DIR", saved);
  free(saved);

  /* An entry another process has open keeps its bytes after the clear. */
  char entry[4400];
  snprintf(entry, sizeof entry, "%s/%s", dir, first);
  int fd = open(entry, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0)
    tu_die("open %s: %s", entry, strerror(errno));

  uint64_t removed = 0, freed = 0;
  s = clr_cache_clear(&cfg, &removed, &freed, detail, sizeof detail);
  TU_CHECK(s == CLR_OK && removed == want && freed == want_bytes &&
               detail[0] == '\0',
           "clear: %s, %llu removed, %llu bytes (want %llu, %llu) '%s'",
           clr_status_name(s), (unsigned long long)removed,
           (unsigned long long)freed, (unsigned long long)want,
           (unsigned long long)want_bytes, detail);
  uint64_t left_bytes = 0;
  TU_CHECK(count_entries(dir, &left_bytes, NULL, 0) == 0 && !exists(entry) &&
               !exists(dead),
           "no entry left");
  s = clr_cache_usage(&cfg, &entries, &bytes, NULL, NULL, 0);
  TU_CHECK(s == CLR_OK && entries == 0 && bytes == 0,
           "usage after the clear: %llu entries of %llu bytes",
           (unsigned long long)entries, (unsigned long long)bytes);
  FILE *f = fopen(path, "r");
  char line[64] = "";
  if (f) {
    if (!fgets(line, sizeof line, f))
      line[0] = '\0';
    fclose(f);
  }
  TU_CHECK(strcmp(line, "reduce.wg=64\n") == 0, "the tuning file survives");
  TU_CHECK(exists(live), "a live process's loading mark stays");
  TU_CHECK(!exists(dead), "a stopped process's mark goes with its entry");
  TU_CHECK(!exists(orphan), "a stopped process's orphan mark goes");
  TU_CHECK(exists(tmp), "a temporary file stays");
  TU_CHECK(exists(other), "another file stays");
  TU_CHECK(exists(lnk) && exists(path), "a link named like an entry stays");

  /* The open entry still reads whole. */
  unsigned char *buf = tu_xmalloc((size_t)st.st_size);
  ssize_t got = pread(fd, buf, (size_t)st.st_size, 0);
  TU_CHECK(got == st.st_size && memcmp(buf, "CLRBIN", 6) == 0,
           "an entry opened before the clear reads whole (%zd of %lld)", got,
           (long long)st.st_size);
  free(buf);
  close(fd);

  /* The context and a new one work on, and fill the cache again. */
  unlink(live);
  unlink(lnk);
  if (!no_device) {
    sum_ok(ctx, x, "the same context after the clear");
    clr_context_release(ctx);
    ctx = tu_context_from(&cfg);
    sum_ok(ctx, x, "a new context after the clear");
    clr_context_release(ctx);
    s = clr_cache_usage(&cfg, &entries, &bytes, NULL, NULL, 0);
    TU_CHECK(s == CLR_OK && entries >= 1 && bytes > 0,
             "the cache fills again: %llu entries",
             (unsigned long long)entries);
  }

  /* A clear that cannot remove: a directory without write permission. */
  if (geteuid() == 0) {
    printf("skipped: an unwritable cache directory (running as root)\n");
  } else {
    snprintf(path, sizeof path, "%s/%032x.clbin", dir, 0xdef);
    write_text(path, "an entry that cannot go");
    chmod(dir, 0555);
    s = clr_cache_clear(&cfg, &removed, &freed, detail, sizeof detail);
    TU_CHECK(s == CLR_ERR_IO && removed == 0 && strstr(detail, "cannot remove"),
             "clear of an unwritable directory: %s '%s'", clr_status_name(s),
             detail);
    chmod(dir, 0755);
  }
  free(x);
  tu_section("fill, count and clear");
}

int main(int argc, char **argv) {
  const tu_option options[] = {{"--work-dir", &work_dir, NULL},
                               {"--kernel-dir", &kernel_src, NULL},
                               {"--no-device", NULL, &no_device}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  if (!kernel_src)
    kernel_src = getenv("CLREDUCE_KERNEL_DIR");
  if ((!kernel_src || !*kernel_src) && !no_device)
    tu_die("--kernel-dir=DIR or CLREDUCE_KERNEL_DIR is needed");
  if (!work_dir)
    tu_die("--work-dir=DIR is needed");
  if (mkdir(work_dir, 0755) != 0 && errno != EEXIST)
    tu_die("mkdir %s: %s", work_dir, strerror(errno));
  char base[4096];
  snprintf(base, sizeof base, "%s/case-XXXXXX", work_dir);
  if (!mkdtemp(base))
    tu_die("mkdtemp %s: %s", base, strerror(errno));

  test_resolution();
  test_cap();
  test_missing_and_disabled(base);
  test_fill_and_clear(base);

  int rc = tu_finish("test_cache_clear");
  if (rc == 0)
    tf_remove_tree(base);
  return rc;
}
