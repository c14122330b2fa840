/**
 * @file aisci_testing/rng.h
 * @brief Counter-based random numbers (Philox-4x32-10, Salmon et al., SC'11).
 *
 * A random number is a pure function of (key, counter): thermostat noise for atom
 * `tag`, mode `k` at half-step `s` is the same whatever the MPI decomposition, and the
 * generator's whole state is the seed plus a step counter, which restart files store.
 *
 * Not part of the public API (testing/README.md): the core draws its own thermostat noise;
 * exported for tests and the ctypes harness, not installed, no compatibility promise.
 */
#ifndef AISCI_TESTING_RNG_H
#define AISCI_TESTING_RNG_H

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

/**
 * Three independent standard normal deviates for (key, counter), by the ziggurat method
 * (Marsaglia and Tsang 2000; 256 layers) on one Philox block: each deviate takes one
 * 32-bit word (8 bits layer, 1 bit sign, 23 bits position), accepted at once in 99.3 %
 * of the cases; the rare rejections and the tail draw further words from Philox blocks
 * with the same counter and a derived key (one stream per deviate), so the numbers stay
 * a pure function of (seed, c_hi, c_lo). About 5x cheaper than aisci_rng_normal4() (no
 * log or sin/cos on the fast path); the thermostat's O step uses it.
 * Deterministic on every machine with the same libm (the layer tables use exp and log).
 */
AISCI_API void aisci_rng_normal3(uint64_t seed, uint64_t c_hi, uint64_t c_lo, double out[3]);

/**
 * aisci_rng_normal3() for n low counters at once: out[3 i .. 3 i + 2] are the deviates of
 * (seed, c_hi, c_lo[i]), bit for bit; several Philox blocks are computed together, which
 * is about 3x faster per block than one at a time.
 */
AISCI_API void aisci_rng_normal3_n(uint64_t seed, uint64_t c_hi, int n, const int64_t *c_lo,
                                   double *out);

#ifdef __cplusplus
}
#endif
#endif
