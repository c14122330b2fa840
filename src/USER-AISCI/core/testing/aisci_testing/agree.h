/**
 * @file aisci_testing/agree.h
 * @brief Clean-up of timed-out agreements, for tests.
 *
 * Not part of the public API (testing/README.md): exported by libaisci_core for its
 * tests, not installed, no compatibility promise.
 */
#ifndef AISCI_TESTING_AGREE_H
#define AISCI_TESTING_AGREE_H

#include "aisci/agree.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Frees the buffers of timed-out aisci_agree calls whose collective has completed since
 * (the other ranks joined late). Local, not collective; call it after the late ranks
 * joined, or not at all when the program aborts.
 * @return the number of timed-out collectives still pending.
 */
AISCI_API int aisci_agree_reap(void);

#ifdef __cplusplus
}
#endif
#endif
