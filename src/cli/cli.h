/* Things every part of the clreduce command shares: exit statuses and the
 * one-line diagnostic on stderr. */
#ifndef CLR_CLI_H
#define CLR_CLI_H

#include "clreduce.h"

/* Exit statuses of the command. */
enum {
  CLI_EXIT_OK = 0,      /* ran, and verified (or --no-verify)             */
  CLI_EXIT_VERIFY = 1,  /* the device result failed verification          */
  CLI_EXIT_USAGE = 2,   /* bad command line or unusable --input file      */
  CLI_EXIT_RUNTIME = 3, /* OpenCL, device, memory or output-file failure  */
};

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* Print "clreduce: <message>" as exactly one line on stderr: newlines and
 * other control characters in the formatted text become spaces. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Report a library failure on one line ("clreduce: <status message>
 * (<what>): <detail>") and return CLI_EXIT_RUNTIME.  detail may be NULL or
 * empty. */
int cli_status_error(const char *what, clr_status s, const char *detail);

#endif
