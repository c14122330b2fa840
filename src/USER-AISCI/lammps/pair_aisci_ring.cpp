/* pair_style aisci, keyword balance ring: ring load balancing of the per-atom network
 * work for one-cutoff models (num_layers = 1). See docs/ringlb.md and docs/pair_aisci.md.
 *
 * Translation only: the algorithm and the wire format are the C core's (aisci/ringlb.h,
 * aisci/graph.h); this file calls them in order, calls the model, and keeps statistics.
 * After every rebuild of the candidate graph each owned atom of a mapped type is one work
 * item of cost 1 + edges + triplets (aisci_graph_centre_cost) and the core plans where it
 * is computed (aisci_ringlb_plan). Every step:
 *   1. aisci_ringlb_env_pack: the environments of the items computed elsewhere;
 *   2. aisci_ringlb_send_work: they travel along the ring;
 *   3. aisci_graph_keep_centres: the model on the graph of the items kept here, over all
 *      local and ghost atoms;
 *   4. aisci_ringlb_shared_graph / _shared_results: the model on one graph of the foreign
 *      environments (the neighbours one owner names with the same key are one graph
 *      atom), results per item;
 *   5. aisci_ringlb_return_results, aisci_ringlb_env_apply: the results go back to their
 *      owners, which apply them as the model call would have.
 * The outputs are the arrays the plain model call fills (e_atom, f_model, w_atom, energy,
 * virial), so compute() scatters them unchanged. Exact (to rounding) because the energy
 * of a one-cutoff model's atom depends only on its own edges and triplets. */
#include "pair_aisci.h"

#include "aisci_lmp.h"

#include "comm.h"
#include "error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mpi.h>

extern "C" {
#include "aisci/ringlb.h"
}

using namespace LAMMPS_NS;

static const std::string STYLE = "pair_style aisci";

namespace LAMMPS_NS {

struct PairAisciRing {
  aisci_ringlb *lb = nullptr;
  double tolerance = 0.0;
  long planned_build = -1;        // graph_builds value the plan was made for
  bool log_next = true;           // log the statistics of the first plan after init
  std::vector<double> cost;       // n_local item costs
  std::vector<int64_t> estart;    // n_local + 1: edge range per item
  std::vector<int> dest;          // n_local: rank that computes the item
  aisci_graph *kept = nullptr;    // graph of the kept items
  // exchange: payloads out, results back (own layout), foreign results
  std::vector<int64_t> poff, roff;
  std::vector<double> payload, own_results, f_results;
  // first-reference flags of the sent items' neighbour entries; foreign items' origins
  std::vector<int64_t> f_order;
  std::vector<int> o_first, f_group;
  // graph of the foreign items
  std::vector<int64_t> s_types, s_index, s_trip;
  std::vector<double> s_vec, s_energy, s_forces, s_virial;
  // statistics since init
  aisci_ringlb_stats stats{};
  double max_after = 0.0;    // largest rank cost after balancing
  long n_sent_all = 0;
  double model_cpu = 0.0, model_wall = 0.0, exchange_wall = 0.0;
  long steps = 0;
};

}    // namespace LAMMPS_NS

double PairAisci::cpu_seconds()
{
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

double PairAisci::wall_seconds()
{
  return MPI_Wtime();
}

void PairAisci::ring_free()
{
  if (!ring) return;
  aisci_ringlb_destroy(ring->lb);
  aisci_graph_destroy(ring->kept);
  delete ring;
  ring = nullptr;
}

/* init_style(): reset the work statistics; create, keep or drop the ring balancer. */
void PairAisci::balance_init()
{
  work_cpu = work_wall = 0.0;
  work_steps = 0;
  if (ring_tolerance < 0.0) {
    ring_free();
    return;
  }
  if (num_layers != 1)
    error->all(FLERR,
               STYLE +
                   ": balance ring needs a one-cutoff model (num_layers = 1), but "
                   "model file '" +
                   model_file + "' has num_layers = " + std::to_string(num_layers) +
                   "; balance multi-layer models with LAMMPS's balance / fix "
                   "balance and compute aisci/cost (docs/ringlb.md)");
  if (periodic) {
    // one rank per partition: nothing to balance; the periodic graph stays
    ring_free();
    if (comm->me == 0)
      utils::logmesg(lmp, STYLE + ": balance ring: one MPI rank, nothing to balance\n");
    return;
  }
  if (ring && ring->tolerance != ring_tolerance) ring_free();
  if (!ring) {
    ring = new PairAisciRing;
    ring->tolerance = ring_tolerance;
    aisci_ringlb_config cfg = aisci_ringlb_config_default();
    cfg.tolerance = ring_tolerance;
    aisci_status st = aisci_ringlb_create(&cfg, world, &ring->lb);
    if (st == AISCI_OK) st = aisci_graph_create(&ring->kept);
    if (st != AISCI_OK) {
      ring_free();
      AISCI::fail_all(lmp, STYLE + ": balance ring", st);
    }
  }
  ring->planned_build = -1;
  ring->log_next = true;
  ring->model_cpu = ring->model_wall = ring->exchange_wall = 0.0;
  ring->steps = 0;
}

PairAisci::WorkStats PairAisci::work_stats() const
{
  WorkStats s{};
  s.ring = ring != nullptr;
  if (ring) {
    s.cost_before = ring->stats.cost_before;
    s.cost_after = ring->stats.cost_after;
    const double mean = ring->stats.mean_cost;
    s.max_ratio_before = mean > 0.0 ? ring->stats.max_cost_before / mean : 1.0;
    s.max_ratio_after = mean > 0.0 ? ring->max_after / mean : 1.0;
    s.n_sent = ring->stats.n_sent;
    s.n_sent_all = ring->n_sent_all;
    s.model_cpu = ring->model_cpu;
    s.model_wall = ring->model_wall;
    s.exchange_wall = ring->exchange_wall;
    s.steps = ring->steps;
  } else {
    s.model_cpu = work_cpu;
    s.model_wall = work_wall;
    s.steps = work_steps;
  }
  return s;
}

aisci_status PairAisci::ring_compute(double *energy, double *w)
{
  PairAisciRing &R = *ring;
  const int n = (int) atom_index.size();
  const int nl = n_local;
  const int64_t ne = aisci_graph_num_edges(edges);
  const int64_t *centre = aisci_graph_edge_index(edges);
  const double *edge_vec = aisci_graph_edge_vec(edges);
  aisci_status st;

  // Edge range of each item (the centres are the local atoms, in order).
  R.estart.resize(nl + 1);
  st = aisci_graph_centre_ranges(edges, nl, R.estart.data(), nullptr);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);

  // plan after each rebuild of the candidate graph (the items are the owned atoms)
  if (R.planned_build != graph_builds) {
    R.cost.resize(nl);
    const double unit[3] = {1.0, 1.0, 1.0};
    st = aisci_graph_centre_cost(nl, ne, centre, edge_vec, cutoff_3body, unit, R.cost.data());
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
    st = aisci_ringlb_plan(R.lb, nl, R.cost.data());
    if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE + ": balance ring", st);
    aisci_ringlb_get_stats(R.lb, &R.stats);
    R.dest.resize(nl);
    st = aisci_ringlb_get_destinations(R.lb, nl, R.dest.data());
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
    R.planned_build = graph_builds;
    long counts[2] = {R.stats.n_sent, R.stats.n_forwarded}, counts_all[2];
    MPI_Allreduce(&R.stats.cost_after, &R.max_after, 1, MPI_DOUBLE, MPI_MAX, world);
    MPI_Allreduce(counts, counts_all, 2, MPI_LONG, MPI_SUM, world);
    R.n_sent_all = counts_all[0];
    if (R.log_next && comm->me == 0) {
      const double mean = R.stats.mean_cost > 0.0 ? R.stats.mean_cost : 1.0;
      char line[512];
      std::snprintf(line, sizeof line,
                    "%s: balance ring: %d ranks, cost (1 + edges + triplets) max/mean %.4f "
                    "-> %.4f (tolerance %g)%s, %ld atoms computed on another rank (%ld "
                    "passed on), hop rounds %d forward %d backward\n",
                    STYLE.c_str(), R.stats.nranks, R.stats.max_cost_before / mean,
                    R.max_after / mean, R.tolerance,
                    R.stats.balanced ? ", within tolerance: nothing moves" : "", counts_all[0],
                    counts_all[1], R.stats.rounds_forward, R.stats.rounds_backward);
      utils::logmesg(lmp, std::string(line));
    }
    R.log_next = false;
  }

  // 1. pack the environments of the items computed elsewhere (the core owns the wire
  // format); virial results: 0 none, 1 the item's virial, 2 also the neighbours'
  // per-atom virials
  const int virial = vflag_atom ? 2 : (vflag_global ? 1 : 0);
  R.poff.resize(nl + 1);
  R.roff.resize(nl + 1);
  st = aisci_ringlb_env_pack(nl, R.dest.data(), comm->me, model_types.data(), R.estart.data(), ne,
                             centre, edge_vec, virial, R.poff.data(), nullptr, nullptr, nullptr);
  if (st == AISCI_OK) {
    R.payload.resize(R.poff[nl] + 1);
    R.o_first.resize(R.poff[nl] / 5 + 1);
    st = aisci_ringlb_env_pack(nl, R.dest.data(), comm->me, model_types.data(), R.estart.data(), ne,
                               centre, edge_vec, virial, R.poff.data(), R.payload.data(),
                               R.o_first.data(), R.roff.data());
  }
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);

  // 2. send the work along the ring
  double t0 = wall_seconds();
  st = aisci_ringlb_send_work(R.lb, R.poff.data(), R.payload.data(), R.roff.data());
  if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE + ": balance ring", st);
  R.exchange_wall += wall_seconds() - t0;

  // 3. own graph: edges and triplets of the kept items, edge ids renumbered
  const aisci_graph *own = edges;
  if (R.stats.n_sent > 0) {
    st = aisci_graph_keep_centres(R.kept, edges, nl, R.dest.data(), comm->me);
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
    own = R.kept;
  }
  double cpu0 = cpu_seconds(), wall0 = wall_seconds();
  double e_unused = 0.0;
  if (R.stats.n_kept > 0) {
    // every atom of the graph takes part (neighbours, ghosts); energies are summed below
    // over the items only (atoms without edges of their own have constant energies)
    st = api->model_compute(model, n, model_types.data(), aisci_graph_num_edges(own),
                            aisci_graph_edge_index(own), aisci_graph_edge_vec(own),
                            aisci_graph_num_triplets(own), aisci_graph_triplets(own), nl, &e_unused,
                            e_atom.data(), f_model.data(), vflag_global ? w : nullptr,
                            vflag_atom ? w_atom.data() : nullptr);
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  } else {
    std::fill(f_model.begin(), f_model.end(), 0.0);
    if (vflag_global) std::fill(w, w + 9, 0.0);
    if (vflag_atom) std::fill(w_atom.begin(), w_atom.end(), 0.0);
  }

  // 4. foreign items on their shared-neighbour graph
  int nf = 0;
  const int64_t *fpoff = nullptr, *froff = nullptr;
  const void *fpay = nullptr;
  st = aisci_ringlb_foreign(R.lb, &nf, &fpoff, &fpay, &froff);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
  R.f_results.resize(nf > 0 ? froff[nf] + 1 : 1);
  if (nf > 0) {
    const double *env = (const double *) fpay;
    R.f_group.resize(nf);
    R.f_order.resize(nf);
    for (int f = 0; f < nf && st == AISCI_OK; f++) {
      int origin = 0, index = 0;
      st = aisci_ringlb_foreign_origin(R.lb, f, &origin, &index);
      R.f_group[f] = origin;
      R.f_order[f] = index;
    }
    int64_t sa = 0, se = 0, stt = 0;
    if (st == AISCI_OK)
      st = aisci_ringlb_shared_graph(nf, fpoff, env, R.f_group.data(), cutoff_3body, &sa, &se, &stt,
                                     nullptr, nullptr, nullptr, nullptr);
    if (st == AISCI_OK) {
      R.s_types.resize(sa);
      R.s_index.resize(2 * se + 1);
      R.s_vec.resize(3 * se + 1);
      R.s_trip.resize(2 * stt + 1);
      R.s_energy.resize(sa);
      R.s_forces.resize(3 * sa);
      R.s_virial.resize(virial ? 9 * sa : 1);
      st = aisci_ringlb_shared_graph(nf, fpoff, env, R.f_group.data(), cutoff_3body, nullptr,
                                     nullptr, nullptr, R.s_types.data(), R.s_index.data(),
                                     R.s_vec.data(), R.s_trip.data());
    }
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
    double e_foreign = 0.0;
    st = api->model_compute(model, sa, R.s_types.data(), se, R.s_index.data(), R.s_vec.data(), stt,
                            R.s_trip.data(), nf, &e_foreign, R.s_energy.data(), R.s_forces.data(),
                            nullptr, virial ? R.s_virial.data() : nullptr);
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
    st = aisci_ringlb_shared_results(nf, fpoff, env, R.f_group.data(), R.f_order.data(),
                                     R.s_energy.data(), R.s_forces.data(), R.s_virial.data(),
                                     virial, froff, R.f_results.data());
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
  }
  R.model_cpu += cpu_seconds() - cpu0;
  R.model_wall += wall_seconds() - wall0;

  // 5. results of the items computed elsewhere come back
  R.own_results.resize(R.roff[nl] + 1);
  t0 = wall_seconds();
  st = aisci_ringlb_return_results(R.lb, R.f_results.data(), R.own_results.data());
  if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE + ": balance ring", st);
  R.exchange_wall += wall_seconds() - t0;
  R.steps++;

  // apply them as the model call would have
  st = aisci_ringlb_env_apply(nl, R.dest.data(), comm->me, R.estart.data(), ne, centre,
                              R.o_first.data(), R.roff.data(), R.own_results.data(), e_atom.data(),
                              f_model.data(), vflag_global ? w : nullptr,
                              vflag_atom ? w_atom.data() : nullptr);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
  double etot = 0.0;
  for (int k = 0; k < nl; k++) etot += e_atom[k];
  *energy = etot;
  return AISCI_OK;
}
