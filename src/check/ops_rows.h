/* src/check's own view of the public tables (clreduce_types.def,
 * clreduce_ops.def), read by X-macro as clreduce.h reads them: everything
 * the references, the checks and the generated data decide about an
 * operation comes from its row (its combine, identity, result rule and
 * flags), never from its name.  Private to src/check.
 *
 * Beyond the rows, a combine is described once, by clr_ref_combine_info
 * (ops_rows.c): how a reference of it rounds and which extremes it picks.
 * Its arithmetic is reference.c's (the fold).  A combine that neither
 * rounds nor orders (and, or: exact integer arithmetic) needs nothing
 * here. */
#ifndef CLR_CHECK_OPS_ROWS_H
#define CLR_CHECK_OPS_ROWS_H

#include "clreduce.h"

#include <stddef.h>
#include <stdint.h>

/* An operation's row: the columns src/check reads. */
typedef struct clr_ref_op_row {
  clr_op runs;    /* what the device computes (a mean: its sum)          */
  clr_op combine; /* whose combine the fold runs                         */
  clr_op partial; /* what folds partial results                          */
  int identity;   /* CLR_ID_*                                            */
  int result;     /* CLR_RES_*                                           */
  unsigned flags; /* CLR_OPF_*                                           */
} clr_ref_op_row;

/* A type's row. */
typedef struct clr_ref_type_row {
  size_t size; /* bytes of one element                                */
  int kind;    /* CLR_KIND_*                                          */
} clr_ref_type_row;

/* The rows of op and t; NULL when out of range. */
const clr_ref_op_row *clr_ref_op_info(clr_op op);
const clr_ref_type_row *clr_ref_type_info(clr_type t);

/* 1 for floating types (half included), signed integer types. */
int clr_ref_is_fp(clr_type t);
int clr_ref_is_signed(clr_type t);
/* 1 when op leaves NaN elements of t out of its fold: its row has
 * CLR_OPF_SKIPS_NAN and t is floating (on integers the flag changes
 * nothing). */
int clr_ref_skips_nan(clr_op op, clr_type t);

/* How a reference of a combine rounds in floating point. */
#define CLR_REF_EXACT 0      /* no rounding: an exact match is required  */
#define CLR_REF_ADDS 1       /* a sum: gamma_depth * sum|x| (reference.h) */
#define CLR_REF_MULTIPLIES 2 /* a product: gamma_{n-1} * |product|        */
/* Which extremes an ordering combine picks (a record, with the row's
 * CLR_OPF_INDEXED, keeps each one's first index).  The first half reported
 * is the lowest unless only the highest is picked. */
#define CLR_REF_LOWEST 1u
#define CLR_REF_HIGHEST 2u

typedef struct clr_ref_combine {
  int rounds;        /* CLR_REF_EXACT, _ADDS or _MULTIPLIES            */
  unsigned extremes; /* CLR_REF_LOWEST | CLR_REF_HIGHEST; 0: no order  */
} clr_ref_combine;

/* What a combine is beyond its arithmetic: the one description of the
 * combines (a combine not listed is exact and unordered: and, or). */
clr_ref_combine clr_ref_combine_info(clr_op combine);

/* The identity kind a record's other half starts from: TOP <-> BOTTOM,
 * NAN_TOP <-> NAN_BOTTOM (ZERO and ONE are their own). */
int clr_ref_identity_mirror(int identity);

#endif
