/* Status codes and the thread-local last-error message. */
#include "aisci/status.h"
#include "aisci/version.h"

#include <stdarg.h>
#include <stdio.h>

#define AISCI_ERROR_LEN 1024

static _Thread_local char last_error[AISCI_ERROR_LEN];

const char *aisci_status_string(aisci_status status)
{
  switch (status) {
    case AISCI_OK: return "success";
    case AISCI_ERR_ARG: return "invalid argument";
    case AISCI_ERR_ALLOC: return "out of memory";
    case AISCI_ERR_MPI: return "MPI error";
    case AISCI_ERR_FFT: return "FFT error";
    case AISCI_ERR_MODEL: return "model evaluation error";
    case AISCI_ERR_IO: return "file input/output error";
    case AISCI_ERR_FORMAT: return "invalid file or model format";
    case AISCI_ERR_STATE: return "invalid state for this call";
    case AISCI_ERR_MISSING: return "required data not found";
    case AISCI_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char *aisci_last_error(void) { return last_error; }

void aisci_clear_error(void) { last_error[0] = '\0'; }

aisci_status aisci_set_error(aisci_status status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof(last_error), fmt, ap);
  va_end(ap);
  return status;
}

const char *aisci_core_api_version(int *major, int *minor, int *patch)
{
  if (major) *major = AISCI_CORE_API_VERSION_MAJOR;
  if (minor) *minor = AISCI_CORE_API_VERSION_MINOR;
  if (patch) *patch = AISCI_CORE_API_VERSION_PATCH;
  return AISCI_CORE_API_VERSION;
}
