/* The progress line (progress.h): one thread redraws it every 200 ms
 * under a lock that messages take too.  The command's own state: one
 * line a process, as there is one stderr. */
#include "progress.h"

#include "cli.h"
#include "fileio.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t thread;
  int running, stop, drawn, tty;
  double start, delay; /* seconds */
  char phase[160];
  /* how far the phase is: src/check's work, or (bytes) an input's bytes
   * read, which cli_read_progress sets under the lock */
  clr_progress counter;
  int bytes;
} pg = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* (under the lock) */
static void clear_line(void) {
  if (!pg.drawn)
    return;
  /* a terminal: back to the line's start and erase it; elsewhere the
   * line ends, so what follows starts a line of its own */
  fputs(pg.tty ? "\r\033[K" : "\n", stderr);
  fflush(stderr);
  pg.drawn = 0;
}

/* b bytes as "812 bytes", "1.5 KiB", "23.4 MiB", "1.2 GiB". */
static void format_bytes(char *buf, size_t size, uint64_t b) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (b < 1024) {
    snprintf(buf, size, "%" PRIu64 " bytes", b);
    return;
  }
  double x = (double)b / 1024;
  int u = 0;
  for (; x >= 1024 && u < 3; u++)
    x /= 1024;
  snprintf(buf, size, "%.1f %s", x, units[u]);
}

void cli_progress_format(char *buf, size_t size, const char *phase,
                         const clr_progress *c, int bytes, double seconds) {
  char how[64] = "", n1[32];
  uint64_t done = atomic_load_explicit(&c->done, memory_order_relaxed);
  uint64_t total = atomic_load_explicit(&c->total, memory_order_relaxed);
  double f = clr_progress_fraction(c);
  if (bytes && total) {
    format_bytes(n1, sizeof n1, total);
    snprintf(how, sizeof how, ": %d%% of %s", (int)(100 * f), n1);
  } else if (bytes) {
    format_bytes(n1, sizeof n1, done);
    snprintf(how, sizeof how, ": %s so far", n1);
  } else if (f >= 0) {
    snprintf(how, sizeof how, ": %d%%", (int)(100 * f));
  }
  snprintf(buf, size, "%s%s, %.0f s", phase, how, seconds);
}

/* fileio.c's reads of --input (and --input2, --segments, --ranges) while
 * the line is on: bytes read of the bytes expected (0: a stream of
 * unknown length). */
static void read_progress(size_t done, size_t expect) {
  pthread_mutex_lock(&pg.lock);
  pg.bytes = 1;
  atomic_store_explicit(&pg.counter.total, expect, memory_order_relaxed);
  atomic_store_explicit(&pg.counter.done, done, memory_order_relaxed);
  pthread_mutex_unlock(&pg.lock);
}

static void *ticker(void *unused) {
  (void)unused;
  pthread_mutex_lock(&pg.lock);
  while (!pg.stop) {
    double t = now_s() - pg.start;
    if (t >= pg.delay && pg.phase[0]) {
      char line[320];
      cli_progress_format(line, sizeof line, pg.phase, &pg.counter, pg.bytes,
                          t);
      fprintf(stderr, "%s%s", pg.tty ? "\r\033[K" : "\r", line);
      fflush(stderr);
      pg.drawn = 1;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&pg.wake, &pg.lock, &until);
  }
  clear_line();
  pthread_mutex_unlock(&pg.lock);
  return NULL;
}

int cli_progress_start(int asked) {
  int tty = isatty(STDERR_FILENO);
  if (!asked && !tty)
    return 0;
  pthread_mutex_lock(&pg.lock);
  pg.tty = tty;
  pg.start = now_s();
  pg.delay = asked ? 0.0 : 2.0;
  pg.stop = 0;
  pg.drawn = 0;
  pg.phase[0] = '\0';
  pg.bytes = 0;
  clr_progress_reset(&pg.counter);
  int rc = pthread_create(&pg.thread, NULL, ticker, NULL) == 0 ? 0 : -1;
  pg.running = rc == 0;
  pthread_mutex_unlock(&pg.lock);
  if (rc == 0) {
    cli_before_message = cli_progress_clear;
    /* how far: only while the line is drawn (off, the loops only find
     * these NULL) */
    clr_progress_now = &pg.counter;
    cli_read_progress = read_progress;
  }
  return rc;
}

/* The phase, its work planned (0: none). */
static void set_phase(uint64_t work, const char *fmt, va_list ap) {
  pthread_mutex_lock(&pg.lock);
  vsnprintf(pg.phase, sizeof pg.phase, fmt, ap);
  pg.bytes = 0;
  clr_progress_reset(&pg.counter);
  atomic_store_explicit(&pg.counter.total, work, memory_order_relaxed);
  if (pg.running && pg.delay == 0.0) /* asked: each phase as it comes */
    pthread_cond_signal(&pg.wake);
  pthread_mutex_unlock(&pg.lock);
}

void cli_progress_phase(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_phase(0, fmt, ap);
  va_end(ap);
}

void cli_progress_phase_work(uint64_t work, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_phase(work, fmt, ap);
  va_end(ap);
}

void cli_progress_clear(void) {
  pthread_mutex_lock(&pg.lock);
  clear_line();
  pthread_mutex_unlock(&pg.lock);
}

void cli_progress_stop(void) {
  pthread_mutex_lock(&pg.lock);
  int running = pg.running;
  pg.stop = 1;
  pg.running = 0;
  pthread_cond_signal(&pg.wake);
  pthread_mutex_unlock(&pg.lock);
  if (running)
    pthread_join(pg.thread, NULL);
  cli_before_message = NULL;
  clr_progress_now = NULL;
  cli_read_progress = NULL;
}
