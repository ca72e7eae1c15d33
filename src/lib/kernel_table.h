/* The kernels: one row each, in clr_kernel order.  Their names, kinds,
 * kernel sources, descriptions (`clreduce --list-kernels`, which the
 * Python tests read) and the operations they support all derive from
 * here.
 *
 *   X(id, name, scan, ops, source, what it teaches)
 *
 * scan: a prefix scan (else a reduction).  ops: what the kernel computes
 * beyond sum, prod, min and max: 1 adds and / or, 2 adds the indexed
 * operations (argmin, argmax, minmax), maps (clr_options.map) and dot
 * products (the coarse reduction; its indexed form is
 * cl/reduce_extrema.cl).
 * source: the file under cl/ with the kernel's own algorithm (a tiled
 * scan's work-group scan, combined with cl/scan_tile.cl; the decoupled
 * scan's look-back, combined with the Kogge-Stone work-group scan). */
#ifndef CLR_KERNEL_TABLE_H
#define CLR_KERNEL_TABLE_H

#define CLR_KERNEL_TABLE(X)                                                    \
  X(CLR_REDUCE_INTERLEAVED, "interleaved", 0, 1, "reduce_interleaved.cl",      \
    "interleaved addressing (tid % (2*s) == 0): divergent, the baseline")      \
  X(CLR_REDUCE_SEQUENTIAL, "sequential", 0, 1, "reduce_sequential.cl",         \
    "sequential addressing, stride halving: no divergence")                    \
  X(CLR_REDUCE_FIRST_ADD, "first-add", 0, 1, "reduce_first_add.cl",            \
    "two elements combined while loading: half the work-items")                \
  X(CLR_REDUCE_COARSE, "coarse", 0, 2, "reduce_coarse.cl",                     \
    "many elements per work-item in registers, then a tree (default)")         \
  X(CLR_SCAN_KOGGE_STONE, "kogge-stone", 1, 0, "scan_kogge_stone.cl",          \
    "stride doubling, two barriers per step")                                  \
  X(CLR_SCAN_KOGGE_STONE_DB, "kogge-stone-db", 1, 0, "scan_kogge_stone_db.cl", \
    "double-buffered Kogge-Stone, one barrier per step")                       \
  X(CLR_SCAN_BRENT_KUNG, "brent-kung", 1, 0, "scan_brent_kung.cl",             \
    "work-efficient up-sweep / down-sweep")                                    \
  X(CLR_SCAN_DECOUPLED, "decoupled", 1, 0, "scan_decoupled.cl",                \
    "single pass, decoupled look-back: reads once, writes once")

#endif
