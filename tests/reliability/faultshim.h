/* faultshim: an OpenCL interposer for fault injection and object
 * accounting.
 *
 * faultshim.c defines the OpenCL entry points the library uses
 * (clCreateBuffer, clBuildProgram, clEnqueueNDRangeKernel, ...).  Each
 * forwards to the real one (dlsym(RTLD_NEXT)), unless a fault is armed
 * for it, in which case it returns the chosen error without calling the
 * real function.  Every OpenCL object the wrappers see created (contexts,
 * queues, buffers, programs, kernels, events) is counted, and so is every
 * clRetain* / clRelease* on it, so a test can ask which objects are still
 * alive.
 *
 * Two ways to use it:
 *   - linked into a test executable with export_dynamic (meson) or
 *     -rdynamic: the executable's definitions interpose the calls that
 *     libclreduce.so makes, and the test drives the fs_* functions below;
 *   - as a shared library in LD_PRELOAD (no code change), driven by the
 *     environment:
 *       CLR_FAULT="clCreateBuffer:3:-4"  fail the 3rd call of
 *                                        clCreateBuffer with -4
 *       CLR_FAULT="clEnqueueNDRangeKernel:1:-5:sticky"  fail every call
 *                                        from the 1st on
 *       CLR_FAULT_REPORT=FILE            at exit, write "live N" (objects
 *                                        still alive), "fired 0|1", one
 *                                        "calls NAME COUNT" line per
 *                                        function and one "leak ..." line
 *                                        per live object to FILE.
 */
#ifndef CLR_FAULTSHIM_H
#define CLR_FAULTSHIM_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>

/* X(name): every function that can be made to fail. */
#define FS_FUNCTIONS(X)                                                        \
  X(clGetPlatformIDs)                                                          \
  X(clGetPlatformInfo)                                                         \
  X(clGetDeviceIDs)                                                            \
  X(clGetDeviceInfo)                                                           \
  X(clCreateContext)                                                           \
  X(clCreateCommandQueue)                                                      \
  X(clGetCommandQueueInfo)                                                     \
  X(clCreateBuffer)                                                            \
  X(clCreateSubBuffer)                                                         \
  X(clGetMemObjectInfo)                                                        \
  X(clCreateProgramWithSource)                                                 \
  X(clCreateProgramWithBinary)                                                 \
  X(clBuildProgram)                                                            \
  X(clGetProgramInfo)                                                          \
  X(clGetProgramBuildInfo)                                                     \
  X(clCreateKernel)                                                            \
  X(clCreateKernelsInProgram)                                                  \
  X(clSetKernelArg)                                                            \
  X(clGetKernelWorkGroupInfo)                                                  \
  X(clCreateUserEvent)                                                         \
  X(clWaitForEvents)                                                           \
  X(clGetEventProfilingInfo)                                                   \
  X(clFinish)                                                                  \
  X(clFlush)                                                                   \
  X(clEnqueueNDRangeKernel)                                                    \
  X(clEnqueueTask)                                                             \
  X(clEnqueueReadBuffer)                                                       \
  X(clEnqueueWriteBuffer)                                                      \
  X(clEnqueueCopyBuffer)                                                       \
  X(clEnqueueFillBuffer)                                                       \
  X(clEnqueueMapBuffer)                                                        \
  X(clEnqueueUnmapMemObject)                                                   \
  X(clEnqueueMarkerWithWaitList)                                               \
  X(clEnqueueBarrierWithWaitList)

typedef enum fs_fn {
#define FS_X_ENUM(name) FS_##name,
  FS_FUNCTIONS(FS_X_ENUM)
#undef FS_X_ENUM
      FS_COUNT
} fs_fn;

/* "clCreateBuffer"; NULL for an invalid index. */
const char *fs_name(fs_fn fn);
/* Index of a name, or -1. */
int fs_lookup(const char *name);

/* Forget call counts and any armed fault (the object table stays). */
void fs_reset_counts(void);
/* Calls of fn since the last fs_reset_counts (failed ones included). */
unsigned long fs_calls(fs_fn fn);

/* Make the nth call of fn from now on (1 = the next one) fail with err;
 * with sticky, that call and every later one fail. */
void fs_arm(fs_fn fn, unsigned long nth, cl_int err, int sticky);
void fs_disarm(void);
/* Number of calls the armed fault has failed so far. */
unsigned long fs_fired(void);

/* The gate: while on, every command enqueued outside a blocking call is
 * held back (a user event the shim adds to its wait list) until the next
 * blocking call (clFinish, clWaitForEvents, a blocking read / write /
 * map), which opens it first.  So when a library call returns,
 * fs_gate_pending() says deterministically whether it left commands in
 * the queue that it never waited for: commands that may still read or
 * write the caller's host arrays after the call has returned. */
void fs_gate(int on);
/* Nonzero when commands are held back (enqueued after the last wait). */
int fs_gate_pending(void);
/* Let the held-back commands run. */
void fs_gate_open(void);

/* Threads: make the nth pthread_create that libclreduce itself calls
 * (the staging's helpers, src/lib/crew.c) fail with EAGAIN from now on
 * (1 = the next one); with sticky, every later one too.  Threads the
 * OpenCL platform starts are never failed.  Only where the shim is linked
 * into the test executable (its pthread_create interposes the library's).
 * fs_thread_calls counts the library's calls since fs_threads_arm. */
void fs_threads_arm(unsigned long nth, int sticky);
void fs_threads_disarm(void);
unsigned long fs_thread_calls(void);
unsigned long fs_threads_fired(void);

/* Objects alive (created and not yet released to zero). */
size_t fs_live(void);
/* Objects released more often than created or retained (or released
 * without being seen created): double releases. */
size_t fs_bad_releases(void);
/* Describe the live objects (one per line) into buf; returns fs_live(). */
size_t fs_describe_live(char *buf, size_t size);

#endif
