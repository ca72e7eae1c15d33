/* Gather of ranges: the elements of ranges [offset, offset + length) of
 * data (in any order, overlapping or not) copied one after another into
 * out, so that a segmented reduction can reduce them as adjacent segments
 * (src/lib/ranges.c).  One work-group a range: its work-items copy it
 * with consecutive work-items on consecutive elements.
 *
 * ranges holds (offset, length) pairs as ulongs; starts[r] is where range
 * r begins in out.  Elements are copied as bits of -DCLR_GATHER_BYTES=2,
 * 4 or 8 bytes (half data too), converted by nothing. */

#if CLR_GATHER_BYTES == 2
#define GATHER_T ushort
#elif CLR_GATHER_BYTES == 4
#define GATHER_T uint
#else
#define GATHER_T ulong
#endif

__kernel void clr_gather_ranges(__global const GATHER_T *data, ulong data_off,
                                __global const ulong *ranges,
                                __global const ulong *starts,
                                __global GATHER_T *out) {
  data += data_off;
  ulong r = get_group_id(0);
  ulong off = ranges[2 * r], len = ranges[2 * r + 1], to = starts[r];
  for (ulong i = get_local_id(0); i < len; i += get_local_size(0))
    out[to + i] = data[off + i];
}
