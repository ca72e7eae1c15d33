/* Things every part of the clreduce command shares: exit statuses, the
 * one-line diagnostic on stderr and the median of timed runs. */
#ifndef CLR_CLI_H
#define CLR_CLI_H

#include "clreduce.h"

/* Exit statuses of the command. */
enum {
  CLI_EXIT_OK = 0,      /* ran, and verified (or --no-verify)             */
  CLI_EXIT_VERIFY = 1,  /* the device result failed verification          */
  CLI_EXIT_USAGE = 2,   /* bad command line, an option value the device   */
                        /* or kernel cannot use, or unusable --input file */
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

/* cli_error of a bad command line: the line ends with the hint
 * " (try '<program> --help')", the program the one running
 * (cli_set_program_name), so that a message of the shared parser names
 * clreduce-mpi's or clreduce-bench's --help where they print it. */
void cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Called (when set) before cli_error prints: clreduce's progress line
 * clears itself there (progress.c). */
extern void (*cli_before_message)(void);

/* The prefix of cli_error's lines ("clreduce" unless set; clreduce-bench
 * shares these files).  name must outlive every later message. */
void cli_set_program_name(const char *name);
/* The prefix: "clreduce", or the name set. */
const char *cli_program_name(void);

/* The exit status for a library status: CLI_EXIT_USAGE when the library
 * refused a value the command line chose (CLR_ERR_INVALID_ARGUMENT,
 * CLR_ERR_UNSUPPORTED, CLR_ERR_NO_FP64), CLI_EXIT_RUNTIME for every other
 * failure, CLI_EXIT_OK for CLR_OK. */
int cli_exit_status(clr_status s);

/* The line of a library failure, "<status message> (<what>): <detail>"
 * (detail may be NULL or empty), into buf; returns cli_exit_status(s)
 * (CLI_EXIT_RUNTIME for CLR_OK, which is no failure to report). */
int cli_status_message(char *buf, size_t size, const char *what, clr_status s,
                       const char *detail);

/* Report a library failure on one line ("clreduce: <status message>
 * (<what>): <detail>") and return cli_exit_status(s) (CLI_EXIT_RUNTIME for
 * CLR_OK, which is no failure to report).  detail may be NULL or empty. */
int cli_status_error(const char *what, clr_status s, const char *detail);

/* The median of count timings (0 for none); sorts v. */
double cli_median(double *v, size_t count);

#endif
