/* clreduce over MPI: one array spread over the ranks of a communicator,
 * each rank's part reduced or scanned on the rank's own device, the ranks'
 * results combined through MPI (docs/SCALING.md).  Built when meson finds
 * MPI (-Dmpi=enabled|auto|disabled); link with the clreduce-mpi
 * pkg-config package.
 *
 * Every function here is collective: all ranks of comm call it, with the
 * same op, type and options, each with its own part (n_local elements, 0
 * allowed); the parts form one array in rank order.  Every rank returns the
 * same status (the first failing rank's, by rank order) and the same
 * result.  The ranks compare their calls (which function, op, type, and
 * the options exact, exclusive, narrow_accumulator, accumulate_in, map and
 * map_expr; the tuning options may differ with each rank's device) before
 * any data moves: calls that differ return CLR_ERR_INVALID_ARGUMENT on
 * every rank with failed_rank -1, never a truncated message or a hang.
 *
 * A failed MPI call returns CLR_ERR_INVALID_ARGUMENT with its error code
 * in clr_mpi_info.mpi_error; MPI returns one only where comm's error
 * handler is MPI_ERRORS_RETURN (MPI_COMM_WORLD's default aborts the job).
 * A rank that dies is not noticed here: Open MPI's mpirun ends the whole
 * job when a rank exits without MPI_Finalize or is killed.
 *
 * Blocking, errors, ownership and threads follow clreduce.h's rules: every
 * call blocks until the whole result is on every rank; comm, the context
 * and the arrays are borrowed for the call; the MPI calls are made on the
 * calling thread, so MPI's initialisation must allow that thread to call
 * MPI (MPI_THREAD_SINGLE suffices when it is the main thread), and two
 * threads must not call these functions on one communicator at once. */
#ifndef CLREDUCE_MPI_H
#define CLREDUCE_MPI_H

#include "clreduce.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a collective call did (any pointer may be NULL where one is taken). */
typedef struct clr_mpi_info {
  uint64_t n_global;  /* elements over all ranks                          */
  uint64_t first;     /* the global index of this rank's first element    */
  double local_ms;    /* this rank's own call (reduce or both scan rounds) */
  double combine_ms;  /* the MPI steps, on this rank                      */
  double total_ms;    /* the whole call, on this rank                     */
  size_t error_depth; /* as clr_timing.error_depth, for the whole result  */
  int failed_rank;    /* the first rank whose part failed, or -1          */
  int mpi_error;      /* a failed MPI call's error code, else MPI_SUCCESS */
} clr_mpi_info;

/* A context for this rank: on cfg->device when it names one (each rank
 * may name its own), else on the GPU its node-local rank picks (local rank
 * modulo the GPUs of the platform cfg->platform selects, by default the
 * first platform with a GPU), else on that platform's first device.
 * Collective over comm (every rank calls it, with or without a device);
 * each rank returns its own status. */
CLR_API clr_status clr_mpi_context_create(MPI_Comm comm,
                                          const clr_context_config *cfg,
                                          clr_context **out, char *detail,
                                          size_t detail_size);

/* The reduction of the whole array on every rank: each rank reduces its
 * part (indices counted from its first element's global index), and the
 * ranks' values are folded in rank order by MPI_Allreduce with a
 * non-commutative operation (clr_value_combine); exact sums add the
 * ranks' superaccumulators (MPI_SUM over their words) and round once, so
 * they are the same bits for every number of ranks; a mean divides the
 * global sum by the global n. */
CLR_API clr_status clr_mpi_reduce_host(clr_context *ctx, MPI_Comm comm,
                                       const clr_options *opt, clr_op op,
                                       clr_type type, const void *local,
                                       size_t n_local, clr_value *result,
                                       clr_mpi_info *info);
CLR_API clr_status clr_mpi_reduce_buffer(clr_context *ctx, MPI_Comm comm,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem buf,
                                         size_t offset, size_t n_local,
                                         clr_value *result, clr_mpi_info *info);

/* The scan of the whole array, each rank writing its part of it: each
 * rank reduces its part to its total, MPI_Exscan folds the totals of the
 * ranks before it (after opt->carry_in) into its carry-in, and each rank
 * scans its part from that carry (out may be in). */
CLR_API clr_status clr_mpi_scan_host(clr_context *ctx, MPI_Comm comm,
                                     const clr_options *opt, clr_op op,
                                     clr_type type, const void *in, void *out,
                                     size_t n_local, clr_mpi_info *info);

#ifdef __cplusplus
}
#endif
#endif /* CLREDUCE_MPI_H */
