/* One-line diagnostics on stderr. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Long enough for a path, a strerror text and a library detail line. */
#define CLI_MSG_MAX 2048

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
  fprintf(stderr, "clreduce: %s\n", line);
}

void cli_error(const char *fmt, ...) {
  char msg[CLI_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  print_line(msg);
}

int cli_status_error(const char *what, clr_status s, const char *detail) {
  const char *text = clr_status_string(s);
  if (!text)
    text = "unknown error";
  if (detail && detail[0])
    cli_error("%s (%s): %s", text, what, detail);
  else
    cli_error("%s (%s)", text, what);
  return CLI_EXIT_RUNTIME;
}
