/* (count, mean, M2) records: variance and standard deviation
 * (-DCLR_OP_IS_MOMENTS=1), in the record interface of cl/records.cl
 * (clr_record, clr_take, clr_merge, clr_no_record, clr_group_merge, and
 * the lanes of vector loads), so every kernel that folds records (the
 * whole-array reduce_extrema.cl, reduce_segmented.cl, reduce_rows.cl,
 * reduce_columns.cl) folds these too; the host puts this file before
 * theirs instead of records.cl.
 *
 * M2 is the sum of squared deviations from the mean.  An element joins a
 * record by Welford's update (mean += d / n, M2 += d * (x - mean'), d =
 * x - mean), two records merge by Chan, Golub and LeVeque's pairwise
 * formula (n = na + nb, d = mean_b - mean_a, mean = mean_a + d * nb / n,
 * M2 = M2_a + M2_b + d^2 * na * nb / n): never a sum of squares less the
 * square of a sum, whose cancellation loses every digit on data far from
 * 0 (1e4 + U(0, 1) in float).  Computed in ACC_T (the result type); the
 * count is exact (64 bits).  A NaN makes mean and M2 NaN; an infinity
 * makes M2 NaN (inf * (inf - inf)).  The indices the record kernels pass
 * mean nothing here.
 *
 * The host reads a record as three fields: mean at byte 0, M2 at
 * sizeof(ACC_T), the count at 2 * sizeof(ACC_T) (no padding: 2 *
 * sizeof(ACC_T) is a multiple of 8), and a result array's records are
 * finished in place by cl/moments_finish.cl into (value, mean, count). */
#if !CLR_OP_IS_MOMENTS
#error "moments.cl is for var and std (-DCLR_OP_IS_MOMENTS=1)"
#endif

typedef struct clr_record {
  ACC_T mean, m2;
  ulong n;
} clr_record;

inline void clr_take(clr_record *r, ACC_T x, ulong i) {
  (void)i;
  r->n += 1;
  ACC_T d = x - r->mean;
  r->mean += d / (ACC_T)r->n;
  r->m2 += d * (x - r->mean);
}

/* b (the later elements) merged into *a.  An empty side leaves the other
 * as it is (and two empty ones stay empty: no 0 / 0). */
inline void clr_merge(clr_record *a, clr_record b) {
  if (b.n == 0)
    return;
  if (a->n == 0) {
    *a = b;
    return;
  }
  ulong n = a->n + b.n;
  ACC_T d = b.mean - a->mean;
  ACC_T fb = (ACC_T)b.n / (ACC_T)n;
  a->mean += d * fb;
  a->m2 += b.m2 + d * d * (ACC_T)a->n * fb;
  a->n = n;
}

CLR_DEFINE_GROUP_MERGE(clr_record, clr_merge)

inline clr_record clr_no_record(void) {
  clr_record r = {(ACC_T)0, (ACC_T)0, 0};
  return r;
}

/* A result as the caller reads it, (value, mean, count) in the record's
 * bytes: the value M2 / (count - ddof) (NaN when count <= ddof, as
 * NumPy), or its square root for take_sqrt; the mean NaN for no element.
 * Written by cl/moments_finish.cl over a result array, or by a kernel's
 * last write itself where the host built it with -DCLR_MOMENTS_DDOF=d
 * (and -DCLR_MOMENTS_SQRT=1 for std): CLR_FINAL below. */
inline clr_record clr_moments_finished(clr_record a, ulong ddof,
                                       uint take_sqrt) {
  ACC_T v = a.n > ddof ? a.m2 / (ACC_T)(a.n - ddof) : (ACC_T)NAN;
  if (take_sqrt)
    v = sqrt(v);
  clr_record out;
  out.mean = v;                           /* byte 0: the value */
  out.m2 = a.n > 0 ? a.mean : (ACC_T)NAN; /* then the mean */
  out.n = a.n;
  return out;
}
#ifdef CLR_MOMENTS_DDOF
#ifndef CLR_MOMENTS_SQRT
#define CLR_MOMENTS_SQRT 0
#endif
#undef CLR_FINAL
#define CLR_FINAL(a)                                                           \
  clr_moments_finished((a), (ulong)CLR_MOMENTS_DDOF, CLR_MOMENTS_SQRT)
#endif

#if CLR_VEC > 1
/* Lanes: with CLR_VEC-wide loads (cl/load_mapped.cl), a record per lane,
 * every lane holding the same count (the vectors seen), so Welford's
 * division is one reciprocal a vector, not one a lane; the lanes merge
 * into a record at the end. */
typedef struct clr_lanes {
  ACCV_T mean, m2;
  uint n;
} clr_lanes;

inline void clr_lanes_start(clr_lanes *c, ACCV_T x) {
  c->mean = x;
  /* (x - x) * 0: 0, or NaN in an infinite (or NaN) lane, as clr_take
   * makes it */
  c->m2 = (x - x) * (ACCV_T)(0);
  c->n = 1;
}

/* Vector k (counted from the work-item's first, which started c). */
inline void clr_lanes_take(clr_lanes *c, ACCV_T x, uint k) {
  c->n = k + 1;
  ACC_T rcp = (ACC_T)1 / (ACC_T)c->n;
  ACCV_T d = x - c->mean;
  c->mean += d * rcp;
  c->m2 += d * (x - c->mean);
}

/* Four vectors at once: their mean and M2 a lane by two passes in
 * registers, merged into the lanes' by Chan's formula with one division
 * for all (and a dependency chain a quarter as long as four takes). */
inline void clr_lanes_take4(clr_lanes *c, ACCV_T x0, ACCV_T x1, ACCV_T x2,
                            ACCV_T x3) {
  ACCV_T m = ((x0 + x1) + (x2 + x3)) * (ACC_T)0.25;
  x0 -= m;
  x1 -= m;
  x2 -= m;
  x3 -= m;
  ACCV_T q = (x0 * x0 + x1 * x1) + (x2 * x2 + x3 * x3);
  ACC_T fb = (ACC_T)4 / (ACC_T)(c->n + 4);
  ACCV_T d = m - c->mean;
  c->mean += d * fb;
  c->m2 += q + d * d * ((ACC_T)c->n * fb);
  c->n += 4;
}

inline void clr_lanes_fold(clr_record *r, clr_lanes c, ulong base, ulong first,
                           ulong step) {
  (void)base;
  (void)first;
  (void)step;
  ACC_T mean[CLR_VEC], m2[CLR_VEC];
  CLR_CAT(vstore, CLR_VEC)(c.mean, 0, mean);
  CLR_CAT(vstore, CLR_VEC)(c.m2, 0, m2);
  for (uint k = 0; k < CLR_VEC; k++) {
    clr_record one = {mean[k], m2[k], c.n};
    clr_merge(r, one);
  }
}
#endif
