/* pair_style aisci (pair_aisci.cpp): the graph of this rank. After a neighbor-list
 * rebuild, the atoms of mapped types and the candidate edges within cutoff + skin
 * (build_candidates); every step, the edges within the cutoff and their triplets at the
 * current positions and box (select_edges). The graph algorithms are the core's
 * (aisci/graph.h). */
#include "pair_aisci.h"

#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "neighbor.h"

#include <string>

using namespace LAMMPS_NS;

static const std::string STYLE = "pair_style aisci";

/* Gather the atoms of mapped types (aisci_graph_gather: local atoms first, so the first
 * n_local graph atoms are the ones whose energies this rank owns) and build, with the C
 * core's cell list, the candidate edges within cutoff + skin (centres: see below). Until
 * the next rebuild no atom moves more than skin/2, so every edge shorter than the cutoff
 * is among the candidates. */
void PairAisci::build_candidates()
{
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const int nrows = periodic ? nlocal : nall;
  int n = 0;
  atom_index.resize(nrows);
  model_types.resize(nrows);
  pos.resize(3 * (size_t) nrows);
  aisci_status st =
      aisci_graph_gather(nlocal, nrows, atom->type, atom->ntypes, type_map.data(), nullptr, nullptr,
                         atom->x ? atom->x[0] : nullptr, atom_index.data(), model_types.data(),
                         pos.data(), &n, &n_local);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  atom_index.resize(n);
  model_types.resize(n);
  pos.resize(3 * (size_t) n);
  const double rcut = cutoff + neighbor->skin;
  if (periodic) {
    // The graph keeps the integer image shift S of each edge (shift = S . cell), so that
    // the edge vectors follow the box if it changes between rebuilds (barostats, fix
    // deform): see select_edges().
    double cell[3][3];
    box_cell(cell);
    const int pbc[3] = {domain->xperiodic, domain->yperiodic, domain->zperiodic};
    st = aisci_graph_build_periodic(graph, n, pos.data(), cell, pbc, rcut, 0.0);
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  } else {
    // Centres: all atoms for message passing over several layers (a ghost's features
    // feed its neighbours); a one-cutoff model needs the owned atoms' edges only (the
    // ghosts' own edges would be work without effect on the owned energies); with ghost
    // exchange the ghosts' features come from their owners, so again the owned atoms only
    const bool owned_only = num_layers == 1 || exchange;
    st = aisci_graph_build(graph, n, pos.data(), owned_only ? n_local : n, rcut, 0.0);
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  }
  graph_valid = true;
  graph_builds++;
  nall_built = nall;
  ncalls_built = neighbor->ncalls;
}

/* Lattice vectors a, b, c as rows, from LAMMPS's shape matrix (Voigt order). */
void PairAisci::box_cell(double cell[3][3]) const
{
  const double *h = domain->h;
  const double c[3][3] = {{h[0], 0.0, 0.0}, {h[5], h[1], 0.0}, {h[4], h[3], h[2]}};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) cell[a][b] = c[a][b];
}

/* Edges shorter than the cutoff at the current positions (and, periodic, the current
 * box), in the candidates' order, and their triplets (aisci_graph_select): the same
 * graph a fresh cell-list build would give. */
void PairAisci::select_edges()
{
  double cell[3][3];
  if (periodic) box_cell(cell);
  aisci_status st =
      aisci_graph_select(edges, graph, periodic ? atom->nlocal : atom->nlocal + atom->nghost,
                         atom->x ? atom->x[0] : nullptr, atom_index.data(),
                         periodic ? cell : nullptr, cutoff, cutoff_3body);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
}

double PairAisci::graph_size() const
{
  return (double) atom_index.size() + (double) aisci_graph_num_edges(edges) +
      (double) aisci_graph_num_triplets(edges);
}
