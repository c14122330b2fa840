/* Quantum estimators (aisci_pimd_estimators) and argument checking of aisci_pimd_create.
 * - Known configurations, values computed by hand: all beads at one place; a ring polymer
 *   with given normal-mode amplitudes in a harmonic well; the pressure entries.
 * - A thermostatted PIMD run of a 3-D harmonic oscillator entirely in the core (B, A, O
 *   steps, forces -m w^2 x on the beads): the mean primitive, virial and centroid-virial
 *   kinetic energies must equal the exact P-bead value
 *     K_P = (3/2) kT sum_k w^2 / (w^2 + omega_P^2 lambda_k)
 *   (-d ln Z_P / d beta / 2 for the discretised path integral of the oscillator), which
 *   tends to the quantum (3/4) hbar w coth(beta hbar w / 2) for large P and is the classical
 *   (3/2) kT for P = 1.
 * - The virial sums of modes and of Cartesian beads agree (test_virial_sums). */
#include "aisci_testing/pimd.h"
#include "aisci_test.h"
#include "pimd_values.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846


static aisci_pimd_config base_config(int P, double kT, double hbar, double mvv2e)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  c.nbeads = P;
  c.kT = kT;
  c.hbar = hbar;
  c.mvv2e = mvv2e;
  c.ftm2v = 1.0 / mvv2e;
  return c;
}

static aisci_pimd *make_cfg(const aisci_pimd_config *c)
{
  aisci_pimd *p = NULL;
  aisci_status st = aisci_pimd_create(c, &p);
  CHECK(st == AISCI_OK && p, "create: %s", aisci_last_error());
  return p;
}

/* Per-bead sums of a configuration in the harmonic well V = mvv2e m w^2 |x|^2 / 2, springs
 * attributed per bead (Cartesian, spring_bead) or per mode (spring_mode). */
static void harmonic_sums(aisci_pimd *p, int n, const double *mass, double w, double mvv2e,
                          const double *x, int per_mode, aisci_pimd_bead_sums *sums)
{
  const int P = aisci_pimd_get_config(p)->nbeads;
  const size_t m = 3 * (size_t) n;
  double *xc = calloc(m, sizeof(double)), *q = malloc(sizeof(double) * m);
  for (int j = 0; j < P; j++)
    for (size_t a = 0; a < m; a++) xc[a] += x[j * m + a] / P;
  for (int j = 0; j < P; j++) {
    aisci_pimd_bead_sums *s = &sums[j];
    memset(s, 0, sizeof(*s));
    if (per_mode) {
      aisci_pimd_to_mode(p, j, n, x, q);
      s->spring = pv_spring_mode(p, j, n, mass, q);
    } else {
      s->spring = pv_spring_bead(p, j, n, mass, x, NULL);
    }
    for (int i = 0; i < n; i++)
      for (int d = 0; d < 3; d++) {
        const double xx = x[j * m + 3 * i + d], f = -mvv2e * mass[i] * w * w * xx;
        s->potential += 0.5 * mvv2e * mass[i] * w * w * xx * xx;
        s->xf += xx * f;
        s->xcf += (xx - xc[3 * i + d]) * f;
        s->virial += xx * f;
      }
    s->kinetic = 0.1 * (j + 1); /* arbitrary: only enters [0] and [3] */
  }
  free(xc);
  free(q);
}

/* all beads at one place: no spring energy, K_prim = 3 N P kT / 2, K_cv = 3 N kT / 2,
 * K_vir = -x.f / 2 = the potential energy of one bead (harmonic) */
static void test_collapsed(void)
{
  const int P = 6, n = 3;
  const size_t m = 3 * n;
  const double kT = 0.7, w = 1.3, mvv2e = 2.0;
  aisci_pimd_config c = base_config(P, kT, 0.9, mvv2e);
  aisci_pimd *p = make_cfg(&c);
  if (!p) return;
  double mass[3] = {1.0, 2.0, 3.0}, x[6 * 9], x1[9];
  for (size_t a = 0; a < m; a++) x1[a] = aisci_test_srand1();
  for (int j = 0; j < P; j++) memcpy(x + j * m, x1, sizeof(x1));
  double v1 = 0;
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) v1 += 0.5 * mvv2e * mass[i] * w * w * x1[3 * i + d] * x1[3 * i + d];
  for (int per_mode = 0; per_mode < 2; per_mode++) {
    aisci_pimd_bead_sums sums[6];
    harmonic_sums(p, n, mass, w, mvv2e, x, per_mode, sums);
    double out[AISCI_PIMD_NVALUES];
    CHECK(aisci_pimd_estimators(p, 2, sums, n, 0.0, 1.0, 1.0, out) == AISCI_OK, "estimators: %s", aisci_last_error());
    double total = 0;
    for (int j = 0; j < P; j++) total += sums[j].kinetic + sums[j].potential;
    CHECK_CLOSE(out[1], 0.0, 1e-12, "collapsed: spring energy of bead 2");
    CHECK_CLOSE(out[2], v1, 1e-12, "collapsed: potential of bead 2");
    CHECK_CLOSE(out[0], 0.3, 1e-15, "collapsed: kinetic of bead 2");
    CHECK_CLOSE(out[3], total, 1e-12, "collapsed: total energy");
    CHECK_CLOSE(out[4], 1.5 * n * P * kT, 1e-12, "collapsed: primitive KE = 3NPkT/2");
    CHECK_CLOSE(out[5], v1, 1e-12, "collapsed: virial KE = -x.f/2");
    CHECK_CLOSE(out[6], 1.5 * n * kT, 1e-12, "collapsed: centroid-virial KE = 3NkT/2");
  }
  aisci_pimd_destroy(p);
}

/* one atom with normal-mode amplitudes a_k in the well: spring total
 * sum_k mvv2e m omega_P^2 lambda_k |a_k|^2 / 2; x.f summed over beads = -mvv2e m w^2 sum_k |a_k|^2;
 * (x - xc).f summed = -mvv2e m w^2 sum_{k>0} |a_k|^2 */
static void test_mode_amplitudes(int P)
{
  const int n = 1;
  const double kT = 0.45, hbar = 0.7, w = 0.9, mvv2e = 1.5, mass = 2.0;
  aisci_pimd_config c = base_config(P, kT, hbar, mvv2e);
  aisci_pimd *p = make_cfg(&c);
  if (!p) return;
  const double wp = P * kT / hbar;
  double *q = malloc(sizeof(double) * 3 * P), *x = malloc(sizeof(double) * 3 * P);
  aisci_pimd_bead_sums *sums = malloc(sizeof(*sums) * P);
  double spring = 0, a2all = 0, a2int = 0;
  for (int k = 0; k < P; k++) {
    double lam = 4.0 * pow(sin(PI * k / P), 2), a2 = 0;
    for (int d = 0; d < 3; d++) {
      q[3 * k + d] = (k + 1) * 0.1 * (d - 1.2);
      a2 += q[3 * k + d] * q[3 * k + d];
    }
    spring += 0.5 * mvv2e * mass * wp * wp * lam * a2;
    a2all += a2;
    if (k > 0) a2int += a2;
  }
  for (int j = 0; j < P; j++) aisci_pimd_to_bead(p, j, n, q, x + 3 * j);
  const double k_prim = 1.5 * P * kT - spring / P;
  const double k_vir = 0.5 * mvv2e * mass * w * w * a2all / P;
  const double k_cv = 1.5 * kT + 0.5 * mvv2e * mass * w * w * a2int / P;
  for (int per_mode = 0; per_mode < 2; per_mode++) {
    harmonic_sums(p, n, &mass, w, mvv2e, x, per_mode, sums);
    double out[AISCI_PIMD_NVALUES];
    CHECK(aisci_pimd_estimators(p, 0, sums, n, 0.0, 1.0, 1.0, out) == AISCI_OK, "estimators");
    const double tol = 1e-11 * (1.0 + fabs(spring));
    CHECK_CLOSE(out[4], k_prim, tol, "mode amplitudes: primitive KE");
    CHECK_CLOSE(out[5], k_vir, tol, "mode amplitudes: virial KE");
    CHECK_CLOSE(out[6], k_cv, tol, "mode amplitudes: centroid-virial KE");
  }
  free(q);
  free(x);
  free(sums);
  aisci_pimd_destroy(p);
}

/* output vector from fixed sums, every entry computed by hand:
 * P = 2, kT = 0.5, N = 3, V = 10, nktv2p = 3, centroid kinetic 1.2
 * totals: energy 2, spring 4.5, xf 2, xcf 2, virial 8 -> mean W = 4, pfac = 3 / 30 = 0.1
 * K_prim = 1.5*3*2*0.5 - 4.5/2 = 2.25; K_vir = -2/4 = -0.5; K_cv = 2.25 - 2/4 = 1.75
 * p_prim = 0.1 (4.5 + 4) = 0.85; p_thermo = 0.1 (2.4 + 4 - 2/2) = 0.54; p_cv = 0.1 (3.5 + 4) = 0.75 */
static void test_by_hand(void)
{
  aisci_pimd_config c = base_config(2, 0.5, 1.0, 1.0);
  aisci_pimd *p = make_cfg(&c);
  if (!p) return;
  aisci_pimd_bead_sums sums[2] = {{1.0, 2.0, -3.0, 4.0, 0.5, 6.0}, {1.5, 2.5, -2.0, -2.0, 1.5, 2.0}};
  const double expect[2][AISCI_PIMD_NVALUES] = {
      {1.0, 2.0, -3.0, 2.0, 2.25, -0.5, 1.75, 0.85, 0.54, 0.75},
      {1.5, 2.5, -2.0, 2.0, 2.25, -0.5, 1.75, 0.85, 0.54, 0.75}};
  for (int k = 0; k < 2; k++) {
    double out[AISCI_PIMD_NVALUES];
    CHECK(aisci_pimd_estimators(p, k, sums, 3.0, 1.2, 10.0, 3.0, out) == AISCI_OK, "estimators");
    for (int i = 0; i < AISCI_PIMD_NVALUES; i++)
      CHECK(fabs(out[i] - expect[k][i]) < 1e-13, "bead %d entry %d: %.15g, expected %.15g", k, i, out[i], expect[k][i]);
  }
  double out[AISCI_PIMD_NVALUES];
  CHECK(aisci_pimd_estimators(p, 2, sums, 3.0, 1.2, 10.0, 3.0, out) == AISCI_ERR_ARG, "estimators k = P");
  CHECK(aisci_pimd_estimators(p, -1, sums, 3.0, 1.2, 10.0, 3.0, out) == AISCI_ERR_ARG, "estimators k < 0");
  CHECK(aisci_pimd_estimators(p, 0, sums, 3.0, 1.2, 0.0, 3.0, out) == AISCI_ERR_ARG, "estimators volume 0");
  CHECK(strstr(aisci_last_error(), "volume") != NULL, "volume error names the volume: '%s'", aisci_last_error());
  CHECK(aisci_pimd_estimators(p, 0, sums, 3.0, 1.2, -1.0, 3.0, out) == AISCI_ERR_ARG, "estimators volume < 0");
  CHECK(aisci_pimd_estimators(p, 0, sums, 3.0, 1.2, NAN, 3.0, out) == AISCI_ERR_ARG, "estimators volume NaN");
  CHECK(aisci_pimd_estimators(p, 0, NULL, 3.0, 1.2, 10.0, 3.0, out) == AISCI_ERR_ARG, "estimators NULL sums");
  CHECK(aisci_pimd_estimators(p, 0, sums, 3.0, 1.2, 10.0, 3.0, NULL) == AISCI_ERR_ARG, "estimators NULL out");
  CHECK(aisci_pimd_estimators(NULL, 0, sums, 3.0, 1.2, 10.0, 3.0, out) == AISCI_ERR_ARG, "estimators NULL pimd");
  aisci_pimd_destroy(p);
}

/* ---- harmonic oscillator PIMD (NVT) ---- */
typedef struct {
  double prim, vir, cv, kin; /* means per atom (kin: mean mode kinetic / (3 P kT / 2) per atom) */
  double eprim, evir, ecv, ekin; /* standard errors from block averages */
} ho_result;

static double exact_p_bead(int P, double kT, double hbar, double w)
{
  const double wp = P * kT / hbar;
  double s = 0;
  for (int k = 0; k < P; k++) s += w * w / (w * w + wp * wp * 4.0 * pow(sin(PI * k / P), 2));
  return 1.5 * kT * s;
}

static ho_result run_ho(int P, aisci_pimd_integrator integ, int n, int nsteps, double kT, double hbar,
                        double w, double dt, uint64_t seed)
{
  const size_t m = 3 * (size_t) n;
  const double mvv2e = 1.0;
  aisci_pimd_config c = base_config(P, kT, hbar, mvv2e);
  c.integrator = integ;
  c.dt = dt;
  c.tau = 0.5 / w; /* centroid friction 2 w: critically damped */
  c.seed = seed;
  aisci_pimd *p = make_cfg(&c);
  ho_result r;
  memset(&r, 0, sizeof(r));
  if (!p) return r;
  int64_t *tags = malloc(sizeof(int64_t) * n);
  double *mass = malloc(sizeof(double) * n);
  double *q = calloc(P * m, sizeof(double)), *v = calloc(P * m, sizeof(double));
  double *x = malloc(sizeof(double) * P * m), *fx = malloc(sizeof(double) * P * m);
  double *fq = malloc(sizeof(double) * P * m);
  aisci_pimd_bead_sums *sums = malloc(sizeof(*sums) * P);
  for (int i = 0; i < n; i++) {
    tags[i] = i + 1;
    mass[i] = 1.0 + (i % 2); /* the answer does not depend on the mass */
  }
  /* forces on the modes from f = -m w^2 x on every bead */
#define FORCES()                                                                               \
  do {                                                                                         \
    for (int j = 0; j < P; j++) aisci_pimd_to_bead(p, j, n, q, x + j * m);                     \
    for (int j = 0; j < P; j++)                                                                \
      for (int i = 0; i < n; i++)                                                              \
        for (int d = 0; d < 3; d++) fx[j * m + 3 * i + d] = -mvv2e * mass[i] * w * w * x[j * m + 3 * i + d]; \
    for (int k = 0; k < P; k++) aisci_pimd_to_mode(p, k, n, fx, fq + k * m);                   \
  } while (0)
  FORCES();
  const int every = 5, nequil = nsteps / 10, nblocks = 20;
  const int nsamples = (nsteps - nequil) / every, per_block = nsamples / nblocks;
  double blk[4][20];
  memset(blk, 0, sizeof(blk));
  int isample = 0;
  const double h = dt;
  for (int s = 0; s < nsteps; s++) {
    const uint64_t c0 = 2 * (uint64_t) s, c1 = c0 + 1;
    for (int k = 0; k < P; k++) {
      double *qk = q + k * m, *vk = v + k * m;
      if (integ == AISCI_PIMD_OBABO) {
        aisci_pimd_o_step(p, k, n, tags, mass, vk, 0.5 * h, c0);
        aisci_pimd_b_step(p, k, n, mass, fq + k * m, vk, 0.5 * h);
        aisci_pimd_a_step(p, k, n, qk, vk, h);
      } else {
        aisci_pimd_b_step(p, k, n, mass, fq + k * m, vk, 0.5 * h);
        aisci_pimd_a_step(p, k, n, qk, vk, 0.5 * h);
        aisci_pimd_o_step(p, k, n, tags, mass, vk, h, c0);
        aisci_pimd_a_step(p, k, n, qk, vk, 0.5 * h);
      }
    }
    FORCES();
    for (int k = 0; k < P; k++) {
      aisci_pimd_b_step(p, k, n, mass, fq + k * m, v + k * m, 0.5 * h);
      if (integ == AISCI_PIMD_OBABO) aisci_pimd_o_step(p, k, n, tags, mass, v + k * m, 0.5 * h, c1);
    }
    if (s < nequil || (s - nequil) % every) continue;
    if (isample >= per_block * nblocks) break;
    /* per-mode kinetic and spring, per-bead potential terms (x, fx are current) */
    const double *xc = q; /* centroid = q_0 / sqrt(P) */
    for (int j = 0; j < P; j++) {
      aisci_pimd_bead_sums *sm = &sums[j];
      memset(sm, 0, sizeof(*sm));
      sm->kinetic = pv_kinetic(p, j, n, mass, v + j * m);
      sm->spring = pv_spring_mode(p, j, n, mass, q + j * m);
      for (size_t a = 0; a < m; a++) {
        const double xx = x[j * m + a], f = fx[j * m + a];
        sm->potential += -0.5 * xx * f;
        sm->xf += xx * f;
        sm->xcf += (xx - xc[a] / sqrt((double) P)) * f;
        sm->virial += xx * f;
      }
    }
    double out[AISCI_PIMD_NVALUES], kin = 0;
    aisci_pimd_estimators(p, 0, sums, n, 0.0, 1.0, 1.0, out);
    for (int k = 0; k < P; k++) kin += sums[k].kinetic;
    const int b = isample / per_block;
    blk[0][b] += out[4] / n;
    blk[1][b] += out[5] / n;
    blk[2][b] += out[6] / n;
    blk[3][b] += kin / (1.5 * n * P * P * kT);
    isample++;
  }
#undef FORCES
  double mean[4], err[4];
  for (int e = 0; e < 4; e++) {
    double s1 = 0, s2 = 0;
    for (int b = 0; b < nblocks; b++) {
      double bm = blk[e][b] / per_block;
      s1 += bm;
      s2 += bm * bm;
    }
    mean[e] = s1 / nblocks;
    err[e] = sqrt(fmax(s2 / nblocks - mean[e] * mean[e], 0.0) / (nblocks - 1));
  }
  r.prim = mean[0];
  r.vir = mean[1];
  r.cv = mean[2];
  r.kin = mean[3];
  r.eprim = err[0];
  r.evir = err[1];
  r.ecv = err[2];
  r.ekin = err[3];
  free(tags);
  free(mass);
  free(q);
  free(v);
  free(x);
  free(fx);
  free(fq);
  free(sums);
  aisci_pimd_destroy(p);
  return r;
}

static void test_harmonic_oscillator(void)
{
  const double hbar = 1.0, w = 1.0, kT = 0.25; /* beta hbar w = 4 */
  const double quantum = 0.75 * hbar * w / tanh(0.5 * hbar * w / kT);
  const double classical = 1.5 * kT;
  struct {
    int P, n, nsteps;
    aisci_pimd_integrator integ;
  } runs[] = {{1, 16, 20000, AISCI_PIMD_OBABO},
              {8, 16, 20000, AISCI_PIMD_OBABO},
              {16, 16, 20000, AISCI_PIMD_OBABO},
              {32, 16, 20000, AISCI_PIMD_BAOAB}};
  const double dt = 0.05;
  for (size_t t = 0; t < sizeof(runs) / sizeof(runs[0]); t++) {
    const int P = runs[t].P;
    const double exact = exact_p_bead(P, kT, hbar, w);
    ho_result r = run_ho(P, runs[t].integ, runs[t].n, runs[t].nsteps, kT, hbar, w, dt, 11 + t);
    printf("HO P=%2d %s: exact P-bead %.4f (quantum %.4f, classical %.4f) | prim %.4f +- %.4f  "
           "vir %.4f +- %.4f  cv %.4f +- %.4f | mode KE / (3PkT/2) %.4f +- %.4f\n",
           P, runs[t].integ == AISCI_PIMD_OBABO ? "obabo" : "baoab", exact, quantum, classical,
           r.prim, r.eprim, r.vir, r.evir, r.cv, r.ecv, r.kin, r.ekin);
    /* 4 standard errors plus an allowance for the O(dt^2) splitting bias. The primitive
     * estimator amplifies the bias of the sampled spring energy by ~P: measured over 8 seeds
     * with OBABO at w dt = 0.05 it is -0.6% (P = 8), -0.8% (16), -1.7% (32; -0.7% at
     * w dt = 0.025, -6.5% at 0.1); BAOAB at P = 32: -0.3 +- 0.5%. */
    const double bias = 0.005 * exact;
    CHECK(fabs(r.prim - exact) < 4 * r.eprim + 2 * bias, "P=%d primitive KE %g vs %g", P, r.prim, exact);
    CHECK(fabs(r.vir - exact) < 4 * r.evir + bias, "P=%d virial KE %g vs %g", P, r.vir, exact);
    CHECK(fabs(r.cv - exact) < 4 * r.ecv + bias, "P=%d centroid-virial KE %g vs %g", P, r.cv, exact);
    CHECK(fabs(r.kin - 1.0) < 4 * r.ekin + 0.005, "P=%d mode kinetic / (3NPkT/2) = %g", P, r.kin);
    /* the error bars must be small enough to tell the cases apart */
    CHECK(r.ecv < 0.01 && r.evir < 0.02 && r.eprim < 0.03, "P=%d error bars too large: %g %g %g", P,
          r.ecv, r.evir, r.eprim);
    if (P == 1) CHECK_CLOSE(exact, classical, 1e-15, "P = 1 is classical");
    if (P == 1) CHECK_CLOSE(r.prim, classical, 1e-12, "P = 1 primitive KE is 3kT/2 exactly");
    if (P == 32) {
      CHECK(fabs(exact - quantum) < 0.01 * quantum, "P = 32 bead value %g vs quantum %g", exact, quantum);
      CHECK(fabs(r.cv - quantum) < 4 * r.ecv + 0.015 * quantum, "P = 32 centroid-virial %g vs quantum %g",
            r.cv, quantum);
    }
  }
}

/* every create() argument check: AISCI_ERR_ARG, a message naming the argument, *out NULL */
static void test_create_errors(void)
{
  aisci_pimd *p = (aisci_pimd *) &p; /* non-NULL garbage: create must reset it */
  CHECK(aisci_pimd_create(NULL, &p) == AISCI_ERR_ARG && p == NULL, "NULL config");
  aisci_pimd_config ok = aisci_pimd_config_default();
  CHECK(aisci_pimd_create(&ok, NULL) == AISCI_ERR_ARG, "NULL output pointer");
  int nc = 0;
#define CASE(label, stmt)                                                                      \
  do {                                                                                         \
    aisci_pimd_config c = aisci_pimd_config_default();                                         \
    stmt;                                                                                      \
    p = (aisci_pimd *) &p;                                                                     \
    aisci_clear_error();                                                                       \
    aisci_status st = aisci_pimd_create(&c, &p);                                               \
    CHECK(st == AISCI_ERR_ARG, "%s: status %d", #stmt, (int) st);                              \
    CHECK(p == NULL, "%s: output not reset to NULL", #stmt);                                   \
    CHECK(strstr(aisci_last_error(), label) != NULL, "%s: message '%s' does not name '%s'",    \
          #stmt, aisci_last_error(), label);                                                   \
    nc++;                                                                                      \
  } while (0)
  CASE("beads", c.nbeads = 0);
  CASE("beads", c.nbeads = -4);
  CASE("method", c.method = (aisci_pimd_method) 2);
  CASE("method", c.method = (aisci_pimd_method) -1);
  CASE("integrator", c.integrator = (aisci_pimd_integrator) 7);
  CASE("ensemble", c.ensemble = (aisci_pimd_ensemble) 4);
  CASE("fmmode", c.fmmode = (aisci_pimd_fmmode) 3);
  CASE("fmass", c.fmass = 0.0);
  CASE("-2.5", c.fmass = -2.5);
  CASE("fmass", c.fmass = NAN);
  CASE("scale", c.scale = -1.0);
  CASE("kT", c.kT = 0.0);
  CASE("-3", c.kT = -3.0);
  CASE("kT", c.kT = NAN);
  CASE("kT", c.kT = INFINITY);
  CASE("hbar", c.hbar = 0.0);
  CASE("dt", c.dt = 0.0);
  CASE("dt", c.dt = -0.5);
  CASE("dt", c.dt = INFINITY);
  CASE("tau", c.tau = 0.0);
  CASE("tau", c.tau = -1.0);
  CASE("mvv2e", c.mvv2e = 0.0);
  CASE("ftm2v", c.ftm2v = -1.0);
  CASE("seed", c.seed = 0);
  /* constant-pressure arguments, checked for ensembles NPH and NPT */
  CASE("barostat", (c.ensemble = AISCI_PIMD_NPT, c.barostat = (aisci_pimd_barostat) 2));
  CASE("pstyle", (c.ensemble = AISCI_PIMD_NPH, c.pstyle = (aisci_pimd_pstyle) 5));
  CASE("taup", (c.ensemble = AISCI_PIMD_NPT, c.taup = 0.0));
  CASE("taup", (c.ensemble = AISCI_PIMD_NPT, c.taup = INFINITY));
  CASE("natoms", (c.ensemble = AISCI_PIMD_NPT, c.natoms = 0.0));
  CASE("natoms", (c.ensemble = AISCI_PIMD_NPT, c.natoms = INFINITY));
  CASE("pext", (c.ensemble = AISCI_PIMD_NPH, c.pext = NAN));
  CASE("nmpimd", (c.ensemble = AISCI_PIMD_NPT, c.method = AISCI_PIMD_CARTESIAN));
#undef CASE
  CHECK(nc == 32, "ran %d argument cases", nc);
  /* defaults are valid and documented */
  CHECK(aisci_pimd_create(&ok, &p) == AISCI_OK && p, "default config must be valid: %s", aisci_last_error());
  const aisci_pimd_config *g = aisci_pimd_get_config(p);
  CHECK(g && g->nbeads == 1 && g->method == AISCI_PIMD_NMPIMD && g->integrator == AISCI_PIMD_OBABO &&
            g->ensemble == AISCI_PIMD_NVT && g->fmmode == AISCI_PIMD_FM_PHYSICAL && g->fmass == 1.0 &&
            g->scale == 1.0,
        "default configuration differs from the documented defaults");
  aisci_pimd_destroy(p);
  /* NULL handling of the accessors */
  aisci_pimd_destroy(NULL);
  CHECK(aisci_pimd_get_config(NULL) == NULL, "get_config(NULL)");
  CHECK(aisci_pimd_omega_p(NULL, &(double){0}) == AISCI_ERR_ARG, "omega_p(NULL) is an argument error");
  CHECK(aisci_pimd_mass_factor(NULL, 0, &(double){0}) == AISCI_ERR_ARG, "mass_factor(NULL) is an argument error");
  CHECK(aisci_pimd_mode_frequency(NULL, 0, &(double){0}) == AISCI_ERR_ARG, "mode_frequency(NULL) is an argument error");
}

/* Virial sums (@since 0.4): the centroid virial from the modes k >= 1
 * (aisci_pimd_mode_virial) equals the one from the Cartesian beads
 * (aisci_pimd_bead_virial), sum_j (x_j - xc) . f_j = sum_{k>=1} q_k . F_k, since the
 * normal-mode transform is orthogonal; likewise sum_j x_j . f_j = sum_k q_k . F_k. Per-atom
 * kinetic energies and every error status. */
static void test_virial_sums(void)
{
  enum { P = 5, N = 7 };
  aisci_pimd_config c = base_config(P, 0.7, 1.0, 1.0);
  aisci_pimd *p = make_cfg(&c);
  if (!p) return;
  double x[P * N * 3], f[P * N * 3], q[N * 3], fm[N * 3], mode0[N * 3];
  for (int i = 0; i < P * N * 3; i++) {
    x[i] = 3.0 * aisci_test_srand1();
    f[i] = aisci_test_srand1();
  }
  double xf_beads = 0.0, xcf_beads = 0.0, per_beads[N] = {0}, per[N];
  CHECK(aisci_pimd_to_mode(p, 0, N, x, mode0) == AISCI_OK, "centroid mode");
  for (int j = 0; j < P; j++) {
    double xf, xcf;
    CHECK(aisci_pimd_bead_virial(p, N, x + 3 * N * j, mode0, f + 3 * N * j, per, &xf, &xcf) ==
              AISCI_OK,
          "bead_virial: %s", aisci_last_error());
    xf_beads += xf;
    xcf_beads += xcf;
    for (int i = 0; i < N; i++) per_beads[i] += per[i];
  }
  double xf_modes = 0.0, xcf_modes = 0.0, per_modes[N] = {0}, minus_qf[3] = {0, 0, 0};
  for (int k = 0; k < P; k++) {
    double xf = -1.0;
    CHECK(aisci_pimd_to_mode(p, k, N, x, q) == AISCI_OK && aisci_pimd_to_mode(p, k, N, f, fm) ==
              AISCI_OK,
          "modes");
    CHECK(aisci_pimd_mode_virial(p, k, N, q, fm, per_modes, minus_qf, &xf) == AISCI_OK,
          "mode_virial: %s", aisci_last_error());
    xf_modes += xf;
    if (k > 0) xcf_modes += xf;
    if (k == 0)
      CHECK(per_modes[0] == 0.0 && minus_qf[0] == 0.0 && minus_qf[2] == 0.0,
            "the centroid adds no centroid-virial share");
  }
  CHECK_CLOSE(xf_modes, xf_beads, 1e-12 * (1.0 + fabs(xf_beads)), "sum x.f: modes vs beads");
  CHECK_CLOSE(xcf_modes, xcf_beads, 1e-12 * (1.0 + fabs(xcf_beads)), "centroid virial");
  CHECK_CLOSE(-(minus_qf[0] + minus_qf[1] + minus_qf[2]), xcf_beads,
              1e-12 * (1.0 + fabs(xcf_beads)), "minus_qf sums the centroid virial");
  double worst = 0.0;
  for (int i = 0; i < N; i++) worst = fmax(worst, fabs(per_modes[i] - per_beads[i]));
  CHECK(worst < 1e-12, "per-atom centroid virial: modes vs beads differ by %.3g", worst);
  CHECK(fabs(xcf_beads - xf_beads) > 1e-3, "the centroid part matters (the test can fail)");

  /* per-atom kinetic energy 3kT/2 - c_i / (2P) from two partitions' shares, stride 3 */
  const double shares[2 * 2] = {1.0, -2.0, 3.0, 0.5};
  double out[2 * 3] = {9, 9, 9, 9, 9, 9};
  CHECK(aisci_pimd_peratom_kinetic(p, 2, 2, shares, out, 3) == AISCI_OK, "peratom_kinetic");
  CHECK(fabs(out[0] - (1.05 - 0.4)) < 1e-15 && fabs(out[3] - (1.05 + 0.15)) < 1e-15 &&
            out[1] == 9 && out[4] == 9,
        "per-atom KE %.17g %.17g, other columns untouched", out[0], out[3]);

  /* errors */
  double xf, xcf;
  CHECK(aisci_pimd_mode_virial(NULL, 0, N, q, fm, NULL, NULL, &xf) == AISCI_ERR_ARG, "NULL pimd");
  CHECK(aisci_pimd_mode_virial(p, P, N, q, fm, NULL, NULL, &xf) == AISCI_ERR_ARG, "k = P");
  CHECK(strstr(aisci_last_error(), "mode_virial: mode/bead index 5 outside 0..4") != NULL,
        "message: %s", aisci_last_error());
  CHECK(aisci_pimd_mode_virial(p, 0, N, NULL, fm, NULL, NULL, &xf) == AISCI_ERR_ARG, "NULL q");
  CHECK(aisci_pimd_mode_virial(p, 0, N, q, fm, NULL, NULL, NULL) == AISCI_ERR_ARG, "NULL xf");
  CHECK(aisci_pimd_bead_virial(p, N, x, NULL, f, NULL, &xf, &xcf) == AISCI_ERR_ARG, "NULL mode0");
  CHECK(aisci_pimd_bead_virial(p, N, x, mode0, NULL, NULL, &xf, &xcf) == AISCI_ERR_ARG, "NULL f");
  CHECK(aisci_pimd_bead_virial(p, -1, x, mode0, f, NULL, &xf, &xcf) == AISCI_ERR_ARG, "n < 0");
  CHECK(aisci_pimd_bead_virial(p, 0, NULL, NULL, NULL, NULL, &xf, &xcf) == AISCI_OK && xf == 0.0,
        "no atoms");
  CHECK(aisci_pimd_peratom_kinetic(p, 2, 0, shares, out, 3) == AISCI_ERR_ARG, "nparts 0");
  CHECK(aisci_pimd_peratom_kinetic(p, 2, 2, shares, out, 0) == AISCI_ERR_ARG, "stride 0");
  CHECK(aisci_pimd_peratom_kinetic(p, 2, 2, NULL, out, 3) == AISCI_ERR_ARG, "NULL shares");
  CHECK(aisci_pimd_peratom_kinetic(NULL, 2, 2, shares, out, 3) == AISCI_ERR_ARG, "NULL pimd");
  aisci_pimd_destroy(p);
}

int main(void)
{
  aisci_test_rng_state = 0xABCDEF0011223344ull;
  test_collapsed();
  test_mode_amplitudes(1);
  test_mode_amplitudes(2);
  test_mode_amplitudes(5);
  test_mode_amplitudes(8);
  test_by_hand();
  test_create_errors();
  test_harmonic_oscillator();
  test_virial_sums();
  return aisci_test_summary("test_pimd_estimators");
}
