/* The reference inputs in data/ (see data/README.md, made by
 * tests/make_data.py): every kernel must give exactly the answer written
 * below, and the CPU reference must agree with it too.
 *
 *   test_data --data-dir=DIR */
#include "test_util.h"

typedef struct expect {
  const char *file;
  clr_type type;
  size_t n;
  clr_op op;
  int narrow;
  clr_value want;
} expect;

static expect table[32];
static size_t n_table;

/* A new row: file, type, n, op, narrow; the caller sets want. */
static expect *add(const char *file, clr_type t, size_t n, clr_op op,
                   int narrow) {
  expect *e = &table[n_table++];
  e->file = file;
  e->type = t;
  e->n = n;
  e->op = op;
  e->narrow = narrow;
  return e;
}

static void add_i(const char *file, clr_type t, size_t n, clr_op op, int narrow,
                  clr_type rt, int64_t x) {
  add(file, t, n, op, narrow)->want = tu_int_value(rt, x);
}

static void add_u(const char *file, clr_type t, size_t n, clr_op op,
                  uint64_t x) {
  add(file, t, n, op, 0)->want = clr_int_value(CLR_ULONG, x);
}

static void add_f(const char *file, clr_type t, size_t n, clr_op op, double x) {
  add(file, t, n, op, 0)->want = tu_fp_value(t, x);
}

/* The answers of data/README.md. */
static void init_table(void) {
  add_f("float_1000.bin", CLR_FLOAT, 1000, CLR_SUM, -9.0);
  add_f("float_1000.bin", CLR_FLOAT, 1000, CLR_MIN, -8.0);
  add_f("float_1000.bin", CLR_FLOAT, 1000, CLR_MAX, 8.0);
  add_f("double_4097.bin", CLR_DOUBLE, 4097, CLR_SUM, 3.75);
  add_f("double_4097.bin", CLR_DOUBLE, 4097, CLR_MIN, -5.0);
  add_f("double_4097.bin", CLR_DOUBLE, 4097, CLR_MAX, 5.0);
  add_f("double_prod_64.bin", CLR_DOUBLE, 64, CLR_PROD, -0.125);
  add_f("double_prod_64.bin", CLR_DOUBLE, 64, CLR_MIN, -8.0);
  add_f("double_prod_64.bin", CLR_DOUBLE, 64, CLR_MAX, 8.0);
  add_i("int_65537.bin", CLR_INT, 65537, CLR_SUM, 0, CLR_LONG, 1020821504);
  add_i("int_65537.bin", CLR_INT, 65537, CLR_MIN, 0, CLR_INT, -2147453962);
  add_i("int_65537.bin", CLR_INT, 65537, CLR_MAX, 0, CLR_INT, 2147430868);
  add_i("int_big_4099.bin", CLR_INT, 4099, CLR_SUM, 0, CLR_LONG,
        INT64_C(4401773810963));
  add_i("int_big_4099.bin", CLR_INT, 4099, CLR_SUM, 1, CLR_INT, -567667437);
  add_i("int_big_4099.bin", CLR_INT, 4099, CLR_MIN, 0, CLR_INT, 0);
  add_i("int_big_4099.bin", CLR_INT, 4099, CLR_MAX, 0, CLR_INT, 2147101004);
  add_u("uint_1009.bin", CLR_UINT, 1009, CLR_SUM, UINT64_C(2137155209624));
  add_i("uint_1009.bin", CLR_UINT, 1009, CLR_MIN, 0, CLR_UINT, 0);
  add_i("uint_1009.bin", CLR_UINT, 1009, CLR_MAX, 0, CLR_UINT,
        INT64_C(4290363615));
  add_i("long_30011.bin", CLR_LONG, 30011, CLR_SUM, 0, CLR_LONG,
        INT64_C(-8993969930385276113));
  add_i("long_30011.bin", CLR_LONG, 30011, CLR_MIN, 0, CLR_LONG,
        INT64_C(-4611686018427387904));
  add_i("long_30011.bin", CLR_LONG, 30011, CLR_MAX, 0, CLR_LONG,
        INT64_C(3835378032659428666));
  add_u("ulong_1025.bin", CLR_ULONG, 1025, CLR_SUM,
        UINT64_C(18446743798294510591));
  add_u("ulong_1025.bin", CLR_ULONG, 1025, CLR_MIN,
        UINT64_C(18446744072635809791));
  add_u("ulong_1025.bin", CLR_ULONG, 1025, CLR_MAX,
        UINT64_C(18446744073709551615));
  add_i("int_last_zero_300.bin", CLR_INT, 300, CLR_AND, 0, CLR_INT, 0);
  add_i("int_last_zero_300.bin", CLR_INT, 300, CLR_OR, 0, CLR_INT, 1);
  add_i("int_last_zero_300.bin", CLR_INT, 300, CLR_MIN, 0, CLR_INT, 0);
  add_i("int_last_zero_300.bin", CLR_INT, 300, CLR_MAX, 0, CLR_INT, 7);
  add_i("int_last_zero_300.bin", CLR_INT, 300, CLR_SUM, 0, CLR_LONG, 1191);
}

/* Read a whole file; exits the test on failure (a missing data file is a
 * broken checkout, never a skip). */
static void *read_file(const char *dir, const char *name, size_t *bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    tu_die("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (size < 0)
    tu_die("cannot size %s", path);
  void *p = tu_xmalloc((size_t)size);
  if (fread(p, 1, (size_t)size, f) != (size_t)size)
    tu_die("cannot read %s", path);
  fclose(f);
  *bytes = (size_t)size;
  return p;
}

int main(int argc, char **argv) {
  const char *dir = NULL;
  const tu_option options[] = {{"--data-dir", &dir, NULL}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  if (!dir)
    tu_die("--data-dir=DIR is needed");
  init_table();
  clr_context *ctx = tu_context();
  for (size_t e = 0; e < n_table; e++) {
    const expect *x = &table[e];
    size_t bytes;
    void *data = read_file(dir, x->file, &bytes);
    size_t failed_before = tu_failed;
    TU_CHECK(bytes == x->n * clr_type_size(x->type),
             "%s: %zu bytes, want %zu elements of %s", x->file, bytes, x->n,
             clr_type_name(x->type));
    /* The CPU reference agrees with the written answer. */
    clr_reference ref;
    clr_ref_reduce(x->op, x->type, x->narrow, data, x->n, &ref);
    char gb[64], wb[64];
    TU_CHECK(tu_same(&ref.value, &x->want),
             "%s %s: CPU reference %s, written answer %s", x->file,
             clr_op_name(x->op), tu_fmt(&ref.value, gb, sizeof gb),
             tu_fmt(&x->want, wb, sizeof wb));
    for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
      tu_case c;
      memset(&c, 0, sizeof c);
      clr_options_init(&c.opt);
      c.opt.kernel = tu_reduce_kernels[ki];
      c.opt.narrow_accumulator = x->narrow;
      c.op = x->op;
      c.type = x->type;
      c.data = data;
      c.n = x->n;
      c.exact = &x->want;
      c.label = x->file;
      tu_run_host(ctx, &c);
    }
    printf("%-22s %-4s%s -> %-22s %s\n", x->file, clr_op_name(x->op),
           x->narrow ? " (narrow)" : "", tu_fmt(&x->want, wb, sizeof wb),
           tu_failed > failed_before ? "FAILED" : "ok");
    free(data);
  }
  clr_context_release(ctx);
  return tu_finish("test_data");
}
