/* Wannier-centroid bookkeeping of DPLR (aisci/dplr.h): placement, force transfer to the
 * parents, the parent part of the virial correction, a uniform external field. */
#include "aisci/dplr.h"

#include <math.h>
#include <stddef.h>

/* Counts and indices of n_pairs (WC, parent) pairs; wc may be NULL (parents only). */
static aisci_status check_pairs(const char *fn, int n_pairs, int n_atoms, int need_wc,
                                const int *wc, const int *parent)
{
  if (n_pairs < 0 || n_atoms < 0)
    return aisci_set_error(AISCI_ERR_ARG, "%s: negative count (n_pairs %d, n_atoms %d)", fn,
                           n_pairs, n_atoms);
  if (n_pairs > 0 && (!parent || (need_wc && !wc)))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL index array", fn);
  for (int k = 0; k < n_pairs; k++) {
    if (parent[k] < 0 || parent[k] >= n_atoms)
      return aisci_set_error(AISCI_ERR_ARG, "%s: parent index %d of pair %d outside [0, %d)",
                             fn, parent[k], k, n_atoms);
    if (wc && (wc[k] < 0 || wc[k] >= n_atoms))
      return aisci_set_error(AISCI_ERR_ARG, "%s: WC index %d of pair %d outside [0, %d)", fn,
                             wc[k], k, n_atoms);
    if (wc && wc[k] == parent[k])
      return aisci_set_error(AISCI_ERR_ARG, "%s: pair %d has the same WC and parent index %d",
                             fn, k, wc[k]);
  }
  return AISCI_OK;
}

aisci_status aisci_dplr_place(int n_pairs, int n_atoms, const int *wc, const int *parent,
                              const double *d, double *x)
{
  aisci_status st = check_pairs("aisci_dplr_place", n_pairs, n_atoms, 1, wc, parent);
  if (st != AISCI_OK) return st;
  if (n_pairs > 0 && (!d || !x))
    return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_place: NULL d or x");
  for (int k = 0; k < n_pairs; k++) {
    const double *xp = x + 3 * (size_t) parent[k], *dp = d + 3 * (size_t) parent[k];
    double *xw = x + 3 * (size_t) wc[k];
    for (int a = 0; a < 3; a++) xw[a] = xp[a] + dp[a];
  }
  return AISCI_OK;
}

aisci_status aisci_dplr_collect(int n_pairs, int n_atoms, const int *wc, const int *parent,
                                double *f, double *f_at_parent)
{
  aisci_status st = check_pairs("aisci_dplr_collect", n_pairs, n_atoms, 1, wc, parent);
  if (st != AISCI_OK) return st;
  if (n_pairs > 0 && (!f || !f_at_parent))
    return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_collect: NULL f or f_at_parent");
  for (int k = 0; k < n_pairs; k++) {
    double *fw = f + 3 * (size_t) wc[k], *fp = f_at_parent + 3 * (size_t) parent[k];
    for (int a = 0; a < 3; a++) {
      fp[a] += fw[a];
      fw[a] = 0.0;
    }
  }
  return AISCI_OK;
}

aisci_status aisci_dplr_parent_forces(int n_parents, int n_atoms, const int *parent,
                                      const double *f_wc, const double *d, double *f,
                                      double *grad_out, double virial9[9])
{
  aisci_status st =
      check_pairs("aisci_dplr_parent_forces", n_parents, n_atoms, 0, NULL, parent);
  if (st != AISCI_OK) return st;
  if (n_parents > 0 && (!f_wc || !d || !f))
    return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_parent_forces: NULL f_wc, d or f");
  for (int k = 0; k < n_parents; k++) {
    const size_t p = 3 * (size_t) parent[k];
    const double *fw = f_wc + p, *dp = d + p;
    for (int a = 0; a < 3; a++) f[p + a] += fw[a];
    if (grad_out)
      for (int a = 0; a < 3; a++) grad_out[3 * (size_t) k + a] = -fw[a];
    if (virial9)
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) virial9[3 * a + b] -= fw[a] * dp[b];
  }
  return AISCI_OK;
}

aisci_status aisci_dplr_efield(int n, const double *x, const double *q, const double field[3],
                               double *f, double *energy)
{
  if (n < 0) return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_efield: negative count %d", n);
  if (!field) return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_efield: NULL field");
  for (int a = 0; a < 3; a++)
    if (!isfinite(field[a]))
      return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_efield: field component %d is %g", a,
                             field[a]);
  if (n > 0 && (!x || !q)) return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_efield: NULL x or q");
  double e = 0.0;
  for (int i = 0; i < n; i++) {
    const double *xi = x + 3 * (size_t) i;
    if (f)
      for (int a = 0; a < 3; a++) f[3 * (size_t) i + a] += q[i] * field[a];
    e -= q[i] * (field[0] * xi[0] + field[1] * xi[1] + field[2] * xi[2]);
  }
  if (energy) *energy += e;
  return AISCI_OK;
}
