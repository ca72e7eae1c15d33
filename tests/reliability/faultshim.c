/* faultshim: OpenCL interposer for fault injection and object accounting.
 * See faultshim.h for how to use it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faultshim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FS_API __attribute__((visibility("default")))

static pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const fs_names[FS_COUNT] = {
#define FS_X_NAME(name) #name,
    FS_FUNCTIONS(FS_X_NAME)
#undef FS_X_NAME
};

FS_API const char *fs_name(fs_fn fn) {
  return (unsigned)fn < FS_COUNT ? fs_names[fn] : NULL;
}

FS_API int fs_lookup(const char *name) {
  for (int i = 0; i < FS_COUNT; i++)
    if (strcmp(name, fs_names[i]) == 0)
      return i;
  return -1;
}

/* ------------------------------------------------------------ faults */

static unsigned long fs_call_count[FS_COUNT];
static int fs_armed = 0;
static fs_fn fs_armed_fn;
static unsigned long fs_armed_nth, fs_armed_seen, fs_fired_count;
static cl_int fs_armed_err;
static int fs_armed_sticky;

static void arm_locked(fs_fn fn, unsigned long nth, cl_int err, int sticky) {
  fs_armed = 1;
  fs_armed_fn = fn;
  fs_armed_nth = nth ? nth : 1;
  fs_armed_err = err;
  fs_armed_sticky = sticky;
  fs_armed_seen = 0;
  fs_fired_count = 0;
}

/* CLR_FAULT="name:nth:err[:sticky]" for LD_PRELOAD use. */
static void parse_env(void) {
  const char *spec = getenv("CLR_FAULT");
  if (!spec || !*spec)
    return;
  char name[128];
  unsigned long nth = 0;
  long err = 0;
  char mode[16] = "";
  int got = sscanf(spec, "%127[^:]:%lu:%ld:%15s", name, &nth, &err, mode);
  int fn = got >= 3 ? fs_lookup(name) : -1;
  if (fn < 0) {
    fprintf(stderr, "faultshim: bad CLR_FAULT '%s' (want name:nth:err)\n",
            spec);
    abort();
  }
  arm_locked((fs_fn)fn, nth, (cl_int)err, strcmp(mode, "sticky") == 0);
}

static pthread_once_t fs_once = PTHREAD_ONCE_INIT;

/* Count a call of fn; nonzero (with *err) when it must fail. */
static int fs_hit(fs_fn fn, cl_int *err) {
  int fail = 0;
  pthread_once(&fs_once, parse_env);
  pthread_mutex_lock(&fs_lock);
  fs_call_count[fn]++;
  if (fs_armed && fs_armed_fn == fn) {
    fs_armed_seen++;
    if (fs_armed_seen == fs_armed_nth ||
        (fs_armed_sticky && fs_armed_seen > fs_armed_nth)) {
      fail = 1;
      fs_fired_count++;
      *err = fs_armed_err;
    }
  }
  pthread_mutex_unlock(&fs_lock);
  return fail;
}

FS_API void fs_reset_counts(void) {
  pthread_once(&fs_once, parse_env);
  pthread_mutex_lock(&fs_lock);
  memset(fs_call_count, 0, sizeof fs_call_count);
  fs_armed = 0;
  fs_fired_count = 0;
  pthread_mutex_unlock(&fs_lock);
}

FS_API unsigned long fs_calls(fs_fn fn) {
  unsigned long c;
  pthread_mutex_lock(&fs_lock);
  c = (unsigned)fn < FS_COUNT ? fs_call_count[fn] : 0;
  pthread_mutex_unlock(&fs_lock);
  return c;
}

FS_API void fs_arm(fs_fn fn, unsigned long nth, cl_int err, int sticky) {
  pthread_once(&fs_once, parse_env);
  pthread_mutex_lock(&fs_lock);
  arm_locked(fn, nth, err, sticky);
  pthread_mutex_unlock(&fs_lock);
}

FS_API void fs_disarm(void) {
  pthread_mutex_lock(&fs_lock);
  fs_armed = 0;
  pthread_mutex_unlock(&fs_lock);
}

FS_API unsigned long fs_fired(void) {
  unsigned long f;
  pthread_mutex_lock(&fs_lock);
  f = fs_fired_count;
  pthread_mutex_unlock(&fs_lock);
  return f;
}

/* ------------------------------------------------------------ gate */

static int fs_gate_on;
static cl_event fs_gate_event; /* NULL: nothing held back */

/* A function pointer of no particular type: ISO C converts between
 * function pointer types, but not from dlsym's object pointer. */
typedef void (*fs_fnptr)(void);
static fs_fnptr real_sym(const char *name);

FS_API void fs_gate_open(void) {
  static cl_int (*set_status)(cl_event, cl_int);
  static cl_int (*release)(cl_event);
  if (!set_status) {
    set_status = (cl_int(*)(cl_event, cl_int))real_sym("clSetUserEventStatus");
    release = (cl_int(*)(cl_event))real_sym("clReleaseEvent");
  }
  pthread_mutex_lock(&fs_lock);
  cl_event e = fs_gate_event;
  fs_gate_event = NULL;
  pthread_mutex_unlock(&fs_lock);
  if (e) {
    set_status(e, CL_COMPLETE);
    release(e);
  }
}

FS_API void fs_gate(int on) {
  if (!on)
    fs_gate_open();
  pthread_mutex_lock(&fs_lock);
  fs_gate_on = on;
  pthread_mutex_unlock(&fs_lock);
}

FS_API int fs_gate_pending(void) {
  int p;
  pthread_mutex_lock(&fs_lock);
  p = fs_gate_event != NULL;
  pthread_mutex_unlock(&fs_lock);
  return p;
}

/* Drop the reference a gated enqueue held on the gate. */
static void release_gate(cl_event gate) {
  static cl_int (*release)(cl_event);
  if (!release)
    release = (cl_int(*)(cl_event))real_sym("clReleaseEvent");
  release(gate);
}

/* A wait list with the gate's user event appended (*owned to free with
 * end_gate), the gate retained while the enqueue uses it. */
static void gate_list(cl_command_queue q, cl_uint *n, const cl_event **list,
                      cl_event **owned) {
  static cl_int (*retain)(cl_event);
  static cl_event (*create_user)(cl_context, cl_int *);
  static cl_int (*queue_info)(cl_command_queue, cl_command_queue_info, size_t,
                              void *, size_t *);
  *owned = NULL;
  pthread_mutex_lock(&fs_lock);
  int on = fs_gate_on;
  pthread_mutex_unlock(&fs_lock);
  if (!on)
    return;
  if (!create_user) {
    retain = (cl_int(*)(cl_event))real_sym("clRetainEvent");
    create_user =
        (cl_event(*)(cl_context, cl_int *))real_sym("clCreateUserEvent");
    queue_info = (cl_int(*)(cl_command_queue, cl_command_queue_info, size_t,
                            void *, size_t *))real_sym("clGetCommandQueueInfo");
  }
  /* Under the lock: two threads enqueueing at once must share one gate
   * (a second would never be opened). */
  pthread_mutex_lock(&fs_lock);
  cl_event gate = fs_gate_event;
  if (!gate) {
    cl_context c = NULL;
    cl_int err = queue_info(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL);
    if (err == CL_SUCCESS)
      gate = create_user(c, &err);
    if (err != CL_SUCCESS)
      gate = NULL;
    fs_gate_event = gate;
  }
  if (gate) /* another thread's blocking call may open it meanwhile */
    retain(gate);
  pthread_mutex_unlock(&fs_lock);
  if (!gate)
    return;
  cl_event *l = malloc((*n + 1) * sizeof *l);
  if (!l) {
    release_gate(gate);
    return;
  }
  for (cl_uint i = 0; i < *n; i++)
    l[i] = (*list)[i];
  l[*n] = gate;
  *owned = l;
  *list = l;
  (*n)++;
}

/* After a gated enqueue: its list freed, its gate released (the list's
 * last event: gate_list appends it). */
static void end_gate_n(cl_event *owned, cl_uint n) {
  if (!owned)
    return;
  release_gate(owned[n - 1]);
  free(owned);
}

/* Declares the gated wait list of an enqueue (n, list: its parameters). */
#define GATE(q, n, list)                                                       \
  cl_event *gate_owned_;                                                       \
  gate_list((q), &(n), &(list), &gate_owned_)
/* A command that may block: a blocking one opens the gate (it waits for
 * everything before it) and is not held back itself. */
#define GATE_UNLESS_BLOCKING(blocking, q, n, list)                             \
  cl_event *gate_owned_ = NULL;                                                \
  if (blocking)                                                                \
    fs_gate_open();                                                            \
  else                                                                         \
    gate_list((q), &(n), &(list), &gate_owned_)
#define GATE_END() end_gate_n(gate_owned_, num_events_in_wait_list)

/* ------------------------------------------------------------ objects */

enum { K_CONTEXT, K_QUEUE, K_MEM, K_PROGRAM, K_KERNEL, K_EVENT, K_COUNT };
static const char *const kind_names[K_COUNT] = {
    "cl_context", "cl_command_queue", "cl_mem",
    "cl_program", "cl_kernel",        "cl_event"};

typedef struct fs_obj {
  const void *handle;
  int kind;
  long refs;
  fs_fn creator;
  unsigned long serial; /* nth object created, for messages */
} fs_obj;

static fs_obj *fs_objs;
static size_t fs_nobjs, fs_capobjs;
static unsigned long fs_serial;
static size_t fs_bad;

static fs_obj *find_locked(const void *h) {
  for (size_t i = fs_nobjs; i-- > 0;)
    if (fs_objs[i].handle == h)
      return &fs_objs[i];
  return NULL;
}

static void track_new(const void *h, int kind, fs_fn creator) {
  if (!h)
    return;
  pthread_mutex_lock(&fs_lock);
  fs_obj *o = find_locked(h);
  if (!o) {
    if (fs_nobjs == fs_capobjs) {
      size_t cap = fs_capobjs ? 2 * fs_capobjs : 256;
      fs_obj *n = realloc(fs_objs, cap * sizeof *n);
      if (!n) {
        pthread_mutex_unlock(&fs_lock);
        fprintf(stderr, "faultshim: out of memory\n");
        abort();
      }
      fs_objs = n;
      fs_capobjs = cap;
    }
    o = &fs_objs[fs_nobjs++];
  }
  o->handle = h;
  o->kind = kind;
  o->refs = 1;
  o->creator = creator;
  o->serial = ++fs_serial;
  pthread_mutex_unlock(&fs_lock);
}

static void track_retain(const void *h) {
  pthread_mutex_lock(&fs_lock);
  fs_obj *o = find_locked(h);
  if (o)
    o->refs++;
  else
    fs_bad++;
  pthread_mutex_unlock(&fs_lock);
}

/* Before the real release: drop one reference.  0 if h was unknown. */
static int track_release(const void *h) {
  pthread_mutex_lock(&fs_lock);
  fs_obj *o = find_locked(h);
  if (!o)
    fs_bad++;
  else if (--o->refs == 0)
    *o = fs_objs[--fs_nobjs];
  pthread_mutex_unlock(&fs_lock);
  return o != NULL;
}

/* The real release failed: give the reference back. */
static void track_unrelease(const void *h, int kind) {
  pthread_mutex_lock(&fs_lock);
  fs_obj *o = find_locked(h);
  pthread_mutex_unlock(&fs_lock);
  if (o)
    track_retain(h);
  else
    track_new(h, kind, FS_COUNT);
}

/* A counter read under the lock. */
static size_t read_locked(const size_t *counter) {
  pthread_mutex_lock(&fs_lock);
  size_t n = *counter;
  pthread_mutex_unlock(&fs_lock);
  return n;
}

FS_API size_t fs_live(void) { return read_locked(&fs_nobjs); }

FS_API size_t fs_bad_releases(void) { return read_locked(&fs_bad); }

FS_API size_t fs_describe_live(char *buf, size_t size) {
  size_t at = 0, n;
  if (size)
    buf[0] = '\0';
  pthread_mutex_lock(&fs_lock);
  n = fs_nobjs;
  for (size_t i = 0; i < fs_nobjs && at + 1 < size; i++) {
    const fs_obj *o = &fs_objs[i];
    int w = snprintf(buf + at, size - at,
                     "%s %p (object #%lu, from %s, %ld reference%s left)\n",
                     kind_names[o->kind], o->handle, o->serial,
                     o->creator < FS_COUNT ? fs_names[o->creator] : "?",
                     o->refs, o->refs == 1 ? "" : "s");
    if (w < 0)
      break;
    at += (size_t)w;
  }
  pthread_mutex_unlock(&fs_lock);
  return n;
}

/* CLR_FAULT_REPORT=FILE: the summary at exit (LD_PRELOAD use). */
__attribute__((destructor)) static void fs_report_at_exit(void) {
  const char *path = getenv("CLR_FAULT_REPORT");
  if (!path || !*path)
    return;
  FILE *f = fopen(path, "w");
  if (!f)
    return;
  char live[8192];
  size_t n = fs_describe_live(live, sizeof live);
  fprintf(f, "live %zu\nbad_releases %zu\nfired %lu\n", n, fs_bad_releases(),
          fs_fired());
  for (int i = 0; i < FS_COUNT; i++)
    fprintf(f, "calls %s %lu\n", fs_names[i], fs_calls((fs_fn)i));
  for (char *line = strtok(live, "\n"); line; line = strtok(NULL, "\n"))
    fprintf(f, "leak %s\n", line);
  fclose(f);
}

/* ------------------------------------------------------------ forwarding */

static fs_fnptr real_sym(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  fs_fnptr f;
  if (!p) {
    fprintf(stderr, "faultshim: no real %s: %s\n", name, dlerror());
    abort();
  }
  /* POSIX guarantees the object pointer holds a function's address. */
  memcpy(&f, &p, sizeof f);
  return f;
}

/* Declares `real`, the next definition of name (resolved once). */
#define REAL(name)                                                             \
  static __typeof__(&name) real_##name##_;                                     \
  __typeof__(&name) real = __atomic_load_n(&real_##name##_, __ATOMIC_ACQUIRE); \
  if (!real) {                                                                 \
    real = (__typeof__(&name))real_sym(#name);                                 \
    __atomic_store_n(&real_##name##_, real, __ATOMIC_RELEASE);                 \
  }

/* ------------------------------------------------------------ threads */

static int fs_thr_armed, fs_thr_sticky;
static unsigned long fs_thr_nth, fs_thr_seen, fs_thr_fired;

FS_API void fs_threads_arm(unsigned long nth, int sticky) {
  pthread_mutex_lock(&fs_lock);
  fs_thr_armed = 1;
  fs_thr_nth = nth ? nth : 1;
  fs_thr_sticky = sticky;
  fs_thr_seen = 0;
  fs_thr_fired = 0;
  pthread_mutex_unlock(&fs_lock);
}

FS_API void fs_threads_disarm(void) {
  pthread_mutex_lock(&fs_lock);
  fs_thr_armed = 0;
  pthread_mutex_unlock(&fs_lock);
}

FS_API unsigned long fs_thread_calls(void) {
  pthread_mutex_lock(&fs_lock);
  unsigned long n = fs_thr_seen;
  pthread_mutex_unlock(&fs_lock);
  return n;
}

FS_API unsigned long fs_threads_fired(void) {
  pthread_mutex_lock(&fs_lock);
  unsigned long n = fs_thr_fired;
  pthread_mutex_unlock(&fs_lock);
  return n;
}

/* Whether code at `at` lies in libclreduce.so (not its MPI layer). */
static int in_library(const void *at) {
  Dl_info info;
  if (!dladdr(at, &info) || !info.dli_fname)
    return 0;
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return strncmp(base, "libclreduce.so", 14) == 0;
}

FS_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                          void *(*start)(void *), void *arg) {
  REAL(pthread_create);
  if (in_library(__builtin_return_address(0))) {
    int fail = 0;
    pthread_mutex_lock(&fs_lock);
    fs_thr_seen++;
    if (fs_thr_armed && (fs_thr_seen == fs_thr_nth ||
                         (fs_thr_sticky && fs_thr_seen > fs_thr_nth))) {
      fs_thr_fired++;
      fail = 1;
    }
    pthread_mutex_unlock(&fs_lock);
    if (fail)
      return EAGAIN;
  }
  return real(thread, attr, start, arg);
}

/* A function returning cl_int: fail before calling the real one. */
#define FAIL_RET(name)                                                         \
  do {                                                                         \
    cl_int e_;                                                                 \
    if (fs_hit(FS_##name, &e_))                                                \
      return e_;                                                               \
  } while (0)

/* A function returning an object through errcode_ret. */
#define FAIL_OBJ(name, errp)                                                   \
  do {                                                                         \
    cl_int e_;                                                                 \
    if (fs_hit(FS_##name, &e_)) {                                              \
      if (errp)                                                                \
        *(errp) = e_;                                                          \
      return NULL;                                                             \
    }                                                                          \
  } while (0)

/* An enqueue that may return an event. */
#define TRACK_EVENT(name, ret, event)                                          \
  do {                                                                         \
    if ((ret) == CL_SUCCESS && (event) && *(event))                            \
      track_new(*(event), K_EVENT, FS_##name);                                 \
  } while (0)

/* Most wrappers below are generated by one of the macros that follow,
 * from the function's parameter list (params) and the same names as the
 * argument list of the real call (args). */

/* A call that creates nothing and returns cl_int: fails when armed, else
 * passes through. */
#define FS_PASS(name, params, args)                                            \
  FS_API cl_int name params {                                                  \
    REAL(name);                                                                \
    FAIL_RET(name);                                                            \
    return real args;                                                          \
  }

/* clGet...Info(object, param_name, param_value_size, param_value,
 * param_value_size_ret). */
#define FS_INFO(name, object_type, info_type)                                  \
  FS_PASS(name,                                                                \
          (object_type object, info_type param_name, size_t param_value_size,  \
           void *param_value, size_t *param_value_size_ret),                   \
          (object, param_name, param_value_size, param_value,                  \
           param_value_size_ret))

/* clGet...Info(object, device, param_name, ...): about object on device. */
#define FS_DEVICE_INFO(name, object_type, info_type)                           \
  FS_PASS(name,                                                                \
          (object_type object, cl_device_id device, info_type param_name,      \
           size_t param_value_size, void *param_value,                         \
           size_t *param_value_size_ret),                                      \
          (object, device, param_name, param_value_size, param_value,          \
           param_value_size_ret))

/* A call that returns a new object of kind, with its error through
 * errcode_ret (the last parameter): the object is counted. */
#define FS_CREATE(type, name, kind, params, args)                              \
  FS_API type name params {                                                    \
    REAL(name);                                                                \
    FAIL_OBJ(name, errcode_ret);                                               \
    type obj_ = real args;                                                     \
    track_new(obj_, kind, FS_##name);                                          \
    return obj_;                                                               \
  }

/* An enqueue (command_queue, ..., num_events_in_wait_list,
 * event_wait_list, event): held back by the gate unless blocking is true,
 * its event counted. */
#define FS_ENQUEUE(name, blocking, params, args)                               \
  FS_API cl_int name params {                                                  \
    REAL(name);                                                                \
    FAIL_RET(name);                                                            \
    GATE_UNLESS_BLOCKING(blocking, command_queue, num_events_in_wait_list,     \
                         event_wait_list);                                     \
    cl_int r = real args;                                                      \
    TRACK_EVENT(name, r, event);                                               \
    GATE_END();                                                                \
    return r;                                                                  \
  }

/* The wait list, when an enqueue has nothing else. */
#define FS_WAIT_PARAMS                                                         \
  cl_uint num_events_in_wait_list, const cl_event *event_wait_list,            \
      cl_event *event
#define FS_WAIT_ARGS num_events_in_wait_list, event_wait_list, event

/* ------------------------------------------------------------ platform */

FS_PASS(clGetPlatformIDs,
        (cl_uint num_entries, cl_platform_id *platforms,
         cl_uint *num_platforms),
        (num_entries, platforms, num_platforms))
FS_INFO(clGetPlatformInfo, cl_platform_id, cl_platform_info)
FS_PASS(clGetDeviceIDs,
        (cl_platform_id platform, cl_device_type device_type,
         cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices),
        (platform, device_type, num_entries, devices, num_devices))
FS_INFO(clGetDeviceInfo, cl_device_id, cl_device_info)

/* ------------------------------------------------------------ objects */

FS_CREATE(
    cl_context, clCreateContext, K_CONTEXT,
    (const cl_context_properties *properties, cl_uint num_devices,
     const cl_device_id *devices,
     void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
     void *user_data, cl_int *errcode_ret),
    (properties, num_devices, devices, pfn_notify, user_data, errcode_ret))
FS_CREATE(cl_command_queue, clCreateCommandQueue, K_QUEUE,
          (cl_context context, cl_device_id device,
           cl_command_queue_properties properties, cl_int *errcode_ret),
          (context, device, properties, errcode_ret))
FS_INFO(clGetCommandQueueInfo, cl_command_queue, cl_command_queue_info)
FS_CREATE(cl_mem, clCreateBuffer, K_MEM,
          (cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
           cl_int *errcode_ret),
          (context, flags, size, host_ptr, errcode_ret))
FS_CREATE(cl_mem, clCreateSubBuffer, K_MEM,
          (cl_mem buffer, cl_mem_flags flags,
           cl_buffer_create_type buffer_create_type,
           const void *buffer_create_info, cl_int *errcode_ret),
          (buffer, flags, buffer_create_type, buffer_create_info, errcode_ret))
FS_INFO(clGetMemObjectInfo, cl_mem, cl_mem_info)
FS_CREATE(cl_program, clCreateProgramWithSource, K_PROGRAM,
          (cl_context context, cl_uint count, const char **strings,
           const size_t *lengths, cl_int *errcode_ret),
          (context, count, strings, lengths, errcode_ret))
FS_CREATE(cl_program, clCreateProgramWithBinary, K_PROGRAM,
          (cl_context context, cl_uint num_devices,
           const cl_device_id *device_list, const size_t *lengths,
           const unsigned char **binaries, cl_int *binary_status,
           cl_int *errcode_ret),
          (context, num_devices, device_list, lengths, binaries, binary_status,
           errcode_ret))
FS_PASS(clBuildProgram,
        (cl_program program, cl_uint num_devices,
         const cl_device_id *device_list, const char *options,
         void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data),
        (program, num_devices, device_list, options, pfn_notify, user_data))
FS_INFO(clGetProgramInfo, cl_program, cl_program_info)
FS_DEVICE_INFO(clGetProgramBuildInfo, cl_program, cl_program_build_info)
FS_CREATE(cl_kernel, clCreateKernel, K_KERNEL,
          (cl_program program, const char *kernel_name, cl_int *errcode_ret),
          (program, kernel_name, errcode_ret))

FS_API cl_int clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                       cl_kernel *kernels,
                                       cl_uint *num_kernels_ret) {
  REAL(clCreateKernelsInProgram);
  FAIL_RET(clCreateKernelsInProgram);
  cl_int r = real(program, num_kernels, kernels, num_kernels_ret);
  if (r == CL_SUCCESS && kernels)
    for (cl_uint i = 0; i < num_kernels; i++)
      track_new(kernels[i], K_KERNEL, FS_clCreateKernelsInProgram);
  return r;
}

FS_PASS(clSetKernelArg,
        (cl_kernel kernel, cl_uint arg_index, size_t arg_size,
         const void *arg_value),
        (kernel, arg_index, arg_size, arg_value))
FS_DEVICE_INFO(clGetKernelWorkGroupInfo, cl_kernel, cl_kernel_work_group_info)
FS_CREATE(cl_event, clCreateUserEvent, K_EVENT,
          (cl_context context, cl_int *errcode_ret), (context, errcode_ret))

/* ------------------------------------------------------------ events */

FS_API cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list) {
  REAL(clWaitForEvents);
  FAIL_RET(clWaitForEvents);
  fs_gate_open();
  return real(num_events, event_list);
}

FS_INFO(clGetEventProfilingInfo, cl_event, cl_profiling_info)

FS_API cl_int clFinish(cl_command_queue command_queue) {
  REAL(clFinish);
  FAIL_RET(clFinish);
  fs_gate_open();
  return real(command_queue);
}

FS_PASS(clFlush, (cl_command_queue command_queue), (command_queue))

/* ------------------------------------------------------------ enqueues */

FS_ENQUEUE(clEnqueueNDRangeKernel, CL_FALSE,
           (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
            const size_t *global_work_offset, const size_t *global_work_size,
            const size_t *local_work_size, FS_WAIT_PARAMS),
           (command_queue, kernel, work_dim, global_work_offset,
            global_work_size, local_work_size, FS_WAIT_ARGS))
FS_ENQUEUE(clEnqueueTask, CL_FALSE,
           (cl_command_queue command_queue, cl_kernel kernel, FS_WAIT_PARAMS),
           (command_queue, kernel, FS_WAIT_ARGS))
FS_ENQUEUE(clEnqueueReadBuffer, blocking_read,
           (cl_command_queue command_queue, cl_mem buffer,
            cl_bool blocking_read, size_t offset, size_t size, void *ptr,
            FS_WAIT_PARAMS),
           (command_queue, buffer, blocking_read, offset, size, ptr,
            FS_WAIT_ARGS))
FS_ENQUEUE(clEnqueueWriteBuffer, blocking_write,
           (cl_command_queue command_queue, cl_mem buffer,
            cl_bool blocking_write, size_t offset, size_t size, const void *ptr,
            FS_WAIT_PARAMS),
           (command_queue, buffer, blocking_write, offset, size, ptr,
            FS_WAIT_ARGS))
FS_ENQUEUE(clEnqueueCopyBuffer, CL_FALSE,
           (cl_command_queue command_queue, cl_mem src_buffer,
            cl_mem dst_buffer, size_t src_offset, size_t dst_offset,
            size_t size, FS_WAIT_PARAMS),
           (command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size,
            FS_WAIT_ARGS))
FS_ENQUEUE(clEnqueueFillBuffer, CL_FALSE,
           (cl_command_queue command_queue, cl_mem buffer, const void *pattern,
            size_t pattern_size, size_t offset, size_t size, FS_WAIT_PARAMS),
           (command_queue, buffer, pattern, pattern_size, offset, size,
            FS_WAIT_ARGS))
FS_ENQUEUE(clEnqueueMarkerWithWaitList, CL_FALSE,
           (cl_command_queue command_queue, FS_WAIT_PARAMS),
           (command_queue, FS_WAIT_ARGS))
FS_ENQUEUE(clEnqueueBarrierWithWaitList, CL_FALSE,
           (cl_command_queue command_queue, FS_WAIT_PARAMS),
           (command_queue, FS_WAIT_ARGS))

FS_API void *clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer,
                                cl_bool blocking_map, cl_map_flags map_flags,
                                size_t offset, size_t size,
                                cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list,
                                cl_event *event, cl_int *errcode_ret) {
  REAL(clEnqueueMapBuffer);
  FAIL_OBJ(clEnqueueMapBuffer, errcode_ret);
  GATE_UNLESS_BLOCKING(blocking_map, command_queue, num_events_in_wait_list,
                       event_wait_list);
  cl_int err = CL_SUCCESS;
  void *p = real(command_queue, buffer, blocking_map, map_flags, offset, size,
                 num_events_in_wait_list, event_wait_list, event, &err);
  if (errcode_ret)
    *errcode_ret = err;
  TRACK_EVENT(clEnqueueMapBuffer, err, event);
  GATE_END();
  return p;
}

FS_API cl_int clEnqueueUnmapMemObject(cl_command_queue command_queue,
                                      cl_mem memobj, void *mapped_ptr,
                                      cl_uint num_events_in_wait_list,
                                      const cl_event *event_wait_list,
                                      cl_event *event) {
  REAL(clEnqueueUnmapMemObject);
  cl_int fail_err;
  if (fs_hit(FS_clEnqueueUnmapMemObject, &fail_err)) {
    /* The failure is reported, but the region is still unmapped: a
     * mapping nobody can undo keeps the buffer (and its context) alive
     * inside PoCL whatever the caller does, which LeakSanitizer would
     * then blame on the test.  No event is returned. */
    real(command_queue, memobj, mapped_ptr, num_events_in_wait_list,
         event_wait_list, NULL);
    return fail_err;
  }
  GATE(command_queue, num_events_in_wait_list, event_wait_list);
  cl_int r = real(command_queue, memobj, mapped_ptr, num_events_in_wait_list,
                  event_wait_list, event);
  TRACK_EVENT(clEnqueueUnmapMemObject, r, event);
  GATE_END();
  return r;
}

/* ------------------------------------------------------ retain / release */

#define RETAIN_RELEASE(type, suffix, kind)                                     \
  FS_API cl_int clRetain##suffix(type obj) {                                   \
    REAL(clRetain##suffix);                                                    \
    cl_int r = real(obj);                                                      \
    if (r == CL_SUCCESS)                                                       \
      track_retain(obj);                                                       \
    return r;                                                                  \
  }                                                                            \
  FS_API cl_int clRelease##suffix(type obj) {                                  \
    REAL(clRelease##suffix);                                                   \
    int known = track_release(obj);                                            \
    cl_int r = real(obj);                                                      \
    if (r != CL_SUCCESS && known)                                              \
      track_unrelease(obj, kind);                                              \
    return r;                                                                  \
  }

RETAIN_RELEASE(cl_context, Context, K_CONTEXT)
RETAIN_RELEASE(cl_command_queue, CommandQueue, K_QUEUE)
RETAIN_RELEASE(cl_mem, MemObject, K_MEM)
RETAIN_RELEASE(cl_program, Program, K_PROGRAM)
RETAIN_RELEASE(cl_kernel, Kernel, K_KERNEL)
RETAIN_RELEASE(cl_event, Event, K_EVENT)
