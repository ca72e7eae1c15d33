/* binary16 codec: see half.h.  Bit manipulation only, so the result is the
 * same on every host whatever its float hardware does. */
#include "half.h"

#include <string.h>

float clr_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0x1f) { /* inf, NaN */
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) { /* normal: rebias 15 -> 127 */
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) { /* +-0 */
    bits = sign;
  } else { /* denormal: man * 2^-24, normalised for float */
    int e = -1;
    do {
      man <<= 1;
      e++;
    } while (!(man & 0x400u));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t clr_half_from_float(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  uint32_t exp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
  if (exp == 0xff) /* inf, NaN (kept quiet) */
    return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
  int e = (int)exp - 127; /* unbiased */
  if (e > 15)
    return (uint16_t)(sign | 0x7c00u);
  /* The value's bits as an integer count of 2^-24 (the smallest half
   * denormal), with the rest kept for rounding: m * 2^(e - 23). */
  uint32_t m = exp ? man | 0x800000u : man;
  int shift = e >= -14 ? 13 : 13 + (-14 - e); /* bits dropped */
  if (exp == 0 || shift > 24)
    return sign; /* far below the smallest half: +-0 */
  uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1u);
  uint32_t half_way = 1u << (shift - 1);
  if (rest > half_way || (rest == half_way && (kept & 1u)))
    kept++;
  if (e >= -14) /* normal: exponent field + mantissa, a carry rolls over */
    return (uint16_t)(sign + (((uint32_t)(e + 15) << 10) + (kept - 0x400u)));
  return (uint16_t)(sign + kept); /* denormal (a carry makes it normal) */
}
