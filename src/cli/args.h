/* Command-line options of clreduce and the parsing of their values. */
#ifndef CLR_CLI_ARGS_H
#define CLR_CLI_ARGS_H

#include "clreduce.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_action {
  CLI_ACTION_RUN,
  CLI_ACTION_HELP,
  CLI_ACTION_VERSION,
  CLI_ACTION_LIST_DEVICES,
  CLI_ACTION_LIST_KERNELS,
  CLI_ACTION_CACHE_INFO,
  CLI_ACTION_CACHE_CLEAR,
} cli_action;

/* Default element count when there is no --input. */
#define CLI_DEFAULT_N 100000000u
#define CLI_DEFAULT_SEED 42u
/* The op and type without --op, --type (clreduce-bench's too). */
#define CLI_DEFAULT_OP CLR_SUM
#define CLI_DEFAULT_TYPE CLR_FLOAT
#define CLI_DEFAULT_REPEAT 10u
#define CLI_MAX_REPEAT 1000000u

typedef struct cli_args {
  cli_action action;
  clr_op op;
  clr_type type;
  int type_given;     /* --type given (else a .npy --input's dtype)   */
  uint64_t n;         /* element count (CLI_DEFAULT_N unless given)      */
  int n_given;        /* --n was on the command line                      */
  const char *input;  /* --input: values of type or a .npy; NULL: generate */
  const char *output; /* --output (scans, segments): results, or NULL     */
  const char *save_input; /* --save-input: the input array, or NULL      */
  uint64_t seed;
  const char *platform; /* --platform, passed to clr_context_config       */
  const char *device;   /* --device, passed to clr_context_config         */
  /* --kernel, --wg, --coarse, --vec, --layout, --narrow, --exact, --acc,
   * --exclusive, --map, --ddof: the library options the command line chose
   * (clr_options_init's defaults unless given) */
  clr_options opt;
  int ddof_given;          /* --ddof given (var and std only)              */
  int scan;                /* --scan: with segments, a segmented scan      */
  int dot;                 /* --dot or --input2: x . y of two arrays       */
  const char *input2;      /* --input2: the second array                   */
  const char *segments;    /* --segments: a file of 64-bit offsets, or NULL */
  uint64_t segment_length; /* --segment-length: rows of this length, or 0  */
  const char *ranges;      /* --ranges: a file of (offset, length) pairs    */
  unsigned repeat;         /* --repeat: timed runs                         */
  int verify;              /* 0 with --no-verify                           */
  int json;                /* --json                                       */
  int verbose;             /* -v, --verbose: the library's log on stderr   */
  int progress;            /* --progress: the progress line at once       */
  /* --shape=RxC: a row-major matrix of rows x cols elements (n = rows *
   * cols), rows 0 without it; --axis (-1 without it): 0 a result per
   * column (the fold over the rows, NumPy's a.sum(axis=0)), 1 a result per
   * row */
  uint64_t rows, cols;
  int axis;
} cli_args;

/* Parse argv.  Returns 0, or CLI_EXIT_USAGE after printing the one-line
 * reason on stderr. */
int cli_parse_args(int argc, char **argv, cli_args *out);

/* cli_parse_args for clreduce, whose --input may be a .npy file that gives
 * the type: with --input and without --type, the checks of op and type
 * wait for cli_check_type, to be called once the input's type is known. */
int cli_parse_args_input_type(int argc, char **argv, cli_args *out);

/* The checks that depend on the type (the op on it, --narrow).  0, or
 * CLI_EXIT_USAGE after printing the one-line reason. */
int cli_check_type(const cli_args *a);

/* 1 when s, the status of creating a context for a's --platform and
 * --device, says they select nothing where OpenCL has platforms: the
 * command line's mistake (a usage error), not OpenCL's. */
int cli_selects_nothing(const cli_args *a, clr_status s);

/* The --help text. */
void cli_print_usage(FILE *f);

/* Parse an element count: a decimal mantissa with an optional fraction and
 * an optional exponent ("100000000", "1e8", "2.5e6"), whose value must be
 * an exact integer in [1, 2^63).  Computed exactly, never through double.
 * Returns 0 on success; otherwise -1 with a short reason in *why. */
int cli_parse_count(const char *s, uint64_t *out, const char **why);

/* Parse a matrix shape "RxC", each of R and C as cli_parse_count takes
 * it ("1e5x1000"), R * C below 2^63 and within size_t.  Returns 0 on
 * success; otherwise -1 with the reason, one line, in why (why_size
 * bytes). */
int cli_parse_shape(const char *s, uint64_t *rows, uint64_t *cols, char *why,
                    size_t why_size);

/* Parse a plain decimal uint64 (digits only, 0 .. 2^64-1).  Returns 0 on
 * success; otherwise -1 with a short reason in *why. */
int cli_parse_u64(const char *s, uint64_t *out, const char **why);

/* ------------------------------------------------------------ operations
 *
 * What clreduce, clreduce-bench and clreduce-mpi know of an operation and
 * a type: their rows of clreduce_ops.def and clreduce_types.def (installed
 * beside clreduce.h), read here as the library reads them, and the
 * library's own rules (clr_op_supports, clr_kernel_supports).  Nothing in
 * the commands names an operation to decide what it takes: a row appended
 * to the table needs no change in src/cli or src/bench. */

/* The op's flags column (CLR_OPF_*); 0 for an op out of range. */
unsigned cli_op_flags(clr_op op);
/* 1 when the op's result is a sum of the (mapped) elements: its combine
 * is the sum's, and it is no mean. */
int cli_op_is_sum(clr_op op);
/* 1 when an indexed op gives two values and two indices (its combine is
 * the minimum-and-maximum's: clr_value.max and max_index are set). */
int cli_op_is_pair(clr_op op);

/* "sum, prod, min and max": the names, in table order, of the ops whose
 * flags hold every bit of `flags` (0: every op). */
void cli_op_list(char *buf, size_t size, unsigned flags);

/* Why op cannot run on type: one line ("op 'and' is not valid for type
 * float (...)") into buf, and 1; 0 (buf "") when clr_op_supports takes
 * it, or when map_expr is set and the op is logical (a map expression
 * gives the values it tests on any type). */
int cli_op_type_refusal(clr_op op, clr_type type, int map_expr, char *buf,
                        size_t size);

/* The help text's lists, from the tables, printed where a caller's label
 * ("  --op=OP   ") left the line at column `indent`: the default, then a
 * line each, indented two more: every op, its summary and the types and
 * reduction kernels it takes where not all; every type, its kind and
 * size. */
void cli_print_op_help(FILE *f, int indent, clr_op default_op);
/* The kernels, after a caller's "  --kernel=NAME      ": reduction and
 * scan kernels from the table, then "(default coarse<note>)". */
void cli_print_kernel_help(FILE *f, const char *note);
void cli_print_type_help(FILE *f, int indent, clr_type default_type);

#endif
