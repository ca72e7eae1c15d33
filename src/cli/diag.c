/* One-line diagnostics on stderr; the median of the timed runs. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long enough for a path, a strerror text and a library detail line. */
#define CLI_MSG_MAX 2048

static const char *program_name = "clreduce";

void (*cli_before_message)(void) = NULL;

void cli_set_program_name(const char *name) {
  if (name && name[0])
    program_name = name;
}

const char *cli_program_name(void) { return program_name; }

static void print_line(const char *msg) {
  char line[CLI_MSG_MAX];
  size_t len = strlen(msg);
  if (len >= sizeof line)
    len = sizeof line - 1;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)msg[i];
    line[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
  }
  /* Trailing blanks (a detail that ended in a newline) are dropped. */
  while (len > 0 && line[len - 1] == ' ')
    len--;
  line[len] = '\0';
  if (cli_before_message)
    cli_before_message();
  fprintf(stderr, "%s: %s\n", program_name, line);
}

void cli_error(const char *fmt, ...) {
  char msg[CLI_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  print_line(msg);
}

void cli_usage_error(const char *fmt, ...) {
  char msg[CLI_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the hint kept whole: a long message gives way to it */
  char hint[128];
  int hl = snprintf(hint, sizeof hint, " (try '%s --help')", program_name);
  size_t at = len < 0 ? 0 : (size_t)len;
  if (hl > 0 && (size_t)hl < sizeof msg) {
    if (at > sizeof msg - 1 - (size_t)hl)
      at = sizeof msg - 1 - (size_t)hl;
    memcpy(msg + at, hint, (size_t)hl + 1);
  }
  print_line(msg);
}

int cli_exit_status(clr_status s) {
  switch (s) {
  case CLR_OK:
    return CLI_EXIT_OK;
  /* The library refuses a value the caller chose: an option the device or
   * the kernel cannot use (a work-group size above the kernel's limit, a
   * coarse factor the kernel cannot hold, an op the kernel cannot do, a
   * type the device cannot compute).  The command line is at fault. */
  case CLR_ERR_INVALID_ARGUMENT:
  case CLR_ERR_UNSUPPORTED:
  case CLR_ERR_NO_FP64:
    return CLI_EXIT_USAGE;
  default:
    return CLI_EXIT_RUNTIME;
  }
}

int cli_status_message(char *buf, size_t size, const char *what, clr_status s,
                       const char *detail) {
  const char *text = clr_status_string(s);
  if (!text)
    text = "unknown error";
  if (detail && detail[0])
    snprintf(buf, size, "%s (%s): %s", text, what, detail);
  else
    snprintf(buf, size, "%s (%s)", text, what);
  return s == CLR_OK ? CLI_EXIT_RUNTIME : cli_exit_status(s);
}

int cli_status_error(const char *what, clr_status s, const char *detail) {
  char msg[CLI_MSG_MAX];
  int rc = cli_status_message(msg, sizeof msg, what, s, detail);
  print_line(msg);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cli_median(double *v, size_t count) {
  if (count == 0)
    return 0;
  qsort(v, count, sizeof *v, cmp_double);
  return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}
