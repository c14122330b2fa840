/* pair_style aisci, keyword balance ring: ring load balancing of the per-atom network
 * work for one-cutoff models (num_layers = 1). See docs/ringlb.md and docs/pair_aisci.md.
 *
 * After every rebuild of the candidate graph (LAMMPS neighbor-list rebuild) each owned
 * atom of a mapped type is one work item of cost 1 + edges + triplets
 * (aisci_ringlb_centre_cost) and the core plans where it is computed (aisci_ringlb_plan).
 * Every step:
 *   1. pack: the environment of each item computed elsewhere (type, then for each
 *      neighbour within the cutoff its graph index here as the key, its type and
 *      x_j - x_i), in the edge order of the graph;
 *   2. send_work: the environments travel along the ring;
 *   3. own graph: the model on the graph of this rank restricted to the edges (and
 *      triplets) of the items kept here, over all local and ghost atoms;
 *   4. foreign: the model on one graph of the foreign environments in which the
 *      neighbours of one owner with the same key are one graph atom
 *      (aisci_ringlb_shared_graph: a foreign atom then costs about as much as a kept
 *      one, instead of 1 + its neighbour count in graph atoms); results per item E_i, the
 *      force on i, its virial, and the force (and per-atom virial) of the shared
 *      neighbours it is the first reference of (aisci_ringlb_shared_results);
 *   5. return_results: the results go back to their owners, which apply them as the model
 *      call would have: forces on i and on its neighbours (ghost j: reverse
 *      communication), global virial, per-atom virials, E_i.
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
  long planned_build = -1;    // graph_builds value the plan was made for
  bool log_next = true;       // log the statistics of the first plan after init
  std::vector<double> cost;                    // n_local item costs
  std::vector<int64_t> estart, tstart;         // n_local + 1: edge / triplet range per item
  std::vector<char> sent;                      // n_local: 1 if computed elsewhere
  std::vector<int> dest;                       // n_local: rank that computes the item
  // graph of the kept items
  std::vector<int64_t> k_index, k_trip;
  std::vector<double> k_vec;
  // exchange: payloads out, results back (own layout), foreign results
  std::vector<int64_t> poff, roff;
  std::vector<double> payload, own_results, f_results;
  // shared-neighbour layout: own sent items (groups = destinations) and foreign items
  // (groups = origins), first-reference flags of their neighbour entries
  std::vector<int64_t> o_off, o_order, f_order;
  std::vector<int> o_group, o_first, f_group;
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

double PairAisci::wall_seconds() { return MPI_Wtime(); }

void PairAisci::ring_free()
{
  if (!ring) return;
  aisci_ringlb_destroy(ring->lb);
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
    error->all(FLERR, STYLE + ": balance ring needs a one-cutoff model (num_layers = 1), but "
                              "model file '" + model_file + "' has num_layers = " +
                              std::to_string(num_layers) +
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
    aisci_ringlb_config cfg{ring_tolerance, 0};
    aisci_status st = aisci_ringlb_create(&cfg, world, &ring->lb);
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
  const int64_t ne = (int64_t) edge_r2.size();
  const int64_t nt = (int64_t) triplets.size() / 2;
  const int64_t *centre = edge_index.data(), *neigh = edge_index.data() + ne;
  aisci_status st;

  // Edge and triplet ranges of the items (centres are the local atoms, in order; the
  // triplets follow the edges of their centre).
  R.estart.assign(nl + 1, 0);
  for (int64_t e = 0; e < ne; e++) R.estart[centre[e] + 1]++;
  for (int k = 0; k < nl; k++) R.estart[k + 1] += R.estart[k];
  R.tstart.assign(nl + 1, 0);
  for (int64_t t = 0; t < nt; t++) R.tstart[centre[triplets[2 * t]] + 1]++;
  for (int k = 0; k < nl; k++) R.tstart[k + 1] += R.tstart[k];

  // plan after each rebuild of the candidate graph (the items are the owned atoms)
  if (R.planned_build != graph_builds) {
    R.cost.resize(nl);
    const double unit[3] = {1.0, 1.0, 1.0};
    st = aisci_ringlb_centre_cost(nl, ne, centre, edge_vec.data(), cutoff_3body, unit,
                                  R.cost.data());
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
    st = aisci_ringlb_plan(R.lb, nl, R.cost.data());
    if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE + ": balance ring", st);
    aisci_ringlb_get_stats(R.lb, &R.stats);
    R.sent.assign(nl, 0);
    R.dest.assign(nl, comm->me);
    for (int k = 0; k < nl; k++) {
      R.dest[k] = aisci_ringlb_destination(R.lb, k);
      R.sent[k] = R.dest[k] != comm->me;
    }
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

  // 1. pack the environments of the items computed elsewhere: type_i, m, then per
  // neighbour (key = its graph index here, type_j, x_j - x_i)
  // virial results: 0 none, 1 the item's virial, 2 also the neighbours' per-atom virials
  const int virial = vflag_atom ? 2 : (vflag_global ? 1 : 0);
  R.poff.assign(nl + 1, 0);
  for (int k = 0; k < nl; k++)
    R.poff[k + 1] = R.poff[k] + (R.sent[k] ? 2 + 5 * (R.estart[k + 1] - R.estart[k]) : 0);
  R.payload.resize(R.poff[nl] + 1);
  R.o_off.clear();
  R.o_order.clear();
  R.o_group.clear();
  for (int k = 0; k < nl; k++) {
    if (!R.sent[k]) continue;
    R.o_off.push_back(R.poff[k]);
    R.o_order.push_back(k);
    R.o_group.push_back(R.dest[k]);
    double *p = &R.payload[R.poff[k]];
    *p++ = (double) model_types[k];
    *p++ = (double) (R.estart[k + 1] - R.estart[k]);
    for (int64_t e = R.estart[k]; e < R.estart[k + 1]; e++) {
      *p++ = (double) neigh[e];
      *p++ = (double) model_types[neigh[e]];
      for (int d = 0; d < 3; d++) *p++ = edge_vec[3 * e + d];
    }
  }
  const int n_sent = (int) R.o_order.size();
  R.o_off.push_back(R.poff[nl]);
  // which neighbour entries carry a neighbour's results (the same rule as the computing
  // rank's), hence the result length of every sent item
  R.o_first.resize(R.poff[nl] / 2 + 1);
  st = aisci_ringlb_shared_assign(n_sent, R.o_off.data(), R.payload.data(), R.o_group.data(),
                                  R.o_order.data(), R.o_first.data());
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": balance ring", st);
  R.roff.assign(nl + 1, 0);
  for (int k = 0, entry = 0; k < nl; k++) {
    int64_t len = 0;
    if (R.sent[k]) {
      int64_t n_first = 0;
      for (int64_t e = R.estart[k]; e < R.estart[k + 1]; e++) n_first += R.o_first[entry++];
      len = aisci_ringlb_shared_result_length(n_first, virial);
    }
    R.roff[k + 1] = R.roff[k] + len;
  }

  // 2. send the work along the ring
  double t0 = wall_seconds();
  st = aisci_ringlb_send_work(R.lb, R.poff.data(), R.payload.data(), R.roff.data());
  if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE + ": balance ring", st);
  R.exchange_wall += wall_seconds() - t0;

  // 3. own graph: edges and triplets of the kept items, edge ids renumbered
  const int64_t *g_index = edge_index.data(), *g_trip = triplets.data();
  const double *g_vec = edge_vec.data();
  int64_t g_ne = ne, g_nt = nt;
  if (R.stats.n_sent > 0) {
    R.k_index.clear();
    R.k_vec.clear();
    R.k_trip.clear();
    int64_t removed = 0;
    for (int k = 0; k < nl; k++) {
      if (R.sent[k]) {
        removed += R.estart[k + 1] - R.estart[k];
        continue;
      }
      for (int64_t e = R.estart[k]; e < R.estart[k + 1]; e++) {
        R.k_index.push_back(centre[e]);
        R.k_vec.insert(R.k_vec.end(), &edge_vec[3 * e], &edge_vec[3 * e] + 3);
      }
      for (int64_t t = R.tstart[k]; t < R.tstart[k + 1]; t++)
        R.k_trip.insert(R.k_trip.end(), {triplets[2 * t] - removed, triplets[2 * t + 1] - removed});
    }
    g_ne = (int64_t) R.k_index.size();
    for (int k = 0; k < nl; k++)
      if (!R.sent[k])
        for (int64_t e = R.estart[k]; e < R.estart[k + 1]; e++) R.k_index.push_back(neigh[e]);
    g_index = R.k_index.data();
    g_vec = R.k_vec.data();
    g_nt = (int64_t) R.k_trip.size() / 2;
    g_trip = R.k_trip.data();
  }
  double cpu0 = cpu_seconds(), wall0 = wall_seconds();
  double e_unused = 0.0;
  if (R.stats.n_kept > 0) {
    // every atom of the graph takes part (neighbours, ghosts); energies are summed below
    // over the items only (atoms without edges of their own have constant energies)
    st = api->model_compute(model, n, model_types.data(), g_ne, g_index, g_vec, g_nt, g_trip,
                            nl, &e_unused, e_atom.data(), f_model.data(),
                            vflag_global ? w : nullptr, vflag_atom ? w_atom.data() : nullptr);
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
      st = aisci_ringlb_shared_graph(nf, fpoff, env, R.f_group.data(), cutoff_3body, &sa, &se,
                                     &stt, nullptr, nullptr, nullptr, nullptr);
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
    st = api->model_compute(model, sa, R.s_types.data(), se, R.s_index.data(), R.s_vec.data(),
                            stt, R.s_trip.data(), nf, &e_foreign, R.s_energy.data(),
                            R.s_forces.data(), nullptr, virial ? R.s_virial.data() : nullptr);
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

  // apply them as the model call would have: forces on i and its neighbours, the item's
  // virial (global; per atom: half on i, the neighbours' halves with their forces)
  for (int k = 0, entry = 0; k < nl; k++) {
    if (!R.sent[k]) continue;
    const double *r = &R.own_results[R.roff[k]];
    e_atom[k] = r[0];
    for (int d = 0; d < 3; d++) f_model[3 * (size_t) k + d] += r[1 + d];
    const double *p = r + 4;
    if (virial >= 1) {
      for (int v = 0; v < 9; v++) {
        if (vflag_global) w[v] += p[v];
        if (vflag_atom) w_atom[9 * (size_t) k + v] += 0.5 * p[v];
      }
      p += 9;
    }
    for (int64_t e = R.estart[k]; e < R.estart[k + 1]; e++) {
      if (!R.o_first[entry++]) continue;
      const int64_t j = neigh[e];
      for (int d = 0; d < 3; d++) f_model[3 * (size_t) j + d] += p[d];
      p += 3;
      if (virial == 2) {
        for (int v = 0; v < 9; v++) w_atom[9 * (size_t) j + v] += p[v];
        p += 9;
      }
    }
  }
  double etot = 0.0;
  for (int k = 0; k < nl; k++) etot += e_atom[k];
  *energy = etot;
  return AISCI_OK;
}
