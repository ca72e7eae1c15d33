/* IEEE 754 binary16 ("half"), decoded and encoded on the CPU without any
 * device or compiler support, for the references and the generated data
 * of clr_type CLR_HALF (the kernels read it with OpenCL's vload_half). */
#ifndef CLR_CHECK_HALF_H
#define CLR_CHECK_HALF_H

#include <stdint.h>

/* The value of the binary16 bits h (exact in float: every half is a
 * float), NaN payloads kept in the top bits. */
float clr_half_to_float(uint16_t h);
/* x rounded to the nearest binary16 (ties to even), overflowing to
 * +-inf, NaN kept NaN (quiet). */
uint16_t clr_half_from_float(float x);

#endif
