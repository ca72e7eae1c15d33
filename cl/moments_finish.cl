/* Variance and standard deviation results finished in place: the
 * records of cl/moments.cl (mean, M2, count), one a segment, row or
 * column, become what the caller reads, (value, mean, count) in the same
 * bytes (moments.cl's clr_moments_finished).  Records from element off of
 * r, count of them.  (Rows of a matrix are finished by their kernel's own
 * last write instead: CLR_FINAL.) */
__kernel void clr_moments_finish(__global clr_record *r, ulong off, ulong count,
                                 ulong ddof, uint take_sqrt) {
  ulong i = get_global_id(0);
  if (i < count)
    r[off + i] = clr_moments_finished(r[off + i], ddof, take_sqrt);
}
