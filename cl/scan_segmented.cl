/* Segmented prefix scan: a scan that restarts at every segment head, the
 * heads given by CSR offsets (by_offsets) or by one flag byte an element
 * (non-zero: a segment starts here).  The form of the heads is an
 * argument, not a build option, so one program serves both and the
 * levels above level 0 (flag bytes) too when the input and output types
 * are one.
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
 * Offsets (by_offsets): n_offsets sorted values (element indices
 * of the whole array, lo being this launch's element 0); an element is a
 * head when some offset equals its index, and an offset outside [lo, lo +
 * n) marks nothing.  The host has checked that they never decrease.  A
 * work-item finds the first offset of its run by binary search, then
 * walks them beside the elements.
 *
 * Two forms of the same kernels:
 *   runs  (CPUs: the contiguous layout) each work-item reads its run of
 *         per_item elements straight from global memory;
 *   tiles (GPUs: the strided layout, -DCLR_SSCAN_WG=wg -DCLR_SSCAN_IPT=ipt)
 *         a work-group reads a tile of wg * ipt elements into local memory
 *         with consecutive work-items on consecutive elements (coalesced),
 *         marks the tile's heads as one bit mask a work-item, and each
 *         work-item then takes its run of ipt (= per_item) elements from
 *         there; the down pass writes its results back into the tile and
 *         the work-group stores them coalesced.
 * Both give a work-item the same run, so the levels are the same.
 *
 * Every work-item (or work-group) touches only its own run (tile), so in
 * == out (in place) is safe.  Inputs are IN_T at level 0 (converted by
 * LOAD), ACC_T above. */

/* The walk over the heads of one run of this launch's elements. */
typedef struct {
  ulong next; /* offsets: the run's next head at or after the element */
  ulong k;    /* offsets: the offset that gives it */
  uint by_offsets;
} sscan_heads;

/* Work-item t's run of elements, [*b, *e) of n, per_item each: 0 when it
 * has none (past n). */
inline int sscan_run_of(ulong t, ulong per_item, ulong n, ulong *b, ulong *e) {
  *b = t * per_item;
  *e = min(*b + per_item, n);
  return *b < n;
}

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

/* The walk from element b on (a head before it is of no interest to a
 * run starting at b); flags need none. */
inline sscan_heads sscan_heads_at(__global const ulong *offsets,
                                  ulong n_offsets, ulong lo, ulong b,
                                  uint by_offsets) {
  sscan_heads h;
  h.by_offsets = by_offsets;
  h.k = by_offsets ? sscan_lower_bound(offsets, n_offsets, lo + b) : 0;
  h.next =
      by_offsets ? sscan_offset_at(offsets, n_offsets, h.k, lo) : ~(ulong)0;
  return h;
}

/* 1 when element i (visited in order from the run's start) is a head. */
inline int sscan_is_head(sscan_heads *h, __global const uchar *heads,
                         __global const ulong *offsets, ulong n_offsets,
                         ulong lo, ulong i) {
  if (!h->by_offsets)
    return heads[i] != 0;
  if (i != h->next)
    return 0;
  /* step past every offset equal to it (empty segments) */
  while (h->k < n_offsets && offsets[h->k] - lo <= i)
    h->k++;
  h->next = sscan_offset_at(offsets, n_offsets, h->k, lo);
  return 1;
}

/* The passes' parameters, the same in both forms below (the host sets
 * them by position). */
#define SSCAN_UP_PARAMS                                                        \
  __global const IN_T *in, ulong in_off, __global const uchar *heads,          \
      ulong heads_off, __global const ulong *offsets, ulong offsets_off,       \
      ulong n_offsets, uint by_offsets, ulong lo, uint no_head0, ulong n,      \
      ulong per_item, __global ACC_T *up_val, ulong up_val_off,                \
      __global uchar *up_flag, ulong up_flag_off, uint vec_ok
#define SSCAN_DOWN_PARAMS                                                      \
  __global const IN_T *in, ulong in_off, __global const uchar *heads,          \
      ulong heads_off, __global const ulong *offsets, ulong offsets_off,       \
      ulong n_offsets, uint by_offsets, ulong lo, uint no_head0, ulong n,      \
      ulong per_item, __global const ACC_T *carry, ulong carry_off,            \
      uint use_carry, __global ACC_T *init_total, uint init_flags,             \
      __global ACC_T *out, ulong out_off, uint mode, uint vec_ok

#ifdef CLR_SSCAN_WG
/* ------------------------------------------------------------ tiles */
#define SSCAN_T (CLR_SSCAN_WG * CLR_SSCAN_IPT)
/* One padding element every 32: the work-items' runs of ipt elements
 * start in different banks. */
#define SSCAN_PAD(p) ((p) + (p) / 32)
#if CLR_SSCAN_IPT > 32
#error "a tile's work-item takes at most 32 elements (one bit mask)"
#endif

/* The tile from element `tile` into tv (the identity past n), and its
 * heads into hm: bit j of hm[w] marks element w * ipt + j of the tile.
 * Returns this work-item's mask (element 0 of the launch no head with
 * no_head0), after a barrier. */
inline uint sscan_tile_load(__global const IN_T *in,
                            __global const uchar *heads,
                            __global const ulong *offsets, ulong n_offsets,
                            uint by_offsets, ulong lo, uint no_head0, ulong n,
                            __local ACC_T *tv, __local uint *hm,
                            __local ulong *first) {
  uint lid = get_local_id(0);
  ulong tile = get_group_id(0) * (ulong)SSCAN_T;
  hm[lid] = 0;
  if (lid == 0 && by_offsets)
    *first = sscan_lower_bound(offsets, n_offsets, lo + tile);
  for (uint j = 0; j < CLR_SSCAN_IPT; j++) {
    ulong p = (ulong)j * CLR_SSCAN_WG + lid, i = tile + p;
    tv[SSCAN_PAD(p)] = i < n ? LOAD(IN_AT(in, i)) : IDENTITY;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (by_offsets) {
    /* the tile's offsets, each read once (empty segments mark one
     * element several times) */
    ulong end = min(tile + SSCAN_T, n);
    for (ulong k = *first + lid; k < n_offsets; k += CLR_SSCAN_WG) {
      ulong o = offsets[k] - lo;
      if (o >= end)
        break;
      uint p = (uint)(o - tile);
      atomic_or(&hm[p / CLR_SSCAN_IPT], 1u << (p % CLR_SSCAN_IPT));
    }
  } else {
    for (uint j = 0; j < CLR_SSCAN_IPT; j++) {
      uint p = j * CLR_SSCAN_WG + lid;
      ulong i = tile + p;
      if (i < n && heads[i])
        atomic_or(&hm[p / CLR_SSCAN_IPT], 1u << (p % CLR_SSCAN_IPT));
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint mask = hm[lid];
  if (tile == 0 && lid == 0 && no_head0)
    mask &= ~1u;
  return mask;
}

/* A tile kernel's start: its local memory, the tile loaded, this
 * work-item's first element b and head mask. */
#define SSCAN_TILE_BEGIN                                                       \
  __local ACC_T tv[SSCAN_PAD(SSCAN_T)];                                        \
  __local uint hm[CLR_SSCAN_WG];                                               \
  __local ulong first;                                                         \
  (void)per_item; /* CLR_SSCAN_IPT */                                          \
  (void)vec_ok;                                                                \
  uint lid = get_local_id(0);                                                  \
  ulong b = get_group_id(0) * (ulong)SSCAN_T + (ulong)lid * CLR_SSCAN_IPT;     \
  uint mask =                                                                  \
      sscan_tile_load(in + in_off, heads + heads_off, offsets + offsets_off,   \
                      n_offsets, by_offsets, lo, no_head0, n, tv, hm, &first)

__kernel __attribute__((reqd_work_group_size(CLR_SSCAN_WG, 1, 1))) void
clr_sscan_up(SSCAN_UP_PARAMS) {
  SSCAN_TILE_BEGIN;
  if (b >= n)
    return;
  /* A floating-point min or max chains order keys (CLR_CHAIN_T,
   * common.cl): one integer min or max a step, not OP's compares and
   * selects. */
  CLR_CHAIN_T v = clr_chain(IDENTITY);
  uchar f = 0;
  for (uint j = 0; j < CLR_SSCAN_IPT; j++)
    if (b + j < n) {
      CLR_CHAIN_T x = clr_chain(tv[SSCAN_PAD(lid * CLR_SSCAN_IPT + j)]);
      int head = (mask >> j) & 1u;
      v = head ? x : CLR_CHAIN_OP(v, x);
      f |= (uchar)head;
    }
  ulong t = get_global_id(0);
  up_val[up_val_off + t] = clr_unchain(v);
  up_flag[up_flag_off + t] = f;
}

__kernel __attribute__((reqd_work_group_size(CLR_SSCAN_WG, 1, 1))) void
clr_sscan_down(SSCAN_DOWN_PARAMS) {
  SSCAN_TILE_BEGIN;
  ulong tile = b - (ulong)lid * CLR_SSCAN_IPT;
  out += out_off;
  if (b < n) {
    ACC_T run = IDENTITY;
    if (use_carry)
      run = carry[carry_off + get_global_id(0)];
    else if (init_flags & 1u)
      run = init_total[0];
    CLR_CHAIN_T k = clr_chain(run);
    for (uint j = 0; j < CLR_SSCAN_IPT; j++)
      if (b + j < n) {
        uint p = SSCAN_PAD(lid * CLR_SSCAN_IPT + j);
        CLR_CHAIN_T x = clr_chain(tv[p]);
        int head = (mask >> j) & 1u;
        CLR_CHAIN_T next = head ? x : CLR_CHAIN_OP(k, x);
        tv[p] = mode == 0           ? clr_unchain(next)
                : mode == 1 && head ? IDENTITY
                                    : clr_unchain(k);
        k = next;
      }
    run = clr_unchain(k);
    if ((init_flags & 2u) && b + CLR_SSCAN_IPT >= n)
      init_total[1] = run;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint j = 0; j < CLR_SSCAN_IPT; j++) {
    ulong p = (ulong)j * CLR_SSCAN_WG + lid, i = tile + p;
    if (i < n)
      out[i] = tv[SSCAN_PAD(p)];
  }
}

#else
/* ------------------------------------------------------------ runs */
/* With -DCLR_VEC=2|4|8 (cl/scan_lanes.cl first) and vec_ok (the host has
 * seen that every vector the kernel reads or writes is aligned to its
 * size: PoCL's vload_half8 faults otherwise) a run is walked a vector
 * at a time where the vector holds no head: the up pass keeps CLR_VEC
 * lanes of partial folds, the down pass scans the vector in registers
 * (a float add's latency bounded one chain an element); a vector with a
 * head is walked an element at a time. */

#ifndef CLR_VEC
#define CLR_VEC 1
#endif

#if CLR_VEC > 1
/* A floating-point min or max walks its head-free vectors on order keys
 * (a chain, common.cl): one integer min or max a combine. */
CLR_DEFINE_FOLD(sscan_fold_chain, CLR_CHAIN_T, CLR_CHAIN_OP)

/* 1 when no element of [i, i + CLR_VEC) is a head (the walk stands at i). */
inline int sscan_no_head(const sscan_heads *h, __global const uchar *heads,
                         ulong i) {
  if (h->by_offsets)
    return h->next >= i + CLR_VEC;
  CLR_CAT(uchar, CLR_VEC) f = CLR_CAT(vload, CLR_VEC)(0, heads + i);
  return !any(f != (CLR_CAT(uchar, CLR_VEC))0);
}
#endif

/* Element i's pair (the walk stands at i): its value x (a chain link,
 * common.cl) and head.  The runs combine every element, not only their
 * head-free vectors', on the chain, so a floating-point min or max gives
 * the same bits whether a vector is walked whole or element by element
 * (which the arrays' alignment decides: vec_ok). */
#define SSCAN_ELEMENT(i)                                                       \
  CLR_CHAIN_T x = clr_chain(LOAD(IN_AT(in, (i))));                             \
  int head = sscan_is_head(&h, heads, offsets, n_offsets, lo, (i)) &&          \
             ((i) != 0 || !no_head0)

/* Both passes start alike: work-item t's run [b, e) (none: it returns),
 * the arrays from their offsets, and where the heads are. */
#define SSCAN_START                                                            \
  ulong t = get_global_id(0), b, e;                                            \
  if (!sscan_run_of(t, per_item, n, &b, &e))                                   \
    return;                                                                    \
  in += in_off;                                                                \
  heads += heads_off;                                                          \
  offsets += offsets_off;                                                      \
  sscan_heads h = sscan_heads_at(offsets, n_offsets, lo, b, by_offsets)

/* The up pass takes element i into the run's value v and head flag f;
 * the down pass writes element i's output (mode as clr_sscan_down's) and
 * moves the running value c on. */
#define SSCAN_UP_STEP(i)                                                       \
  {                                                                            \
    SSCAN_ELEMENT(i);                                                          \
    v = head ? x : CLR_CHAIN_OP(v, x);                                         \
    f |= (uchar)head;                                                          \
  }
#define SSCAN_DOWN_STEP(i)                                                     \
  {                                                                            \
    SSCAN_ELEMENT(i);                                                          \
    CLR_CHAIN_T next = head ? x : CLR_CHAIN_OP(c, x);                          \
    out[i] = mode == 0           ? clr_unchain(next)                           \
             : mode == 1 && head ? IDENTITY                                    \
                                 : clr_unchain(c);                             \
    c = next;                                                                  \
  }

__kernel void clr_sscan_up(SSCAN_UP_PARAMS) {
  SSCAN_START;
  CLR_CHAIN_T v = clr_chain(IDENTITY);
  uchar f = 0;
  ulong i = b;
#if CLR_VEC > 1
  /* lanes: the fold, lane by lane, of the vectors since v's last element */
  CLR_CHAINV_T lanes = clr_chainv((ACCV_T)(IDENTITY));
  int held = 0;
  for (; vec_ok && i + CLR_VEC <= e; i += CLR_VEC) {
    if (sscan_no_head(&h, heads, i)) {
      lanes = CLR_CHAIN_OP(lanes, clr_chainv(VLOAD(i, in)));
      held = 1;
      continue;
    }
    if (held) {
      v = CLR_CHAIN_OP(v, sscan_fold_chain(lanes));
      lanes = clr_chainv((ACCV_T)(IDENTITY));
      held = 0;
    }
    for (ulong k = i; k < i + CLR_VEC; k++)
      SSCAN_UP_STEP(k)
  }
  if (held)
    v = CLR_CHAIN_OP(v, sscan_fold_chain(lanes));
#endif
  for (; i < e; i++)
    SSCAN_UP_STEP(i)
  up_val[up_val_off + t] = clr_unchain(v);
  up_flag[up_flag_off + t] = f;
}

/* mode 0: inclusive; 1: exclusive (a head gets the identity); 2: the
 * exclusive pair scan (the running value before each element). */
__kernel void clr_sscan_down(SSCAN_DOWN_PARAMS) {
  SSCAN_START;
  out += out_off;
  ACC_T run = IDENTITY;
  if (use_carry)
    run = carry[carry_off + t];
  else if (init_flags & 1u)
    run = init_total[0];
  CLR_CHAIN_T c = clr_chain(run);
  ulong i = b;
#if CLR_VEC > 1
  for (; vec_ok && i + CLR_VEC <= e; i += CLR_VEC) {
    if (sscan_no_head(&h, heads, i)) {
      /* (a head-free vector: modes 1 and 2 alike, the lanes moved up) */
      ACCV_T y;
      c = clr_scan_vector(VLOAD(i, in), c, mode != 0, &y);
      VSTORE(y, i, out);
      continue;
    }
    for (ulong k = i; k < i + CLR_VEC; k++)
      SSCAN_DOWN_STEP(k)
  }
#endif
  for (; i < e; i++)
    SSCAN_DOWN_STEP(i)
  if ((init_flags & 2u) && e == n)
    init_total[1] = clr_unchain(c);
}
#endif
