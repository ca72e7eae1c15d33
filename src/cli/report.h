/* What a run found, printed for people or as one JSON object; and the
 * --list-devices / --list-kernels listings. */
#ifndef CLR_CLI_REPORT_H
#define CLR_CLI_REPORT_H

#include "clreduce.h"
#include "scan_reference.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How verification went. */
typedef enum cli_verdict {
  CLI_VERIFY_SKIPPED, /* --no-verify: JSON "verified": null */
  CLI_VERIFY_FAILED,
  CLI_VERIFY_PASSED,
} cli_verdict;

typedef struct cli_report {
  /* what ran */
  clr_kernel kernel;
  clr_op op;
  uint64_t ddof; /* var, std: the divisor n - ddof (--ddof)            */
  clr_type type;
  clr_type result_type;
  const char *map; /* "abs", "square", a map expression, or NULL      */
  int dot;         /* a dot product of two arrays                    */
  int is_scan;     /* a scan (with segments: segmented)       */
  int exclusive;
  size_t segments;           /* segmented: their number; 0 otherwise    */
  const char *segments_desc; /* "1000 of length 100", "5 from 'f'"      */
  /* a matrix (--shape): rows x cols, its segments a result per column
   * (axis 0) or per row (axis 1); matrix 0 otherwise */
  int matrix, axis;
  size_t rows, cols;
  size_t n;
  uint64_t seed;
  int generated;      /* data generated (seed meaningful), not read     */
  const char *data;   /* "100000000 float uniform in [0,1) (seed 42)"   */
  const char *output; /* scans, segments: --output written, or NULL     */
  clr_device_desc device;
  const char *kernel_dir; /* where the kernel sources were read from   */

  /* shape and times */
  /* the reported run's passes (clr_last_timing_pass), n_passes of them */
  clr_pass_info passes[CLR_MAX_PASSES];
  size_t n_passes;
  clr_timing timing; /* the reported run: chunks, error depth          */
  unsigned repeat;   /* timed runs                                     */
  double kernel_ms, kernel_ms_min, kernel_ms_max; /* median, min, max   */
  double h2d_ms, d2h_ms;                          /* medians            */
  double build_ms;
  double gbps; /* bytes moved / median kernel time; 0 when unknown;
                  several devices: / the call's median wall time       */

  /* result and verification; a scan reports its last element */
  clr_value result;
  cli_verdict verdict;
  clr_value reference;
  int exact;      /* exact match required                               */
  int exact_mode; /* --exact: the library's exact mode was in effect    */
  /* reductions: the result is inf or NaN where the reference is finite,
   * accepted because the elements' magnitudes exceed the type's range
   * (clr_check's overflowed); scans and segments count theirs in
   * elements.n_overflowed */
  int overflowed;
  double error; /* |result - reference| (scans: at the worst element) */
  double bound; /* allowed error there (0 when exact)                  */
  /* reductions: every run is checked */
  unsigned runs_checked, runs_failed, failed_run; /* failed_run: 1-based */
  /* scans: every element's check; segmented reductions: every
   * segment's */
  clr_scan_check elements;

  /* several devices (--device=all or a list; 0 on one device): each
   * device's part of the reported run; kernel_ms above is the slowest
   * part's kernel time (the parts run at once) */
  size_t n_devices;
  struct cli_device_part {
    clr_device_desc device;
    double weight;
    size_t n;
    double kernel_ms, h2d_ms, d2h_ms;
    double gbps; /* its bytes / its kernel time; 0 when unknown */
  } parts[CLR_GROUP_MAX_DEVICES];
  double wall_ms, combine_ms; /* medians: the whole call, the host's fold */
} cli_report;

/* One result a segment (a segmented reduction), not one an element. */
static inline int cli_per_segment(const cli_report *r) {
  return r->segments && !r->is_scan;
}

/* What a segment result is: "column", "row" (a matrix's) or "segment". */
const char *cli_segment_unit(const cli_report *r);

/* 1 for the results of the indexed operations (CLR_OPF_INDEXED: a value
 * and an index), not scanned. */
int cli_result_is_indexed(const cli_report *r);
/* A reduction's result as the report shows it: the value, and for the
 * indexed operations where it is ("-3 at index 17"; the pairs of a
 * minimum and a maximum both; an index of UINT64_MAX, where there is
 * none, as "-1" with the reason); var and std name the value and give
 * the mean ("var 0.0833, mean 0.5"). */
void cli_format_result(const cli_report *r, const clr_value *v, char *buf,
                       size_t size);
/* 1 for the results of var and std (CLR_OPF_MOMENTS: a value and its
 * mean, in clr_value.max), not scanned. */
int cli_result_is_moments(const cli_report *r);
/* The number of a value alone (clr_value_format without the index parts,
 * whatever op the value says). */
void cli_format_number(const clr_value *v, char *buf, size_t size);

void cli_report_human(FILE *f, const cli_report *r);
void cli_report_json(FILE *f, const cli_report *r);

void cli_list_devices_human(FILE *f, const clr_device_desc *d, size_t count);
void cli_list_devices_json(FILE *f, const clr_device_desc *d, size_t count);
void cli_list_kernels(FILE *f, int json);

/* --cache-info and --cache-clear: the program cache (clr_cache_usage,
 * clr_cache_clear). */
typedef struct cli_cache_report {
  const char *dir;    /* "": the cache is disabled                       */
  int cleared;        /* --cache-clear: entries and bytes are what went  */
  uint64_t entries;   /* program entries (removed, with cleared)         */
  uint64_t bytes;     /* their size                                      */
  uint64_t max_bytes; /* --cache-info: the cap (0: none)                 */
} cli_cache_report;

void cli_cache_human(FILE *f, const cli_cache_report *r);
/* {"directory" (null when disabled), then "entries", "bytes" and
 * "max_bytes" (--cache-info) or "removed" and "bytes" (--cache-clear),
 * "version", "commit"}. */
void cli_cache_json(FILE *f, const cli_cache_report *r);

#endif
