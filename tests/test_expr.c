/* Expressions given as text (src/lib/core/expr.c): what the whitelist
 * accepts and refuses, with the token and column its message names, and
 * the types it gives.  No OpenCL. */
#include "expr.h"

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

static const char *const map_vars[] = {"x", "i", "y"};

/* Parse text as a map expression of at most limit characters: the status,
 * the message in err. */
static int parse(const char *text, size_t limit, char *err, size_t size) {
  clr_expr e;
  int rc = clr_expr_parse(&e, text, "the map expression", map_vars, 3, limit,
                          err, size);
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
  if (clr_expr_parse(&e, text, "the map expression", map_vars, 3, 4096, err,
                     size) != 0)
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

int main(void) {
  test_refusals();
  test_acceptances();
  test_arity();
  test_limit();
  test_types();
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("expr: all passed\n");
  return 0;
}
