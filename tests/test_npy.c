/* The .npy header reader and writer (src/cli/npy.c): headers as NumPy
 * writes them, byte for byte; every type and shape written and read
 * back; and the refusals (byte order, dtypes, Fortran order, damaged
 * headers), each with its reason. */
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
  return tu_finish("test_npy");
}
