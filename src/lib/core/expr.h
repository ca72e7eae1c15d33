/* Expressions given as text (a map expression, and any later option that
 * takes an OpenCL C expression): tokenised and parsed against a whitelist
 * before any of it reaches a kernel, into a small tree that a CPU
 * evaluator can walk (src/check/expr_eval.c).  Depends on libc alone.
 *
 * Accepted: one OpenCL C expression made of
 * - the variables the caller names (a map: x, i and y),
 * - integer literals (decimal, hex, octal; suffixes u, l, ul, lu in any
 *   case) and floating literals (a '.' or an exponent, hex floats with p;
 *   suffix f), the constants of clr_expr_constant_name,
 * - the operators ?: || && | ^ & == != < > <= >= << >> + - * / % and the
 *   unary + - ! ~, parentheses, casts to char, uchar, short, ushort, int,
 *   uint, long, ulong, float, double,
 * - calls of the built-in functions of clr_expr_function_name with their
 *   number of arguments (commas only there).
 * Everything else is refused with one line naming the token and its
 * column: statements (; braces), preprocessor (# %: and the other
 * digraphs), strings and characters, comments, assignments, increments,
 * members and subscripts, keywords, unknown names, control characters
 * and non-ASCII bytes. */
#ifndef CLR_EXPR_H
#define CLR_EXPR_H

#include <stddef.h>
#include <stdint.h>

/* The scalar types of OpenCL C an expression computes in. */
typedef enum clr_expr_type {
  CLR_ET_CHAR,
  CLR_ET_UCHAR,
  CLR_ET_SHORT,
  CLR_ET_USHORT,
  CLR_ET_INT,
  CLR_ET_UINT,
  CLR_ET_LONG,
  CLR_ET_ULONG,
  CLR_ET_FLOAT,
  CLR_ET_DOUBLE,
  CLR_ET_COUNT
} clr_expr_type;

typedef enum clr_expr_kind {
  CLR_EN_VAR,    /* op: the variable's index in the caller's names */
  CLR_EN_LIT,    /* a literal or named constant: type, lit          */
  CLR_EN_UNARY,  /* op: '+', '-', '!', '~'; kid[0]                  */
  CLR_EN_BINARY, /* op: clr_expr_binop; kid[0] op kid[1]            */
  CLR_EN_COND,   /* kid[0] ? kid[1] : kid[2]                        */
  CLR_EN_CAST,   /* (cast_to) kid[0]                                */
  CLR_EN_CALL    /* op: clr_expr_fn; kid[0 .. nargs - 1]            */
} clr_expr_kind;

typedef enum clr_expr_binop {
  CLR_EB_MUL,
  CLR_EB_DIV,
  CLR_EB_MOD,
  CLR_EB_ADD,
  CLR_EB_SUB,
  CLR_EB_SHL,
  CLR_EB_SHR,
  CLR_EB_LT,
  CLR_EB_GT,
  CLR_EB_LE,
  CLR_EB_GE,
  CLR_EB_EQ,
  CLR_EB_NE,
  CLR_EB_AND,
  CLR_EB_XOR,
  CLR_EB_OR,
  CLR_EB_LAND,
  CLR_EB_LOR,
  CLR_EB_COUNT
} clr_expr_binop;

/* The built-in functions, OpenCL C 1.2's scalar forms. */
typedef enum clr_expr_fn {
  /* floating, one argument, its type */
  CLR_EF_FABS,
  CLR_EF_SQRT,
  CLR_EF_CBRT,
  CLR_EF_RSQRT,
  CLR_EF_EXP,
  CLR_EF_EXP2,
  CLR_EF_EXP10,
  CLR_EF_EXPM1,
  CLR_EF_LOG,
  CLR_EF_LOG2,
  CLR_EF_LOG10,
  CLR_EF_LOG1P,
  CLR_EF_SIN,
  CLR_EF_COS,
  CLR_EF_TAN,
  CLR_EF_ASIN,
  CLR_EF_ACOS,
  CLR_EF_ATAN,
  CLR_EF_SINH,
  CLR_EF_COSH,
  CLR_EF_TANH,
  CLR_EF_FLOOR,
  CLR_EF_CEIL,
  CLR_EF_ROUND,
  CLR_EF_TRUNC,
  CLR_EF_RINT,
  CLR_EF_SIGN,
  /* floating, two arguments of one type */
  CLR_EF_POW,
  CLR_EF_POWR,
  CLR_EF_ATAN2,
  CLR_EF_FMIN,
  CLR_EF_FMAX,
  CLR_EF_FMOD,
  CLR_EF_FDIM,
  CLR_EF_COPYSIGN,
  CLR_EF_HYPOT,
  /* floating and an integer */
  CLR_EF_POWN,
  /* floating, three arguments of one type */
  CLR_EF_FMA,
  CLR_EF_MAD,
  /* floating tests: int */
  CLR_EF_ISNAN,
  CLR_EF_ISINF,
  CLR_EF_ISFINITE,
  CLR_EF_SIGNBIT,
  /* any type, all arguments of one type */
  CLR_EF_MIN,
  CLR_EF_MAX,
  CLR_EF_CLAMP,
  /* integers */
  CLR_EF_ABS,      /* the unsigned type of the argument's */
  CLR_EF_ABS_DIFF, /* the same */
  CLR_EF_POPCOUNT,
  CLR_EF_CLZ,
  CLR_EF_COUNT
} clr_expr_fn;

typedef struct clr_expr_node {
  unsigned char kind;  /* clr_expr_kind */
  unsigned char op;    /* see clr_expr_kind */
  unsigned char type;  /* clr_expr_type: a literal's, a cast's target, and
                          after clr_expr_check_types every node's */
  unsigned char nargs; /* a call's arguments */
  int kid[3];          /* operands: node indices, -1 for none */
  unsigned col;        /* 1-based column of the node's token */
  union {
    uint64_t u; /* integer literals: the value's 64 bits */
    double d;   /* floating literals (a float's value, exactly, for f) */
  } lit;
} clr_expr_node;

/* A parsed expression: nodes[root] is the whole.  Children come before
 * their parents in nodes[]. */
typedef struct clr_expr {
  clr_expr_node *nodes;
  size_t count;
  int root;
  size_t nvars;
} clr_expr;

/* Deepest nesting of parentheses, unary operators, casts, calls and
 * conditionals that the parser accepts (its recursion, and the
 * evaluator's, stay bounded). */
#define CLR_EXPR_MAX_DEPTH 200

/* Parse text, an expression of the nvars variables named by vars (at most
 * 8), of at most limit characters.  what names the expression in
 * messages ("the map expression").  0: *e holds the tree (clr_expr_free
 * releases it); 1: refused, err holds one line saying why (the token and
 * its column); -1: out of memory.  *e is empty unless 0 is returned. */
int clr_expr_parse(clr_expr *e, const char *text, const char *what,
                   const char *const *vars, size_t nvars, size_t limit,
                   char *err, size_t err_size);

void clr_expr_free(clr_expr *e);

/* A map expression's variables, in clr_expr_parse's order: the element,
 * its index and (dot products) the second array's element. */
enum { CLR_MAP_VAR_X, CLR_MAP_VAR_I, CLR_MAP_VAR_Y, CLR_MAP_NVARS };
extern const char *const clr_map_vars[CLR_MAP_NVARS];

/* 1 when the parsed expression reads variable var (its index in vars). */
int clr_expr_reads(const clr_expr *e, size_t var);

/* Give every node its OpenCL C type, the variables' from var_types: the
 * usual arithmetic conversions, int for comparisons and logical
 * operators, the built-ins' overloads (a call whose arguments match none
 * of them is refused, as OpenCL C refuses an ambiguous call).  0, or 1
 * with err saying why (the operator or function and its column). */
int clr_expr_check_types(clr_expr *e, const clr_expr_type *var_types,
                         const char *what, char *err, size_t err_size);

const char *clr_expr_type_name(clr_expr_type t);   /* "float", "" if invalid */
const char *clr_expr_function_name(clr_expr_fn f); /* "sqrt", "" if none */
/* The named constants, index 0 up, NULL past the last. */
const char *clr_expr_constant_name(size_t k);

/* C's integer promotion (char, uchar, short, ushort: int) and the usual
 * arithmetic conversions of two operands (int 32 bits, long 64). */
clr_expr_type clr_expr_promote(clr_expr_type t);
clr_expr_type clr_expr_usual(clr_expr_type a, clr_expr_type b);

/* 1 for float and double. */
int clr_expr_type_is_fp(clr_expr_type t);
/* 1 for the signed integer types. */
int clr_expr_type_is_signed(clr_expr_type t);
/* Bits of an integer type (8 .. 64); 32 / 64 for float / double. */
unsigned clr_expr_type_bits(clr_expr_type t);

#endif
