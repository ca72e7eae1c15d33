/* Host arrays staged through the context's pinned blocks, for valgrind
 * (suite 'valgrind'): a context that copies host data (PoCL then takes the
 * discrete GPU's path), 4 KiB blocks, and calls with 4 staging threads and
 * then 2, so the context's helper threads (src/lib/crew.c) start, are
 * kept from call to call, sit out a call that wants fewer of them, and
 * are joined by clr_context_release.  An int sum and an int inclusive
 * scan, checked exactly; exit status 1 on a failure, 2 on a wrong answer.
 */
#include <clreduce.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(clr_context *ctx, const char *what) {
  fprintf(stderr, "staged_host: %s: %s\n", what,
          ctx ? clr_context_error(ctx) : "no context");
  return 1;
}

int main(void) {
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  cfg.copy_host_data = 1;
  clr_context *ctx = NULL;
  char detail[256];
  if (clr_context_create(&cfg, &ctx, detail, sizeof detail) != CLR_OK) {
    fprintf(stderr, "staged_host: %s\n", detail);
    return 1;
  }
  const size_t n = 30011; /* a prime: 30 blocks of 4 KiB and a part */
  int32_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  int rc = 0;
  if (!in || !out) {
    rc = fail(ctx, "malloc");
    goto done;
  }
  for (size_t i = 0; i < n; i++)
    in[i] = (int32_t)(i % 7) - 3;
  static const unsigned threads[] = {4, 2, 4};
  for (size_t t = 0; t < sizeof threads / sizeof *threads && rc == 0; t++) {
    clr_tuning tu = CLR_TUNING_INIT;
    if (clr_get_tuning(ctx, &tu) != CLR_OK) {
      rc = fail(ctx, "clr_get_tuning");
      break;
    }
    tu.stage_threads = threads[t];
    tu.stage_block_kib = 4;
    if (clr_set_tuning(ctx, &tu) != CLR_OK) {
      rc = fail(ctx, "clr_set_tuning");
      break;
    }
    clr_value v;
    if (clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, in, n, &v) != CLR_OK) {
      rc = fail(ctx, "clr_reduce_host");
      break;
    }
    int64_t want = 0;
    for (size_t i = 0; i < n; i++)
      want += in[i];
    if (v.v.i != (int32_t)want) {
      fprintf(stderr, "staged_host: sum %d, want %lld\n", (int)v.v.i,
              (long long)want);
      rc = 2;
      break;
    }
    if (clr_scan_host(ctx, NULL, CLR_SUM, CLR_INT, in, out, n) != CLR_OK) {
      rc = fail(ctx, "clr_scan_host");
      break;
    }
    int32_t run = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
      run += in[i];
      if (out[i] != run) {
        fprintf(stderr, "staged_host: scan[%zu] %d, want %d\n", i, (int)out[i],
                (int)run);
        rc = 2;
      }
    }
  }
  if (rc == 0)
    printf("staged_host: sums and scans of %zu ints right, 4 / 2 / 4 "
           "threads\n",
           n);
done:
  free(in);
  free(out);
  clr_context_release(ctx);
  return rc;
}
