/* Expressions given as text (src/lib/core/expr.c): what the whitelist
 * accepts and refuses, with the token and column its message names, and
 * the types it gives; the CPU evaluator (src/check/expr_eval.c): OpenCL C's
 * typed results, what is undefined, the allowance, and a reference's
 * check with it.  No device. */
#include "expr.h"
#include "expr_eval.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                          \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

/* Parse text as a map expression of at most limit characters: the status,
 * the message in err. */
static int parse(const char *text, size_t limit, char *err, size_t size) {
  clr_expr e;
  int rc = clr_expr_parse(&e, text, "the map expression", clr_map_vars,
                          CLR_MAP_NVARS, limit, err, size);
  clr_expr_free(&e);
  return rc;
}

static void accepts(const char *text) {
  char err[512];
  int rc = parse(text, 4096, err, sizeof err);
  CHECK(rc == 0, "refused '%s': %s", text, err);
}

/* Refused, with every one of the words (NULL-ended) in the message. */
static void refuses(const char *text, const char *word1, const char *word2) {
  char err[512];
  int rc = parse(text, 4096, err, sizeof err);
  CHECK(rc == 1, "accepted '%s'", text);
  if (rc != 1)
    return;
  CHECK(strchr(err, '\n') == NULL, "'%s': a message of several lines", text);
  CHECK(strncmp(err, "the map expression ", 19) == 0,
        "'%s': '%s' does not say what", text, err);
  CHECK(!word1 || strstr(err, word1), "'%s': '%s' lacks '%s'", text, err,
        word1);
  CHECK(!word2 || strstr(err, word2), "'%s': '%s' lacks '%s'", text, err,
        word2);
}

static void test_refusals(void) {
  /* the digraphs, whatever was meant by them */
  refuses("(<% while (i < 2) <% %> %>), x", "'<%' (a digraph)", "column 2");
  refuses("x %> 1", "'%>' (a digraph)", "column 3");
  refuses("x <: 1", "'<:' (a digraph)", NULL);
  refuses("i ? x :> 1", "':>' (a digraph)", NULL);
  refuses("%:define", "'%:' (a digraph)", "column 1");
  refuses("x %:%: y", "'%:%:' (a digraph)", NULL);
  /* statements, blocks, directives, strings, comments */
  refuses("x; x", "';'", "column 2");
  refuses("({ x; })", "'{'", NULL);
  refuses("x }", "'}'", NULL);
  refuses("#define", "'#'", NULL);
  refuses("x ## y", "'##'", NULL);
  refuses("\"x\"", "string literal", NULL);
  refuses("'x'", "character literal", NULL);
  refuses("x /* c */", "'/*' (a comment)", "column 3");
  refuses("x // c", "'//' (a comment)", NULL);
  refuses("x \\", "backslash", NULL);
  refuses("x ` 1", "'`'", NULL);
  refuses("x @ 1", "'@'", NULL);
  refuses("x $ 1", "'$'", NULL);
  /* keywords and reserved names */
  static const char *const kw[] = {
      "while",  "if",       "for",    "do",       "return",  "sizeof",
      "struct", "goto",     "switch", "else",     "typedef", "union",
      "void",   "unsigned", "signed", "volatile", "static",  "half",
      "bool",   "size_t",   "asm",    "vec_step", "global",  "local"};
  for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++) {
    char text[64], want[64];
    snprintf(text, sizeof text, "x + %s", kw[k]);
    snprintf(want, sizeof want, "'%s' (a keyword)", kw[k]);
    refuses(text, want, "column 5");
  }
  refuses("__attribute__((x))", "'__attribute__' (a reserved name)", NULL);
  refuses("__builtin_trap()", "reserved name", NULL);
  refuses("_Bool", "keyword", NULL);
  /* names outside the whitelist */
  refuses("foo", "unknown name 'foo'", "column 1");
  refuses("x + get_global_id(0)", "unknown name 'get_global_id'", "column 5");
  refuses("printf(x)", "unknown name 'printf'", NULL);
  refuses("z", "unknown name 'z'", "x, i and y");
  refuses("X", "unknown name 'X'", NULL);
  refuses("convert_int(x)", "unknown name", NULL);
  refuses("float4", "unknown name", NULL);
  /* assignments, increments, members, subscripts */
  refuses("x = 1", "'=' (an assignment)", NULL);
  refuses("x += 1", "'+=' (an assignment)", NULL);
  refuses("x <<= 1", "'<<=' (an assignment)", NULL);
  refuses("x++", "'++'", NULL);
  refuses("x--1", "'--'", NULL);
  refuses("x.s0", "'.' (a member access)", NULL);
  refuses("x->a", "'->'", NULL);
  refuses("x[0]", "'['", NULL);
  /* bytes */
  refuses("x +\n1", "a newline at column 4", NULL);
  refuses("x\r", "carriage return", NULL);
  refuses("x\x01", "control character 0x01", NULL);
  refuses("x + \xc3\xa9", "non-ASCII byte 0xc3 at column 5", NULL);
  /* structure */
  refuses("", "empty", NULL);
  refuses("   ", "empty", NULL);
  refuses("(x", "unclosed '('", "column 1");
  refuses("x)", "')' at column 2", "closes nothing");
  refuses("()", "empty parentheses", NULL);
  refuses("x +", "ends where a value", NULL);
  refuses("x x", "'x' at column 3", NULL);
  refuses("x, y", "','", "call's arguments");
  refuses("x ? 1", "':'", NULL);
  refuses("x ? 1 , 2 : 3", "','", NULL);
  refuses("sqrt", "without calling it", NULL);
  refuses("float(x)", "only in a cast", NULL);
  refuses("(x)(y)", "'('", NULL);
  /* literals */
  refuses("1.5h", "half literal", NULL);
  refuses("1.5H", "half literal", NULL);
  refuses("1.5L", "long double", NULL);
  refuses("1ll", "long long", NULL);
  refuses("1uu", "integer suffix", NULL);
  refuses("1e", "exponent", NULL);
  refuses("1e+", "exponent", NULL);
  refuses("0x1.8", "p exponent", NULL);
  refuses("09", "octal", NULL);
  refuses("18446744073709551616", "too large", NULL);
  refuses("1.5ff", "floating literal", NULL);
  refuses("1abc", "integer suffix", NULL);
  refuses("0x", "not a number", NULL);
  /* nesting */
  char deep[1024];
  size_t k = 0;
  for (; k < 300; k++)
    deep[k] = '(';
  deep[k++] = 'x';
  for (size_t j = 0; j < 300; j++)
    deep[k++] = ')';
  deep[k] = '\0';
  refuses(deep, "nests deeper", NULL);
  memset(deep, '-', 600);
  for (size_t j = 1; j < 600; j += 2)
    deep[j] = ' ';
  strcpy(deep + 600, "x");
  refuses(deep, "nests deeper", NULL);
}

static void test_acceptances(void) {
  static const char *const ok[] = {
      "x",
      "x > 0.5f",
      "(i % 2 == 0) ? x : 0.0f",
      "(i % 7 == 0) ? (long)x : 0L",
      "isfinite(x)",
      "fabs(x - y)",
      "abs(x - 17)",
      "x >= 0.0f && x < 1.0f",
      "-x + +y * ~i - !x",
      "i << 3 >> 1 | i & 5 ^ 6",
      "x < y || x <= y || x > y || x >= y || x == y || x != y",
      "(float)i / (double)(uint)x",
      "(char)(uchar)(short)(ushort)(int)(uint)(long)(ulong)x",
      "1 + 1u + 1U + 1l + 1L + 1ul + 1UL + 1lu + 1LU + 1uL",
      "0x1F + 0X1fu + 017 + 0 + 00 + 0xffffffffffffffff",
      "1.0 + 1.f + .5 + 5. + 1e3 + 1E-3f + 1.5e+3F + 0x1.8p3 + 0x1p-2f",
      "M_PI + M_PI_F + M_E + M_E_F + M_LN2 + M_SQRT2_F + INFINITY + NAN",
      "MAXFLOAT + FLT_MAX + FLT_MIN + FLT_EPSILON + DBL_MAX + DBL_MIN",
      "DBL_EPSILON + INT_MAX + INT_MIN + UINT_MAX + LONG_MAX + LONG_MIN",
      "ULONG_MAX",
      "x ? y ? 1 : 2 : i ? 3 : 4",
      "\tx\t+ 1 ",
      "isnan((float)(x)) ? 0 : 1",
      "clamp(x, 0.0f, 1.0f)",
      "fma(x, y, 1.0f) + mad(x, y, x)",
      "pown(x, 3) + pow(x, 2.0f)",
  };
  for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
    accepts(ok[k]);
}

/* Every function with its own number of arguments, and one more and one
 * fewer. */
static void test_arity(void) {
  for (int f = 0; f < CLR_EF_COUNT; f++) {
    const char *name = clr_expr_function_name((clr_expr_fn)f);
    int want = -1;
    for (int n = 0; n <= 4; n++) {
      char text[128] = "";
      snprintf(text, sizeof text, "%s(", name);
      for (int a = 0; a < n; a++)
        strcat(text, a ? ", x" : "x");
      strcat(text, ")");
      char err[512];
      int rc = parse(text, 4096, err, sizeof err);
      if (rc == 0) {
        CHECK(want < 0, "%s takes %d and %d arguments", name, want, n);
        want = n;
      } else {
        CHECK(strstr(err, "it takes") || strstr(err, "empty parentheses"),
              "'%s': %s", text, err);
      }
    }
    CHECK(want >= 1 && want <= 3, "%s takes no count of arguments", name);
  }
  CHECK(strcmp(clr_expr_function_name(CLR_EF_COUNT), "") == 0,
        "a name past the last function");
}

static void test_limit(void) {
  char *text = malloc(5000);
  char err[512];
  /* "x+x+...+x": 4095 characters, then 4097 */
  for (size_t len = 4095; len <= 4097; len += 2) {
    for (size_t k = 0; k < len; k++)
      text[k] = k % 2 ? '+' : 'x';
    text[len] = '\0';
    int rc = parse(text, 4096, err, sizeof err);
    if (len == 4095)
      CHECK(rc == 0, "a valid expression of 4095 characters: %s", err);
    else
      CHECK(rc == 1 && strstr(err, "has 4097 characters; at most 4096"),
            "4097 characters: %d %s", rc, err);
  }
  /* no limit (SIZE_MAX, whose + 1 wraps): the whole text is read, its
   * tree sized for it (it once read 0 characters and overran) */
  clr_expr big;
  CHECK(clr_expr_parse(&big, text, "the map expression", clr_map_vars,
                       CLR_MAP_NVARS, SIZE_MAX, err, sizeof err) == 0 &&
            big.count > 2000 && clr_expr_reads(&big, CLR_MAP_VAR_X) &&
            !clr_expr_reads(&big, CLR_MAP_VAR_I),
        "4097 characters, no limit: parsed whole (%zu nodes): %s", big.count,
        err);
  clr_expr_free(&big);
  free(text);
  /* the variables are a parameter: another option's names */
  static const char *const ab[] = {"a", "b"};
  clr_expr e;
  CHECK(clr_expr_parse(&e, "a + b", "the combine expression", ab, 2, 100, err,
                       sizeof err) == 0,
        "a + b: %s", err);
  clr_expr_free(&e);
  CHECK(clr_expr_parse(&e, "a + x", "the combine expression", ab, 2, 100, err,
                       sizeof err) == 1 &&
            strstr(err, "the combine expression uses unknown name 'x'") &&
            strstr(err, "a and b"),
        "a + x: %s", err);
  clr_expr_free(&e);
}

/* The type of text's value, x float, i ulong, y float; or its message. */
static const char *type_of(const char *text, clr_expr_type x, char *err,
                           size_t size) {
  clr_expr e;
  clr_expr_type vt[3] = {x, CLR_ET_ULONG, x};
  if (clr_expr_parse(&e, text, "the map expression", clr_map_vars,
                     CLR_MAP_NVARS, 4096, err, size) != 0)
    return "(refused)";
  int rc = clr_expr_check_types(&e, vt, "the map expression", err, size);
  const char *t = rc ? "(ill-typed)"
                     : clr_expr_type_name((clr_expr_type)e.nodes[e.root].type);
  clr_expr_free(&e);
  return t;
}

static void test_types(void) {
  static const struct {
    const char *text;
    clr_expr_type x;
    const char *type; /* or the start of the type error's detail */
  } cases[] = {
      {"x", CLR_ET_FLOAT, "float"},
      {"x + 1", CLR_ET_FLOAT, "float"},
      {"x + 1.0", CLR_ET_FLOAT, "double"},
      {"x + 1.0f", CLR_ET_FLOAT, "float"},
      {"i", CLR_ET_FLOAT, "ulong"},
      {"i + 1", CLR_ET_FLOAT, "ulong"},
      {"x > 0.5f", CLR_ET_FLOAT, "int"},
      {"i == 0", CLR_ET_FLOAT, "int"},
      {"!x", CLR_ET_FLOAT, "int"},
      {"x && i", CLR_ET_FLOAT, "int"},
      {"1u - 2", CLR_ET_INT, "uint"},
      {"1u + 1l", CLR_ET_INT, "long"},
      {"1ul + 1l", CLR_ET_INT, "ulong"},
      {"2147483647", CLR_ET_INT, "int"},
      {"2147483648", CLR_ET_INT, "long"},
      {"0x80000000", CLR_ET_INT, "uint"},
      {"9223372036854775808", CLR_ET_INT, "ulong"},
      {"4294967296u", CLR_ET_INT, "ulong"},
      {"(char)x + (char)x", CLR_ET_INT, "int"},
      {"-(uchar)x", CLR_ET_INT, "int"},
      {"(ushort)1 << 2l", CLR_ET_INT, "int"},
      {"x << 1", CLR_ET_LONG, "long"},
      {"i ? x : 0", CLR_ET_FLOAT, "float"},
      {"i ? x : 0.0", CLR_ET_FLOAT, "double"},
      {"(float)i", CLR_ET_LONG, "float"},
      {"abs(x)", CLR_ET_INT, "uint"},
      {"abs_diff(x, 3)", CLR_ET_INT, "uint"},
      {"abs(i)", CLR_ET_INT, "ulong"},
      {"popcount(x)", CLR_ET_LONG, "long"},
      {"min(x, 3)", CLR_ET_INT, "int"},
      {"max(x, y)", CLR_ET_DOUBLE, "double"},
      {"sqrt(x)", CLR_ET_DOUBLE, "double"},
      {"isnan(x)", CLR_ET_DOUBLE, "int"},
      {"pown(x, 2)", CLR_ET_FLOAT, "float"},
      {"M_PI_F * x", CLR_ET_FLOAT, "float"},
      {"INT_MIN", CLR_ET_FLOAT, "int"},
      {"x % 2", CLR_ET_FLOAT, "(ill-typed)"},
      {"x << 1", CLR_ET_FLOAT, "(ill-typed)"},
      {"~x", CLR_ET_DOUBLE, "(ill-typed)"},
      {"x & 1", CLR_ET_FLOAT, "(ill-typed)"},
      {"sqrt(2)", CLR_ET_FLOAT, "(ill-typed)"},
      {"sqrt(x)", CLR_ET_INT, "(ill-typed)"},
      {"fmin(x, 1.0)", CLR_ET_FLOAT, "(ill-typed)"},
      {"min(x, 1)", CLR_ET_FLOAT, "(ill-typed)"},
      {"abs(x)", CLR_ET_FLOAT, "(ill-typed)"},
      {"pown(x, 2.0f)", CLR_ET_FLOAT, "(ill-typed)"},
      {"popcount(x)", CLR_ET_DOUBLE, "(ill-typed)"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char err[512] = "";
    const char *t = type_of(cases[k].text, cases[k].x, err, sizeof err);
    CHECK(strcmp(t, cases[k].type) == 0, "'%s' (x %s): %s, not %s (%s)",
          cases[k].text, clr_expr_type_name(cases[k].x), t, cases[k].type, err);
    if (strcmp(t, "(ill-typed)") == 0)
      CHECK(strstr(err, "column") && !strchr(err, '\n'),
            "'%s': the message '%s'", cases[k].text, err);
  }
}

/* text evaluated with x (of type t: the float or the integer given) and
 * i. */
static clr_eval_value eval(const char *text, clr_type t, double xf, int64_t xi,
                           uint64_t i) {
  clr_map_eval m;
  char err[512];
  clr_eval_value v;
  memset(&v, 0, sizeof v);
  float f = (float)xf;
  int32_t i32 = (int32_t)xi;
  const void *x = t == CLR_FLOAT    ? (const void *)&f
                  : t == CLR_DOUBLE ? (const void *)&xf
                  : t == CLR_INT    ? (const void *)&i32
                                    : (const void *)&xi;
  if (clr_map_eval_init(&m, text, t, 0, err, sizeof err) != 0) {
    CHECK(0, "'%s' refused: %s", text, err);
    v.undefined = -1;
    return v;
  }
  v = clr_map_eval_at(&m, x, NULL, 0, i);
  clr_map_eval_free(&m);
  return v;
}

#define INT_IS(text, t, xi, i, want_type, want)                                \
  do {                                                                         \
    clr_eval_value v_ = eval(text, t, 0, xi, i);                               \
    CHECK(v_.type == (want_type) && v_.u == (uint64_t)(want) &&                \
              !v_.undefined && v_.err == 0,                                    \
          "%s: %s %llu (err %g, undefined %d), want %s %llu", text,            \
          clr_expr_type_name(v_.type), (unsigned long long)v_.u, v_.err,       \
          v_.undefined, clr_expr_type_name(want_type),                         \
          (unsigned long long)(uint64_t)(want));                               \
  } while (0)

#define FP_IS(text, t, xf, i, want_type, want)                                 \
  do {                                                                         \
    clr_eval_value v_ = eval(text, t, xf, 0, i);                               \
    CHECK(v_.type == (want_type) &&                                            \
              (v_.d == (double)(want) ||                                       \
               (isnan(v_.d) && isnan((double)(want)))) &&                      \
              !v_.undefined,                                                   \
          "%s: %s %.17g, want %s %.17g", text, clr_expr_type_name(v_.type),    \
          v_.d, clr_expr_type_name(want_type), (double)(want));                \
  } while (0)

#define UNDEFINED(text, t, xi, code)                                           \
  do {                                                                         \
    clr_eval_value v_ = eval(text, t, 0, xi, 0);                               \
    CHECK(v_.undefined == (code), "%s: undefined %d, want %d (%s)", text,      \
          v_.undefined, code, clr_eval_undefined_name(code));                  \
  } while (0)

static void test_eval(void) {
  /* integers: wrap, C's division, conversions */
  INT_IS("x + 1", CLR_INT, INT32_MAX, 0, CLR_ET_INT,
         (uint64_t)(int64_t)INT32_MIN);
  INT_IS("x * 2", CLR_UINT, 0x80000001, 0, CLR_ET_UINT, 2);
  INT_IS("7 / 2", CLR_INT, 0, 0, CLR_ET_INT, 3);
  INT_IS("-7 / 2", CLR_INT, 0, 0, CLR_ET_INT, (uint64_t)-3);
  INT_IS("-7 % 2", CLR_INT, 0, 0, CLR_ET_INT, (uint64_t)-1);
  INT_IS("7 % -2", CLR_INT, 0, 0, CLR_ET_INT, 1);
  INT_IS("1u - 2", CLR_INT, 0, 0, CLR_ET_UINT, UINT32_MAX);
  INT_IS("-1 < 1u", CLR_INT, 0, 0, CLR_ET_INT, 0); /* -1 as a uint */
  INT_IS("-1 < 1l", CLR_INT, 0, 0, CLR_ET_INT, 1);
  INT_IS("1 << 33", CLR_INT, 0, 0, CLR_ET_INT, 2); /* modulo the width */
  INT_IS("i >> 65", CLR_INT, 0, 6, CLR_ET_ULONG, 3);
  INT_IS("-8 >> 1", CLR_INT, 0, 0, CLR_ET_INT, (uint64_t)-4);
  INT_IS("x >> 1", CLR_UINT, 0x80000000, 0, CLR_ET_UINT, 0x40000000);
  INT_IS("(char)300", CLR_INT, 0, 0, CLR_ET_CHAR, 44);
  INT_IS("(uchar)-1", CLR_INT, 0, 0, CLR_ET_UCHAR, 255);
  INT_IS("(short)x", CLR_INT, 40000, 0, CLR_ET_SHORT,
         (uint64_t)(40000 - 65536));
  INT_IS("(uchar)200 + (uchar)100", CLR_INT, 0, 0, CLR_ET_INT, 300);
  INT_IS("~0u", CLR_INT, 0, 0, CLR_ET_UINT, UINT32_MAX);
  INT_IS("!x", CLR_INT, 5, 0, CLR_ET_INT, 0);
  INT_IS("x && i", CLR_INT, 5, 0, CLR_ET_INT, 0);
  INT_IS("x || i", CLR_INT, 0, 7, CLR_ET_INT, 1);
  INT_IS("i % 2 == 0", CLR_INT, 0, 4, CLR_ET_INT, 1);
  INT_IS("i ? 2 : 3", CLR_INT, 0, 0, CLR_ET_INT, 3);
  INT_IS("abs(x)", CLR_INT, INT32_MIN, 0, CLR_ET_UINT, 0x80000000u);
  INT_IS("abs_diff(x, 4)", CLR_INT, -3, 0, CLR_ET_UINT, 7);
  INT_IS("abs_diff(x, 1)", CLR_INT, INT32_MIN, 0, CLR_ET_UINT, 0x80000001u);
  INT_IS("popcount(x)", CLR_INT, -1, 0, CLR_ET_INT, 32);
  INT_IS("clz(x)", CLR_INT, 1, 0, CLR_ET_INT, 31);
  INT_IS("clz(x)", CLR_LONG, 0, 0, CLR_ET_LONG, 64);
  INT_IS("clamp(x, 0, 3)", CLR_INT, 5, 0, CLR_ET_INT, 3);
  INT_IS("min(x, 1)", CLR_INT, 2, 0, CLR_ET_INT, 1);
  INT_IS("max(i, 9ul)", CLR_INT, 0, 12, CLR_ET_ULONG, 12);
  INT_IS("(int)-2.7f", CLR_INT, 0, 0, CLR_ET_INT, (uint64_t)-2);
  INT_IS("(uint)x", CLR_FLOAT, 0, 0, CLR_ET_UINT, 0);
  INT_IS("(long)x", CLR_DOUBLE, 0, 0, CLR_ET_LONG, 0);
  INT_IS("INT_MIN", CLR_INT, 0, 0, CLR_ET_INT, (uint64_t)(int64_t)INT32_MIN);
  INT_IS("ULONG_MAX + 1", CLR_INT, 0, 0, CLR_ET_ULONG, 0);
  INT_IS("2147483647 + 1", CLR_INT, 0, 0, CLR_ET_INT,
         (uint64_t)(int64_t)INT32_MIN);
  INT_IS("2147483648 + 1", CLR_INT, 0, 0, CLR_ET_LONG, 2147483649u);
  INT_IS("0x7fffffff + 1u", CLR_INT, 0, 0, CLR_ET_UINT, 0x80000000u);
  /* floating: in float when both are float, 1.0 double */
  FP_IS("(float)i", CLR_FLOAT, 0, 16777217, CLR_ET_FLOAT, 16777216.0);
  FP_IS("(double)i", CLR_FLOAT, 0, 16777217, CLR_ET_DOUBLE, 16777217.0);
  FP_IS("1.0f / 3", CLR_FLOAT, 0, 0, CLR_ET_FLOAT, (double)(1.0f / 3.0f));
  FP_IS("1.0 / 3", CLR_FLOAT, 0, 0, CLR_ET_DOUBLE, 1.0 / 3.0);
  FP_IS("x / 3", CLR_FLOAT, 1, 0, CLR_ET_FLOAT, (double)(1.0f / 3.0f));
  FP_IS("x / 3.0", CLR_FLOAT, 1, 0, CLR_ET_DOUBLE, 1.0 / 3.0);
  INT_IS("0.1f == 0.1", CLR_INT, 0, 0, CLR_ET_INT, 0);
  FP_IS("x * 1000.0f", CLR_FLOAT, 0.1, 0, CLR_ET_FLOAT,
        (double)(0.1f * 1000.0f));
  FP_IS("x + 1e-8f", CLR_FLOAT, 1, 0, CLR_ET_FLOAT, 1.0);
  FP_IS("x + 1e-8", CLR_FLOAT, 1, 0, CLR_ET_DOUBLE, 1.0 + 1e-8);
  FP_IS("i ? x : 0.0", CLR_FLOAT, 0.5, 1, CLR_ET_DOUBLE, 0.5);
  FP_IS("0x1.8p3", CLR_FLOAT, 0, 0, CLR_ET_DOUBLE, 12.0);
  FP_IS("0.1f", CLR_FLOAT, 0, 0, CLR_ET_FLOAT, (double)0.1f);
  FP_IS("M_PI_F", CLR_FLOAT, 0, 0, CLR_ET_FLOAT, (double)(float)M_PI);
  FP_IS("-x", CLR_FLOAT, 0, 0, CLR_ET_FLOAT, -0.0);
  FP_IS("sign(x)", CLR_FLOAT, -2, 0, CLR_ET_FLOAT, -1.0);
  FP_IS("sign(x)", CLR_FLOAT, NAN, 0, CLR_ET_FLOAT, 0.0);
  FP_IS("fmax(NAN, 1.0f)", CLR_FLOAT, 0, 0, CLR_ET_FLOAT, 1.0);
  FP_IS("fmod(x, 3.0f)", CLR_FLOAT, 7.5, 0, CLR_ET_FLOAT, 1.5);
  FP_IS("round(x)", CLR_FLOAT, 2.5, 0, CLR_ET_FLOAT, 3.0);
  FP_IS("rint(x)", CLR_FLOAT, 2.5, 0, CLR_ET_FLOAT, 2.0);
  FP_IS("pown(x, -2)", CLR_FLOAT, 2, 0, CLR_ET_FLOAT, 0.25);
  FP_IS("powr(x, 2.0f)", CLR_FLOAT, -2, 0, CLR_ET_FLOAT, NAN);
  FP_IS("sqrt(x)", CLR_DOUBLE, 2, 0, CLR_ET_DOUBLE, sqrt(2.0));
  FP_IS("fma(x, x, -1.0f)", CLR_FLOAT, 1.0 + 0x1p-12, 0, CLR_ET_FLOAT,
        (double)fmaf(1.0f + 0x1p-12f, 1.0f + 0x1p-12f, -1.0f));
  FP_IS("clamp(x, 0.0f, 1.0f)", CLR_FLOAT, -3, 0, CLR_ET_FLOAT, 0.0);
  INT_IS("isnan(x)", CLR_FLOAT, 0, 0, CLR_ET_INT, 0);
  INT_IS("isinf(-INFINITY)", CLR_FLOAT, 0, 0, CLR_ET_INT, 1);
  INT_IS("x > 0.5f", CLR_FLOAT, 0, 0, CLR_ET_INT, 0);
  /* undefined in OpenCL C: no value */
  UNDEFINED("x / 0", CLR_INT, 1, CLR_EVAL_DIV_ZERO);
  UNDEFINED("1 % (int)(i - i)", CLR_INT, 1, CLR_EVAL_DIV_ZERO);
  UNDEFINED("INT_MIN / -1", CLR_INT, 0, CLR_EVAL_DIV_OVER);
  UNDEFINED("LONG_MIN % -1l", CLR_INT, 0, CLR_EVAL_DIV_OVER);
  UNDEFINED("(int)1e10f", CLR_INT, 0, CLR_EVAL_CONVERT);
  UNDEFINED("(uint)-1.0f", CLR_INT, 0, CLR_EVAL_CONVERT);
  UNDEFINED("(int)NAN", CLR_INT, 0, CLR_EVAL_CONVERT);
  UNDEFINED("clamp(x, 3, 2)", CLR_INT, 0, CLR_EVAL_CLAMP);
  UNDEFINED("1 + x / 0", CLR_INT, 0, CLR_EVAL_DIV_ZERO);
  /* an undefined branch not taken, an operand not evaluated: defined */
  INT_IS("i == 0 ? 1 : 1 / (int)i", CLR_INT, 0, 0, CLR_ET_INT, 1);
  INT_IS("i != 0 && 1 / (int)i", CLR_INT, 0, 0, CLR_ET_INT, 0);
}

/* The allowance: 0 where the device computes the same, more where it may
 * differ. */
static void test_allowance(void) {
  static const struct {
    const char *text;
    int exact;
  } cases[] = {
      {"x * 1000.0f", 1},     {"x + 1.0f", 1},        {"fabs(x - 0.25f)", 1},
      {"x / 3.0", 1},         {"(double)x * x", 1},   {"fmin(x, 0.5f)", 1},
      {"floor(x * 8.0f)", 1}, {"x > 0.5f", 1},        {"(int)(x * 100.0f)", 1},
      {"fma(x, x, 1.0f)", 1}, {"sqrt((double)x)", 1}, {"x / 3.0f", 0},
      {"sqrt(x)", 0},         {"sin(x)", 0},          {"exp(x)", 0},
      {"pow(x, 2.0f)", 0},    {"x * x + 1.0f", 0},    {"1.0f - x * x", 0},
      {"-(x * x) + 1.0f", 0}, {"mad(x, x, 1.0f)", 0}, {"sin(x) * 2.0f", 0},
      {"(double)sin(x)", 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    clr_eval_value v = eval(cases[k].text, CLR_FLOAT, 0.3, 0, 0);
    CHECK(cases[k].exact ? v.err == 0 : v.err > 0 && v.err < 1e-5,
          "%s: allowance %g, want %s", cases[k].text, v.err,
          cases[k].exact ? "0" : "a few ulps");
  }
  /* a comparison near its edge may go either way: 0 or 1 */
  clr_eval_value v = eval("sin(x) > 0.29552022f", CLR_FLOAT, 0.3, 0, 0);
  CHECK(v.err == 1, "sin(x) > sin(0.3): allowance %g, want 1", v.err);
  v = eval("sin(x) > 0.9f", CLR_FLOAT, 0.3, 0, 0);
  CHECK(v.err == 0, "sin(x) > 0.9f: allowance %g, want 0", v.err);
  /* an uncertain value converted to an integer: the interval's integers */
  v = eval("(int)(sin(x) * 1e8f)", CLR_FLOAT, 0.3, 0, 0);
  CHECK(v.err >= 1 && v.err < 100, "(int)(sin(x) * 1e8f): allowance %g", v.err);
  /* a denormal input may be flushed */
  v = eval("x * 2.0f", CLR_FLOAT, 1e-40, 0, 0);
  CHECK(v.err > 0, "x * 2 of a denormal: allowance %g", v.err);
}

/* A reference's check with the allowance: a sum, and an argmax whose two
 * largest values are closer than their allowance. */
static void test_reference(void) {
  float x[4] = {0.5f, 1.5707963f, 0.25f, 1.5707964f};
  clr_map_eval m;
  clr_expr_reference r;
  clr_options o;
  clr_check chk;
  char err[512];
  clr_options_init(&o);
  o.map = CLR_MAP_EXPR;
  o.map_expr = "sin(x)";
  CHECK(clr_map_eval_init(&m, o.map_expr, CLR_FLOAT, 0, err, sizeof err) == 0,
        "sin(x): %s", err);
  CHECK(clr_ref_reduce_expr(&m, &o, CLR_ARGMAX, CLR_FLOAT, x, NULL, 4, &r, err,
                            sizeof err) == 0,
        "argmax of sin(x): %s", err);
  CHECK(r.err_max > 0 && (r.ref.value.index == 1 || r.ref.value.index == 3),
        "argmax of sin(x): index %llu, allowance %g",
        (unsigned long long)r.ref.value.index, r.err_max);
  for (uint64_t at = 0; at < 4; at++) {
    clr_value got = r.ref.value;
    got.index = at;
    got.v.f = (float)sin((double)x[at]);
    clr_ref_check_expr(&r, &got, 2, &chk);
    CHECK(chk.ok == (at == 1 || at == 3), "argmax of sin(x) at %llu: %s",
          (unsigned long long)at, chk.ok ? "accepted" : "refused");
  }
  clr_ref_reduce_expr(&m, &o, CLR_SUM, CLR_FLOAT, x, NULL, 4, &r, err,
                      sizeof err);
  clr_value got = r.ref.value;
  clr_ref_check_expr(&r, &got, 2, &chk);
  CHECK(chk.ok, "the sum of sin(x) itself: %g > %g", chk.error, chk.bound);
  got.v.f = nextafterf(nextafterf(got.v.f, 10.0f), 10.0f);
  clr_ref_check_expr(&r, &got, 2, &chk);
  CHECK(chk.ok, "the sum of sin(x) two ulps off: %g > %g", chk.error,
        chk.bound);
  got.v.f = r.ref.value.v.f * 1.001f;
  clr_ref_check_expr(&r, &got, 2, &chk);
  CHECK(!chk.ok, "the sum of sin(x) 0.1%% off accepted (bound %g)", chk.bound);
  clr_map_eval_free(&m);
  /* an exact expression keeps the exact check */
  int32_t xi[3] = {7, -7, 100};
  CHECK(clr_map_eval_init(&m, "x / 2 + (int)i", CLR_INT, 0, err, sizeof err) ==
            0,
        "x / 2 + (int)i: %s", err);
  o.map_expr = "x / 2 + (int)i";
  clr_ref_reduce_expr(&m, &o, CLR_SUM, CLR_INT, xi, NULL, 3, &r, err,
                      sizeof err);
  CHECK(r.ref.value.v.l == 3 - 3 + 50 + 0 + 1 + 2 && r.err_max == 0,
        "x / 2 + i: %lld", (long long)r.ref.value.v.l);
  got = r.ref.value;
  got.v.l += 1;
  clr_ref_check_expr(&r, &got, 2, &chk);
  CHECK(!chk.ok && chk.exact, "an integer sum one off accepted");
  clr_map_eval_free(&m);
}

int main(void) {
  test_refusals();
  test_acceptances();
  test_arity();
  test_limit();
  test_types();
  test_eval();
  test_allowance();
  test_reference();
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("expr: all passed\n");
  return 0;
}
