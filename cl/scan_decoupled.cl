/* Single-pass scan with decoupled look-back (Merrill & Garland, 2016).
 *
 * The input is read once and the output written once (2n transfers, the
 * least a scan can move).  Each work-group scans one tile of
 * wg * CLR_ITEMS elements and needs only the combined value of all tiles
 * before it, which it gets by looking back over its predecessors' published
 * state instead of waiting for a separate pass:
 *   flag 0 (or an older epoch, below): nothing published yet;
 *   flag 1: the tile's aggregate (its own total) is in agg[t];
 *   flag 2: its inclusive prefix (everything up to and including it) is in
 *           incl[t].
 * A tile publishes its aggregate as soon as it has it, combines the
 * aggregates of the tiles back to the last checkpoint (every wg-th tile)
 * with that checkpoint's inclusive prefix, then publishes its own
 * inclusive prefix.  The whole work-group looks back together, one
 * predecessor per work-item, so a look-back costs one round trip to
 * memory, not one per predecessor (a single work-item walking tile by
 * tile serialised the scan on an H100: 0.27 TB/s), and the fixed window
 * makes the rounding independent of the timing (see the look-back).
 *
 * With -DCLR_SLOTS=1 (the GPU shape, where the device has 64-bit atomics;
 * tuning decoupled.slots) there are no flags: aggregates and the
 * checkpoints' inclusive prefixes travel in tagged 64-bit slots
 * (clr_slot_publish / clr_slot_wait, common.cl), each word below the
 * launch's epoch.  A reader's one atomic read returns the value with its
 * tag, where a flag took a read, a fence and a second read, and a writer
 * needs no fence before its flag.  On the H100 that took the scan of 1e8
 * floats from 0.359 to 0.300 ms (docs/perf-log/scans.md).
 *
 * Forward progress: OpenCL promises none between work-groups, so a
 * work-group must never wait for one that has not started.  The tile a
 * work-group scans is not its group id but the next value of an atomic
 * counter (state[0]), taken when it starts: every tile it waits for was
 * taken, hence started, by a work-group already running, which only waits
 * for tiles older still.  On devices that run work-groups one after another
 * (oclgrind) those tiles are complete.
 *
 * Nothing is cleared between launches.  state[0] is a ticket counter that
 * only grows: the host passes the value it had before this launch
 * (ticket_base), so tile = ticket - ticket_base.  Flags carry the launch's
 * epoch in their upper 30 bits, so a flag left by an earlier launch reads
 * as "nothing published yet".  The host zeroes state[] once, when it
 * allocates it, and again before the epoch would wrap.
 *
 * The host appends this file to scan_kogge_stone.cl, whose
 * clr_block_scan_exclusive scans the work-items' totals inside the tile.
 *
 * Build options beyond common.cl: -DCLR_ITEMS=<elements per work-item>;
 * -DCLR_VEC=<2|4>, dividing CLR_ITEMS: global loads and stores of CLR_VEC
 * elements (16 bytes), a quarter of the memory instructions.  The host
 * only asks for it when the input and output start 16-byte aligned.
 * -DCLR_SHFL=1 (NVIDIA): the tile's scan and the look-back's tree by warp
 * shuffles (scan_kogge_stone.cl, common.cl).
 *
 * With -DCLR_RUN=1 the file holds the CPU shape instead (below), built on
 * cl/scan_lanes.cl alone. */
#if CLR_RUN
/* The CPU shape: work-groups of one work-item (the host asks for it with
 * decoupled.wg=1), each scanning a run of per_item contiguous elements,
 * the tile.  On a CPU a work-group runs on one core and its work-items
 * one after another, so the GPU shape's local tile, barriers and
 * work-group look-back are pure cost there (428 ms for 1e8 ints on 2
 * cores), and the tiled scans read the input twice from memory (tile
 * totals, then the scan).  Here a tile is read from memory once: the
 * work-item folds its run (which stays in the core's cache, per_item
 * elements) and publishes that total (flag 1), gets the inclusive prefix
 * of the tile before it, publishes its own (flag 2) before writing
 * anything (so the chain between tiles costs one fold, not one scan), and
 * then scans its run from the cache into out.
 *
 * Never a long wait: a CPU may deschedule the thread running tile t-1
 * (another process wants the core), and a tile spinning for it would burn
 * the time slice the other one needs (PoCL on 2 busy cores: 170-680 ms
 * instead of 20).  So a tile spins at most `spin` reads for t-1's
 * inclusive prefix and then computes it itself: back to the nearest tile
 * that has published one (or the start), then forward, taking each
 * tile's published total or, where none is published yet, folding that
 * tile's run itself.  In place a run overwrites its input once it has
 * published its prefix, so a fold of a late run counts only if that run
 * has still published nothing once the fold is done (else its published
 * total is taken): the check of a seqlock.
 *
 * Whoever computes it, the prefix of tile t is ((carry-in + total 0) +
 * total 1) + ... + total t-1, a total being the same fold of the same
 * run: floating-point results are the same bits from run to run, whatever
 * the timing.  Flags, tickets and epochs as in the GPU shape.  stream
 * (outputs larger than the caches): the vectors are stored
 * non-temporally (clr_scan_run, cl/scan_lanes.cl). */
CLR_DEFINE_FOLD(clr_fold_lanes, ACC_T, OP)

/* The total of elements [base, end): CLR_VEC independent chains, then
 * the lanes (a tree, common.cl), then the tail.  *vend: where whole
 * vectors end. */
inline ACC_T run_total(__global const IN_T *in, ulong base, ulong end,
                       ulong *vend) {
  ACC_T total = IDENTITY;
#if CLR_VEC > 1
  *vend = base + (end - base) / CLR_VEC * CLR_VEC;
  /* (a chain, common.cl: order keys for a floating-point min or max) */
  CLR_CHAINV_T lanes = clr_chainv((ACCV_T)(IDENTITY));
  for (ulong i = base; i < *vend; i += CLR_VEC)
    lanes = CLR_CHAIN_OP(lanes, clr_chainv(VLOAD(i, in)));
  total = clr_fold_lanes(clr_unchainv(lanes));
#else
  *vend = base;
#endif
  for (ulong i = *vend; i < end; i++) {
    ACC_T x = LOAD(IN_AT(in, i));
    total = OP(total, x);
  }
  return total;
}

/* Tile j's flag is `want` (of this launch's epoch). */
#define HAS(j, want) (atomic_or(&state[1 + (j)], 0u) == (epoch << 2 | (want)))

__kernel void clr_scan_decoupled_run(
    __global const IN_T *in, ulong in_offset, __global ACC_T *out,
    ulong out_offset, ulong n, ulong per_item, volatile __global uint *state,
    uint ticket_base, uint epoch, volatile __global uint *agg,
    volatile __global uint *incl, __global ACC_T *carry, uint carry_flags,
    uint exclusive, uint stream, uint spin) {
  in += in_offset;
  out += out_offset;
  uint t = atomic_inc(&state[0]) - ticket_base;
  ulong base = (ulong)t * per_item; /* the host keeps base < n */
  ulong end = min(base + per_item, n), vend;
  /* 1. the run's total, published */
  ACC_T total = run_total(in, base, end, &vend);
  clr_publish(agg, t, total);
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
  atomic_xchg(&state[1 + t], epoch << 2 | 1u);
  /* 2. the prefix: tile t-1's inclusive prefix, waited for a little, else
   * computed from the nearest published one */
  ACC_T prefix = (carry_flags & 1u) ? carry[0] : IDENTITY;
  if (t > 0) {
    /* spin == UINT_MAX: wait as long as it takes */
    for (uint k = 0; !HAS(t - 1, 2u) && (spin == UINT_MAX || k < spin); k++)
      ;
    long j = (long)t - 1;
    while (j >= 0 && !HAS(j, 2u))
      j--;
    if (j >= 0) {
      read_mem_fence(CLK_GLOBAL_MEM_FENCE);
      prefix = clr_fetch(incl, (uint)j);
    }
    for (long i = j + 1; i < (long)t; i++) {
      uint f = atomic_or(&state[1 + i], 0u);
      ulong ib = (ulong)i * per_item, iv;
      ACC_T w;
      read_mem_fence(CLK_GLOBAL_MEM_FENCE);
      if (f == (epoch << 2 | 2u)) { /* published meanwhile: the same bits */
        prefix = clr_fetch(incl, (uint)i);
        continue;
      }
      if (f != (epoch << 2 | 1u)) {
        w = run_total(in, ib, min(ib + per_item, n), &iv);
        /* In place, run i writes over its input once it has published
         * (below): the fold counts only if run i has still published
         * nothing (its writes come after its flags, fenced), else its
         * total is taken. */
        read_mem_fence(CLK_GLOBAL_MEM_FENCE);
        f = atomic_or(&state[1 + i], 0u);
      }
      if (f == (epoch << 2 | 1u) || f == (epoch << 2 | 2u))
        w = clr_fetch(agg, (uint)i);
      prefix = OP(prefix, w);
    }
  }
  ACC_T inclusive = OP(prefix, total);
  clr_publish(incl, t, inclusive);
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
  atomic_xchg(&state[1 + t], epoch << 2 | 2u);
  mem_fence(CLK_GLOBAL_MEM_FENCE); /* the flags before the writes */
  /* 3. the run again, from the cache, scanned and written */
  ACC_T run = clr_scan_run(in, out, base, vend, end, prefix, exclusive, stream);
  if ((carry_flags & 2u) && end == n)
    carry[1] = run;
}
#else
#ifndef CLR_ITEMS
#define CLR_ITEMS 8
#endif
#if CLR_VEC > 1
#define OUTV_T CLR_CAT(ACC_T, CLR_VEC)
#if CLR_IN_HALF /* half: decoded to float */
#define LOAD_VEC(i, p) CLR_CAT(vload_half, CLR_VEC)((i) / CLR_VEC, (p))
#else
#define LOAD_VEC(i, p)                                                         \
  (((__global const CLR_CAT(IN_T, CLR_VEC) *)(p))[(i) / CLR_VEC])
#endif
/* A global vector spread into a private array of CLR_VEC elements, and
 * back (vstoreN into the array, vloadN out of it). */
#define VEC_TO_ARRAY(vec, arr) CLR_CAT(vstore, CLR_VEC)((vec), 0, (arr))
#define ARRAY_TO_VEC(arr) CLR_CAT(vload, CLR_VEC)(0, (arr))
#endif
/* clr_publish / clr_fetch (values through 32-bit atomics, a flag in
 * state[] saying which are there) or, with -DCLR_SLOTS=1, clr_slot_publish
 * / clr_slot_wait (tagged 64-bit slots that need no flag): common.cl. */
#if CLR_SLOTS
#define LB_T ulong
#else
#define LB_T uint
#endif

/* A work-item's own chains (its run's total, then its run's scan) go
 * through CLR_ITEMS dependent steps.  A floating-point min or max takes
 * several dependent instructions a step (NaN, then order, then the sign of
 * zero: OP in common.cl), so there the chains run on order keys
 * (CLR_CHAIN_T, common.cl), where a step is one integer min or max.  A key
 * reads back as the same bits, a NaN's as a NaN (not the same NaN). */

/* One pad slot every 32 elements keeps the strided local accesses of the
 * blocked <-> striped transposes free of bank conflicts. */
#define PAD(i) ((i) + ((i) >> 5))

__kernel void
clr_scan_decoupled(__global const IN_T *in, ulong in_offset,
                   __global ACC_T *out, ulong out_offset, ulong n,
                   volatile __global uint *state, uint ticket_base, uint epoch,
                   volatile __global LB_T *agg, volatile __global LB_T *incl,
                   __global ACC_T *carry, uint carry_flags, uint exclusive,
                   __local ACC_T *tile, __local ACC_T *scratch) {
  __local uint tile_index;
  __local ACC_T tile_prefix, tile_aggregate;
  in += in_offset; /* elements [offset, offset + n) of the buffers; the
                      host keeps vector loads for offsets that keep them
                      aligned */
  out += out_offset;
  uint lid = (uint)get_local_id(0);
  uint wg = (uint)get_local_size(0);
  if (lid == 0)
    tile_index = atomic_inc(&state[0]);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint t = tile_index - ticket_base;
  ulong base = (ulong)t * wg * CLR_ITEMS;

  /* Coalesced loads (striped), then each work-item takes CLR_ITEMS
   * consecutive elements (blocked) from local memory. */
#if CLR_VEC > 1
  for (uint k = 0; k < CLR_ITEMS / CLR_VEC; k++) {
    uint j = (k * wg + lid) * CLR_VEC;
    ulong i = base + j;
    if (i + CLR_VEC <= n) {
      X_T v[CLR_VEC];
      VEC_TO_ARRAY(LOAD_VEC(i, in), v);
      for (uint c = 0; c < CLR_VEC; c++)
        tile[PAD(j + c)] = LOAD(v[c]);
    } else { /* the identity of the accumulator type past the end */
      for (uint c = 0; c < CLR_VEC; c++)
        tile[PAD(j + c)] = i + c < n ? LOAD(IN_AT(in, i + c)) : IDENTITY;
    }
  }
#else
  for (uint k = 0; k < CLR_ITEMS; k++) {
    uint j = k * wg + lid;
    ulong i = base + j;
    tile[PAD(j)] = i < n ? LOAD(IN_AT(in, i)) : IDENTITY;
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  CLR_CHAIN_T x[CLR_ITEMS], chain = clr_chain(IDENTITY);
  for (uint k = 0; k < CLR_ITEMS; k++) {
    ACC_T v = tile[PAD(lid * CLR_ITEMS + k)];
    x[k] = clr_chain(v);
    chain = CLR_CHAIN_OP(chain, x[k]);
  }
  ACC_T total = clr_unchain(chain);
  ACC_T item_prefix = clr_block_scan_exclusive(scratch, total);

  /* The last work-item holds the tile's aggregate and publishes it (tile
   * 0, which has no predecessor, publishes its inclusive prefix too; with
   * slots it goes through the look-back below, which finds no
   * predecessor). */
  if (lid == wg - 1) {
    ACC_T aggregate = OP(item_prefix, total);
    tile_aggregate = aggregate;
#if CLR_SLOTS
    clr_slot_publish(agg, t, epoch, aggregate);
#else
    clr_publish(agg, t, aggregate);
    if (t == 0) {
      ACC_T excl = (carry_flags & 1u) ? carry[0] : IDENTITY;
      ACC_T inclusive = OP(excl, aggregate);
      clr_publish(incl, 0, inclusive);
      write_mem_fence(CLK_GLOBAL_MEM_FENCE);
      atomic_xchg(&state[1], epoch << 2 | 2u);
      tile_prefix = excl;
    } else {
      write_mem_fence(CLK_GLOBAL_MEM_FENCE);
      atomic_xchg(&state[1 + t], epoch << 2 | 1u);
    }
#endif
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  /* Look-back over one window of at most wg predecessors, one round trip
   * to memory: the inclusive prefix of the checkpoint tile
   * k = floor(t / wg) * wg - 1 (none while t < wg: the carry-in instead)
   * and the aggregates of tiles k+1 .. t-1, work-item i reading tile
   * t-1-i, combined by the work-group's tree.  The window and the order of
   * combination depend on t alone, never on which predecessors happen to
   * have finished, so floating-point prefixes are the same bits from run
   * to run (a look-back that stops at the nearest finished tile, as in
   * Merrill & Garland, is faster to start but its rounding follows the
   * timing).  Checkpoints are wg tiles apart, so the chain of waits on
   * them is n / (wg^2 CLR_ITEMS) long.  With slots only the checkpoints
   * publish an inclusive prefix. */
  if (CLR_SLOTS || t > 0) {
    long k = (long)(t / wg) * (long)wg - 1;
    long j = (long)t - 1 - (long)lid;
    ACC_T v = IDENTITY;
    if (j >= 0 && j >= k) {
#if CLR_SLOTS
      v = clr_slot_wait(j == k ? incl : agg, (ulong)j, epoch);
#else
      uint f;
      if (j == k) {
        while (((f = atomic_or(&state[1 + j], 0u)) >> 2) != epoch ||
               (f & 3u) != 2u)
          ;
        read_mem_fence(CLK_GLOBAL_MEM_FENCE);
        v = clr_fetch(incl, (uint)j);
      } else {
        while (((f = atomic_or(&state[1 + j], 0u)) >> 2) != epoch)
          ;
        read_mem_fence(CLK_GLOBAL_MEM_FENCE);
        v = clr_fetch(agg, (uint)j);
      }
#endif
    }
    ACC_T back = clr_group_reduce(scratch, v); /* in work-item 0 */
    if (lid == 0) {
      if (k < 0 && (carry_flags & 1u)) {
        ACC_T c = carry[0];
        back = OP(c, back);
      }
      ACC_T aggregate = tile_aggregate;
      ACC_T inclusive = OP(back, aggregate);
#if CLR_SLOTS
      if ((t + 1) % wg == 0) /* a checkpoint */
        clr_slot_publish(incl, t, epoch, inclusive);
#else
      clr_publish(incl, t, inclusive);
      write_mem_fence(CLK_GLOBAL_MEM_FENCE);
      atomic_xchg(&state[1 + t], epoch << 2 | 2u);
#endif
      tile_prefix = back;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  ACC_T start = OP(tile_prefix, item_prefix);
  CLR_CHAIN_T run = clr_chain(start);
  for (uint k = 0; k < CLR_ITEMS; k++) {
    CLR_CHAIN_T v = x[k], y;
    if (exclusive) {
      y = run;
      run = CLR_CHAIN_OP(run, v);
    } else {
      run = CLR_CHAIN_OP(run, v);
      y = run;
    }
    tile[PAD(lid * CLR_ITEMS + k)] = clr_unchain(y);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#if CLR_VEC > 1
  for (uint k = 0; k < CLR_ITEMS / CLR_VEC; k++) {
    uint j = (k * wg + lid) * CLR_VEC;
    ulong i = base + j;
    ACC_T v[CLR_VEC];
    for (uint c = 0; c < CLR_VEC; c++)
      v[c] = tile[PAD(j + c)];
    if (i + CLR_VEC <= n) {
      ((__global OUTV_T *)out)[i / CLR_VEC] = ARRAY_TO_VEC(v);
    } else {
      for (uint c = 0; c < CLR_VEC && i + c < n; c++)
        out[i + c] = v[c];
    }
  }
#else
  for (uint k = 0; k < CLR_ITEMS; k++) {
    uint j = k * wg + lid;
    ulong i = base + j;
    if (i < n)
      out[i] = tile[PAD(j)];
  }
#endif
  /* Elements past n are identities, so the last item's run is the total. */
  if ((carry_flags & 2u) && lid == wg - 1 && base + (ulong)wg * CLR_ITEMS >= n)
    carry[1] = clr_unchain(run);
}
#endif /* CLR_RUN */
