/* PILE-L O step and the Philox-4x32-10 generator under it.
 * - Philox: the Random123 known-answer vectors (tests/kat_vectors of the Random123
 *   distribution, checked against several independent implementations) and a reference
 *   written here from the definition in Salmon et al., SC'11, on many random inputs.
 * - O step: exact one-step decay c1 = exp(-gamma_k h) (same noise with and without an
 *   initial velocity), friction values, the stationary Maxwell-Boltzmann distribution at
 *   P kT / M_k (mean, variance per mass, kurtosis), independence of the noise across
 *   modes, components, tags and counters, and independence of the MPI decomposition. */
#include "aisci_testing/pimd.h"
#include "aisci_testing/rng.h"
#include "aisci_test.h"
#include "pimd_values.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846


/* ---- Philox-4x32-10 from its definition: 10 rounds of a Feistel-like bijection;
 * round r uses the key k + r * (W0, W1) (mod 2^32); multipliers M0, M1 ---- */
static void philox_ref(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
  const uint64_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  const uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  uint32_t x[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
  for (uint32_t r = 0; r < 10; r++) {
    const uint32_t k0 = key[0] + r * W0, k1 = key[1] + r * W1;
    const uint64_t p0 = M0 * x[0], p1 = M1 * x[2];
    const uint32_t y0 = (uint32_t) (p1 >> 32) ^ x[1] ^ k0;
    const uint32_t y1 = (uint32_t) p1;
    const uint32_t y2 = (uint32_t) (p0 >> 32) ^ x[3] ^ k1;
    const uint32_t y3 = (uint32_t) p0;
    x[0] = y0;
    x[1] = y1;
    x[2] = y2;
    x[3] = y3;
  }
  memcpy(out, x, sizeof(x));
}

static void test_philox(void)
{
  /* counter[4], key[2] -> expected[4] (Random123 kat_vectors, "philox4x32 10" lines) */
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
       0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1},
  };
  for (int t = 0; t < 3; t++) {
    uint32_t out[4], ref[4];
    aisci_philox4x32(kat[t], kat[t] + 4, out);
    philox_ref(kat[t], kat[t] + 4, ref);
    CHECK(memcmp(out, kat[t] + 6, sizeof(out)) == 0,
          "Philox KAT %d: got %08x %08x %08x %08x, expected %08x %08x %08x %08x", t, out[0], out[1],
          out[2], out[3], kat[t][6], kat[t][7], kat[t][8], kat[t][9]);
    CHECK(memcmp(ref, kat[t] + 6, sizeof(ref)) == 0, "the test's own reference fails KAT %d", t);
  }
  int mismatches = 0;
  for (int t = 0; t < 10000; t++) {
    uint32_t c[4], k[2], a[4], b[4];
    for (int i = 0; i < 4; i++) c[i] = (uint32_t) aisci_test_rand64();
    for (int i = 0; i < 2; i++) k[i] = (uint32_t) aisci_test_rand64();
    aisci_philox4x32(c, k, a);
    philox_ref(c, k, b);
    mismatches += memcmp(a, b, sizeof(a)) != 0;
  }
  CHECK(mismatches == 0, "%d of 10000 random Philox blocks differ from the reference", mismatches);
}

/* Gaussian deviates: deterministic, mean 0, variance 1, kurtosis 3, uncorrelated lanes */
static void test_normal4(void)
{
  double a[4], b[4];
  aisci_rng_normal4(7, 3, 11, a);
  aisci_rng_normal4(7, 3, 11, b);
  CHECK(memcmp(a, b, sizeof(a)) == 0, "rng_normal4 is not deterministic");
  aisci_rng_normal4(8, 3, 11, b);
  CHECK(memcmp(a, b, sizeof(a)) != 0, "rng_normal4 ignores the seed");
  aisci_rng_normal4(7, 4, 11, b);
  CHECK(memcmp(a, b, sizeof(a)) != 0, "rng_normal4 ignores the high counter");
  aisci_rng_normal4(7, 3, 12, b);
  CHECK(memcmp(a, b, sizeof(a)) != 0, "rng_normal4 ignores the low counter");
  const int N = 200000;
  double s1 = 0, s2 = 0, s4 = 0, c01 = 0, c23 = 0, c02 = 0, maxabs = 0;
  int finite = 1;
  for (int i = 0; i < N; i++) {
    double z[4];
    aisci_rng_normal4(12345, 1, (uint64_t) i, z);
    for (int l = 0; l < 4; l++) {
      finite &= isfinite(z[l]);
      s1 += z[l];
      s2 += z[l] * z[l];
      s4 += z[l] * z[l] * z[l] * z[l];
      maxabs = fmax(maxabs, fabs(z[l]));
    }
    c01 += z[0] * z[1];
    c23 += z[2] * z[3];
    c02 += z[0] * z[2];
  }
  const double n = 4.0 * N, mean = s1 / n, var = s2 / n, kurt = s4 / n / (var * var);
  CHECK(finite, "rng_normal4 produced a non-finite value");
  CHECK(fabs(mean) < 5.0 / sqrt(n), "normal4 mean %g", mean);
  CHECK(fabs(var - 1.0) < 5.0 * sqrt(2.0 / n), "normal4 variance %g", var);
  CHECK(fabs(kurt - 3.0) < 5.0 * sqrt(24.0 / n), "normal4 kurtosis %g", kurt);
  CHECK(fabs(c01 / N) < 5.0 / sqrt(N) && fabs(c23 / N) < 5.0 / sqrt(N) && fabs(c02 / N) < 5.0 / sqrt(N),
        "normal4 lanes correlated: %g %g %g", c01 / N, c23 / N, c02 / N);
  CHECK(maxabs > 4.0 && maxabs < 7.0, "normal4 extreme value %g implausible for %g draws", maxabs, n);
}

/* Ziggurat deviates (the O step's noise): deterministic, every input matters, moments,
 * tail frequencies against the normal distribution (P(|z| > t) for t = 1, 2, 3, 3.6542 =
 * the ziggurat's tail start, 4), a binned chi-square over [-4, 4], uncorrelated lanes. */
static void test_normal3(void)
{
  double a[3], b[3];
  aisci_rng_normal3(7, 3, 11, a);
  aisci_rng_normal3(7, 3, 11, b);
  CHECK(memcmp(a, b, sizeof(a)) == 0, "rng_normal3 is not deterministic");
  aisci_rng_normal3(8, 3, 11, b);
  CHECK(memcmp(a, b, sizeof(a)) != 0, "rng_normal3 ignores the seed");
  aisci_rng_normal3(7, 4, 11, b);
  CHECK(memcmp(a, b, sizeof(a)) != 0, "rng_normal3 ignores the high counter");
  aisci_rng_normal3(7, 3, 12, b);
  CHECK(memcmp(a, b, sizeof(a)) != 0, "rng_normal3 ignores the low counter");
  {
    /* the batch form (16 Philox blocks at a time, the ziggurat's fast path 4 words at a
     * time where the CPU has AVX2) gives the bits of the one-triple form (one block, the
     * scalar path), for every remainder of both batch sizes */
    int64_t lo[40];
    double zb[120], z1[3];
    for (int i = 0; i < 40; i++) lo[i] = 1000 + 7 * i;
    int same = 1;
    for (int n = 1; n <= 40; n++) {
      aisci_rng_normal3_n(99, 5, n, lo, zb);
      for (int i = 0; i < n; i++) {
        aisci_rng_normal3(99, 5, (uint64_t) lo[i], z1);
        same &= memcmp(z1, zb + 3 * i, sizeof(z1)) == 0;
      }
    }
    CHECK(same, "rng_normal3_n differs from rng_normal3");
    /* and over enough deviates that rejections (about 1 %) and the tail beyond R occur
     * in every lane of the batch */
    enum { NBIG = 50000 };
    static int64_t big[NBIG];
    static double zbig[3 * NBIG];
    for (int i = 0; i < NBIG; i++) big[i] = 3 * (int64_t) i + 1;
    aisci_rng_normal3_n(2024, 77, NBIG, big, zbig);
    int mismatch = 0, beyond = 0;
    for (int i = 0; i < NBIG; i++) {
      aisci_rng_normal3(2024, 77, (uint64_t) big[i], z1);
      mismatch += memcmp(z1, zbig + 3 * i, sizeof(z1)) != 0;
      for (int d = 0; d < 3; d++) beyond += fabs(z1[d]) > 3.6541528853610088;
    }
    CHECK(mismatch == 0, "rng_normal3_n differs from rng_normal3 in %d of %d triples", mismatch, NBIG);
    CHECK(beyond > 10, "only %d of %d deviates beyond the ziggurat's R: the tail path is untested",
          beyond, 3 * NBIG);
  }
  const int N = 1000000, NB = 64;
  static const double thr[5] = {1.0, 2.0, 3.0, 3.6541528853610088, 4.0};
  long tail[5] = {0, 0, 0, 0, 0}, bins[64] = {0};
  double s1 = 0, s2 = 0, s4 = 0, c01 = 0, c12 = 0, maxabs = 0;
  int finite = 1;
  for (int i = 0; i < N; i++) {
    double z[3];
    aisci_rng_normal3(12345, 1, (uint64_t) i, z);
    for (int l = 0; l < 3; l++) {
      finite &= isfinite(z[l]);
      s1 += z[l];
      s2 += z[l] * z[l];
      s4 += z[l] * z[l] * z[l] * z[l];
      maxabs = fmax(maxabs, fabs(z[l]));
      for (int t = 0; t < 5; t++) tail[t] += fabs(z[l]) > thr[t];
      const int bin = (int) floor((z[l] + 4.0) / 8.0 * NB);
      if (bin >= 0 && bin < NB) bins[bin]++;
    }
    c01 += z[0] * z[1];
    c12 += z[1] * z[2];
  }
  const double n = 3.0 * N, mean = s1 / n, var = s2 / n, kurt = s4 / n / (var * var);
  CHECK(finite, "rng_normal3 produced a non-finite value");
  CHECK(fabs(mean) < 5.0 / sqrt(n), "normal3 mean %g", mean);
  CHECK(fabs(var - 1.0) < 5.0 * sqrt(2.0 / n), "normal3 variance %g", var);
  CHECK(fabs(kurt - 3.0) < 5.0 * sqrt(96.0 / n), "normal3 kurtosis %g", kurt);
  CHECK(fabs(c01 / N) < 5.0 / sqrt(N) && fabs(c12 / N) < 5.0 / sqrt(N),
        "normal3 lanes correlated: %g %g", c01 / N, c12 / N);
  CHECK(maxabs > 4.5 && maxabs < 7.0, "normal3 extreme value %g implausible for %g draws", maxabs, n);
  for (int t = 0; t < 5; t++) {
    const double p = erfc(thr[t] / sqrt(2.0)), expect = p * n;
    CHECK(fabs(tail[t] - expect) < 5.0 * sqrt(expect * (1.0 - p)) + 1.0,
          "normal3 P(|z| > %g): %ld draws, expected %.1f", thr[t], tail[t], expect);
  }
  double chi2 = 0.0;
  for (int k = 0; k < NB; k++) {
    const double lo = -4.0 + 8.0 * k / NB, hi = lo + 8.0 / NB;
    const double e = n * 0.5 * (erf(hi / sqrt(2.0)) - erf(lo / sqrt(2.0)));
    chi2 += (bins[k] - e) * (bins[k] - e) / e;
  }
  /* 64 bins: chi-square with 64 dof has mean 64, sd 11.3; 120 is p < 1e-5 */
  CHECK(chi2 < 120.0, "normal3 binned chi-square %g over 64 bins", chi2);
}

static aisci_pimd *make(int P, aisci_pimd_method method, aisci_pimd_fmmode fm, double fmass,
                        double scale, double tau, double kT, double mvv2e, uint64_t seed)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  c.nbeads = P;
  c.method = method;
  c.fmmode = fm;
  c.fmass = fmass;
  c.scale = scale;
  c.tau = tau;
  c.kT = kT;
  c.hbar = 0.8;
  c.mvv2e = mvv2e;
  c.ftm2v = 1.0 / mvv2e;
  c.seed = seed;
  aisci_pimd *p = NULL;
  aisci_status st = aisci_pimd_create(&c, &p);
  CHECK(st == AISCI_OK && p, "create: %s", aisci_last_error());
  return p;
}

/* gamma_0 = 1/tau, gamma_k = 2 scale Omega_k; Cartesian: 1/tau for every bead */
static void test_friction(void)
{
  const int P = 6;
  const double kT = 0.6, hbar = 0.8, tau = 2.3;
  for (int fm = 0; fm < 2; fm++) {
    const double fmass = fm ? 0.3 : 1.7, scale = fm ? 0.5 : 1.0;
    aisci_pimd *p = make(P, AISCI_PIMD_NMPIMD, (aisci_pimd_fmmode) fm, fmass, scale, tau, kT, 1.0, 3);
    if (!p) return;
    CHECK_CLOSE(pv_friction(p, 0), 1.0 / tau, 1e-15, "gamma_0 = 1/tau");
    for (int k = 1; k < P; k++) {
      double lam = 4.0 * pow(sin(PI * k / P), 2);
      double mk = fm ? fmass * lam : fmass;
      double Wk = P * kT / hbar * sqrt(lam / mk);
      CHECK_CLOSE(pv_friction(p, k), 2.0 * scale * Wk, 1e-12 * Wk, "gamma_k = 2 scale Omega_k");
    }
    CHECK(aisci_pimd_friction(p, P, &(double){0}) == AISCI_ERR_ARG && aisci_pimd_friction(p, -1, &(double){0}) == AISCI_ERR_ARG, "friction of a bad mode is an argument error");
    aisci_pimd_destroy(p);
  }
  aisci_pimd *p = make(P, AISCI_PIMD_CARTESIAN, AISCI_PIMD_FM_PHYSICAL, 1.0, 1.0, tau, kT, 1.0, 3);
  if (!p) return;
  for (int k = 0; k < P; k++) CHECK_CLOSE(pv_friction(p, k), 1.0 / tau, 1e-15, "Cartesian gamma = 1/tau");
  aisci_pimd_destroy(p);
  CHECK(aisci_pimd_friction(NULL, 0, &(double){0}) == AISCI_ERR_ARG, "friction(NULL) is an argument error");
}

/* One O step from v0 minus one O step from 0 with the same counter is exactly c1 v0. */
static void test_decay(void)
{
  const int P = 4, n = 50;
  aisci_pimd *p = make(P, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_NORMAL, 0.7, 0.8, 1.3, 0.9, 2.0, 99);
  if (!p) return;
  int64_t tags[50];
  double mass[50], v0[150], va[150], vb[150];
  for (int i = 0; i < n; i++) {
    tags[i] = 1000 + 7 * i;
    mass[i] = 1.0 + (i % 3);
  }
  for (int k = 0; k < P; k++) {
    const double h = 0.37;
    const double c1 = exp(-pv_friction(p, k) * h);
    for (int a = 0; a < 3 * n; a++) {
      v0[a] = va[a] = 4.0 * aisci_test_urand() - 2.0;
      vb[a] = 0.0;
    }
    CHECK(aisci_pimd_o_step(p, k, n, tags, mass, va, h, 17) == AISCI_OK, "o_step: %s", aisci_last_error());
    CHECK(aisci_pimd_o_step(p, k, n, tags, mass, vb, h, 17) == AISCI_OK, "o_step: %s", aisci_last_error());
    double err = 0;
    for (int a = 0; a < 3 * n; a++) err = fmax(err, fabs(va[a] - vb[a] - c1 * v0[a]));
    CHECK(err < 1e-14, "mode %d: O-step mean decay differs from exp(-gamma h) v0 by %g", k, err);
  }
  /* h = 0: the velocities are unchanged (c1 = 1, c2 = 0) */
  for (int a = 0; a < 3 * n; a++) va[a] = v0[a];
  aisci_pimd_o_step(p, 1, n, tags, mass, va, 0.0, 5);
  CHECK(memcmp(va, v0, sizeof(double) * 3 * n) == 0, "O step with h = 0 changed velocities");
  aisci_pimd_destroy(p);
}

/* Stationary distribution: after many O steps from rest, z = v sqrt(M_k m mvv2e / (P kT))
 * is standard normal in every mode, for every mass, and the modes' noises are independent. */
static void test_maxwell_boltzmann(aisci_pimd_method method)
{
  const int P = 4, n = 12000, nsteps = 40;
  const double kT = 0.6, mvv2e = 1.7, fmass = 0.5;
  aisci_pimd *p = make(P, method, AISCI_PIMD_FM_NORMAL, fmass, 1.0, 1.0, kT, mvv2e, 2024);
  if (!p) return;
  int64_t *tags = malloc(sizeof(int64_t) * n);
  double *mass = malloc(sizeof(double) * n);
  double *v = calloc((size_t) P * 3 * n, sizeof(double));
  static const double masses[3] = {1.0, 2.0, 16.0};
  for (int i = 0; i < n; i++) {
    tags[i] = i + 1;
    mass[i] = masses[i % 3];
  }
  const double h = 1.0; /* centroid: c1 = exp(-1); internal modes decorrelate faster */
  for (int s = 0; s < nsteps; s++)
    for (int k = 0; k < P; k++) aisci_pimd_o_step(p, k, n, tags, mass, v + (size_t) k * 3 * n, h, (uint64_t) s);
  for (int k = 0; k < P; k++) {
    const double mk = pv_mass_factor(p, k);
    const double *vk = v + (size_t) k * 3 * n;
    double s1 = 0, s2[3] = {0, 0, 0}, s4 = 0;
    int cnt[3] = {0, 0, 0};
    for (int i = 0; i < n; i++)
      for (int d = 0; d < 3; d++) {
        double z = vk[3 * i + d] * sqrt(mk * mass[i] * mvv2e / (P * kT));
        s1 += z;
        s2[i % 3] += z * z;
        s4 += z * z * z * z;
        cnt[i % 3]++;
      }
    const double N = 3.0 * n, var = (s2[0] + s2[1] + s2[2]) / N;
    CHECK(fabs(s1 / N) < 5.0 / sqrt(N), "method %d mode %d: mean %g", (int) method, k, s1 / N);
    for (int g = 0; g < 3; g++)
      CHECK(fabs(s2[g] / cnt[g] - 1.0) < 5.0 * sqrt(2.0 / cnt[g]),
            "method %d mode %d mass %g: variance / (P kT / M_k) = %g", (int) method, k, masses[g],
            s2[g] / cnt[g]);
    CHECK(fabs(s4 / N / (var * var) - 3.0) < 5.0 * sqrt(24.0 / N), "method %d mode %d: kurtosis %g",
          (int) method, k, s4 / N / (var * var));
    /* mean kinetic energy of the mode: 3 n P kT / 2 */
    double kin = pv_kinetic(p, k, n, mass, vk);
    CHECK(fabs(kin / (1.5 * n * P * kT) - 1.0) < 5.0 * sqrt(2.0 / N), "method %d mode %d: K / (3nPkT/2) = %g",
          (int) method, k, kin / (1.5 * n * P * kT));
  }
  /* independence: modes 0/1 and 1/2 (same tags and counters), x/y, neighbouring tags */
  double c01 = 0, c12 = 0, cxy = 0, ctag = 0, s0 = 0, s1v = 0, s2v = 0;
  for (int i = 0; i < n; i++) {
    double a = v[3 * i] * sqrt(mass[i]), b = v[3 * n + 3 * i] * sqrt(mass[i]);
    double c = v[6 * n + 3 * i] * sqrt(mass[i]);
    c01 += a * b;
    c12 += b * c;
    cxy += a * v[3 * i + 1] * sqrt(mass[i]);
    if (i + 1 < n) ctag += a * v[3 * (i + 1)] * sqrt(mass[i + 1]);
    s0 += a * a;
    s1v += b * b;
    s2v += c * c;
  }
  const double bound = 5.0 / sqrt((double) n);
  CHECK(fabs(c01 / sqrt(s0 * s1v)) < bound, "modes 0 and 1 correlated: %g", c01 / sqrt(s0 * s1v));
  CHECK(fabs(c12 / sqrt(s1v * s2v)) < bound, "modes 1 and 2 correlated: %g", c12 / sqrt(s1v * s2v));
  CHECK(fabs(cxy / s0) < bound, "x and y noise correlated: %g", cxy / s0);
  CHECK(fabs(ctag / s0) < bound, "neighbouring tags correlated: %g", ctag / s0);
  free(tags);
  free(mass);
  free(v);
  aisci_pimd_destroy(p);
}

/* successive counters give independent noise: one step from rest with counters c and c+1 */
static void test_counter_independence(void)
{
  const int n = 20000;
  aisci_pimd *p = make(2, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0, 1.0, 1.0, 1.0, 1.0, 5);
  if (!p) return;
  int64_t *tags = malloc(sizeof(int64_t) * n);
  double *mass = malloc(sizeof(double) * n), *a = calloc(3 * n, sizeof(double)), *b = calloc(3 * n, sizeof(double));
  for (int i = 0; i < n; i++) {
    tags[i] = i;
    mass[i] = 1.0;
  }
  aisci_pimd_o_step(p, 0, n, tags, mass, a, 1.0, 1000);
  aisci_pimd_o_step(p, 0, n, tags, mass, b, 1.0, 1001);
  double cab = 0, saa = 0, sbb = 0;
  for (int i = 0; i < 3 * n; i++) {
    cab += a[i] * b[i];
    saa += a[i] * a[i];
    sbb += b[i] * b[i];
  }
  CHECK(fabs(cab / sqrt(saa * sbb)) < 5.0 / sqrt(3.0 * n), "counters c and c+1 correlated: %g", cab / sqrt(saa * sbb));
  /* seeds matter */
  aisci_pimd *q = make(2, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0, 1.0, 1.0, 1.0, 1.0, 6);
  if (q) {
    memset(b, 0, sizeof(double) * 3 * n);
    aisci_pimd_o_step(q, 0, n, tags, mass, b, 1.0, 1000);
    CHECK(memcmp(a, b, sizeof(double) * 3 * n) != 0, "seed 5 and 6 give the same noise");
    aisci_pimd_destroy(q);
  }
  free(tags);
  free(mass);
  free(a);
  free(b);
  aisci_pimd_destroy(p);
}

/* The noise of atom `tag` is a function of (seed, tag, k, counter) only: a shuffled array split
 * over three "ranks" of unequal size gives bit-identical velocities per tag. */
static void test_decomposition(void)
{
  const int n = 1000, P = 3;
  aisci_pimd *p = make(P, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0, 1.0, 0.5, 1.2, 1.0, 777);
  if (!p) return;
  int64_t tags[1000], stags[1000];
  double mass[1000], smass[1000], v[3000], sv[3000];
  int perm[1000];
  for (int i = 0; i < n; i++) {
    tags[i] = 5 + 3 * (int64_t) i;
    mass[i] = 1.0 + i % 5;
    perm[i] = i;
  }
  for (int i = n - 1; i > 0; i--) {
    int j = (int) (aisci_test_urand() * (i + 1));
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) v[3 * i + d] = 0.1 * (i % 7) - 0.3 + d;
  /* shuffled copy: position i holds atom perm[i] */
  for (int i = 0; i < n; i++) {
    stags[i] = tags[perm[i]];
    smass[i] = mass[perm[i]];
    for (int d = 0; d < 3; d++) sv[3 * i + d] = v[3 * perm[i] + d];
  }
  const int cut1 = 137, cut2 = 604; /* three unequal "ranks" */
  for (int s = 0; s < 5; s++)
    for (int k = 0; k < P; k++) {
      aisci_pimd_o_step(p, k % P, n, tags, mass, v, 0.2, (uint64_t) (10 * s + k));
      aisci_pimd_o_step(p, k % P, cut1, stags, smass, sv, 0.2, (uint64_t) (10 * s + k));
      aisci_pimd_o_step(p, k % P, cut2 - cut1, stags + cut1, smass + cut1, sv + 3 * cut1, 0.2, (uint64_t) (10 * s + k));
      aisci_pimd_o_step(p, k % P, n - cut2, stags + cut2, smass + cut2, sv + 3 * cut2, 0.2, (uint64_t) (10 * s + k));
    }
  int same = 1;
  for (int i = 0; i < n; i++) same &= memcmp(sv + 3 * i, v + 3 * perm[i], 3 * sizeof(double)) == 0;
  CHECK(same, "O-step noise depends on atom order or on how atoms are split");
  /* a second integrator with the same seed reproduces the run (restart determinism) */
  aisci_pimd *q = make(P, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0, 1.0, 0.5, 1.2, 1.0, 777);
  if (q) {
    double w[3000];
    for (int i = 0; i < n; i++)
      for (int d = 0; d < 3; d++) w[3 * i + d] = 0.1 * (i % 7) - 0.3 + d;
    for (int s = 0; s < 5; s++)
      for (int k = 0; k < P; k++) aisci_pimd_o_step(q, k % P, n, tags, mass, w, 0.2, (uint64_t) (10 * s + k));
    CHECK(memcmp(w, v, sizeof(w)) == 0, "same seed and counters do not reproduce the velocities");
    aisci_pimd_destroy(q);
  }
  aisci_pimd_destroy(p);
}

static void test_o_errors(void)
{
  aisci_pimd *p = make(2, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0, 1.0, 1.0, 1.0, 1.0, 1);
  if (!p) return;
  int64_t tag = 1;
  double mass = 1.0, v[3] = {0, 0, 0};
  CHECK(aisci_pimd_o_step(p, 2, 1, &tag, &mass, v, 0.1, 0) == AISCI_ERR_ARG, "o_step k = P");
  CHECK(aisci_pimd_o_step(p, -1, 1, &tag, &mass, v, 0.1, 0) == AISCI_ERR_ARG, "o_step k < 0");
  CHECK(aisci_pimd_o_step(p, 0, -2, &tag, &mass, v, 0.1, 0) == AISCI_ERR_ARG, "o_step n < 0");
  CHECK(aisci_pimd_o_step(p, 0, 1, NULL, &mass, v, 0.1, 0) == AISCI_ERR_ARG, "o_step NULL tags");
  CHECK(aisci_pimd_o_step(p, 0, 1, &tag, NULL, v, 0.1, 0) == AISCI_ERR_ARG, "o_step NULL masses");
  CHECK(aisci_pimd_o_step(p, 0, 1, &tag, &mass, NULL, 0.1, 0) == AISCI_ERR_ARG, "o_step NULL velocities");
  CHECK(aisci_pimd_o_step(NULL, 0, 1, &tag, &mass, v, 0.1, 0) == AISCI_ERR_ARG, "o_step NULL integrator");
  CHECK(aisci_pimd_o_step(p, 0, 0, NULL, NULL, NULL, 0.1, 0) == AISCI_OK, "o_step with n = 0");
  CHECK(aisci_pimd_kinetic(p, 3, 1, &mass, v, &(double){0}) == AISCI_ERR_ARG, "kinetic of a bad mode is an argument error");
  CHECK(aisci_pimd_kinetic(p, 0, 1, &mass, v, NULL) == AISCI_ERR_ARG, "kinetic NULL output is an argument error");
  CHECK(aisci_pimd_kinetic(NULL, 0, 1, &mass, v, &(double){0}) == AISCI_ERR_ARG, "kinetic(NULL) is an argument error");
  aisci_pimd_destroy(p);
}

int main(void)
{
  aisci_test_rng_state = 0xC0FFEE0123456789ull;
  test_philox();
  test_normal4();
  test_normal3();
  test_friction();
  test_decay();
  test_maxwell_boltzmann(AISCI_PIMD_NMPIMD);
  test_maxwell_boltzmann(AISCI_PIMD_CARTESIAN);
  test_counter_independence();
  test_decomposition();
  test_o_errors();
  return aisci_test_summary("test_pimd_thermostat");
}
