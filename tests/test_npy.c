/* The .npy header reader and writer (src/cli/npy.c): headers as NumPy
 * writes them, byte for byte; every type and shape written and read
 * back; and the refusals (byte order, dtypes, Fortran order, damaged
 * headers), each with its reason.  The input plan of clreduce and
 * clreduce-mpi (cli_npy_input_plan): the bytes it asks for, what it
 * accepts, and each refusal's status and whole message. */
#include "cli.h"
#include "npy.h"
#include "test_util.h"

#include <stdio.h>
#include <string.h>

/* A header as NumPy writes it: magic, version 1.0, length, the dict
 * padded with spaces to 64 bytes in all, a newline. */
static size_t numpy_header(unsigned char *buf, const char *dict, int major) {
  size_t pre = major == 1 ? 10 : 12, k = strlen(dict);
  size_t total = (pre + k + 1 + 63) / 64 * 64, hlen = total - pre;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  if (major != 1)
    buf[10] = buf[11] = 0;
  memcpy(buf + pre, dict, k);
  memset(buf + pre + k, ' ', total - pre - k - 1);
  buf[total - 1] = '\n';
  return total;
}

static void accepts(const char *dict, int major, clr_type type, int ndim,
                    const uint64_t *shape, uint64_t count) {
  unsigned char buf[512];
  size_t len = numpy_header(buf, dict, major);
  cli_npy h;
  const char *why = cli_npy_parse(buf, len, &h);
  int ok = why == NULL && h.type == type && h.ndim == ndim &&
           h.count == count && h.data_offset == len;
  for (int k = 0; ok && k < ndim; k++)
    ok = h.shape[k] == shape[k];
  TU_CHECK(ok, "accepted: %s (v%d): %s; type %s, %d dims, %llu elements", dict,
           major, why ? why : "ok", clr_type_name(h.type), h.ndim,
           (unsigned long long)h.count);
}

static void refuses(const char *dict, const char *reason) {
  unsigned char buf[512];
  size_t len = numpy_header(buf, dict, 1);
  cli_npy h;
  const char *why = cli_npy_parse(buf, len, &h);
  TU_CHECK(why != NULL && strstr(why, reason) != NULL,
           "refused: %s: %s (want '%s')", dict, why ? why : "accepted", reason);
}

/* cli_npy_input_plan over buf (len bytes, the whole file), fed as the
 * input reader feeds it: the bytes it asks for, until it decides.
 * Returns its status; *calls, how many calls it took. */
static int plan_file(const unsigned char *buf, size_t len,
                     const cli_npy_ask *ask, cli_npy_plan *plan, int *calls) {
  size_t have = 0;
  int rc;
  *calls = 0;
  while ((rc = cli_npy_input_plan("f.npy", buf, have, have == len, ask,
                                  plan)) == 0 &&
         plan->need > have && ++*calls < 100)
    have = plan->need < len ? plan->need : len;
  ++*calls;
  return rc;
}

/* The plan of a file of header dict (version 1.0) and no data refused
 * with status and exactly msg. */
static void plan_refuses(const char *dict, const cli_npy_ask *ask, int status,
                         const char *msg) {
  unsigned char buf[512];
  size_t len = numpy_header(buf, dict, 1);
  cli_npy_plan plan;
  int calls;
  int rc = plan_file(buf, len, ask, &plan, &calls);
  TU_CHECK(rc == status && !plan.found && strcmp(plan.msg, msg) == 0,
           "plan refuses %s: status %d, '%s' (want %d, '%s')", dict, rc,
           plan.msg, status, msg);
}

/* cli_npy_input_plan: the rules and messages of clreduce's and
 * clreduce-mpi's .npy --input, one for both. */
static void input_plans(void) {
  const cli_npy_ask any = {.option = "--input"};
  const cli_npy_ask as_int = {
      .option = "--input", .type = CLR_INT, .type_by = "--type"};
  const cli_npy_ask five = {.option = "--input", .n = 5, .n_by = "--n"};
  const cli_npy_ask second = {.option = "--input2",
                              .type = CLR_FLOAT,
                              .type_by = "--input",
                              .n = 12,
                              .n_by = "--input"};
  unsigned char buf[512];
  cli_npy_plan plan;
  int calls;
  /* raw values: no magic, or a file shorter than it */
  memcpy(buf, "\x93NUMPX", 6);
  TU_CHECK(plan_file(buf, 6, &any, &plan, &calls) == 0 && !plan.found &&
               plan.need == 0,
           "no magic: raw values");
  TU_CHECK(plan_file(buf, 3, &any, &plan, &calls) == 0 && !plan.found &&
               plan.need <= 3 && calls == 4,
           "3 bytes of the magic, the file's end: raw values, read a byte "
           "at a time (%d calls)",
           calls);
  TU_CHECK(cli_npy_input_plan("f", buf, 2, 0, &any, &plan) == 0 &&
               plan.need == 3,
           "the magic's start, more to come: one byte more asked for");
  /* a header cut short */
  size_t len = numpy_header(
      buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 1);
  TU_CHECK(plan_file(buf, 8, &any, &plan, &calls) == CLI_EXIT_USAGE &&
               strcmp(plan.msg, "input file 'f.npy' ends within its header") ==
                   0,
           "a file ending in the header's length: '%s'", plan.msg);
  TU_CHECK(plan_file(buf, len - 1, &any, &plan, &calls) == CLI_EXIT_USAGE &&
               strcmp(plan.msg, "input file 'f.npy' ends within its header") ==
                   0,
           "a file ending in the header's dict: '%s'", plan.msg);
  /* accepted: the magic, the fixed part, then the header asked for */
  TU_CHECK(plan_file(buf, len, &any, &plan, &calls) == 0 && plan.found &&
               plan.npy.type == CLR_FLOAT && plan.npy.count == 12 &&
               plan.elem_size == 4 && plan.npy.data_offset == len &&
               strcmp(plan.shape, "(3, 4)") == 0 && calls <= 10,
           "a 2-D float header: found, 12 values after %zu bytes (%d calls)",
           len, calls);
  TU_CHECK(plan_file(buf, len, &second, &plan, &calls) == 0 && plan.found,
           "--input2 of --input's type and count: found");
  char d[128];
  cli_npy_describe(d, sizeof d, "f.npy", &plan);
  TU_CHECK(strcmp(d, ".npy file 'f.npy' (shape (3, 4))") == 0, "described: %s",
           d);
  cli_npy_describe(d, sizeof d, "f", NULL);
  TU_CHECK(strcmp(d, "file 'f'") == 0, "raw values described: %s", d);
  tu_section("input plans: found");

  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
               &as_int, CLI_EXIT_USAGE,
               "--input 'f.npy' holds float values (its .npy dtype), not the "
               "int of --type");
  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
               &five, CLI_EXIT_USAGE,
               "--input 'f.npy' holds 12 values (.npy shape (3, 4)), not the 5 "
               "of --n");
  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }",
               &second, CLI_EXIT_USAGE,
               "--input2 'f.npy' holds 7 values (.npy shape (7,)), not the 12 "
               "of --input");
  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }",
               &any, CLI_EXIT_USAGE,
               "--input 'f.npy' is an empty array (shape (0,))");
  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), "
               "}",
               &any, CLI_EXIT_USAGE,
               "cannot read --input 'f.npy': an array of more than 2 "
               "dimensions (clreduce reads 1-D and 2-D arrays)");
  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", &any,
               CLI_EXIT_USAGE,
               "cannot read --input 'f.npy': a 0-D array (a scalar; clreduce "
               "reads 1-D and 2-D arrays)");
  plan_refuses("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }",
               &any, CLI_EXIT_USAGE,
               "cannot read --input 'f.npy': a Fortran-ordered array (save it "
               "C-ordered: np.save(f, np.ascontiguousarray(a)))");
  plan_refuses("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }",
               &any, CLI_EXIT_USAGE,
               "cannot read --input 'f.npy': a big-endian dtype (convert it "
               "with a.astype(a.dtype.newbyteorder('<')))");
  plan_refuses("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }",
               &any, CLI_EXIT_USAGE,
               "cannot read --input 'f.npy': unsupported dtype (clreduce reads "
               "float16/32/64, int32/64 and uint32/64)");
  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (3,) ", &any,
               CLI_EXIT_USAGE,
               "cannot read --input 'f.npy': a damaged .npy header (after a "
               "value)");
  plan_refuses("{'descr': '<f4', 'fortran_order': False, 'shape': "
               "(4611686018427387904, 3), }",
               &any, CLI_EXIT_RUNTIME,
               "--input 'f.npy' (.npy shape (4611686018427387904, 3)) is too "
               "large for this machine");
  /* a header longer than 1 MiB (version 2.0's 4-byte length) */
  memcpy(buf, "\x93NUMPY\x02\x00\x00\x00\x20\x00", 12);
  TU_CHECK(plan_file(buf, 12, &any, &plan, &calls) == CLI_EXIT_USAGE &&
               strcmp(plan.msg, "cannot read --input 'f.npy': a .npy header "
                                "of 2097152 bytes (more than 1 MiB: "
                                "damaged?)") == 0,
           "a header of 2 MiB: '%s'", plan.msg);
  tu_section("input plans: refused");
}

int main(void) {
  /* What NumPy writes (np.save of np.zeros(3, np.float32): 128 bytes of
   * header, its length field 118): the writer gives the same bytes. */
  unsigned char want[128], got[128];
  size_t wl = numpy_header(
      want, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 1);
  uint64_t three = 3;
  size_t gl = cli_npy_header(got, sizeof got, CLR_FLOAT, 1, &three);
  TU_CHECK(
      gl == 128 && wl == 128 && want[8] == 118 && memcmp(got, want, wl) == 0,
      "the writer's header is NumPy's, byte for byte (%zu, %zu bytes)", gl, wl);
  /* Every type and shape, written then read back. */
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT, CLR_UINT,
                                   CLR_LONG,  CLR_ULONG,  CLR_HALF};
  static const uint64_t shapes[][3] = {
      {0, 0, 0},       {1, 0, 0}, {100000007, 0, 0},
      {1000, 1000, 0}, {2, 0, 5}, {(uint64_t)1 << 40, 3, 7}};
  static const int dims[] = {0, 1, 1, 2, 3, 3};
  for (size_t t = 0; t < sizeof types / sizeof *types; t++)
    for (size_t s = 0; s < sizeof dims / sizeof *dims; s++) {
      unsigned char b[256];
      size_t n = cli_npy_header(b, sizeof b, types[t], dims[s], shapes[s]);
      cli_npy h;
      const char *why = n ? cli_npy_parse(b, n, &h) : "not written";
      uint64_t count = 1;
      for (int k = 0; k < dims[s]; k++)
        count *= shapes[s][k];
      TU_CHECK(why == NULL && n % 64 == 0 && h.type == types[t] &&
                   h.ndim == dims[s] && h.count == count && h.data_offset == n,
               "%s, %d dims: written and read back (%s)",
               clr_type_name(types[t]), dims[s], why ? why : "ok");
    }
  tu_section("written and read back");

  uint64_t s34[] = {3, 4}, s5[] = {5}, s1[] = {7};
  accepts("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", 1,
          CLR_DOUBLE, 2, s34, 12);
  accepts("{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", 2,
          CLR_LONG, 1, s5, 5);
  accepts("{'descr': '<u4', 'fortran_order': False, 'shape': (5,), }", 3,
          CLR_UINT, 1, s5, 5);
  accepts("{'descr': '<f2', 'fortran_order': False, 'shape': (), }", 1,
          CLR_HALF, 0, NULL, 1);
  accepts("{\"descr\": \"=i4\", \"fortran_order\": False, \"shape\": (5L,)}", 1,
          CLR_INT, 1, s5, 5);
  accepts("{'shape': (7,), 'fortran_order': True, 'descr': '<u8'}", 1,
          CLR_ULONG, 1, s1, 7); /* one dimension: Fortran order is C order */
  accepts("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 1,
          CLR_FLOAT, 1, (uint64_t[]){0}, 0);
  tu_section("NumPy's headers");

  refuses("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }",
          "big-endian");
  refuses("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
          "unsupported dtype");
  refuses("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }",
          "unsupported dtype");
  refuses("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }",
          "unsupported dtype");
  refuses("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }",
          "structured");
  refuses("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }",
          "Fortran-ordered");
  refuses("{'descr': '<f4', 'shape': (3,), }", "missing");
  refuses("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
          "'shape': (3,), }",
          "repeated");
  refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
          "unknown");
  refuses("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }",
          "fortran_order");
  refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }",
          "shape");
  refuses("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x",
          "after the dict");
  refuses("{'descr': '<f4', 'fortran_order': False, 'shape': "
          "(4294967296, 4294967296), }",
          "overflows");
  refuses("{'descr': '<f4', 'fortran_order': False, 'shape': "
          "(1, 1, 1, 1, 1, 1, 1, 1, 1), }",
          "8 dimensions");
  /* the frame: magic, version, length */
  unsigned char b[128];
  size_t n = numpy_header(
      b, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 1);
  cli_npy h;
  TU_CHECK(cli_npy_parse(b, 9, &h) != NULL, "a header cut short is refused");
  TU_CHECK(cli_npy_parse(b, n - 1, &h) != NULL,
           "a header longer than the file is refused");
  b[6] = 4;
  TU_CHECK(cli_npy_parse(b, n, &h) != NULL, "version 4.0 is refused");
  b[6] = 1;
  b[1] = 'n';
  TU_CHECK(cli_npy_parse(b, n, &h) != NULL && !cli_npy_is(b, n),
           "no magic: not a .npy file");
  tu_section("refusals");
  input_plans();
  return tu_finish("test_npy");
}
