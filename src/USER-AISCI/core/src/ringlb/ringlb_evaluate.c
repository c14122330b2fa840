/* Ring balancer, one whole balanced evaluation (aisci_ringlb_evaluate): the steps of
 * ringlb.c (plan, transport) and ringlb_env.c (wire format) in order, the model called
 * back twice (kept items on this rank's graph, foreign items on their shared-neighbour
 * graph), statistics. Every step that can fail on one rank only brings its status into
 * the next collective agreement, so that every rank fails together. */
#define _POSIX_C_SOURCE 200809L

#include "internal.h"
#include "ringlb_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char FN[] = "ringlb_evaluate";

static double cpu_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

void aisci_ringlb_eval_free(ringlb_eval *ev)
{
  aisci_graph_destroy(ev->kept);
  free(ev->estart);
  free(ev->cost);
  free(ev->poff);
  free(ev->roff);
  free(ev->payload);
  free(ev->first);
  free(ev->own_results);
  free(ev->f_results);
  free(ev->f_group);
  free(ev->f_order);
  free(ev->s_types);
  free(ev->s_index);
  free(ev->s_trip);
  free(ev->s_vec);
  free(ev->s_energy);
  free(ev->s_forces);
  free(ev->s_virial);
  free(ev->e_scratch);
  memset(ev, 0, sizeof(*ev));
}

/* Grow an evaluate buffer to n elements (+1, so that empty arrays are not NULL). */
static aisci_status grow(void *p, int64_t *cap, int64_t n, size_t elem, const char *what)
{
  return aisci_grow((void **) p, cap, n + 1, elem, FN, what);
}

/* After a failed collective step: when the agreement failed (every rank knows) and some
 * rank brought its own error in, the lowest such rank's status and message reach every
 * rank; that rank keeps its own. Failures after an agreement (MPI, memory inside the
 * transport) are this rank's alone and come back as they are. */
static aisci_status fail(aisci_ringlb *lb, aisci_status st)
{
  lb->eval.planned = 0; /* the next call plans again, on every rank */
  if (!lb->agree_failed) return st;
  const int mine = lb->agree_own != AISCI_OK ? lb->rank : INT_MAX;
  int root = INT_MAX;
  if (MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, lb->comm) != MPI_SUCCESS) return st;
  if (root == INT_MAX) return st; /* mismatched calls: every rank has that message */
  struct {
    int status;
    char text[1024];
  } msg;
  memset(&msg, 0, sizeof(msg));
  if (lb->rank == root) {
    msg.status = (int) lb->agree_own;
    snprintf(msg.text, sizeof(msg.text), "%s", aisci_last_error());
  }
  if (MPI_Bcast(&msg, (int) sizeof(msg), MPI_BYTE, root, lb->comm) != MPI_SUCCESS) return st;
  if (lb->rank == root) return lb->agree_own;
  return aisci_set_error((aisci_status) msg.status, "%s: failed on rank %d: %s", FN, root,
                         msg.text);
}

static aisci_status check_args(const aisci_ringlb *lb, const aisci_graph *graph, int n_atoms,
                               int n_items, const int64_t *types, double cutoff_3body,
                               aisci_ringlb_model_fn model, const double *energy,
                               const double *forces)
{
  if (!graph || !model || !energy || !forces || (n_atoms > 0 && !types))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL graph, types, model, energy or forces", FN);
  if (n_items < 0 || n_atoms < n_items)
    return aisci_set_error(AISCI_ERR_ARG, "%s: need 0 <= n_items <= n_atoms, got %d and %d", FN,
                           n_items, n_atoms);
  if (!(cutoff_3body >= 0.0))
    return aisci_set_error(AISCI_ERR_ARG, "%s: cutoff_3body must be >= 0, got %g", FN,
                           cutoff_3body);
  if (lb->unit != sizeof(double))
    return aisci_set_error(
        AISCI_ERR_ARG, "%s: the balancer's unit_bytes is %zu; evaluate packs doubles (0 or %zu)",
        FN, lb->unit, sizeof(double));
  return AISCI_OK;
}

/* The model on the graph of the kept items (all graph atoms; edges and triplets of the
 * kept centres), or zero outputs when nothing is kept. */
static aisci_status compute_kept(aisci_ringlb *lb, const aisci_graph *graph, int n_atoms,
                                 int n_items, const int64_t *types, aisci_ringlb_model_fn model,
                                 void *ctx, double *e_atom, double *forces, double *virial,
                                 double *virial_atom)
{
  ringlb_eval *ev = &lb->eval;
  aisci_status st = AISCI_OK;
  const aisci_graph *own = graph;
  if (lb->n_kept < n_items) {
    if (!ev->kept && (st = aisci_graph_create(&ev->kept)) != AISCI_OK) return st;
    if ((st = aisci_graph_keep_centres(ev->kept, graph, n_items, lb->dest, lb->rank)) != AISCI_OK)
      return st;
    own = ev->kept;
  }
  if (lb->n_kept > 0) {
    /* every atom of the graph takes part (neighbours, ghosts); the energy is summed over
     * the items by the caller (atoms without edges of their own have constant energies) */
    double e_unused = 0.0;
    return model(ctx, n_atoms, types, aisci_graph_num_edges(own), aisci_graph_edge_index(own),
                 aisci_graph_edge_vec(own), aisci_graph_num_triplets(own),
                 aisci_graph_triplets(own), n_items, &e_unused, e_atom, forces, virial,
                 virial_atom);
  }
  memset(e_atom, 0, sizeof(double) * (size_t) n_atoms);
  memset(forces, 0, sizeof(double) * 3 * (size_t) n_atoms);
  if (virial) memset(virial, 0, sizeof(double) * 9);
  if (virial_atom) memset(virial_atom, 0, sizeof(double) * 9 * (size_t) n_atoms);
  return AISCI_OK;
}

/* The model on the shared-neighbour graph of the foreign items, results per item into
 * ev->f_results (the layout of aisci_ringlb_foreign). */
static aisci_status compute_foreign(aisci_ringlb *lb, double cutoff_3body, int virial,
                                    aisci_ringlb_model_fn model, void *ctx)
{
  ringlb_eval *ev = &lb->eval;
  int nf = 0;
  const int64_t *fpoff = NULL, *froff = NULL;
  const void *fpay = NULL;
  aisci_status st = aisci_ringlb_foreign(lb, &nf, &fpoff, &fpay, &froff);
  if (st == AISCI_OK)
    st = grow(&ev->f_results, &ev->cap_fres, froff[nf], sizeof(double), "results");
  if (st != AISCI_OK || nf == 0) return st;
  const double *env = fpay;
  if ((st = grow(&ev->f_group, &ev->cap_group, nf, sizeof(int), "origins")) ||
      (st = grow(&ev->f_order, &ev->cap_order, nf, sizeof(int64_t), "origins")))
    return st;
  for (int f = 0; f < nf; f++) {
    int origin = 0, index = 0;
    if ((st = aisci_ringlb_foreign_origin(lb, f, &origin, &index))) return st;
    ev->f_group[f] = origin;
    ev->f_order[f] = index;
  }
  int64_t sa = 0, se = 0, stt = 0;
  st = aisci_ringlb_shared_graph(nf, fpoff, env, ev->f_group, cutoff_3body, &sa, &se, &stt, NULL,
                                 NULL, NULL, NULL);
  if (st) return st;
  if ((st = grow(&ev->s_types, &ev->cap_stypes, sa, sizeof(int64_t), "graph")) ||
      (st = grow(&ev->s_index, &ev->cap_sindex, 2 * se, sizeof(int64_t), "graph")) ||
      (st = grow(&ev->s_vec, &ev->cap_svec, 3 * se, sizeof(double), "graph")) ||
      (st = grow(&ev->s_trip, &ev->cap_strip, 2 * stt, sizeof(int64_t), "graph")) ||
      (st = grow(&ev->s_energy, &ev->cap_senergy, sa, sizeof(double), "energies")) ||
      (st = grow(&ev->s_forces, &ev->cap_sforces, 3 * sa, sizeof(double), "forces")) ||
      (st = grow(&ev->s_virial, &ev->cap_svirial, virial ? 9 * sa : 0, sizeof(double), "virials")))
    return st;
  st = aisci_ringlb_shared_graph(nf, fpoff, env, ev->f_group, cutoff_3body, NULL, NULL, NULL,
                                 ev->s_types, ev->s_index, ev->s_vec, ev->s_trip);
  if (st) return st;
  double e_foreign = 0.0;
  st = model(ctx, sa, ev->s_types, se, ev->s_index, ev->s_vec, stt, ev->s_trip, nf, &e_foreign,
             ev->s_energy, ev->s_forces, NULL, virial ? ev->s_virial : NULL);
  if (st) return st;
  return aisci_ringlb_shared_results(nf, fpoff, env, ev->f_group, ev->f_order, ev->s_energy,
                                     ev->s_forces, ev->s_virial, virial, froff, ev->f_results);
}

aisci_status aisci_ringlb_evaluate(aisci_ringlb *lb, const aisci_graph *graph, int64_t build,
                                   int n_atoms, int n_items, const int64_t *types,
                                   double cutoff_3body, aisci_ringlb_model_fn model, void *ctx,
                                   double *energy, double *per_atom_energy, double *forces,
                                   double *virial, double *per_atom_virial)
{
  if (!lb) return aisci_set_error(AISCI_ERR_ARG, "%s: lb is NULL", FN);
  ringlb_eval *ev = &lb->eval;
  const int replan = !ev->planned || ev->planned_build != build;
  aisci_status st =
      check_args(lb, graph, n_atoms, n_items, types, cutoff_3body, model, energy, forces);
  if (st == AISCI_OK && !replan && n_items != lb->n_items)
    st = aisci_set_error(AISCI_ERR_ARG,
                         "%s: %d items, but the plan of build %lld has %d (pass a new build)", FN,
                         n_items, (long long) build, lb->n_items);

  /* edge range of each item (the centres are the items, in order) */
  if (st == AISCI_OK) st = grow(&ev->estart, &ev->cap_estart, n_items, sizeof(int64_t), "ranges");
  if (st == AISCI_OK) st = aisci_graph_centre_ranges(graph, n_items, ev->estart, NULL);
  const int64_t ne = st == AISCI_OK ? aisci_graph_num_edges(graph) : 0;
  const int64_t *edge_index = st == AISCI_OK ? aisci_graph_edge_index(graph) : NULL;
  const double *edge_vec = st == AISCI_OK ? aisci_graph_edge_vec(graph) : NULL;

  /* plan after each rebuild: cost 1 + edges + triplets per item */
  if (replan) {
    static const double unit[3] = {1.0, 1.0, 1.0};
    ev->planned = 0;
    if (st == AISCI_OK) st = grow(&ev->cost, &ev->cap_cost, n_items, sizeof(double), "costs");
    if (st == AISCI_OK)
      st = aisci_graph_centre_cost(n_items, ne, edge_index, edge_vec, cutoff_3body, unit, ev->cost);
    const aisci_status agreed = aisci_ringlb_plan_pending(lb, st, n_items, ev->cost);
    if (agreed != AISCI_OK) return fail(lb, st != AISCI_OK ? st : agreed);
    ev->planned = 1;
    ev->planned_build = build;
  }

  /* 1. pack the environments of the items computed elsewhere; virial results: 0 none,
   * 1 the item's virial, 2 also the neighbours' per-atom virials */
  const int level = per_atom_virial ? 2 : (virial ? 1 : 0);
  if (st == AISCI_OK) st = grow(&ev->poff, &ev->cap_poff, n_items, sizeof(int64_t), "offsets");
  if (st == AISCI_OK) st = grow(&ev->roff, &ev->cap_roff, n_items, sizeof(int64_t), "offsets");
  if (st == AISCI_OK)
    st = aisci_ringlb_env_pack(n_items, lb->dest, lb->rank, types, ev->estart, ne, edge_index,
                               edge_vec, level, ev->poff, NULL, NULL, NULL);
  if (st == AISCI_OK) {
    const int64_t units = ev->poff[n_items];
    if (!(st = grow(&ev->payload, &ev->cap_payload, units, sizeof(double), "payload")) &&
        !(st = grow(&ev->first, &ev->cap_first, aisci_ringlb_env_max_entries(units), sizeof(int),
                    "flags")))
      st = aisci_ringlb_env_pack(n_items, lb->dest, lb->rank, types, ev->estart, ne, edge_index,
                                 edge_vec, level, ev->poff, ev->payload, ev->first, ev->roff);
  }

  /* 2. the work travels along the ring */
  double t0 = MPI_Wtime();
  aisci_status agreed = aisci_ringlb_send_work_pending(lb, st, ev->poff, ev->payload, ev->roff);
  ev->exchange_wall += MPI_Wtime() - t0;
  if (agreed != AISCI_OK) return fail(lb, st != AISCI_OK ? st : agreed);

  /* 3. the kept items on this rank's graph, 4. the foreign items on theirs */
  double *e_atom = per_atom_energy;
  if (!e_atom &&
      !(st = grow(&ev->e_scratch, &ev->cap_escratch, n_atoms, sizeof(double), "energies")))
    e_atom = ev->e_scratch;
  const double cpu0 = cpu_seconds(), wall0 = MPI_Wtime();
  if (st == AISCI_OK)
    st = compute_kept(lb, graph, n_atoms, n_items, types, model, ctx, e_atom, forces, virial,
                      per_atom_virial);
  if (st == AISCI_OK) st = compute_foreign(lb, cutoff_3body, level, model, ctx);
  ev->model_cpu += cpu_seconds() - cpu0;
  ev->model_wall += MPI_Wtime() - wall0;

  /* 5. the results of the items computed elsewhere come back */
  if (st == AISCI_OK)
    st = grow(&ev->own_results, &ev->cap_own, ev->roff[n_items], sizeof(double), "results");
  t0 = MPI_Wtime();
  agreed = aisci_ringlb_return_results_pending(lb, st, ev->f_results, ev->own_results);
  ev->exchange_wall += MPI_Wtime() - t0;
  if (agreed != AISCI_OK) return fail(lb, st != AISCI_OK ? st : agreed);

  /* and are applied as the model call on the whole graph would have */
  st = aisci_ringlb_env_apply(n_items, lb->dest, lb->rank, ev->estart, ne, edge_index, ev->first,
                              ev->roff, ev->own_results, e_atom, forces, virial, per_atom_virial);
  if (st != AISCI_OK) return fail(lb, st);
  double etot = 0.0;
  for (int k = 0; k < n_items; k++) etot += e_atom[k];
  *energy = etot;
  ev->steps++;
  return AISCI_OK;
}
