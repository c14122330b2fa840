/**
 * @file rng.h
 * @brief Counter-based random numbers (Philox-4x32-10, Salmon et al., SC'11).
 *
 * A random number is a pure function of (key, counter): thermostat noise for atom
 * `tag`, mode `k` at half-step `s` is the same whatever the MPI decomposition, and the
 * generator's whole state is the seed plus a step counter, which restart files store.
 * @since 0.1
 */
#ifndef AISCI_RNG_H
#define AISCI_RNG_H

#include <stdint.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Philox-4x32-10 block: 4 uniform 32-bit words from a 128-bit counter and 64-bit key. */
AISCI_API void aisci_philox4x32(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

/**
 * Four independent standard normal deviates for (key, counter) via Box-Muller on the
 * Philox output. Deterministic: the same inputs give the same numbers on every machine.
 */
AISCI_API void aisci_rng_normal4(uint64_t seed, uint64_t c_hi, uint64_t c_lo, double out[4]);

#ifdef __cplusplus
}
#endif
#endif
