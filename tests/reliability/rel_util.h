/* Helpers shared by the reliability tests: pass/fail counting, seeded
 * data, and exact CPU references for the cases these tests use.
 *
 * Header-only (static functions), like tests/test_util.h, but separate
 * from it so the reliability suite does not depend on the other tests. */
#ifndef CLR_REL_UTIL_H
#define CLR_REL_UTIL_H

#include "clreduce.h"
#include "reference.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define RU_UNUSED __attribute__((unused))
#define RU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RU_UNUSED
#define RU_PRINTF(a, b)
#endif

static RU_UNUSED unsigned long ru_passed, ru_failed;

static RU_PRINTF(2, 3) RU_UNUSED int ru_check(int ok, const char *fmt, ...) {
  va_list ap;
  if (ok) {
    ru_passed++;
    return 1;
  }
  ru_failed++;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  return 0;
}

/* A check that a known library bug fails.  It counts as a failure unless
 * its id is listed in $CLR_KNOWN_BUGS (comma-separated), which lets a
 * known bug be tolerated deliberately, by name, until it is fixed; it is
 * printed either way.  docs/RELIABILITY.md lists the ids. */
static RU_PRINTF(3, 4) RU_UNUSED
    int ru_known(const char *id, int ok, const char *fmt, ...) {
  va_list ap;
  if (ok) {
    ru_passed++;
    return 1;
  }
  const char *list = getenv("CLR_KNOWN_BUGS");
  size_t len = strlen(id);
  int tolerated = 0;
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, id, len) == 0)
      tolerated = 1;
    p = end ? end + 1 : p + n;
  }
  if (tolerated)
    ru_passed++;
  else
    ru_failed++;
  va_start(ap, fmt);
  printf("%s (known bug %s): ", tolerated ? "TOLERATED" : "FAIL", id);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  return 0;
}

/* The closing line ("N passed, N failed") and the exit status. */
static RU_UNUSED int ru_finish(const char *program) {
  printf("%s: %lu passed, %lu failed\n", program, ru_passed, ru_failed);
  fflush(stdout);
  return ru_failed == 0 && ru_passed > 0 ? 0 : 1;
}

/* A setup failure (no platform, no memory): the test fails, never skips. */
static RU_PRINTF(1, 2) RU_UNUSED void ru_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FATAL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  exit(1);
}

static RU_UNUSED void *ru_xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p)
    ru_die("out of host memory (%zu bytes)", bytes);
  return p;
}

/* "--name=value" -> value, or NULL. */
static RU_UNUSED const char *ru_arg(int argc, char **argv, const char *name) {
  size_t len = strlen(name);
  for (int i = 1; i < argc; i++)
    if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
      return argv[i] + len + 1;
  return NULL;
}

/* splitmix64 */
static RU_UNUSED uint64_t ru_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Data whose every reduction and scan is exact in every type and whose
 * products stay finite and non-zero: small integers for sum, min and max;
 * mostly 1 with a few 2 and -1 (and, for floating types, 0.5) for prod;
 * a few zeros for and/or. */
static RU_UNUSED void ru_fill(clr_type t, clr_op op, void *data, size_t n,
                              uint64_t seed) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 12345u;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = ru_next(&s);
    double x;
    if (op == CLR_PROD) {
      unsigned k = (unsigned)(r % 64);
      x = k == 0 ? 2.0 : k == 1 ? -1.0 : 1.0;
      if (k == 2 && (t == CLR_FLOAT || t == CLR_DOUBLE))
        x = 0.5;
    } else if (op == CLR_AND || op == CLR_OR) {
      x = (op == CLR_AND ? r % 97 != 0 : r % 97 == 0) ? (double)(r % 5 + 1) : 0;
    } else {
      x = (double)(int64_t)(r % 2001) - 1000.0;
      if (t == CLR_UINT || t == CLR_ULONG)
        x = (double)(r % 2001);
    }
    switch (t) {
    case CLR_FLOAT:
      ((float *)data)[i] = (float)x;
      break;
    case CLR_DOUBLE:
      ((double *)data)[i] = x;
      break;
    case CLR_INT:
      ((int32_t *)data)[i] = (int32_t)x;
      break;
    case CLR_UINT:
      ((uint32_t *)data)[i] = (uint32_t)x;
      break;
    case CLR_LONG:
      ((int64_t *)data)[i] = (int64_t)x;
      break;
    default:
      ((uint64_t *)data)[i] = (uint64_t)x;
      break;
    }
  }
}

/* Element i of an array of type t as a value. */
static RU_UNUSED clr_value ru_get(clr_type t, const void *data, size_t i) {
  clr_value v;
  memset(&v, 0, sizeof v);
  v.type = t;
  memcpy(&v.v, (const char *)data + i * clr_type_size(t), clr_type_size(t));
  return v;
}

/* Exact reference scan (the ru_fill data keeps every prefix exact). */
static RU_UNUSED void ru_scan_ref(clr_op op, clr_type t, int exclusive,
                                  const void *carry_in, const void *in,
                                  void *out, size_t n) {
  size_t es = clr_type_size(t);
  clr_value run = clr_identity(op, t);
  if (carry_in)
    run = clr_combine(op, run, ru_get(t, carry_in, 0));
  for (size_t i = 0; i < n; i++) {
    clr_value x = ru_get(t, in, i);
    if (exclusive) {
      memcpy((char *)out + i * es, &run.v, es);
      run = clr_combine(op, run, x);
    } else {
      run = clr_combine(op, run, x);
      memcpy((char *)out + i * es, &run.v, es);
    }
  }
}

/* Index of the first element where two scans differ, or n. */
static RU_UNUSED size_t ru_first_diff(clr_type t, const void *a, const void *b,
                                      size_t n) {
  size_t es = clr_type_size(t);
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0)
      return i;
  return n;
}

static RU_UNUSED const char *ru_fmt(clr_value v, char *buf, size_t size) {
  clr_value_format(&v, buf, size);
  return buf;
}

#endif
