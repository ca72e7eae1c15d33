/* Variance and standard deviation results finished in place: the count
 * records of cl/moments.cl (mean, M2, count), one a segment, row or
 * column, become what the caller reads, (value, mean, count) in the same
 * bytes: the value M2 / (count - ddof) (NaN when count <= ddof, as
 * NumPy), or its square root for take_sqrt; the mean NaN for no element.
 * Records from element off of r, count of them. */
__kernel void clr_moments_finish(__global clr_record *r, ulong off,
                                 ulong count, ulong ddof, uint take_sqrt) {
  ulong i = get_global_id(0);
  if (i >= count)
    return;
  clr_record a = r[off + i];
  ACC_T v = a.n > ddof ? a.m2 / (ACC_T)(a.n - ddof) : (ACC_T)NAN;
  if (take_sqrt)
    v = sqrt(v);
  clr_record out;
  out.mean = v;                           /* byte 0: the value */
  out.m2 = a.n > 0 ? a.mean : (ACC_T)NAN; /* then the mean */
  out.n = a.n;
  r[off + i] = out;
}
