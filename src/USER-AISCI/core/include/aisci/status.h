/**
 * @file status.h
 * @brief Status codes and error messages of libaisci_core.
 *
 * Every fallible function of the core returns an ::aisci_status. The static text of a
 * code comes from aisci_status_string(); the detail of the most recent failure on the
 * calling thread (which argument, which file, which key) from aisci_last_error().
 * The core never prints or logs: what a run reports is the adapters' business.
 * @since 0.1.0
 */
#ifndef AISCI_STATUS_H
#define AISCI_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(AISCI_BUILDING_CORE) || defined(AISCI_BUILDING_TORCH)
#define AISCI_API __attribute__((visibility("default")))
#else
#define AISCI_API
#endif

/** Result of every fallible call. AISCI_OK is zero. */
typedef enum aisci_status {
  AISCI_OK = 0,          /**< success */
  AISCI_ERR_ARG = 1,     /**< an argument is out of range or NULL where it may not be */
  AISCI_ERR_ALLOC = 2,   /**< memory allocation failed */
  AISCI_ERR_MPI = 3,     /**< an MPI call failed or communicators are inconsistent */
  AISCI_ERR_FFT = 4,     /**< FFTW planning or execution failed */
  AISCI_ERR_MODEL = 5,   /**< a model could not be evaluated */
  AISCI_ERR_IO = 6,      /**< a file is missing, unreadable or truncated */
  AISCI_ERR_FORMAT = 7,  /**< a file or model has the wrong format or missing metadata */
  AISCI_ERR_STATE = 8,   /**< the call is not valid in the object's current state */
  AISCI_ERR_MISSING = 9, /**< data needed for the call was not found (e.g. an atom tag) */
  AISCI_ERR_INTERNAL = 10 /**< an unexpected internal failure (a bug) */
} aisci_status;

/** Static, human-readable text for a status code; never NULL. @since 0.1.0 */
AISCI_API const char *aisci_status_string(aisci_status status);

/**
 * Detail of the most recent failure on the calling thread ("" if none).
 * The string is borrowed: valid until the next failing call on this thread.
 * @since 0.1.0
 */
AISCI_API const char *aisci_last_error(void);

/** Clear the calling thread's last error message. @since 0.1.0 */
AISCI_API void aisci_clear_error(void);

/**
 * Record @p status with a printf-style detail message as the calling thread's last
 * error and return @p status (so callers can write `return aisci_set_error(...)`).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_set_error(aisci_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
