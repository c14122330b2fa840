/* pair_style aisci, keyword balance ring: ring load balancing of the per-atom network
 * work for one-cutoff models (num_layers = 1). See docs/ringlb.md and docs/pair_aisci.md.
 *
 * Translation only: the C core runs the whole balanced evaluation (aisci_ringlb_evaluate,
 * aisci/ringlb.h): after every rebuild of the candidate graph (graph_builds changes) it
 * plans where each owned atom of a mapped type is computed (cost 1 + edges + triplets);
 * every step it moves the environments of the atoms computed elsewhere, calls the model
 * back on the kept atoms' graph and on the foreign atoms' shared-neighbour graph, returns
 * the results to their owners and applies them. This file creates the balancer, forwards
 * the model callback to the torch wrapper, logs the plan statistics and reports them.
 * The outputs are the arrays the plain model call fills (e_atom, f_model, w_atom, energy,
 * virial), so compute() scatters them unchanged. */
#include "pair_aisci.h"

#include "aisci_lmp.h"

#include "comm.h"
#include "error.h"

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
  bool log_next = true;    // log the statistics of the first plan after init
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
  delete ring;
  ring = nullptr;
}

/* init_style(): reset the work statistics; create a fresh ring balancer, or drop it. */
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
  // a fresh balancer per run: its plan, statistics and timers start from zero
  ring_free();
  ring = new PairAisciRing;
  ring->tolerance = ring_tolerance;
  aisci_ringlb_config cfg = aisci_ringlb_config_default();
  cfg.tolerance = ring_tolerance;
  aisci_status st = aisci_ringlb_create(&cfg, world, &ring->lb);
  if (st != AISCI_OK) {
    ring_free();
    AISCI::fail_all(lmp, STYLE + ": balance ring", st);
  }
}

PairAisci::WorkStats PairAisci::work_stats() const
{
  WorkStats s{};
  s.ring = ring != nullptr;
  if (ring) {
    aisci_ringlb_stats st{};
    aisci_ringlb_get_stats(ring->lb, &st);
    s.cost_before = st.cost_before;
    s.cost_after = st.cost_after;
    const double mean = st.mean_cost;
    s.max_ratio_before = mean > 0.0 ? st.max_cost_before / mean : 1.0;
    s.max_ratio_after = mean > 0.0 ? st.max_cost_after / mean : 1.0;
    s.n_sent = st.n_sent;
    s.n_sent_all = (long) st.n_sent_all;
    s.model_cpu = st.model_cpu;
    s.model_wall = st.model_wall;
    s.exchange_wall = st.exchange_wall;
    s.steps = (long) st.n_evaluations;
  } else {
    s.model_cpu = work_cpu;
    s.model_wall = work_wall;
    s.steps = work_steps;
  }
  return s;
}

/* The model callback of aisci_ringlb_evaluate: the torch wrapper's aisci_model_compute. */
aisci_status PairAisci::ring_model(void *self, int64_t n_atoms, const int64_t *types,
                                   int64_t n_edges, const int64_t *edge_index,
                                   const double *edge_vec, int64_t n_triplets,
                                   const int64_t *triplets, int64_t n_energy_atoms, double *energy,
                                   double *per_atom_energy, double *forces, double *virial,
                                   double *per_atom_virial)
{
  const PairAisci *pair = static_cast<const PairAisci *>(self);
  return pair->api->model_compute(pair->model, n_atoms, types, n_edges, edge_index, edge_vec,
                                  n_triplets, triplets, n_energy_atoms, energy, per_atom_energy,
                                  forces, virial, per_atom_virial);
}

aisci_status PairAisci::ring_compute(double *energy, double *w)
{
  PairAisciRing &R = *ring;
  // e_atom always: the energy is the sum of the owned atoms' energies
  aisci_status st = aisci_ringlb_evaluate(
      R.lb, edges, graph_builds, (int) atom_index.size(), n_local, model_types.data(), cutoff_3body,
      &PairAisci::ring_model, this, energy, e_atom.data(), f_model.data(),
      vflag_global ? w : nullptr, vflag_atom ? w_atom.data() : nullptr);
  // every rank gets the error (the message of the rank where it arose, see aisci/ringlb.h)
  if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE + ": balance ring", st);

  aisci_ringlb_stats s{};
  aisci_ringlb_get_stats(R.lb, &s);
  if (R.log_next && s.n_plans > 0) {
    if (comm->me == 0) {
      const double mean = s.mean_cost > 0.0 ? s.mean_cost : 1.0;
      char line[512];
      std::snprintf(line, sizeof line,
                    "%s: balance ring: %d ranks, cost (1 + edges + triplets) max/mean %.4f "
                    "-> %.4f (tolerance %g)%s, %ld atoms computed on another rank (%ld "
                    "passed on), hop rounds %d forward %d backward\n",
                    STYLE.c_str(), s.nranks, s.max_cost_before / mean, s.max_cost_after / mean,
                    R.tolerance, s.balanced ? ", within tolerance: nothing moves" : "",
                    (long) s.n_sent_all, (long) s.n_forwarded_all, s.rounds_forward,
                    s.rounds_backward);
      utils::logmesg(lmp, std::string(line));
    }
    R.log_next = false;
  }
  return AISCI_OK;
}
