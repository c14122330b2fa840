/**
 * @file aisci_testing/pppm.h
 * @brief PPPM building blocks for tests.
 *
 * Not part of the public API (testing/README.md): exported by libaisci_core for its
 * tests and the ctypes harness, not installed, no compatibility promise.
 */
#ifndef AISCI_TESTING_PPPM_H
#define AISCI_TESTING_PPPM_H

#include "aisci/pppm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- declarations -- */
/**
 * Real-space pair kernel that completes the reciprocal part, for a pair at distance
 * @p r > 0: phi(r) = qqrd2e [erfc(g_eff r) - erfc(beta r)] / r (the second term only with
 * beta > 0). Pair energy q_i q_j phi(r); force on i: q_i q_j fpair (x_i - x_j). The
 * total energy is then sum over pairs (and periodic images within the cutoff) of the
 * pair terms + the reciprocal energy + aisci_pppm_self_energy(). Outputs optional.
 */
AISCI_API aisci_status aisci_pppm_real_pair(const aisci_pppm *pppm, double r, double *phi,
                                            double *fpair);


#ifdef __cplusplus
}
#endif
#endif
