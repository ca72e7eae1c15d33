/* The exact-sum driver (clr_options.exact, float and double sums): the
 * call zeroes one superaccumulator on the device, every launch of
 * cl/reduce_exact.cl adds its elements to it (a host array streamed in
 * chunks: one launch a chunk, all into the same one), and the host reads
 * it back and rounds it once, to nearest, ties to even.  Integer
 * additions all the way: the result does not depend on the device, the
 * shape, the chunking or the order of the elements (docs/EXACT.md). */
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The superaccumulator of one type: words of 32-bit digits from bit 0 =
 * the smallest denormal, enough for any sum of 2^64 elements
 * (cl/reduce_exact.cl receives the count as -DCLR_EX_WORDS). */
typedef struct exact_format {
  size_t words;  /* signed 64-bit words, then one for the flags */
  int precision; /* significand bits */
  int bit0_exp;  /* exponent of bit 0: 2^-149, 2^-1074 */
  int max_exp;   /* values of 2^max_exp and above overflow */
} exact_format;

static const exact_format formats[2] = {
    [CLR_FLOAT] = {12, 24, -149, 128},
    [CLR_DOUBLE] = {69, 53, -1074, 1024},
};

/* The flags after the words (cl/reduce_exact.cl). */
#define EX_POS_INF 1u
#define EX_NEG_INF 2u
#define EX_NAN 4u
#define EX_NONZERO 8u

/* One work-group's slice stays below 2^26 elements, so no word of its
 * local accumulator (at most 4 digits below 2^32 an element) nears 2^63
 * and its carries stay below 2^31; each adds below 2^33 to a word of the
 * call's accumulator, so a call may launch up to 2^29 work-groups. */
#define EX_MAX_GROUP_ELEMS ((size_t)1 << 26)
#define EX_MAX_GROUPS ((size_t)1 << 29)

typedef struct exact_plan {
  clr_type type;
  const exact_format *f;
  size_t acc_bytes; /* the words and the flags */
  unsigned vec, terms;
  clr_layout layout;
  clr_program_entry *sum;
  clr_program_entry *round; /* clr_enqueue's rounding on the device, or NULL */
  size_t wg;
  const clr_options *opt;
} exact_plan;

int clr_exact_applies(const clr_options *opt, clr_op op, clr_type type) {
  return opt->exact && op == CLR_SUM && clr_type_is_float(type);
}

/* The build options of cl/reduce_exact.cl beyond the type's. */
static void exact_defines(const clr_context *ctx, clr_type type, char *extra,
                          size_t size) {
  int atomics64 = ctx->int64_atomics && ctx->tuning.exact_int64_atomics;
  snprintf(extra, size,
           "-DCLR_EX_WORDS=%zu -DCLR_TERMS=%u -DCLR_INT64_ATOMICS=%d",
           formats[type].words, ctx->tuning.exact_terms, atomics64);
}

static clr_status make_plan(clr_context *ctx, const clr_options *opt,
                            clr_type type, int rounds, exact_plan *p) {
  char extra[96];
  clr_status st;
  memset(p, 0, sizeof *p);
  p->type = type;
  p->f = &formats[type];
  p->acc_bytes = (p->f->words + 1) * sizeof(int64_t);
  p->opt = opt;
  /* The coarse sum's layout; its own vector width (exact.vec_bytes). */
  clr_choose_coarse_shape(ctx, opt, type, type, ctx->tuning.reduce_vec_bytes,
                          &p->vec, &p->layout);
  if (!opt->vector_width) {
    unsigned v = ctx->tuning.exact_vec_bytes / (unsigned)clr_type_size(type);
    p->vec = 1;
    while (p->vec * 2 <= v && p->vec < 16)
      p->vec *= 2;
    while (opt->coarse && opt->coarse % p->vec)
      p->vec /= 2;
  }
  p->terms = ctx->tuning.exact_terms;
  exact_defines(ctx, type, extra, sizeof extra);
  clr_build_spec spec = {.source = "reduce_exact.cl",
                         .kernel = "clr_exact_sum",
                         .in = type,
                         .acc = type,
                         .op = CLR_SUM,
                         .vec = p->vec,
                         .layout = (unsigned)p->layout,
                         .extra = extra};
  st = clr_get_kernel(ctx, &spec, &p->sum);
  spec.kernel = "clr_exact_round";
  if (st == CLR_OK && rounds)
    st = clr_get_kernel(ctx, &spec, &p->round);
  if (st != CLR_OK)
    return st;
  return clr_choose_wg(ctx, p->sum, opt->wg_size, ctx->tuning.reduce_wg,
                       clr_type_size(type), p->terms, &p->wg);
}

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* Work-groups for n elements: enough to fill the device (as the coarse
 * sum), each at most EX_MAX_GROUP_ELEMS elements; vectors per work-item
 * for the contiguous layout. */
static void exact_shape(clr_context *ctx, const exact_plan *p, size_t n,
                        size_t *groups, cl_ulong *per_item) {
  size_t nv = n / p->vec;
  size_t target =
      (size_t)ctx->desc.compute_units *
      (ctx->tuning.reduce_groups_per_cu ? ctx->tuning.reduce_groups_per_cu : 1);
  if (p->opt->coarse) {
    size_t per = ceil_div(p->opt->coarse < n ? p->opt->coarse : n, p->vec);
    target = ceil_div(nv ? ceil_div(nv, per) : 1, p->wg);
  }
  size_t by_size = ceil_div(ceil_div(nv ? nv : 1, 16), p->wg);
  size_t g = by_size < target ? by_size : target;
  size_t least = ceil_div(n, EX_MAX_GROUP_ELEMS);
  if (g < least)
    g = least;
  if (g == 0)
    g = 1;
  *groups = g;
  *per_item = ceil_div(nv ? nv : 1, g * p->wg);
}

/* Add n elements of src (from element offset) to the superaccumulator in
 * acc.  *groups_total counts the work-groups the call has launched.  Adds
 * the kernel time to timing.kernel_ms and, when record is set, describes
 * the launch; with no_wait (clr_enqueue) only enqueues it (its shape
 * recorded, no time). */
static clr_status add_elements(clr_context *ctx, const exact_plan *p,
                               cl_mem src, size_t offset, size_t n, cl_mem acc,
                               size_t *groups_total, int record, int no_wait) {
  clr_status st = CLR_OK;
  size_t groups = 0;
  cl_ulong per_item = 0, off = offset, count = n;
  cl_event ev = NULL;
  exact_shape(ctx, p, n, &groups, &per_item);
  if (groups > EX_MAX_GROUPS - *groups_total)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "an exact sum of %zu elements needs more than %zu "
                    "work-groups",
                    n, EX_MAX_GROUPS);
  *groups_total += groups;
  cl_kernel k = p->sum->kernel;
  size_t local = p->wg, global = groups * p->wg;
  st = CLR_SET_ARGS(
      ctx, k, CLR_ARG(src), CLR_ARG(off), CLR_ARG(count), CLR_ARG(acc),
      CLR_LOCAL(p->wg * p->terms * clr_type_size(p->type)), CLR_ARG(per_item));
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx,
               clEnqueueNDRangeKernel(clr_queue(ctx), k, 1, NULL, &global,
                                      &local, 0, NULL, no_wait ? NULL : &ev));
  if (!no_wait)
    CLR_CL_CHECK(ctx, clWaitForEvents(1, &ev));
  ctx->timing.kernel_ms += clr_event_ms(ev, ev);
  if (record) {
    ctx->timing.n_passes = 1;
    ctx->timing.passes[0].n_in = n;
    ctx->timing.passes[0].global_size = global;
    ctx->timing.passes[0].local_size = local;
    ctx->timing.passes[0].ms = clr_event_ms(ev, ev);
  }
fail:
  if (ev)
    clReleaseEvent(ev);
  return st;
}

/* ---- rounding on the host */

static int limb_bit(const uint32_t *limb, size_t i) {
  return (int)((limb[i / 32] >> (i % 32)) & 1u);
}

/* Carry the words of a superaccumulator into normal form: digits 0 ..
 * words-2 in [0, 2^32), the rest in the last, signed word.  Its words
 * may be anything below 2^62 in magnitude. */
static void normalise(const exact_format *f, const int64_t *in, int64_t *out) {
  int64_t carry = 0;
  for (size_t w = 0; w < f->words; w++) {
    int64_t t = in[w] + carry;
    if (w + 1 < f->words) {
      out[w] = t & 0xffffffff;
      carry = (t - out[w]) / 4294967296LL; /* exact */
    } else {
      out[w] = t;
    }
  }
}

/* The superaccumulator's value rounded to nearest (ties to even) in the
 * type.  Its words are below 2^62 in magnitude; the flags are a 32-bit
 * word at the start of acc[words]. */
clr_value clr_exact_round(clr_type type, const int64_t *acc) {
  const exact_format *f = &formats[type];
  clr_value v;
  int64_t rec[72];
  memset(&v, 0, sizeof v);
  v.type = type;
  v.op = CLR_SUM;
  uint32_t flags;
  memcpy(&flags, &acc[f->words], sizeof flags);
  normalise(f, acc, rec);
  double d;
  if ((flags & EX_NAN) ||
      (flags & (EX_POS_INF | EX_NEG_INF)) == (EX_POS_INF | EX_NEG_INF)) {
    d = NAN;
  } else if (flags & (EX_POS_INF | EX_NEG_INF)) {
    d = (flags & EX_POS_INF) ? INFINITY : -INFINITY;
  } else {
    /* Two's complement limbs: the digits, then the top word's two
     * halves. */
    uint32_t limb[72];
    size_t nl = f->words + 1;
    for (size_t w = 0; w + 1 < f->words; w++)
      limb[w] = (uint32_t)rec[w];
    uint64_t top = (uint64_t)rec[f->words - 1];
    limb[f->words - 1] = (uint32_t)top;
    limb[f->words] = (uint32_t)(top >> 32);
    int negative = rec[f->words - 1] < 0;
    if (negative) { /* magnitude: invert and add one */
      uint32_t carry = 1;
      for (size_t i = 0; i < nl; i++) {
        uint64_t s = (uint64_t)(uint32_t)~limb[i] + carry;
        limb[i] = (uint32_t)s;
        carry = (uint32_t)(s >> 32);
      }
    }
    long h = -1; /* highest set bit */
    for (size_t i = nl; i-- > 0 && h < 0;)
      if (limb[i])
        for (int b = 31; b >= 0 && h < 0; b--)
          if ((limb[i] >> b) & 1u)
            h = (long)(i * 32) + b;
    if (h < 0) {
      /* Zero: -0 only when every element was -0 (IEEE's x + -x is +0). */
      d = (flags & EX_NONZERO) ? 0.0 : -0.0;
    } else {
      long lsb = h - f->precision + 1; /* lowest bit kept */
      if (lsb < 0)
        lsb = 0; /* fits the type exactly (denormal or small normal) */
      uint64_t mant = 0;
      for (long i = h; i >= lsb; i--)
        mant = (mant << 1) | (uint64_t)limb_bit(limb, (size_t)i);
      if (lsb > 0 && limb_bit(limb, (size_t)lsb - 1)) {
        int sticky = 0;
        for (long i = lsb - 2; i >= 0 && !sticky; i--)
          sticky = limb_bit(limb, (size_t)i);
        if (sticky || (mant & 1u))
          mant++; /* may carry to 2^precision: still exact in a double */
      }
      long e = lsb + f->bit0_exp;
      /* mant < 2^(precision+1), so mant * 2^e < 2^max_exp unless
       * overflowing. */
      if (e + (long)f->precision > f->max_exp ||
          (e + (long)f->precision == f->max_exp &&
           mant >= ((uint64_t)1 << f->precision)))
        d = INFINITY;
      else
        d = ldexp((double)mant, (int)e);
      if (negative)
        d = -d;
    }
  }
  if (type == CLR_FLOAT)
    v.v.f = (float)d; /* exact: d already has float's precision */
  else
    v.v.d = d;
  return v;
}

/* Read the device's superaccumulator back: rounded into *result, or,
 * with into, normalised and added to the caller's accumulator. */
static clr_status read_round(clr_context *ctx, const exact_plan *p, cl_mem buf,
                             clr_value *result, clr_exact_acc *into) {
  clr_status st = CLR_OK;
  int64_t acc[72];
  cl_event ev = NULL;
  CLR_CL_CHECK(ctx, clEnqueueReadBuffer(clr_queue(ctx), buf, CL_TRUE, 0,
                                        p->acc_bytes, acc, 0, NULL, &ev));
  ctx->timing.d2h_ms += clr_event_ms(ev, ev);
  if (into) {
    clr_exact_acc part;
    memset(&part, 0, sizeof part);
    part.type = p->type;
    memcpy(&part.flags, &acc[p->f->words], sizeof part.flags);
    normalise(p->f, acc, part.words);
    clr_exact_acc_merge(into, &part);
  } else {
    *result = clr_exact_round(p->type, acc);
  }
fail:
  if (ev)
    clReleaseEvent(ev);
  return st;
}

/* The call's superaccumulator, zeroed: ctx->aux[0]. */
static clr_status zeroed_accumulator(clr_context *ctx, const exact_plan *p) {
  static const cl_uint zero = 0;
  clr_status st =
      clr_buffer_reserve(ctx, &ctx->aux[0], p->acc_bytes, CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  CLR_CL_RETURN(ctx, clEnqueueFillBuffer(clr_queue(ctx), ctx->aux[0].mem, &zero,
                                         sizeof zero, 0, p->acc_bytes, 0, NULL,
                                         NULL));
  return CLR_OK;
}

clr_status clr_exact_prepare(clr_context *ctx, const clr_options *opt,
                             clr_type type) {
  exact_plan plan;
  return make_plan(ctx, opt, type, 0, &plan);
}

clr_status clr_exact_buffer(clr_context *ctx, const clr_options *opt,
                            clr_type type, cl_mem buf, size_t offset, size_t n,
                            clr_value *result, clr_exact_acc *into) {
  exact_plan plan;
  size_t groups = 0;
  clr_status st = make_plan(ctx, opt, type, 0, &plan);
  if (st == CLR_OK)
    st = zeroed_accumulator(ctx, &plan);
  if (st == CLR_OK)
    st = add_elements(ctx, &plan, buf, offset, n, ctx->aux[0].mem, &groups, 1,
                      0);
  if (st == CLR_OK)
    st = read_round(ctx, &plan, ctx->aux[0].mem, result, into);
  ctx->timing.chunks = 1;
  return st;
}

/* The tag of an enqueued sum's accumulator in a caller's scratch
 * (scratch.c). */
static const char acc_tag = 'a';

clr_status clr_exact_scratch(clr_context *ctx, const clr_options *opt,
                             clr_type type, int async, clr_scratch_plan *sp) {
  exact_plan plan;
  clr_status st = make_plan(ctx, opt, type, async, &plan);
  if (st == CLR_OK)
    clr_scratch_need(sp, async ? (const void *)&acc_tag : &ctx->aux[0],
                     plan.acc_bytes);
  return st;
}

clr_status clr_exact_buffer_async(clr_context *ctx, const clr_options *opt,
                                  clr_type type, cl_mem buf, size_t offset,
                                  size_t n, cl_mem dst, size_t dst_index,
                                  const clr_async *async) {
  exact_plan plan;
  size_t groups = 0;
  static const cl_uint zero = 0;
  clr_status st = make_plan(ctx, opt, type, 1, &plan);
  if (st != CLR_OK)
    return st;
  /* The call's own accumulator: released here, freed by OpenCL once the
   * commands below are done. */
  cl_mem acc = NULL;
  st = clr_temp_buffer(ctx, &acc_tag, plan.acc_bytes, &acc);
  if (st != CLR_OK)
    return st;
  cl_int err = clEnqueueFillBuffer(clr_queue(ctx), acc, &zero, sizeof zero, 0,
                                   plan.acc_bytes, async->num_events,
                                   async->wait_list, NULL);
  if (err != CL_SUCCESS)
    st = clr_cl_fail(ctx, "clEnqueueFillBuffer", err);
  if (st == CLR_OK)
    st = add_elements(ctx, &plan, buf, offset, n, acc, &groups, 1, 1);
  cl_ulong at = dst_index, one_rec = 1;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, plan.round->kernel, CLR_ARG(acc), CLR_ARG(dst),
                      CLR_ARG(at), CLR_ARG(one_rec));
  size_t one = 1;
  if (st == CLR_OK) {
    err = clEnqueueNDRangeKernel(clr_queue(ctx), plan.round->kernel, 1, NULL,
                                 &one, &one, 0, NULL, async->done);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  }
  if (st == CLR_OK) { /* the passes shown: the sum, then the rounding */
    clr_call_timing *t = &ctx->timing;
    t->n_passes = 2;
    t->passes[1].n_in = 1;
    t->passes[1].global_size = 1;
    t->passes[1].local_size = 1;
    t->passes[1].ms = 0;
  }
  clReleaseMemObject(acc);
  ctx->timing.chunks = 1;
  return st;
}

clr_status clr_exact_axis_kernels(clr_context *ctx, clr_type type, int runs,
                                  clr_exact_kernels *k) {
  char extra[96];
  memset(k, 0, sizeof *k);
  k->words = formats[type].words;
  k->rec_bytes = (k->words + 1) * sizeof(int64_t);
  k->terms = ctx->tuning.exact_terms;
  exact_defines(ctx, type, extra, sizeof extra);
  k->vec = runs ? CLR_EXACT_RUNS_VEC : 1;
  clr_build_spec spec = {.source = "reduce_exact.cl",
                         .kernel = runs ? "clr_exact_runs" : "clr_exact_axis",
                         .in = type,
                         .acc = type,
                         .op = CLR_SUM,
                         .vec = k->vec,
                         .layout = (unsigned)CLR_LAYOUT_STRIDED,
                         .extra = extra};
  clr_status st = clr_get_kernel(ctx, &spec, &k->axis);
  spec.kernel = "clr_exact_round";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &k->round);
  spec.kernel = "clr_exact_zero";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &k->zero);
  return st;
}

/* Every streamed chunk adds to the one accumulator, aux[0]. */
typedef struct exact_run {
  const exact_plan *plan;
  size_t groups; /* launched so far in the call */
} exact_run;

static clr_status exact_chunk(clr_context *ctx, void *user,
                              const clr_chunk *c) {
  exact_run *run = user;
  return add_elements(ctx, run->plan, c->mem, 0, c->len, ctx->aux[0].mem,
                      &run->groups, c->index == 0, 0);
}

clr_status clr_exact_host(clr_context *ctx, const clr_options *opt,
                          clr_type type, const void *data, size_t n,
                          clr_value *result, clr_exact_acc *into) {
  exact_plan plan;
  clr_status st = make_plan(ctx, opt, type, 0, &plan);
  if (st == CLR_OK)
    st = zeroed_accumulator(ctx, &plan);
  if (st != CLR_OK)
    return st;
  exact_run run = {&plan, 0};
  st = clr_stream_chunks(ctx, data, NULL, n, clr_type_size(type), exact_chunk,
                         &run);
  if (st == CLR_OK)
    st = read_round(ctx, &plan, ctx->aux[0].mem, result, into);
  return st;
}

/* ---- the public accumulator: exact sums in parts */

/* The types with a superaccumulator (half sums are exact in double). */
static int has_format(clr_type t) { return t == CLR_FLOAT || t == CLR_DOUBLE; }

CLR_API clr_status clr_exact_acc_init(clr_exact_acc *acc, clr_type type) {
  if (!acc || !has_format(type))
    return CLR_ERR_INVALID_ARGUMENT;
  memset(acc, 0, sizeof *acc);
  acc->type = type;
  return CLR_OK;
}

/* The words an accumulator may hold: sums of at most 2^29 normal ones
 * (digits below 2^32, small tops) stay within 2^62 in magnitude. */
#define EXACT_WORD_LIMIT ((int64_t)1 << 62)

static int words_trusted(const exact_format *f, const int64_t *words) {
  for (size_t w = 0; w < f->words; w++)
    if (words[w] > EXACT_WORD_LIMIT || words[w] < -EXACT_WORD_LIMIT)
      return 0;
  return 1;
}

CLR_API clr_status clr_exact_acc_merge(clr_exact_acc *dst,
                                       const clr_exact_acc *src) {
  if (!dst || !src || !has_format(dst->type) || src->type != dst->type)
    return CLR_ERR_INVALID_ARGUMENT;
  const exact_format *f = &formats[dst->type];
  /* Words are trusted only within the limit (as by clr_exact_acc_value);
   * each side normalised first, its digits are below 2^32 and only the
   * tops can grow: their sum is checked, so nothing overflows and dst is
   * left as it was on a refusal. */
  if (!words_trusted(f, dst->words) || !words_trusted(f, src->words))
    return CLR_ERR_INVALID_ARGUMENT;
  int64_t a[CLR_EXACT_WORDS], b[CLR_EXACT_WORDS], sum[CLR_EXACT_WORDS];
  normalise(f, dst->words, a);
  normalise(f, src->words, b);
  size_t top = f->words - 1;
  for (size_t w = 0; w < top; w++)
    sum[w] = a[w] + b[w];
  if (__builtin_add_overflow(a[top], b[top], &sum[top]) ||
      sum[top] > EXACT_WORD_LIMIT || sum[top] < -EXACT_WORD_LIMIT)
    return CLR_ERR_INVALID_ARGUMENT;
  normalise(f, sum, dst->words);
  dst->flags |= src->flags;
  return CLR_OK;
}

CLR_API clr_status clr_exact_acc_value(const clr_exact_acc *acc,
                                       clr_value *out) {
  if (!acc || !out || !has_format(acc->type))
    return CLR_ERR_INVALID_ARGUMENT;
  const exact_format *f = &formats[acc->type];
  int64_t rec[72];
  for (size_t w = 0; w < f->words; w++) {
    /* Words summed elsewhere (MPI_SUM over ranks) stay below 2^62 for up
     * to 2^29 normal parts; beyond that the sum is not trusted. */
    if (acc->words[w] > EXACT_WORD_LIMIT || acc->words[w] < -EXACT_WORD_LIMIT)
      return CLR_ERR_INVALID_ARGUMENT;
    rec[w] = acc->words[w];
  }
  memset(&rec[f->words], 0, sizeof rec[0]);
  memcpy(&rec[f->words], &acc->flags, sizeof acc->flags);
  *out = clr_exact_round(acc->type, rec);
  return CLR_OK;
}
