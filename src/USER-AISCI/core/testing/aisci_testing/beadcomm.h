/**
 * @file aisci_testing/beadcomm.h
 * @brief Counters and helpers of the bead exchange for tests.
 *
 * Not part of the public API (testing/README.md): exported by libaisci_core for its
 * tests and the ctypes harness, not installed, no compatibility promise.
 */
#ifndef AISCI_TESTING_BEADCOMM_H
#define AISCI_TESTING_BEADCOMM_H

#include "aisci/beadcomm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- declarations -- */
/**
 * Sum of @p n doubles over all ranks of all partitions (collective over the universe).
 * AISCI_ERR_ARG, before any communication, if @p n < 0 or, with n > 0, @p in or @p out is NULL.
 */
AISCI_API aisci_status aisci_beadcomm_sum_universe(aisci_beadcomm *bc, int n, const double *in,
                                                   double *out);

/** Number of (atom, bead) values this rank receives point-to-point (diagnostics). */
AISCI_API int aisci_beadcomm_nfixups(const aisci_beadcomm *bc);

/** Number of times the exchange plan was rebuilt (diagnostics). */
AISCI_API long aisci_beadcomm_nrebuilds(const aisci_beadcomm *bc);

#ifdef __cplusplus
}
#endif
#endif
