/* src/check's view of the public tables: see ops_rows.h. */
#include "ops_rows.h"

static const clr_ref_op_row op_rows[] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   summary)                                                    \
  {CLR_##runs, CLR_##combine, CLR_##partial, identity, result, flags},
#include "clreduce_ops.def"
#undef CLR_OP_ROW
};

static const clr_ref_type_row type_rows[] = {
#define CLR_TYPE_ROW(id, name, size, kind, computes, wide) {size, kind},
#include "clreduce_types.def"
#undef CLR_TYPE_ROW
};

_Static_assert(sizeof op_rows / sizeof op_rows[0] == CLR_OP_COUNT,
               "one row an operation");
_Static_assert(sizeof type_rows / sizeof type_rows[0] == CLR_TYPE_COUNT,
               "one row a type");

const clr_ref_op_row *clr_ref_op_info(clr_op op) {
  return (unsigned)op < CLR_OP_COUNT ? &op_rows[op] : NULL;
}

const clr_ref_type_row *clr_ref_type_info(clr_type t) {
  return (unsigned)t < CLR_TYPE_COUNT ? &type_rows[t] : NULL;
}

int clr_ref_is_fp(clr_type t) {
  const clr_ref_type_row *r = clr_ref_type_info(t);
  return r && r->kind == CLR_KIND_FLOAT;
}

int clr_ref_is_signed(clr_type t) {
  const clr_ref_type_row *r = clr_ref_type_info(t);
  return r && r->kind == CLR_KIND_SIGNED;
}

int clr_ref_skips_nan(clr_op op, clr_type t) {
  const clr_ref_op_row *r = clr_ref_op_info(op);
  return r && (r->flags & CLR_OPF_SKIPS_NAN) && clr_ref_is_fp(t);
}

clr_ref_combine clr_ref_combine_info(clr_op combine) {
  clr_ref_combine c = {CLR_REF_EXACT, 0};
  switch (combine) {
  case CLR_SUM:
    c.rounds = CLR_REF_ADDS;
    break;
  case CLR_PROD:
    c.rounds = CLR_REF_MULTIPLIES;
    break;
  case CLR_MIN:
  case CLR_ARGMIN:
    c.extremes = CLR_REF_LOWEST;
    break;
  case CLR_MAX:
  case CLR_ARGMAX:
    c.extremes = CLR_REF_HIGHEST;
    break;
  case CLR_MINMAX:
    c.extremes = CLR_REF_LOWEST | CLR_REF_HIGHEST;
    break;
  default: /* exact, unordered: and, or */
    break;
  }
  return c;
}

int clr_ref_identity_mirror(int identity) {
  switch (identity) {
  case CLR_ID_TOP:
    return CLR_ID_BOTTOM;
  case CLR_ID_BOTTOM:
    return CLR_ID_TOP;
  case CLR_ID_NAN_TOP:
    return CLR_ID_NAN_BOTTOM;
  case CLR_ID_NAN_BOTTOM:
    return CLR_ID_NAN_TOP;
  default:
    return identity;
  }
}
