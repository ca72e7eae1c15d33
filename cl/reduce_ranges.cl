/* Ranges on the device, nothing read back (clr_enqueue of a RANGES
 * request): one result per (offset, length) range of the data, the ranges
 * in any order, overlapping, empty, or bad (past n: checked here, taken
 * as empty, so no element is read through one).
 *
 * Units: range r is len_r + 1 units (its elements, then one that closes
 * it; a bad range's len is 0), laid end to end in the ranges' order.  The
 * work is cut into G equal shares of units, a work-item each, so one huge
 * range beside many tiny ones is spread over the device like any other
 * work.  Kernels, in queue order:
 *   clr_ranges_blocks   per block of ranges (a work-group's): its units
 *                       and its lowest bad range;
 *   clr_ranges_top      one work-group: the blocks' units as exclusive
 *                       prefixes, the total, the verdict (0: every range
 *                       good, else 1 + the lowest bad index) to meta and,
 *                       when given, to the caller's status;
 *   clr_ranges_prefix   the inclusive prefix of units at each range;
 *   clr_ranges_items    a work-item a share: the ranges that open and
 *                       close in it finished and written, the pieces of
 *                       ranges cut at its ends kept as partials (a head:
 *                       a range opened before the share; a tail: one
 *                       opened in it and left open);
 *   clr_ranges_fix      each tail folded with the heads after it up to the
 *                       one that closes its range, in order, and written;
 *   clr_ranges_mean     (means) each sum divided by the range's length or
 *                       its count of numbers, as cl/reduce_segmented.cl's
 *                       clr_seg_mean divides.
 *
 * Ops: every combine of common.cl and records.cl (argmin, argmax,
 * minmax: indices counted from the range's first element), maps (a map
 * expression's i: ibase + the element's index in the data).  Results in
 * the accumulator type (records for the indexed ops). */

#if CLR_OP_IS_RECORD
#define RNG_T clr_record
#define RNG_IDENTITY() clr_no_record()
#define RNG_TAKE(acc, x, j) clr_take(&(acc), (x), (j))
#define RNG_MERGE(acc, o) clr_merge(&(acc), (o))
#else
#define RNG_T ACC_T
#define RNG_IDENTITY() IDENTITY
#define RNG_TAKE(acc, x, j) ((acc) = OP((acc), (x)))
#define RNG_MERGE(acc, o)                                                      \
  do {                                                                         \
    ACC_T o_ = (o);                                                            \
    (acc) = OP((acc), o_);                                                     \
  } while (0)
#endif

/* Range r's length, 0 for a bad one (past n). */
inline ulong rng_len(__global const ulong *ranges, ulong r, ulong n, int *bad) {
  ulong off = ranges[2 * r], len = ranges[2 * r + 1];
  *bad = off > n || len > n - off;
  return *bad ? 0 : len;
}

/* A work-group's fold of ulongs, sum (0) or min (1), in work-item 0. */
inline ulong rng_group_fold(__local ulong *s, ulong v, int take_min) {
  uint lid = get_local_id(0), wg = get_local_size(0);
  s[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = clr_pow2_below(wg); h > 0; h >>= 1) {
    if (lid < h && lid + h < wg)
      s[lid] = take_min ? min(s[lid], s[lid + h]) : s[lid] + s[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  v = s[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return v;
}

/* A work-group's exclusive prefix sum of v (Hillis-Steele in local). */
inline ulong rng_group_excl(__local ulong *s, ulong v) {
  uint lid = get_local_id(0), wg = get_local_size(0);
  s[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < wg; d <<= 1) {
    ulong add = lid >= d ? s[lid - d] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  ulong incl = s[lid];
  barrier(CLK_LOCAL_MEM_FENCE);
  return incl - v;
}

/* Work-item k of block b takes ranges [first, first + per) of it. */
#define RNG_SLICE(per)                                                         \
  ulong first = (get_group_id(0) * get_local_size(0) + get_local_id(0)) * (per)

__kernel void clr_ranges_blocks(__global const ulong *ranges, ulong ranges_off,
                                ulong n_ranges, ulong n, ulong per,
                                __global ulong *block_units,
                                __global ulong *block_bad, __local ulong *s) {
  ranges += ranges_off; /* in ulongs, as the host counts it */
  RNG_SLICE(per);
  ulong units = 0, bad_at = ULONG_MAX;
  for (ulong r = first; r < first + per && r < n_ranges; r++) {
    int bad;
    units += rng_len(ranges, r, n, &bad) + 1;
    if (bad && bad_at == ULONG_MAX)
      bad_at = r;
  }
  units = rng_group_fold(s, units, 0);
  bad_at = rng_group_fold(s, bad_at, 1);
  if (get_local_id(0) == 0) {
    block_units[get_group_id(0)] = units;
    block_bad[get_group_id(0)] = bad_at;
  }
}

/* One work-group.  meta[0]: the total units, meta[1]: the verdict. */
__kernel void clr_ranges_top(__global ulong *block_units,
                             __global const ulong *block_bad, ulong blocks,
                             __global ulong *meta, __global ulong *status,
                             ulong status_off, uint status_given,
                             __local ulong *s) {
  uint lid = get_local_id(0), wg = get_local_size(0);
  ulong per = (blocks + wg - 1) / wg, first = lid * per;
  ulong units = 0, bad_at = ULONG_MAX;
  for (ulong b = first; b < first + per && b < blocks; b++) {
    units += block_units[b];
    bad_at = min(bad_at, block_bad[b]);
  }
  ulong at = rng_group_excl(s, units);
  for (ulong b = first; b < first + per && b < blocks; b++) {
    ulong u = block_units[b];
    block_units[b] = at;
    at += u;
  }
  bad_at = rng_group_fold(s, bad_at, 1);
  if (lid == wg - 1)
    meta[0] = at; /* the last work-item's end: the total */
  if (lid == 0) {
    ulong verdict = bad_at == ULONG_MAX ? 0 : bad_at + 1;
    meta[1] = verdict;
    if (status_given)
      status[status_off] = verdict;
  }
}

__kernel void clr_ranges_prefix(__global const ulong *ranges, ulong ranges_off,
                                ulong n_ranges, ulong n, ulong per,
                                __global const ulong *block_units,
                                __global ulong *ends, __local ulong *s) {
  ranges += ranges_off; /* in ulongs, as the host counts it */
  RNG_SLICE(per);
  ulong units = 0;
  for (ulong r = first; r < first + per && r < n_ranges; r++) {
    int bad;
    units += rng_len(ranges, r, n, &bad) + 1;
  }
  ulong at = block_units[get_group_id(0)] + rng_group_excl(s, units);
  for (ulong r = first; r < first + per && r < n_ranges; r++) {
    int bad;
    at += rng_len(ranges, r, n, &bad) + 1;
    ends[r] = at;
  }
}

/* Share t of the units: [rng_share(t), rng_share(t + 1)). */
inline ulong rng_share(ulong total, ulong g, ulong t) {
  return t * (total / g) + min(t, total % g);
}

/* parts: a head and a tail per work-item (2t, 2t + 1); flags[2t]: bit 0
 * a head, bit 1 the head closes its range, bit 2 a tail; flags[2t + 1]:
 * the tail's range. */
__kernel void clr_ranges_items(
    __global const IN_T *data, ulong data_off, __global const ulong *ranges,
    ulong ranges_off, ulong n_ranges, ulong n, __global const ulong *ends,
    __global const ulong *meta, ulong g, __global RNG_T *out, ulong out_off,
    __global RNG_T *parts, __global ulong *flags, ulong ibase) {
  ulong t = get_global_id(0);
  if (t >= g)
    return;
  ranges += ranges_off; /* in ulongs, as the host counts it */
  out += out_off;
  ulong total = meta[0];
  ulong u = rng_share(total, g, t), stop = rng_share(total, g, t + 1);
  ulong f = 0, tail_r = 0;
  if (u < stop) {
    /* the range holding unit u: the first whose end is past it */
    ulong lo = 0, hi = n_ranges - 1;
    while (lo < hi) {
      ulong mid = lo + (hi - lo) / 2;
      if (ends[mid] > u)
        hi = mid;
      else
        lo = mid + 1;
    }
    ulong r = lo;
    while (u < stop) {
      int bad;
      ulong len = rng_len(ranges, r, n, &bad);
      ulong open = ends[r] - len - 1; /* the range's first unit */
      ulong off = bad ? 0 : ranges[2 * r];
      ulong j = u - open, j_end = min(len, stop - open);
      RNG_T acc = RNG_IDENTITY();
      for (; j < j_end; j++) {
        ulong i = off + j;
        ACC_T x = MAPPED(IN_AT(data, data_off + i), 0, ibase + i);
        RNG_TAKE(acc, x, j);
      }
      int opened = u == open, closes = ends[r] <= stop;
      if (opened && closes) {
        out[r] = acc;
      } else if (!opened) { /* a head: the share's first piece */
        parts[2 * t] = acc;
        f |= closes ? 3 : 1;
      } else { /* a tail: opened here, left open */
        parts[2 * t + 1] = acc;
        f |= 4;
        tail_r = r;
      }
      u = ends[r];
      r++;
    }
  }
  flags[2 * t] = f;
  flags[2 * t + 1] = tail_r;
}

__kernel void clr_ranges_fix(__global const RNG_T *parts,
                             __global const ulong *flags, ulong g,
                             __global RNG_T *out, ulong out_off) {
  ulong t = get_global_id(0);
  if (t >= g || !(flags[2 * t] & 4))
    return;
  RNG_T acc = parts[2 * t + 1];
  for (ulong v = t + 1; v < g; v++) {
    ulong f = flags[2 * v];
    if (f & 1)
      RNG_MERGE(acc, parts[2 * v]);
    if (f & 2)
      break;
  }
  out[out_off + flags[2 * t + 1]] = acc;
}

#ifdef CLR_RNG_MEAN
/* Means, in place: each sum (ACC_T) divided by its range's length, or
 * with counts_given by counts[r] (a NaN-skipping mean's numbers), as
 * float (CLR_RNG_MEAN 1) or double (2) of the same size; the division as
 * clr_seg_mean's (in double where CLR_RNG_WIDE says the device has it).
 * A bad or empty range's mean is NaN (0 / 0). */
#if CLR_RNG_MEAN == 2 || CLR_RNG_WIDE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if CLR_RNG_MEAN == 2
#define MEAN_T double
#else
#define MEAN_T float
#endif
__kernel void clr_ranges_mean(__global const ulong *ranges, ulong ranges_off,
                              ulong n_ranges, ulong n,
                              __global const ulong *counts, uint counts_given,
                              __global ACC_T *out, ulong out_off) {
  ranges += ranges_off; /* in ulongs, as the host counts it */
  out += out_off;
  ulong r = get_global_id(0);
  if (r >= n_ranges)
    return;
  int bad;
  ulong len = counts_given ? counts[r] : rng_len(ranges, r, n, &bad);
  ACC_T sum = out[r];
#if CLR_RNG_WIDE
  MEAN_T q = (MEAN_T)((double)sum / (double)len);
#else
  float d = (float)len, q0 = sum / d;
  MEAN_T q = q0 + fma(-q0, d, sum) / d;
#endif
  ((__global MEAN_T *)out)[r] = q;
}
#endif
