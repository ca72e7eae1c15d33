/* Expressions given as text: the tokeniser, the whitelist, the parser and
 * the types (expr.h).  libc only: the library's validation, the CPU
 * evaluator of src/check and the fuzz harness share it. */
#include "expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the names */

static const char *const type_names[CLR_ET_COUNT] = {
    "char", "uchar", "short", "ushort", "int",
    "uint", "long",  "ulong", "float",  "double"};

/* Argument classes of the built-ins (how check_types reads a call). */
enum {
  FC_F1,   /* floating, one argument: its type           */
  FC_F2,   /* floating, two of one type                  */
  FC_F3,   /* floating, three of one type                */
  FC_POWN, /* floating and an integer: the first's type  */
  FC_TEST, /* floating, one: int                         */
  FC_ANY,  /* any type, all of one type: that type       */
  FC_IU,   /* integers of one type: its unsigned type    */
  FC_I1    /* an integer: its type                       */
};

static const struct {
  const char *name;
  unsigned char args, cls;
} functions[CLR_EF_COUNT] = {
    [CLR_EF_FABS] = {"fabs", 1, FC_F1},
    [CLR_EF_SQRT] = {"sqrt", 1, FC_F1},
    [CLR_EF_CBRT] = {"cbrt", 1, FC_F1},
    [CLR_EF_RSQRT] = {"rsqrt", 1, FC_F1},
    [CLR_EF_EXP] = {"exp", 1, FC_F1},
    [CLR_EF_EXP2] = {"exp2", 1, FC_F1},
    [CLR_EF_EXP10] = {"exp10", 1, FC_F1},
    [CLR_EF_EXPM1] = {"expm1", 1, FC_F1},
    [CLR_EF_LOG] = {"log", 1, FC_F1},
    [CLR_EF_LOG2] = {"log2", 1, FC_F1},
    [CLR_EF_LOG10] = {"log10", 1, FC_F1},
    [CLR_EF_LOG1P] = {"log1p", 1, FC_F1},
    [CLR_EF_SIN] = {"sin", 1, FC_F1},
    [CLR_EF_COS] = {"cos", 1, FC_F1},
    [CLR_EF_TAN] = {"tan", 1, FC_F1},
    [CLR_EF_ASIN] = {"asin", 1, FC_F1},
    [CLR_EF_ACOS] = {"acos", 1, FC_F1},
    [CLR_EF_ATAN] = {"atan", 1, FC_F1},
    [CLR_EF_SINH] = {"sinh", 1, FC_F1},
    [CLR_EF_COSH] = {"cosh", 1, FC_F1},
    [CLR_EF_TANH] = {"tanh", 1, FC_F1},
    [CLR_EF_FLOOR] = {"floor", 1, FC_F1},
    [CLR_EF_CEIL] = {"ceil", 1, FC_F1},
    [CLR_EF_ROUND] = {"round", 1, FC_F1},
    [CLR_EF_TRUNC] = {"trunc", 1, FC_F1},
    [CLR_EF_RINT] = {"rint", 1, FC_F1},
    [CLR_EF_SIGN] = {"sign", 1, FC_F1},
    [CLR_EF_POW] = {"pow", 2, FC_F2},
    [CLR_EF_POWR] = {"powr", 2, FC_F2},
    [CLR_EF_ATAN2] = {"atan2", 2, FC_F2},
    [CLR_EF_FMIN] = {"fmin", 2, FC_F2},
    [CLR_EF_FMAX] = {"fmax", 2, FC_F2},
    [CLR_EF_FMOD] = {"fmod", 2, FC_F2},
    [CLR_EF_FDIM] = {"fdim", 2, FC_F2},
    [CLR_EF_COPYSIGN] = {"copysign", 2, FC_F2},
    [CLR_EF_HYPOT] = {"hypot", 2, FC_F2},
    [CLR_EF_POWN] = {"pown", 2, FC_POWN},
    [CLR_EF_FMA] = {"fma", 3, FC_F3},
    [CLR_EF_MAD] = {"mad", 3, FC_F3},
    [CLR_EF_ISNAN] = {"isnan", 1, FC_TEST},
    [CLR_EF_ISINF] = {"isinf", 1, FC_TEST},
    [CLR_EF_ISFINITE] = {"isfinite", 1, FC_TEST},
    [CLR_EF_SIGNBIT] = {"signbit", 1, FC_TEST},
    [CLR_EF_MIN] = {"min", 2, FC_ANY},
    [CLR_EF_MAX] = {"max", 2, FC_ANY},
    [CLR_EF_CLAMP] = {"clamp", 3, FC_ANY},
    [CLR_EF_ABS] = {"abs", 1, FC_IU},
    [CLR_EF_ABS_DIFF] = {"abs_diff", 2, FC_IU},
    [CLR_EF_POPCOUNT] = {"popcount", 1, FC_I1},
    [CLR_EF_CLZ] = {"clz", 1, FC_I1},
};

/* The named constants, with OpenCL C's values and types. */
static const struct {
  const char *name;
  unsigned char type;
  uint64_t u;
  double d;
} constants[] = {
    {"M_PI", CLR_ET_DOUBLE, 0, 3.141592653589793115997963468544185161590576},
    {"M_PI_F", CLR_ET_FLOAT, 0, (double)3.14159274101257f},
    {"M_E", CLR_ET_DOUBLE, 0, 2.718281828459045090795598298427648842334747},
    {"M_E_F", CLR_ET_FLOAT, 0, (double)2.71828174591064f},
    {"M_LN2", CLR_ET_DOUBLE, 0, 0.693147180559945286226763982995180413126945},
    {"M_LN2_F", CLR_ET_FLOAT, 0, (double)0.693147182464599f},
    {"M_SQRT2", CLR_ET_DOUBLE, 0, 1.414213562373095145474621858738828450441},
    {"M_SQRT2_F", CLR_ET_FLOAT, 0, (double)1.41421353816986f},
    {"INFINITY", CLR_ET_FLOAT, 0, HUGE_VAL},
    {"NAN", CLR_ET_FLOAT, 0, NAN},
    {"MAXFLOAT", CLR_ET_FLOAT, 0, 0x1.fffffep127},
    {"FLT_MAX", CLR_ET_FLOAT, 0, 0x1.fffffep127},
    {"FLT_MIN", CLR_ET_FLOAT, 0, 0x1p-126},
    {"FLT_EPSILON", CLR_ET_FLOAT, 0, 0x1p-23},
    {"DBL_MAX", CLR_ET_DOUBLE, 0, 0x1.fffffffffffffp1023},
    {"DBL_MIN", CLR_ET_DOUBLE, 0, 0x1p-1022},
    {"DBL_EPSILON", CLR_ET_DOUBLE, 0, 0x1p-52},
    {"INT_MAX", CLR_ET_INT, 0x7fffffffu, 0},
    {"INT_MIN", CLR_ET_INT, 0xffffffff80000000u, 0},
    {"UINT_MAX", CLR_ET_UINT, 0xffffffffu, 0},
    {"LONG_MAX", CLR_ET_LONG, 0x7fffffffffffffffu, 0},
    {"LONG_MIN", CLR_ET_LONG, 0x8000000000000000u, 0},
    {"ULONG_MAX", CLR_ET_ULONG, 0xffffffffffffffffu, 0},
};
#define N_CONSTANTS (sizeof constants / sizeof constants[0])

/* Keywords of C99 and OpenCL C (and the type names a cast may not use):
 * none of them belongs in an expression of values. */
static const char *const keywords[] = {"auto",
                                       "break",
                                       "case",
                                       "const",
                                       "continue",
                                       "default",
                                       "do",
                                       "else",
                                       "enum",
                                       "extern",
                                       "for",
                                       "goto",
                                       "if",
                                       "inline",
                                       "register",
                                       "restrict",
                                       "return",
                                       "signed",
                                       "unsigned",
                                       "sizeof",
                                       "static",
                                       "struct",
                                       "switch",
                                       "typedef",
                                       "union",
                                       "void",
                                       "volatile",
                                       "while",
                                       "_Bool",
                                       "_Complex",
                                       "_Imaginary",
                                       "_Alignof",
                                       "_Alignas",
                                       "_Generic",
                                       "_Noreturn",
                                       "_Static_assert",
                                       "_Thread_local",
                                       "_Atomic",
                                       "asm",
                                       "typeof",
                                       "bool",
                                       "half",
                                       "size_t",
                                       "ptrdiff_t",
                                       "intptr_t",
                                       "uintptr_t",
                                       "global",
                                       "local",
                                       "constant",
                                       "private",
                                       "kernel",
                                       "read_only",
                                       "write_only",
                                       "read_write",
                                       "uniform",
                                       "pipe",
                                       "vec_step",
                                       "true",
                                       "false",
                                       "image2d_t",
                                       "image3d_t",
                                       "sampler_t",
                                       "event_t"};

const char *clr_expr_type_name(clr_expr_type t) {
  return (unsigned)t < CLR_ET_COUNT ? type_names[t] : "";
}

const char *clr_expr_function_name(clr_expr_fn f) {
  return (unsigned)f < CLR_EF_COUNT ? functions[f].name : "";
}

const char *clr_expr_constant_name(size_t k) {
  return k < N_CONSTANTS ? constants[k].name : NULL;
}

int clr_expr_type_is_fp(clr_expr_type t) {
  return t == CLR_ET_FLOAT || t == CLR_ET_DOUBLE;
}

int clr_expr_type_is_signed(clr_expr_type t) {
  return t == CLR_ET_CHAR || t == CLR_ET_SHORT || t == CLR_ET_INT ||
         t == CLR_ET_LONG;
}

unsigned clr_expr_type_bits(clr_expr_type t) {
  switch (t) {
  case CLR_ET_CHAR:
  case CLR_ET_UCHAR:
    return 8;
  case CLR_ET_SHORT:
  case CLR_ET_USHORT:
    return 16;
  case CLR_ET_INT:
  case CLR_ET_UINT:
  case CLR_ET_FLOAT:
    return 32;
  default:
    return 64;
  }
}

/* ------------------------------------------------------------- tokens */

enum {
  TK_END,
  TK_NAME,  /* sub: NM_*, value: the index in its table */
  TK_NUM,   /* type, lit */
  TK_OP,    /* a binary operator: value clr_expr_binop (+ - also unary) */
  TK_NOT,   /* ! */
  TK_TILDE, /* ~ */
  TK_LP,
  TK_RP,
  TK_COMMA,
  TK_QUEST,
  TK_COLON
};

enum { NM_VAR, NM_FN, NM_TYPE, NM_CONST };

typedef struct token {
  unsigned char kind, sub, type;
  unsigned value;
  size_t at, len; /* in the text */
  uint64_t u;
  double d;
} token;

typedef struct parser {
  const char *text, *what;
  char *err;
  size_t err_size;
  const char *const *vars;
  size_t nvars;
  token *toks;
  size_t ntoks, pos;
  clr_expr *e;
  int failed;
} parser;

static int fail(parser *p, const char *fmt, ...) {
  if (!p->failed && p->err_size) {
    size_t len = (size_t)snprintf(p->err, p->err_size, "%s ", p->what);
    if (len < p->err_size) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(p->err + len, p->err_size - len, fmt, ap);
      va_end(ap);
    }
  }
  p->failed = 1;
  return 1;
}

/* A token's text for a message, at most 40 characters. */
#define SHOWN(len) (int)((len) > 40 ? 40 : (len))
#define MORE(len) ((len) > 40 ? "..." : "")

static int refuse_token(parser *p, size_t at, size_t len, const char *why) {
  return fail(p, "may not use '%.*s%s' (%s) at column %zu", SHOWN(len),
              p->text + at, MORE(len), why, at + 1);
}

static int is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_hex(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Punctuation, longest first (C's tokens: the longest match wins, so
 * "<%" is a digraph however it was meant).  kind TK_END: refused. */
static const struct {
  const char *s;
  unsigned char kind;
  unsigned char value;
  const char *why; /* refused: what it is */
} puncts[] = {
    {"%:%:", TK_END, 0, "a digraph"},
    {"<<=", TK_END, 0, "an assignment"},
    {">>=", TK_END, 0, "an assignment"},
    {"...", TK_END, 0, "an ellipsis"},
    {"/*", TK_END, 0, "a comment"},
    {"//", TK_END, 0, "a comment"},
    {"<:", TK_END, 0, "a digraph"},
    {":>", TK_END, 0, "a digraph"},
    {"<%", TK_END, 0, "a digraph"},
    {"%>", TK_END, 0, "a digraph"},
    {"%:", TK_END, 0, "a digraph"},
    {"##", TK_END, 0, "a preprocessor operator"},
    {"->", TK_END, 0, "a member access"},
    {"++", TK_END, 0, "an increment"},
    {"--", TK_END, 0, "a decrement"},
    {"*=", TK_END, 0, "an assignment"},
    {"/=", TK_END, 0, "an assignment"},
    {"%=", TK_END, 0, "an assignment"},
    {"+=", TK_END, 0, "an assignment"},
    {"-=", TK_END, 0, "an assignment"},
    {"&=", TK_END, 0, "an assignment"},
    {"^=", TK_END, 0, "an assignment"},
    {"|=", TK_END, 0, "an assignment"},
    {"<<", TK_OP, CLR_EB_SHL, NULL},
    {">>", TK_OP, CLR_EB_SHR, NULL},
    {"<=", TK_OP, CLR_EB_LE, NULL},
    {">=", TK_OP, CLR_EB_GE, NULL},
    {"==", TK_OP, CLR_EB_EQ, NULL},
    {"!=", TK_OP, CLR_EB_NE, NULL},
    {"&&", TK_OP, CLR_EB_LAND, NULL},
    {"||", TK_OP, CLR_EB_LOR, NULL},
    {"*", TK_OP, CLR_EB_MUL, NULL},
    {"/", TK_OP, CLR_EB_DIV, NULL},
    {"%", TK_OP, CLR_EB_MOD, NULL},
    {"+", TK_OP, CLR_EB_ADD, NULL},
    {"-", TK_OP, CLR_EB_SUB, NULL},
    {"<", TK_OP, CLR_EB_LT, NULL},
    {">", TK_OP, CLR_EB_GT, NULL},
    {"&", TK_OP, CLR_EB_AND, NULL},
    {"^", TK_OP, CLR_EB_XOR, NULL},
    {"|", TK_OP, CLR_EB_OR, NULL},
    {"!", TK_NOT, 0, NULL},
    {"~", TK_TILDE, 0, NULL},
    {"(", TK_LP, 0, NULL},
    {")", TK_RP, 0, NULL},
    {",", TK_COMMA, 0, NULL},
    {"?", TK_QUEST, 0, NULL},
    {":", TK_COLON, 0, NULL},
    {"=", TK_END, 0, "an assignment"},
    {".", TK_END, 0, "a member access"},
    {"[", TK_END, 0, "a subscript"},
    {"]", TK_END, 0, "a subscript"},
    {"{", TK_END, 0, "a brace"},
    {"}", TK_END, 0, "a brace"},
    {";", TK_END, 0, "a statement's end"},
    {"#", TK_END, 0, "a preprocessor directive"},
    {"\"", TK_END, 0, "a string literal"},
    {"'", TK_END, 0, "a character literal"},
    {"\\", TK_END, 0, "a backslash"},
};

/* The name at at (len characters) classified into t, or refused. */
static int lex_name(parser *p, size_t at, size_t len, token *t) {
  const char *s = p->text + at;
  t->kind = TK_NAME;
  for (size_t k = 0; k < p->nvars; k++)
    if (strlen(p->vars[k]) == len && memcmp(p->vars[k], s, len) == 0) {
      t->sub = NM_VAR;
      t->value = (unsigned)k;
      return 0;
    }
  for (unsigned k = 0; k < CLR_EF_COUNT; k++)
    if (strlen(functions[k].name) == len &&
        memcmp(functions[k].name, s, len) == 0) {
      t->sub = NM_FN;
      t->value = k;
      return 0;
    }
  for (unsigned k = 0; k < CLR_ET_COUNT; k++)
    if (strlen(type_names[k]) == len && memcmp(type_names[k], s, len) == 0) {
      t->sub = NM_TYPE;
      t->value = k;
      return 0;
    }
  for (unsigned k = 0; k < N_CONSTANTS; k++)
    if (strlen(constants[k].name) == len &&
        memcmp(constants[k].name, s, len) == 0) {
      t->sub = NM_CONST;
      t->value = k;
      return 0;
    }
  for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
    if (strlen(keywords[k]) == len && memcmp(keywords[k], s, len) == 0)
      return refuse_token(p, at, len, "a keyword");
  if (s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z')))
    return refuse_token(p, at, len, "a reserved name");
  char names[64] = "";
  for (size_t k = 0; k < p->nvars && k < 8; k++) {
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%s",
             k == 0              ? ""
             : k + 1 == p->nvars ? " and "
                                 : ", ",
             p->vars[k]);
  }
  return fail(p,
              "uses unknown name '%.*s%s' at column %zu (the variables are "
              "%s; the functions and constants are listed in clreduce.h)",
              SHOWN(len), s, MORE(len), at + 1, names);
}

/* An integer literal's suffix: *u and *l set; 0, or 1 if it is not one. */
static int int_suffix(const char *s, size_t len, int *u, int *l) {
  *u = *l = 0;
  for (size_t k = 0; k < len; k++) {
    int c = lower(s[k]);
    if (c == 'u' && !*u)
      *u = 1;
    else if (c == 'l' && !*l)
      *l = 1;
    else
      return 1;
  }
  return 0;
}

/* The number at at (len characters of a pp-number) into t. */
static int lex_number(parser *p, size_t at, size_t len, token *t) {
  const char *s = p->text + at;
  int hex = len > 1 && s[0] == '0' && lower(s[1]) == 'x';
  size_t k = hex ? 2 : 0, digits = 0;
  int fp = 0;
  t->kind = TK_NUM;
  /* the mantissa: digits, a point, digits; an exponent */
  for (; k < len && (hex ? is_hex(s[k]) : is_digit(s[k])); k++)
    digits++;
  if (k < len && s[k] == '.') {
    fp = 1;
    for (k++; k < len && (hex ? is_hex(s[k]) : is_digit(s[k])); k++)
      digits++;
  }
  if (digits == 0)
    return refuse_token(p, at, len, "not a number");
  if (k < len && lower(s[k]) == (hex ? 'p' : 'e')) {
    size_t e = ++k;
    fp = 1;
    if (k < len && (s[k] == '+' || s[k] == '-'))
      e = ++k;
    while (k < len && is_digit(s[k]))
      k++;
    if (k == e)
      return refuse_token(p, at, len, "an exponent without digits");
  } else if (hex && fp) {
    return refuse_token(p, at, len, "a hex float without its p exponent");
  }
  const char *suffix = s + k;
  size_t slen = len - k;
  if (fp) {
    if (slen == 1 && lower(suffix[0]) == 'h')
      return refuse_token(p, at, len,
                          "a half literal: half is a storage type here");
    if (slen > 1 || (slen == 1 && lower(suffix[0]) != 'f'))
      return refuse_token(p, at, len,
                          slen == 1 && lower(suffix[0]) == 'l'
                              ? "a long double literal"
                              : "not a valid floating literal");
    char buf[128];
    if (k >= sizeof buf)
      return refuse_token(p, at, len, "a floating literal of too many digits");
    memcpy(buf, s, k);
    buf[k] = '\0';
    char *end = NULL;
    t->type = slen ? CLR_ET_FLOAT : CLR_ET_DOUBLE;
    t->d = slen ? (double)strtof(buf, &end) : strtod(buf, &end);
    if (end != buf + k)
      return refuse_token(p, at, len, "not a valid floating literal");
    return 0;
  }
  int u, l;
  if (int_suffix(suffix, slen, &u, &l)) {
    int ll = slen >= 2 && lower(suffix[0]) == 'l' && lower(suffix[1]) == 'l';
    return refuse_token(p, at, len,
                        ll ? "long long: OpenCL C's long is 64 bits, write l"
                           : "not a valid integer suffix");
  }
  /* the value: octal when it starts with 0 */
  uint64_t v = 0;
  unsigned base = hex ? 16 : s[0] == '0' ? 8 : 10;
  for (size_t j = hex ? 2 : 0; j < k; j++) {
    unsigned d = is_digit(s[j]) ? (unsigned)(s[j] - '0')
                                : (unsigned)(lower(s[j]) - 'a' + 10);
    if (d >= base)
      return refuse_token(p, at, len, "not an octal digit");
    if (v > (UINT64_MAX - d) / base)
      return refuse_token(p, at, len, "too large for a ulong");
    v = v * base + d;
  }
  /* the first type of the list that holds it (C99 6.4.4.1, long being
   * 64 bits; a decimal too large for long is a ulong, as clang reads it) */
  int decimal = base == 10;
  clr_expr_type ty;
  if (!u && !l && v <= 0x7fffffffu)
    ty = CLR_ET_INT;
  else if (!l && v <= 0xffffffffu && (u || !decimal))
    ty = CLR_ET_UINT;
  else if (!u && v <= 0x7fffffffffffffffu)
    ty = CLR_ET_LONG;
  else
    ty = CLR_ET_ULONG;
  t->type = (unsigned char)ty;
  t->u = v;
  return 0;
}

static int tokenise(parser *p) {
  const char *s = p->text;
  size_t k = 0;
  for (;;) {
    unsigned char c = (unsigned char)s[k];
    token *t = &p->toks[p->ntoks];
    memset(t, 0, sizeof *t);
    t->at = k;
    if (c == '\0') {
      t->kind = TK_END;
      p->ntoks++;
      return 0;
    }
    if (c == ' ' || c == '\t') {
      k++;
      continue;
    }
    if (c == '\n' || c == '\r')
      return fail(p, "may not contain a %s at column %zu (one line)",
                  c == '\n' ? "newline" : "carriage return", k + 1);
    if (c < 32 || c == 127)
      return fail(p, "may not contain a control character 0x%02x at column %zu",
                  c, k + 1);
    if (c > 127)
      return fail(p, "may not contain a non-ASCII byte 0x%02x at column %zu", c,
                  k + 1);
    size_t len = 0;
    if (is_digit(c) || (c == '.' && is_digit((unsigned char)s[k + 1]))) {
      /* a pp-number: digits, letters, points, signs after an exponent */
      len = 1;
      for (;;) {
        unsigned char d = (unsigned char)s[k + len];
        unsigned char e = (unsigned char)lower(s[k + len - 1]);
        if (is_alpha(d) || is_digit(d) || d == '.')
          len++;
        else if ((d == '+' || d == '-') && (e == 'e' || e == 'p'))
          len++;
        else
          break;
      }
      if (lex_number(p, k, len, t))
        return 1;
    } else if (is_alpha(c)) {
      while (is_alpha((unsigned char)s[k + len]) ||
             is_digit((unsigned char)s[k + len]))
        len++;
      if (lex_name(p, k, len, t))
        return 1;
    } else {
      size_t j = 0, n = sizeof puncts / sizeof puncts[0];
      for (; j < n; j++)
        if (strncmp(s + k, puncts[j].s, strlen(puncts[j].s)) == 0)
          break;
      if (j == n)
        return refuse_token(p, k, 1, "not a character of C");
      len = strlen(puncts[j].s);
      if (puncts[j].why)
        return refuse_token(p, k, len, puncts[j].why);
      t->kind = puncts[j].kind;
      t->value = puncts[j].value;
    }
    t->len = len;
    k += len;
    p->ntoks++;
  }
}

/* ------------------------------------------------------------- parsing */

static const token *peek(const parser *p) { return &p->toks[p->pos]; }

static int add_node(parser *p, clr_expr_kind kind, unsigned op, size_t at,
                    int a, int b, int c) {
  clr_expr *e = p->e;
  clr_expr_node *n = &e->nodes[e->count];
  memset(n, 0, sizeof *n);
  n->kind = (unsigned char)kind;
  n->op = (unsigned char)op;
  n->kid[0] = a;
  n->kid[1] = b;
  n->kid[2] = c;
  n->col = (unsigned)(at + 1);
  return (int)e->count++;
}

/* What a token is, for "expected ..., not X". */
static int unexpected(parser *p, const char *expected) {
  const token *t = peek(p);
  if (t->kind == TK_END)
    return fail(p, "ends where %s is expected (column %zu)", expected,
                t->at + 1);
  if (t->kind == TK_COMMA)
    return fail(p,
                "may not use ',' at column %zu (commas only separate a "
                "call's arguments)",
                t->at + 1);
  if (t->kind == TK_RP)
    return fail(
        p, "has ')' at column %zu where %s is expected%s", t->at + 1, expected,
        p->pos > 0 && p->toks[p->pos - 1].kind == TK_LP ? " (empty parentheses)"
                                                        : "");
  return fail(p, "has '%.*s%s' at column %zu where %s is expected",
              SHOWN(t->len), p->text + t->at, MORE(t->len), t->at + 1,
              expected);
}

static int parse_cond(parser *p, unsigned depth);

/* 10 (* / %) down to 1 (||); 0: not a binary operator. */
static int precedence(const token *t) {
  static const unsigned char prec[CLR_EB_COUNT] = {
      [CLR_EB_MUL] = 10, [CLR_EB_DIV] = 10, [CLR_EB_MOD] = 10, [CLR_EB_ADD] = 9,
      [CLR_EB_SUB] = 9,  [CLR_EB_SHL] = 8,  [CLR_EB_SHR] = 8,  [CLR_EB_LT] = 7,
      [CLR_EB_GT] = 7,   [CLR_EB_LE] = 7,   [CLR_EB_GE] = 7,   [CLR_EB_EQ] = 6,
      [CLR_EB_NE] = 6,   [CLR_EB_AND] = 5,  [CLR_EB_XOR] = 4,  [CLR_EB_OR] = 3,
      [CLR_EB_LAND] = 2, [CLR_EB_LOR] = 1};
  return t->kind == TK_OP ? prec[t->value] : 0;
}

static int too_deep(parser *p, unsigned depth) {
  if (depth <= CLR_EXPR_MAX_DEPTH)
    return 0;
  fail(p, "nests deeper than %d levels at column %zu", CLR_EXPR_MAX_DEPTH,
       peek(p)->at + 1);
  return 1;
}

/* A call: the function's name is the current token. */
static int parse_call(parser *p, unsigned depth) {
  const token *name = peek(p);
  unsigned fn = name->value;
  size_t at = name->at, nargs = 0;
  int args[3] = {-1, -1, -1};
  p->pos++;
  if (peek(p)->kind != TK_LP)
    return fail(p, "names the function '%s' at column %zu without calling it",
                functions[fn].name, at + 1),
           -1;
  size_t open = peek(p)->at;
  p->pos++;
  if (peek(p)->kind != TK_RP) {
    for (;;) {
      int a = parse_cond(p, depth + 1);
      if (a < 0)
        return -1;
      if (nargs < 3)
        args[nargs] = a;
      nargs++;
      if (peek(p)->kind != TK_COMMA)
        break;
      p->pos++;
    }
  }
  if (peek(p)->kind != TK_RP) {
    if (peek(p)->kind == TK_END)
      return fail(p, "has an unclosed '(' at column %zu", open + 1), -1;
    return unexpected(p, "',' or ')'"), -1;
  }
  p->pos++;
  if (nargs != functions[fn].args)
    return fail(p, "calls '%s' at column %zu with %zu argument%s; it takes %u",
                functions[fn].name, at + 1, nargs, nargs == 1 ? "" : "s",
                (unsigned)functions[fn].args),
           -1;
  int n = add_node(p, CLR_EN_CALL, fn, at, args[0], args[1], args[2]);
  p->e->nodes[n].nargs = (unsigned char)nargs;
  return n;
}

static int parse_unary(parser *p, unsigned depth) {
  if (too_deep(p, depth))
    return -1;
  const token *t = peek(p);
  size_t at = t->at;
  if ((t->kind == TK_OP &&
       (t->value == CLR_EB_ADD || t->value == CLR_EB_SUB)) ||
      t->kind == TK_NOT || t->kind == TK_TILDE) {
    unsigned op = t->kind == TK_NOT        ? '!'
                  : t->kind == TK_TILDE    ? '~'
                  : t->value == CLR_EB_ADD ? '+'
                                           : '-';
    p->pos++;
    int a = parse_unary(p, depth + 1);
    return a < 0 ? -1 : add_node(p, CLR_EN_UNARY, op, at, a, -1, -1);
  }
  if (t->kind == TK_LP) {
    const token *n1 = &p->toks[p->pos + 1];
    if (n1->kind == TK_NAME && n1->sub == NM_TYPE &&
        p->toks[p->pos + 2].kind == TK_RP) { /* a cast */
      unsigned ty = n1->value;
      p->pos += 3;
      int a = parse_unary(p, depth + 1);
      if (a < 0)
        return -1;
      int n = add_node(p, CLR_EN_CAST, 0, at, a, -1, -1);
      p->e->nodes[n].type = (unsigned char)ty;
      return n;
    }
    p->pos++;
    int a = parse_cond(p, depth + 1);
    if (a < 0)
      return -1;
    if (peek(p)->kind != TK_RP) {
      if (peek(p)->kind == TK_END)
        return fail(p, "has an unclosed '(' at column %zu", at + 1), -1;
      return unexpected(p, "')'"), -1;
    }
    p->pos++;
    return a;
  }
  if (t->kind == TK_NUM) {
    p->pos++;
    int n = add_node(p, CLR_EN_LIT, 0, at, -1, -1, -1);
    p->e->nodes[n].type = t->type;
    if (clr_expr_type_is_fp((clr_expr_type)t->type))
      p->e->nodes[n].lit.d = t->d;
    else
      p->e->nodes[n].lit.u = t->u;
    return n;
  }
  if (t->kind == TK_NAME) {
    switch (t->sub) {
    case NM_VAR:
      p->pos++;
      return add_node(p, CLR_EN_VAR, t->value, at, -1, -1, -1);
    case NM_FN:
      return parse_call(p, depth);
    case NM_CONST: {
      p->pos++;
      int n = add_node(p, CLR_EN_LIT, 0, at, -1, -1, -1);
      clr_expr_node *nd = &p->e->nodes[n];
      nd->type = constants[t->value].type;
      if (clr_expr_type_is_fp((clr_expr_type)nd->type))
        nd->lit.d = constants[t->value].d;
      else
        nd->lit.u = constants[t->value].u;
      return n;
    }
    default:
      return fail(p,
                  "may use the type name '%s' (at column %zu) only in a cast, "
                  "as in (%s)x",
                  type_names[t->value], at + 1, type_names[t->value]),
             -1;
    }
  }
  return unexpected(p, "a value"), -1;
}

/* Binary operators of precedence min_prec and above, left to right. */
static int parse_binary(parser *p, int min_prec, unsigned depth) {
  int lhs = parse_unary(p, depth);
  if (lhs < 0)
    return -1;
  for (;;) {
    const token *t = peek(p);
    int prec = precedence(t);
    if (prec == 0 || prec < min_prec)
      return lhs;
    unsigned op = t->value;
    size_t at = t->at;
    p->pos++;
    int rhs = parse_binary(p, prec + 1, depth);
    if (rhs < 0)
      return -1;
    lhs = add_node(p, CLR_EN_BINARY, op, at, lhs, rhs, -1);
  }
}

static int parse_cond(parser *p, unsigned depth) {
  int c = parse_binary(p, 1, depth);
  if (c < 0 || peek(p)->kind != TK_QUEST)
    return c;
  if (too_deep(p, depth + 1))
    return -1;
  size_t at = peek(p)->at;
  p->pos++;
  int a = parse_cond(p, depth + 1);
  if (a < 0)
    return -1;
  if (peek(p)->kind != TK_COLON)
    return (peek(p)->kind == TK_END
                ? fail(p, "has no ':' for the '?' at column %zu", at + 1)
                : unexpected(p, "the ':' of a '?'")),
           -1;
  p->pos++;
  int b = parse_cond(p, depth + 1);
  return b < 0 ? -1 : add_node(p, CLR_EN_COND, 0, at, c, a, b);
}

void clr_expr_free(clr_expr *e) {
  free(e->nodes);
  memset(e, 0, sizeof *e);
}

const char *const clr_map_vars[CLR_MAP_NVARS] = {"x", "i", "y"};

int clr_expr_reads(const clr_expr *e, size_t var) {
  for (size_t k = 0; k < e->count; k++)
    if (e->nodes[k].kind == CLR_EN_VAR && e->nodes[k].op == var)
      return 1;
  return 0;
}

int clr_expr_parse(clr_expr *e, const char *text, const char *what,
                   const char *const *vars, size_t nvars, size_t limit,
                   char *err, size_t err_size) {
  parser p;
  memset(e, 0, sizeof *e);
  memset(&p, 0, sizeof p);
  if (err_size)
    err[0] = '\0';
  p.text = text ? text : "";
  p.what = what;
  p.err = err;
  p.err_size = err_size;
  p.vars = vars;
  p.nvars = nvars > 8 ? 8 : nvars;
  p.e = e;
  /* (limit + 1 wraps for SIZE_MAX: "no limit" reads to the end) */
  size_t len = strnlen(p.text, limit < SIZE_MAX ? limit + 1 : SIZE_MAX);
  if (len > limit) {
    fail(&p, "has %zu characters; at most %zu", strlen(p.text), limit);
    return 1;
  }
  /* every token but the end takes a character, every node a token */
  p.toks = malloc((len + 1) * sizeof *p.toks);
  e->nodes = malloc((len + 1) * sizeof *e->nodes);
  if (!p.toks || !e->nodes) {
    free(p.toks);
    clr_expr_free(e);
    return -1;
  }
  int rc = tokenise(&p);
  if (rc == 0 && p.ntoks == 1)
    rc = fail(&p, "is empty");
  if (rc == 0) {
    e->root = parse_cond(&p, 0);
    if (e->root >= 0 && peek(&p)->kind != TK_END) {
      if (peek(&p)->kind == TK_RP)
        fail(&p, "has ')' at column %zu that closes nothing", peek(&p)->at + 1);
      else
        unexpected(&p, "an operator or the end");
    }
    rc = p.failed;
  }
  free(p.toks);
  if (rc) {
    clr_expr_free(e);
    return 1;
  }
  e->nvars = p.nvars;
  return 0;
}

/* --------------------------------------------------------------- types */

/* char, uchar, short and ushort computed as int (C's integer promotion). */
clr_expr_type clr_expr_promote(clr_expr_type t) {
  return t < CLR_ET_INT ? CLR_ET_INT : t;
}

/* The usual arithmetic conversions of two operands (C99 6.3.1.8; int 32
 * bits, long 64). */
clr_expr_type clr_expr_usual(clr_expr_type a, clr_expr_type b) {
  if (a == CLR_ET_DOUBLE || b == CLR_ET_DOUBLE)
    return CLR_ET_DOUBLE;
  if (a == CLR_ET_FLOAT || b == CLR_ET_FLOAT)
    return CLR_ET_FLOAT;
  a = clr_expr_promote(a);
  b = clr_expr_promote(b);
  if (a == b)
    return a;
  int sa = clr_expr_type_is_signed(a), sb = clr_expr_type_is_signed(b);
  unsigned ba = clr_expr_type_bits(a), bb = clr_expr_type_bits(b);
  if (sa == sb)
    return ba >= bb ? a : b;
  clr_expr_type s = sa ? a : b, u = sa ? b : a;
  if (clr_expr_type_bits(u) >= clr_expr_type_bits(s))
    return u;
  return s; /* long holds every uint */
}

static clr_expr_type unsigned_of(clr_expr_type t) {
  return clr_expr_type_is_signed(t) ? (clr_expr_type)(t + 1) : t;
}

static const char *const binop_names[CLR_EB_COUNT] = {
    "*",  "/",  "%",  "+",  "-", "<<", ">>", "<",  ">",
    "<=", ">=", "==", "!=", "&", "^",  "|",  "&&", "||"};

int clr_expr_check_types(clr_expr *e, const clr_expr_type *var_types,
                         const char *what, char *err, size_t err_size) {
  for (size_t k = 0; k < e->count; k++) {
    clr_expr_node *n = &e->nodes[k];
    clr_expr_type t[3] = {CLR_ET_INT, CLR_ET_INT, CLR_ET_INT};
    for (int j = 0; j < 3; j++)
      if (n->kid[j] >= 0)
        t[j] = (clr_expr_type)e->nodes[n->kid[j]].type;
    int fp0 = clr_expr_type_is_fp(t[0]), fp1 = clr_expr_type_is_fp(t[1]);
    switch ((clr_expr_kind)n->kind) {
    case CLR_EN_VAR:
      n->type = (unsigned char)var_types[n->op];
      break;
    case CLR_EN_LIT:
    case CLR_EN_CAST:
      break;
    case CLR_EN_UNARY:
      if (n->op == '~' && fp0) {
        snprintf(err, err_size,
                 "%s applies '~' to a %s at column %u: it takes integers", what,
                 type_names[t[0]], n->col);
        return 1;
      }
      n->type =
          (unsigned char)(n->op == '!' ? CLR_ET_INT : clr_expr_promote(t[0]));
      break;
    case CLR_EN_BINARY: {
      unsigned op = n->op;
      int ints = op == CLR_EB_MOD || op == CLR_EB_SHL || op == CLR_EB_SHR ||
                 op == CLR_EB_AND || op == CLR_EB_XOR || op == CLR_EB_OR;
      if (ints && (fp0 || fp1)) {
        snprintf(err, err_size,
                 "%s applies '%s' to %s and %s at column %u: it takes "
                 "integers%s",
                 what, binop_names[op], type_names[t[0]], type_names[t[1]],
                 n->col, op == CLR_EB_MOD ? " (fmod takes floats)" : "");
        return 1;
      }
      if (op == CLR_EB_SHL || op == CLR_EB_SHR)
        n->type = (unsigned char)clr_expr_promote(t[0]);
      else if (op >= CLR_EB_LT && op <= CLR_EB_NE)
        n->type = CLR_ET_INT;
      else if (op == CLR_EB_LAND || op == CLR_EB_LOR)
        n->type = CLR_ET_INT;
      else
        n->type = (unsigned char)clr_expr_usual(t[0], t[1]);
      break;
    }
    case CLR_EN_COND:
      n->type = (unsigned char)clr_expr_usual(t[1], t[2]);
      break;
    case CLR_EN_CALL: {
      unsigned cls = functions[n->op].cls, na = n->nargs;
      int same = 1, fp = 1, ints = 1;
      for (unsigned j = 0; j < na; j++) {
        same = same && t[j] == t[0];
        fp = fp && clr_expr_type_is_fp(t[j]);
        ints = ints && !clr_expr_type_is_fp(t[j]);
      }
      int ok;
      const char *takes;
      switch (cls) {
      case FC_F1:
      case FC_F2:
      case FC_F3:
      case FC_TEST:
        ok = same && fp;
        takes = na == 1 ? "a float or a double"
                        : "float or double arguments, all of one type";
        n->type = (unsigned char)(cls == FC_TEST ? CLR_ET_INT : t[0]);
        break;
      case FC_POWN:
        ok = fp0 && !fp1;
        takes = "a float or a double and an integer";
        n->type = (unsigned char)t[0];
        break;
      case FC_ANY:
        ok = same;
        takes = "arguments of one type";
        n->type = (unsigned char)t[0];
        break;
      case FC_IU:
        ok = same && ints;
        takes = na == 1 ? "an integer" : "integers of one type";
        n->type = (unsigned char)unsigned_of(t[0]);
        break;
      default:
        ok = ints;
        takes = "an integer";
        n->type = (unsigned char)t[0];
        break;
      }
      if (!ok) {
        char got[64] = "";
        for (unsigned j = 0; j < na; j++) {
          size_t used = strlen(got);
          snprintf(got + used, sizeof got - used, "%s%s",
                   j == 0        ? ""
                   : j + 1 == na ? " and "
                                 : ", ",
                   type_names[t[j]]);
        }
        snprintf(err, err_size,
                 "%s calls '%s' at column %u with %s: it takes %s (a cast or "
                 "a literal's suffix gives the type)",
                 what, functions[n->op].name, n->col, got, takes);
        return 1;
      }
      break;
    }
    }
  }
  return 0;
}
