/* Free ring-polymer propagation (A step), the B step and velocity Verlet (B A B) in normal
 * modes, checked against analytic solutions computed here from the documented
 * definitions: omega_P = P kT / hbar, lambda_k = 4 sin^2(pi k / P), M_k = fmass m
 * (physical) or fmass lambda_k m (normal, k > 0), Omega_k = omega_P sqrt(lambda_k m / M_k). */
#include "aisci_testing/pimd.h"
#include "aisci_test.h"
#include "pimd_values.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846


static aisci_pimd *make(int P, aisci_pimd_method method, aisci_pimd_fmmode fm, double fmass,
                        double kT, double hbar, double mvv2e)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  c.nbeads = P;
  c.method = method;
  c.fmmode = fm;
  c.fmass = fmass;
  c.kT = kT;
  c.hbar = hbar;
  c.mvv2e = mvv2e;
  c.ftm2v = 1.0 / mvv2e;
  aisci_pimd *p = NULL;
  aisci_status st = aisci_pimd_create(&c, &p);
  CHECK(st == AISCI_OK && p, "create P=%d: %s", P, aisci_last_error());
  return p;
}

/* mass factor and frequency of mode k from the definitions */
static double ref_mass_factor(int P, aisci_pimd_method method, aisci_pimd_fmmode fm, double fmass, int k)
{
  double lam = 4.0 * pow(sin(PI * k / P), 2);
  if (method == AISCI_PIMD_NMPIMD && fm == AISCI_PIMD_FM_NORMAL && k > 0) return fmass * lam;
  return fmass;
}
static double ref_omega(int P, aisci_pimd_method method, aisci_pimd_fmmode fm, double fmass,
                        double kT, double hbar, int k)
{
  if (method == AISCI_PIMD_CARTESIAN || k == 0) return 0.0;
  double lam = 4.0 * pow(sin(PI * k / P), 2);
  return P * kT / hbar * sqrt(lam / ref_mass_factor(P, method, fm, fmass, k));
}

/* A step: n small steps against the analytic harmonic (or free) solution at t = n h */
static void test_a_analytic(int P, aisci_pimd_method method, aisci_pimd_fmmode fm, double fmass)
{
  const double kT = 0.8, hbar = 1.7;
  aisci_pimd *p = make(P, method, fm, fmass, kT, hbar, 1.0);
  if (!p) return;
  const int n = 3, nsteps = 1000;
  const double h = 0.0137;
  for (int k = 0; k < P; k++) {
    double W = ref_omega(P, method, fm, fmass, kT, hbar, k);
    double mf = ref_mass_factor(P, method, fm, fmass, k);
    CHECK_CLOSE(pv_mode_frequency(p, k), W, 1e-12 * (1 + W), "Omega_k");
    CHECK_CLOSE(pv_mass_factor(p, k), mf, 1e-12 * mf, "M_k / m");
    double q[9], v[9], q0[9], v0[9];
    for (int a = 0; a < 3 * n; a++) {
      q0[a] = q[a] = aisci_test_srand1();
      v0[a] = v[a] = 3.0 * aisci_test_srand1();
    }
    int ok = 1;
    for (int s = 0; s < nsteps; s++) ok &= aisci_pimd_a_step(p, k, n, q, v, h) == AISCI_OK;
    CHECK(ok, "a_step failed: %s", aisci_last_error());
    double t = nsteps * h, err_q = 0, err_v = 0;
    for (int a = 0; a < 3 * n; a++) {
      double qe, ve;
      if (W == 0.0) {
        qe = q0[a] + v0[a] * t;
        ve = v0[a];
      } else {
        qe = q0[a] * cos(W * t) + v0[a] * sin(W * t) / W;
        ve = v0[a] * cos(W * t) - q0[a] * W * sin(W * t);
      }
      err_q = fmax(err_q, fabs(q[a] - qe));
      err_v = fmax(err_v, fabs(v[a] - ve) / (1.0 + W));
    }
    CHECK(err_q < 1e-10 && err_v < 1e-10,
          "P=%d method %d fmmode %d fmass %g mode %d (Omega %g): A step vs analytic |dq| %g |dv| %g",
          P, (int) method, (int) fm, fmass, k, W, err_q, err_v);
    /* one large step (Omega h > pi) is exact as well */
    for (int a = 0; a < 3 * n; a++) {
      q[a] = q0[a];
      v[a] = v0[a];
    }
    aisci_pimd_a_step(p, k, n, q, v, t);
    double err1 = 0;
    for (int a = 0; a < 3 * n; a++) {
      double qe = W == 0.0 ? q0[a] + v0[a] * t : q0[a] * cos(W * t) + v0[a] * sin(W * t) / W;
      err1 = fmax(err1, fabs(q[a] - qe));
    }
    CHECK(err1 < 1e-12, "mode %d: one step of length %g vs analytic: %g", k, t, err1);
  }
  aisci_pimd_destroy(p);
}

/* A steps conserve the free ring-polymer energy sum_k K_k + S_k; A(h) A(-h) = identity;
 * the one-step map has unit Jacobian (symplectic, 1 dof per component) */
static void test_a_invariants(int P, aisci_pimd_fmmode fm, double fmass)
{
  const int n = 4;
  const size_t m = 3 * n;
  const double mvv2e = 3.0;
  aisci_pimd *p = make(P, AISCI_PIMD_NMPIMD, fm, fmass, 1.1, 0.6, mvv2e);
  if (!p) return;
  double mass[4] = {1.0, 4.0, 12.0, 0.25};
  double *q = malloc(sizeof(double) * P * m), *v = malloc(sizeof(double) * P * m);
  double *q0 = malloc(sizeof(double) * P * m), *v0 = malloc(sizeof(double) * P * m);
  for (size_t a = 0; a < P * m; a++) {
    q0[a] = q[a] = aisci_test_srand1();
    v0[a] = v[a] = aisci_test_srand1();
  }
  double e0 = 0, e1 = 0;
  for (int k = 0; k < P; k++)
    e0 += pv_kinetic(p, k, n, mass, v + k * m) + pv_spring_mode(p, k, n, mass, q + k * m);
  double h = 0.0731;
  for (int s = 0; s < 2000; s++)
    for (int k = 0; k < P; k++) aisci_pimd_a_step(p, k, n, q + k * m, v + k * m, h * (1.0 + 0.5 * aisci_test_urand()));
  for (int k = 0; k < P; k++)
    e1 += pv_kinetic(p, k, n, mass, v + k * m) + pv_spring_mode(p, k, n, mass, q + k * m);
  CHECK(fabs(e1 - e0) <= 1e-11 * fabs(e0), "P=%d fmmode %d: free ring energy %.15g -> %.15g", P,
        (int) fm, e0, e1);
  /* reversibility */
  for (size_t a = 0; a < P * m; a++) {
    q[a] = q0[a];
    v[a] = v0[a];
  }
  for (int k = 0; k < P; k++) {
    aisci_pimd_a_step(p, k, n, q + k * m, v + k * m, h);
    aisci_pimd_a_step(p, k, n, q + k * m, v + k * m, -h);
  }
  double err = 0;
  for (size_t a = 0; a < P * m; a++) err = fmax(err, fmax(fabs(q[a] - q0[a]), fabs(v[a] - v0[a])));
  CHECK(err < 1e-13, "P=%d: A(h) A(-h) differs from the identity by %g", P, err);
  /* Jacobian of one step on a single component: det [[dq/dq0, dq/dv0], [dv/dq0, dv/dv0]] = 1 */
  for (int k = 0; k < P; k++) {
    double qa[3] = {1, 0, 0}, va[3] = {0, 0, 0}, qb[3] = {0, 0, 0}, vb[3] = {1, 0, 0};
    aisci_pimd_a_step(p, k, 1, qa, va, h);
    aisci_pimd_a_step(p, k, 1, qb, vb, h);
    double det = qa[0] * vb[0] - qb[0] * va[0];
    CHECK_CLOSE(det, 1.0, 1e-13, "det of the A-step map");
  }
  free(q);
  free(v);
  free(q0);
  free(v0);
  aisci_pimd_destroy(p);
}

/* B step: v += h ftm2v f / (m M_k/m), with non-trivial unit factors */
static void test_b_step(void)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  c.nbeads = 4;
  c.fmmode = AISCI_PIMD_FM_NORMAL;
  c.fmass = 0.7;
  c.ftm2v = 2.5;
  c.mvv2e = 0.4;
  aisci_pimd *p = NULL;
  CHECK(aisci_pimd_create(&c, &p) == AISCI_OK, "create: %s", aisci_last_error());
  if (!p) return;
  const int n = 3;
  double mass[3] = {1.0, 2.0, 15.999};
  for (int k = 0; k < 4; k++) {
    double f[9], v[9], v0[9];
    for (int a = 0; a < 9; a++) {
      f[a] = 5.0 * aisci_test_srand1();
      v0[a] = v[a] = aisci_test_srand1();
    }
    double h = 0.3;
    CHECK(aisci_pimd_b_step(p, k, n, mass, f, v, h) == AISCI_OK, "b_step: %s", aisci_last_error());
    double mk = k == 0 ? 0.7 : 0.7 * 4.0 * pow(sin(PI * k / 4), 2);
    double err = 0;
    for (int i = 0; i < n; i++)
      for (int d = 0; d < 3; d++)
        err = fmax(err, fabs(v[3 * i + d] - (v0[3 * i + d] + h * 2.5 * f[3 * i + d] / (mass[i] * mk))));
    CHECK(err < 1e-13, "b_step mode %d vs v + h ftm2v f / M_k: %g", k, err);
  }
  double f[3] = {1, 1, 1}, v[3] = {0, 0, 0}, mass1 = 1.0;
  CHECK(aisci_pimd_b_step(p, 4, 1, &mass1, f, v, 0.1) == AISCI_ERR_ARG, "b_step bad k");
  CHECK(aisci_pimd_b_step(p, 0, 1, NULL, f, v, 0.1) == AISCI_ERR_ARG, "b_step NULL masses");
  CHECK(aisci_pimd_b_step(p, 0, 1, &mass1, NULL, v, 0.1) == AISCI_ERR_ARG, "b_step NULL forces");
  CHECK(aisci_pimd_b_step(p, 0, 1, &mass1, f, NULL, 0.1) == AISCI_ERR_ARG, "b_step NULL velocities");
  CHECK(aisci_pimd_b_step(NULL, 0, 1, &mass1, f, v, 0.1) == AISCI_ERR_ARG, "b_step NULL integrator");
  CHECK(aisci_pimd_a_step(p, -1, 1, f, v, 0.1) == AISCI_ERR_ARG, "a_step bad k");
  CHECK(aisci_pimd_a_step(p, 0, 1, NULL, v, 0.1) == AISCI_ERR_ARG, "a_step NULL q");
  CHECK(aisci_pimd_a_step(NULL, 0, 1, f, v, 0.1) == AISCI_ERR_ARG, "a_step NULL integrator");
  CHECK(aisci_pimd_b_step(p, 0, 0, NULL, NULL, NULL, 0.1) == AISCI_OK, "b_step with n = 0");
  aisci_pimd_destroy(p);
}

/* NVE ring polymer of an anisotropic 3-D harmonic oscillator, B(h/2) A(h) [force] B(h/2)
 * in normal modes (nmpimd) or B(h/2) A(h) [force + springs] B(h/2) in bead coordinates
 * (Cartesian). Returns the largest |H - H0| / |H0|; *drift gets the difference of the mean
 * energy between the last and the first quarter of the run, relative to H0. */
typedef struct {
  int P, n, nsteps;
  aisci_pimd_method method;
  aisci_pimd_fmmode fm;
  double fmass, h;
} nve_case;

static const double OMEGA[3] = {0.8, 1.0, 1.3}; /* physical frequency per Cartesian direction */

static double nve_run(const nve_case *cs, double *drift)
{
  const int P = cs->P, n = cs->n;
  const size_t m = 3 * (size_t) n;
  const double mvv2e = 2.0, kT = 0.5, hbar = 1.0;
  aisci_pimd *p = make(P, cs->method, cs->fm, cs->fmass, kT, hbar, mvv2e);
  if (!p) return INFINITY;
  const int cart = cs->method == AISCI_PIMD_CARTESIAN;
  double *mass = malloc(sizeof(double) * n);
  double *q = malloc(sizeof(double) * P * m), *v = malloc(sizeof(double) * P * m);
  double *x = malloc(sizeof(double) * P * m), *fx = malloc(sizeof(double) * P * m);
  double *fq = malloc(sizeof(double) * P * m);
  uint64_t save = aisci_test_rng_state;
  aisci_test_rng_state = 42; /* the same initial state for every step size */
  for (int i = 0; i < n; i++) mass[i] = 1.0 + i;
  for (size_t a = 0; a < P * m; a++) {
    q[a] = aisci_test_srand1();
    v[a] = aisci_test_srand1();
  }
  aisci_test_rng_state = save;
  /* forces on q (modes or beads) and the total potential incl. Cartesian springs */
  double epot = 0;
#define FORCES()                                                                               \
  do {                                                                                         \
    epot = 0;                                                                                  \
    for (int j = 0; j < P; j++) {                                                              \
      if (cart) memcpy(x + j * m, q + j * m, sizeof(double) * m);                              \
      else aisci_pimd_to_bead(p, j, n, q, x + j * m);                                          \
    }                                                                                          \
    for (int j = 0; j < P; j++)                                                                \
      for (int i = 0; i < n; i++)                                                              \
        for (int d = 0; d < 3; d++) {                                                          \
          double xx = x[j * m + 3 * i + d], w2 = OMEGA[d] * OMEGA[d];                          \
          fx[j * m + 3 * i + d] = -mvv2e * mass[i] * w2 * xx;                                  \
          epot += 0.5 * mvv2e * mass[i] * w2 * xx * xx;                                        \
        }                                                                                      \
    if (cart) {                                                                                \
      for (int j = 0; j < P; j++) epot += pv_spring_bead(p, j, n, mass, x, fx + j * m); \
      memcpy(fq, fx, sizeof(double) * P * m);                                                  \
    } else {                                                                                   \
      for (int k = 0; k < P; k++) aisci_pimd_to_mode(p, k, n, fx, fq + k * m);                 \
    }                                                                                          \
  } while (0)
  FORCES();
  double *energy = malloc(sizeof(double) * (cs->nsteps + 1));
  for (int s = 0; s <= cs->nsteps; s++) {
    if (s > 0) {
      for (int k = 0; k < P; k++) {
        aisci_pimd_b_step(p, k, n, mass, fq + k * m, v + k * m, 0.5 * cs->h);
        aisci_pimd_a_step(p, k, n, q + k * m, v + k * m, cs->h);
      }
      FORCES();
      for (int k = 0; k < P; k++) aisci_pimd_b_step(p, k, n, mass, fq + k * m, v + k * m, 0.5 * cs->h);
    }
    double e = epot;
    for (int k = 0; k < P; k++) {
      e += pv_kinetic(p, k, n, mass, v + k * m);
      if (!cart) e += pv_spring_mode(p, k, n, mass, q + k * m);
    }
    energy[s] = e;
  }
#undef FORCES
  double dmax = 0, first = 0, last = 0;
  const int quarter = cs->nsteps / 4;
  for (int s = 0; s <= cs->nsteps; s++) dmax = fmax(dmax, fabs(energy[s] - energy[0]));
  for (int s = 0; s < quarter; s++) {
    first += energy[s];
    last += energy[cs->nsteps - s];
  }
  *drift = (last - first) / quarter / fabs(energy[0]);
  double rel = dmax / fabs(energy[0]);
  free(energy);
  free(mass);
  free(q);
  free(v);
  free(x);
  free(fx);
  free(fq);
  aisci_pimd_destroy(p);
  return rel;
}

static void test_nve(void)
{
  const nve_case cases[] = {
      {1, 2, 40000, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0, 0.05},
      {8, 3, 40000, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0, 0.05},
      {8, 3, 40000, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_NORMAL, 0.5, 0.05},
      {4, 3, 40000, AISCI_PIMD_CARTESIAN, AISCI_PIMD_FM_PHYSICAL, 1.0, 0.02},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    nve_case cs = cases[c], half = cases[c];
    half.h *= 0.5;
    half.nsteps *= 2;
    double drift, drift2;
    double e1 = nve_run(&cs, &drift);
    double e2 = nve_run(&half, &drift2);
    printf("NVE P=%d method %d fmmode %d h=%g: max |dH|/H %.3g, drift %.3g; h/2: %.3g, ratio %.3f\n",
           cs.P, (int) cs.method, (int) cs.fm, cs.h, e1, drift, e2, e1 / e2);
    CHECK(e1 < 2e-3, "case %zu: energy fluctuation %g too large", c, e1);
    CHECK(fabs(drift) < 1e-6 && fabs(drift2) < 1e-6, "case %zu: energy drift %g / %g", c, drift, drift2);
    /* second order: halving h divides the fluctuation by ~4 */
    CHECK(e1 / e2 > 3.0 && e1 / e2 < 5.0, "case %zu: fluctuation ratio h vs h/2 = %g, expected ~4", c, e1 / e2);
  }
}

int main(void)
{
  aisci_test_rng_state = 0x0DDB1A5E5BAD5EEDull;
  const int plist[] = {1, 2, 3, 4, 7, 8, 32};
  for (size_t t = 0; t < sizeof(plist) / sizeof(plist[0]); t++) {
    int P = plist[t];
    test_a_analytic(P, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 1.0);
    test_a_analytic(P, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_PHYSICAL, 2.5);
    test_a_analytic(P, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_NORMAL, 1.0);
    test_a_analytic(P, AISCI_PIMD_NMPIMD, AISCI_PIMD_FM_NORMAL, 0.3);
    test_a_analytic(P, AISCI_PIMD_CARTESIAN, AISCI_PIMD_FM_PHYSICAL, 1.0);
    test_a_invariants(P, AISCI_PIMD_FM_PHYSICAL, 1.0);
    test_a_invariants(P, AISCI_PIMD_FM_NORMAL, 0.6);
  }
  test_b_step();
  test_nve();
  return aisci_test_summary("test_pimd_propagation");
}
