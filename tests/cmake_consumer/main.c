/* tests/cmake_consumer: sum a short int array with an installed clreduce
 * found by CMake (find_package(clreduce), clreduce::clreduce).  Exit 0 and
 * "clreduce-consumer: OK" when the sum is right, 1 when it is wrong, 2 when
 * a call failed. */
#include <clreduce.h>

#include <inttypes.h>
#include <stdio.h>

int main(void) {
  enum { N = 1000 };
  int32_t x[N];
  int64_t want = 0;
  for (int i = 0; i < N; i++) {
    x[i] = (i % 7 == 3) ? -(i + 1) : i + 1; /* a few negatives */
    want += x[i];
  }
  char detail[256] = "";
  clr_context *ctx = NULL;
  clr_status s = clr_context_create(NULL, &ctx, detail, sizeof detail);
  if (s != CLR_OK) {
    fprintf(stderr, "clreduce-consumer: %s: %s\n", clr_status_string(s),
            detail);
    return 2;
  }
  clr_value v;
  int rc = 0;
  s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, x, N, &v);
  if (s != CLR_OK) {
    fprintf(stderr, "clreduce-consumer: clr_reduce_host: %s: %s\n",
            clr_status_string(s), clr_context_error(ctx));
    rc = 2;
  } else if (v.type != CLR_LONG || v.v.l != want) {
    fprintf(stderr, "clreduce-consumer: sum %" PRId64 " (type %d), want %"
            PRId64 "\n", v.v.l, (int)v.type, want);
    rc = 1;
  } else {
    printf("clreduce-consumer: sum %" PRId64 "\n", v.v.l);
  }
  clr_context_release(ctx);
  if (rc == 0)
    printf("clreduce-consumer: OK\n");
  return rc;
}
