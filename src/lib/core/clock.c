/* The library's clocks: the host's monotonic clock and the spans between
 * OpenCL profiling events.  Below everything that times its work. */
#include "internal.h"

#include <time.h>

/* From a's `from` time to b's `to` time, in ms (0 without profiling). */
static double event_span(cl_event a, cl_profiling_info from, cl_event b,
                         cl_profiling_info to) {
  cl_ulong t0 = 0, t1 = 0;
  if (!a || !b)
    return 0.0;
  if (clGetEventProfilingInfo(a, from, sizeof t0, &t0, NULL) != CL_SUCCESS ||
      clGetEventProfilingInfo(b, to, sizeof t1, &t1, NULL) != CL_SUCCESS)
    return 0.0;
  return t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
}

double clr_event_ms(cl_event start, cl_event end) {
  return event_span(start, CL_PROFILING_COMMAND_START, end,
                    CL_PROFILING_COMMAND_END);
}

double clr_event_gap_ms(cl_event before, cl_event after) {
  return event_span(before, CL_PROFILING_COMMAND_END, after,
                    CL_PROFILING_COMMAND_START);
}

double clr_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
