/* fix dplr (fix_dplr.cpp): the WCs and the DW graph of this rank. After a neighbor-list
 * rebuild, the parent of every local WC from the bonds (map_wcs) and the candidate edges
 * of the DW graph (build_candidates); every step, the edges within the cutoff
 * (select_edges) and each WC placed at its parent + d (place_wcs). Steps 1 and 4 of
 * fix_dplr.cpp's comment; the algorithms are the core's (aisci/dplr.h, aisci/graph.h). */
#include "fix_dplr.h"

#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "neighbor.h"

#include <string>
#include <vector>

extern "C" {
#include "aisci/dplr.h"
}

using namespace LAMMPS_NS;

static const std::string STYLE = "fix dplr";

namespace {
std::string str(long v)
{
  return std::to_string(v);
}
}    // namespace

/* Parent of every local WC from the bonds of type B. A bond is stored with one of its
 * atoms (newton_bond on) or both (off), so each side records what it sees: at the WC
 * the parent's ID and a bond count, at the parent a WC count; the counts of ghost atoms
 * go to their owners by reverse communication, and each WC must end with exactly one
 * bond, each parent with exactly one WC. */
void FixDplr::map_wcs()
{
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost;
  const std::vector<int64_t> tag(atom->tag, atom->tag + nall);
  // the bonds of the WC bond types stored here (atom, its partner's closest image), up
  // to the first partner missing on this rank (reported after the bonds before it)
  std::vector<int> bonds;
  int missing_at = -1, missing_k = -1;
  for (int i = 0; i < nlocal && missing_at < 0; i++) {
    for (int k = 0; k < atom->num_bond[i]; k++) {
      const int bt = atom->bond_type[i][k];    // < 0: switched off (e.g. by fix shake)
      if (bt < 1 || bt >= (int) wc_bond.size() || !wc_bond[bt]) continue;
      const int j = atom->map(atom->bond_atom[i][k]);
      if (j < 0) {
        missing_at = i;
        missing_k = k;
        break;
      }
      bonds.insert(bonds.end(), {i, domain->closest_image(i, j)});
    }
  }
  buf.assign(3 * (size_t) nall, 0.0);
  aisci_status st = aisci_dplr_count_bonds((int) bonds.size() / 2, bonds.data(), nall, atom->type,
                                           tag.data(), atom->ntypes, wc_parent_type.data(),
                                           force->newton_bond == 0, bond_names.c_str(), buf.data());
  if (st != AISCI_OK) AISCI::error_one(lmp, FLERR, STYLE + ": " + aisci_last_error());
  if (missing_at >= 0)
    AISCI::error_one(lmp, FLERR,
               STYLE + ": atom ID " + str((long) atom->bond_atom[missing_at][missing_k]) +
                   ", bonded to atom ID " + str((long) tag[missing_at]) + " by bond type " +
                   bond_names + ", is missing on this rank");
  comm_mode = MAP;
  AISCI::reverse_comm_fix(comm, this, 3);
  int n_wc = 0;
  wc_local.resize(nlocal);
  wc_parent.resize(nlocal);
  st = aisci_dplr_list_wcs(nlocal, atom->type, tag.data(), atom->ntypes, wc_of_parent.data(),
                           wc_parent_type.data(), buf.data(), bond_names.c_str(), wc_local.data(),
                           wc_parent.data(), &n_wc);
  if (st != AISCI_OK) AISCI::error_one(lmp, FLERR, STYLE + ": " + aisci_last_error());
  wc_local.resize(n_wc);
  wc_parent.resize(n_wc);
}

/* Graph atoms (local parents first, aisci_dplr_graph_atoms) and candidate edges within
 * cutoff + skin, valid until the next rebuild (atoms move < skin/2). */
void FixDplr::build_candidates()
{
  const int nall = atom->nlocal + atom->nghost;
  int n = 0;
  atom_index.resize(nall);
  model_types.resize(nall);
  pos.resize(3 * (size_t) nall);
  aisci_status st =
      aisci_dplr_graph_atoms(atom->nlocal, nall, atom->type, atom->ntypes, wc_of_parent.data(),
                             type_map.data(), atom->x ? atom->x[0] : nullptr, atom_index.data(),
                             model_types.data(), pos.data(), &n, &n_centres);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  atom_index.resize(n);
  model_types.resize(n);
  pos.resize(3 * (size_t) n);
  st = aisci_graph_build(graph, n, pos.data(), n_centres, dw_cutoff + neighbor->skin, 0.0);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  nall_built = nall;
  ncalls_built = neighbor->ncalls;
}

/* Edges shorter than the cutoff at the current positions, in the candidates' order. */
void FixDplr::select_edges()
{
  aisci_status st =
      aisci_graph_select(edges, graph, atom->nlocal + atom->nghost, atom->x ? atom->x[0] : nullptr,
                         atom_index.data(), nullptr, dw_cutoff, 0.0);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
}

/* Each local WC at x_p + d_p, p the image of its parent closest to the WC. */
void FixDplr::place_wcs()
{
  ibuf.resize(wc_local.size());
  for (size_t w = 0; w < wc_local.size(); w++) {
    const int i = wc_local[w];
    const int j = atom->map((tagint) wc_parent[w]);
    if (j < 0)
      AISCI::error_one(lmp, FLERR,
                 STYLE + ": the parent (atom ID " + str((long) wc_parent[w]) + ") of WC atom ID " +
                     str((long) atom->tag[i]) + " is missing on this rank");
    ibuf[w] = domain->closest_image(i, j);
  }
  aisci_status st =
      aisci_dplr_place((int) wc_local.size(), atom->nlocal + atom->nghost, wc_local.data(),
                       ibuf.data(), dvec.data(), atom->x ? atom->x[0] : nullptr);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
}
