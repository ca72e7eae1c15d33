/* tests/cmake_consumer: clreduce::clreduce_mpi, where the installed
 * clreduce has it: the sum of 1..1000 over the ranks of MPI_COMM_WORLD,
 * rank r holding the values r+1, r+1+size, ...  Run alone (a singleton
 * rank) or under mpirun.  Exit 0 and "clreduce-consumer-mpi: OK" on every
 * rank when the sum is right, 1 when it is wrong, 2 when a call failed. */
#include <clreduce_mpi.h>

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv) {
  enum { N = 1000 };
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int32_t x[N];
  size_t n_local = 0;
  for (int v = rank + 1; v <= N; v += size)
    x[n_local++] = v;
  char detail[256] = "";
  clr_context *ctx = NULL;
  clr_status s = clr_mpi_context_create(MPI_COMM_WORLD, NULL, &ctx, detail,
                                        sizeof detail);
  int rc = 0;
  if (s != CLR_OK) {
    fprintf(stderr, "clreduce-consumer-mpi: %s: %s\n", clr_status_string(s),
            detail);
    rc = 2;
  } else {
    clr_value v;
    s = clr_mpi_reduce_host(ctx, MPI_COMM_WORLD, NULL, CLR_SUM, CLR_INT, x,
                            n_local, &v, NULL);
    if (s != CLR_OK) {
      fprintf(stderr, "clreduce-consumer-mpi: clr_mpi_reduce_host: %s: %s\n",
              clr_status_string(s), clr_context_error(ctx));
      rc = 2;
    } else if (v.type != CLR_LONG || v.v.l != (int64_t)N * (N + 1) / 2) {
      fprintf(stderr, "clreduce-consumer-mpi: sum %" PRId64 ", want %d\n",
              v.v.l, N * (N + 1) / 2);
      rc = 1;
    } else if (rank == 0) {
      printf("clreduce-consumer-mpi: sum %" PRId64 " over %d rank(s)\n",
             v.v.l, size);
    }
    clr_context_release(ctx);
  }
  if (rc == 0 && rank == 0)
    printf("clreduce-consumer-mpi: OK\n");
  MPI_Finalize();
  return rc;
}
