/* NumPy .npy headers (npy.h): a strict reader of the dict numpy writes,
 * and the writer of version 1.0 headers. */
#include "npy.h"

#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* The dtypes clreduce reads: kind, size, type. */
static const struct {
  char kind;
  unsigned size;
  clr_type type;
} dtypes[] = {{'f', 4, CLR_FLOAT}, {'f', 8, CLR_DOUBLE}, {'i', 4, CLR_INT},
              {'u', 4, CLR_UINT},  {'i', 8, CLR_LONG},   {'u', 8, CLR_ULONG},
              {'f', 2, CLR_HALF}};

static int little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

int cli_npy_is(const unsigned char *buf, size_t len) {
  return len >= sizeof magic && memcmp(buf, magic, sizeof magic) == 0;
}

/* A cursor over the header's text [p, end). */
typedef struct {
  const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
    c->p++;
}

static int take(cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A quoted string ('...' or "...", no escapes) into out (cap bytes). */
static int string(cursor *c, char *out, size_t cap) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return 0;
  char q = *c->p++;
  size_t k = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\\' || k + 1 >= cap)
      return 0;
    out[k++] = *c->p++;
  }
  if (c->p >= c->end)
    return 0;
  c->p++;
  out[k] = '\0';
  return 1;
}

static int word(cursor *c, const char *w) {
  skip_ws(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
    c->p += n;
    return 1;
  }
  return 0;
}

/* A non-negative decimal integer (Python 2's L suffix allowed). */
static int integer(cursor *c, uint64_t *v) {
  skip_ws(c);
  const char *s = c->p;
  uint64_t x = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    unsigned d = (unsigned)(*c->p - '0');
    if (x > (UINT64_MAX - d) / 10)
      return 0;
    x = x * 10 + d;
    c->p++;
  }
  if (c->p == s)
    return 0;
  if (c->p < c->end && *c->p == 'L')
    c->p++;
  *v = x;
  return 1;
}

static const char *parse_descr(const char *d, clr_type *type) {
  char order = '=';
  if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
    order = *d++;
  char kind = *d;
  if (kind != 'f' && kind != 'i' && kind != 'u')
    return "unsupported dtype (clreduce reads float16/32/64, int32/64 and "
           "uint32/64)";
  unsigned size = 0;
  for (d++; *d >= '0' && *d <= '9' && size < 100; d++)
    size = size * 10 + (unsigned)(*d - '0');
  if (*d != '\0')
    return "unsupported dtype (clreduce reads float16/32/64, int32/64 and "
           "uint32/64)";
  for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++)
    if (dtypes[k].kind == kind && dtypes[k].size == size) {
      int little = little_endian();
      if ((order == '<' && !little) || (order == '>' && little))
        return little ? "a big-endian dtype (convert it with "
                        "a.astype(a.dtype.newbyteorder('<')))"
                      : "a little-endian dtype on a big-endian machine";
      if (order == '|')
        return "unsupported dtype (clreduce reads float16/32/64, int32/64 "
               "and uint32/64)";
      *type = dtypes[k].type;
      return NULL;
    }
  return "unsupported dtype (clreduce reads float16/32/64, int32/64 and "
         "uint32/64)";
}

const char *cli_npy_parse(const unsigned char *buf, size_t len, cli_npy *out) {
  memset(out, 0, sizeof *out);
  if (!cli_npy_is(buf, len) || len < 10)
    return "not a .npy file (no \\x93NUMPY magic)";
  unsigned major = buf[6];
  size_t hlen, start;
  if (major == 1) {
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12)
      return "a damaged .npy header (cut short)";
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
           (size_t)buf[11] << 24;
    start = 12;
  } else {
    return "an unknown .npy format version (1.0, 2.0 and 3.0 are read)";
  }
  if (hlen > len - start)
    return "a damaged .npy header (longer than the file)";
  cursor c = {(const char *)buf + start, (const char *)buf + start + hlen};
  /* the dict, then spaces and a newline */
  while (c.end > c.p && (c.end[-1] == '\n' || c.end[-1] == ' ' ||
                         c.end[-1] == '\0' || c.end[-1] == '\t'))
    c.end--;
  for (const char *q = c.p; q < c.end; q++)
    if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
      return "a damaged .npy header (not text)";
  int seen_descr = 0, seen_order = 0, seen_shape = 0, fortran = 0;
  if (!take(&c, '{'))
    return "a damaged .npy header (no dict)";
  while (!take(&c, '}')) {
    char key[32], val[32];
    if (!string(&c, key, sizeof key) || !take(&c, ':'))
      return "a damaged .npy header (a key)";
    if (strcmp(key, "descr") == 0 && !seen_descr) {
      skip_ws(&c);
      if (c.p < c.end && *c.p == '[')
        return "unsupported dtype (a structured array)";
      if (!string(&c, val, sizeof val))
        return "a damaged .npy header ('descr')";
      const char *why = parse_descr(val, &out->type);
      if (why)
        return why;
      seen_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0 && !seen_order) {
      if (word(&c, "True"))
        fortran = 1;
      else if (!word(&c, "False"))
        return "a damaged .npy header ('fortran_order')";
      seen_order = 1;
    } else if (strcmp(key, "shape") == 0 && !seen_shape) {
      if (!take(&c, '('))
        return "a damaged .npy header ('shape')";
      out->count = 1;
      while (!take(&c, ')')) {
        uint64_t d;
        if (out->ndim == CLI_NPY_MAX_DIMS)
          return "an array of more than 8 dimensions";
        if (!integer(&c, &d))
          return "a damaged .npy header ('shape')";
        out->shape[out->ndim++] = d;
        if (d != 0 && out->count > UINT64_MAX / d)
          return "a shape whose element count overflows";
        out->count *= d;
        if (!take(&c, ',')) {
          if (!take(&c, ')'))
            return "a damaged .npy header ('shape')";
          break;
        }
      }
      seen_shape = 1;
    } else {
      return "a damaged .npy header (an unknown or repeated key)";
    }
    if (!take(&c, ',')) {
      if (!take(&c, '}'))
        return "a damaged .npy header (after a value)";
      break;
    }
  }
  skip_ws(&c);
  if (c.p != c.end)
    return "a damaged .npy header (text after the dict)";
  if (!seen_descr || !seen_order || !seen_shape)
    return "a damaged .npy header (descr, fortran_order or shape missing)";
  int dims_over_one = 0;
  for (int k = 0; k < out->ndim; k++)
    dims_over_one += out->shape[k] > 1;
  if (fortran && dims_over_one > 1)
    return "a Fortran-ordered array (save it C-ordered: "
           "np.save(f, np.ascontiguousarray(a)))";
  out->data_offset = start + hlen;
  return NULL;
}

/* A refusal: its line into plan->msg, and status. */
static int refuse(cli_npy_plan *plan, int status, const char *fmt, ...)
    CLI_PRINTF(3, 4);
static int refuse(cli_npy_plan *plan, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(plan->msg, sizeof plan->msg, fmt, ap);
  va_end(ap);
  plan->found = 0;
  return status;
}

int cli_npy_input_plan(const char *path, const unsigned char *buf, size_t len,
                       int at_end, const cli_npy_ask *ask, cli_npy_plan *plan) {
  memset(plan, 0, sizeof *plan);
  size_t m = len < sizeof magic ? len : sizeof magic;
  if (memcmp(buf, magic, m) != 0)
    return 0; /* raw values */
  if (len < sizeof magic) {
    if (!at_end)
      plan->need = len + 1; /* a byte at a time: raw data may be what comes */
    return 0;               /* (a short file: raw) */
  }
  /* the magic, the version, the header's length (2 bytes; 4 from 2.0) */
  size_t fixed = len >= 7 && buf[6] >= 2 ? 12 : 10;
  if (len >= fixed) {
    size_t hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    if (fixed == 12)
      hlen |= (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    if (hlen > ((size_t)1 << 20))
      return refuse(plan, CLI_EXIT_USAGE,
                    "cannot read %s '%s': a .npy header of %zu bytes (more "
                    "than 1 MiB: damaged?)",
                    ask->option, path, hlen);
    plan->need = len < fixed + hlen ? fixed + hlen : 0;
  } else {
    plan->need = fixed;
  }
  if (plan->need) {
    if (at_end)
      return refuse(plan, CLI_EXIT_USAGE,
                    "input file '%s' ends within its header", path);
    return 0;
  }
  cli_npy *f = &plan->npy;
  const char *why = cli_npy_parse(buf, len, f);
  if (!why && f->data_offset != len)
    why = "a damaged .npy header";
  if (!why && (f->ndim < 1 || f->ndim > 2))
    why = f->ndim ? "an array of more than 2 dimensions (clreduce reads "
                    "1-D and 2-D arrays)"
                  : "a 0-D array (a scalar; clreduce reads 1-D and 2-D "
                    "arrays)";
  if (why)
    return refuse(plan, CLI_EXIT_USAGE, "cannot read %s '%s': %s", ask->option,
                  path, why);
  if (f->ndim == 2)
    snprintf(plan->shape, sizeof plan->shape, "(%llu, %llu)",
             (unsigned long long)f->shape[0], (unsigned long long)f->shape[1]);
  else
    snprintf(plan->shape, sizeof plan->shape, "(%llu,)",
             (unsigned long long)f->shape[0]);
  if (ask->type_by && f->type != ask->type)
    return refuse(plan, CLI_EXIT_USAGE,
                  "%s '%s' holds %s values (its .npy dtype), not the %s of %s",
                  ask->option, path, clr_type_name(f->type),
                  clr_type_name(ask->type), ask->type_by);
  if (f->count == 0)
    return refuse(plan, CLI_EXIT_USAGE, "%s '%s' is an empty array (shape %s)",
                  ask->option, path, plan->shape);
  if (ask->n_by && f->count != ask->n)
    return refuse(plan, CLI_EXIT_USAGE,
                  "%s '%s' holds %llu values (.npy shape %s), not the %llu of "
                  "%s",
                  ask->option, path, (unsigned long long)f->count, plan->shape,
                  (unsigned long long)ask->n, ask->n_by);
  plan->elem_size = clr_type_size(f->type);
  if (f->count > SIZE_MAX / plan->elem_size)
    return refuse(plan, CLI_EXIT_RUNTIME,
                  "%s '%s' (.npy shape %s) is too large for this machine",
                  ask->option, path, plan->shape);
  plan->found = 1;
  return 0;
}

void cli_npy_describe(char *buf, size_t size, const char *path,
                      const cli_npy_plan *plan) {
  if (!plan || !plan->found)
    snprintf(buf, size, "file '%s'", path);
  else if (plan->npy.ndim == 2)
    snprintf(buf, size, ".npy file '%s' (shape %s)", path, plan->shape);
  else
    snprintf(buf, size, ".npy file '%s'", path);
}

size_t cli_npy_header(unsigned char *buf, size_t cap, clr_type type, int ndim,
                      const uint64_t *shape) {
  const char *descr = NULL;
  char d[8];
  for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++)
    if (dtypes[k].type == type) {
      snprintf(d, sizeof d, "%c%c%u", little_endian() ? '<' : '>',
               dtypes[k].kind, dtypes[k].size);
      descr = d;
    }
  if (!descr || ndim < 0 || ndim > CLI_NPY_MAX_DIMS)
    return 0;
  char dict[400];
  int k = snprintf(dict, sizeof dict,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  /* as Python writes a tuple: (), (3,), (3, 4) */
  for (int i = 0; i < ndim; i++)
    k += snprintf(dict + k, sizeof dict - (size_t)k, "%s%llu%s", i ? ", " : "",
                  (unsigned long long)shape[i], ndim == 1 ? "," : "");
  k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
  size_t total = 10 + (size_t)k + 1; /* magic, version, length, dict, \n */
  total = (total + 63) / 64 * 64;
  if (total > cap || total - 10 > 0xffff)
    return 0;
  memcpy(buf, magic, sizeof magic);
  buf[6] = 1;
  buf[7] = 0;
  size_t hlen = total - 10;
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  memcpy(buf + 10, dict, (size_t)k);
  memset(buf + 10 + k, ' ', total - 10 - (size_t)k - 1);
  buf[total - 1] = '\n';
  return total;
}
