/* Platform and device discovery: listing, and choosing the device a
 * context runs on (by index or by a case-insensitive name substring). */
#include "internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

static void info_string(cl_device_id d, cl_device_info what, char *buf,
                        size_t size) {
  buf[0] = '\0';
  if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
    buf[0] = '\0';
  buf[size - 1] = '\0';
}

cl_int clr_describe_device(cl_platform_id p, cl_device_id d, unsigned pi,
                           unsigned di, clr_device_desc *out) {
  memset(out, 0, sizeof *out);
  out->platform_index = pi;
  out->device_index = di;
  if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof out->platform_name,
                        out->platform_name, NULL) != CL_SUCCESS)
    out->platform_name[0] = '\0';
  out->platform_name[sizeof out->platform_name - 1] = '\0';
  info_string(d, CL_DEVICE_NAME, out->device_name, sizeof out->device_name);
  info_string(d, CL_DEVICE_VERSION, out->device_version,
              sizeof out->device_version);
  info_string(d, CL_DRIVER_VERSION, out->driver_version,
              sizeof out->driver_version);
  cl_device_type type = 0;
  cl_uint cu = 0;
  cl_ulong gmem = 0, alloc = 0, lmem = 0;
  size_t wg = 0;
  cl_device_fp_config fp64 = 0;
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  cl_int limits[4] = {
      clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gmem, &gmem, NULL),
      clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc,
                      NULL),
      clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL),
      clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL)};
  clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
  out->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  out->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  out->has_fp64 = fp64 != 0;
  out->compute_units = cu ? cu : 1;
  out->global_mem_size = gmem;
  out->max_alloc_size = alloc;
  out->local_mem_size = lmem;
  out->max_work_group_size = wg ? wg : 1;
  for (int i = 0; i < 4; i++)
    if (limits[i] != CL_SUCCESS)
      return limits[i];
  return CL_SUCCESS;
}

/* A selector is an index when it is all digits. */
static int parse_index(const char *s, unsigned *out) {
  if (!s || !*s)
    return 0;
  char *end = NULL;
  unsigned long v = strtoul(s, &end, 10);
  if (*end != '\0' || !isdigit((unsigned char)s[0]) || v > 1000000UL)
    return 0;
  *out = (unsigned)v;
  return 1;
}

/* Discovery is serialised across the process: PoCL initialises its
 * devices on the first clGetDeviceIDs and, while it does, answers other
 * threads CL_DEVICE_NOT_FOUND, so contexts created by several threads at
 * once would fail to find a device. */
static pthread_mutex_t discovery_lock = PTHREAD_MUTEX_INITIALIZER;

/* The platforms (0 when none or the query fails; *err, may be NULL, its
 * status). */
static cl_uint get_platforms_err(cl_platform_id *ids, cl_int *err) {
  cl_uint count = 0;
  pthread_mutex_lock(&discovery_lock);
  cl_int e = clGetPlatformIDs(MAX_PLATFORMS, ids, &count);
  pthread_mutex_unlock(&discovery_lock);
  if (err)
    *err = e;
  if (e != CL_SUCCESS)
    return 0;
  return count > MAX_PLATFORMS ? MAX_PLATFORMS : count;
}

static cl_uint get_platforms(cl_platform_id *ids) {
  return get_platforms_err(ids, NULL);
}

/* The devices of platform p (0 when none or the query fails; *err, may be
 * NULL, its status). */
static cl_uint get_devices_err(cl_platform_id p, cl_device_id *ids,
                               cl_int *err) {
  cl_uint count = 0;
  pthread_mutex_lock(&discovery_lock);
  cl_int e = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &count);
  pthread_mutex_unlock(&discovery_lock);
  if (err)
    *err = e;
  if (e != CL_SUCCESS)
    return 0;
  return count > MAX_DEVICES ? MAX_DEVICES : count;
}

static cl_uint get_devices(cl_platform_id p, cl_device_id *ids) {
  return get_devices_err(p, ids, NULL);
}

/* Why the matching platforms gave no device at all: the first failed
 * device query, its platform and status, and for PoCL the usual cause
 * (it fails to initialise, answering CL_DEVICE_NOT_FOUND, when it cannot
 * create its kernel cache directory). */
static void no_device_detail(cl_platform_id p, cl_int err, char *detail,
                             size_t detail_size) {
  char name[128] = "";
  if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL) !=
      CL_SUCCESS)
    name[0] = '\0';
  name[sizeof name - 1] = '\0';
  int pocl = strstr(name, "Portable Computing Language") != NULL;
  snprintf(detail, detail_size,
           "no OpenCL device found: the device query (clGetDeviceIDs) of "
           "platform '%s' failed with %s (%d)%s",
           name, clr_cl_error_name(err), (int)err,
           pocl ? "; PoCL fails so when it cannot create its cache "
                  "directory: make $POCL_CACHE_DIR (else $XDG_CACHE_HOME, "
                  "else $HOME/.cache) a writable directory"
                : "; is the device's driver installed and usable by this "
                  "user?");
}

CLR_API clr_status clr_list_devices(clr_device_desc *out, size_t cap,
                                    size_t *count) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np = get_platforms(plats);
  size_t total = 0;
  if (np == 0) {
    if (count)
      *count = 0;
    return CLR_ERR_NO_PLATFORM;
  }
  for (cl_uint p = 0; p < np; p++) {
    cl_device_id devs[MAX_DEVICES];
    cl_uint nd = get_devices(plats[p], devs);
    for (cl_uint d = 0; d < nd; d++, total++)
      if (out && total < cap)
        clr_describe_device(plats[p], devs[d], p, d, &out[total]);
  }
  if (count)
    *count = total;
  return CLR_OK;
}

static int platform_matches(cl_platform_id p, unsigned index, const char *sel) {
  unsigned want;
  if (!sel || !*sel)
    return 1;
  if (parse_index(sel, &want))
    return want == index;
  char name[256] = "";
  if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL) !=
      CL_SUCCESS)
    name[0] = '\0';
  name[sizeof name - 1] = '\0';
  return clr_contains_nocase(name, sel);
}

/* The first device that device selects on the platforms platform selects
 * (NULL or "": all), both by index or by name.  Without a device selector,
 * the first GPU, else the first device: this makes the platform rule of
 * clr_platform_choose.  *out_index receives the platform's index. */
static clr_status find_device(const char *platform, const char *device,
                              cl_uint *out_index, cl_platform_id *out_platform,
                              cl_device_id *out_device, char *detail,
                              size_t detail_size) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_int plat_err = CL_SUCCESS;
  cl_uint np = get_platforms_err(plats, &plat_err);
  if (np == 0) {
    snprintf(detail, detail_size,
             "no OpenCL platform found (clGetPlatformIDs: %s; is an ICD such "
             "as PoCL installed?)",
             plat_err == CL_SUCCESS ? "no platforms"
                                    : clr_cl_error_name(plat_err));
    return CLR_ERR_NO_PLATFORM;
  }
  /* Two rounds without a device selector: a GPU first, then anything. */
  unsigned dev_index;
  int by_index = parse_index(device, &dev_index);
  int any_platform = 0;
  cl_uint total = 0;            /* devices of the matching platforms */
  cl_platform_id failed = NULL; /* the first whose query failed */
  cl_int failed_err = CL_SUCCESS;
  for (int round = 0; round < 2; round++) {
    for (cl_uint p = 0; p < np; p++) {
      if (!platform_matches(plats[p], p, platform))
        continue;
      any_platform = 1;
      cl_device_id devs[MAX_DEVICES];
      cl_int err = CL_SUCCESS;
      cl_uint nd = get_devices_err(plats[p], devs, &err);
      total += nd;
      if (err != CL_SUCCESS && !failed) {
        failed = plats[p];
        failed_err = err;
      }
      for (cl_uint d = 0; d < nd; d++) {
        int ok;
        if (device && *device) {
          if (by_index) {
            ok = d == dev_index;
          } else {
            char name[256] = "";
            if (clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof name, name,
                                NULL) != CL_SUCCESS)
              name[0] = '\0';
            name[sizeof name - 1] = '\0';
            ok = clr_contains_nocase(name, device);
          }
        } else if (round == 0) {
          cl_device_type type = 0;
          ok = clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type,
                               NULL) == CL_SUCCESS &&
               (type & CL_DEVICE_TYPE_GPU) != 0;
        } else {
          ok = 1;
        }
        if (ok) {
          *out_index = p;
          *out_platform = plats[p];
          *out_device = devs[d];
          return CLR_OK;
        }
      }
    }
    if (device && *device)
      break; /* an explicit selector needs no second round */
  }
  if (!any_platform) {
    snprintf(detail, detail_size, "no OpenCL platform matches '%s'",
             platform ? platform : "");
    return CLR_ERR_NO_PLATFORM;
  }
  if (total == 0 && failed) {
    no_device_detail(failed, failed_err, detail, detail_size);
    return CLR_ERR_NO_DEVICE;
  }
  snprintf(detail, detail_size, "no OpenCL device matches '%s'%s%s",
           device && *device ? device : "(any)",
           platform && *platform ? " on platform " : "",
           platform && *platform ? platform : "");
  return CLR_ERR_NO_DEVICE;
}

void clr_device_indices(cl_platform_id platform, cl_device_id device,
                        unsigned *platform_index, unsigned *device_index) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np = get_platforms(plats);
  for (cl_uint p = 0; p < np; p++) {
    if (plats[p] != platform)
      continue;
    *platform_index = p;
    cl_device_id devs[MAX_DEVICES];
    cl_uint nd = get_devices(plats[p], devs);
    for (cl_uint d = 0; d < nd; d++)
      if (devs[d] == device)
        *device_index = d;
  }
}

clr_status clr_select_device(const char *platform, const char *device,
                             cl_platform_id *out_platform,
                             cl_device_id *out_device, char *detail,
                             size_t detail_size) {
  cl_uint index;
  return find_device(platform, device, &index, out_platform, out_device, detail,
                     detail_size);
}

CLR_API clr_status clr_platform_choose(const char *platform, unsigned *index,
                                       char *detail, size_t detail_size) {
  cl_uint p = 0;
  cl_platform_id plat;
  cl_device_id dev;
  if (!detail)
    detail_size = 0; /* snprintf(NULL, 0, ...) writes nothing */
  if (detail_size)
    detail[0] = '\0';
  if (!index) {
    snprintf(detail, detail_size, "index must not be NULL");
    return CLR_ERR_INVALID_ARGUMENT;
  }
  clr_status st =
      find_device(platform, NULL, &p, &plat, &dev, detail, detail_size);
  if (st == CLR_OK)
    *index = p;
  return st;
}
