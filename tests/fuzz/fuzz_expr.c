/* libFuzzer harness: expressions given as text (src/lib/core/expr.c: the
 * tokeniser, the whitelist, the parser, the types) and their CPU evaluator
 * (src/check/expr_eval.c).
 *
 * The input's first byte picks the type of x (and y) and whether y is a
 * variable; the rest is the text (NULs end it early).  Whatever the bytes,
 * parsing must end with an answer (never loop or crash); a refusal is one
 * line that names the expression; an accepted text holds none of the
 * bytes and digraphs that could end the expression or reach the
 * preprocessor (; { } # quotes, backslashes, <% %> <: :> %:, control and
 * non-ASCII bytes) and every node's children come first; a typed text
 * evaluates at a few elements without crashing, to a value of its root's
 * type. */
#include "expr.h"
#include "expr_eval.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                 CLR_UINT,  CLR_LONG,   CLR_ULONG};

static void check_accepted(const char *text, const clr_expr *e) {
  static const char *const pairs[] = {"<%", "%>", "<:", ":>", "%:", "//", "/*"};
  for (const char *p = text; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (strchr(";{}#\"'\\`@$", c) || c < 32 || c > 126) {
      if (c != '\t') {
        fprintf(stderr, "accepted byte 0x%02x in '%s'\n", c, text);
        abort();
      }
    }
  }
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
    if (strstr(text, pairs[k])) {
      fprintf(stderr, "accepted '%s' in '%s'\n", pairs[k], text);
      abort();
    }
  if (e->count == 0 || e->root < 0 || (size_t)e->root >= e->count)
    abort();
  for (size_t j = 0; j < e->count; j++)
    for (int q = 0; q < 3; q++)
      if (e->nodes[j].kid[q] >= (int)j)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const vars[] = {"x", "i", "y"};
  if (size == 0)
    return 0;
  clr_type type = types[data[0] % 6];
  int dot = (data[0] / 6) % 2;
  char *text = malloc(size);
  char err[512];
  if (!text)
    return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  clr_expr e;
  int rc = clr_expr_parse(&e, text, "the map expression", vars, dot ? 3 : 2,
                          4096, err, sizeof err);
  if (rc == 1 && (strchr(err, '\n') || strncmp(err, "the map expression", 18)))
    abort();
  if (rc == 0) {
    check_accepted(text, &e);
    clr_expr_free(&e);
    clr_map_eval m;
    if (clr_map_eval_init(&m, text, type, dot, err, sizeof err) == 0) {
      /* elements: 0, 1, -1, a large and a small value, NaN / the
       * extremes */
      double fx[6] = {0, 1, -1.5, 3e38, 1e-40, NAN};
      int64_t ix[6] = {0, 1, -1, INT64_MAX, INT64_MIN, 12345};
      float ff[6];
      int32_t i32[6];
      for (int k = 0; k < 6; k++) {
        ff[k] = (float)fx[k];
        i32[k] = (int32_t)ix[k];
      }
      const void *x = type == CLR_FLOAT                     ? (const void *)ff
                      : type == CLR_DOUBLE                  ? (const void *)fx
                      : type == CLR_INT || type == CLR_UINT ? (const void *)i32
                                                            : (const void *)ix;
      for (size_t k = 0; k < 6; k++) {
        clr_eval_value v =
            clr_map_eval_at(&m, x, dot ? x : NULL, k, k ? (uint64_t)-k : 0);
        if (v.type != (clr_expr_type)m.expr.nodes[m.expr.root].type ||
            !(v.err >= 0))
          abort();
        clr_eval_value c = clr_eval_convert(v, CLR_ET_LONG);
        (void)c;
      }
      clr_map_eval_free(&m);
    } else if (strchr(err, '\n')) {
      abort();
    }
  }
  free(text);
  return 0;
}
