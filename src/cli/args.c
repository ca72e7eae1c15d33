/* Option parsing (getopt_long), strict parsing of numeric values, and
 * what the commands read of the operations' and types' tables (--help,
 * the checks between options). */
#include "args.h"

#include "cli.h"
#include "npy.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *kernel_name_at(int i);
static const char *type_name_at(int i);

/* ------------------------------------------------------------ the tables */

/* clreduce_ops.def, the columns the commands read. */
static const struct op_row {
  const char *name, *summary;
  unsigned flags;
  clr_op runs, combine;
  int result; /* CLR_RES_* */
} op_rows[] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   summary)                                                    \
  {name, summary, flags, CLR_##runs, CLR_##combine, result},
#include "clreduce_ops.def"
#undef CLR_OP_ROW
};
_Static_assert(sizeof op_rows / sizeof op_rows[0] == CLR_OP_COUNT,
               "one row of clreduce_ops.def an operation");

/* clreduce_types.def, the columns the help text reads. */
static const struct type_row {
  size_t size;
  int kind; /* CLR_KIND_* */
  clr_type computes;
} type_rows[] = {
#define CLR_TYPE_ROW(id, name, size, kind, computes, wide)                     \
  {size, kind, CLR_##computes},
#include "clreduce_types.def"
#undef CLR_TYPE_ROW
};
_Static_assert(sizeof type_rows / sizeof type_rows[0] == CLR_TYPE_COUNT,
               "one row of clreduce_types.def a type");

static const struct op_row *op_row(clr_op op) {
  return (unsigned)op < CLR_OP_COUNT ? &op_rows[op] : NULL;
}

unsigned cli_op_flags(clr_op op) { return op_row(op) ? op_row(op)->flags : 0u; }

/* (CLR_SUM and CLR_MINMAX below name the combines of the table's combine
 * column, not operations the commands treat apart: a row that combines as
 * they do is read as they are.) */
int cli_op_is_sum(clr_op op) {
  return op_row(op) && op_row(op)->combine == CLR_SUM &&
         !(op_row(op)->flags & CLR_OPF_MEAN);
}

int cli_op_is_pair(clr_op op) {
  return op_row(op) && (op_row(op)->flags & CLR_OPF_INDEXED) &&
         op_row(op)->combine == CLR_MINMAX;
}

/* "a, b and c": the names of the count items that keep accepts. */
static void list_names(char *buf, size_t size, int count,
                       const char *(*name)(int), int (*keep)(int, const void *),
                       const void *arg, const char *last_sep) {
  size_t at = 0;
  int total = 0, seen = 0;
  for (int i = 0; i < count; i++)
    total += keep(i, arg);
  if (size)
    buf[0] = '\0';
  for (int i = 0; i < count && at < size; i++) {
    if (!keep(i, arg))
      continue;
    seen++;
    int w = snprintf(buf + at, size - at, "%s%s",
                     seen == 1       ? ""
                     : seen == total ? last_sep
                                     : ", ",
                     name(i));
    if (w < 0)
      break;
    at += (size_t)w;
  }
}

static const char *op_name_at(int i) { return op_rows[i].name; }
static int op_has_flags(int i, const void *flags) {
  return (op_rows[i].flags & *(const unsigned *)flags) ==
         *(const unsigned *)flags;
}
static int op_has_result(int i, const void *result) {
  return op_rows[i].result == *(const int *)result;
}

void cli_op_list(char *buf, size_t size, unsigned flags) {
  list_names(buf, size, CLR_OP_COUNT, op_name_at, op_has_flags, &flags,
             " and ");
}

/* The types op applies to (clr_op_supports). */
static int type_takes_op(int t, const void *op) {
  return clr_op_supports(*(const clr_op *)op, (clr_type)t) == CLR_OK;
}

int cli_op_type_refusal(clr_op op, clr_type type, int map_expr, char *buf,
                        size_t size) {
  const struct op_row *o = op_row(op);
  char types[256];
  if (size)
    buf[0] = '\0';
  if (!o || clr_op_supports(op, type) == CLR_OK ||
      (map_expr && (o->flags & CLR_OPF_LOGICAL)))
    return 0;
  list_names(types, sizeof types, CLR_TYPE_COUNT, type_name_at, type_takes_op,
             &op, " or ");
  if (o->flags & CLR_OPF_MEAN)
    snprintf(buf, size,
             "op '%s' is not valid for type %s: a sum of %zu-bit %s wraps "
             "(--op=%s gives it, wrapped; '%s' takes %s)",
             o->name, clr_type_name(type), 8 * clr_type_size(type),
             type_rows[type].kind == CLR_KIND_FLOAT ? "values" : "integers",
             op_rows[o->runs].name, o->name, types);
  else
    snprintf(buf, size,
             "op '%s' is not valid for type %s (it needs %s%s: %s%s)", o->name,
             clr_type_name(type),
             (o->flags & CLR_OPF_INTEGER) ? "an integer type" : "a type",
             (o->flags & CLR_OPF_INTEGER) ? "" : " it applies to", types,
             (o->flags & CLR_OPF_LOGICAL)
                 ? "; or a --map expression giving the values it tests"
                 : "");
  return 1;
}

/* ------------------------------------------------------------ help */

#define HELP_WIDTH 79

/* words of text printed from column *col on, wrapped at HELP_WIDTH onto
 * lines that start at column indent; *col: where the last line ends. */
static void put_wrapped(FILE *f, int *col, int indent, const char *text) {
  int first = 1;
  for (const char *p = text; *p;) {
    while (*p == ' ')
      p++;
    const char *w = p;
    while (*p && *p != ' ')
      p++;
    int len = (int)(p - w);
    if (len == 0)
      break;
    if (!first && *col + 1 + len > HELP_WIDTH) {
      fprintf(f, "\n%*s", indent, "");
      *col = indent;
    } else if (!first) {
      fputc(' ', f);
      (*col)++;
    }
    fprintf(f, "%.*s", len, w);
    *col += len;
    first = 0;
  }
}

/* ", "-separated names of the count items that keep (NULL: all) accepts,
 * from the library's own tables. */
static void print_names(FILE *f, int count, const char *(*name)(int),
                        int (*keep)(int)) {
  for (int i = 0, first = 1; i < count; i++)
    if (!keep || keep(i)) {
      fprintf(f, "%s%s", first ? "" : ", ", name(i));
      first = 0;
    }
}
static int is_scan_at(int i) { return clr_kernel_is_scan((clr_kernel)i); }
static int is_reduction_at(int i) { return !is_scan_at(i); }

/* The reduction kernels that compute op on type (clr_kernel_supports). */
struct op_on_type {
  clr_op op;
  clr_type type;
};
static int reduction_takes(int k, const void *arg) {
  const struct op_on_type *x = arg;
  return is_reduction_at(k) &&
         clr_kernel_supports((clr_kernel)k, x->op, x->type) == CLR_OK;
}
static int is_reduction(int k, const void *arg) {
  (void)arg;
  return is_reduction_at(k);
}

/* What restricts op, for its help line: the types it takes and the
 * reduction kernels that run it, when not all ("" when none). */
static void op_notes(clr_op op, char *buf, size_t size) {
  const struct op_row *o = &op_rows[op];
  char types[320] = "", kernels[256] = "", all[256];
  int n_types = 0;
  struct op_on_type x = {op, CLR_TYPE_COUNT};
  for (int t = 0; t < CLR_TYPE_COUNT; t++)
    if (type_takes_op(t, &op) && n_types++ == 0)
      x.type = (clr_type)t;
  if (o->flags & CLR_OPF_INTEGER)
    snprintf(types, sizeof types, "integer types%s",
             (o->flags & CLR_OPF_LOGICAL)
                 ? ", or any type through a --map expression"
                 : "");
  else if (n_types < CLR_TYPE_COUNT) {
    list_names(all, sizeof all, CLR_TYPE_COUNT, type_name_at, type_takes_op,
               &op, ", ");
    snprintf(types, sizeof types, "%s%s",
             (o->flags & CLR_OPF_MEAN) ? "types whose sum cannot wrap: "
                                       : "types ",
             all);
  }
  if (x.type != CLR_TYPE_COUNT) {
    list_names(kernels, sizeof kernels, CLR_KERNEL_COUNT, kernel_name_at,
               reduction_takes, &x, " and ");
    list_names(all, sizeof all, CLR_KERNEL_COUNT, kernel_name_at, is_reduction,
               NULL, " and ");
    if (strcmp(kernels, all) == 0)
      kernels[0] = '\0';
  }
  snprintf(buf, size, "%s%s%s%s%s", types, types[0] && kernels[0] ? "; " : "",
           kernels[0] ? "the " : "", kernels,
           !kernels[0]                                        ? ""
           : strchr(kernels, ',') || strstr(kernels, " and ") ? " kernels"
                                                              : " kernel");
}

void cli_print_op_help(FILE *f, int indent, clr_op default_op) {
  char line[512], head[640];
  int width = 0;
  for (int i = 0; i < CLR_OP_COUNT; i++)
    if ((int)strlen(op_rows[i].name) > width)
      width = (int)strlen(op_rows[i].name);
  cli_op_list(line, sizeof line, CLR_OPF_SCAN);
  snprintf(head, sizeof head,
           "default %s; scans take %s:", clr_op_name(default_op), line);
  int col = indent;
  put_wrapped(f, &col, indent, head);
  for (int i = 0; i < CLR_OP_COUNT; i++) {
    int at = indent + 2 + width + 2;
    fprintf(f, "\n%*s%-*s  ", indent + 2, "", width, op_rows[i].name);
    col = at;
    put_wrapped(f, &col, at, op_rows[i].summary);
    op_notes((clr_op)i, line, sizeof line);
    if (line[0]) {
      fprintf(f, "\n%*s[", at, "");
      col = at + 1;
      put_wrapped(f, &col, at + 1, line);
      fputc(']', f);
    }
  }
  fputc('\n', f);
}

void cli_print_type_help(FILE *f, int indent, clr_type default_type) {
  static const char *const kinds[] = {[CLR_KIND_FLOAT] = "floating point",
                                      [CLR_KIND_SIGNED] = "signed integer",
                                      [CLR_KIND_UNSIGNED] = "unsigned integer"};
  int width = 0;
  for (int i = 0; i < CLR_TYPE_COUNT; i++)
    if ((int)strlen(type_name_at(i)) > width)
      width = (int)strlen(type_name_at(i));
  fprintf(f, "default %s:\n", clr_type_name(default_type));
  for (int i = 0; i < CLR_TYPE_COUNT; i++) {
    const struct type_row *t = &type_rows[i];
    fprintf(f, "%*s%-*s  %s, %zu bytes", indent + 2, "", width, type_name_at(i),
            kinds[t->kind], t->size);
    if (t->computes != (clr_type)i)
      fprintf(f, ", computed in %s", type_name_at((int)t->computes));
    fputc('\n', f);
  }
}

void cli_print_kernel_help(FILE *f, const char *note) {
  fputs("reduction: ", f);
  print_names(f, CLR_KERNEL_COUNT, kernel_name_at, is_reduction_at);
  fputs("\n                     scan: ", f);
  print_names(f, CLR_KERNEL_COUNT, kernel_name_at, is_scan_at);
  fprintf(f, "\n                     (default %s%s)\n",
          clr_kernel_name(CLR_REDUCE_COARSE), note);
}

void cli_print_usage(FILE *f) {
  fputs("Usage: clreduce [OPTION]...\n"
        "Generate (or read) data, reduce or scan it on an OpenCL device, time "
        "it and\n"
        "verify the result against a CPU reference.\n"
        "\n"
        "What to run:\n"
        "  --kernel=NAME      ",
        f);
  cli_print_kernel_help(f, "; see --list-kernels");
  fputs("  --op=OP            ", f);
  cli_print_op_help(f, 21, CLI_DEFAULT_OP);
  fputs("  --type=TYPE        ", f);
  cli_print_type_help(f, 21, CLI_DEFAULT_TYPE);
  fputs("  --exclusive        scans: exclusive instead of inclusive\n"
        "  --scan             with --segments / --segment-length: a prefix "
        "scan\n"
        "                     restarting at every segment (segmented scan)\n"
        "  --map=M            reductions: abs, square, or an OpenCL C "
        "expression of x\n"
        "                     (the element) and i (its index), applied "
        "before the\n"
        "                     reduction in the same pass: --map='x > 0.5f' "
        "--acc=long\n"
        "                     counts\n"
        "  --dot              the dot product of two generated arrays "
        "(--op=sum;\n"
        "                     with --map an expression of x, y and i)\n"
        "\n"
        "Data:\n"
        "  --n=N              element count: 100000000, 1e8, 2.5e6 (an exact "
        "integer,\n"
        "                     1 <= N < 2^63; default 1e8)\n"
        "  --input=FILE       read raw native-endian values of TYPE from FILE "
        "(N from\n"
        "                     its size; --n, if also given, must agree; a "
        "pipe or\n"
        "                     device gives its first N values), or a NumPy "
        ".npy file\n"
        "                     (known by its content, not its name): TYPE "
        "from its dtype\n"
        "                     (float16/32/64, int32/64, uint32/64; "
        "little-endian;\n"
        "                     --type, if given, must agree); a 2-D (R, C) "
        "array is read\n"
        "                     as R*C values in C order, reduced as one array "
        "unless\n"
        "                     segments are given\n"
        "  --input2=FILE      --dot's second array, as --input (the same "
        "count and type)\n"
        "  --seed=S           seed of the generated data, 0 .. 2^64-1 (default "
        "42)\n"
        "  --segments=FILE    one reduction per segment: FILE holds the "
        "n_segments + 1\n"
        "                     offsets (raw native-endian 64-bit, from 0 "
        "to N, never\n"
        "                     decreasing); segment s is elements "
        "[off[s], off[s+1])\n"
        "  --ranges=FILE      one reduction per range: FILE holds (offset, "
        "length)\n"
        "                     pairs (raw native-endian 64-bit), in any order, "
        "overlapping\n"
        "                     or not, each within [0, N)\n"
        "  --segment-length=L one reduction per L elements (rows; the last "
        "may be\n"
        "                     shorter)\n"
        "  --shape=RxC        the data as a row-major matrix of R rows of C "
        "columns\n"
        "                     (N = R*C; R and C as --n takes them: 1e5x1000); "
        "an --input\n"
        "                     must hold R*C values; needs --axis\n"
        "  --axis=A           with --shape, NumPy's axis numbering: 0 folds "
        "each column\n"
        "                     over the rows, C results (a.sum(axis=0)); 1 "
        "folds each\n"
        "                     row, R results (a.sum(axis=1)); argmin / "
        "argmax indices\n"
        "                     within the axis folded\n"
        "  --output=FILE      scans: write the scanned values (raw, "
        "native-endian);\n"
        "                     ",
        f);
  char ops[512], text[1024];
  int col = 21;
  cli_op_list(ops, sizeof ops, CLR_OPF_INDEXED);
  char mops[128];
  cli_op_list(mops, sizeof mops, CLR_OPF_MOMENTS);
  snprintf(text, sizeof text,
           "segments, matrices: the results, one per segment, column or row "
           "(%s: records of min, max, 64-bit index of each within its "
           "segment, column or row; -1 when there is none; %s: records of "
           "the value, the mean, both of the result type, and the 64-bit "
           "count);",
           ops, mops);
  put_wrapped(f, &col, 21, text);
  fputs(
      "\n"
      "                     a name ending in .npy gets a 1-D .npy file "
      "(records:\n"
      "                     raw only); a file is replaced whole (through a "
      "link: its\n"
      "                     target), a device or FIFO is written in place\n"
      "  --save-input=FILE  also write the input array (generated or read; "
      "--dot:\n"
      "                     the first, the second is --seed=S+1's) to FILE "
      "before the\n"
      "                     run, raw or .npy by its name, as --output "
      "writes\n"
      "\n"
      "Device:\n"
      "  --platform=P       platform index or name substring\n"
      "  --device=D         device index or name substring (default: first "
      "GPU,\n"
      "                     else first device); 'all' (every device of the\n"
      "                     platform) or a list '0,1': the input split over\n"
      "                     them by their read bandwidth, the parts' results\n"
      "                     combined in device order (docs/SCALING.md)\n"
      "  --list-devices     list the OpenCL devices and exit (JSON with "
      "--json)\n"
      "  --list-kernels     list the kernels and exit (JSON with --json)\n"
      "\n"
      "Program cache (kernels built for a device, kept on disk; no device "
      "needed):\n"
      "  --cache-info       print the cache's directory, its entries, their "
      "size and\n"
      "                     the cap, and exit (JSON with --json)\n"
      "  --cache-clear      remove the cached programs (never the "
      "per-device tuning\n"
      "                     files kept beside them), print how many and "
      "their size,\n"
      "                     and exit\n"
      "\n"
      "Tuning (default: chosen for the device):\n"
      "  --wg=N             work-group size\n"
      "  --coarse=N         coarse kernel: elements per work-item "
      "(segments:\n"
      "                     elements and segment ends per work-item)\n"
      "  --vec=W            coarse kernel: vector width 1, 2, 4, 8 or 16\n"
      "  --layout=L         coarse kernel: strided, contiguous or auto "
      "(segments:\n"
      "                     strided = tiles in local memory, contiguous = "
      "runs)\n"
      "  --narrow           ",
      f);
  int wide = CLR_RES_WIDE;
  list_names(ops, sizeof ops, CLR_OP_COUNT, op_name_at, op_has_result, &wide,
             " and ");
  snprintf(text, sizeof text,
           "32-bit int/uint %s (which widen to 64 bits) accumulate in 32 bits",
           ops);
  col = 21;
  put_wrapped(f, &col, 21, text);
  fputs("\n"
        "  --acc=TYPE         accumulate and return in TYPE (float data in "
        "double;\n"
        "                     int in long ...); scans write TYPE\n"
        "  --exact            float/double sums exact (correctly rounded, the "
        "same\n"
        "                     bits on every device); verified by equality\n"
        "  --ddof=N           var, std: delta degrees of freedom, the divisor "
        "n - N\n"
        "                     (default 0, NumPy's default; 1 gives the "
        "sample\n"
        "                     variance, PyTorch's default); n <= N gives NaN\n"
        "\n"
        "Measurement and output:\n"
        "  --repeat=R         timed runs after one warm-up (default 10); the "
        "median\n"
        "                     kernel time is reported, with min and max\n"
        "  --no-verify        skip the CPU reference (JSON \"verified\": "
        "null)\n"
        "  --json             print one JSON object on stdout\n"
        "  -v, --verbose      the library's log on stderr (kernel build "
        "warnings)\n"
        "  --progress         a progress line on stderr (the phase and the "
        "seconds so\n"
        "                     far) from the start; without it only a "
        "terminal shows\n"
        "                     one, after 2 s\n"
        "  --help             print this help and exit\n"
        "  --version          print the version and exit\n"
        "\n"
        "Options take their value as --opt=value or --opt value.\n"
        "Example: clreduce --kernel=coarse --op=max --type=int --n=1e8\n"
        "Exit status: 0 success, 1 verification failed, 2 usage error (or "
        "unusable\n"
        "--input file, or an option value the device cannot use), 3 OpenCL "
        "or runtime\n"
        "error (or an output file that cannot be written).\n",
        f);
}

/* ------------------------------------------------------------ numbers */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

int cli_parse_u64(const char *s, uint64_t *out, const char **why) {
  if (!s || !*s) {
    *why = "empty value";
    return -1;
  }
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (!is_digit(*p)) {
      *why = *p == '-' && p == s ? "negative" : "not a decimal integer";
      return -1;
    }
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) {
      *why = "too large (the maximum is 2^64-1)";
      return -1;
    }
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int cli_parse_count(const char *s, uint64_t *out, const char **why) {
  const uint64_t limit = (uint64_t)INT64_MAX; /* 2^63 - 1 */
  if (!s || !*s) {
    *why = "empty value";
    return -1;
  }
  const char *p = s;
  int negative = 0;
  if (*p == '+' || *p == '-') {
    negative = *p == '-';
    p++;
  }
  /* Mantissa: digits, then optionally '.' and more digits. */
  const char *int_digits = p;
  while (is_digit(*p))
    p++;
  size_t n_int = (size_t)(p - int_digits);
  const char *frac_digits = p;
  size_t n_frac = 0;
  if (*p == '.') {
    frac_digits = ++p;
    while (is_digit(*p))
      p++;
    n_frac = (size_t)(p - frac_digits);
    if (n_frac == 0) {
      *why = "not a number";
      return -1;
    }
  }
  if (n_int == 0) {
    *why = "not a number";
    return -1;
  }
  /* Exponent, saturated far beyond anything that fits. */
  long long exp10 = 0;
  if (*p == 'e' || *p == 'E') {
    p++;
    int exp_negative = 0;
    if (*p == '+' || *p == '-') {
      exp_negative = *p == '-';
      p++;
    }
    if (!is_digit(*p)) {
      *why = "not a number";
      return -1;
    }
    while (is_digit(*p)) {
      if (exp10 < 1000000)
        exp10 = exp10 * 10 + (*p - '0');
      p++;
    }
    if (exp_negative)
      exp10 = -exp10;
  }
  if (*p != '\0') {
    *why = "not a number";
    return -1;
  }

  /* The value is D * 10^e, D the mantissa's digits, e = exp10 - n_frac. */
  size_t n_digits = n_int + n_frac;
#define DIGIT(i)                                                               \
  ((unsigned)((i) < n_int ? int_digits[(i)] : frac_digits[(i)-n_int]) - '0')
  size_t last_nonzero = n_digits;
  for (size_t i = n_digits; i-- > 0;) {
    if (DIGIT(i) != 0) {
      last_nonzero = i;
      break;
    }
  }
  if (last_nonzero == n_digits) {
    *why = "zero (it must be positive)";
    return -1;
  }
  if (negative) {
    *why = "negative";
    return -1;
  }
  long long e = exp10 - (long long)n_frac;
  size_t used = n_digits;
  if (e < 0) {
    /* Dropping -e trailing digits must drop only zeros. */
    size_t trailing_zeros = n_digits - 1 - last_nonzero;
    if ((unsigned long long)-e > trailing_zeros) {
      *why = "not an integer";
      return -1;
    }
    used = n_digits - (size_t)-e;
    e = 0;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < used; i++) {
    unsigned d = DIGIT(i);
    if (v > (limit - d) / 10) {
      *why = "too large (it must be below 2^63)";
      return -1;
    }
    v = v * 10 + d;
  }
#undef DIGIT
  for (long long k = 0; k < e; k++) {
    if (v > limit / 10) {
      *why = "too large (it must be below 2^63)";
      return -1;
    }
    v *= 10;
  }
  *out = v;
  return 0;
}

int cli_parse_shape(const char *s, uint64_t *rows, uint64_t *cols, char *why,
                    size_t why_size) {
  const char *x = s ? strchr(s, 'x') : NULL;
  if (!x) {
    snprintf(why, why_size, "not RxC (rows x columns, e.g. 1000x300)");
    return -1;
  }
  size_t len = strlen(s);
  char *copy = malloc(len + 1);
  if (!copy) {
    snprintf(why, why_size, "out of memory");
    return -1;
  }
  memcpy(copy, s, len + 1);
  copy[x - s] = '\0';
  const char *part[2] = {copy, copy + (x - s) + 1};
  const char *what[2] = {"rows", "columns"};
  uint64_t v[2] = {0, 0};
  int rc = 0;
  for (int k = 0; k < 2 && rc == 0; k++) {
    const char *reason = NULL;
    if (!part[k][0]) {
      snprintf(why, why_size, "the %s (%s the x) are missing", what[k],
               k ? "after" : "before");
      rc = -1;
    } else if (cli_parse_count(part[k], &v[k], &reason) != 0) {
      snprintf(why, why_size, "%s '%s': %s", what[k], part[k], reason);
      rc = -1;
    }
  }
  free(copy);
  if (rc != 0)
    return rc;
  /* n's limit (below 2^63, as --n), and this machine's size_t */
  if (v[0] > (uint64_t)INT64_MAX / v[1] || (v[0] * v[1] > (uint64_t)SIZE_MAX)) {
    snprintf(why, why_size,
             "%llu x %llu elements are too many (R*C must be below 2^63 and "
             "fit this machine's size_t)",
             (unsigned long long)v[0], (unsigned long long)v[1]);
    return -1;
  }
  *rows = v[0];
  *cols = v[1];
  return 0;
}

/* ------------------------------------------------------------ options */

enum {
  OPT_KERNEL = 256,
  OPT_OP,
  OPT_TYPE,
  OPT_N,
  OPT_INPUT,
  OPT_OUTPUT,
  OPT_SAVE_INPUT,
  OPT_SEED,
  OPT_PLATFORM,
  OPT_DEVICE,
  OPT_LIST_DEVICES,
  OPT_LIST_KERNELS,
  OPT_CACHE_INFO,
  OPT_CACHE_CLEAR,
  OPT_WG,
  OPT_COARSE,
  OPT_VEC,
  OPT_LAYOUT,
  OPT_NARROW,
  OPT_EXACT,
  OPT_ACC,
  OPT_DDOF,
  OPT_EXCLUSIVE,
  OPT_SCAN,
  OPT_MAP,
  OPT_DOT,
  OPT_INPUT2,
  OPT_SEGMENTS,
  OPT_SEGMENT_LENGTH,
  OPT_RANGES,
  OPT_SHAPE,
  OPT_AXIS,
  OPT_REPEAT,
  OPT_NO_VERIFY,
  OPT_JSON,
  OPT_VERBOSE,
  OPT_PROGRESS,
  OPT_HELP,
  OPT_VERSION,
};

static const struct option long_options[] = {
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"op", required_argument, NULL, OPT_OP},
    {"type", required_argument, NULL, OPT_TYPE},
    {"n", required_argument, NULL, OPT_N},
    {"input", required_argument, NULL, OPT_INPUT},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"save-input", required_argument, NULL, OPT_SAVE_INPUT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"platform", required_argument, NULL, OPT_PLATFORM},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
    {"list-kernels", no_argument, NULL, OPT_LIST_KERNELS},
    {"cache-info", no_argument, NULL, OPT_CACHE_INFO},
    {"cache-clear", no_argument, NULL, OPT_CACHE_CLEAR},
    {"wg", required_argument, NULL, OPT_WG},
    {"coarse", required_argument, NULL, OPT_COARSE},
    {"vec", required_argument, NULL, OPT_VEC},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"narrow", no_argument, NULL, OPT_NARROW},
    {"exact", no_argument, NULL, OPT_EXACT},
    {"acc", required_argument, NULL, OPT_ACC},
    {"ddof", required_argument, NULL, OPT_DDOF},
    {"exclusive", no_argument, NULL, OPT_EXCLUSIVE},
    {"scan", no_argument, NULL, OPT_SCAN},
    {"map", required_argument, NULL, OPT_MAP},
    {"dot", no_argument, NULL, OPT_DOT},
    {"input2", required_argument, NULL, OPT_INPUT2},
    {"segments", required_argument, NULL, OPT_SEGMENTS},
    {"segment-length", required_argument, NULL, OPT_SEGMENT_LENGTH},
    {"ranges", required_argument, NULL, OPT_RANGES},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"axis", required_argument, NULL, OPT_AXIS},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"no-verify", no_argument, NULL, OPT_NO_VERIFY},
    {"json", no_argument, NULL, OPT_JSON},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static const char *option_name(int code) {
  for (const struct option *o = long_options; o->name; o++)
    if (o->val == code)
      return o->name;
  return "?";
}

/* "a, b, c" of the names of count items. */
static void join_names(char *buf, size_t size, int count,
                       const char *(*name)(int)) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && len < size; i++) {
    int w = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", name(i));
    if (w < 0)
      break;
    len += (size_t)w;
  }
}

static const char *kernel_name_at(int i) {
  return clr_kernel_name((clr_kernel)i);
}
static const char *type_name_at(int i) { return clr_type_name((clr_type)i); }

static int parse_positive(int code, const char *s, uint64_t max,
                          uint64_t *out) {
  const char *why = NULL;
  if (cli_parse_count(s, out, &why) != 0) {
    cli_usage_error("bad --%s '%s': %s", option_name(code), s, why);
    return -1;
  }
  if (*out > max) {
    cli_usage_error("bad --%s '%s': too large (the maximum is %llu)",
                    option_name(code), s, (unsigned long long)max);
    return -1;
  }
  return 0;
}

static int parse_string(int code, const char *s, const char **out) {
  if (!s || !*s) {
    cli_usage_error("--%s needs a non-empty value", option_name(code));
    return -1;
  }
  *out = s;
  return 0;
}

/* The index of val among count names, or -1 after a line that lists
 * the valid ones. */
static int name_index(const char *what, const char *val, int count,
                      const char *(*name_at)(int)) {
  char names[512];
  for (int i = 0; i < count; i++)
    if (strcmp(val, name_at(i)) == 0)
      return i;
  join_names(names, sizeof names, count, name_at);
  cli_error("unknown %s '%s' (valid: %s)", what, val, names);
  return -1;
}

static int parse_option(int code, const char *val, cli_args *a) {
  int i;
  uint64_t u = 0;
  const char *why = NULL;
  switch (code) {
  case OPT_KERNEL:
    if ((i = name_index("kernel", val, CLR_KERNEL_COUNT, kernel_name_at)) < 0)
      return -1;
    a->opt.kernel = (clr_kernel)i;
    return 0;
  case OPT_OP:
    if ((i = name_index("op", val, CLR_OP_COUNT, op_name_at)) < 0)
      return -1;
    a->op = (clr_op)i;
    return 0;
  case OPT_TYPE:
    if ((i = name_index("type", val, CLR_TYPE_COUNT, type_name_at)) < 0)
      return -1;
    a->type = (clr_type)i;
    a->type_given = 1;
    return 0;
  case OPT_N:
    if (cli_parse_count(val, &a->n, &why) != 0) {
      cli_usage_error("bad --n '%s': %s", val, why);
      return -1;
    }
    a->n_given = 1;
    return 0;
  case OPT_INPUT:
    return parse_string(code, val, &a->input);
  case OPT_OUTPUT:
    return parse_string(code, val, &a->output);
  case OPT_SAVE_INPUT:
    return parse_string(code, val, &a->save_input);
  case OPT_SEED:
    if (cli_parse_u64(val, &a->seed, &why) != 0) {
      cli_usage_error("bad --seed '%s': %s", val, why);
      return -1;
    }
    return 0;
  case OPT_PLATFORM:
    return parse_string(code, val, &a->platform);
  case OPT_DEVICE:
    return parse_string(code, val, &a->device);
  case OPT_LIST_DEVICES:
    if (a->action == CLI_ACTION_RUN)
      a->action = CLI_ACTION_LIST_DEVICES;
    return 0;
  case OPT_LIST_KERNELS:
    if (a->action == CLI_ACTION_RUN)
      a->action = CLI_ACTION_LIST_KERNELS;
    return 0;
  case OPT_CACHE_INFO:
    if (a->action == CLI_ACTION_RUN)
      a->action = CLI_ACTION_CACHE_INFO;
    return 0;
  case OPT_CACHE_CLEAR:
    if (a->action == CLI_ACTION_RUN)
      a->action = CLI_ACTION_CACHE_CLEAR;
    return 0;
  case OPT_WG:
    if (parse_positive(code, val, SIZE_MAX, &u) != 0)
      return -1;
    a->opt.wg_size = (size_t)u;
    return 0;
  case OPT_COARSE:
    if (parse_positive(code, val, SIZE_MAX, &u) != 0)
      return -1;
    a->opt.coarse = (size_t)u;
    return 0;
  case OPT_VEC:
    if (cli_parse_count(val, &u, &why) != 0 ||
        (u != 1 && u != 2 && u != 4 && u != 8 && u != 16)) {
      cli_usage_error("bad --vec '%s': must be 1, 2, 4, 8 or 16", val);
      return -1;
    }
    a->opt.vector_width = (unsigned)u;
    return 0;
  case OPT_LAYOUT:
    if (strcmp(val, "strided") == 0)
      a->opt.layout = CLR_LAYOUT_STRIDED;
    else if (strcmp(val, "contiguous") == 0)
      a->opt.layout = CLR_LAYOUT_CONTIGUOUS;
    else if (strcmp(val, "auto") == 0)
      a->opt.layout = CLR_LAYOUT_AUTO;
    else {
      cli_error("unknown layout '%s' (valid: strided, contiguous, auto)", val);
      return -1;
    }
    return 0;
  case OPT_NARROW:
    a->opt.narrow_accumulator = 1;
    return 0;
  case OPT_EXACT:
    a->opt.exact = 1;
    return 0;
  case OPT_ACC:
    if ((i = name_index("accumulator type", val, CLR_TYPE_COUNT,
                        type_name_at)) < 0)
      return -1;
    a->opt.accumulate_in = (clr_type)i;
    return 0;
  case OPT_DDOF:
    /* 0 .. 2^64-1: a divisor n - ddof of n <= ddof gives NaN, as NumPy,
     * so no value is out of range; a negative one is refused, as NumPy's
     * negative ddof (a divisor above n) is no variance */
    if (cli_parse_u64(val, &a->opt.ddof, &why) != 0) {
      cli_usage_error("bad --ddof '%s': %s (0, NumPy's default, or 1, the "
                      "sample variance, PyTorch's)",
                      val, why);
      return -1;
    }
    a->ddof_given = 1;
    return 0;
  case OPT_EXCLUSIVE:
    a->opt.exclusive = 1;
    return 0;
  case OPT_SCAN:
    a->scan = 1;
    return 0;
  case OPT_MAP:
    if (parse_string(code, val, &a->opt.map_expr) != 0)
      return -1;
    /* abs and square are the built-in maps; anything else an expression
     * (the library checks it and the device's compiler builds it). */
    if (strcmp(val, "abs") == 0 || strcmp(val, "square") == 0) {
      clr_map_from_name(val, &a->opt.map);
      a->opt.map_expr = NULL;
    } else {
      a->opt.map = CLR_MAP_EXPR;
    }
    return 0;
  case OPT_DOT:
    a->dot = 1;
    return 0;
  case OPT_INPUT2:
    a->dot = 1;
    return parse_string(code, val, &a->input2);
  case OPT_SEGMENTS:
    return parse_string(code, val, &a->segments);
  case OPT_RANGES:
    return parse_string(code, val, &a->ranges);
  case OPT_SEGMENT_LENGTH:
    if (parse_positive(code, val, UINT64_MAX, &u) != 0)
      return -1;
    a->segment_length = u;
    return 0;
  case OPT_SHAPE: {
    char reason[256];
    if (cli_parse_shape(val, &a->rows, &a->cols, reason, sizeof reason) != 0) {
      cli_usage_error("bad --shape '%s': %s", val, reason);
      return -1;
    }
    return 0;
  }
  case OPT_AXIS:
    if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0) {
      cli_usage_error("bad --axis '%s': 0 (a result per column) or 1 (a "
                      "result per row)",
                      val);
      return -1;
    }
    a->axis = val[0] - '0';
    return 0;
  case OPT_REPEAT:
    if (parse_positive(code, val, CLI_MAX_REPEAT, &u) != 0)
      return -1;
    a->repeat = (unsigned)u;
    return 0;
  case OPT_NO_VERIFY:
    a->verify = 0;
    return 0;
  case OPT_JSON:
    a->json = 1;
    return 0;
  case OPT_VERBOSE:
    a->verbose = 1;
    return 0;
  case OPT_PROGRESS:
    a->progress = 1;
    return 0;
  case OPT_HELP:
    a->action = CLI_ACTION_HELP;
    return 0;
  case OPT_VERSION:
    if (a->action != CLI_ACTION_HELP)
      a->action = CLI_ACTION_VERSION;
    return 0;
  default:
    cli_error("internal error: unhandled option %d", code);
    return -1;
  }
}

/* The ops and types whose accumulator --narrow keeps at 32 bits: those
 * whose result, per the tables, is narrower with it. */
static int op_narrows(int i, const void *arg) {
  (void)arg;
  for (int t = 0; t < CLR_TYPE_COUNT; t++)
    if (clr_result_type((clr_op)i, (clr_type)t, 1) !=
        clr_result_type((clr_op)i, (clr_type)t, 0))
      return 1;
  return 0;
}
static int type_narrows(int t, const void *arg) {
  (void)arg;
  for (int i = 0; i < CLR_OP_COUNT; i++)
    if (clr_result_type((clr_op)i, (clr_type)t, 1) !=
        clr_result_type((clr_op)i, (clr_type)t, 0))
      return 1;
  return 0;
}

/* --narrow where it changes what runs, else the one line that says why
 * not. */
static int check_narrow(const cli_args *a, int scans) {
  clr_options wide = a->opt;
  wide.narrow_accumulator = 0;
  if (!a->opt.narrow_accumulator ||
      (!scans && a->opt.accumulate_in == CLR_TYPE_DEFAULT &&
       clr_options_result_type(&a->opt, a->op, a->type) !=
           clr_options_result_type(&wide, a->op, a->type)))
    return 0;
  char ops[256], types[128];
  list_names(ops, sizeof ops, CLR_OP_COUNT, op_name_at, op_narrows, NULL,
             " and ");
  list_names(types, sizeof types, CLR_TYPE_COUNT, type_name_at, type_narrows,
             NULL, " and ");
  if (scans)
    cli_usage_error(
        "--narrow applies to reductions (%s of %s): a scan keeps its "
        "input's type unless --acc widens it",
        ops, types);
  else if (a->opt.accumulate_in != CLR_TYPE_DEFAULT)
    cli_usage_error("--narrow and --acc both choose the accumulator: give one");
  else
    cli_usage_error(
        "--narrow keeps a 32-bit accumulator where the result would "
        "widen (%s of %s); '%s' of %s has none to keep",
        ops, types, clr_op_name(a->op), clr_type_name(a->type));
  return -1;
}

/* Checks between options, for a run: the command line's own options
 * (--dot, --input2, --scan, segments, ranges, --output, --narrow); what
 * the library decides of op, type, kernel, map, --exact and --acc is its
 * validation's (a refusal there exits 2 too, cli_exit_status). */
int cli_check_type(const cli_args *a) {
  char why[512];
  if (check_narrow(a, clr_kernel_is_scan(a->opt.kernel) || a->scan) != 0)
    return CLI_EXIT_USAGE;
  /* The library's rule (clr_op_supports), before any data is made. */
  if (cli_op_type_refusal(a->op, a->type, a->opt.map == CLR_MAP_EXPR, why,
                          sizeof why)) {
    cli_usage_error("%s", why);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* --shape and --axis: each needs the other; what a matrix (one kernel
 * of its own a column or a row, clr_run's CLR_REQ_MATRIX) does not take
 * is refused by name; the element count agrees with --n. */
static int check_matrix(cli_args *a) {
  if (!a->rows && a->axis < 0)
    return 0;
  if (!a->rows) {
    cli_usage_error("--axis applies to a matrix: give its shape with "
                    "--shape=RxC");
    return -1;
  }
  if (a->axis < 0) {
    cli_usage_error("--shape needs --axis: 0 for a result per column (NumPy's "
                    "a.sum(axis=0)), 1 for a result per row");
    return -1;
  }
  char kernel[96] = "";
  if (clr_kernel_is_scan(a->opt.kernel))
    snprintf(kernel, sizeof kernel, "the scan kernel '%s'",
             clr_kernel_name(a->opt.kernel));
  else if (a->opt.kernel != CLR_REDUCE_COARSE &&
           a->opt.kernel != CLR_KERNEL_DEFAULT)
    snprintf(kernel, sizeof kernel, "--kernel=%s",
             clr_kernel_name(a->opt.kernel));
  const char *clash = a->segments           ? "--segments"
                      : a->segment_length   ? "--segment-length"
                      : a->ranges           ? "--ranges"
                      : a->scan             ? "--scan"
                      : a->input2           ? "--input2"
                      : a->dot              ? "--dot"
                      : a->opt.exclusive    ? "--exclusive"
                      : kernel[0]           ? kernel
                      : a->opt.vector_width ? "--vec"
                      : a->opt.coarse       ? "--coarse"
                      : a->axis == 1 && a->opt.layout != CLR_LAYOUT_AUTO
                          ? "--layout (it chooses how --axis=0 reads the "
                            "columns)"
                          : NULL;
  if (clash) {
    cli_usage_error("--shape (a matrix: a result per %s, by its own "
                    "kernels) cannot be combined with %s",
                    a->axis == 0 ? "column" : "row", clash);
    return -1;
  }
  uint64_t n = a->rows * a->cols;
  if (a->n_given && a->n != n) {
    cli_usage_error("--n=%llu does not match --shape=%llux%llu (%llu "
                    "elements)",
                    (unsigned long long)a->n, (unsigned long long)a->rows,
                    (unsigned long long)a->cols, (unsigned long long)n);
    return -1;
  }
  if (!a->input)
    a->n = n;
  return 0;
}

/* defer_type: with --input and without --type, the type checks are left
 * to cli_check_type (a .npy input gives the type). */
static int check_combination(cli_args *a, int defer_type) {
  int scans = clr_kernel_is_scan(a->opt.kernel) || a->scan;
  if (check_matrix(a) != 0)
    return -1;
  /* A dot product is a reduction of two arrays: never a scan of one. */
  if (a->dot && scans) {
    cli_usage_error(
        "--dot / --input2 give a dot product, a reduction: not with "
        "%s%s%s",
        a->scan ? "--scan" : "the scan kernel '",
        a->scan ? "" : clr_kernel_name(a->opt.kernel), a->scan ? "" : "'");
    return -1;
  }
  if (a->dot && a->input && !a->input2) {
    cli_usage_error("--dot with --input needs --input2 (the second array)");
    return -1;
  }
  /* Before the type check: an op scans do not take, of a type it does not
   * apply to either, is refused for what the user asked (a scan), not sent
   * to another type that could not scan it. */
  if ((clr_kernel_is_scan(a->opt.kernel) || a->scan) &&
      !(cli_op_flags(a->op) & CLR_OPF_SCAN)) {
    char ops[256];
    cli_op_list(ops, sizeof ops, CLR_OPF_SCAN);
    if (a->scan)
      cli_usage_error(
          "op '%s' is not supported by segmented scans (--scan; scans "
          "support %s)",
          clr_op_name(a->op), ops);
    else
      cli_usage_error("op '%s' is not supported by scan kernels (kernel '%s'; "
                      "scans support %s)",
                      clr_op_name(a->op), clr_kernel_name(a->opt.kernel), ops);
    return -1;
  }
  if (a->dot && a->op != CLR_SUM) {
    cli_usage_error(
        "--dot / --input2 sum the products x * y: --op=sum, not '%s'",
        clr_op_name(a->op));
    return -1;
  }
  if (a->input2 && !a->input) {
    cli_usage_error("--input2 needs --input (the first array)");
    return -1;
  }
  /* --ddof sets the variance's divisor: on another op it would change
   * nothing, refused as --exclusive and --narrow are where they do not
   * apply. */
  if (a->ddof_given && !(cli_op_flags(a->op) & CLR_OPF_MOMENTS)) {
    char ops[128];
    cli_op_list(ops, sizeof ops, CLR_OPF_MOMENTS);
    cli_usage_error("--ddof applies to %s (the divisor n - ddof), not '%s'",
                    ops, clr_op_name(a->op));
    return -1;
  }
  if (!(defer_type && a->input && !a->type_given) && cli_check_type(a) != 0)
    return -1;
  /* A .npy file holds one dtype: the records of indexed segment results
   * (value and index) and of var and std (value, mean and count) are raw
   * only. */
  if (a->output && cli_npy_name(a->output) && !scans &&
      (cli_op_flags(a->op) & (CLR_OPF_INDEXED | CLR_OPF_MOMENTS))) {
    cli_usage_error("--output=%s: the results of '%s' are records (%s), "
                    "written raw only: give a name not ending in .npy",
                    a->output, clr_op_name(a->op),
                    (cli_op_flags(a->op) & CLR_OPF_MOMENTS)
                        ? "value, mean and count"
                        : "value and index");
    return -1;
  }
  /* The launch shape the kernel reads: the reductions other than the
   * coarse one load one element (first-add: two) per work-item, so they
   * would ignore --vec, --coarse and --layout; the scans read --vec and
   * --coarse, never --layout. */
  int one_element = !clr_kernel_is_scan(a->opt.kernel) &&
                    a->opt.kernel != CLR_REDUCE_COARSE &&
                    a->opt.kernel != CLR_KERNEL_DEFAULT;
  const char *unread = one_element && a->opt.vector_width ? "--vec"
                       : one_element && a->opt.coarse     ? "--coarse"
                       : (one_element || clr_kernel_is_scan(a->opt.kernel)) &&
                               a->opt.layout != CLR_LAYOUT_AUTO
                           ? "--layout"
                           : NULL;
  if (unread) {
    cli_usage_error("%s applies only to the %s, not '%s'", unread,
                    strcmp(unread, "--layout") == 0
                        ? "coarse kernel (and segments)"
                        : "coarse kernel and the scan kernels",
                    clr_kernel_name(a->opt.kernel));
    return -1;
  }
  if (a->rows) /* a matrix: check_matrix's rules, and --output takes its
                  results */
    return 0;
  if (a->ranges && (a->segments || a->segment_length || a->scan)) {
    cli_usage_error(
        "--ranges (one reduction per range) cannot be combined with %s",
        a->scan ? "--scan" : "--segments / --segment-length");
    return -1;
  }
  if (a->scan && !a->segments && !a->segment_length) {
    cli_usage_error(
        "--scan applies to segments (--segments, --segment-length); "
        "a scan of the whole array takes a scan kernel: "
        "--kernel=decoupled, kogge-stone, kogge-stone-db or "
        "brent-kung");
    return -1;
  }
  if (a->segments || a->segment_length || a->ranges) {
    const char *clash =
        a->segments && a->segment_length    ? "--segment-length"
        : clr_kernel_is_scan(a->opt.kernel) ? "a scan kernel"
        : a->opt.kernel != (a->scan ? CLR_KERNEL_DEFAULT : CLR_REDUCE_COARSE)
            ? "--kernel"
        : a->dot                       ? "--dot / --input2"
        : a->opt.exact                 ? "--exact"
        : a->opt.exclusive && !a->scan ? "--exclusive"
        : a->opt.vector_width          ? "--vec"
        : a->scan && a->opt.map        ? "--map"
                                       : NULL;
    if (clash) {
      cli_usage_error("%s (%s, its own kernel) cannot be combined with %s%s",
                      a->ranges ? "--ranges" : "--segments / --segment-length",
                      a->scan     ? "a scan restarting at each segment"
                      : a->ranges ? "one reduction per range"
                                  : "one reduction per segment",
                      clash,
                      a->opt.exclusive && !a->scan
                          ? " (add --scan for a segmented "
                            "exclusive scan)"
                          : "");
      return -1;
    }
    return 0;
  }
  if (!clr_kernel_is_scan(a->opt.kernel)) {
    if (a->opt.exclusive) {
      cli_usage_error("--exclusive applies only to scan kernels (kogge-stone, "
                      "kogge-stone-db, brent-kung, decoupled), not '%s'",
                      clr_kernel_name(a->opt.kernel));
      return -1;
    }
    if (a->output) {
      cli_usage_error("--output applies only to scan kernels (kogge-stone, "
                      "kogge-stone-db, brent-kung, decoupled) and segmented "
                      "reductions (--segments), not '%s'",
                      clr_kernel_name(a->opt.kernel));
      return -1;
    }
  }
  return 0;
}

int cli_selects_nothing(const cli_args *a, clr_status s) {
  size_t count = 0;
  if (s == CLR_ERR_NO_DEVICE)
    return a->device || a->platform;
  return s == CLR_ERR_NO_PLATFORM && a->platform &&
         clr_list_devices(NULL, 0, &count) == CLR_OK;
}

static void set_defaults(cli_args *a) {
  memset(a, 0, sizeof *a);
  a->action = CLI_ACTION_RUN;
  clr_options_init(&a->opt); /* the default kernel, the layout chosen */
  a->op = CLI_DEFAULT_OP;
  a->type = CLI_DEFAULT_TYPE;
  a->n = CLI_DEFAULT_N;
  a->seed = CLI_DEFAULT_SEED;
  a->repeat = CLI_DEFAULT_REPEAT;
  a->verify = 1;
  a->axis = -1;
}

static int parse_args(int argc, char **argv, cli_args *out, int defer_type) {
  set_defaults(out);
  opterr = 0; /* getopt's own messages are not one-line "clreduce: " ones */
  optind = 0; /* not 1: 0 re-initialises getopt completely (glibc, BSD,
                 musl), so a second parse never reads the previous argv */
  for (;;) {
    int code = getopt_long(argc, argv, ":hVv", long_options, NULL);
    if (code == -1)
      break;
    if (code == 'h')
      code = OPT_HELP;
    else if (code == 'V')
      code = OPT_VERSION;
    else if (code == 'v')
      code = OPT_VERBOSE;
    if (code == ':') {
      if (optopt > 0 && optopt < 256)
        cli_usage_error("option '-%c' needs a value", optopt);
      else if (optopt >= 256)
        cli_usage_error("option '--%s' needs a value", option_name(optopt));
      else
        cli_usage_error("option '%s' needs a value", argv[optind - 1]);
      return CLI_EXIT_USAGE;
    }
    if (code == '?') {
      if (optopt >= 256)
        cli_usage_error("option '--%s' takes no value", option_name(optopt));
      else if (optopt > 0)
        cli_usage_error("unknown option '-%c'", optopt);
      else
        cli_usage_error("unknown or ambiguous option '%s'", argv[optind - 1]);
      return CLI_EXIT_USAGE;
    }
    if (parse_option(code, optarg, out) != 0)
      return CLI_EXIT_USAGE;
  }
  if (optind < argc) {
    cli_usage_error("unexpected argument '%s'", argv[optind]);
    return CLI_EXIT_USAGE;
  }
  /* Without --kernel a run reduces with the coarse kernel, which the
   * reports name; a segmented scan (--scan) leaves the library's default,
   * its own kernel. */
  if (out->opt.kernel == CLR_KERNEL_DEFAULT && !out->scan)
    out->opt.kernel = CLR_REDUCE_COARSE;
  if (out->action == CLI_ACTION_RUN && check_combination(out, defer_type) != 0)
    return CLI_EXIT_USAGE;
  return 0;
}

int cli_parse_args(int argc, char **argv, cli_args *out) {
  return parse_args(argc, argv, out, 0);
}

int cli_parse_args_input_type(int argc, char **argv, cli_args *out) {
  return parse_args(argc, argv, out, 1);
}
