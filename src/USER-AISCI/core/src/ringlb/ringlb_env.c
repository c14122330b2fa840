/* Ring balancer, environments: the wire format of the work that travels (packed at the
 * owner, aisci_ringlb_env_pack), the shared-neighbour graph of the foreign environments
 * at the computing rank, their results, and the results' application at the owner
 * (aisci_ringlb_env_apply). One file owns both ends of the format. */
#include "aisci_testing/ringlb.h"

#include "internal.h"
#include "ringlb_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The wire format of an environment, in doubles: a header (type of the centre, number
 * of entries), then per neighbour entry its key, its type and the edge vector. */
enum { ENV_HEAD = 2, ENV_ENTRY = 5 };

int64_t aisci_ringlb_env_max_entries(int64_t payload_units)
{
  return payload_units / ENV_ENTRY;
}

static int is_index(double v)
{
  return v >= 0.0 && v <= 2147483647.0 && v == floor(v);
}

/* ---------------------------------------------------------------------------------------
 * Environments with shared neighbour atoms
 * ------------------------------------------------------------------------------------- */

/* One neighbour entry of a shared environment, for sorting by (group, key, order). */
typedef struct {
  int group;
  int64_t key, order, entry;
} shared_entry;

static int shared_entry_cmp(const void *pa, const void *pb)
{
  const shared_entry *a = pa, *b = pb;
  if (a->group != b->group) return a->group < b->group ? -1 : 1;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  return a->entry < b->entry ? -1 : (a->entry > b->entry);
}

/* Check the layout `type, n, n x (key, type, dx, dy, dz)`; count edges and triplets. */
static aisci_status shared_check(const char *fn, int n_env, const int64_t *offset,
                                 const double *env, const int *group, double cutoff_3body,
                                 int64_t *n_edges, int64_t *n_triplets)
{
  if (n_env < 0) return aisci_set_error(AISCI_ERR_ARG, "%s: n_env must be >= 0, got %d", fn, n_env);
  if (n_env > 0 && (!offset || !env || !group))
    return aisci_set_error(AISCI_ERR_ARG, "%s: offset, env or group is NULL with %d environments",
                           fn, n_env);
  if (!(cutoff_3body >= 0.0))
    return aisci_set_error(AISCI_ERR_ARG, "%s: cutoff_3body must be >= 0, got %g", fn,
                           cutoff_3body);
  const double c2 = cutoff_3body * cutoff_3body;
  int64_t ne = 0, nt = 0;
  for (int c = 0; c < n_env; c++) {
    const int64_t len = offset[c + 1] - offset[c];
    if (offset[c] < 0 || len < 2)
      return aisci_set_error(AISCI_ERR_ARG,
                             "%s: environment %d has %lld doubles (at least 2 needed)", fn, c,
                             (long long) len);
    const double *e = env + offset[c];
    if (!is_index(e[0]) || !is_index(e[1]))
      return aisci_set_error(AISCI_ERR_ARG,
                             "%s: environment %d: type %g and count %g must be integers >= 0", fn,
                             c, e[0], e[1]);
    const int64_t n = (int64_t) e[1];
    if (len != ENV_HEAD + ENV_ENTRY * n)
      return aisci_set_error(AISCI_ERR_ARG,
                             "%s: environment %d has %lld doubles, expected 2 + 5 x %lld", fn, c,
                             (long long) len, (long long) n);
    int64_t short_edges = 0;
    for (int64_t j = 0; j < n; j++) {
      const double *v = e + ENV_HEAD + ENV_ENTRY * j;
      if (!is_index(v[0]) || !is_index(v[1]))
        return aisci_set_error(
            AISCI_ERR_ARG,
            "%s: environment %d, neighbour %lld: key %g and type %g must be integers >= 0", fn, c,
            (long long) j, v[0], v[1]);
      if (c2 > 0.0 && v[2] * v[2] + v[3] * v[3] + v[4] * v[4] < c2) short_edges++;
    }
    ne += n;
    nt += short_edges * (short_edges - 1);
  }
  *n_edges = ne;
  *n_triplets = nt;
  return AISCI_OK;
}

/* Sorted entries of all environments; node[e] = index of the distinct (group, key) of
 * entry e (0-based, in (group, key) order) and first[e] = 1 for the first reference to
 * it (smallest order, then entry). Either output may be NULL. Returns the number of
 * distinct neighbours, or -1 (error set) when out of memory. */
static int64_t shared_nodes(const char *fn, int n_env, const int64_t *offset, const double *env,
                            const int *group, const int64_t *order, int64_t ne, int64_t *node,
                            int *first)
{
  shared_entry *s = malloc(sizeof(shared_entry) * (size_t) (ne > 0 ? ne : 1));
  if (!s) {
    aisci_set_error(AISCI_ERR_ALLOC, "%s: out of memory for %lld neighbour entries", fn,
                    (long long) ne);
    return -1;
  }
  int64_t e = 0;
  for (int c = 0; c < n_env; c++) {
    const double *en = env + offset[c];
    const int64_t n = (int64_t) en[1];
    for (int64_t j = 0; j < n; j++, e++) {
      s[e].group = group[c];
      s[e].key = (int64_t) en[ENV_HEAD + ENV_ENTRY * j];
      s[e].order = order ? order[c] : c;
      s[e].entry = e;
    }
  }
  qsort(s, (size_t) ne, sizeof(shared_entry), shared_entry_cmp);
  int64_t distinct = 0;
  for (int64_t k = 0; k < ne; k++) {
    const int fresh = k == 0 || s[k].group != s[k - 1].group || s[k].key != s[k - 1].key;
    distinct += fresh;
    if (node) node[s[k].entry] = distinct - 1;
    if (first) first[s[k].entry] = fresh;
  }
  free(s);
  return distinct;
}

aisci_status aisci_ringlb_shared_assign(int n_env, const int64_t *offset, const double *env,
                                        const int *group, const int64_t *order, int *first)
{
  const char *fn = "ringlb_shared_assign";
  int64_t ne = 0, nt = 0;
  aisci_status st = shared_check(fn, n_env, offset, env, group, 0.0, &ne, &nt);
  if (st) return st;
  if (ne > 0 && (!order || !first))
    return aisci_set_error(AISCI_ERR_ARG, "%s: order or first is NULL", fn);
  return shared_nodes(fn, n_env, offset, env, group, order, ne, NULL, first) < 0 ? AISCI_ERR_ALLOC
                                                                                 : AISCI_OK;
}

aisci_status aisci_ringlb_shared_graph(int n_env, const int64_t *offset, const double *env,
                                       const int *group, double cutoff_3body, int64_t *n_atoms,
                                       int64_t *n_edges, int64_t *n_triplets, int64_t *types,
                                       int64_t *edge_index, double *edge_vec, int64_t *triplets)
{
  const char *fn = "ringlb_shared_graph";
  int64_t ne = 0, nt = 0;
  aisci_status st = shared_check(fn, n_env, offset, env, group, cutoff_3body, &ne, &nt);
  if (st) return st;
  int64_t *node = malloc(sizeof(int64_t) * (size_t) (ne > 0 ? ne : 1));
  if (!node)
    return aisci_set_error(AISCI_ERR_ALLOC, "%s: out of memory for %lld entries", fn,
                           (long long) ne);
  const int64_t distinct = shared_nodes(fn, n_env, offset, env, group, NULL, ne, node, NULL);
  if (distinct < 0) {
    free(node);
    return AISCI_ERR_ALLOC;
  }
  if (n_atoms) *n_atoms = n_env + distinct;
  if (n_edges) *n_edges = ne;
  if (n_triplets) *n_triplets = cutoff_3body > 0.0 ? nt : 0;
  if (!types && !edge_index && !edge_vec && !triplets) { /* sizes only */
    free(node);
    return AISCI_OK;
  }
  if (!types || !edge_index || !edge_vec) {
    free(node);
    return aisci_set_error(AISCI_ERR_ARG, "%s: types, edge_index and edge_vec must all be given",
                           fn);
  }
  const double c2 = cutoff_3body * cutoff_3body;
  int64_t e = 0, t = 0;
  for (int c = 0; c < n_env; c++) {
    const double *en = env + offset[c];
    const int64_t n = (int64_t) en[1], e0 = e;
    types[c] = (int64_t) en[0];
    for (int64_t j = 0; j < n; j++, e++) {
      const double *v = en + ENV_HEAD + ENV_ENTRY * j;
      /* the first type seen for a neighbour is kept (all references carry the same) */
      types[n_env + node[e]] = (int64_t) v[1];
      edge_index[e] = c;
      edge_index[ne + e] = n_env + node[e];
      edge_vec[3 * e] = v[2];
      edge_vec[3 * e + 1] = v[3];
      edge_vec[3 * e + 2] = v[4];
    }
    if (triplets && cutoff_3body > 0.0)
      t += aisci_centre_triplets(edge_vec, e0, e, c2, triplets + 2 * t);
  }
  free(node);
  return AISCI_OK;
}

int64_t aisci_ringlb_shared_result_length(int64_t n_first, int virial)
{
  return 4 + (virial >= 1 ? 9 : 0) + n_first * (3 + (virial >= 2 ? 9 : 0));
}

aisci_status aisci_ringlb_shared_results(int n_env, const int64_t *offset, const double *env,
                                         const int *group, const int64_t *order,
                                         const double *per_atom_energy, const double *forces,
                                         const double *per_atom_virial, int virial,
                                         const int64_t *result_offset, double *results)
{
  const char *fn = "ringlb_shared_results";
  int64_t ne = 0, nt = 0;
  aisci_status st = shared_check(fn, n_env, offset, env, group, 0.0, &ne, &nt);
  if (st) return st;
  if (virial < 0 || virial > 2)
    return aisci_set_error(AISCI_ERR_ARG, "%s: virial must be 0, 1 or 2, got %d", fn, virial);
  if (n_env > 0 &&
      (!order || !per_atom_energy || !forces || !result_offset || !results ||
       (virial > 0 && !per_atom_virial)))
    return aisci_set_error(
        AISCI_ERR_ARG,
        "%s: NULL order, per_atom_energy, forces, per_atom_virial, result_offset or results", fn);
  int64_t *node = malloc(sizeof(int64_t) * (size_t) (ne > 0 ? ne : 1));
  int *first = malloc(sizeof(int) * (size_t) (ne > 0 ? ne : 1));
  if (!node || !first) {
    free(node), free(first);
    return aisci_set_error(AISCI_ERR_ALLOC, "%s: out of memory for %lld entries", fn,
                           (long long) ne);
  }
  if (shared_nodes(fn, n_env, offset, env, group, order, ne, node, first) < 0) {
    free(node), free(first);
    return AISCI_ERR_ALLOC;
  }
  int64_t e = 0;
  for (int c = 0; c < n_env; c++) {
    const int64_t n = (int64_t) env[offset[c] + 1];
    int64_t nf = 0;
    for (int64_t j = 0; j < n; j++) nf += first[e + j];
    const int64_t want = aisci_ringlb_shared_result_length(nf, virial);
    if (result_offset[c] < 0 || result_offset[c + 1] - result_offset[c] != want) {
      free(node), free(first);
      return aisci_set_error(
          AISCI_ERR_ARG, "%s: environment %d has room for %lld results, needs %lld", fn, c,
          (long long) (result_offset[c + 1] - result_offset[c]), (long long) want);
    }
    double *r = results + result_offset[c];
    *r++ = per_atom_energy[c];
    for (int k = 0; k < 3; k++) *r++ = forces[3 * (int64_t) c + k];
    if (virial >= 1) /* the centre holds one half of each of its edges' -r (x) g */
      for (int k = 0; k < 9; k++) *r++ = 2.0 * per_atom_virial[9 * (int64_t) c + k];
    for (int64_t j = 0; j < n; j++, e++) {
      if (!first[e]) continue;
      const int64_t a = n_env + node[e];
      for (int k = 0; k < 3; k++) *r++ = forces[3 * a + k];
      if (virial >= 2)
        for (int k = 0; k < 9; k++) *r++ = per_atom_virial[9 * a + k];
    }
  }
  free(node), free(first);
  return AISCI_OK;
}

/* ---------------------------------------------------------------------------------------
 * The owner's side of the wire format: pack the environments of the items computed
 * elsewhere, apply the results that come back
 * ------------------------------------------------------------------------------------- */

/* Arguments shared by pack and apply. */
static aisci_status env_check(const char *fn, int n_items, const int *dest,
                              const int64_t *edge_start, int64_t n_edges, const int64_t *edge_index,
                              int virial)
{
  if (n_items < 0 || n_edges < 0)
    return aisci_set_error(AISCI_ERR_ARG, "%s: n_items = %d and n_edges = %lld must be >= 0", fn,
                           n_items, (long long) n_edges);
  if (virial < 0 || virial > 2)
    return aisci_set_error(AISCI_ERR_ARG, "%s: virial must be 0, 1 or 2, got %d", fn, virial);
  if (!edge_start || (n_items > 0 && !dest) || (n_edges > 0 && !edge_index))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL dest, edge_start or edge_index", fn);
  for (int k = 0; k < n_items; k++)
    if (dest[k] < 0)
      return aisci_set_error(AISCI_ERR_ARG, "%s: item %d has destination %d < 0", fn, k, dest[k]);
  for (int k = 0; k < n_items; k++)
    if (edge_start[k] < 0 || edge_start[k + 1] < edge_start[k] || edge_start[k + 1] > n_edges)
      return aisci_set_error(AISCI_ERR_ARG,
                             "%s: edge range [%lld, %lld) of item %d outside "
                             "[0, %lld]",
                             fn, (long long) edge_start[k], (long long) edge_start[k + 1], k,
                             (long long) n_edges);
  return AISCI_OK;
}

aisci_status aisci_ringlb_env_pack(int n_items, const int *dest, int rank, const int64_t *types,
                                   const int64_t *edge_start, int64_t n_edges,
                                   const int64_t *edge_index, const double *edge_vec, int virial,
                                   int64_t *payload_offset, double *payload, int *first,
                                   int64_t *result_offset)
{
  static const char fn[] = "aisci_ringlb_env_pack";
  aisci_status st = env_check(fn, n_items, dest, edge_start, n_edges, edge_index, virial);
  if (st != AISCI_OK) return st;
  if (!payload_offset) return aisci_set_error(AISCI_ERR_ARG, "%s: payload_offset is NULL", fn);
  payload_offset[0] = 0;
  int n_sent = 0;
  for (int k = 0; k < n_items; k++) {
    const int sent = dest[k] != rank;
    n_sent += sent;
    const int64_t m = edge_start[k + 1] - edge_start[k];
    payload_offset[k + 1] = payload_offset[k] + (sent ? ENV_HEAD + ENV_ENTRY * m : 0);
  }
  if (!payload) return AISCI_OK; /* sizes only */
  if (!first || !result_offset || (n_sent > 0 && (!types || !edge_vec)))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL types, edge_vec, first or result_offset", fn);
  const int64_t *neigh = edge_index + n_edges;
  /* type_i, m, then per neighbour: key (its graph index here), type_j, x_j - x_i */
  for (int k = 0; k < n_items; k++) {
    if (dest[k] == rank) continue;
    double *p = payload + payload_offset[k];
    *p++ = (double) types[k];
    *p++ = (double) (edge_start[k + 1] - edge_start[k]);
    for (int64_t e = edge_start[k]; e < edge_start[k + 1]; e++) {
      *p++ = (double) neigh[e];
      *p++ = (double) types[neigh[e]];
      for (int d = 0; d < 3; d++) *p++ = edge_vec[3 * e + d];
    }
  }
  /* which neighbour entries carry a neighbour's results (the computing rank applies the
   * same rule with groups = origins), hence the result length of every sent item */
  int64_t *off = malloc(sizeof(int64_t) * ((size_t) n_sent + 1));
  int64_t *order = malloc(sizeof(int64_t) * ((size_t) n_sent + 1));
  int *group = malloc(sizeof(int) * ((size_t) n_sent + 1));
  if (!off || !order || !group) {
    free(off), free(order), free(group);
    return aisci_set_error(AISCI_ERR_ALLOC, "%s: out of memory for %d items", fn, n_sent);
  }
  int s = 0;
  for (int k = 0; k < n_items; k++) {
    if (dest[k] == rank) continue;
    off[s] = payload_offset[k];
    order[s] = k;
    group[s++] = dest[k];
  }
  off[n_sent] = payload_offset[n_items];
  st = aisci_ringlb_shared_assign(n_sent, off, payload, group, order, first);
  free(off), free(order), free(group);
  if (st != AISCI_OK) return st;
  result_offset[0] = 0;
  for (int k = 0, entry = 0; k < n_items; k++) {
    int64_t len = 0;
    if (dest[k] != rank) {
      int64_t n_first = 0;
      for (int64_t e = edge_start[k]; e < edge_start[k + 1]; e++) n_first += first[entry++];
      len = aisci_ringlb_shared_result_length(n_first, virial);
    }
    result_offset[k + 1] = result_offset[k] + len;
  }
  return AISCI_OK;
}

aisci_status aisci_ringlb_env_apply(int n_items, const int *dest, int rank,
                                    const int64_t *edge_start, int64_t n_edges,
                                    const int64_t *edge_index, const int *first,
                                    const int64_t *result_offset, const double *results,
                                    double *energy, double *forces, double *virial,
                                    double *virial_atom)
{
  static const char fn[] = "aisci_ringlb_env_apply";
  const int level = virial_atom ? 2 : (virial ? 1 : 0);
  aisci_status st = env_check(fn, n_items, dest, edge_start, n_edges, edge_index, level);
  if (st != AISCI_OK) return st;
  int n_sent = 0;
  for (int k = 0; k < n_items; k++) n_sent += dest[k] != rank;
  if (n_sent == 0) return AISCI_OK;
  if (!first || !result_offset || !results || !energy || !forces)
    return aisci_set_error(AISCI_ERR_ARG,
                           "%s: NULL first, result_offset, results, energy or "
                           "forces",
                           fn);
  /* the layout must be the one aisci_ringlb_env_pack made for this virial level */
  for (int k = 0, entry = 0; k < n_items; k++) {
    if (dest[k] == rank) continue;
    int64_t n_first = 0;
    for (int64_t e = edge_start[k]; e < edge_start[k + 1]; e++) n_first += first[entry++];
    const int64_t want = aisci_ringlb_shared_result_length(n_first, level);
    if (result_offset[k + 1] - result_offset[k] != want)
      return aisci_set_error(
          AISCI_ERR_ARG, "%s: item %d has %lld results, expected %lld for virial level %d", fn, k,
          (long long) (result_offset[k + 1] - result_offset[k]), (long long) want, level);
  }
  const int64_t *neigh = edge_index + n_edges;
  /* as the model call would have: forces on i and its neighbours, the item's virial
   * (global; per atom: half on i, the neighbours' halves with their forces) */
  for (int k = 0, entry = 0; k < n_items; k++) {
    if (dest[k] == rank) continue;
    const double *r = results + result_offset[k];
    energy[k] = r[0];
    for (int d = 0; d < 3; d++) forces[3 * (size_t) k + d] += r[1 + d];
    const double *p = r + 4;
    if (level >= 1) {
      for (int v = 0; v < 9; v++) {
        if (virial) virial[v] += p[v];
        if (virial_atom) virial_atom[9 * (size_t) k + v] += 0.5 * p[v];
      }
      p += 9;
    }
    for (int64_t e = edge_start[k]; e < edge_start[k + 1]; e++) {
      if (!first[entry++]) continue;
      const int64_t j = neigh[e];
      for (int d = 0; d < 3; d++) forces[3 * (size_t) j + d] += p[d];
      p += 3;
      if (level == 2) {
        for (int v = 0; v < 9; v++) virial_atom[9 * (size_t) j + v] += p[v];
        p += 9;
      }
    }
  }
  return AISCI_OK;
}
