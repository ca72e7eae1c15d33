/* The staging's helper threads, kept by a context between calls.
 *
 * A staged transfer (pinned.c) runs one function on several threads at
 * once.  Starting them for every call cost about 13 us a thread, on the
 * calling thread, before the copy could run at full width (traced on an
 * H100's host: the first block of 1e8 floats took 404-563 us, against
 * 215-340 with the crew; docs/perf-log/staging.md).  The crew starts them once,
 * on the first call that wants them, and parks them on a condition variable
 * between calls (no CPU time).
 * clr_crew_release, from clr_context_release, stops and joins them.
 *
 * The helpers block every signal, so that a process's signals go to its
 * own threads.  Like the context, a crew does not survive fork(): a child
 * process has none of its helpers. */
#include "internal.h"

#include <signal.h>
#include <string.h>

static void *crew_main(void *p) {
  clr_crew_member *m = p;
  clr_crew *c = m->crew;
  pthread_mutex_lock(&c->lock);
  for (;;) {
    while (!c->quit && c->posted == m->seen)
      pthread_cond_wait(&c->go, &c->lock);
    if (c->quit)
      break;
    m->seen = c->posted;
    if (m->index >= c->want) /* not needed for this job */
      continue;
    void (*fn)(void *) = c->fn;
    void *arg = c->arg;
    pthread_mutex_unlock(&c->lock);
    fn(arg);
    pthread_mutex_lock(&c->lock);
    if (--c->busy == 0)
      pthread_cond_signal(&c->done);
  }
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

/* The lock and conditions, on first use; 0 when they could not be had. */
static int crew_ready(clr_crew *c) {
  if (c->ready)
    return 1;
  if (pthread_mutex_init(&c->lock, NULL) != 0)
    return 0;
  if (pthread_cond_init(&c->go, NULL) != 0) {
    pthread_mutex_destroy(&c->lock);
    return 0;
  }
  if (pthread_cond_init(&c->done, NULL) != 0) {
    pthread_cond_destroy(&c->go);
    pthread_mutex_destroy(&c->lock);
    return 0;
  }
  c->ready = 1;
  return 1;
}

/* Start helpers (the lock held) until `helpers` run or one fails to start;
 * they inherit a mask that blocks every signal. */
static void crew_grow(clr_crew *c, unsigned helpers) {
  if (c->started >= helpers)
    return;
  sigset_t all, old;
  sigfillset(&all);
  int masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
  while (c->started < helpers) {
    clr_crew_member *m = &c->member[c->started];
    m->crew = c;
    m->index = c->started;
    m->seen = c->posted;
    if (pthread_create(&c->tid[c->started], NULL, crew_main, m) != 0)
      break;
    c->started++;
  }
  if (masked)
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void clr_crew_run(clr_crew *c, unsigned threads, void (*fn)(void *),
                  void *arg) {
  unsigned helpers = threads > 1 ? threads - 1 : 0;
  if (helpers > CLR_CREW_MAX)
    helpers = CLR_CREW_MAX;
  if (helpers > 0 && !crew_ready(c))
    helpers = 0; /* fewer threads only cost speed */
  if (helpers > 0) {
    pthread_mutex_lock(&c->lock);
    crew_grow(c, helpers);
    if (helpers > c->started)
      helpers = c->started;
    c->fn = fn;
    c->arg = arg;
    c->want = helpers;
    c->busy = helpers;
    c->posted++;
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->lock);
  }
  fn(arg);
  if (helpers > 0) {
    pthread_mutex_lock(&c->lock);
    while (c->busy > 0)
      pthread_cond_wait(&c->done, &c->lock);
    pthread_mutex_unlock(&c->lock);
  }
}

void clr_crew_release(clr_crew *c) {
  if (!c->ready)
    return;
  pthread_mutex_lock(&c->lock);
  c->quit = 1;
  pthread_cond_broadcast(&c->go);
  pthread_mutex_unlock(&c->lock);
  for (unsigned i = 0; i < c->started; i++)
    pthread_join(c->tid[i], NULL);
  pthread_cond_destroy(&c->done);
  pthread_cond_destroy(&c->go);
  pthread_mutex_destroy(&c->lock);
  memset(c, 0, sizeof *c);
}
