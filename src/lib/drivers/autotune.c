/* clr_autotune: a coordinate search over the coarse reduction's and the
 * scan's launch parameters on the context's device, timed on a float sum
 * (median kernel time of several runs after a warm-up).  The winner is
 * applied to the context and written to the user's tuning file. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 5

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median kernel time of a float sum (scan when out != NULL) under the
 * context's current tuning; a negative value when the shape cannot run,
 * its call's status in *failed (when not NULL). */
static double trial(clr_context *ctx, const float *in, float *out, size_t n,
                    clr_status *failed) {
  double t[REPS];
  clr_value v;
  clr_options opt;
  clr_options_init(&opt);
  if (out)
    opt.kernel = ctx->tuning.scan_kernel;
  for (int r = -1; r < REPS; r++) {
    clr_status st =
        out ? clr_scan_host(ctx, &opt, CLR_SUM, CLR_FLOAT, in, out, n)
            : clr_reduce_host(ctx, &opt, CLR_SUM, CLR_FLOAT, in, n, &v);
    if (st != CLR_OK) {
      if (failed)
        *failed = st;
      return -1.0;
    }
    if (r >= 0)
      t[r] = ctx->timing.kernel_ms;
  }
  qsort(t, REPS, sizeof t[0], cmp_double);
  return t[REPS / 2];
}

/* Try every value of one field; keep the fastest.  best_ms is updated. */
static void search(clr_context *ctx, const float *in, float *out, size_t n,
                   const char *name, size_t *field, const size_t *values,
                   size_t count, double *best_ms) {
  size_t keep = *field;
  for (size_t i = 0; i < count; i++) {
    if (values[i] == keep)
      continue;
    *field = values[i];
    double ms = trial(ctx, in, out, n, NULL);
    /* A new value must win by 2%: on a tie the earlier choice (the
     * default, or what the search already kept) stays. */
    int better = ms >= 0 && ms < *best_ms * 0.98;
    clr_log(ctx, "autotune: %s=%zu: %.3f ms%s", name, values[i], ms,
            better ? " (best so far)" : "");
    if (better) {
      *best_ms = ms;
      keep = values[i];
    }
  }
  *field = keep;
}

/* One scan kernel's search: its starting time, then its elements per
 * work-item and its work-group size in turn; its best time (negative when
 * it cannot run). */
static double search_scan(clr_context *ctx, const float *in, float *out,
                          size_t n, clr_kernel kernel, const char *what,
                          const char *items_key, size_t *items_field,
                          const size_t *items, size_t n_items,
                          const char *wg_key, size_t *wg_field,
                          const size_t *wgs, size_t n_wgs) {
  ctx->tuning.scan_kernel = kernel;
  double best = trial(ctx, in, out, n, NULL);
  if (best >= 0) {
    clr_log(ctx, "autotune: %s, starting from %.3f ms", what, best);
    search(ctx, in, out, n, items_key, items_field, items, n_items, &best);
    search(ctx, in, out, n, wg_key, wg_field, wgs, n_wgs, &best);
  }
  return best;
}

CLR_API clr_status clr_autotune(clr_context *ctx, size_t n, char *saved_path,
                                size_t path_size) {
  static const size_t wgs[] = {32, 64, 128, 256, 512, 1024};
  static const size_t vec_bytes[] = {4, 8, 16, 32, 64};
  static const size_t groups[] = {1, 2, 4, 8, 16, 32, 64};
  static const size_t per_item[] = {1, 4, 16, 64, 256, 1024, 4096};
  char path[4096];
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  if (n == 0)
    n = (size_t)1 << 25;
  size_t cap = clr_chunk_elems(ctx, sizeof(float));
  if (n > cap)
    n = cap;
  float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  if (!in || !out) {
    free(in);
    free(out);
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  uint64_t s = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    in[i] = (float)(s >> 40) * (1.0f / 16777216.0f);
  }
  clr_tuning t = ctx->tuning;
  clr_status st = CLR_OK;
  double best = trial(ctx, in, NULL, n, &st);
  if (best < 0)
    goto done;
  clr_log(ctx, "autotune: reduction, starting from %.3f ms", best);
  for (int layout = CLR_LAYOUT_STRIDED; layout <= CLR_LAYOUT_CONTIGUOUS;
       layout++) {
    clr_layout keep = ctx->tuning.reduce_layout;
    ctx->tuning.reduce_layout = (clr_layout)layout;
    size_t vb = ctx->tuning.reduce_vec_bytes;
    double before = best;
    search(ctx, in, NULL, n,
           layout == CLR_LAYOUT_STRIDED ? "strided vec_bytes"
                                        : "contiguous vec_bytes",
           &vb, vec_bytes, sizeof vec_bytes / sizeof *vec_bytes, &best);
    ctx->tuning.reduce_vec_bytes = (unsigned)vb;
    if (layout != (int)keep && best >= before)
      ctx->tuning.reduce_layout = keep; /* no improvement: keep the layout */
  }
  search(ctx, in, NULL, n, "reduce.wg", &ctx->tuning.reduce_wg, wgs,
         sizeof wgs / sizeof *wgs, &best);
  size_t g = ctx->tuning.reduce_groups_per_cu;
  search(ctx, in, NULL, n, "reduce.groups_per_cu", &g, groups,
         sizeof groups / sizeof *groups, &best);
  ctx->tuning.reduce_groups_per_cu = (unsigned)g;
  clr_log(ctx, "autotune: reduction best %.3f ms (%.1f GB/s)", best,
          (double)n * sizeof(float) / best / 1e6);

  /* Scans: the tiled reduce-then-scan (elements per work-item, work-group
   * size) and the single-pass decoupled scan (elements per work-item);
   * the faster becomes scan.kernel, the scan used when none is named. */
  static const size_t items[] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64};
  /* The decoupled scan's work-group sizes, and on CPUs 1: its CPU shape,
   * whose run length is then searched too. */
  static const size_t dwgs[] = {1, 32, 64, 128, 256, 512, 1024};
  static const size_t runs[] = {16384, 65536, 262144, 524288, 1048576};
  size_t gpu = ctx->desc.is_gpu != 0;
  double tiled = search_scan(
      ctx, in, out, n, CLR_SCAN_KOGGE_STONE, "tiled scan", "scan.per_item",
      &ctx->tuning.scan_per_item, per_item, sizeof per_item / sizeof *per_item,
      "scan.wg", &ctx->tuning.scan_wg, wgs, sizeof wgs / sizeof *wgs);
  double single = search_scan(
      ctx, in, out, n, CLR_SCAN_DECOUPLED, "decoupled scan", "decoupled.items",
      &ctx->tuning.decoupled_items, items, sizeof items / sizeof *items,
      "decoupled.wg", &ctx->tuning.decoupled_wg, dwgs + gpu,
      sizeof dwgs / sizeof *dwgs - gpu);
  if (single >= 0 && ctx->tuning.decoupled_wg == 1)
    search(ctx, in, out, n, "decoupled.run_items",
           &ctx->tuning.decoupled_run_items, runs, sizeof runs / sizeof *runs,
           &single);
  if (tiled >= 0 || single >= 0) {
    int use_single = single >= 0 && (tiled < 0 || single < tiled);
    double ms = use_single ? single : tiled;
    ctx->tuning.scan_kernel =
        use_single ? CLR_SCAN_DECOUPLED : CLR_SCAN_KOGGE_STONE;
    clr_log(ctx,
            "autotune: scan best %s, %.3f ms (%.1f GB/s read + write; "
            "tiled %.3f ms, decoupled %.3f ms)",
            clr_kernel_name(ctx->tuning.scan_kernel), ms,
            2.0 * (double)n * sizeof(float) / ms / 1e6, tiled, single);
  } else {
    ctx->tuning.scan_kernel = t.scan_kernel;
  }
  if (clr_user_tuning_path(ctx, path, sizeof path)) {
    st = clr_save_tuning(ctx, path);
    if (st == CLR_OK) {
      snprintf(ctx->tuning_origin, sizeof ctx->tuning_origin, "%s", path);
      if (saved_path && path_size)
        snprintf(saved_path, path_size, "%s", path);
    }
  } else if (saved_path && path_size) {
    saved_path[0] = '\0'; /* cache disabled: applied, not stored */
  }
done:
  if (st != CLR_OK)
    ctx->tuning = t;
  free(in);
  free(out);
  return st;
}
