/* Philox-4x32-10 counter-based generator and Gaussian deviates built on it. */
#include "aisci/rng.h"

#include <math.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u /* golden ratio */
#define PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

static inline void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
  uint64_t p = (uint64_t) a * (uint64_t) b;
  *hi = (uint32_t) (p >> 32);
  *lo = (uint32_t) p;
}

void aisci_philox4x32(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(PHILOX_M0, c0, &hi0, &lo0);
    mulhilo(PHILOX_M1, c2, &hi1, &lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0;
    uint32_t n1 = lo1;
    uint32_t n2 = hi0 ^ c3 ^ k1;
    uint32_t n3 = lo0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/* uniform in (0, 1], never 0 so that log() is finite */
static inline double u01(uint32_t a) { return ((double) a + 1.0) * (1.0 / 4294967296.0); }

void aisci_rng_normal4(uint64_t seed, uint64_t c_hi, uint64_t c_lo, double out[4])
{
  const uint32_t key[2] = {(uint32_t) seed, (uint32_t) (seed >> 32)};
  const uint32_t ctr[4] = {(uint32_t) c_lo, (uint32_t) (c_lo >> 32), (uint32_t) c_hi,
                           (uint32_t) (c_hi >> 32)};
  uint32_t r[4];
  aisci_philox4x32(ctr, key, r);
  const double two_pi = 6.283185307179586476925286766559;
  for (int i = 0; i < 2; i++) {
    double radius = sqrt(-2.0 * log(u01(r[2 * i])));
    double angle = two_pi * u01(r[2 * i + 1]);
    out[2 * i] = radius * cos(angle);
    out[2 * i + 1] = radius * sin(angle);
  }
}
