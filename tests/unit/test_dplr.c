/* DPLR Wannier-centroid bookkeeping (aisci/dplr.h): placement, force collection, parent
 * terms and external field on exact small cases, and the whole
 * chain rule on a toy system: forces and virial assembled from these functions plus
 * an analytic vector-Jacobian product equal central finite differences of E(x).
 * Every error path with its exact status. The atom-type roles, the WC map from the
 * bonds (both newton_bond settings), the DW graph's atoms and edges (against brute
 * force) with their exact messages. */
#include <math.h>
#include <stdlib.h>
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
   * W += -vec_e (x) G_e; added by aisci_dplr_jacobian_forces (graph atom k = row k) */
  double wvjp[9] = {0}, fvjp[3 * NREAL] = {0};
  int rows[NREAL];
  for (int i = 0; i < NREAL; i++) rows[i] = i;
  for (int m = 0; m < NMOL; m++)
    for (int h = 1; h <= 2; h++) {
      const int ip = 3 * m, ih = 3 * m + h;
      double v[3], G[3];
      for (int a = 0; a < 3; a++) v[a] = x[3 * ih + a] - x[3 * ip + a];
      const double c = edge_weight(v), *g = &grad[3 * m];
      const double gv = g[0] * v[0] + g[1] * v[1] + g[2] * v[2];
      for (int a = 0; a < 3; a++) G[a] = c * g[a] - 2.0 * c * gv * v[a] / L_DW;
      for (int a = 0; a < 3; a++) {
        fvjp[3 * ip + a] += G[a];
        fvjp[3 * ih + a] -= G[a];
      }
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) wvjp[3 * a + b] -= v[a] * G[b];
    }
  CHECK(aisci_dplr_jacobian_forces(NREAL, NALL, rows, fvjp, wvjp, f, wd) == AISCI_OK,
        "jacobian forces");
  /* all terms in the order of the strain derivative, W_ab = -dE/d eps_ab with
   * x_a -> x_a + eps_ab x_b: sum F_a x_b, -F_wc,a d_b, and (in wd now) the transpose of
   * the API's -vec_a G_b */
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) w9[3 * a + b] += wd[3 * a + b];

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
      asym = fmax(asym, fabs(wd[3 * a + b] - wd[3 * b + a]));
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

  /* jacobian forces: rows scattered and accumulated, the API's virial transposed */
  double fg[2 * 3] = {1, 2, 3, -4, -5, -6}, fr[3 * 3] = {0, 0, 0, 10, 10, 10, 0, 0, 0};
  const double wapi[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  double wj[9] = {0, 0, 0, 0, 0, 0, 0, 0, 100};
  int rows[2] = {2, 1};
  CHECK(aisci_dplr_jacobian_forces(2, 3, rows, fg, wapi, fr, wj) == AISCI_OK, "jacobian ok");
  CHECK(fr[6] == 1 && fr[7] == 2 && fr[8] == 3 && fr[3] == 6 && fr[5] == 4 && fr[0] == 0,
        "f[index[k]] += f_graph[k]");
  CHECK(wj[1] == 4 && wj[3] == 2 && wj[2] == 7 && wj[6] == 3 && wj[8] == 109 && wj[0] == 1,
        "virial9 += transpose of w_api");
  CHECK(aisci_dplr_jacobian_forces(2, 3, rows, fg, NULL, fr, NULL) == AISCI_OK && fr[6] == 2,
        "no virial");

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
  CHECK(aisci_dplr_jacobian_forces(1, 2, bad, fp, NULL, f, NULL) == AISCI_ERR_ARG,
        "jacobian index out of range");
  CHECK(aisci_dplr_jacobian_forces(1, 2, parent, NULL, NULL, f, NULL) == AISCI_ERR_ARG,
        "jacobian NULL f_graph");
  double w9e[9] = {0};
  CHECK(aisci_dplr_jacobian_forces(1, 2, parent, fp, NULL, f, w9e) == AISCI_ERR_ARG,
        "jacobian virial without w_api");
  CHECK(aisci_dplr_jacobian_forces(-1, 2, parent, fp, NULL, f, NULL) == AISCI_ERR_ARG,
        "jacobian negative count");
  const double field[3] = {0, NAN, 0}, ok[3] = {0, 0, 0};
  CHECK(aisci_dplr_efield(1, x, d, field, f, NULL) == AISCI_ERR_ARG, "non-finite field");
  CHECK(strstr(aisci_last_error(), "field component 1") != NULL, "message: %s",
        aisci_last_error());
  CHECK(aisci_dplr_efield(1, NULL, d, ok, f, NULL) == AISCI_ERR_ARG, "efield NULL x");
  CHECK(aisci_dplr_efield(-2, x, d, ok, f, NULL) == AISCI_ERR_ARG, "efield negative n");
  CHECK(aisci_dplr_efield(1, x, d, NULL, f, NULL) == AISCI_ERR_ARG, "efield NULL field");
}

/* ---- type roles, WC map, DW graph (@since 0.4) ---- */

static void test_associate(void)
{
  int wp[5] = {0}, pw[5] = {0};
  CHECK(aisci_dplr_associate(4, 1, 3, wp, pw) == AISCI_OK, "associate 1 3");
  CHECK(wp[1] == 3 && pw[3] == 1 && wp[3] == 0 && pw[1] == 0, "tables filled");
  CHECK(aisci_dplr_associate(4, 2, 2, wp, pw) == AISCI_ERR_ARG, "own WC type");
  CHECK(strcmp(aisci_last_error(), "a type cannot be its own WC type (2 2)") == 0,
        "message: %s", aisci_last_error());
  CHECK(aisci_dplr_associate(4, 2, 3, wp, pw) == AISCI_ERR_ARG, "WC type twice");
  CHECK(strcmp(aisci_last_error(), "type 3 appears twice") == 0, "message: %s",
        aisci_last_error());
  CHECK(aisci_dplr_associate(4, 3, 4, wp, pw) == AISCI_ERR_ARG, "a WC type as parent");
  CHECK(strcmp(aisci_last_error(), "type 3 appears twice") == 0, "message: %s",
        aisci_last_error());
  CHECK(aisci_dplr_associate(4, 1, 4, wp, pw) == AISCI_ERR_ARG, "parent type twice");
  CHECK(strcmp(aisci_last_error(), "type 1 appears twice") == 0, "message: %s",
        aisci_last_error());
  CHECK(wp[4] == 0 && pw[4] == 0, "nothing recorded on failure");
  CHECK(aisci_dplr_associate(4, 2, 4, wp, pw) == AISCI_OK && wp[2] == 4 && pw[4] == 2,
        "second pair");
  CHECK(aisci_dplr_associate(4, 0, 3, wp, pw) == AISCI_ERR_ARG, "type 0");
  CHECK(aisci_dplr_associate(4, 1, 5, wp, pw) == AISCI_ERR_ARG, "type > ntypes");
  CHECK(aisci_dplr_associate(4, 1, 3, NULL, pw) == AISCI_ERR_ARG, "NULL table");
}

/* a "model" that knows O (0) and H (1) */
static int lookup_calls;
static aisci_status toy_lookup(void *ctx, const char *el, int *index)
{
  lookup_calls++;
  const char *const *names = (const char *const *) ctx;
  for (int k = 0; names[k]; k++)
    if (strcmp(names[k], el) == 0) {
      *index = k;
      return AISCI_OK;
    }
  return aisci_set_error(AISCI_ERR_MISSING, "element '%s' is not in the toy model", el);
}

static void test_type_map(void)
{
  const char *names[] = {"O", "H", "Ow", NULL};
  /* types 1 O (parent of 3), 2 H, 3 WC, 4 NULL (not in the graph) */
  const int wp[5] = {0, 3, 0, 0, 0}, pw[5] = {0, 0, 0, 1, 0};
  const char *el[5] = {"", "O", "H", "NULL", "NULL"};
  int mt[5] = {7, 7, 7, 7, 7};
  CHECK(aisci_dplr_type_map(4, el, wp, pw, "H O", toy_lookup, (void *) names, mt) == AISCI_OK,
        "type map: %s", aisci_last_error());
  CHECK(mt[0] == -1 && mt[1] == 0 && mt[2] == 1 && mt[3] == -1 && mt[4] == -1,
        "model types %d %d %d %d", mt[1], mt[2], mt[3], mt[4]);
  /* selected_types is a word list: "OH" or "HO" do not contain O */
  CHECK(aisci_dplr_type_map(4, el, wp, pw, "OH HO", toy_lookup, (void *) names, mt) ==
            AISCI_ERR_ARG,
        "O not in 'OH HO'");
  CHECK(strcmp(aisci_last_error(), "parent type 1 is element O, which the DW model does not "
                                   "predict a WC for (selected_types = OH HO)") == 0,
        "message: %s", aisci_last_error());
  CHECK(aisci_dplr_type_map(4, el, wp, pw, "  O  ", toy_lookup, (void *) names, mt) == AISCI_OK,
        "extra spaces");
  const char *el_ow[5] = {"", "Ow", "H", "NULL", "NULL"};
  CHECK(aisci_dplr_type_map(4, el_ow, wp, pw, "O H", toy_lookup, (void *) names, mt) ==
            AISCI_ERR_ARG,
        "Ow not in 'O H'");
  CHECK(aisci_dplr_type_map(4, el, wp, pw, NULL, toy_lookup, (void *) names, mt) ==
            AISCI_ERR_ARG,
        "no selected_types");
  CHECK(strstr(aisci_last_error(), "(selected_types = )") != NULL, "message: %s",
        aisci_last_error());
  const char *el_wc[5] = {"", "O", "H", "H", "NULL"};
  CHECK(aisci_dplr_type_map(4, el_wc, wp, pw, "O", toy_lookup, (void *) names, mt) ==
            AISCI_ERR_ARG,
        "WC type with an element");
  CHECK(strcmp(aisci_last_error(), "elements: WC type 3 must be NULL, got H") == 0,
        "message: %s", aisci_last_error());
  const char *el_pn[5] = {"", "NULL", "H", "NULL", "NULL"};
  CHECK(aisci_dplr_type_map(4, el_pn, wp, pw, "O", toy_lookup, (void *) names, mt) ==
            AISCI_ERR_ARG,
        "parent type NULL");
  CHECK(strcmp(aisci_last_error(), "parent type 1 is mapped to NULL") == 0, "message: %s",
        aisci_last_error());
  const char *el_xe[5] = {"", "O", "Xe", "NULL", "NULL"};
  lookup_calls = 0;
  CHECK(aisci_dplr_type_map(4, el_xe, wp, pw, "O", toy_lookup, (void *) names, mt) ==
            AISCI_ERR_MISSING,
        "lookup's status returned");
  CHECK(strcmp(aisci_last_error(),
               "atom type 2 (element Xe): element 'Xe' is not in the toy model") == 0,
        "message: %s", aisci_last_error());
  CHECK(lookup_calls == 2, "lookup for O and Xe only: %d", lookup_calls);
  CHECK(aisci_dplr_type_map(4, el, wp, pw, "O", NULL, NULL, mt) == AISCI_ERR_ARG, "NULL lookup");
  CHECK(aisci_dplr_type_map(0, el, wp, pw, "O", toy_lookup, (void *) names, mt) ==
            AISCI_ERR_ARG,
        "ntypes 0");
}

/* Rows: 0 O (ID 10), 1 WC (ID 11), 2 H (ID 12), 3 O (ID 20), 4 WC (ID 21), 5 ghost
 * image of O 10 (ID 10). Types 1 O, 2 H, 3 WC of O. */
static const int MAP_TYPE[6] = {1, 3, 2, 1, 3, 1};
static const int64_t MAP_TAG[6] = {10, 11, 12, 20, 21, 10};
static const int MAP_WP[4] = {0, 3, 0, 0}, MAP_PW[4] = {0, 0, 0, 1};

static void test_count_bonds(void)
{
  /* bond O10-WC11 stored at the WC (its partner the ghost image 5), bond O20-WC21
   * stored at the parent O 20 and, with newton_bond off, at the WC 21 as well */
  const int bonds[3 * 2] = {1, 5, 3, 4, 4, 3};
  double c[6 * 3] = {0};
  CHECK(aisci_dplr_count_bonds(3, bonds, 6, MAP_TYPE, MAP_TAG, 3, MAP_PW, 1, "2", c) ==
            AISCI_OK,
        "count, both sides: %s", aisci_last_error());
  CHECK(c[3] == 10 && c[4] == 1 && c[5] == 0, "WC 11: parent ID 10, one bond");
  CHECK(c[12] == 20 && c[13] == 1, "WC 21: parent ID 20, one bond (stored twice)");
  CHECK(c[17] == 1 && c[2] == 0 && c[11] == 1, "parent counts at the ghost image 5 and at 3");
  double c1[6 * 3] = {0};
  CHECK(aisci_dplr_count_bonds(3, bonds, 6, MAP_TYPE, MAP_TAG, 3, MAP_PW, 0, "2", c1) ==
            AISCI_OK,
        "count, one side");
  CHECK(c1[12] == 40 && c1[13] == 2 && c1[11] == 2, "without both_sides the bond counts twice");

  const int oh[2] = {0, 2};
  CHECK(aisci_dplr_count_bonds(1, oh, 6, MAP_TYPE, MAP_TAG, 3, MAP_PW, 0, "2 or 3", c) ==
            AISCI_ERR_ARG,
        "bond between two non-WC types");
  CHECK(strcmp(aisci_last_error(), "bond type 2 or 3 joins atoms ID 10 and 12 (types 1 and 2), "
                                   "neither of which is a WC type of type_associate") == 0,
        "message: %s", aisci_last_error());
  const int wh[2 * 2] = {1, 5, 4, 2};
  double c2[6 * 3] = {0};
  CHECK(aisci_dplr_count_bonds(2, wh, 6, MAP_TYPE, MAP_TAG, 3, MAP_PW, 0, "2", c2) ==
            AISCI_ERR_ARG,
        "WC bonded to the wrong type");
  CHECK(strcmp(aisci_last_error(), "WC atom ID 21 (type 3) is bonded by bond type 2 to atom ID "
                                   "12 of type 2, but type_associate makes type 1 its parent") ==
            0,
        "message: %s", aisci_last_error());
  CHECK(c2[4] == 1 && c2[13] == 0, "bonds before the bad one counted, none after");
  const int ww[2] = {1, 4};
  CHECK(aisci_dplr_count_bonds(1, ww, 6, MAP_TYPE, MAP_TAG, 3, MAP_PW, 1, "2", c2) ==
            AISCI_ERR_ARG,
        "two WCs bonded");
  const int out[2] = {1, 6};
  CHECK(aisci_dplr_count_bonds(1, out, 6, MAP_TYPE, MAP_TAG, 3, MAP_PW, 0, "2", c2) ==
            AISCI_ERR_ARG,
        "row out of range");
  const int badtype[2] = {0, 1};
  CHECK(aisci_dplr_count_bonds(1, badtype, 6, MAP_TYPE, MAP_TAG, 2, MAP_PW, 0, "2", c2) ==
            AISCI_ERR_ARG,
        "type 3 > ntypes 2");
  CHECK(strstr(aisci_last_error(), "outside 1..2") != NULL, "message: %s", aisci_last_error());
  CHECK(aisci_dplr_count_bonds(1, bonds, 6, MAP_TYPE, NULL, 3, MAP_PW, 0, "2", c2) ==
            AISCI_ERR_ARG,
        "NULL tag");
  CHECK(aisci_dplr_count_bonds(0, NULL, 0, NULL, NULL, 3, NULL, 0, NULL, NULL) == AISCI_OK,
        "no bonds");
}

static void test_list_wcs(void)
{
  /* 5 owned rows (0..4 of the map system), counts after the reverse communication */
  double c[5 * 3] = {0, 0, 1, 10, 1, 0, 0, 0, 0, 0, 0, 1, 20, 1, 0};
  int wc[5] = {-1, -1, -1, -1, -1}, n = -1;
  int64_t pt[5] = {0};
  CHECK(aisci_dplr_list_wcs(5, MAP_TYPE, MAP_TAG, 3, MAP_WP, MAP_PW, c, "2", wc, pt, &n) ==
            AISCI_OK,
        "list: %s", aisci_last_error());
  CHECK(n == 2 && wc[0] == 1 && wc[1] == 4 && pt[0] == 10 && pt[1] == 20,
        "WCs 1, 4 with parents 10, 20 (n %d)", n);
  c[4] = 0.0;    /* WC 11 without its bond: reported before parent 10's missing WC */
  c[2] = 0.0;
  CHECK(aisci_dplr_list_wcs(5, MAP_TYPE, MAP_TAG, 3, MAP_WP, MAP_PW, c, "2", wc, pt, &n) ==
            AISCI_ERR_ARG,
        "WC without bond");
  CHECK(strcmp(aisci_last_error(), "WC atom ID 11 (type 3) has 0 bonds of type 2 to a parent; "
                                   "it needs exactly one") == 0,
        "message: %s", aisci_last_error());
  CHECK(n == 0, "n_wc 0 on failure");
  c[4] = 1.0;
  c[2] = 2.0;
  CHECK(aisci_dplr_list_wcs(5, MAP_TYPE, MAP_TAG, 3, MAP_WP, MAP_PW, c, "2", wc, pt, &n) ==
            AISCI_ERR_ARG,
        "parent with two WCs");
  CHECK(strcmp(aisci_last_error(), "atom ID 10 (type 1, parent type of WC type 3) has 2 WCs "
                                   "bonded to it by bond type 2; it needs exactly one") == 0,
        "message: %s", aisci_last_error());
  c[2] = 1.0;
  c[13] = 2.0;
  CHECK(aisci_dplr_list_wcs(5, MAP_TYPE, MAP_TAG, 3, MAP_WP, MAP_PW, c, "2", wc, pt, &n) ==
            AISCI_ERR_ARG,
        "WC with two bonds");
  CHECK(strstr(aisci_last_error(), "WC atom ID 21 (type 3) has 2 bonds") != NULL,
        "message: %s", aisci_last_error());
  CHECK(aisci_dplr_list_wcs(5, MAP_TYPE, MAP_TAG, 2, MAP_WP, MAP_PW, c, "2", wc, pt, &n) ==
            AISCI_ERR_ARG,
        "type outside 1..ntypes");
  CHECK(aisci_dplr_list_wcs(5, MAP_TYPE, MAP_TAG, 3, MAP_WP, MAP_PW, c, "2", NULL, pt, &n) ==
            AISCI_ERR_ARG,
        "NULL wc");
  CHECK(aisci_dplr_list_wcs(0, NULL, NULL, 3, NULL, NULL, NULL, NULL, NULL, NULL, &n) ==
                AISCI_OK &&
            n == 0,
        "no atoms");
}

static void test_graph_atoms(void)
{
  /* the map system, model types O 0, H 1, WC not in the graph; rows 0..4 owned, 5 ghost
   * (a ghost parent is an ordinary graph atom, not a centre) */
  const int mt[4] = {-1, 0, 1, -1};
  double x[6 * 3];
  for (int k = 0; k < 18; k++) x[k] = 0.5 * k;
  int index[6], ng = -1, nc = -1;
  int64_t types[6];
  double pos[6 * 3];
  CHECK(aisci_dplr_graph_atoms(5, 6, MAP_TYPE, 3, MAP_WP, mt, x, index, types, pos, &ng, &nc) ==
            AISCI_OK,
        "graph atoms: %s", aisci_last_error());
  CHECK(ng == 4 && nc == 2, "4 graph atoms, 2 centres: %d %d", ng, nc);
  CHECK(index[0] == 0 && index[1] == 3 && index[2] == 2 && index[3] == 5,
        "order: centres 0 3, then 2 5: %d %d %d %d", index[0], index[1], index[2], index[3]);
  CHECK(types[0] == 0 && types[1] == 0 && types[2] == 1 && types[3] == 0, "model types");
  CHECK(pos[3] == x[9] && pos[5] == x[11] && pos[11] == x[17], "positions gathered");
  CHECK(aisci_dplr_graph_atoms(5, 6, MAP_TYPE, 3, MAP_WP, mt, NULL, index, types, NULL, &ng,
                               &nc) == AISCI_OK &&
            ng == 4,
        "no positions");
  CHECK(aisci_dplr_graph_atoms(7, 6, MAP_TYPE, 3, MAP_WP, mt, x, index, types, pos, &ng, &nc) ==
            AISCI_ERR_ARG,
        "n_local > n_atoms");
  CHECK(aisci_dplr_graph_atoms(5, 6, MAP_TYPE, 2, MAP_WP, mt, x, index, types, pos, &ng, &nc) ==
            AISCI_ERR_ARG,
        "type outside 1..ntypes");
  CHECK(aisci_dplr_graph_atoms(5, 6, MAP_TYPE, 3, MAP_WP, mt, x, NULL, types, pos, &ng, &nc) ==
            AISCI_ERR_ARG,
        "NULL index");
}

int main(void)
{
  test_exact_small();
  test_chain_rule();
  test_errors();
  test_associate();
  test_type_map();
  test_count_bonds();
  test_list_wcs();
  test_graph_atoms();
  return aisci_test_summary("test_dplr");
}
