/* compute aisci/cost: see compute_aisci_cost.h and docs/compute_aisci_cost.md.
 *
 * The per-atom cost is counted on a graph of its own (the C core's cell list over the
 * local and ghost atoms of the types pair_style aisci maps, centres = the owned atoms
 * of the group) at the current positions, with the model's cutoffs, and weighted by
 * aisci_graph_centre_cost: the same definition as the ring balancer's item cost. It
 * therefore needs no pair computation on the current step, which is what LAMMPS's
 * balancers need: fix balance evaluates its weight variable in pre_exchange. */
#include "compute_aisci_cost.h"

#include "aisci_lmp.h"
#include "pair_aisci.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "force.h"
#include "memory.h"
#include "update.h"

#include <algorithm>
#include <mpi.h>

extern "C" {
#include "aisci/graph.h"
}

using namespace LAMMPS_NS;

// columns of the per-rank rows (the first NARRAY are the global array)
enum { C_COST, C_AFTER, C_CPU, C_WALL, C_EXCHANGE, C_STEPS, C_SENT, C_GRAPH, NCOL };
static const int NARRAY = 4;
static const int NVECTOR = 9;

/* compute ID group aisci/cost [atom A] [edge B] [triplet C]
 * compute ID group aisci/work [atom A] [edge B] [triplet C] */
ComputeAisciCost::ComputeAisciCost(LAMMPS *lmp, int narg, char **arg) :
    Compute(lmp, narg, arg), work(std::string(arg[2]) == "aisci/work"),
    style(std::string("compute ") + arg[2]), weight{1.0, 1.0, 1.0}, nmax(0), cost(nullptr),
    graph(nullptr), rank_cost(0.0), gathered_step(-1)
{
  int iarg = 3;
  while (iarg < narg) {
    const std::string key = arg[iarg];
    int k = key == "atom" ? 0 : key == "edge" ? 1 : key == "triplet" ? 2 : -1;
    if (k < 0)
      error->all(FLERR, style + ": unknown keyword '" + key + "' (expected atom, edge or triplet)");
    AISCI::need_values(lmp, style, iarg, narg, arg, 1);
    weight[k] = AISCI::parse_double(lmp, style, key, arg[iarg + 1]);
    if (weight[k] < 0.0)
      error->all(FLERR,
                 style + ": " + key + " weight must be >= 0, got " + std::string(arg[iarg + 1]));
    iarg += 2;
  }
  if (weight[0] + weight[1] + weight[2] <= 0.0)
    error->all(FLERR, style + ": the atom, edge and triplet weights are all 0");

  // aisci/cost: the per-atom cost; aisci/work: the per-rank work as a global vector and
  // array (one compute cannot be both: an atom-style variable would take c_ID for the
  // global vector)
  if (!work) {
    peratom_flag = 1;
    size_peratom_cols = 0;
  } else {
    vector_flag = 1;
    size_vector = NVECTOR;
    extvector = 0;
    array_flag = 1;
    size_array_rows = comm->nprocs;
    size_array_cols = NARRAY;
    extarray = 0;
    vector = new double[NVECTOR];
    memory->create(array, comm->nprocs, NARRAY, "aisci/work:array");
  }
  aisci_status st = aisci_graph_create(&graph);
  if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);
}

ComputeAisciCost::~ComputeAisciCost()
{
  delete[] vector;
  if (array) memory->destroy(array);
  memory->destroy(cost);
  aisci_graph_destroy(graph);
}

PairAisci *ComputeAisciCost::find_pair(bool required)
{
  PairAisci *pair = AISCI::find_aisci_pair(lmp);
  if (!pair && required)
    error->all(FLERR, style + " requires pair_style aisci (alone or in a hybrid style)");
  return pair;
}

void ComputeAisciCost::init()
{
  find_pair(true);
  gathered_step = -1;
}

void ComputeAisciCost::count()
{
  // no caching by step: LAMMPS's balancers may move atoms between two calls on one step
  // (fix balance in setup_pre_exchange, then output); the callers skip repeated calls
  PairAisci *pair = find_pair(true);
  if (!pair->has_model() || pair->model_type_map().empty())
    error->all(FLERR, style + ": pair_style aisci has no model yet (pair_coeff)");
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost;
  if (atom->nmax > nmax) {
    memory->destroy(cost);
    nmax = atom->nmax;
    memory->create(cost, nmax, "aisci/cost:cost");
    if (!work) vector_atom = cost;
  }
  std::fill(cost, cost + nmax, 0.0);

  // centres first: owned atoms of the group with a mapped type; then every other
  // mapped atom (owned outside the group, ghosts) as a possible neighbour
  in_group.resize(nlocal);
  for (int i = 0; i < nlocal; i++) in_group[i] = (atom->mask[i] & groupbit) != 0;
  atom_index.resize(nall);
  types.resize(nall);
  pos.resize(3 * (size_t) nall);
  int n = 0, ncentre = 0;
  aisci_status st =
      aisci_graph_gather(nlocal, nall, atom->type, atom->ntypes, pair->model_type_map().data(),
                         nullptr, in_group.data(), atom->x ? atom->x[0] : nullptr,
                         atom_index.data(), types.data(), pos.data(), &n, &ncentre);
  if (st != AISCI_OK) AISCI::fail_one(lmp, style, st);
  st = aisci_graph_build(graph, n, pos.data(), ncentre, pair->model_cutoff(), 0.0);
  if (st != AISCI_OK) AISCI::fail_one(lmp, style, st);
  centre_cost.resize(ncentre + 1);
  st = aisci_graph_centre_cost(ncentre, aisci_graph_num_edges(graph), aisci_graph_edge_index(graph),
                               aisci_graph_edge_vec(graph), pair->model_cutoff_3body(), weight,
                               centre_cost.data());
  if (st != AISCI_OK) AISCI::fail_one(lmp, style, st);
  rank_cost = 0.0;
  for (int c = 0; c < ncentre; c++) {
    cost[atom_index[c]] = centre_cost[c];
    rank_cost += centre_cost[c];
  }
}

void ComputeAisciCost::compute_peratom()
{
  invoked_peratom = update->ntimestep;
  count();
}

/* Every rank's row: estimated cost, cost after the ring, model times, steps, items sent. */
void ComputeAisciCost::gather()
{
  if (gathered_step == update->ntimestep && gathered_step >= 0) return;
  count();
  const PairAisci::WorkStats w = find_pair(true)->work_stats();
  double row[NCOL];
  row[C_COST] = rank_cost;
  row[C_AFTER] = w.ring ? w.cost_after : rank_cost;
  row[C_CPU] = w.model_cpu;
  row[C_WALL] = w.model_wall;
  row[C_EXCHANGE] = w.exchange_wall;
  row[C_STEPS] = (double) w.steps;
  row[C_SENT] = (double) w.n_sent;
  // the whole graph of the pair style's last evaluation (ghost centres included, which
  // multi-layer models evaluate too): atoms + edges + triplets
  row[C_GRAPH] = find_pair(true)->graph_size();
  rows.resize((size_t) NCOL * comm->nprocs);
  MPI_Allgather(row, NCOL, MPI_DOUBLE, rows.data(), NCOL, MPI_DOUBLE, world);
  gathered_step = update->ntimestep;
}

void ComputeAisciCost::compute_array()
{
  invoked_array = update->ntimestep;
  gather();
  for (int r = 0; r < comm->nprocs; r++)
    for (int c = 0; c < NARRAY; c++) array[r][c] = rows[(size_t) NCOL * r + c];
}

/* [1] cost max/mean, [2] after the ring, [3] model CPU time max/mean, [4] its max (s),
 * [5] its mean (s), [6] model steps, [7] atoms computed on another rank, [8] largest ring
 * exchange wall time (s), [9] size of the pair style's last graph (atoms + edges +
 * triplets, ghost centres included) max/mean. A ratio is 1 when there is no work. */
void ComputeAisciCost::compute_vector()
{
  invoked_vector = update->ntimestep;
  gather();
  const int np = comm->nprocs;
  double mx[NCOL], sum[NCOL];
  for (int c = 0; c < NCOL; c++) {
    mx[c] = 0.0;
    sum[c] = 0.0;
    for (int r = 0; r < np; r++) {
      mx[c] = std::max(mx[c], rows[(size_t) NCOL * r + c]);
      sum[c] += rows[(size_t) NCOL * r + c];
    }
  }
  auto ratio = [np](double m, double s) {
    return s > 0.0 ? m / (s / np) : 1.0;
  };
  vector[0] = ratio(mx[C_COST], sum[C_COST]);
  vector[1] = ratio(mx[C_AFTER], sum[C_AFTER]);
  vector[2] = ratio(mx[C_CPU], sum[C_CPU]);
  vector[3] = mx[C_CPU];
  vector[4] = sum[C_CPU] / np;
  vector[5] = mx[C_STEPS];
  vector[6] = sum[C_SENT];
  vector[7] = mx[C_EXCHANGE];
  vector[8] = ratio(mx[C_GRAPH], sum[C_GRAPH]);
}

double ComputeAisciCost::memory_usage()
{
  return sizeof(double) *
      ((double) nmax + pos.capacity() + centre_cost.capacity() + rows.capacity()) +
      sizeof(int) * (double) (atom_index.capacity() + in_group.capacity()) +
      sizeof(int64_t) * (double) types.capacity() +
      (double) aisci_graph_num_edges(graph) * (2 * sizeof(int64_t) + 3 * sizeof(double));
}

AISCI_REGISTER_COMPUTE("aisci/cost", LAMMPS_NS::ComputeAisciCost,
                       "per-atom work estimate of pair_style aisci (balance weights)");
AISCI_REGISTER_COMPUTE("aisci/work", LAMMPS_NS::ComputeAisciCost,
                       "per-rank work of pair_style aisci (cost, ring, model time)");
