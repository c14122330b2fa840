/* fix dplr (USER-AISCI): Wannier centroids of Deep Potential Long-Range (DPLR).
 * Every step, before the forces, the DW model predicts for each parent atom the
 * displacement d of its Wannier centroid (WC), an atom of its own type bonded to the
 * parent, which is placed at x_parent + d; after the forces, the force on each WC goes
 * to its parent, plus the DW model's Jacobian term (one vector-Jacobian product), with
 * the matching virial. Optional uniform electric field on all charges. See
 * docs/fix_dplr.md. */
#ifndef AISCI_FIX_DPLR_H
#define AISCI_FIX_DPLR_H

#include "fix.h"

#include <cstdint>
#include <string>
#include <vector>

#include "aisci_torch_loader.h"

extern "C" {
#include "aisci/graph.h"
}

namespace LAMMPS_NS {

class FixDplr : public Fix {
 public:
  FixDplr(class LAMMPS *, int, char **);
  ~FixDplr() override;
  int setmask() override;
  void init() override;
  void setup_pre_force(int) override;
  void pre_force(int) override;
  void setup(int) override;
  void post_force(int) override;
  void min_setup(int) override;
  void min_pre_force(int) override;
  void min_post_force(int) override;
  double compute_scalar() override;
  int pack_forward_comm(int, int *, double *, int, int *) override;
  void unpack_forward_comm(int, int, double *) override;
  int pack_reverse_comm(int, int, double *) override;
  void unpack_reverse_comm(int, int *, double *) override;
  double memory_usage() override;

  // For fix pimd/langevin on a group of nuclei: the atom types this fix places (its WC
  // types, 1..ntypes), which may stay outside the ring-polymer group.
  bool places_type(int type) const
  {
    return type > 0 && type < (int) wc_parent_type.size() && wc_parent_type[type] != 0;
  }
  // FNV-1a 64 of the DW model file's bytes (read once at load), for fix pimd/langevin's
  // comparison of partitions.
  uint64_t model_file_hash() const { return model_hash; }

 private:
  // settings
  std::string model_file;
  uint64_t model_hash = 0;            // FNV-1a 64 of model_file's bytes
  std::vector<int> wc_parent_type;    // per LAMMPS type: parent type of a WC type, else 0
  std::vector<int> wc_of_parent;      // per LAMMPS type: WC type of a parent type, else 0
  std::vector<char> wc_bond;          // per bond type: 1 if it joins a WC to its parent
  std::string bond_names;             // those bond types, "2" or "2 or 3" (messages)
  bool efield_on;
  double efield[3];                     // V/Angstrom
  std::string efield_var[3];            // equal-style variable of a component, or empty
  int efield_ivar[3];                   // its index (init)
  std::vector<std::string> elements;    // element per LAMMPS type (keyword elements), or empty
  int nthreads;
  bool jacobian;    // keyword jacobian (testing): the DW Jacobian term

  // DW model
  const AISCI::TorchApi *api;
  aisci_model *model;
  double dw_cutoff;             // Angstrom
  std::vector<int> type_map;    // LAMMPS type -> DW model type, -1 if not in the model

  // Between neighbor-list rebuilds: the WCs and parents of this rank and the DW graph.
  bool rebuild;
  int nall_built;
  bigint ncalls_built;    // neighbor->ncalls when the candidates were built
  std::vector<int> wc_local;         // local WC atoms
  std::vector<int64_t> wc_parent;    // their parents' atom IDs
  aisci_graph *graph;                // candidate edges within dw_cutoff + skin
  int n_centres;                     // graph atoms 0..n_centres-1: local parents
  std::vector<int> atom_index;       // LAMMPS index of each graph atom
  std::vector<int64_t> model_types;
  std::vector<double> pos;    // graph atom positions at the rebuild
  // Every step
  aisci_graph *edges;                        // edges within dw_cutoff now (aisci_graph_select)
  std::vector<double> dvec;                  // nall x 3: d of each parent (forward-communicated)
  std::vector<double> buf;                   // nall x stride: communicated per-atom values
  std::vector<double> dw_out, grad, f_dw;    // graph atoms x 3
  std::vector<double> xbuf, qbuf;            // efield: unwrapped positions, charges
  std::vector<int> ibuf;                     // parent image of each local WC; efield atoms
  // what pack/unpack move (fix_dplr_comm.cpp): bond counts (reverse), d (forward), WC
  // positions (forward), WC and DW-Jacobian forces (reverse)
  enum CommMode { MAP, DVEC, XWC, FORCE };
  int comm_mode;
  double energy_local;    // field energy of this rank's charges

  static aisci_status model_type_index(void *fix, const char *element, int *index);
  // fix_dplr_wcs.cpp
  void map_wcs();
  void build_candidates();
  void select_edges();
  void place_wcs();
  // fix_dplr.cpp
  void apply_efield(double w9[9]);
  void transfer_forces(double w9[9]);
};

}    // namespace LAMMPS_NS

#endif
