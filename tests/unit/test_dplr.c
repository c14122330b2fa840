/* DPLR Wannier-centroid bookkeeping (aisci/dplr.h): placement, force collection, parent
 * terms and external field on exact small cases, and the whole
 * chain rule on a toy system: forces and virial assembled from these functions plus
 * an analytic vector-Jacobian product equal central finite differences of E(x).
 * Every error path with its exact status. */
#include <math.h>
#include <string.h>

#include "aisci/dplr.h"
#include "aisci_test.h"

/* Toy DPLR system, open boundaries: 3 "molecules" P H H, one WC per P at
 * w = x_P + d, d = sum_e c(|vec_e|) vec_e over the edges P->H1, P->H2 with
 * vec_e = x_H - x_P (an equivariant "DW model"). Charges: P 0, H +0.5,
 * WC -1. Energy of all particles (ions and WCs): sum_{i<j} q_i q_j exp(-r^2/s2) plus a
 * harmonic term on the real atoms (a "short-range" part). */
enum { NMOL = 3, NREAL = 3 * NMOL, NALL = NREAL + NMOL };
static const double C_DW = 0.12, S2 = 3.0;

static void charges(double q[NALL])
{
  for (int m = 0; m < NMOL; m++) {
    q[3 * m] = 0.0;
    q[3 * m + 1] = q[3 * m + 2] = 0.5;
    q[NREAL + m] = -1.0;
  }
}

/* weight of one edge: c(r) = C_DW exp(-r^2 / L_DW) (nonlinear, so that d does not
 * follow a homogeneous strain affinely and the virial correction is non-zero) */
static const double L_DW = 1.5;
static double edge_weight(const double v[3])
{
  return C_DW * exp(-(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) / L_DW);
}

static void displacement(const double *x, int m, double d[3])
{
  d[0] = d[1] = d[2] = 0.0;
  for (int h = 1; h <= 2; h++) {
    double v[3];
    for (int a = 0; a < 3; a++) v[a] = x[3 * (3 * m + h) + a] - x[3 * (3 * m) + a];
    const double c = edge_weight(v);
    for (int a = 0; a < 3; a++) d[a] += c * v[a];
  }
}

/* energy of particles p (NALL x 3) and forces on them */
static double particle_energy(const double *p, double *f)
{
  double q[NALL], e = 0.0;
  charges(q);
  if (f) memset(f, 0, sizeof(double) * 3 * NALL);
  for (int i = 0; i < NALL; i++)
    for (int j = i + 1; j < NALL; j++) {
      double r[3], r2 = 0.0;
      for (int a = 0; a < 3; a++) {
        r[a] = p[3 * i + a] - p[3 * j + a];
        r2 += r[a] * r[a];
      }
      const double u = q[i] * q[j] * exp(-r2 / S2);
      e += u;
      if (f)
        for (int a = 0; a < 3; a++) {
          f[3 * i + a] += 2.0 * u * r[a] / S2;
          f[3 * j + a] -= 2.0 * u * r[a] / S2;
        }
    }
  for (int i = 0; i < NREAL; i++)
    for (int a = 0; a < 3; a++) {
      e += 0.05 * p[3 * i + a] * p[3 * i + a];
      if (f) f[3 * i + a] -= 0.1 * p[3 * i + a];
    }
  return e;
}

/* E(x) of the real atoms x (NREAL x 3): place the WCs, then the particle energy */
static double total_energy(const double *x)
{
  double p[3 * NALL];
  memcpy(p, x, sizeof(double) * 3 * NREAL);
  for (int m = 0; m < NMOL; m++) displacement(x, m, &p[3 * (NREAL + m)]);
  for (int m = 0; m < NMOL; m++)
    for (int a = 0; a < 3; a++) p[3 * (NREAL + m) + a] += x[9 * m + a];
  return particle_energy(p, NULL);
}

static void test_chain_rule(void)
{
  aisci_test_rng_state = 0x5eed;
  double x[3 * NALL], d[3 * NALL];
  memset(d, 0, sizeof d);
  for (int m = 0; m < NMOL; m++)
    for (int a = 0; a < 3; a++) {
      const double o = 2.2 * aisci_test_srand1();
      x[9 * m + a] = o;
      x[9 * m + 3 + a] = o + 0.9 * aisci_test_srand1();
      x[9 * m + 6 + a] = o + 0.9 * aisci_test_srand1();
    }
  int wc[NMOL], parent[NMOL];
  for (int m = 0; m < NMOL; m++) {
    wc[m] = NREAL + m;
    parent[m] = 3 * m;
    displacement(x, m, &d[3 * parent[m]]);
  }
  CHECK(aisci_dplr_place(NMOL, NALL, wc, parent, d, x) == AISCI_OK, "place");

  /* forces and virial with the WCs as particles */
  double f[3 * NALL], w9[9] = {0};
  particle_energy(x, f);
  for (int i = 0; i < NALL; i++)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) w9[3 * a + b] += f[3 * i + a] * x[3 * i + b];

  double fwc[3 * NALL] = {0}, grad[3 * NMOL];
  CHECK(aisci_dplr_collect(NMOL, NALL, wc, parent, f, fwc) == AISCI_OK, "collect");
  for (int m = 0; m < NMOL; m++)
    CHECK(f[3 * wc[m]] == 0.0 && f[3 * wc[m] + 1] == 0.0 && f[3 * wc[m] + 2] == 0.0,
          "WC force zeroed");
  double wd[9] = {0};
  CHECK(aisci_dplr_parent_forces(NMOL, NALL, parent, fwc, d, f, grad, wd) == AISCI_OK,
        "parent forces");
  /* vector-Jacobian product of the toy model, in the C API's convention:
   * G_e = d(g . d)/d vec_e = c g + (g . vec) c (-2 / L_DW) vec, F_P += G_e, F_H -= G_e,
   * W += -vec_e (x) G_e */
  double wvjp[9] = {0};
  for (int m = 0; m < NMOL; m++)
    for (int h = 1; h <= 2; h++) {
      const int ip = 3 * m, ih = 3 * m + h;
      double v[3], G[3];
      for (int a = 0; a < 3; a++) v[a] = x[3 * ih + a] - x[3 * ip + a];
      const double c = edge_weight(v), *g = &grad[3 * m];
      const double gv = g[0] * v[0] + g[1] * v[1] + g[2] * v[2];
      for (int a = 0; a < 3; a++) G[a] = c * g[a] - 2.0 * c * gv * v[a] / L_DW;
      for (int a = 0; a < 3; a++) {
        f[3 * ip + a] += G[a];
        f[3 * ih + a] -= G[a];
      }
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) wvjp[3 * a + b] -= v[a] * G[b];
    }
  /* all terms in the order of the strain derivative, W_ab = -dE/d eps_ab with
   * x_a -> x_a + eps_ab x_b: sum F_a x_b, -F_wc,a d_b, and the transpose of the API's
   * -vec_a G_b */
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) w9[3 * a + b] += wd[3 * a + b] + wvjp[3 * b + a];

  /* central differences of E(x) */
  const double h = 1e-5;
  double maxerr = 0.0, fbig = 0.0;
  for (int i = 0; i < NREAL; i++)
    for (int a = 0; a < 3; a++) {
      double xp[3 * NREAL], xm[3 * NREAL];
      memcpy(xp, x, sizeof xp);
      memcpy(xm, x, sizeof xm);
      xp[3 * i + a] += h;
      xm[3 * i + a] -= h;
      const double fd = -(total_energy(xp) - total_energy(xm)) / (2.0 * h);
      maxerr = fmax(maxerr, fabs(fd - f[3 * i + a]));
      fbig = fmax(fbig, fabs(fd));
    }
  CHECK(maxerr < 1e-8 * fbig, "chain-rule forces vs finite differences: %.3g (max |F| %.3g)",
        maxerr, fbig);

  /* virial: all nine components against the strain derivative */
  double werr = 0.0, wmax = 0.0, wplain_err = 0.0;
  double fp[3 * NALL];
  particle_energy(x, fp);
  for (int ia = 0; ia < 3; ia++)
    for (int ib = 0; ib < 3; ib++) {
      double xp[3 * NREAL], xm[3 * NREAL], plain = 0.0;
      for (int i = 0; i < NREAL; i++)
        for (int a = 0; a < 3; a++) {
          xp[3 * i + a] = x[3 * i + a] + (a == ia ? h * x[3 * i + ib] : 0.0);
          xm[3 * i + a] = x[3 * i + a] - (a == ia ? h * x[3 * i + ib] : 0.0);
        }
      const double fd = -(total_energy(xp) - total_energy(xm)) / (2.0 * h);
      for (int i = 0; i < NALL; i++) plain += fp[3 * i + ia] * x[3 * i + ib];
      werr = fmax(werr, fabs(fd - w9[3 * ia + ib]));
      wplain_err = fmax(wplain_err, fabs(fd - plain));
      wmax = fmax(wmax, fabs(fd));
    }
  CHECK(werr < 1e-8 * wmax, "virial (with correction) vs strain derivative: %.3g (max %.3g)",
        werr, wmax);
  /* the WCs as plain particles (no correction) give a wrong virial: the test can fail */
  CHECK(wplain_err > 1e-4 * wmax, "the correction matters (%.3g)", wplain_err);
  /* the correction is symmetric for the equivariant toy model */
  double asym = 0.0;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      asym = fmax(asym, fabs(wd[3 * a + b] + wvjp[3 * b + a] - wd[3 * b + a] - wvjp[3 * a + b]));
  CHECK(asym < 1e-12 * (wmax + 1.0), "correction symmetric: %.3g", asym);
}

static void test_exact_small(void)
{
  /* place */
  double x[4 * 3] = {1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0, 0};
  double d[4 * 3] = {0.1, 0.2, 0.3, 9, 9, 9, -0.5, 0, 0.5, 9, 9, 9};
  int wc[2] = {1, 3}, parent[2] = {0, 2};
  CHECK(aisci_dplr_place(2, 4, wc, parent, d, x) == AISCI_OK, "place ok");
  CHECK(x[3] == 1.1 && x[4] == 2.2 && x[5] == 3.3, "WC 1 at x0 + d0");
  CHECK(x[9] == 3.5 && x[10] == 5.0 && x[11] == 6.5, "WC 3 at x2 + d2");
  CHECK(x[0] == 1 && x[6] == 4, "parents untouched");

  /* collect: two WCs of one parent accumulate (the adapter forbids it; the sum is exact) */
  double f[4 * 3] = {1, 1, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7};
  double fp[4 * 3] = {0};
  int wc2[2] = {1, 3}, par2[2] = {0, 0};
  CHECK(aisci_dplr_collect(2, 4, wc2, par2, f, fp) == AISCI_OK, "collect ok");
  CHECK(fp[0] == 7 && fp[1] == 9 && fp[2] == 11, "parent row = sum of WC forces");
  CHECK(f[3] == 0 && f[4] == 0 && f[5] == 0 && f[9] == 0 && f[11] == 0, "WC forces zeroed");
  CHECK(f[0] == 1 && f[1] == 1, "parent force untouched by collect");

  /* parent forces */
  double fwc[2 * 3] = {1, -2, 3, 0, 0, 0}, dd[2 * 3] = {0.5, 0.25, -1, 0, 0, 0};
  double ff[2 * 3] = {10, 10, 10, 0, 0, 0}, g[3], w9[9] = {0};
  int pp[1] = {0};
  CHECK(aisci_dplr_parent_forces(1, 2, pp, fwc, dd, ff, g, w9) == AISCI_OK, "parent ok");
  CHECK(ff[0] == 11 && ff[1] == 8 && ff[2] == 13, "f += f_wc");
  CHECK(g[0] == -1 && g[1] == 2 && g[2] == -3, "grad_out = -f_wc");
  CHECK(w9[0] == -0.5 && w9[1] == -0.25 && w9[2] == 1 && w9[3] == 1 && w9[5] == -2 &&
            w9[8] == 3,
        "virial9 = -f_wc (x) d");
  CHECK(aisci_dplr_parent_forces(1, 2, pp, fwc, dd, ff, NULL, NULL) == AISCI_OK,
        "NULL grad_out and virial allowed");

  /* efield */
  double xe[2 * 3] = {1, 2, 3, -1, 0, 2}, q[2] = {0.5, -2}, fe[2 * 3] = {0}, e = 1.0;
  const double field[3] = {0.1, -0.2, 0.3};
  CHECK(aisci_dplr_efield(2, xe, q, field, fe, &e) == AISCI_OK, "efield ok");
  CHECK(fabs(fe[0] - 0.05) < 1e-16 && fabs(fe[4] - 0.4) < 1e-16 && fabs(fe[5] + 0.6) < 1e-16,
        "f = q E");
  /* -[0.5 (0.1 - 0.4 + 0.9) - 2 (-0.1 + 0 + 0.6)] = -(0.3 - 1.0) = 0.7, added to 1 */
  CHECK(fabs(e - 1.7) < 1e-15, "energy -q E.x accumulated: %.17g", e);
}

static void test_errors(void)
{
  double x[6] = {0}, d[6] = {0}, f[6] = {0}, fp[6] = {0};
  int wc[1] = {1}, parent[1] = {0}, bad[1] = {2}, neg[1] = {-1};
  CHECK(aisci_dplr_place(-1, 2, wc, parent, d, x) == AISCI_ERR_ARG, "negative n_pairs");
  CHECK(strstr(aisci_last_error(), "negative count") != NULL, "message: %s",
        aisci_last_error());
  CHECK(aisci_dplr_place(1, 2, NULL, parent, d, x) == AISCI_ERR_ARG, "NULL wc");
  CHECK(aisci_dplr_place(1, 2, wc, parent, NULL, x) == AISCI_ERR_ARG, "NULL d");
  CHECK(aisci_dplr_place(1, 2, bad, parent, d, x) == AISCI_ERR_ARG, "WC index out of range");
  CHECK(strstr(aisci_last_error(), "WC index 2 of pair 0 outside [0, 2)") != NULL,
        "message: %s", aisci_last_error());
  CHECK(aisci_dplr_place(1, 2, wc, neg, d, x) == AISCI_ERR_ARG, "negative parent index");
  CHECK(aisci_dplr_place(1, 2, parent, parent, d, x) == AISCI_ERR_ARG, "WC == parent");
  CHECK(aisci_dplr_place(0, 0, NULL, NULL, NULL, NULL) == AISCI_OK, "empty is fine");
  CHECK(aisci_dplr_collect(1, 2, wc, parent, NULL, fp) == AISCI_ERR_ARG, "collect NULL f");
  CHECK(aisci_dplr_collect(1, 2, wc, bad, f, fp) == AISCI_ERR_ARG, "collect bad parent");
  CHECK(aisci_dplr_parent_forces(1, 2, parent, NULL, d, f, NULL, NULL) == AISCI_ERR_ARG,
        "parent_forces NULL f_wc");
  CHECK(aisci_dplr_parent_forces(1, 2, bad, fp, d, f, NULL, NULL) == AISCI_ERR_ARG,
        "parent_forces index out of range");
  CHECK(aisci_dplr_parent_forces(1, 2, NULL, fp, d, f, NULL, NULL) == AISCI_ERR_ARG,
        "parent_forces NULL parent");
  const double field[3] = {0, NAN, 0}, ok[3] = {0, 0, 0};
  CHECK(aisci_dplr_efield(1, x, d, field, f, NULL) == AISCI_ERR_ARG, "non-finite field");
  CHECK(strstr(aisci_last_error(), "field component 1") != NULL, "message: %s",
        aisci_last_error());
  CHECK(aisci_dplr_efield(1, NULL, d, ok, f, NULL) == AISCI_ERR_ARG, "efield NULL x");
  CHECK(aisci_dplr_efield(-2, x, d, ok, f, NULL) == AISCI_ERR_ARG, "efield negative n");
  CHECK(aisci_dplr_efield(1, x, d, NULL, f, NULL) == AISCI_ERR_ARG, "efield NULL field");
}

int main(void)
{
  test_exact_small();
  test_chain_rule();
  test_errors();
  return aisci_test_summary("test_dplr");
}
