/* Human and JSON output. */
#include "report.h"

#include "args.h"
#include "clr_version.h"
#include "reference.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* Length of a string in a fixed-size field, which may lack its NUL. */
#define FIELD_LEN(arr) strnlen((arr), sizeof(arr))

static void json_string_n(FILE *f, const char *s, size_t len) {
  /* The characters JSON escapes with a letter, and their letters. */
  static const char escaped[] = "\"\\\b\f\n\r\t", letter[] = "\"\\bfnrt";
  fputc('"', f);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *e = c ? strchr(escaped, c) : NULL;
    if (e)
      fprintf(f, "\\%c", letter[e - escaped]);
    else if (c < 0x20 || c == 0x7f)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void json_string(FILE *f, const char *s) {
  if (s)
    json_string_n(f, s, strlen(s));
  else
    fputs("null", f);
}

/* ,"key":"value" (null for a NULL value; of a fixed-size field: its
 * first len characters). */
static void json_field(FILE *f, const char *key, const char *s) {
  fprintf(f, ",\"%s\":", key);
  json_string(f, s);
}
static void json_field_n(FILE *f, const char *key, const char *s, size_t len) {
  fprintf(f, ",\"%s\":", key);
  json_string_n(f, s, len);
}
/* ,"version":...,"commit":... (null outside a git checkout): what built
 * the program, last in every JSON object. */
static void json_build(FILE *f) {
  json_field(f, "version", CLR_VERSION);
  json_field(f, "commit", clr_build_commit());
}

/* A double as a JSON number, or "nan" / "inf" / "-inf" as strings. */
static void json_double(FILE *f, double x) {
  if (isnan(x))
    fputs("\"nan\"", f);
  else if (isinf(x))
    fputs(x > 0 ? "\"inf\"" : "\"-inf\"", f);
  else
    fprintf(f, "%.9g", x);
}

/* ,"key":v */
static void json_number(FILE *f, const char *key, double v) {
  fprintf(f, ",\"%s\":", key);
  json_double(f, v);
}

static int value_is_finite(const clr_value *v) {
  if (v->type == CLR_FLOAT)
    return isfinite(v->v.f);
  if (v->type == CLR_DOUBLE)
    return isfinite(v->v.d);
  return 1;
}

/* A value: integers exactly, floats with enough digits to round-trip. */
static void json_value(FILE *f, const clr_value *v) {
  if (!value_is_finite(v)) {
    json_double(f, clr_value_as_double(v));
    return;
  }
  char buf[CLR_VALUE_FORMAT_SIZE];
  cli_format_number(v, buf, sizeof buf);
  fputs(buf, f);
}

void cli_format_number(const clr_value *v, char *buf, size_t size) {
  clr_value m = *v;
  m.op = CLR_SUM; /* no index parts: the number alone */
  clr_value_format(&m, buf, size);
}

const char *cli_segment_unit(const cli_report *r) {
  return !r->matrix ? "segment" : r->axis == 0 ? "column" : "row";
}

int cli_result_is_indexed(const cli_report *r) {
  return !r->is_scan && (cli_op_flags(r->op) & CLR_OPF_INDEXED);
}

int cli_result_is_moments(const cli_report *r) {
  return !r->is_scan && (cli_op_flags(r->op) & CLR_OPF_MOMENTS);
}

/* An index as the report writes it: UINT64_MAX, where there is none (no
 * number among the elements, or an empty segment), as -1. */
static long long signed_index(uint64_t index) {
  return index == UINT64_MAX ? -1 : (long long)index;
}

/* "at index 17", or "at index -1 (...)" saying why there is none. */
static void format_index(const cli_report *r, uint64_t index, char *buf,
                         size_t size) {
  int skips = (cli_op_flags(r->op) & CLR_OPF_SKIPS_NAN) != 0;
  snprintf(buf, size, "at index %lld%s", signed_index(index),
           index != UINT64_MAX    ? ""
           : r->segments && skips ? " (no number: empty or all NaN)"
           : r->segments          ? " (empty)"
           : skips                ? " (no number: all NaN)"
                                  : " (none)");
}

void cli_format_result(const cli_report *r, const clr_value *v, char *buf,
                       size_t size) {
  /* The library's form (clr_value_format) of the run's op, whatever op
   * the value says (a CPU reference's says none), where every index is
   * there; where one is not (-1), the reason after it. */
  clr_value m = *v;
  int indexed = cli_result_is_indexed(r), pair = cli_op_is_pair(r->op);
  if (cli_result_is_moments(r)) { /* the value named, then its mean */
    char a[CLR_VALUE_FORMAT_SIZE], b[CLR_VALUE_FORMAT_SIZE];
    cli_format_number(v, a, sizeof a);
    m.v = v->max;
    cli_format_number(&m, b, sizeof b);
    snprintf(buf, size, "%s %s, mean %s", clr_op_name(r->op), a, b);
    return;
  }
  m.op = !indexed ? CLR_SUM : pair ? CLR_MINMAX : CLR_ARGMIN;
  if (!indexed ||
      (v->index != UINT64_MAX && (!pair || v->max_index != UINT64_MAX))) {
    clr_value_format(&m, buf, size);
    return;
  }
  char a[CLR_VALUE_FORMAT_SIZE], b[CLR_VALUE_FORMAT_SIZE], ia[64], ib[64];
  cli_format_number(v, a, sizeof a);
  format_index(r, v->index, ia, sizeof ia);
  if (!pair) {
    snprintf(buf, size, "%s %s", a, ia);
    return;
  }
  m.v = v->max;
  cli_format_number(&m, b, sizeof b);
  format_index(r, v->max_index, ib, sizeof ib);
  snprintf(buf, size, "min %s %s, max %s %s", a, ia, b, ib);
}

/* A sum of squares also gives the L2 norm, its square root, and the
 * norm's error bound: an error b of the sum s moves the root by at most
 * b / (sqrt(s + b) + sqrt(s)).  0 when the run is no sum of squares. */
static int l2_norm(const cli_report *r, double *norm, double *bound) {
  if (r->is_scan || r->segments || r->dot || !cli_op_is_sum(r->op) || !r->map ||
      strcmp(r->map, "square") != 0)
    return 0;
  double s = clr_value_as_double(&r->result);
  if (!(s >= 0))
    return 0;
  *norm = sqrt(s);
  *bound = r->verdict == CLI_VERIFY_SKIPPED || r->exact
               ? 0.0
               : r->bound / (sqrt(s + r->bound) + *norm);
  return 1;
}

/* The indices of an indexed result, after its value in JSON: -1 where
 * there is none; the mean of a var or std result. */
static void json_indices(FILE *f, const cli_report *r, const char *key,
                         const clr_value *v) {
  if (cli_result_is_moments(r)) {
    clr_value m = *v;
    m.v = v->max;
    fprintf(f, ",\"%s_mean\":", key);
    json_value(f, &m);
    return;
  }
  if (!cli_result_is_indexed(r))
    return;
  fprintf(f, ",\"%s_index\":%lld", key, signed_index(v->index));
  if (cli_op_is_pair(r->op)) {
    clr_value m = *v;
    m.v = v->max;
    fprintf(f, ",\"%s_max\":", key);
    json_value(f, &m);
    fprintf(f, ",\"%s_max_index\":%lld", key, signed_index(v->max_index));
  }
}

static const char *yes_no(int b) { return b ? "yes" : "no"; }
static const char *json_bool(int b) { return b ? "true" : "false"; }

static void human_bytes(uint64_t bytes, char *buf, size_t size) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double x = (double)bytes;
  int u = 0;
  while (x >= 1024.0 && u < 5) {
    x /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, size, "%" PRIu64 " B", bytes);
  else
    snprintf(buf, size, "%.2f %s", x, units[u]);
}

/* ------------------------------------------------------------ human */

/* What the result line shows: a scan's last element, the last segment's
 * result, or the result. */
static const char *last_label(const cli_report *r) {
  return r->is_scan                  ? "last element "
         : r->matrix && r->axis == 0 ? "last column "
         : r->matrix                 ? "last row "
         : r->segments               ? "last segment "
                                     : "";
}

static void human_verification(FILE *f, const cli_report *r) {
  char got[64], want[320];
  if (r->verdict == CLI_VERIFY_SKIPPED) {
    fprintf(f, "reference:  not computed (--no-verify)\n");
    return;
  }
  cli_format_result(r, &r->reference, want, sizeof want);
  fprintf(f, "reference:  %s%s\n", last_label(r), want);
  if (r->is_scan || r->segments) {
    const char *unit = cli_per_segment(r) ? cli_segment_unit(r) : "element";
    size_t count = cli_per_segment(r) ? r->segments : r->n;
    cli_format_number(&r->elements.got_worst, got, sizeof got);
    cli_format_number(&r->elements.ref_worst, want, sizeof want);
    if (r->exact) {
      if (r->elements.n_bad == 0)
        fprintf(f, "error:      exact match (all %zu %ss)\n", count, unit);
      else
        fprintf(f,
                "error:      MISMATCH in %zu of %zu %ss, first at %s %zu: "
                "got %s, expected %s\n",
                r->elements.n_bad, count, unit,
                cli_per_segment(r) ? unit : "index", r->elements.worst_index,
                got, want);
    } else {
      fprintf(f,
              "error:      worst %s %zu: got %s, expected %s, error %.3g, "
              "bound %.3g (%.3g of the bound)\n",
              unit, r->elements.worst_index, got, want, r->error, r->bound,
              r->elements.worst_ratio);
      if (r->elements.n_bad)
        fprintf(f, "            %zu of %zu %ss are outside their bound\n",
                r->elements.n_bad, count, unit);
    }
    if (r->elements.n_overflowed)
      fprintf(f,
              "overflow:   %zu of %zu %ss are inf or NaN where the reference "
              "is finite: accepted, as their magnitudes exceed %s's range "
              "(whether a partial result overflows depends on the order of "
              "the operations)\n",
              r->elements.n_overflowed, count, unit,
              clr_type_name(r->result_type));
    return;
  }
  if (r->overflowed) {
    fprintf(f,
            "error:      none measured: the result overflowed (%s) where the "
            "reference is finite; accepted, as the elements' magnitudes "
            "exceed %s's range (whether a partial result overflows depends "
            "on the order of the operations)\n",
            isnan(clr_value_as_double(&r->result)) ? "NaN" : "inf",
            clr_type_name(r->result_type));
  } else if (r->exact) {
    if (r->verdict == CLI_VERIFY_PASSED)
      fprintf(f, "error:      exact match\n");
    else if (cli_result_is_indexed(r))
      fprintf(f, "error:      MISMATCH (value or index differs)\n");
    else
      fprintf(f, "error:      MISMATCH (differs by %.17g)\n", r->error);
  } else {
    double ratio =
        r->bound > 0 && isfinite(r->bound) ? r->error / r->bound : 0.0;
    fprintf(f, "error:      %.3g (bound %.3g, %.3g of the bound)%s\n", r->error,
            r->bound, ratio,
            r->verdict == CLI_VERIFY_PASSED ? "" : " OUT OF BOUND");
  }
  if (r->runs_failed)
    fprintf(f,
            "runs:       %u of %u runs failed; the result shown is from run "
            "%u (run 1 is the warm-up)\n",
            r->runs_failed, r->runs_checked, r->failed_run);
}

void cli_report_human(FILE *f, const cli_report *r) {
  const clr_device_desc *d = &r->device;
  fprintf(f, "device:     %.*s (%.*s, %.*s)\n", (int)FIELD_LEN(d->device_name),
          d->device_name, (int)FIELD_LEN(d->platform_name), d->platform_name,
          (int)FIELD_LEN(d->device_version), d->device_version);
  for (size_t i = 0; i < r->n_devices; i++) {
    const struct cli_device_part *p = &r->parts[i];
    fprintf(f,
            "part %-6zu %.*s: %zu elements (weight %.3g), kernel %.3f ms, "
            "h2d %.3f ms%s",
            i, (int)FIELD_LEN(p->device.device_name), p->device.device_name,
            p->n, p->weight, p->kernel_ms, p->h2d_ms, r->is_scan ? "" : "\n");
    if (r->is_scan)
      fprintf(f, ", d2h %.3f ms\n", p->d2h_ms);
  }
  fprintf(f, "data:       %s\n", r->data);
  char ddof[48] = "";
  if (cli_result_is_moments(r))
    snprintf(ddof, sizeof ddof, " (ddof %" PRIu64 ")", r->ddof);
  fprintf(f,
          "run:        %s %s%s%s of %s%s%s%s -> %s%s, %u timed run%s after 1 "
          "warm-up\n",
          r->matrix     ? "matrix"
          : r->segments ? "segmented"
                        : clr_kernel_name(r->kernel),
          r->is_scan ? (r->exclusive ? "exclusive " : "inclusive ") : "",
          r->exact_mode ? "exact " : "", r->dot ? "dot" : clr_op_name(r->op),
          clr_type_name(r->type), r->map ? " mapped by '" : "",
          r->map ? r->map : "", r->map ? "'" : "",
          clr_type_name(r->result_type), ddof, r->repeat,
          r->repeat == 1 ? "" : "s");
  size_t np = r->n_passes;
  if (r->segments)
    fprintf(f, "segments:   %s\n", r->segments_desc);
  if (r->timing.chunks > 1)
    fprintf(f, "chunks:     %zu (input streamed; passes of the first chunk)\n",
            r->timing.chunks);
  for (size_t i = 0; i < np; i++) {
    const clr_pass_info *p = &r->passes[i];
    char label[32];
    snprintf(label, sizeof label, "pass %zu:", i + 1);
    fprintf(f, "%-11s n_in=%zu global=%zu local=%zu %.3f ms\n", label, p->n_in,
            p->global_size, p->local_size, p->ms);
  }
  char res[320];
  cli_format_result(r, &r->result, res, sizeof res);
  fprintf(f, "result:     %s%s\n", last_label(r), res);
  double norm, norm_bound;
  if (l2_norm(r, &norm, &norm_bound))
    fprintf(f, "L2 norm:    %.9g (its square root; error bound %.3g)\n", norm,
            norm_bound);
  human_verification(f, r);
  fprintf(f, "kernel:     %.3f ms median (min %.3f, max %.3f over %u run%s)\n",
          r->kernel_ms, r->kernel_ms_min, r->kernel_ms_max, r->repeat,
          r->repeat == 1 ? "" : "s");
  if (r->n_devices)
    fprintf(f,
            "wall:       %.3f ms median over %zu device%s (the whole call; "
            "the host's fold %.3f ms)\n",
            r->wall_ms, r->n_devices, r->n_devices == 1 ? "" : "s",
            r->combine_ms);
  fprintf(f, "h2d:        %.3f ms median\n", r->h2d_ms);
  if (r->is_scan)
    fprintf(f, "d2h:        %.3f ms median\n", r->d2h_ms);
  fprintf(f, "build:      %.3f ms\n", r->build_ms);
  if (r->gbps > 0 && r->n_devices) {
    /* the call's wall time (the parts run at once), beside each part's
     * kernel-time figure */
    fprintf(f,
            "bandwidth:  %.3g GB/s (the call's wall time, %zu device%s%s);"
            " %s:",
            r->gbps, r->n_devices, r->n_devices == 1 ? "" : "s",
            r->is_scan ? "; read + write" : "",
            r->n_devices == 1 ? "its part by its kernel time"
                              : "parts by their kernel times");
    for (size_t i = 0; i < r->n_devices; i++)
      if (r->parts[i].gbps > 0)
        fprintf(f, "%s %.3g GB/s", i ? "," : "", r->parts[i].gbps);
      else
        fprintf(f, "%s n/a", i ? "," : "");
    fputc('\n', f);
  } else if (r->gbps > 0)
    fprintf(f, "bandwidth:  %.3g GB/s%s\n", r->gbps,
            r->is_scan && r->segments ? " (read + write + offsets)"
            : r->is_scan              ? " (read + write)"
            : r->matrix               ? " (values)"
            : r->segments             ? " (values + offsets)"
                                      : "");
  else
    fprintf(f, "bandwidth:  n/a (no kernel time)\n");
  if (r->output)
    fprintf(f, "output:     %s\n", r->output);
  switch (r->verdict) {
  case CLI_VERIFY_PASSED:
    fprintf(f, "verified: yes\n");
    break;
  case CLI_VERIFY_FAILED:
    fprintf(f, "VERIFICATION FAILED\n");
    break;
  default:
    fprintf(f, "verified: skipped (--no-verify)\n");
    break;
  }
}

/* ------------------------------------------------------------ JSON */

void cli_report_json(FILE *f, const cli_report *r) {
  const clr_device_desc *d = &r->device;
  int verified = r->verdict != CLI_VERIFY_SKIPPED;
  fputs("{\"kernel\":", f);
  json_string(f, clr_kernel_name(r->kernel));
  fputs(",\"scan\":", f);
  fputs(json_bool(r->is_scan), f);
  if (r->is_scan)
    fprintf(f, ",\"exclusive\":%s", json_bool(r->exclusive));
  if (r->segments) {
    fprintf(f, ",\"segments\":%zu", r->segments);
    json_field(f, "segments_from", r->segments_desc);
  }
  if (r->matrix)
    fprintf(f, ",\"shape\":[%zu,%zu],\"axis\":%d", r->rows, r->cols, r->axis);
  json_field(f, "op", clr_op_name(r->op));
  if (cli_result_is_moments(r))
    fprintf(f, ",\"ddof\":%" PRIu64, r->ddof);
  json_field(f, "map", r->map);
  fprintf(f, ",\"dot\":%s,\"exact_mode\":%s", json_bool(r->dot),
          json_bool(r->exact_mode));
  json_field(f, "type", clr_type_name(r->type));
  json_field(f, "result_type", clr_type_name(r->result_type));
  fprintf(f, ",\"n\":%zu", r->n);
  if (r->generated)
    fprintf(f, ",\"seed\":%" PRIu64, r->seed);
  else
    fputs(",\"seed\":null", f);
  json_field(f, "data", r->data);
  json_field_n(f, "device", d->device_name, FIELD_LEN(d->device_name));
  json_field_n(f, "platform", d->platform_name, FIELD_LEN(d->platform_name));
  json_field_n(f, "device_version", d->device_version,
               FIELD_LEN(d->device_version));
  json_field(f, "kernel_dir", r->kernel_dir ? r->kernel_dir : "");
  fputs(",\"result\":", f);
  json_value(f, &r->result);
  json_indices(f, r, "result", &r->result);
  double norm, norm_bound;
  if (l2_norm(r, &norm, &norm_bound)) {
    fputs(",\"l2_norm\":", f);
    if (isfinite(norm)) /* every digit: it is a double */
      fprintf(f, "%.17g", norm);
    else
      json_double(f, norm);
    json_number(f, "l2_norm_bound", norm_bound);
  }
  fputs(",\"reference\":", f);
  if (verified)
    json_value(f, &r->reference);
  else
    fputs("null", f);
  if (verified)
    json_indices(f, r, "reference", &r->reference);
  fprintf(f, ",\"verified\":%s",
          verified ? json_bool(r->verdict == CLI_VERIFY_PASSED) : "null");
  if (verified) {
    fprintf(f, ",\"exact\":%s,\"error\":", json_bool(r->exact));
    json_double(f, r->error);
    json_number(f, "bound", r->bound);
    if (r->is_scan || r->segments)
      fprintf(f, ",\"overflowed_%s\":%zu",
              cli_per_segment(r) ? "segments" : "elements",
              r->elements.n_overflowed);
    else
      fprintf(f, ",\"overflowed\":%s", json_bool(r->overflowed));
  } else {
    fputs(",\"exact\":null,\"error\":null,\"bound\":null", f);
  }
  if (r->is_scan || r->segments) {
    if (verified) {
      fprintf(f,
              ",\"worst_index\":%zu,\"worst_ratio\":", r->elements.worst_index);
      json_double(f, r->elements.worst_ratio);
      fprintf(f, ",\"bad_%s\":%zu",
              cli_per_segment(r) ? "segments" : "elements", r->elements.n_bad);
    }
    json_field(f, "output", r->output);
  } else if (verified) {
    fprintf(f, ",\"runs_checked\":%u,\"runs_failed\":%u", r->runs_checked,
            r->runs_failed);
    if (r->runs_failed)
      fprintf(f, ",\"failed_run\":%u", r->failed_run);
  }
  fprintf(f, ",\"error_depth\":%zu,\"repeat\":%u", r->timing.error_depth,
          r->repeat);
  json_number(f, "kernel_ms", r->kernel_ms);
  json_number(f, "kernel_ms_min", r->kernel_ms_min);
  json_number(f, "kernel_ms_max", r->kernel_ms_max);
  fputs(",\"gbps\":", f);
  if (r->gbps > 0)
    json_double(f, r->gbps);
  else
    fputs("null", f);
  if (r->n_devices) {
    /* "gbps" above is the call's (its wall time); "gbps_call" says so, and
     * each part has its own from its kernel time */
    fputs(",\"gbps_call\":", f);
    if (r->gbps > 0)
      json_double(f, r->gbps);
    else
      fputs("null", f);
    json_number(f, "wall_ms", r->wall_ms);
    json_number(f, "combine_ms", r->combine_ms);
    fputs(",\"parts\":[", f);
    for (size_t i = 0; i < r->n_devices; i++) {
      const struct cli_device_part *p = &r->parts[i];
      fputs(i ? ",{" : "{", f);
      json_string(f, "device");
      fputc(':', f);
      json_string_n(f, p->device.device_name, FIELD_LEN(p->device.device_name));
      fprintf(f, ",\"n\":%zu,\"weight\":", p->n);
      json_double(f, p->weight);
      json_number(f, "kernel_ms", p->kernel_ms);
      json_number(f, "h2d_ms", p->h2d_ms);
      json_number(f, "d2h_ms", p->d2h_ms);
      fputs(",\"gbps\":", f);
      if (p->gbps > 0)
        json_double(f, p->gbps);
      else
        fputs("null", f);
      fputc('}', f);
    }
    fputc(']', f);
  }
  json_number(f, "h2d_ms", r->h2d_ms);
  if (r->is_scan) {
    json_number(f, "d2h_ms", r->d2h_ms);
  }
  json_number(f, "build_ms", r->build_ms);
  fprintf(f, ",\"chunks\":%zu,\"passes\":[", r->timing.chunks);
  size_t np = r->n_passes;
  for (size_t i = 0; i < np; i++) {
    const clr_pass_info *p = &r->passes[i];
    fprintf(f, "%s{\"n_in\":%zu,\"global_size\":%zu,\"local_size\":%zu,\"ms\":",
            i ? "," : "", p->n_in, p->global_size, p->local_size);
    json_double(f, p->ms);
    fputc('}', f);
  }
  fputc(']', f);
  json_build(f);
  fputs("}\n", f);
}

/* ------------------------------------------------------------ listings */

void cli_list_devices_human(FILE *f, const clr_device_desc *devs,
                            size_t count) {
  for (size_t i = 0; i < count; i++) {
    const clr_device_desc *d = &devs[i];
    char global[32], alloc[32];
    human_bytes(d->global_mem_size, global, sizeof global);
    human_bytes(d->max_alloc_size, alloc, sizeof alloc);
    fprintf(f, "[%zu] platform %u: %.*s\n", i, d->platform_index,
            (int)FIELD_LEN(d->platform_name), d->platform_name);
    fprintf(f, "    device %u: %.*s (%s)\n", d->device_index,
            (int)FIELD_LEN(d->device_name), d->device_name,
            d->is_gpu   ? "GPU"
            : d->is_cpu ? "CPU"
                        : "other");
    fprintf(f, "    version: %.*s, driver %.*s\n",
            (int)FIELD_LEN(d->device_version), d->device_version,
            (int)FIELD_LEN(d->driver_version), d->driver_version);
    fprintf(f,
            "    compute units: %u, global memory: %s, max alloc: %s, "
            "fp64: %s\n",
            d->compute_units, global, alloc, yes_no(d->has_fp64));
  }
}

void cli_list_devices_json(FILE *f, const clr_device_desc *devs, size_t count) {
  fputs("{\"devices\":[", f);
  for (size_t i = 0; i < count; i++) {
    const clr_device_desc *d = &devs[i];
    fprintf(f, "%s{\"index\":%zu,\"platform_index\":%u,\"device_index\":%u",
            i ? "," : "", i, d->platform_index, d->device_index);
    json_field_n(f, "platform", d->platform_name, FIELD_LEN(d->platform_name));
    json_field_n(f, "device", d->device_name, FIELD_LEN(d->device_name));
    json_field_n(f, "version", d->device_version, FIELD_LEN(d->device_version));
    json_field_n(f, "driver", d->driver_version, FIELD_LEN(d->driver_version));
    fprintf(f,
            ",\"gpu\":%s,\"cpu\":%s,\"compute_units\":%u,"
            "\"global_mem_size\":%" PRIu64 ",\"max_alloc_size\":%" PRIu64
            ",\"local_mem_size\":%" PRIu64
            ",\"max_work_group_size\":%zu,\"fp64\":%s}",
            json_bool(d->is_gpu), json_bool(d->is_cpu), d->compute_units,
            d->global_mem_size, d->max_alloc_size, d->local_mem_size,
            d->max_work_group_size, json_bool(d->has_fp64));
  }
  fputc(']', f);
  json_build(f);
  fputs("}\n", f);
}

void cli_list_kernels(FILE *f, int json) {
  if (json)
    fputs("{\"kernels\":[", f);
  for (int i = 0; i < CLR_KERNEL_COUNT; i++) {
    clr_kernel k = (clr_kernel)i;
    const char *kind = clr_kernel_is_scan(k) ? "scan" : "reduction";
    if (json) {
      fputs(i ? ",{\"name\":" : "{\"name\":", f);
      json_string(f, clr_kernel_name(k));
      json_field(f, "kind", kind);
      json_field(f, "description", clr_kernel_description(k));
      fputc('}', f);
    } else {
      fprintf(f, "%-15s %-10s %s\n", clr_kernel_name(k), kind,
              clr_kernel_description(k));
    }
  }
  if (json) {
    fputc(']', f);
    json_build(f);
    fputs("}\n", f);
  }
}

/* ------------------------------------------------------------ cache */

void cli_cache_human(FILE *f, const cli_cache_report *r) {
  char size[32], cap[32];
  human_bytes(r->bytes, size, sizeof size);
  human_bytes(r->max_bytes, cap, sizeof cap);
  if (!r->dir[0]) {
    fputs(r->cleared ? "the program cache is disabled: nothing removed\n"
                     : "directory: none (the program cache is disabled)\n",
          f);
    return;
  }
  if (r->cleared) {
    fprintf(f, "removed %" PRIu64 " %s (%s) from %s\n", r->entries,
            r->entries == 1 ? "entry" : "entries", size, r->dir);
    return;
  }
  fprintf(f, "directory: %s\n", r->dir);
  fprintf(f, "entries:   %" PRIu64 "\n", r->entries);
  fprintf(f, "size:      %s (%" PRIu64 " bytes)\n", size, r->bytes);
  if (r->max_bytes)
    fprintf(f, "cap:       %s (%" PRIu64 " bytes)\n", cap, r->max_bytes);
  else
    fputs("cap:       none\n", f);
}

void cli_cache_json(FILE *f, const cli_cache_report *r) {
  fputs("{\"directory\":", f);
  json_string(f, r->dir[0] ? r->dir : NULL);
  if (r->cleared)
    fprintf(f, ",\"removed\":%" PRIu64 ",\"bytes\":%" PRIu64, r->entries,
            r->bytes);
  else
    fprintf(f,
            ",\"entries\":%" PRIu64 ",\"bytes\":%" PRIu64
            ",\"max_bytes\":%" PRIu64,
            r->entries, r->bytes, r->max_bytes);
  json_build(f);
  fputs("}\n", f);
}
