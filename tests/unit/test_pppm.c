/* PPPM core: energies, forces and virial against direct Ewald sums (cubic, orthorhombic,
 * triclinic cells; neutral and charged systems; Gaussian charges), the split API, box
 * updates and every error path with its exact status. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aisci_testing/pppm.h"
#include "aisci_test.h"
#include "pppm_ewald_ref.h"

#define QQRD2E 332.06371 /* LAMMPS "real" units, so that the unit factor is exercised */

static const double CUBIC[3][3] = {{15.0, 0, 0}, {0, 15.0, 0}, {0, 0, 15.0}};
static const double ORTHO[3][3] = {{12.0, 0, 0}, {0, 16.0, 0}, {0, 0, 19.0}};
static const double TRICLINIC[3][3] = {{14.0, 0, 0}, {3.5, 13.0, 0}, {-2.5, 4.0, 15.0}};

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double sumsq(int n, const double *q)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) s += q[i] * q[i];
  return s;
}

static double sum(int n, const double *q)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) s += q[i];
  return s;
}

static void config_for(aisci_pppm_config *cfg, const double box[3][3], int n, const double *q,
                       double accuracy, double cutoff)
{
  *cfg = aisci_pppm_config_default();
  memcpy(cfg->box, box, sizeof(cfg->box));
  cfg->accuracy = accuracy;
  cfg->cutoff = cutoff;
  cfg->q2sum = sumsq(n, q);
  cfg->natoms = n;
  cfg->qqrd2e = QQRD2E;
}

/* Reciprocal part against Ewald with the same g: RMS force error relative to qqrd2e
 * (the force of two unit charges at unit distance) must meet the requested accuracy. */
static void test_accuracy_diff(const char *name, const double box[3][3], int n, int order,
                               double accuracy, aisci_pppm_diff diff)
{
  double *x = malloc(sizeof(double) * 3 * n), *q = malloc(sizeof(double) * n);
  double *f = calloc(3 * (size_t) n, sizeof(double)), *fr = calloc(3 * (size_t) n, sizeof(double));
  ref_random_system(n, box, 1234 + n + order, 1, x, q);
  aisci_pppm_config cfg;
  config_for(&cfg, box, n, q, accuracy, 7.0);
  cfg.order = order;
  cfg.diff = diff;
  aisci_pppm *p = NULL;
  double t0 = now();
  aisci_status st = aisci_pppm_create(&cfg, MPI_COMM_SELF, &p);
  double t1 = now();
  CHECK(st == AISCI_OK, "%s: create: %s", name, aisci_last_error());
  if (st != AISCI_OK) return;
  aisci_pppm_info info;
  aisci_pppm_get_info(p, &info);
  double e, vir[6], er, vr[6];
  st = aisci_pppm_compute(p, n, x, q, NULL, &e, f, vir);
  double t2 = now();
  CHECK(st == AISCI_OK, "%s: compute: %s", name, aisci_last_error());
  ref_ewald_recip(n, x, q, box, info.g_eff, QQRD2E, &er, fr, vr);
  double ferr = ref_rms_diff(n, f, fr) / QQRD2E;
  double frms = 0.0;
  for (int i = 0; i < 3 * n; i++) frms += fr[i] * fr[i];
  frms = sqrt(frms / n);
  /* ik differentiation with the same B-splines both ways conserves momentum */
  double fsum[3] = {0, 0, 0};
  for (int i = 0; i < n; i++)
    for (int a = 0; a < 3; a++) fsum[a] += f[3 * i + a];
  CHECK(diff == AISCI_PPPM_AD || fabs(fsum[0]) + fabs(fsum[1]) + fabs(fsum[2]) <= 1e-10 * frms * n,
        "%s: net force %.3g %.3g %.3g", name, fsum[0], fsum[1], fsum[2]);
  double verr = 0.0;
  for (int v = 0; v < 6; v++) verr = fmax(verr, fabs(vir[v] - vr[v]));
  /* energy and virial errors per unit sum(q^2), in the same relative units as forces */
  double eunit = QQRD2E * cfg.q2sum;
  printf("%-9s %s P=%d acc %.0e: grid %3d %3d %3d g %.4f | rms force err %.2e (estimate %.2e; "
         "%.1e of rms force) | energy err %.1e | virial err %.1e | create %.3f s, compute "
         "%.4f s\n",
         name, diff == AISCI_PPPM_AD ? "ad" : "ik", order, accuracy, info.grid[0], info.grid[1],
         info.grid[2], info.g_eff, ferr, info.kspace_error, ferr * QQRD2E / frms,
         fabs(e - er) / eunit, verr / eunit, t1 - t0, t2 - t1);
  CHECK(ferr <= accuracy, "%s order %d: force error %.3g above accuracy %.3g", name, order, ferr,
        accuracy);
  CHECK(info.kspace_error > 0.0 && info.kspace_error <= accuracy,
        "%s: estimate %.3g vs accuracy %.3g", name, info.kspace_error, accuracy);
  /* the Deserno-Holm estimate describes the measured error within a factor 2 */
  CHECK(ferr < 2.0 * info.kspace_error && ferr > info.kspace_error / 2.0,
        "%s order %d: measured %.3g vs estimate %.3g", name, order, ferr, info.kspace_error);
  CHECK(fabs(e - er) <= accuracy * eunit, "%s: energy %.12g vs Ewald %.12g", name, e, er);
  CHECK(verr <= 5.0 * accuracy * eunit, "%s: virial error %.3g (unit %.3g)", name, verr, eunit);
  aisci_pppm_destroy(p);
  free(x);
  free(q);
  free(f);
  free(fr);
}

static void test_accuracy(const char *name, const double box[3][3], int n, int order,
                          double accuracy)
{
  test_accuracy_diff(name, box, n, order, accuracy, AISCI_PPPM_IK);
}

/* Sum of the real-space pair terms over all images with the library's own helper
 * (aisci_pppm_real_pair), to check that helper against the reference formula. */
static double helper_real(const aisci_pppm *p, int n, const double *x, const double *q,
                          const double h[3][3], double rc, double *f)
{
  double e = 0.0;
  int nmax = (int) ceil(rc / 8.0) + 2;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int a = -nmax; a <= nmax; a++)
        for (int b = -nmax; b <= nmax; b++)
          for (int c = -nmax; c <= nmax; c++) {
            if (i == j && a == 0 && b == 0 && c == 0) continue;
            double d[3];
            for (int k = 0; k < 3; k++)
              d[k] = x[3 * i + k] - x[3 * j + k] + a * h[0][k] + b * h[1][k] + c * h[2][k];
            double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            if (r > rc) continue;
            double phi, fpair;
            aisci_pppm_real_pair(p, r, &phi, &fpair);
            e += 0.5 * q[i] * q[j] * phi;
            for (int k = 0; k < 3; k++) f[3 * i + k] += q[i] * q[j] * fpair * d[k];
          }
  return e;
}

/* Total Coulomb energy of a charged (non-neutral) set: Ewald at g = 0.25 (reference,
 * converged, with the background term -pi Q^2 / (2 V g^2)) against PPPM's reciprocal
 * part at its own g + real-space helper + aisci_pppm_self_energy(). Only a correct
 * background convention makes the two agree. */
static void test_charged_total(void)
{
  const int n = 60;
  double x[3 * 60], q[60], fref[180] = {0}, fp[180] = {0};
  ref_random_system(n, TRICLINIC, 77, 0, x, q);
  double qs = sum(n, q), q2 = sumsq(n, q);
  CHECK(fabs(qs) > 1.0, "charged test needs a net charge (%g)", qs);
  double gref = 0.25, er, ereal, hinv[3][3], vol;
  ref_invert(TRICLINIC, hinv, &vol);
  ref_ewald_recip(n, x, q, TRICLINIC, gref, QQRD2E, &er, fref, NULL);
  ref_ewald_real(n, x, q, TRICLINIC, gref, 0.0, QQRD2E, &ereal, fref);
  double eref =
      er + ereal - QQRD2E * (gref / sqrt(M_PI) * q2 + M_PI * qs * qs / (2 * vol * gref * gref));

  aisci_pppm_config cfg;
  config_for(&cfg, TRICLINIC, n, q, 1e-6, 9.0);
  aisci_pppm *p = NULL;
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, &p) == AISCI_OK, "create: %s", aisci_last_error());
  aisci_pppm_info info;
  aisci_pppm_get_info(p, &info);
  double ek, eself, ewreal;
  CHECK(aisci_pppm_compute(p, n, x, q, NULL, &ek, fp, NULL) == AISCI_OK, "compute");
  CHECK(aisci_pppm_self_energy(p, qs, q2, &eself, NULL) == AISCI_OK, "self energy");
  /* real space with the library helper out to where erfc(g r) < 1e-16 */
  double ehelp = helper_real(p, n, x, q, TRICLINIC, 6.0 / info.g_eff, fp);
  ref_ewald_real(n, x, q, TRICLINIC, info.g_eff, 0.0, QQRD2E, &ewreal, NULL);
  CHECK_CLOSE(ehelp, ewreal, 1e-9 * fabs(ewreal), "real-space helper vs reference");
  double etot = ek + ehelp + eself;
  double ferr = ref_rms_diff(n, fp, fref) / QQRD2E;
  printf("charged   total energy %.10g vs Ewald %.10g (diff %.1e per unit q2sum), rms force "
         "err %.2e, g %.4f vs %.2f\n",
         etot, eref, fabs(etot - eref) / (QQRD2E * q2), ferr, info.g_eff, gref);
  CHECK(fabs(etot - eref) <= 1e-6 * QQRD2E * q2, "charged total %.12g vs %.12g", etot, eref);
  CHECK(ferr <= 1e-6, "charged forces: %.3g", ferr);
  aisci_pppm_destroy(p);
}

/* Gaussian charges (DPLR): the reference is the Ewald reciprocal sum at g = beta with
 * its self and background terms and no real-space part (pair kernel erf(beta r)/r).
 * PPPM with beta and no split, and with beta and a split at g = 0.5 (real-space helper
 * [erfc(g_eff r) - erfc(beta r)]/r), must both give it. */
static void test_gaussian(void)
{
  const int n = 64;
  const double beta = 0.4;
  double x[3 * 64], q[64], fref[192] = {0};
  ref_random_system(n, ORTHO, 99, 0, x, q);
  double qs = sum(n, q), q2 = sumsq(n, q), er, hinv[3][3], vol;
  ref_invert(ORTHO, hinv, &vol);
  ref_ewald_recip(n, x, q, ORTHO, beta, QQRD2E, &er, fref, NULL);
  double eref = er - QQRD2E * (beta / sqrt(M_PI) * q2 + M_PI * qs * qs / (2 * vol * beta * beta));
  for (int split = 0; split < 2; split++) {
    aisci_pppm_config cfg;
    config_for(&cfg, ORTHO, n, q, 1e-6, 0.0);
    cfg.beta = beta;
    cfg.g_ewald = split ? 0.5 : 0.0;
    aisci_pppm *p = NULL;
    CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, &p) == AISCI_OK, "create: %s", aisci_last_error());
    aisci_pppm_info info;
    aisci_pppm_get_info(p, &info);
    double fp[192] = {0}, ek, eself, ereal = 0.0;
    CHECK(aisci_pppm_compute(p, n, x, q, NULL, &ek, fp, NULL) == AISCI_OK, "compute");
    aisci_pppm_self_energy(p, qs, q2, &eself, NULL);
    if (split) {
      CHECK_CLOSE(info.g_eff, 1.0 / sqrt(1.0 / 0.25 + 1.0 / (beta * beta)), 1e-14, "g_eff");
      ereal = helper_real(p, n, x, q, ORTHO, 6.0 / info.g_eff, fp);
    } else {
      CHECK(isinf(info.g_ewald) && info.g_eff == beta, "no split: g %g g_eff %g", info.g_ewald,
            info.g_eff);
      double phi = 1.0, fpair = 1.0;
      aisci_pppm_real_pair(p, 1.5, &phi, &fpair);
      CHECK(phi == 0.0 && fpair == 0.0, "no real-space part without a split");
    }
    double etot = ek + ereal + eself, ferr = ref_rms_diff(n, fp, fref) / QQRD2E;
    printf("gaussian  beta %.2f split %d: grid %d %d %d energy %.10g vs %.10g (diff %.1e per "
           "unit q2sum), rms force err %.2e (estimate %.2e)\n",
           beta, split, info.grid[0], info.grid[1], info.grid[2], etot, eref,
           fabs(etot - eref) / (QQRD2E * q2), ferr, info.kspace_error);
    CHECK(fabs(etot - eref) <= 1e-6 * QQRD2E * q2, "gaussian energy %.12g vs %.12g", etot, eref);
    CHECK(ferr <= 1e-6, "gaussian forces %.3g", ferr);
    aisci_pppm_destroy(p);
  }
}

/* Virial of reciprocal + background terms against central finite differences of the
 * PPPM energy under homogeneous strain (box and positions deformed together, grid and g
 * fixed), for a charged set in a triclinic cell. Also exercises box updates. */
static void test_virial_fd(void)
{
  const int n = 50;
  double x[150], q[50], f[150];
  ref_random_system(n, TRICLINIC, 5, 0, x, q);
  double qs = sum(n, q), q2 = sumsq(n, q);
  aisci_pppm_config cfg;
  config_for(&cfg, TRICLINIC, n, q, 1e-6, 8.0);
  aisci_pppm *p = NULL;
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, &p) == AISCI_OK, "create: %s", aisci_last_error());
  double e0, vir[6], vbg[6];
  memset(f, 0, sizeof(f));
  aisci_pppm_compute(p, n, x, q, NULL, &e0, f, vir);
  aisci_pppm_self_energy(p, qs, q2, NULL, vbg);
  for (int v = 0; v < 6; v++) vir[v] += vbg[v];
  const int ia[6] = {0, 1, 2, 0, 0, 1}, ib[6] = {0, 1, 2, 1, 2, 2};
  const double hstep = 1e-5;
  double worst = 0.0;
  for (int v = 0; v < 6; v++) {
    double ed[2];
    for (int sgn = 0; sgn < 2; sgn++) {
      /* symmetric strain eps: x' = x (I + eps) for row vectors */
      double eps[3][3] = {{0}};
      double s = sgn ? -hstep : hstep;
      eps[ia[v]][ib[v]] += ia[v] == ib[v] ? s : 0.5 * s;
      if (ia[v] != ib[v]) eps[ib[v]][ia[v]] += 0.5 * s;
      double box[3][3], xs[150];
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
          box[r][c] = TRICLINIC[r][c] + TRICLINIC[r][0] * eps[0][c] + TRICLINIC[r][1] * eps[1][c] +
              TRICLINIC[r][2] * eps[2][c];
      for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
          xs[3 * i + c] = x[3 * i + c] + x[3 * i] * eps[0][c] + x[3 * i + 1] * eps[1][c] +
              x[3 * i + 2] * eps[2][c];
      double e, eself;
      memset(f, 0, sizeof(f));
      CHECK(aisci_pppm_compute(p, n, xs, q, (const double(*)[3]) box, &e, f, NULL) == AISCI_OK,
            "compute with box");
      aisci_pppm_self_energy(p, qs, q2, &eself, NULL);
      ed[sgn] = e + eself;
    }
    double fd = -(ed[0] - ed[1]) / (2.0 * hstep);
    worst = fmax(worst, fabs(fd - vir[v]));
  }
  printf("virial    max |W - finite difference| = %.2e (per unit q2sum %.1e)\n", worst,
         worst / (QQRD2E * q2));
  CHECK(worst <= 1e-5 * QQRD2E * q2, "virial vs finite differences: %.3g", worst);
  aisci_pppm_destroy(p);
}

/* A cluster of charges around a corner of the cell (a slab-with-vacuum situation: the
 * touched patch of the grid is small and wraps around the periodic boundary). The same
 * cluster plus uncharged atoms spread over the whole cell (so every grid row is touched)
 * must give the same forces; both against Ewald. Dense clusters are not random charges:
 * their error exceeds the random-charge estimate (measured ~4x here). */
static void test_cluster(void)
{
  const int n = 60, nz = 20;
  double x[240], q[80], f[240] = {0}, g[240] = {0}, fr[180] = {0};
  ref_random_system(n, ORTHO, 31, 1, x, q);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 3; c++) x[3 * i + c] = 0.25 * x[3 * i + c] - 1.0; /* around 0 */
  for (int i = n; i < n + nz; i++) {
    for (int c = 0; c < 3; c++) x[3 * i + c] = (i - n) * 0.61 * (c + 1);
    q[i] = 0.0;
  }
  aisci_pppm_config cfg;
  config_for(&cfg, ORTHO, n, q, 1e-5, 7.0);
  aisci_pppm *p = NULL;
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, &p) == AISCI_OK, "create");
  aisci_pppm_info info;
  aisci_pppm_get_info(p, &info);
  double e, e2, er;
  CHECK(aisci_pppm_compute(p, n, x, q, NULL, &e, f, NULL) == AISCI_OK, "compute");
  CHECK(aisci_pppm_compute(p, n + nz, x, q, NULL, &e2, g, NULL) == AISCI_OK, "compute");
  ref_ewald_recip(n, x, q, ORTHO, info.g_eff, QQRD2E, &er, fr, NULL);
  double ferr = ref_rms_diff(n, f, fr) / QQRD2E;
  printf("cluster   60 charges in a corner: rms force err %.2e, energy err %.1e; patch vs "
         "whole grid: %.1e\n",
         ferr, fabs(e - er) / (QQRD2E * cfg.q2sum), ref_rms_diff(n, f, g) / QQRD2E);
  CHECK(ref_rms_diff(n, f, g) <= 1e-13 * QQRD2E && fabs(e - e2) <= 1e-13 * fabs(e),
        "small patch vs whole grid: %.3g", ref_rms_diff(n, f, g));
  CHECK(ferr <= 10.0 * cfg.accuracy, "cluster force error %.3g", ferr);
  aisci_pppm_destroy(p);
}

/* Split API = compute (bitwise), box update = fresh object, periodic folding. */
static void test_split_and_updates(void)
{
  const int n = 80;
  double x[240], q[80], fa[240] = {0}, fb[240] = {0}, fc[240] = {0};
  ref_random_system(n, CUBIC, 11, 1, x, q);
  aisci_pppm_config cfg;
  config_for(&cfg, CUBIC, n, q, 1e-5, 7.0);
  aisci_pppm *p = NULL, *p2 = NULL;
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, &p) == AISCI_OK, "create");
  double ea, eb, va[6], vb[6];
  aisci_pppm_compute(p, n, x, q, NULL, &ea, fa, va);
  CHECK(aisci_pppm_spread(p, n, x, q) == AISCI_OK, "spread");
  CHECK(aisci_pppm_solve(p, &eb, vb) == AISCI_OK, "solve");
  CHECK(aisci_pppm_interpolate(p, n, q, fb) == AISCI_OK, "interpolate");
  CHECK(ea == eb && memcmp(fa, fb, sizeof(fa)) == 0 && memcmp(va, vb, sizeof(va)) == 0,
        "split API differs from compute");

  /* atoms shifted by lattice vectors fold back */
  double xs[240];
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 3; c++) xs[3 * i + c] = x[3 * i + c] + (i % 5 - 2) * CUBIC[i % 3][c];
  double es;
  aisci_pppm_compute(p, n, xs, q, NULL, &es, fc, NULL);
  CHECK(fabs(es - ea) <= 1e-12 * fabs(ea) && ref_rms_diff(n, fc, fa) <= 1e-11 * QQRD2E,
        "periodic images: energy %.15g vs %.15g", es, ea);

  /* compute with a new box == a fresh object made for that box (same grid and g) */
  double box2[3][3] = {{15.5, 0, 0}, {1.0, 14.5, 0}, {0, 0, 15.2}};
  aisci_pppm_info info;
  aisci_pppm_get_info(p, &info);
  memset(fa, 0, sizeof(fa));
  memset(fb, 0, sizeof(fb));
  aisci_pppm_compute(p, n, x, q, (const double(*)[3]) box2, &ea, fa, va);
  cfg.g_ewald = info.g_ewald;
  memcpy(cfg.grid, info.grid, sizeof(cfg.grid));
  memcpy(cfg.box, box2, sizeof(cfg.box));
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, &p2) == AISCI_OK, "create 2");
  aisci_pppm_compute(p2, n, x, q, NULL, &eb, fb, vb);
  CHECK(ea == eb && memcmp(fa, fb, sizeof(fa)) == 0, "box update differs from a fresh object");
  /* n = 0 is allowed */
  double e0 = 1.0;
  CHECK(aisci_pppm_compute(p, 0, NULL, NULL, NULL, &e0, NULL, NULL) == AISCI_OK && e0 == 0.0,
        "no atoms: energy %g", e0);
  aisci_pppm_destroy(p);
  aisci_pppm_destroy(p2);
}

static aisci_status try_create(const aisci_pppm_config *cfg)
{
  aisci_pppm *p = (aisci_pppm *) 0x1;
  aisci_status st = aisci_pppm_create(cfg, MPI_COMM_SELF, &p);
  if (st != AISCI_OK) CHECK(p == NULL, "failed create must leave NULL");
  aisci_pppm_destroy(p);
  return st;
}

static void test_errors(void)
{
  aisci_pppm_config cfg = aisci_pppm_config_default(), c;
  CHECK(cfg.box[0][0] == 1.0 && cfg.box[1][1] == 1.0 && cfg.box[2][2] == 1.0 &&
            cfg.box[0][1] == 0.0 && cfg.grid[0] == 0 && cfg.accuracy == 1e-5 &&
            cfg.g_ewald == 0.0 && cfg.order == 5 && cfg.diff == AISCI_PPPM_IK && cfg.beta == 0.0 &&
            cfg.qqrd2e == 1.0 && cfg.fft_measure == 0 && cfg.layout == AISCI_PPPM_LAYOUT_RANK &&
            cfg.ranks_per_node == 0,
        "config_default: unit box, automatic grid and g, accuracy 1e-5, order 5, ik, qqrd2e 1");
  memcpy(cfg.box, CUBIC, sizeof(cfg.box));
  cfg.g_ewald = 0.3;
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 16;
  CHECK(try_create(&cfg) == AISCI_OK, "valid explicit config: %s", aisci_last_error());
  aisci_pppm *p = NULL;
  CHECK(aisci_pppm_create(NULL, MPI_COMM_SELF, &p) == AISCI_ERR_ARG && p == NULL, "NULL cfg");
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, NULL) == AISCI_ERR_ARG, "NULL out");
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_NULL, &p) == AISCI_ERR_ARG, "NULL comm");
  c = cfg;
  c.order = 1;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "order 1");
  c = cfg;
  c.order = 8;
  CHECK(try_create(&c) == AISCI_ERR_ARG && strstr(aisci_last_error(), "order"), "order 8: %s",
        aisci_last_error());
  c = cfg;
  c.accuracy = 0.0;
  CHECK(try_create(&c) == AISCI_ERR_ARG && strstr(aisci_last_error(), "accuracy"), "accuracy 0");
  c = cfg;
  c.accuracy = -1e-5;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "accuracy < 0");
  c = cfg;
  c.qqrd2e = 0.0;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "qqrd2e 0");
  c = cfg;
  c.beta = -1.0;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "beta < 0");
  c = cfg;
  c.g_ewald = -0.3;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "g < 0");
  c = cfg;
  c.diff = (aisci_pppm_diff) 2;
  CHECK(try_create(&c) == AISCI_ERR_ARG && strstr(aisci_last_error(), "differentiation"), "diff 2");
  c = cfg;
  c.grid[1] = 4;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "grid below order");
  c = cfg;
  c.grid[1] = 0;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "partial grid");
  c = cfg;
  c.box[2][0] = 15.0;
  c.box[2][1] = 15.0;
  c.box[2][2] = 0.0; /* c = a + b */
  CHECK(try_create(&c) == AISCI_ERR_ARG && strstr(aisci_last_error(), "singular"), "singular");
  c = cfg;
  memset(c.box, 0, sizeof(c.box));
  CHECK(try_create(&c) == AISCI_ERR_ARG, "zero box");
  c = cfg;
  c.g_ewald = 0.0;
  CHECK(try_create(&c) == AISCI_ERR_ARG && strstr(aisci_last_error(), "cutoff"),
        "automatic g without cutoff");
  c = cfg;
  c.grid[0] = c.grid[1] = c.grid[2] = 0;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "automatic grid without q2sum");
  c.q2sum = 10.0;
  c.natoms = 10;
  c.accuracy = 1e-30;
  CHECK(try_create(&c) == AISCI_ERR_ARG, "unreachable accuracy: %s", aisci_last_error());
  /* meshes beyond the documented limits, refused before any allocation */
  c = cfg;
  c.grid[0] = AISCI_PPPM_MAX_GRID + 1;
  CHECK(try_create(&c) == AISCI_ERR_ARG && strstr(aisci_last_error(), "mesh 16385 x 16 x 16") &&
            strstr(aisci_last_error(), "above the limit 16384"),
        "mesh above AISCI_PPPM_MAX_GRID: %s", aisci_last_error());
  c = cfg;
  c.grid[0] = c.grid[1] = c.grid[2] = 16000; /* 4.1e12 points, ~200 TiB */
  CHECK(try_create(&c) == AISCI_ERR_ARG &&
            strstr(aisci_last_error(), "mesh 16000 x 16000 x 16000 (4.1e+12 points) needs about") &&
            strstr(aisci_last_error(), "use a coarser mesh"),
        "mesh beyond memory: %s", aisci_last_error());

  /* object calls out of order and bad arguments */
  aisci_pppm_destroy(NULL);
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_SELF, &p) == AISCI_OK, "create");
  double x[6] = {1, 2, 3, 4, 5, 6}, q[2] = {1, -1}, f[6] = {0}, e;
  aisci_pppm_info info;
  CHECK(aisci_pppm_get_info(NULL, &info) == AISCI_ERR_ARG, "info NULL");
  CHECK(aisci_pppm_get_info(p, NULL) == AISCI_ERR_ARG, "info NULL out");
  CHECK(aisci_pppm_solve(p, &e, NULL) == AISCI_ERR_STATE, "solve before spread");
  CHECK(aisci_pppm_interpolate(p, 2, q, f) == AISCI_ERR_STATE, "interpolate before solve");
  CHECK(aisci_pppm_spread(NULL, 2, x, q) == AISCI_ERR_ARG, "spread NULL");
  CHECK(aisci_pppm_spread(p, 2, NULL, q) == AISCI_ERR_ARG, "spread x NULL");
  CHECK(aisci_pppm_spread(p, -1, x, q) == AISCI_ERR_ARG, "spread n < 0");
  double xnan[6] = {1, 2, NAN, 4, 5, 6};
  CHECK(aisci_pppm_spread(p, 2, xnan, q) == AISCI_ERR_ARG, "spread NaN");
  CHECK(aisci_pppm_spread(p, 2, x, q) == AISCI_OK, "spread");
  CHECK(aisci_pppm_spread(p, 2, x, q) == AISCI_ERR_STATE, "spread twice");
  CHECK(aisci_pppm_set_box(p, CUBIC) == AISCI_ERR_STATE, "set_box mid-step");
  CHECK(aisci_pppm_interpolate(p, 2, q, f) == AISCI_ERR_STATE, "interpolate before solve");
  CHECK(aisci_pppm_solve(NULL, &e, NULL) == AISCI_ERR_ARG, "solve NULL");
  CHECK(aisci_pppm_solve(p, &e, NULL) == AISCI_OK, "solve");
  CHECK(aisci_pppm_interpolate(p, 1, q, f) == AISCI_ERR_STATE, "interpolate with other n");
  CHECK(aisci_pppm_interpolate(p, 2, q, f) == AISCI_ERR_STATE,
        "a failed interpolate ends the step");
  CHECK(aisci_pppm_spread(p, 2, x, q) == AISCI_OK, "spread");
  CHECK(aisci_pppm_solve(p, NULL, NULL) == AISCI_OK, "solve");
  CHECK(aisci_pppm_interpolate(p, 2, NULL, f) == AISCI_ERR_ARG, "interpolate q NULL");
  CHECK(aisci_pppm_spread(p, 2, x, q) == AISCI_OK, "new step after a failed interpolate");
  CHECK(aisci_pppm_solve(p, NULL, NULL) == AISCI_OK, "solve");
  CHECK(aisci_pppm_interpolate(p, 2, q, f) == AISCI_OK, "interpolate");
  CHECK(aisci_pppm_compute(p, 2, x, q, NULL, &e, NULL, NULL) == AISCI_ERR_ARG, "forces NULL");
  CHECK(aisci_pppm_compute(NULL, 2, x, q, NULL, &e, f, NULL) == AISCI_ERR_ARG, "compute NULL");
  double flat[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 0}};
  CHECK(aisci_pppm_set_box(p, (const double(*)[3]) flat) == AISCI_ERR_ARG, "set_box singular");
  CHECK(aisci_pppm_compute(p, 2, x, q, (const double(*)[3]) flat, &e, f, NULL) == AISCI_ERR_ARG,
        "compute singular box");
  CHECK(aisci_pppm_set_box(p, NULL) == AISCI_ERR_ARG, "set_box NULL");
  CHECK(aisci_pppm_compute(p, 2, x, q, NULL, &e, f, NULL) == AISCI_OK, "old box kept");
  double phi;
  CHECK(aisci_pppm_real_pair(p, 0.0, &phi, NULL) == AISCI_ERR_ARG, "real_pair r = 0");
  CHECK(aisci_pppm_real_pair(NULL, 1.0, &phi, NULL) == AISCI_ERR_ARG, "real_pair NULL");
  CHECK(aisci_pppm_self_energy(NULL, 0, 1, &e, NULL) == AISCI_ERR_ARG, "self NULL");
  aisci_pppm_destroy(p);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  test_errors();
  test_accuracy("cubic", CUBIC, 200, 5, 1e-4);
  test_accuracy("cubic", CUBIC, 200, 5, 1e-5);
  test_accuracy("ortho", ORTHO, 200, 5, 1e-5);
  test_accuracy("triclinic", TRICLINIC, 200, 5, 1e-5);
  test_accuracy("triclinic", TRICLINIC, 200, 5, 1e-6);
  test_accuracy("triclinic", TRICLINIC, 100, 7, 1e-8);
  test_accuracy("triclinic", TRICLINIC, 200, 2, 1e-3);
  for (int order = 3; order <= 7; order++) test_accuracy("triclinic", TRICLINIC, 100, order, 1e-4);
  test_accuracy_diff("cubic", CUBIC, 200, 5, 1e-4, AISCI_PPPM_AD);
  test_accuracy_diff("cubic", CUBIC, 200, 5, 1e-5, AISCI_PPPM_AD);
  test_accuracy_diff("triclinic", TRICLINIC, 200, 5, 1e-5, AISCI_PPPM_AD);
  test_accuracy_diff("ortho", ORTHO, 200, 4, 1e-4, AISCI_PPPM_AD);
  test_accuracy_diff("triclinic", TRICLINIC, 200, 6, 1e-4, AISCI_PPPM_AD);
  test_accuracy_diff("triclinic", TRICLINIC, 200, 7, 1e-6, AISCI_PPPM_AD);
  test_charged_total();
  test_gaussian();
  test_virial_fd();
  test_split_and_updates();
  test_cluster();
  int rc = aisci_test_summary("test_pppm");
  MPI_Finalize();
  return rc;
}
