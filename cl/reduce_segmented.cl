/* Segmented reduction: one result per segment, segments given CSR-style by
 * offsets (segment s is elements [offsets[s], offsets[s + 1])), any
 * lengths, empty ones included, with the work balanced whatever they are.
 *
 * Merge path (Merrill and Garland, "Merge-based parallel sparse matrix-
 * vector multiplication", SC 2016): the elements and the segment ends are
 * two sorted lists merged into one sequence of "units", where segment s
 * ends (closes) after its last element.  Every work-item takes the same
 * number of units, CLR_SEG_ITEMS, so a work-item reads at most that many
 * elements and closes at most that many segments: a segment of 3e7
 * elements is spread over a million work-items, a million empty segments
 * over tens of thousands.
 *
 * A launch covers the elements [lo, lo + len) of the whole input (the host
 * streams large inputs in several launches, each with the offsets and
 * results of its own segments) and the `closes` segments that close in
 * it, numbered from 0 here: offsets[s] and offsets[s + 1] (element indices
 * of the whole input) bound segment s, and out[s] is its result.  With
 * open_end, segment `closes` is open at the launch's end; segment 0 may
 * have started before lo, in an earlier launch.  The launch's units are
 * numbered from 0: element lo + i and the close of s are units
 * i + (closes before it) and (offsets[s + 1] - lo) + s.
 *
 *   clr_seg_items   (CPUs: the contiguous layout) each work-item folds
 *                   its units in order.  A segment that starts and
 *                   closes inside the work-item is written to out; the partial
 * of the segment open at its end goes to carry[t] (the identity if none); the
 *                   segment open at its start that closes in it is left
 *                   pending, with the work-item's part of it in head[t].
 *   clr_seg_partition, clr_seg_tiles   (GPUs: the strided layout)
 *                   the same a work-group at a time: a tile of units in
 *                   local memory, its bounds found beforehand (by a
 *                   search a tile, or from the segments' side when none
 *                   spans more than a few tiles), its
 *                   carry, head and pending segment as one item's.
 *   clr_seg_blocks  a level of the carry pyramid: block sums of
 *                   CLR_SEG_BLOCK values of the level below, so a
 *                   segment's carries over any range of work-items are
 *                   combined in O(levels x CLR_SEG_BLOCK) reads.
 *   clr_seg_finish  every pending segment: the carries of the items
 *                   (work-items or tiles) it spans before the one that
 *                   closes it, then head[t]; work-item `items` does the
 *                   segment open at the launch's end.  A segment that started
 * in an earlier launch starts from the partial that launch left in out[0].
 *   clr_seg_check   offsets that are not a partition of [0, n) set *bad,
 *                   so the host refuses them before anything reads data
 *                   through them (cl_mem offsets).
 *
 * Ops: sum, prod, min, max, and, or (common.cl), with the coarse
 * reduction's maps and loads (the host puts cl/load_mapped.cl first:
 * clr_load_vec, CLR_VEC elements a load); results in the accumulator type.
 * Argmin, argmax and minmax (-DCLR_OP_IS_INDEXED=1): results, carries and
 * partials are cl/records.cl's records (the extremes and their indices),
 * combined in the same order; the elements themselves are read (and kept
 * in a tile) as values, their indices known from where they are.  Records
 * carry whole-input indices until a segment's result is written
 * (seg_final: counted from the segment's first element; an empty
 * segment's stay ULONG_MAX). */

#ifndef CLR_SEG_ITEMS
#define CLR_SEG_ITEMS 32
#endif
#ifndef CLR_SEG_BLOCK
#define CLR_SEG_BLOCK 32
#endif
#define CLR_SEG_NONE ((ulong)-1)

/* SEG_T: a segment's partial or result.  seg_take(a, x, i): a followed
 * by element x (index i); seg_merge(a, b): partial a followed by b. */
#if CLR_OP_IS_RECORD
#define SEG_T clr_record
inline SEG_T seg_identity(void) { return clr_no_record(); }
inline SEG_T seg_take(SEG_T a, ACC_T x, ulong i) {
  clr_take(&a, x, i);
  return a;
}
inline SEG_T seg_merge(SEG_T a, SEG_T b) {
  clr_merge(&a, b);
  return a;
}
/* A segment's result as written: its indices counted from the segment's
 * first element (whole-input index start), as CUB's segmented ArgMin; a
 * partial left for a later launch keeps whole-input indices. */
#if CLR_OP_IS_MOMENTS
#define seg_final(a, start) (a) /* no indices */
#else
inline SEG_T seg_final(SEG_T a, ulong start) {
  if (a.ilo != ULONG_MAX)
    a.ilo -= start;
  if (a.ihi != ULONG_MAX)
    a.ihi -= start;
  return a;
}
#endif
#else
#define SEG_T ACC_T
inline SEG_T seg_identity(void) { return IDENTITY; }
inline SEG_T seg_take(SEG_T a, ACC_T x, ulong i) { return OP(a, x); }
inline SEG_T seg_merge(SEG_T a, SEG_T b) { return OP(a, b); }
#define seg_final(a, start) (a)
#endif

/* The first segment of [0, closes) whose close is unit d or later
 * (closes when none): the segment the work-item starting at unit d is
 * in. */
inline ulong seg_at_unit(__global const ulong *offsets, ulong lo, ulong closes,
                         ulong d) {
  ulong a = 0, b = closes;
  while (a < b) {
    ulong m = a + (b - a) / 2;
    if (offsets[m + 1] - lo + m >= d)
      b = m;
    else
      a = m + 1;
  }
  return a;
}

/* The unit of a segment's first element (or of its close, when empty), in
 * this launch's numbering; 0 when it started in an earlier launch. */
inline ulong seg_first_unit(__global const ulong *offsets, ulong lo, ulong s) {
  ulong start = offsets[s];
  return start < lo ? 0 : start - lo + s;
}

#if !CLR_OP_IS_RECORD
CLR_DEFINE_FOLD(clr_fold_lanes, ACC_T, OP)
#endif

/* acc combined with the m elements at p (element index base first, for
 * records; a map expression's i is ibase + that index): whole vectors of
 * CLR_VEC into a vector accumulator (independent chains, wide loads:
 * cl/load_mapped.cl), its lanes folded, then the rest one by one
 * (records: a candidate a lane). */
inline SEG_T seg_fold_run(__global const IN_T *p, ulong m, ulong base,
                          ulong ibase, SEG_T acc) {
  ulong k = 0;
#if CLR_VEC > 1 && !CLR_OP_IS_RECORD
  ulong vectors = m / CLR_VEC;
  if (vectors > 0) {
    ACCV_T v = (ACCV_T)(IDENTITY);
    for (ulong j = 0; j < vectors; j++) {
      ACCV_T x = clr_load_vec(p, p, j, ibase + base);
      v = OP(v, x);
    }
    ACC_T f = clr_fold_lanes(v);
    acc = OP(acc, f);
    k = vectors * CLR_VEC;
  }
#endif
#if CLR_VEC > 1 && CLR_OP_IS_RECORD
  /* Records: a candidate per lane (cl/records.cl), folded in after. */
  ulong vectors = m / CLR_VEC;
  if (vectors > 0 && vectors <= UINT_MAX) {
    clr_lanes c;
    clr_lanes_start(&c, clr_load_vec(p, p, 0, ibase + base));
    uint j = 1;
#if CLR_OP_IS_MOMENTS /* var, std: four vectors a block (moments.cl) */
    for (; j + 3 < (uint)vectors; j += 4)
      clr_lanes_take4(&c, clr_load_vec(p, p, j, ibase + base),
                      clr_load_vec(p, p, j + 1, ibase + base),
                      clr_load_vec(p, p, j + 2, ibase + base),
                      clr_load_vec(p, p, j + 3, ibase + base));
#endif
    for (; j < (uint)vectors; j++)
      clr_lanes_take(&c, clr_load_vec(p, p, j, ibase + base), j);
    clr_lanes_fold(&acc, c, base, 0, 1);
    k = vectors * CLR_VEC;
  }
#endif
  for (; k < m; k++) {
    ACC_T x = MAPPED(IN_AT(p, k), 0, ibase + base + k);
    acc = seg_take(acc, x, base + k);
  }
#if CLR_OP_IS_LOGICAL
  /* and / or give 0 or 1.  Oclgrind 21.10 gave 255 for a run of two
   * true elements here (its && of ints widened a 1-bit true through a
   * byte), where PoCL gives 1: the truth is normalised. */
  acc = acc != 0;
#endif
  return acc;
}

/* data[data_off + i] is element lo + i; offsets and out start at their
 * *_off elements; a map expression's i is ibase + the element's index
 * (clr_options.index_base). */
__kernel void clr_seg_items(__global const IN_T *data, ulong data_off, ulong lo,
                            ulong len, __global const ulong *offsets,
                            ulong offsets_off, ulong closes,
                            __global SEG_T *out, ulong out_off,
                            __global SEG_T *carry, __global SEG_T *head,
                            __global ulong *pending, ulong ibase) {
  offsets += offsets_off;
  out += out_off;
  ulong t = get_global_id(0);
  ulong units = len + closes;
  ulong d = t * CLR_SEG_ITEMS;
  if (d >= units)
    return;
  ulong d_end = min(d + (ulong)CLR_SEG_ITEMS, units);
  ulong s = seg_at_unit(offsets, lo, closes, d);
  ulong i = d - s;
  /* The segment open at the start continues one from before this
   * work-item (an earlier one, or an earlier launch). */
  ulong s_open = s;
  int continued = offsets[s] < lo || seg_first_unit(offsets, lo, s) < d;
  ulong wait = CLR_SEG_NONE;
  SEG_T acc = seg_identity();
  while (d < d_end) {
    ulong close = s < closes ? offsets[s + 1] - lo : len;
    ulong take = min(close - i, d_end - d);
    acc = seg_fold_run(data + data_off + i, take, lo + i, ibase, acc);
    i += take;
    d += take;
    if (d < d_end) { /* the next unit closes s */
      if (s == s_open && continued) {
        wait = s;
        head[t] = acc;
      } else {
        out[s] = seg_final(acc, offsets[s]);
      }
      s++;
      d++;
      acc = seg_identity();
    }
  }
  carry[t] = acc;
  pending[t] = wait;
}

/* ------------------------------------------------------------ tiles
 * The GPU's form of clr_seg_items (-DCLR_SEG_WG: the work-group size it
 * is built for; CLR_SEG_ITEMS = CLR_SEG_WG * CLR_SEG_IPT units a tile).
 * A work-group takes a tile of units, whose start and end
 * clr_seg_partition has found (a merge-path search a tile, not one a
 * work-item), the tile's
 * elements (mapped) and segment ends read into local memory with
 * consecutive work-items on consecutive addresses, then every work-item
 * folds its CLR_SEG_IPT units from local memory, and the work-items'
 * partials are combined (by warp shuffles or in local memory, below):
 * only the tile's carry, head and pending segment go to global memory,
 * as clr_seg_items's are per work-item, so the pyramid and clr_seg_finish
 * work on tiles. */
#ifdef CLR_SEG_WG
#define SEG_TILE (CLR_SEG_WG * CLR_SEG_IPT)
/* A segment's end in a tile, relative to its first element: 16 bits where
 * they fit (a tile's local memory is what bounds how many work-groups an
 * SM holds: 16-bit ends took random segments' tile pass from 0.227 to
 * 0.210 ms on the H100). */
#if SEG_TILE <= 65536 /* (an end is below the tile's elements, < 65536) */
#define SEG_END_T ushort
#else
#define SEG_END_T uint
#endif

/* Element k of the tile in local memory, one pad word every 32: work-item
 * l reads from l * CLR_SEG_IPT on, and without the pad a warp's reads
 * would fall on 32 / CLR_SEG_IPT banks. */
#define XS(k) xs[(k) + (k) / 32]

/* How a tile combines its work-items' partials (the segment a work-item
 * closes after its start spans the partials of the work-items before it
 * from where it began; the tile's carry, those from where the segment
 * open at its end began):
 * - CLR_SEG_SHFL (the host sets it on NVIDIA's OpenCL, for work-groups of
 *   whole warps of 32): one segmented scan of the partials, across each
 *   warp by PTX shuffles (NVIDIA's OpenCL has no subgroup extension but
 *   takes inline PTX), then across the warps through local memory, with
 *   one barrier.  1e6 random segments on an H100: 0.2080-0.2099 ->
 *   0.1985-0.2009 ms for the whole kernel; argmax 0.3150 -> 0.2944.
 * - otherwise the partials in local memory, folded by each work-item
 *   that closes a segment over the ones it spans, and the carry by one
 *   work-item or a tree.  (A Kogge-Stone scan in local memory in their
 *   place, two barriers a step, took 0.2148-0.2153 ms on the H100 where
 *   these took 0.2086-0.2094.) */
#if CLR_SEG_SHFL
CLR_DEFINE_SHFL(seg_shfl_up, SEG_T, clr_shfl_up_u32) /* common.cl */
/* The warp's lanes whose p is not 0, a bit each. */
inline uint seg_ballot(int p) {
  uint r;
  __asm__ __volatile__("{\n\t.reg .pred q;\n\t"
                       "setp.ne.s32 q, %1, 0;\n\t"
                       "vote.sync.ballot.b32 %0, q, 0xffffffff;\n\t}"
                       : "=r"(r)
                       : "r"(p));
  return r;
}
/* The segmented inclusive scan of the work-items' partials x, a segment
 * beginning at each work-item whose `begins` is set: *scan is the fold of
 * x over work-items [b, lid], b the last work-item up to lid that begins
 * (0 if none), and *prev that of work-item lid - 1 (the identity for
 * work-item 0).  Every work-item of the work-group calls it, in the same
 * place.  xv and xf: a value and a flag a warp. */
inline void seg_scan_group(SEG_T x, int begins, uint lid, __local SEG_T *xv,
                           __local int *xf, SEG_T *scan, SEG_T *prev) {
  uint lane = lid % 32, warp = lid / 32;
  uint heads = seg_ballot(begins);
  uint upto = heads & (lane == 31 ? 0xffffffffu : (2u << lane) - 1);
  int began = upto ? 31 - (int)clz(upto) : -1; /* the lane it began at */
  SEG_T v = x;
  for (uint off = 1; off < 32; off <<= 1) {
    SEG_T up = seg_shfl_up(v, off);
    if (lane >= off && (int)(lane - off) >= began)
      v = seg_merge(up, v);
  }
  if (lane == 31) {
    xv[warp] = v;
    xf[warp] = heads != 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  SEG_T before = seg_identity(); /* scan(32 * warp - 1) */
  for (uint w = 0; w < warp; w++)
    before = xf[w] ? xv[w] : seg_merge(before, xv[w]);
  v = began >= 0 ? v : seg_merge(before, v);
  SEG_T p = seg_shfl_up(v, 1);
  *scan = v;
  *prev = lane == 0 ? before : p;
}
#else
/* The most work-items' partials a tile's carry folds one by one. */
#define SEG_SHORT_CARRY 16

/* The fold of local partials [a, b). */
inline SEG_T seg_local_fold(__local const SEG_T *p, uint a, uint b) {
  SEG_T acc = seg_identity();
  for (uint j = a; j < b; j++)
    acc = seg_merge(acc, p[j]);
  return acc;
}

#if CLR_OP_IS_RECORD
#define seg_group_reduce clr_group_merge /* cl/records.cl */
#else
#define seg_group_reduce clr_group_reduce
#endif
#endif

/* Where every tile starts (and the last one ends): bounds[2j] the
 * segment open at tile j's first unit, bounds[2j + 1] the elements before
 * it.  Two ways, the host choosing (by_segment):
 * - a binary search a work-item (of tiles + 1), all at once, so that no
 *   work-group waits on its own searches: log2(closes) dependent reads;
 * - from the segments' side, where no segment spans more than a few tiles
 *   (the host knows its longest): work-item s (of closes + 1) writes the
 *   bounds of each tile whose first unit is one of segment s's units (its
 *   elements and its close, after the close of s - 1; for s == closes,
 *   the segment open at the launch's end, up to the end).  The offsets
 *   are read once, coalesced, and no read waits on another (1e6 random
 *   segments on an H100: 0.2134 -> 0.2094 ms for the whole kernel). */
__kernel void clr_seg_partition(__global const ulong *offsets,
                                ulong offsets_off, ulong lo, ulong len,
                                ulong closes, ulong tiles,
                                __global ulong *bounds, uint by_segment) {
  offsets += offsets_off;
  ulong g = get_global_id(0), units = len + closes;
  if (!by_segment) {
    if (g > tiles)
      return;
    ulong d = min(g * SEG_TILE, units);
    ulong s = seg_at_unit(offsets, lo, closes, d);
    bounds[2 * g] = s;
    bounds[2 * g + 1] = d - s;
    return;
  }
  ulong s = g;
  if (s > closes)
    return;
  ulong j = s == 0 ? 0 : (offsets[s] - lo + s - 1) / SEG_TILE + 1;
  ulong j_end = s < closes ? (offsets[s + 1] - lo + s) / SEG_TILE : tiles;
  for (; j <= j_end; j++) {
    bounds[2 * j] = s;
    bounds[2 * j + 1] = min(j * SEG_TILE, units) - s;
  }
}

__kernel __attribute__((reqd_work_group_size(CLR_SEG_WG, 1, 1))) void
clr_seg_tiles(__global const IN_T *data, ulong data_off, ulong lo, ulong len,
              __global const ulong *offsets, ulong offsets_off, ulong closes,
              __global SEG_T *out, ulong out_off, __global SEG_T *carry,
              __global SEG_T *head, __global ulong *pending, ulong ibase,
              __global const ulong *tile_bounds) {
  __local ACC_T xs[SEG_TILE + SEG_TILE / 32]; /* its elements, mapped   */
  __local SEG_END_T ends[SEG_TILE]; /* its segments' ends, tile-relative */
#if CLR_SEG_SHFL
  __local SEG_T xv[CLR_SEG_WG / 32]; /* seg_scan_group's: a warp's scan */
  __local int xf[CLR_SEG_WG / 32];   /* and whether a segment began in it */
#else
  __local SEG_T parts[CLR_SEG_WG]; /* each work-item's carry             */
#endif
  offsets += offsets_off;
  out += out_off;
  uint lid = get_local_id(0);
  ulong tile = get_group_id(0), units = len + closes;
  ulong t0 = tile * SEG_TILE, t1 = min(t0 + SEG_TILE, units);
  /* The segment and the element at the tile's start and end
   * (clr_seg_partition). */
  __global const ulong *tb = tile_bounds + 2 * tile;
  ulong s0 = tb[0], i0 = tb[1], s1 = tb[2], i1 = tb[3];
  uint n_x = (uint)(i1 - i0), n_ends = (uint)(s1 - s0);
#if CLR_VEC > 1 && 32 % CLR_VEC == 0
  /* Whole vectors of CLR_VEC (cl/load_mapped.cl; a vector never straddles
   * a pad word), then the rest one by one. */
  __global const IN_T *p = data + data_off + i0;
  uint whole = n_x / CLR_VEC * CLR_VEC;
  for (uint k = lid * CLR_VEC; k < whole; k += CLR_SEG_WG * CLR_VEC)
    CLR_CAT(vstore, CLR_VEC)
  (clr_load_vec(p, p, k / CLR_VEC, ibase + lo + i0), 0, &XS(k));
  for (uint k = whole + lid; k < n_x; k += CLR_SEG_WG)
#else
  for (uint k = lid; k < n_x; k += CLR_SEG_WG)
#endif
    XS(k) = MAPPED(IN_AT(data, data_off + i0 + k), 0, ibase + lo + i0 + k);
  for (uint k = lid; k < n_ends; k += CLR_SEG_WG)
    ends[k] = (uint)(offsets[s0 + 1 + k] - lo - i0);
  barrier(CLK_LOCAL_MEM_FENCE);
  /* This work-item's units [d, d_end) of the tile, from segment s0 + r. */
  uint tile_units = (uint)(t1 - t0);
  uint d = min(lid * CLR_SEG_IPT, tile_units);
  uint d_end = min(d + CLR_SEG_IPT, tile_units);
  uint a = 0, b = n_ends;
  while (a < b) {
    uint m = (a + b) / 2;
    if (ends[m] + m >= d)
      b = m;
    else
      a = m + 1;
  }
  uint r = a, i = d - r, r_open = r;
  /* The tile's first segment, s0: whether it began in the tile, and at
   * which unit (its first element; 0 when it began before). */
  ulong s0_start = offsets[s0];
  int s0_in = s0_start >= lo + i0;
  uint s0_at = s0_in ? (uint)(s0_start - lo - i0) : 0;
  /* The tile-relative unit where segment s0 + r_open begins (its first
   * element, or its close when empty); before the tile: none. */
  int in_tile = r_open > 0 || s0_in;
  uint first = r_open > 0 ? ends[r_open - 1] + r_open : s0_at;
  int continued = !in_tile || first < d;
  int closes_open = 0;
  SEG_T acc = seg_identity(), head_own = acc;
  /* Unit by unit, CLR_SEG_IPT steps in every work-item (but the tile's
   * last ones): a warp's work-items take their elements and close their
   * segments in the same steps.  (A loop over each run of elements up to
   * the next close ran the runs of a warp one after another: random
   * segments of 1..200 spent 0.08 ms of 0.24 in the walk on the H100,
   * long ones 0.013.) */
  uint next = r < n_ends ? ends[r] + r : UINT_MAX; /* the next close's unit */
  for (uint k = 0; k < CLR_SEG_IPT; k++) {
    if (d + k >= d_end)
      break;
    if (d + k == next) { /* the unit closes segment s0 + r */
      if (r == r_open && continued) {
        closes_open = 1;
        head_own = acc;
      } else {
        out[s0 + r] = seg_final(acc, offsets[s0 + r]);
      }
      r++;
      next = r < n_ends ? ends[r] + r : UINT_MAX;
      acc = seg_identity();
    } else {
      acc = seg_take(acc, XS(i), lo + i0 + i);
      i++;
    }
  }
  /* The segment this work-item closed after its start: the fold of the
   * work-items' partials before it that it spans (from the one where it
   * began, or the tile's start), then its own part.  With shuffles it is
   * the segmented scan of the partials (the segment open at each
   * work-item's end beginning in it where it closed one, or where the one
   * open at its start began at its start) at the work-item before; else
   * the fold of the partials in local memory.  The tile's first segment,
   * when it began before the tile, is finished by clr_seg_finish: the
   * work-item that closes it (the one holding the tile's first close)
   * leaves its part in head[tile] and names it in pending[tile]; without
   * one, work-item 0 writes "none".  Each of those has one writer, so no
   * barrier follows: a warp leaves as soon as its folds are done. */
  SEG_T done = head_own;
#if CLR_SEG_SHFL
  SEG_T scan, prev;
  seg_scan_group(acc, r > r_open || !continued, lid, xv, xf, &scan, &prev);
  done = seg_merge(prev, head_own);
#else
  parts[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (closes_open)
    done = seg_merge(
        seg_local_fold(parts, in_tile ? first / CLR_SEG_IPT : 0, lid), done);
#endif
  if (closes_open) {
    if (in_tile) {
      out[s0 + r_open] = seg_final(done, offsets[s0 + r_open]);
    } else {
      pending[tile] = s0;
      head[tile] = done;
    }
  }
  if (lid == 0 && (n_ends == 0 || s0_in))
    pending[tile] = CLR_SEG_NONE;
#if CLR_SEG_SHFL
  /* The tile's carry: the scan at its last work-item. */
  if (lid == CLR_SEG_WG - 1)
    carry[tile] = scan;
#else
  /* The segment open at the tile's end: its partial, the fold of the
   * work-items' partials from where it began, is the tile's carry: folded
   * by one work-item when it began in the last SEG_SHORT_CARRY, else by a
   * tree over the work-group once every reader of parts is done.  (from is
   * the work-group's own, so every work-item takes the same branch.  The
   * tree's seven barriers cost random segments 0.022 ms of their 0.24 on
   * the H100, where the open segment spans a few work-items.) */
  int end_in_tile = n_ends > 0 || s0_in;
  uint end_first = n_ends > 0 ? ends[n_ends - 1] + n_ends : s0_at;
  uint from = end_in_tile ? end_first / CLR_SEG_IPT : 0;
  if (CLR_SEG_WG - from <= SEG_SHORT_CARRY) {
    if (lid == CLR_SEG_WG - 1)
      carry[tile] = seg_local_fold(parts, from, CLR_SEG_WG);
  } else {
    SEG_T mine = seg_identity();
    if (lid >= from)
      mine = parts[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    SEG_T tile_carry = seg_group_reduce(parts, mine);
    if (lid == 0)
      carry[tile] = tile_carry;
  }
#endif
}
#endif

/* dst[j] = the fold of src[j * CLR_SEG_BLOCK .. + CLR_SEG_BLOCK), within
 * the n values of src. */
__kernel void clr_seg_blocks(__global SEG_T *pyramid, ulong src, ulong n,
                             ulong dst) {
  ulong j = get_global_id(0);
  ulong a = j * CLR_SEG_BLOCK;
  if (a >= n)
    return;
  ulong b = min(a + (ulong)CLR_SEG_BLOCK, n);
  SEG_T acc = seg_identity();
  for (ulong k = a; k < b; k++)
    acc = seg_merge(acc, pyramid[src + k]);
  pyramid[dst + j] = acc;
}

/* The fold of carries [a, b) of the pyramid: level 0 is the `items`
 * carries, each next level the block folds of the one below, stored after
 * it; whole blocks are read a level up.  The top level (levels - 1) is at
 * most 2 * CLR_SEG_BLOCK long. */
inline SEG_T seg_range(__global const SEG_T *pyramid, ulong items, uint levels,
                       ulong a, ulong b) {
  SEG_T acc = seg_identity();
  ulong start = 0, size = items;
  for (uint k = 0; a < b; k++) {
    __global const SEG_T *p = pyramid + start;
    ulong up = (a + CLR_SEG_BLOCK - 1) / CLR_SEG_BLOCK * CLR_SEG_BLOCK;
    ulong down = b / CLR_SEG_BLOCK * CLR_SEG_BLOCK;
    if (k + 1 == levels || up >= down) {
      for (ulong j = a; j < b; j++)
        acc = seg_merge(acc, p[j]);
      break;
    }
    for (ulong j = a; j < up; j++)
      acc = seg_merge(acc, p[j]);
    for (ulong j = down; j < b; j++)
      acc = seg_merge(acc, p[j]);
    a = up / CLR_SEG_BLOCK;
    b = down / CLR_SEG_BLOCK;
    start += size;
    size = (size + CLR_SEG_BLOCK - 1) / CLR_SEG_BLOCK;
  }
  return acc;
}

__kernel void clr_seg_finish(__global const ulong *offsets, ulong offsets_off,
                             ulong lo, ulong closes, int open_end, ulong items,
                             __global SEG_T *out, ulong out_off,
                             __global const SEG_T *pyramid, uint levels,
                             __global const SEG_T *head,
                             __global const ulong *pending) {
  offsets += offsets_off;
  out += out_off;
  ulong t = get_global_id(0);
  ulong s;
  SEG_T last;
  int partial = 0; /* the segment open at the launch's end */
  if (t < items) {
    s = pending[t];
    if (s == CLR_SEG_NONE)
      return;
    last = head[t];
  } else if (t == items && open_end) {
    s = closes; /* open at the launch's end: its partial so far */
    last = seg_identity();
    partial = 1;
  } else {
    return;
  }
  ulong first = seg_first_unit(offsets, lo, s) / CLR_SEG_ITEMS;
  SEG_T acc = seg_identity();
  if (offsets[s] < lo)
    acc = out[s];
  SEG_T mid = seg_range(pyramid, items, levels, first, t);
  acc = seg_merge(acc, mid);
  acc = seg_merge(acc, last);
  out[s] = partial ? acc : seg_final(acc, offsets[s]);
}

#ifdef CLR_SEG_MEAN
/* Means, in place: each segment's sum (ACC_T, from the sum's program)
 * divided by its length (with CLR_SEG_COUNTS: by counts[s], a
 * NaN-skipping mean's count of numbers, passed as offsets) and written
 * over it as float (CLR_SEG_MEAN 1) or
 * double (2), of the same size; the division in double where
 * CLR_SEG_WIDE says the device has it.  An empty segment's mean is NaN
 * (0 / 0). */
#if CLR_SEG_MEAN == 2 || CLR_SEG_WIDE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if CLR_SEG_MEAN == 2
#define MEAN_T double
#else
#define MEAN_T float
#endif
__kernel void clr_seg_mean(__global const ulong *offsets, ulong offsets_off,
                           ulong n_segments, __global ACC_T *out,
                           ulong out_off) {
  offsets += offsets_off;
  out += out_off;
  ulong s = get_global_id(0);
  if (s >= n_segments)
    return;
#if CLR_SEG_COUNTS
  ulong len = offsets[s]; /* the segments' counts of numbers */
#else
  ulong len = offsets[s + 1] - offsets[s];
#endif
  ACC_T sum = out[s];
#if CLR_SEG_WIDE
  MEAN_T q = (MEAN_T)((double)sum / (double)len);
#else
  /* float only: the quotient, corrected once by its residual */
  float d = (float)len, q0 = sum / d;
  MEAN_T q = q0 + fma(-q0, d, sum) / d;
#endif
  ((__global MEAN_T *)out)[s] = q;
}
#endif

__kernel void clr_seg_check(__global const ulong *offsets, ulong offsets_off,
                            ulong n_segments, ulong n, ulong short_units,
                            uint rows_asked, __global ulong *flags) {
  offsets += offsets_off;
  ulong s = get_global_id(0);
  if (s > n_segments)
    return;
  ulong o = offsets[s];
  if ((s == 0 && o != 0) || (s == n_segments && o != n) ||
      (s < n_segments && o > offsets[s + 1]))
    flags[0] = 1;
  /* flags[1]: the segments are no rows (every one but the last as long as
   * the first, not empty; the last 1..that long); flags[2]: the first's
   * length.  Only when asked (rows_asked): a segmented scan does not ask,
   * and on an H100 the stores of flags[1] from every segment that breaks
   * the pattern, all to one word, cost 1e6 segments 0.006-0.011 ms. */
  if (s < n_segments) {
    ulong len = offsets[s + 1] - o, row = offsets[1] - offsets[0];
    if (rows_asked &&
        (row == 0 || (s + 1 < n_segments ? len != row : len == 0 || len > row)))
      flags[1] = 1;
    if (s == 0)
      flags[2] = row;
    /* flags[3]: a segment has more than short_units units (elements and
     * its close): its length is not bounded by it (0: not asked, and no
     * work-item stores) */
    if (short_units && len >= short_units)
      flags[3] = 1;
  }
}

/* ------------------------------------------------ the enqueued check
 * clr_enqueue checks the offsets on the device and reads nothing back.
 * Its scratch (ulongs) holds safe[0, n_segments], the verdict at
 * n_segments + 1 and the work-groups' findings from n_segments + 2.
 * Three kernels in queue order:
 *   clr_seg_check_groups   each work-group's lowest index of a bad offset
 *                          (ULONG_MAX: none), the offsets taken
 *                          grid-stride;
 *   clr_seg_check_verdict  one work-group: the lowest of those, as the
 *                          verdict (0: every offset good, else 1 + the
 *                          index of the first bad one, as the host's
 *                          clr_check_offsets names it);
 *   clr_seg_sanitise       the offsets copied to safe[], or with a bad
 *                          verdict the partition 0, 0, ..., 0, n.
 * The kernels after them read the offsets from safe[] only, so bad
 * offsets never make them read or write out of bounds: they see a valid
 * partition either way.  mins: a work-group's local memory, its size a
 * power of two. */
inline ulong seg_bad_at(__global const ulong *offsets, ulong s,
                        ulong n_segments, ulong n) {
  ulong o = offsets[s];
  if (s == 0 && o != 0)
    return 0;
  if (s < n_segments && offsets[s + 1] < o)
    return s + 1;
  if (s == n_segments && o != n)
    return s;
  return ULONG_MAX;
}

inline ulong seg_group_min(__local ulong *mins, ulong v) {
  uint lid = get_local_id(0), size = get_local_size(0);
  mins[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint step = size / 2; step > 0; step /= 2) {
    if (lid < step)
      mins[lid] = min(mins[lid], mins[lid + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return mins[0];
}

__kernel void clr_seg_check_groups(__global const ulong *offsets,
                                   ulong offsets_off, ulong n_segments, ulong n,
                                   __global ulong *scratch,
                                   __local ulong *mins) {
  offsets += offsets_off;
  ulong bad = ULONG_MAX;
  /* each work-item's offsets in increasing order: its first bad one is
   * its lowest */
  for (ulong s = get_global_id(0); s <= n_segments && bad == ULONG_MAX;
       s += get_global_size(0))
    bad = seg_bad_at(offsets, s, n_segments, n);
  bad = seg_group_min(mins, bad);
  if (get_local_id(0) == 0)
    scratch[n_segments + 2 + get_group_id(0)] = bad;
}

__kernel void clr_seg_check_verdict(__global ulong *scratch, ulong n_segments,
                                    ulong n_groups, __local ulong *mins) {
  ulong bad = ULONG_MAX;
  for (ulong g = get_local_id(0); g < n_groups; g += get_local_size(0))
    bad = min(bad, scratch[n_segments + 2 + g]);
  bad = seg_group_min(mins, bad);
  if (get_local_id(0) == 0)
    scratch[n_segments + 1] = bad == ULONG_MAX ? 0 : bad + 1;
}

__kernel void clr_seg_sanitise(__global const ulong *offsets, ulong offsets_off,
                               ulong n_segments, ulong n,
                               __global ulong *scratch) {
  ulong s = get_global_id(0);
  if (s > n_segments)
    return;
  scratch[s] = scratch[n_segments + 1] == 0 ? offsets[offsets_off + s]
                                            : (s == n_segments ? n : 0);
}
