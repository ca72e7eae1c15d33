/* libFuzzer harness: the clreduce command's option and number parsing
 * (src/cli/args.c).
 *
 * The input is split at NUL bytes into at most 32 arguments, which
 * cli_parse_args parses as clreduce's argv; the first argument is also
 * parsed alone by cli_parse_count and cli_parse_u64.  Besides the
 * sanitizers' checks, the harness asserts what the parsers promise: a
 * status of 0 or CLI_EXIT_USAGE, counts in [1, 2^63), and values that
 * agree with a plain re-parse of digit strings. */
#include "args.h"
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 32

/* Digits only, at most 19 of them: the value by strtoull, else -1. */
static int plain_value(const char *s, uint64_t *v) {
  size_t n = strlen(s);
  if (n == 0 || n > 19 || strspn(s, "0123456789") != n)
    return -1;
  *v = strtoull(s, NULL, 10);
  return 0;
}

static void check_numbers(const char *s) {
  uint64_t v = 0, plain = 0;
  const char *why = NULL;
  int plain_ok = plain_value(s, &plain) == 0;
  if (cli_parse_count(s, &v, &why) == 0) {
    if (v == 0 || v > (uint64_t)INT64_MAX)
      abort(); /* a count is in [1, 2^63) */
    if (plain_ok && v != plain)
      abort();
  } else {
    if (!why || !*why)
      abort(); /* every refusal has a reason */
    if (plain_ok && plain > 0 && plain <= (uint64_t)INT64_MAX)
      abort(); /* plain digits 1 .. 2^63-1 are a valid count */
  }
  why = NULL;
  if (cli_parse_u64(s, &v, &why) == 0) {
    if (plain_ok && v != plain)
      abort();
  } else if (!why || !*why || plain_ok) {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* One NUL-terminated copy; arguments point into it. */
  char *buf = malloc(size + 1);
  char *argv[MAX_ARGS + 2];
  int argc = 0;
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  argv[argc++] = "clreduce";
  for (size_t at = 0; at <= size && argc <= MAX_ARGS;) {
    argv[argc++] = buf + at;
    at += strlen(buf + at) + 1;
  }
  argv[argc] = NULL;
  check_numbers(argv[1]);
  cli_args a;
  int rc = cli_parse_args(argc, argv, &a);
  if (rc != 0 && rc != CLI_EXIT_USAGE)
    abort();
  if (rc == 0 && a.action == CLI_ACTION_RUN) {
    /* what a run relies on (--output and --exclusive belong to scans, and
     * --output to segmented runs too: one result a segment or range; an
     * op the type lacks only with a map expression, as and / or of floats
     * are of the expression's truth) */
    int segmented = a.segments || a.segment_length || a.ranges;
    if ((a.n_given && a.n == 0) || a.repeat == 0 || a.repeat > CLI_MAX_REPEAT ||
        clr_type_size(a.type) == 0 ||
        (clr_op_supports(a.op, a.type) != CLR_OK &&
         a.opt.map != CLR_MAP_EXPR) ||
        (!segmented && !clr_kernel_is_scan(a.opt.kernel) &&
         (a.output || a.opt.exclusive)))
      abort();
  }
  free(buf);
  return 0;
}
