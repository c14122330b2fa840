/**
 * @file version.h
 * @brief API version of libaisci_core (semantic versioning).
 *
 * The macros give the version of the headers a program was compiled with;
 * aisci_core_api_version() gives the version of the library it runs with. While the
 * major version is 0, a change of the minor version may break the API; a program built
 * against 0.M.x runs with a library 0.M.y. From 1.0.0 on, a program built against M.m.x
 * runs with any library M.n.y, n >= m. Every public declaration names the version that
 * introduced it (`@since`).
 * @since 0.1.0
 */
#ifndef AISCI_VERSION_H
#define AISCI_VERSION_H

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AISCI_CORE_API_VERSION_MAJOR 0 /**< @since 0.1.0 */
#define AISCI_CORE_API_VERSION_MINOR 1 /**< @since 0.1.0 */
#define AISCI_CORE_API_VERSION_PATCH 0 /**< @since 0.1.0 */
/** The three numbers as a string, "MAJOR.MINOR.PATCH". @since 0.1.0 */
#define AISCI_CORE_API_VERSION "0.1.0"

/**
 * API version of the libaisci_core this program runs with.
 * @param major, minor, patch outputs (each may be NULL).
 * @return the version as a static string "MAJOR.MINOR.PATCH".
 * @since 0.1.0
 */
AISCI_API const char *aisci_core_api_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif
#endif
