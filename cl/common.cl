/* clreduce common prelude: prepended to every kernel source by the host.
 *
 * Type and operation arrive as named -D options, made by the host from
 * the rows of include/clreduce_types.def and include/clreduce_ops.def, so
 * one source per algorithm serves every type and operation:
 *   -DCLR_IN_<T>=1    element type read from global memory: FLOAT, DOUBLE,
 *                     INT, UINT, LONG, ULONG, or HALF (binary16 storage,
 *                     read with vload_half as float: no cl_khr_fp16)
 *   -DCLR_ACC_<T>=1   accumulator / result type (not HALF)
 *   -DCLR_OP_<C>=1    the operation's combine (its row's combine column):
 *                     SUM, PROD, MIN, MAX, AND, OR, XOR (below),
 *                     ARGMIN, ARGMAX, MINMAX (records.cl), VAR
 *                     (moments.cl)
 *   -DCLR_OP_IS_INDEXED=1, -DCLR_OP_IS_LOGICAL=1, -DCLR_OP_SKIPS_NAN=1,
 *   -DCLR_OP_IS_MOMENTS=1
 *                     the row's flags (CLR_OPF_INDEXED, _LOGICAL,
 *                     _SKIPS_NAN, _MOMENTS; SKIPS_NAN only for floating
 *                     accumulators)
 *   -DCLR_MAP=<map>   map applied to each input element (kernels that
 *                     take maps: MAPPED below)
 *   -DCLR_INPUTS=2    two inputs (dot products)
 * Map codes:  0 none, 1 abs, 2 square, 3 an expression: the host puts
 *             `#define CLR_MAP_EXPR(x, i) (...)` (two inputs:
 *             CLR_MAP_EXPR(x, y, i)) before this prelude.
 * Names not given are 0 in #if; defaults make each file build on its own
 * (float sum).  No kernel compares an operation or a type by number.
 *
 * Semantics (shared with the CPU reference in src/check/reference.c):
 * - min/max on floating types propagate NaN, and order -0.0 below +0.0,
 *   so the result does not depend on the order of evaluation; with
 *   CLR_OP_SKIPS_NAN a NaN loses to every number instead, and the
 *   identity of min / max is NaN (what no number gives).
 * - and/or treat non-zero as true and produce 0 or 1.
 * - integer sum/prod wrap modulo 2^bits of the accumulator type.
 */
#if !(CLR_IN_FLOAT || CLR_IN_DOUBLE || CLR_IN_INT || CLR_IN_UINT ||            \
      CLR_IN_LONG || CLR_IN_ULONG || CLR_IN_HALF)
#define CLR_IN_FLOAT 1
#endif
#if !(CLR_ACC_FLOAT || CLR_ACC_DOUBLE || CLR_ACC_INT || CLR_ACC_UINT ||        \
      CLR_ACC_LONG || CLR_ACC_ULONG)
#if CLR_IN_DOUBLE
#define CLR_ACC_DOUBLE 1
#elif CLR_IN_INT
#define CLR_ACC_INT 1
#elif CLR_IN_UINT
#define CLR_ACC_UINT 1
#elif CLR_IN_LONG
#define CLR_ACC_LONG 1
#elif CLR_IN_ULONG
#define CLR_ACC_ULONG 1
#else
#define CLR_ACC_FLOAT 1
#endif
#endif
/* Every combine and flag name is defined, 0 unless given (they appear in
 * expressions too); no combine given: a sum. */
#if !(CLR_OP_SUM || CLR_OP_PROD || CLR_OP_MIN || CLR_OP_MAX || CLR_OP_AND ||   \
      CLR_OP_OR || CLR_OP_XOR || CLR_OP_ARGMIN || CLR_OP_ARGMAX ||             \
      CLR_OP_MINMAX || CLR_OP_VAR)
#undef CLR_OP_SUM
#define CLR_OP_SUM 1
#endif
#ifndef CLR_OP_SUM
#define CLR_OP_SUM 0
#endif
#ifndef CLR_OP_PROD
#define CLR_OP_PROD 0
#endif
#ifndef CLR_OP_MIN
#define CLR_OP_MIN 0
#endif
#ifndef CLR_OP_MAX
#define CLR_OP_MAX 0
#endif
#ifndef CLR_OP_AND
#define CLR_OP_AND 0
#endif
#ifndef CLR_OP_OR
#define CLR_OP_OR 0
#endif
#ifndef CLR_OP_XOR
#define CLR_OP_XOR 0
#endif
#ifndef CLR_OP_ARGMIN
#define CLR_OP_ARGMIN 0
#endif
#ifndef CLR_OP_ARGMAX
#define CLR_OP_ARGMAX 0
#endif
#ifndef CLR_OP_MINMAX
#define CLR_OP_MINMAX 0
#endif
#ifndef CLR_OP_VAR
#define CLR_OP_VAR 0
#endif
#ifndef CLR_OP_IS_INDEXED
#define CLR_OP_IS_INDEXED 0
#endif
#ifndef CLR_OP_IS_MOMENTS
#define CLR_OP_IS_MOMENTS 0
#endif
/* CLR_FINAL(x): what a kernel's last write stores of its fold x: x itself,
 * or for var and std built to finish in place a finished result
 * (moments.cl). */
#define CLR_FINAL(x) (x)
/* Operations that fold records (clr_record, clr_take, clr_merge,
 * clr_no_record, clr_group_merge) instead of values: the indexed ones
 * (records.cl) and the moments (moments.cl), the host putting that file
 * before the kernel's. */
#define CLR_OP_IS_RECORD (CLR_OP_IS_INDEXED || CLR_OP_IS_MOMENTS)
#ifndef CLR_OP_IS_LOGICAL
#define CLR_OP_IS_LOGICAL 0
#endif
#ifndef CLR_OP_SKIPS_NAN
#define CLR_OP_SKIPS_NAN 0
#endif
#ifndef CLR_MAP
#define CLR_MAP 0
#endif
#ifndef CLR_INPUTS
#define CLR_INPUTS 1
#endif

#if CLR_IN_DOUBLE || CLR_ACC_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Shape options some kernels take (each file says which): elements per
 * load or per vector (CLR_VEC), strided or contiguous access (CLR_LAYOUT:
 * 1 strided, 2 contiguous). */
#ifndef CLR_VEC
#define CLR_VEC 1
#endif
#ifndef CLR_LAYOUT
#define CLR_LAYOUT 1
#endif

#define CLR_CAT_(a, b) a##b
#define CLR_CAT(a, b) CLR_CAT_(a, b)

/* IN_T: the input's OpenCL type name (one token, usable in CLR_CAT) */
#if CLR_IN_DOUBLE
#define IN_T double
#elif CLR_IN_INT
#define IN_T int
#elif CLR_IN_UINT
#define IN_T uint
#elif CLR_IN_LONG
#define IN_T long
#elif CLR_IN_ULONG
#define IN_T ulong
#elif CLR_IN_HALF
#define IN_T half
#else
#define IN_T float
#endif

/* X_T: an input element's value type (half data is read as float);
 * IN_AT(p, i): element i of an input array, as X_T. */
#if CLR_IN_HALF
#define X_T float
#define IN_AT(p, i) vload_half((i), (p))
#else
#define X_T IN_T
#define IN_AT(p, i) ((p)[i])
#endif

/* ACC_T and its facts: floating (ACC_IS_FP), 64 bits wide (ACC_IS_64),
 * its largest and lowest values. */
#if CLR_ACC_FLOAT
#define ACC_T float
#define ACC_IS_FP 1
#define ACC_IS_64 0
#define ACC_MAX INFINITY
#define ACC_LOWEST (-INFINITY)
#elif CLR_ACC_DOUBLE
#define ACC_T double
#define ACC_IS_FP 1
#define ACC_IS_64 1
#define ACC_MAX ((double)INFINITY)
#define ACC_LOWEST ((double)-INFINITY)
#elif CLR_ACC_INT
#define ACC_T int
#define ACC_IS_FP 0
#define ACC_IS_64 0
#define ACC_MAX INT_MAX
#define ACC_LOWEST INT_MIN
#elif CLR_ACC_UINT
#define ACC_T uint
#define ACC_IS_FP 0
#define ACC_IS_64 0
#define ACC_MAX UINT_MAX
#define ACC_LOWEST 0u
#elif CLR_ACC_LONG
#define ACC_T long
#define ACC_IS_FP 0
#define ACC_IS_64 1
#define ACC_MAX LONG_MAX
#define ACC_LOWEST LONG_MIN
#else
#define ACC_T ulong
#define ACC_IS_FP 0
#define ACC_IS_64 1
#define ACC_MAX ULONG_MAX
#define ACC_LOWEST 0ul
#endif

/* CLR_SKIPS_NAN: NaN values are left out (a NaN-skipping operation on a
 * floating accumulator; on integers the host never sets it). */
#define CLR_SKIPS_NAN (CLR_OP_SKIPS_NAN && ACC_IS_FP)

/* The combines: OP(a, b) works on scalars and on vectors alike.
 * Arguments are evaluated more than once: pass plain variables.
 * CLR_NAN_FIRST(a, b, rest): for floating min / max, the NaN case before
 * the order: a NaN wins (the result is NaN), or with CLR_SKIPS_NAN loses
 * (the other value). */
#if CLR_SKIPS_NAN
#define CLR_NAN_FIRST(a, b, rest) ((a) != (a) ? (b) : (b) != (b) ? (a) : rest)
#define CLR_NAN_IDENTITY ((ACC_T)NAN)
#else
#define CLR_NAN_FIRST(a, b, rest) ((a) != (a) ? (a) : (b) != (b) ? (b) : rest)
#endif
#if CLR_OP_SUM
#define OP(a, b) ((a) + (b))
#define IDENTITY ((ACC_T)0)
#elif CLR_OP_PROD
#define OP(a, b) ((a) * (b))
#define IDENTITY ((ACC_T)1)
#elif CLR_OP_MIN
#if ACC_IS_FP
/* x != x tests NaN and the zero case resolves the sign: -((-a) - b) is
 * -0 when either zero is negative.  Plain operators, not isnan/signbit
 * calls, so the vector forms stay inline on every device. */
#define OP(a, b)                                                               \
  CLR_NAN_FIRST(a, b,                                                          \
                ((a) < (b)   ? (a)                                             \
                 : (b) < (a) ? (b)                                             \
                 : (a) == 0  ? -((-(a)) - (b))                                 \
                             : (a)))
#else
#define OP(a, b) min((a), (b))
#endif
#define IDENTITY ((ACC_T)ACC_MAX)
#elif CLR_OP_MAX
#if ACC_IS_FP
/* As min; for two zeros a + b is -0 only when both are. */
#define OP(a, b)                                                               \
  CLR_NAN_FIRST(a, b,                                                          \
                ((a) > (b)   ? (a)                                             \
                 : (b) > (a) ? (b)                                             \
                 : (a) == 0  ? (a) + (b)                                       \
                             : (a)))
#else
#define OP(a, b) max((a), (b))
#endif
#define IDENTITY ((ACC_T)ACC_LOWEST)
#elif CLR_OP_IS_INDEXED
/* argmin / argmax / minmax combine (value, index) records: see
 * cl/records.cl.  IDENTITY is the minimum's starting value. */
#define IDENTITY ((ACC_T)ACC_MAX)
#elif CLR_OP_IS_MOMENTS
/* var / std combine (count, mean, M2) records: see cl/moments.cl. */
#define IDENTITY ((ACC_T)0)
#elif CLR_OP_AND
#define OP(a, b) ((a) && (b))
#define IDENTITY ((ACC_T)1)
#elif CLR_OP_OR
#define OP(a, b) ((a) || (b))
#define IDENTITY ((ACC_T)0)
#elif CLR_OP_XOR
#define OP(a, b) ((a) ^ (b))
#define IDENTITY ((ACC_T)0)
#endif
/* A NaN-skipping min / max starts from NaN: all-NaN input gives NaN. */
#if CLR_SKIPS_NAN && (CLR_OP_MIN || CLR_OP_MAX || CLR_OP_IS_INDEXED)
#undef IDENTITY
#define IDENTITY CLR_NAN_IDENTITY
#endif

/* CLR_DEFINE_FOLD(name, T, COMBINE) defines `T name(vector of CLR_VEC T)`:
 * the lanes combined pairwise by halving the vector (log2(CLR_VEC) steps,
 * a tree, so the rounding chain stays short).  COMBINE(a, b) is a macro
 * given plain variables, such as OP. */
#if CLR_VEC == 1
#define CLR_DEFINE_FOLD(name, T, COMBINE)                                      \
  inline T name(T v) { return v; }
#else
#define CLR_FOLD_HALVE(T, C, w, from, to)                                      \
  CLR_CAT(T, w) to##a = from.lo, to##b = from.hi;                              \
  CLR_CAT(T, w) to = C(to##a, to##b);
#if CLR_VEC == 16
#define CLR_FOLD_STEPS(T, C)                                                   \
  CLR_FOLD_HALVE(T, C, 8, v, v8)                                               \
  CLR_FOLD_HALVE(T, C, 4, v8, v4) CLR_FOLD_HALVE(T, C, 2, v4, v2)
#elif CLR_VEC == 8
#define CLR_FOLD_STEPS(T, C)                                                   \
  CLR_FOLD_HALVE(T, C, 4, v, v4) CLR_FOLD_HALVE(T, C, 2, v4, v2)
#elif CLR_VEC == 4
#define CLR_FOLD_STEPS(T, C) CLR_FOLD_HALVE(T, C, 2, v, v2)
#else
#define CLR_FOLD_STEPS(T, C) CLR_CAT(T, 2) v2 = v;
#endif
#define CLR_DEFINE_FOLD(name, T, COMBINE)                                      \
  inline T name(CLR_CAT(T, CLR_VEC) v) {                                       \
    CLR_FOLD_STEPS(T, COMBINE)                                                 \
    T a = v2.x, b = v2.y;                                                      \
    return COMBINE(a, b);                                                      \
  }
#endif

/* clr_skip_nan(v): a value as a NaN-skipping operation takes it: a NaN
 * becomes the identity (0 for a sum; a min's NaN identity is NaN, which
 * its combine skips).  CLR_SKIP_NANV(v) the same for a variable of any
 * width. */
#if CLR_SKIPS_NAN
inline ACC_T clr_skip_nan(ACC_T v) { return v != v ? IDENTITY : v; }
#define CLR_SKIP_NANV(v) ((v) != (v) ? IDENTITY : (v))
#else
#define clr_skip_nan(v) (v)
#define CLR_SKIP_NANV(v) (v)
#endif

/* LOAD(x): an input element as an accumulator value.  For and/or only
 * "non-zero" matters, so the partials passed between passes stay 0/1. */
#if CLR_OP_IS_LOGICAL
#define LOAD(x) ((ACC_T)((x) != 0))
#else
#define LOAD(x) clr_skip_nan((ACC_T)(x))
#endif

/* MAPPED(x, y, i): element x (and y of the second input) at index i
 * (counted from the call's first element) as the value the reduction
 * combines, in the accumulator type: the map applied (abs and square to
 * the value converted first), the product of the two inputs (dot), or
 * for and / or the truth of the value (before any conversion). */
#if CLR_MAP == 1 && ACC_IS_FP
#define CLR_MAP_VALUE(x, y, i) fabs((ACC_T)(x))
#elif CLR_MAP == 1
#define CLR_MAP_VALUE(x, y, i) ((ACC_T)abs((ACC_T)(x)))
#elif CLR_MAP == 2
#define CLR_MAP_VALUE(x, y, i) ((ACC_T)(x) * (ACC_T)(x))
#elif CLR_MAP == 3 && CLR_INPUTS == 2
#define CLR_MAP_VALUE(x, y, i) (CLR_MAP_EXPR((x), (y), (i)))
#elif CLR_MAP == 3
#define CLR_MAP_VALUE(x, y, i) (CLR_MAP_EXPR((x), (i)))
#elif CLR_INPUTS == 2
#define CLR_MAP_VALUE(x, y, i) ((ACC_T)(x) * (ACC_T)(y))
#else
#define CLR_MAP_VALUE(x, y, i) (x)
#endif
#if CLR_OP_IS_LOGICAL
#define MAPPED(x, y, i) ((ACC_T)(CLR_MAP_VALUE(x, y, i) != 0))
#else
#define MAPPED(x, y, i) clr_skip_nan((ACC_T)(CLR_MAP_VALUE(x, y, i)))
#endif

/* Largest power of two strictly below x (x >= 2), or 0 for x < 2. */
inline uint clr_pow2_below(uint x) {
  uint p = 1;
  while (2 * p < x)
    p *= 2;
  return x < 2 ? 0 : p;
}

/* Every work-item's x into slot lid of s, visible to the whole
 * work-group on return; returns lid.  Where the work-group primitives
 * start. */
inline uint clr_local_put(__local ACC_T *s, ACC_T x) {
  uint lid = (uint)get_local_id(0);
  s[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  return lid;
}

#if CLR_SHFL || CLR_SEG_SHFL
/* Warp shuffles: -DCLR_SHFL=1 (the host sets it on NVIDIA's OpenCL,
 * which has no subgroup extension but takes inline PTX, for the coarse
 * reduction and the decoupled scan; CLR_SEG_SHFL for segmented tiles).
 * The word of the lane delta below (up) or above (down) this one in the
 * warp of 32; lanes with none keep theirs.  Every lane of the warp must
 * call them together. */
#define CLR_DEFINE_SHFL_U32(name, mode, clamp)                                 \
  inline uint name(uint v, uint delta) {                                       \
    uint r;                                                                    \
    __asm__ __volatile__("shfl.sync." mode ".b32 %0, %1, %2, " clamp           \
                         ", 0xffffffff;"                                       \
                         : "=r"(r)                                             \
                         : "r"(v), "r"(delta));                                \
    return r;                                                                  \
  }
CLR_DEFINE_SHFL_U32(clr_shfl_up_u32, "up", "0")
CLR_DEFINE_SHFL_U32(clr_shfl_down_u32, "down", "0x1f")

/* CLR_DEFINE_SHFL(name, T, word) defines `T name(T v, uint delta)`: a
 * value of any type through one of the word shuffles above. */
#define CLR_DEFINE_SHFL(name, T, word)                                         \
  inline T name(T v, uint delta) {                                             \
    union {                                                                    \
      T v;                                                                     \
      uint u[(sizeof(T) + 3) / 4];                                             \
    } a, b;                                                                    \
    for (uint k = 0; k < (sizeof(T) + 3) / 4; k++)                             \
      a.u[k] = 0;                                                              \
    a.v = v;                                                                   \
    for (uint k = 0; k < (sizeof(T) + 3) / 4; k++)                             \
      b.u[k] = word(a.u[k], delta);                                            \
    return b.v;                                                                \
  }
#endif

#if CLR_SHFL
/* Work-groups that the shuffle paths take: whole warps, at most 32. */
inline int clr_whole_warps(uint wgs) { return wgs % 32 == 0 && wgs <= 32 * 32; }
#endif

#if !CLR_OP_IS_RECORD /* records have their own (records.cl, moments.cl) */
#if CLR_SHFL
CLR_DEFINE_SHFL(clr_shfl_up, ACC_T, clr_shfl_up_u32)
CLR_DEFINE_SHFL(clr_shfl_down, ACC_T, clr_shfl_down_u32)
/* Lane `writer`'s v of each warp into s[its warp], seen by the whole
 * work-group (of whole warps) on return. */
inline void clr_warp_publish(__local ACC_T *s, ACC_T v, uint writer) {
  uint l = (uint)get_local_id(0);
  if (l % 32 == writer)
    s[l / 32] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* The fold of the warp's 32 values, in lane 0, in a fixed order (halving
 * strides).  OP may evaluate an argument twice, so the shuffle is taken
 * out of it: every lane shuffles once a step. */
inline ACC_T clr_warp_reduce(ACC_T x) {
  for (uint off = 16; off > 0; off >>= 1) {
    ACC_T y = clr_shfl_down(x, off);
    x = OP(x, y);
  }
  return x;
}
#endif

/* Work-group tree reduction with sequential addressing (course notes,
 * seed 003): the stride halves each step and the active work-items stay
 * contiguous, so whole warps retire and local-memory accesses do not
 * conflict.  Every work-item calls it with its value; returns the group's
 * result in work-item 0 (others get garbage).  Any work-group size works:
 * the first stride is the largest power of two below it.  With CLR_SHFL,
 * a work-group of whole warps folds each warp by shuffles and the warps'
 * values in warp 0: one barrier instead of one a step (on the H100 part of
 * the decoupled scan's 0.006-0.009 ms at 1e8; no consistent gain in a
 * single-launch sum: docs/perf-log/reductions.md). */
inline ACC_T clr_group_reduce(__local ACC_T *scratch, ACC_T x) {
#if CLR_SHFL
  if (clr_whole_warps((uint)get_local_size(0))) {
    clr_warp_publish(scratch, clr_warp_reduce(x), 0);
    uint l = (uint)get_local_id(0);
    if (l < 32) /* warp 0 folds the warps' values */
      x = clr_warp_reduce(l < get_local_size(0) / 32 ? scratch[l] : IDENTITY);
    return x;
  }
#endif
  uint lid = clr_local_put(scratch, x);
  uint wg = (uint)get_local_size(0);
  for (uint s = clr_pow2_below(wg); s > 0; s >>= 1) {
    if (lid < s && lid + s < wg) {
      ACC_T a = scratch[lid];
      ACC_T b = scratch[lid + s];
      scratch[lid] = OP(a, b);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}
#endif

/* Values one work-group publishes for another through 32-bit atomics,
 * one per word, with a flag beside them (the decoupled scan's CPU shape,
 * and its GPU shape without 64-bit atomics; otherwise tagged slots,
 * below): no 64-bit atomics and no memory model beyond OpenCL 1.2's (and
 * a checker such as oclgrind sees no unsynchronised access).  A value is
 * written before its flag and read after it, so its words are
 * consistent. */
#if ACC_IS_64
#define AS_ACC CLR_CAT(as_, ACC_T)
inline void clr_publish(volatile __global uint *slot, uint t, ACC_T v) {
  uint2 w = as_uint2(v);
  atomic_xchg(&slot[2 * t], w.x);
  atomic_xchg(&slot[2 * t + 1], w.y);
}
inline ACC_T clr_fetch(volatile __global uint *slot, uint t) {
  uint2 w;
  w.x = atomic_or(&slot[2 * t], 0u);
  w.y = atomic_or(&slot[2 * t + 1], 0u);
  return AS_ACC(w);
}
#else
#define AS_ACC CLR_CAT(as_, ACC_T)
inline void clr_publish(volatile __global uint *slot, uint t, ACC_T v) {
  atomic_xchg(&slot[t], as_uint(v));
}
inline ACC_T clr_fetch(volatile __global uint *slot, uint t) {
  return AS_ACC(atomic_or(&slot[t], 0u));
}
#endif

/* ACCV_T: CLR_VEC accumulators (the accumulator itself when CLR_VEC is
 * 1). */
#if CLR_VEC == 1
#define ACCV_T ACC_T
#define CLR_VSUF
#else
#define ACCV_T CLR_CAT(ACC_T, CLR_VEC)
#define CLR_VSUF CLR_VEC
#endif

/* Order keys for the minimum and maximum of floating point: the bits as an
 * integer with the magnitude bits of negative numbers flipped, an
 * order-preserving map (-0 below +0) that costs two integer operations,
 * and a NaN mapped to the lowest key for the minimum and the highest for
 * the maximum (so it wins, and an equal key keeps the first).  An integer
 * min / max of keys (CLR_KEY_OP) is then OP's NaN-propagating,
 * signed-zero ordering min / max in one operation instead of a chain of
 * compares and selects.  Integers are their own keys.  (A NaN comes back
 * as a NaN, its payload not kept.)  CLR_KEYED: the accumulator and
 * operation whose combines go through keys.  Used by the min / max reductions
 * (load_mapped.cl, records.cl) and the scans' per-item chains
 * (scan_lanes.cl, scan_decoupled.cl).  clr_key / clr_unkey take CLR_VEC
 * values, clr_key1 / clr_value1 one. */
#if ACC_IS_FP
#if CLR_ACC_DOUBLE
#define CLR_KEY_T long
#define KEYV_T CLR_CAT(long, CLR_VSUF)
#define CLR_AS_KEY CLR_CAT(as_long, CLR_VSUF)
#define CLR_AS_VAL CLR_CAT(as_double, CLR_VSUF)
#define CLR_KEY_FLIP(k) ((k) ^ (((k) >> 63) & LONG_MAX))
#define CLR_KEY_LOWEST LONG_MIN
#define CLR_KEY_HIGHEST LONG_MAX
#else
#define CLR_KEY_T int
#define KEYV_T CLR_CAT(int, CLR_VSUF)
#define CLR_AS_KEY CLR_CAT(as_int, CLR_VSUF)
#define CLR_AS_VAL CLR_CAT(as_float, CLR_VSUF)
#define CLR_KEY_FLIP(k) ((k) ^ (((k) >> 31) & INT_MAX))
#define CLR_KEY_LOWEST INT_MIN
#define CLR_KEY_HIGHEST INT_MAX
#endif
/* A NaN's key: the end where it wins, or with CLR_SKIPS_NAN where it
 * loses (and unkeys to NaN either way). */
#if CLR_SKIPS_NAN
#define CLR_NAN_KEY(for_max) ((for_max) ? CLR_KEY_LOWEST : CLR_KEY_HIGHEST)
#else
#define CLR_NAN_KEY(for_max) ((for_max) ? CLR_KEY_HIGHEST : CLR_KEY_LOWEST)
#endif
inline KEYV_T clr_key(ACCV_T x, int for_max) {
  KEYV_T k = CLR_AS_KEY(x);
  k = CLR_KEY_FLIP(k);
  KEYV_T nan_key = (KEYV_T)CLR_NAN_KEY(for_max);
#if CLR_VEC == 1 /* a scalar compare gives an int, whatever the type */
  return x != x ? nan_key : k;
#else
  return select(k, nan_key, x != x);
#endif
}
inline ACCV_T clr_unkey(KEYV_T k) { return CLR_AS_VAL(CLR_KEY_FLIP(k)); }
inline CLR_KEY_T clr_key1(ACC_T x, int for_max) {
  CLR_KEY_T k = CLR_CAT(as_, CLR_KEY_T)(x);
  k = CLR_KEY_FLIP(k);
  return x != x ? CLR_NAN_KEY(for_max) : k;
}
inline ACC_T clr_value1(CLR_KEY_T k) { return AS_ACC(CLR_KEY_FLIP(k)); }
#else
#define CLR_KEY_T ACC_T
#define KEYV_T ACCV_T
#define clr_key(x, for_max) (x)
#define clr_unkey(k) (k)
#define clr_key1(x, for_max) (x)
#define clr_value1(k) (k)
#endif
#define CLR_KEYED (ACC_IS_FP && (CLR_OP_MIN || CLR_OP_MAX))
#if CLR_OP_MIN
#define CLR_KEY_OP(a, b) min((a), (b))
#elif CLR_OP_MAX
#define CLR_KEY_OP(a, b) max((a), (b))
#endif

/* A chain of combines (a work-item's running value, the lanes of its
 * vectors): on order keys where CLR_KEYED, else on values.  CLR_CHAIN_T
 * holds one link, CLR_CHAINV_T CLR_VEC of them; clr_chain / clr_chainv
 * take values in, clr_unchain / clr_unchainv give them back, and
 * CLR_CHAIN_OP combines two.  The coarse reduction's accumulator, the
 * decoupled scan's run totals and per-item chains, the segmented scan's
 * runs and tiles and clr_scan_vector (scan_lanes.cl) all go through it. */
#if CLR_KEYED
#define CLR_CHAIN_T CLR_KEY_T
#define CLR_CHAINV_T KEYV_T
#define clr_chain(x) clr_key1((x), CLR_OP_MAX)
#define clr_chainv(x) clr_key((x), CLR_OP_MAX)
#define clr_unchain(k) clr_value1(k)
#define clr_unchainv(k) clr_unkey(k)
#define CLR_CHAIN_OP(a, b) CLR_KEY_OP((a), (b))
#else
#define CLR_CHAIN_T ACC_T
#define CLR_CHAINV_T ACCV_T
#define clr_chain(x) (x)
#define clr_chainv(x) (x)
#define clr_unchain(k) (k)
#define clr_unchainv(k) (k)
#define CLR_CHAIN_OP(a, b) OP((a), (b))
#endif

/* -DCLR_SLOTS=1 (the host asks for it where the device has
 * cl_khr_int64_base_atomics): values travel in tagged 64-bit slots
 * instead, each slot holding 32 bits of the value below the launch's
 * epoch, written by one atomic exchange.  A slot that shows this launch's
 * epoch holds this launch's bits: the reader needs no flag, no fence and
 * no second round trip, and words left by an earlier launch (an older
 * epoch) read as "not yet".  The host zeroes the slots when it makes them
 * and again before the epoch wraps.  Used by the single-launch
 * reduction's partials (reduce_coarse.cl) and the decoupled scan's
 * aggregates and inclusive prefixes (scan_decoupled.cl). */
#ifndef CLR_SLOTS
#define CLR_SLOTS 0
#endif
#if CLR_SLOTS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#if ACC_IS_64
#define CLR_SLOT_WORDS 2
#define CLR_SLOT_BITS(v) as_uint2(v)
#define CLR_SLOT_VALUE(w) AS_ACC((uint2)((uint)(w)[0], (uint)(w)[1]))
#else
#define CLR_SLOT_WORDS 1
#define CLR_SLOT_BITS(v) ((uint2)(as_uint(v), 0u))
#define CLR_SLOT_VALUE(w) AS_ACC((uint)(w)[0])
#endif
/* Value i of an array of tagged slots. */
inline void clr_slot_publish(volatile __global ulong *slots, ulong i,
                             uint epoch, ACC_T v) {
  uint2 b = CLR_SLOT_BITS(v);
  ulong tag = (ulong)epoch << 32;
  atom_xchg(&slots[i * CLR_SLOT_WORDS], tag | b.x);
#if CLR_SLOT_WORDS == 2
  atom_xchg(&slots[i * CLR_SLOT_WORDS + 1], tag | b.y);
#endif
}
/* Value i once it shows this launch's epoch (waits for it). */
inline ACC_T clr_slot_wait(volatile __global ulong *slots, ulong i,
                           uint epoch) {
  ulong w[CLR_SLOT_WORDS];
  for (uint k = 0; k < CLR_SLOT_WORDS; k++)
    do
      w[k] = atom_add(&slots[i * CLR_SLOT_WORDS + k], 0ul);
    while ((uint)(w[k] >> 32) != epoch);
  return CLR_SLOT_VALUE(w);
}
#endif

/* CLR_DEFINE_GROUP_MERGE(T, MERGE): `T clr_group_merge(__local T *scratch,
 * T r)`, clr_group_reduce's tree for records (records.cl, moments.cl):
 * every work-item's r in, the work-group's fold in work-item 0 (the others
 * get garbage).  MERGE(T *a, T b) folds b into *a, a before b. */
#define CLR_DEFINE_GROUP_MERGE(T, MERGE)                                       \
  inline T clr_group_merge(__local T *scratch, T r) {                          \
    uint lid = (uint)get_local_id(0);                                          \
    uint wg = (uint)get_local_size(0);                                         \
    scratch[lid] = r;                                                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
    for (uint s = clr_pow2_below(wg); s > 0; s >>= 1) {                        \
      if (lid < s && lid + s < wg) {                                           \
        T a = scratch[lid];                                                    \
        MERGE(&a, scratch[lid + s]);                                           \
        scratch[lid] = a;                                                      \
      }                                                                        \
      barrier(CLK_LOCAL_MEM_FENCE);                                            \
    }                                                                          \
    return scratch[0];                                                         \
  }
