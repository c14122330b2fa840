/* compute aisci/cost: per-atom work estimate of pair_style aisci (1 + edges + triplets of
 * each owned atom, weights adjustable) for LAMMPS's balance / fix balance ... weight var;
 * compute aisci/work (same class): the per-rank work (estimated cost, ring balance, model
 * CPU time) as a global vector and array. See docs/compute_aisci_cost.md. */
#ifndef AISCI_COMPUTE_AISCI_COST_H
#define AISCI_COMPUTE_AISCI_COST_H

#include "compute.h"

#include <string>
#include <vector>

extern "C" {
#include "aisci/graph.h"
}

namespace LAMMPS_NS {

class ComputeAisciCost : public Compute {
 public:
  ComputeAisciCost(class LAMMPS *, int, char **);
  ~ComputeAisciCost() override;
  void init() override;
  void compute_peratom() override;
  void compute_vector() override;
  void compute_array() override;
  double memory_usage() override;

 private:
  class PairAisci *find_pair(bool required);
  void count();     // per-atom costs at the current positions
  void gather();    // per-rank rows on every rank

  bool work;            // aisci/work (global outputs) rather than aisci/cost (per atom)
  std::string style;    // "compute aisci/cost" or "compute aisci/work", for messages
  double weight[3];     // per atom, per edge, per triplet
  int nmax;
  double *cost;    // per-atom output (nmax)
  aisci_graph *graph;
  std::vector<int> atom_index, in_group;    // graph atom -> row; group flag per local row
  std::vector<int64_t> types;               // model type per graph atom (unused)
  std::vector<double> pos, centre_cost;
  double rank_cost;    // sum of the costs of this rank's owned atoms in the group
  bigint gathered_step;
  std::vector<double> rows;    // nprocs x NCOL
};

}    // namespace LAMMPS_NS

#endif
