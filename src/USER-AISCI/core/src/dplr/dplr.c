/* Wannier-centroid bookkeeping of DPLR (aisci/dplr.h): placement, force transfer to the
 * parents, the parent part of the virial correction, a uniform external field; the
 * atom-type roles, the WC -> parent map from the bonds, and the DW graph's atoms (its
 * edges come from the graph subsystem, aisci_graph_select). */
#include "aisci/dplr.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

aisci_status aisci_dplr_jacobian_forces(int n_graph, int n_atoms, const int *index,
                                        const double *f_graph, const double *w_api, double *f,
                                        double virial9[9])
{
  aisci_status st =
      check_pairs("aisci_dplr_jacobian_forces", n_graph, n_atoms, 0, NULL, index);
  if (st != AISCI_OK) return st;
  if ((n_graph > 0 && (!f_graph || !f)) || (virial9 && !w_api))
    return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_jacobian_forces: NULL f_graph, f or w_api");
  if (virial9)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) virial9[3 * a + b] += w_api[3 * b + a];
  for (int k = 0; k < n_graph; k++)
    for (int a = 0; a < 3; a++) f[3 * (size_t) index[k] + a] += f_graph[3 * (size_t) k + a];
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

/* ---- type roles, WC map, DW graph ---- */

aisci_status aisci_dplr_associate(int ntypes, int parent_type, int wc_type, int *wc_of_parent,
                                  int *parent_of_wc)
{
  if (ntypes < 1 || !wc_of_parent || !parent_of_wc)
    return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_associate: ntypes %d or NULL table",
                           ntypes);
  if (parent_type < 1 || parent_type > ntypes || wc_type < 1 || wc_type > ntypes)
    return aisci_set_error(AISCI_ERR_ARG, "types (%d %d) outside 1..%d", parent_type, wc_type,
                           ntypes);
  if (parent_type == wc_type)
    return aisci_set_error(AISCI_ERR_ARG, "a type cannot be its own WC type (%d %d)",
                           parent_type, wc_type);
  const int t[2] = {parent_type, wc_type};
  for (int k = 0; k < 2; k++)
    if (wc_of_parent[t[k]] || parent_of_wc[t[k]])
      return aisci_set_error(AISCI_ERR_ARG, "type %d appears twice", t[k]);
  wc_of_parent[parent_type] = wc_type;
  parent_of_wc[wc_type] = parent_type;
  return AISCI_OK;
}

/* Is name one of the space-separated words of list? */
static int in_word_list(const char *list, const char *name)
{
  const size_t len = strlen(name);
  for (const char *p = list; p && *p;) {
    while (*p == ' ') p++;
    const char *end = strchr(p, ' ');
    const size_t n = end ? (size_t) (end - p) : strlen(p);
    if (n > 0 && n == len && strncmp(p, name, n) == 0) return 1;
    p += n;
  }
  return 0;
}

aisci_status aisci_dplr_type_map(int ntypes, const char *const *element, const int *wc_of_parent,
                                 const int *parent_of_wc, const char *selected,
                                 aisci_dplr_lookup_fn lookup, void *ctx, int *model_type)
{
  if (ntypes < 1 || !element || !wc_of_parent || !parent_of_wc || !lookup || !model_type)
    return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_type_map: ntypes %d or NULL argument",
                           ntypes);
  for (int t = 0; t <= ntypes; t++) model_type[t] = -1;
  for (int t = 1; t <= ntypes; t++) {
    const char *el = element[t];
    if (!el) return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_type_map: NULL element %d", t);
    const int is_null = strcmp(el, "NULL") == 0;
    if (parent_of_wc[t]) {
      if (!is_null)
        return aisci_set_error(AISCI_ERR_ARG, "elements: WC type %d must be NULL, got %s", t,
                               el);
      continue;
    }
    if (is_null) {
      if (wc_of_parent[t])
        return aisci_set_error(AISCI_ERR_ARG, "parent type %d is mapped to NULL", t);
      continue;
    }
    int index = -1;
    aisci_status st = lookup(ctx, el, &index);
    if (st != AISCI_OK) {
      char why[1024];    /* aisci_set_error must not read its own buffer */
      snprintf(why, sizeof why, "%s", aisci_last_error());
      return aisci_set_error(st, "atom type %d (element %s): %s", t, el, why);
    }
    model_type[t] = index;
    if (wc_of_parent[t] && !in_word_list(selected, el))
      return aisci_set_error(AISCI_ERR_ARG,
                             "parent type %d is element %s, which the DW model does not "
                             "predict a WC for (selected_types = %s)",
                             t, el, selected ? selected : "");
  }
  return AISCI_OK;
}

/* Types of the listed rows in 1..ntypes (rows in [0, n_atoms) checked by the caller). */
static aisci_status check_type(const char *fn, int row, const int *type, int ntypes)
{
  if (type[row] < 1 || type[row] > ntypes)
    return aisci_set_error(AISCI_ERR_ARG, "%s: type %d of row %d outside 1..%d", fn, type[row],
                           row, ntypes);
  return AISCI_OK;
}

aisci_status aisci_dplr_count_bonds(int n_bonds, const int *bonds, int n_atoms, const int *type,
                                    const int64_t *tag, int ntypes, const int *parent_of_wc,
                                    int both_sides, const char *bond_name, double *counts)
{
  static const char *fn = "aisci_dplr_count_bonds";
  if (n_bonds < 0 || n_atoms < 0 || ntypes < 1)
    return aisci_set_error(AISCI_ERR_ARG, "%s: bad count (n_bonds %d, n_atoms %d, ntypes %d)",
                           fn, n_bonds, n_atoms, ntypes);
  if (n_bonds > 0 && (!bonds || !type || !tag || !parent_of_wc || !bond_name || !counts))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL argument", fn);
  for (int k = 0; k < 2 * n_bonds; k++) {
    if (bonds[k] < 0 || bonds[k] >= n_atoms)
      return aisci_set_error(AISCI_ERR_ARG, "%s: row %d of bond %d outside [0, %d)", fn,
                             bonds[k], k / 2, n_atoms);
    aisci_status st = check_type(fn, bonds[k], type, ntypes);
    if (st != AISCI_OK) return st;
  }
  for (int k = 0; k < n_bonds; k++) {
    const int i = bonds[2 * k], j = bonds[2 * k + 1];
    int wc = i, par = j;
    if (!parent_of_wc[type[i]]) {
      wc = j;
      par = i;
      if (!parent_of_wc[type[j]])
        return aisci_set_error(AISCI_ERR_ARG,
                               "bond type %s joins atoms ID %lld and %lld (types %d and %d), "
                               "neither of which is a WC type of type_associate",
                               bond_name, (long long) tag[i], (long long) tag[j], type[i],
                               type[j]);
      if (both_sides) continue;    /* the WC stores this bond too */
    }
    if (type[par] != parent_of_wc[type[wc]])
      return aisci_set_error(AISCI_ERR_ARG,
                             "WC atom ID %lld (type %d) is bonded by bond type %s to atom ID "
                             "%lld of type %d, but type_associate makes type %d its parent",
                             (long long) tag[wc], type[wc], bond_name, (long long) tag[par],
                             type[par], parent_of_wc[type[wc]]);
    counts[3 * (size_t) wc] += (double) tag[par];
    counts[3 * (size_t) wc + 1] += 1.0;
    counts[3 * (size_t) par + 2] += 1.0;
  }
  return AISCI_OK;
}

aisci_status aisci_dplr_list_wcs(int n_local, const int *type, const int64_t *tag, int ntypes,
                                 const int *wc_of_parent, const int *parent_of_wc,
                                 const double *counts, const char *bond_name, int *wc,
                                 int64_t *parent_tag, int *n_wc)
{
  static const char *fn = "aisci_dplr_list_wcs";
  if (n_local < 0 || ntypes < 1 || !n_wc)
    return aisci_set_error(AISCI_ERR_ARG, "%s: bad count (n_local %d, ntypes %d) or NULL n_wc",
                           fn, n_local, ntypes);
  *n_wc = 0;
  if (n_local > 0 && (!type || !tag || !wc_of_parent || !parent_of_wc || !counts ||
                      !bond_name || !wc || !parent_tag))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL argument", fn);
  for (int i = 0; i < n_local; i++) {
    aisci_status st = check_type(fn, i, type, ntypes);
    if (st != AISCI_OK) return st;
  }
  int n = 0;
  for (int i = 0; i < n_local; i++) {
    if (!parent_of_wc[type[i]]) continue;
    const long nb = lround(counts[3 * (size_t) i + 1]);
    if (nb != 1)
      return aisci_set_error(AISCI_ERR_ARG,
                             "WC atom ID %lld (type %d) has %ld bonds of type %s to a parent; "
                             "it needs exactly one",
                             (long long) tag[i], type[i], nb, bond_name);
    wc[n] = i;
    parent_tag[n++] = (int64_t) llround(counts[3 * (size_t) i]);
  }
  for (int i = 0; i < n_local; i++) {
    const long nw = lround(counts[3 * (size_t) i + 2]);
    if (wc_of_parent[type[i]] && nw != 1)
      return aisci_set_error(AISCI_ERR_ARG,
                             "atom ID %lld (type %d, parent type of WC type %d) has %ld WCs "
                             "bonded to it by bond type %s; it needs exactly one",
                             (long long) tag[i], type[i], wc_of_parent[type[i]], nw, bond_name);
  }
  *n_wc = n;
  return AISCI_OK;
}

aisci_status aisci_dplr_graph_atoms(int n_local, int n_atoms, const int *type, int ntypes,
                                    const int *wc_of_parent, const int *model_type,
                                    const double *x, int *index, int64_t *types, double *pos,
                                    int *n_graph, int *n_centres)
{
  /* the parents are the centres: the graph subsystem's "locals first" gather */
  if (!wc_of_parent)
    return aisci_set_error(AISCI_ERR_ARG, "aisci_dplr_graph_atoms: NULL argument");
  return aisci_graph_gather(n_local, n_atoms, type, ntypes, model_type, wc_of_parent, NULL, x,
                            index, types, pos, n_graph, n_centres);
}
