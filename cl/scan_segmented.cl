/* Segmented prefix scan: a scan that restarts at every segment head, the
 * heads given by CSR offsets (-DCLR_SSCAN_HEADS=0) or by one flag byte an
 * element (-DCLR_SSCAN_HEADS=1, non-zero: a segment starts here).
 *
 * A segmented scan is a plain scan of (flag, value) pairs under
 *
 *     (f1, v1) . (f2, v2) = (f1 | f2,  f2 ? v2 : v1 OP v2)
 *
 * which is associative for any associative OP (Blelloch, "Prefix sums and
 * their applications", 1990), so the arrangement is the tiled scan's
 * reduce-then-scan, a level at a time:
 *
 *   clr_sscan_up    each work-item folds its run of per_item consecutive
 *                   pairs to one pair: flag = a head in the run, value =
 *                   the fold from the run's last head (or its start) to
 *                   its end.  The pairs of level k are the input of level
 *                   k + 1 (flags as bytes), until a level fits one run.
 *   clr_sscan_down  each work-item rescans its run from the running value
 *                   before it (the level above's exclusive result, or at
 *                   the top the initial value) and writes: at level 0 the
 *                   inclusive or exclusive segmented scan (an exclusive
 *                   scan gives a head the identity), above it the
 *                   exclusive pair scan in place, the carries level k - 1
 *                   starts from.
 *
 * The initial value (init_total[0], with init_flags bit 1) is combined
 * before element 0 as part of the first segment: the caller's carry-in,
 * or the running value of the previous chunk of a streamed array, so the
 * element-0 head of the first launch is ignored (no_head0).  With bit 2
 * the work-item owning element n-1 writes the running value after it to
 * init_total[1], the next chunk's initial value.
 *
 * Offsets (CLR_SSCAN_HEADS=0): n_offsets sorted values (element indices
 * of the whole array, lo being this launch's element 0); an element is a
 * head when some offset equals its index, and an offset outside [lo, lo +
 * n) marks nothing.  The host has checked that they never decrease.  A
 * work-item finds the first offset of its run by binary search, then
 * walks them beside the elements.
 *
 * Every work-item touches only its own run, so in == out (in place) is
 * safe.  Inputs are IN_T at level 0 (converted by LOAD), ACC_T above. */

#ifndef CLR_SSCAN_HEADS
#define CLR_SSCAN_HEADS 1
#endif

/* The walk over the heads of one run of this launch's elements. */
typedef struct {
#if CLR_SSCAN_HEADS == 0
  ulong next; /* the run's next head at or after the element, or ~0 */
  ulong k;    /* the offset that gives it */
#else
  uchar unused; /* flags are read where they are */
#endif
} sscan_heads;

#if CLR_SSCAN_HEADS == 0
/* The first of offsets[0, count) that is >= v. */
inline ulong sscan_lower_bound(__global const ulong *offsets, ulong count,
                               ulong v) {
  ulong a = 0, b = count;
  while (a < b) {
    ulong m = a + (b - a) / 2;
    if (offsets[m] < v)
      a = m + 1;
    else
      b = m;
  }
  return a;
}

/* Offset k as an element of this launch (never below lo: k only grows
 * from the first offset at or after the run's start), or ~0 past them. */
inline ulong sscan_offset_at(__global const ulong *offsets, ulong count,
                             ulong k, ulong lo) {
  return k < count ? offsets[k] - lo : ~(ulong)0;
}
#endif

/* The walk from element b on (a head before it is of no interest to a
 * run starting at b). */
inline sscan_heads sscan_heads_at(__global const ulong *offsets,
                                  ulong n_offsets, ulong lo, ulong b) {
  sscan_heads h;
#if CLR_SSCAN_HEADS == 0
  h.k = sscan_lower_bound(offsets, n_offsets, lo + b);
  h.next = sscan_offset_at(offsets, n_offsets, h.k, lo);
#else
  (void)offsets;
  (void)n_offsets;
  (void)lo;
  (void)b;
  h.unused = 0;
#endif
  return h;
}

/* 1 when element i (visited in order from the run's start) is a head. */
inline int sscan_is_head(sscan_heads *h, __global const uchar *heads,
                         __global const ulong *offsets, ulong n_offsets,
                         ulong lo, ulong i) {
#if CLR_SSCAN_HEADS == 0
  (void)heads;
  if (i != h->next)
    return 0;
  /* step past every offset equal to it (empty segments) */
  while (h->k < n_offsets && offsets[h->k] - lo <= i)
    h->k++;
  h->next = sscan_offset_at(offsets, n_offsets, h->k, lo);
  return 1;
#else
  (void)h;
  (void)offsets;
  (void)n_offsets;
  (void)lo;
  return heads[i] != 0;
#endif
}

__kernel void clr_sscan_up(__global const IN_T *in, ulong in_off,
                           __global const uchar *heads, ulong heads_off,
                           __global const ulong *offsets, ulong offsets_off,
                           ulong n_offsets, ulong lo, uint no_head0, ulong n,
                           ulong per_item, __global ACC_T *up_val,
                           ulong up_val_off, __global uchar *up_flag,
                           ulong up_flag_off) {
  in += in_off;
  heads += heads_off;
  offsets += offsets_off;
  ulong t = get_global_id(0);
  ulong b = t * per_item;
  if (b >= n)
    return;
  ulong e = min(b + per_item, n);
  sscan_heads h = sscan_heads_at(offsets, n_offsets, lo, b);
  ACC_T v = IDENTITY;
  uchar f = 0;
  for (ulong i = b; i < e; i++) {
    ACC_T x = LOAD(IN_AT(in, i));
    int head = sscan_is_head(&h, heads, offsets, n_offsets, lo, i) &&
               (i != 0 || !no_head0);
    v = head ? x : OP(v, x);
    f |= (uchar)head;
  }
  up_val[up_val_off + t] = v;
  up_flag[up_flag_off + t] = f;
}

/* mode 0: inclusive; 1: exclusive (a head gets the identity); 2: the
 * exclusive pair scan (the running value before each element). */
__kernel void clr_sscan_down(__global const IN_T *in, ulong in_off,
                             __global const uchar *heads, ulong heads_off,
                             __global const ulong *offsets, ulong offsets_off,
                             ulong n_offsets, ulong lo, uint no_head0, ulong n,
                             ulong per_item, __global const ACC_T *carry,
                             ulong carry_off, uint use_carry,
                             __global ACC_T *init_total, uint init_flags,
                             __global ACC_T *out, ulong out_off, uint mode) {
  in += in_off;
  heads += heads_off;
  offsets += offsets_off;
  out += out_off;
  ulong t = get_global_id(0);
  ulong b = t * per_item;
  if (b >= n)
    return;
  ulong e = min(b + per_item, n);
  ACC_T run = IDENTITY;
  if (use_carry)
    run = carry[carry_off + t];
  else if (init_flags & 1u)
    run = init_total[0];
  sscan_heads h = sscan_heads_at(offsets, n_offsets, lo, b);
  for (ulong i = b; i < e; i++) {
    ACC_T x = LOAD(IN_AT(in, i));
    int head = sscan_is_head(&h, heads, offsets, n_offsets, lo, i) &&
               (i != 0 || !no_head0);
    ACC_T next = head ? x : OP(run, x);
    out[i] = mode == 0 ? next : mode == 1 && head ? IDENTITY : run;
    run = next;
  }
  if ((init_flags & 2u) && e == n)
    init_total[1] = run;
}
