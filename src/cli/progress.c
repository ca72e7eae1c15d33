/* The progress line (progress.h): one thread redraws it every 200 ms
 * under a lock that messages take too.  The command's own state: one
 * line a process, as there is one stderr. */
#include "progress.h"

#include "cli.h"

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

static void *ticker(void *unused) {
  (void)unused;
  pthread_mutex_lock(&pg.lock);
  while (!pg.stop) {
    double t = now_s() - pg.start;
    if (t >= pg.delay && pg.phase[0]) {
      fprintf(stderr, "%s%s, %.0f s", pg.tty ? "\r\033[K" : "\r", pg.phase, t);
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
  int rc = pthread_create(&pg.thread, NULL, ticker, NULL) == 0 ? 0 : -1;
  pg.running = rc == 0;
  pthread_mutex_unlock(&pg.lock);
  if (rc == 0)
    cli_before_message = cli_progress_clear;
  return rc;
}

void cli_progress_phase(const char *fmt, ...) {
  pthread_mutex_lock(&pg.lock);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pg.phase, sizeof pg.phase, fmt, ap);
  va_end(ap);
  if (pg.running && pg.delay == 0.0) /* asked: each phase as it comes */
    pthread_cond_signal(&pg.wake);
  pthread_mutex_unlock(&pg.lock);
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
}
