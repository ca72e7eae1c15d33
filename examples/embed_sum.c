/* Embedding clreduce: reduce a host array, then reduce a buffer the
 * program created itself in the library's OpenCL context.
 *
 * Build against an installed clreduce:
 *   cc embed_sum.c $(pkg-config --cflags --libs clreduce) -o embed_sum
 * Exit status 0 when both answers are right, 1 when one is wrong, 2 when
 * something failed (the reason goes to stderr). */
#include <clreduce.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000003u

int main(void) {
  char detail[256] = "";
  clr_context *ctx = NULL;
  clr_status s = clr_context_create(NULL, &ctx, detail, sizeof detail);
  if (s != CLR_OK) {
    fprintf(stderr, "embed_sum: %s: %s\n", clr_status_string(s), detail);
    return 2;
  }
  clr_device_desc dev;
  clr_context_device(ctx, &dev);
  printf("device: %s (%s)\n", dev.device_name, dev.platform_name);

  /* 1. A host array: 1, 2, ..., N as int; the sum accumulates in 64 bits
   * (N (N + 1) / 2 does not fit in 32). */
  int32_t *x = malloc(N * sizeof *x);
  if (!x) {
    clr_context_release(ctx);
    return 2;
  }
  for (uint32_t i = 0; i < N; i++)
    x[i] = (int32_t)(i + 1);
  int64_t want = (int64_t)N * (N + 1) / 2;
  clr_value v;
  int rc = 0;
  s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, x, N, &v);
  if (s != CLR_OK) {
    fprintf(stderr, "embed_sum: clr_reduce_host: %s: %s\n",
            clr_status_string(s), clr_context_error(ctx));
    rc = 2;
  } else if (v.type != CLR_LONG || v.v.l != want) {
    fprintf(stderr, "embed_sum: host sum %" PRId64 ", want %" PRId64 "\n",
            v.v.l, want);
    rc = 1;
  } else {
    printf("host sum of 1..%u = %" PRId64 "\n", N, v.v.l);
  }

  /* 2. Our own buffer in the library's context: the min of elements
   * [10, N), which skips the 10 smallest, so it must be 11. */
  cl_int err;
  cl_mem buf = clCreateBuffer(clr_context_cl_context(ctx),
                              CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              N * sizeof *x, x, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "embed_sum: clCreateBuffer failed (%d)\n", (int)err);
    rc = 2;
  } else {
    clr_options opt;
    clr_options_init(&opt);
    opt.kernel = CLR_REDUCE_FIRST_ADD;
    size_t offset = 10;
    s = clr_reduce_buffer(ctx, &opt, CLR_MIN, CLR_INT, buf, offset, N - offset,
                          &v);
    if (s != CLR_OK) {
      fprintf(stderr, "embed_sum: clr_reduce_buffer: %s: %s\n",
              clr_status_string(s), clr_context_error(ctx));
      rc = 2;
    } else if (v.type != CLR_INT || v.v.i != (int32_t)offset + 1) {
      fprintf(stderr, "embed_sum: buffer min %" PRId32 ", want %d\n", v.v.i,
              (int)offset + 1);
      if (rc == 0)
        rc = 1;
    } else {
      printf("buffer min of elements [%zu, %u) = %" PRId32 "\n", offset, N,
             v.v.i);
    }
    /* The queue is the library's: we can use it for our own commands. */
    clFinish(clr_context_queue(ctx));
    clReleaseMemObject(buf);
  }
  free(x);
  clr_context_release(ctx);
  printf("%s\n", rc == 0 ? "embed_sum: OK" : "embed_sum: FAILED");
  return rc;
}
