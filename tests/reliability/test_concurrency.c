/* Concurrency: the promise of include/clreduce.h, tested.
 *
 *   - distinct contexts may be used from distinct threads at the same
 *     time: THREADS threads each create their own context (at the same
 *     moment), run every reduction and scan kernel on several types and
 *     sizes, and release it, all concurrently; they share one on-disk
 *     program cache directory, empty at first, so they build, store and
 *     load the same program binaries at the same time;
 *   - one context may be used by several threads in turn when the calls
 *     do not overlap: THREADS threads take turns on one shared context,
 *     each call (and the reading of its error detail and timing) under a
 *     mutex this test holds, mixing host and buffer calls, reductions and
 *     scans, and calls that fail.
 *
 * Every result is checked against the CPU reference (src/check): exactly
 * for scans (tu_fill_exact's data keeps every prefix exact) and with
 * clr_ref_check for reductions.
 *
 *   test_concurrency --part=distinct|shared --kernel-dir=DIR --work-dir=DIR
 */
#include "test_util.h"

#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#define THREADS 4
#define ROUNDS 3

static const char *kernel_dir, *cache_dir;

static const clr_kernel kernels[] = {
    CLR_REDUCE_INTERLEAVED, CLR_REDUCE_SEQUENTIAL, CLR_REDUCE_FIRST_ADD,
    CLR_REDUCE_COARSE,      CLR_SCAN_KOGGE_STONE,  CLR_SCAN_KOGGE_STONE_DB,
    CLR_SCAN_BRENT_KUNG,    CLR_SCAN_DECOUPLED};
#define N_KERNELS (sizeof kernels / sizeof kernels[0])
static const clr_type types[] = {CLR_FLOAT, CLR_INT, CLR_LONG, CLR_DOUBLE};
static const clr_op ops[] = {CLR_SUM, CLR_MAX, CLR_PROD, CLR_MIN};

/* A failure inside a thread: counted and printed under a lock (tu_check's
 * counters are not atomic). */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static TU_PRINTF(2, 3) int tcheck(int ok, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&report_lock);
  tu_check(ok, "%s", msg);
  pthread_mutex_unlock(&report_lock);
  return ok;
}

static clr_context *new_context(void) {
  char detail[512] = "";
  clr_status s;
  clr_context *ctx =
      tu_context_at(kernel_dir, cache_dir, 0, &s, detail, sizeof detail);
  tcheck(s == CLR_OK, "clr_context_create: %s: %s", clr_status_name(s), detail);
  return ctx;
}

/* One job: a kernel, op, type and size, with its data and reference. */
typedef struct job {
  clr_kernel kernel;
  clr_op op;
  clr_type type;
  size_t n;
  int exclusive, use_buffer;
  unsigned char *in, *out, *want;
  clr_reference ref;
} job;

static void job_init(job *j, unsigned thread, unsigned round, unsigned k) {
  memset(j, 0, sizeof *j);
  j->kernel = kernels[(k + thread) % N_KERNELS];
  j->op = ops[(round + k) % 4];
  j->type = types[(thread + round + k) % 4];
  /* sizes that are not multiples of anything, different per thread */
  j->n = 20011 + 7919 * (size_t)((thread * 3 + round + k) % 5);
  j->exclusive = (int)((thread + k) % 2);
  j->use_buffer = (int)((round + k) % 3 == 2);
  size_t es = clr_type_size(j->type);
  j->in = tu_xmalloc(j->n * es);
  j->out = tu_xmalloc(j->n * es);
  j->want = tu_xmalloc(j->n * es);
  tu_fill_exact(j->type, j->op, j->in, j->n, thread * 1000u + round * 10u + k);
  if (clr_kernel_is_scan(j->kernel))
    tu_scan_ref(j->op, j->type, j->exclusive, NULL, j->in, j->want, j->n);
  else
    clr_ref_reduce(j->op, j->type, 0, j->in, j->n, &j->ref);
}

static void job_free(job *j) {
  free(j->in);
  free(j->out);
  free(j->want);
}

/* Run j on ctx; the caller holds whatever lock the context needs.
 * Returns 1 when the result is right. */
static int job_run(clr_context *ctx, job *j, const char *who) {
  char a[64], b[64];
  size_t es = clr_type_size(j->type), bytes = j->n * es;
  clr_options o;
  clr_options_init(&o);
  o.kernel = j->kernel;
  o.exclusive = j->exclusive;
  const char *what = clr_kernel_name(j->kernel);
  cl_mem mi = NULL, mo = NULL;
  if (j->use_buffer) {
    cl_int err;
    mi = clCreateBuffer(clr_context_cl_context(ctx),
                        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, j->in,
                        &err);
    if (!tcheck(err == CL_SUCCESS, "%s: clCreateBuffer: %d", who, (int)err))
      return 0;
    mo = mi; /* scans in place */
  }
  clr_status s;
  int ok = 0;
  if (clr_kernel_is_scan(j->kernel)) {
    if (j->use_buffer)
      s = clr_scan_buffer(ctx, &o, j->op, j->type, mi, mo, j->n);
    else
      s = clr_scan_host(ctx, &o, j->op, j->type, j->in, j->out, j->n);
    if (s == CLR_OK && j->use_buffer &&
        clEnqueueReadBuffer(clr_context_queue(ctx), mo, CL_TRUE, 0, bytes,
                            j->out, 0, NULL, NULL) != CL_SUCCESS)
      s = CLR_ERR_OPENCL;
    if (tcheck(s == CLR_OK, "%s: %s %s of %zu %s: %s: %s", who, what,
               clr_op_name(j->op), j->n, clr_type_name(j->type),
               clr_status_name(s), clr_context_error(ctx))) {
      size_t i = tu_first_diff(j->type, j->out, j->want, j->n);
      ok = tcheck(
          i == j->n, "%s: %s %s of %zu %s: element %zu is %s, want %s", who,
          what, clr_op_name(j->op), j->n, clr_type_name(j->type), i,
          i < j->n ? tu_fmtv(clr_value_at(j->type, j->out, i), a, sizeof a)
                   : "",
          i < j->n ? tu_fmtv(clr_value_at(j->type, j->want, i), b, sizeof b)
                   : "");
    }
  } else {
    clr_value got;
    memset(&got, 0, sizeof got);
    if (j->use_buffer)
      s = clr_reduce_buffer(ctx, &o, j->op, j->type, mi, 0, j->n, &got);
    else
      s = clr_reduce_host(ctx, &o, j->op, j->type, j->in, j->n, &got);
    if (tcheck(s == CLR_OK, "%s: %s %s of %zu %s: %s: %s", who, what,
               clr_op_name(j->op), j->n, clr_type_name(j->type),
               clr_status_name(s), clr_context_error(ctx))) {
      clr_timing t = CLR_TIMING_INIT;
      clr_check chk;
      clr_last_timing(ctx, &t);
      clr_ref_check(&j->ref, &got, t.error_depth, &chk);
      ok =
          tcheck(chk.ok && got.type == j->ref.value.type,
                 "%s: %s %s of %zu %s: got %s, want %s", who, what,
                 clr_op_name(j->op), j->n, clr_type_name(j->type),
                 tu_fmtv(got, a, sizeof a), tu_fmtv(j->ref.value, b, sizeof b));
    }
  }
  if (mi)
    clReleaseMemObject(mi);
  return ok;
}

/* ------------------------------------------------------------ distinct */

static pthread_barrier_t start_line;

typedef struct worker {
  unsigned id;
  unsigned long calls, right;
} worker;

static void *distinct_main(void *arg) {
  worker *w = arg;
  char who[64];
  snprintf(who, sizeof who, "[distinct] thread %u", w->id);
  /* every thread creates its context at the same moment */
  pthread_barrier_wait(&start_line);
  for (unsigned round = 0; round < ROUNDS; round++) {
    clr_context *ctx = new_context();
    if (!ctx)
      return NULL;
    for (unsigned k = 0; k < N_KERNELS; k++) {
      job j;
      job_init(&j, w->id, round, k);
      w->calls++;
      w->right += (unsigned long)job_run(ctx, &j, who);
      job_free(&j);
    }
    clr_context_release(ctx);
  }
  return NULL;
}

/* Start THREADS workers running fn from one start line, wait for them
 * all; their calls and right answers summed. */
static void run_workers(void *(*fn)(void *), worker *ws, unsigned long *calls,
                        unsigned long *right) {
  pthread_t th[THREADS];
  if (pthread_barrier_init(&start_line, NULL, THREADS) != 0)
    tu_die("pthread_barrier_init failed");
  for (unsigned i = 0; i < THREADS; i++) {
    ws[i].id = i;
    if (pthread_create(&th[i], NULL, fn, &ws[i]) != 0)
      tu_die("pthread_create failed");
  }
  *calls = *right = 0;
  for (unsigned i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    *calls += ws[i].calls;
    *right += ws[i].right;
  }
  pthread_barrier_destroy(&start_line);
}

static void part_distinct(void) {
  worker ws[THREADS];
  memset(ws, 0, sizeof ws);
  unsigned long calls, right;
  run_workers(distinct_main, ws, &calls, &right);
  tu_check(calls == (unsigned long)THREADS * ROUNDS * N_KERNELS,
           "[distinct] %lu calls made, want %lu", calls,
           (unsigned long)THREADS * ROUNDS * N_KERNELS);
  printf("[distinct] %u threads, own contexts: %lu of %lu calls right\n",
         THREADS, right, calls);
}

/* ------------------------------------------------------------ shared */

static clr_context *shared_ctx;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

static void *shared_main(void *arg) {
  worker *w = arg;
  char who[64];
  snprintf(who, sizeof who, "[shared] thread %u", w->id);
  pthread_barrier_wait(&start_line);
  for (unsigned round = 0; round < ROUNDS; round++)
    for (unsigned k = 0; k < N_KERNELS; k++) {
      job j;
      job_init(&j, w->id, round, k); /* outside the lock: overlaps others */
      pthread_mutex_lock(&shared_lock);
      w->calls++;
      w->right += (unsigned long)job_run(shared_ctx, &j, who);
      /* A call that fails leaves its own detail, and the next one clears
       * it (the detail belongs to the last call, whichever thread). */
      if (k % 4 == w->id % 4) {
        clr_value v;
        clr_status s =
            clr_reduce_host(shared_ctx, NULL, CLR_SUM, CLR_INT, j.in, 0, &v);
        tcheck(s == CLR_ERR_INVALID_ARGUMENT &&
                   clr_context_error(shared_ctx)[0],
               "%s: n = 0 gave %s, detail '%s'", who, clr_status_name(s),
               clr_context_error(shared_ctx));
      }
      pthread_mutex_unlock(&shared_lock);
      job_free(&j);
    }
  return NULL;
}

static void part_shared(void) {
  worker ws[THREADS];
  memset(ws, 0, sizeof ws);
  shared_ctx = new_context();
  if (!shared_ctx)
    return;
  unsigned long calls, right;
  run_workers(shared_main, ws, &calls, &right);
  clr_context_release(shared_ctx);
  tu_check(calls == (unsigned long)THREADS * ROUNDS * N_KERNELS,
           "[shared] %lu calls made, want %lu", calls,
           (unsigned long)THREADS * ROUNDS * N_KERNELS);
  printf("[shared] %u threads, one context in turn: %lu of %lu calls right\n",
         THREADS, right, calls);
}

static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

int main(int argc, char **argv) {
  const char *part = tu_arg_value(argc, argv, "--part");
  const char *work_dir = tu_arg_value(argc, argv, "--work-dir");
  char cache[4096];
  kernel_dir = tu_arg_value(argc, argv, "--kernel-dir");
  if (!part || !kernel_dir || !work_dir)
    tu_die("usage: test_concurrency --part=distinct|shared --kernel-dir=DIR "
           "--work-dir=DIR");
  /* A program cache of this run's own, empty: the threads of 'distinct'
   * store and load the same binaries at the same time. */
  int w = snprintf(cache, sizeof cache, "%s/program-cache", work_dir);
  if (w < 0 || (size_t)w >= sizeof cache)
    tu_die("--work-dir too long");
  nftw(cache, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  mkdir(work_dir, 0755);
  cache_dir = cache;
  if (strcmp(part, "distinct") == 0)
    part_distinct();
  else if (strcmp(part, "shared") == 0)
    part_shared();
  else
    tu_die("unknown --part '%s'", part);
  return tu_finish("test_concurrency");
}
