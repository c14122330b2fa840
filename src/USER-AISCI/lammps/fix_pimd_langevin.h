/* fix pimd/langevin (USER-AISCI): path-integral MD with the ring-polymer beads spread
 * over LAMMPS partitions (one or more beads per partition), normal-mode integration, the
 * PILE-L thermostat and BZP/MTTK barostats. Input-compatible with upstream LAMMPS's fix
 * of the same name; docs/fix_pimd_langevin.md describes it.
 * The physics lives in the C core: aisci/pimd_step.h runs the time step (splitting, COM
 * removal, cell, mode forces, output vector) over the partition's beads, aisci/pimd.h
 * has the kernels, aisci/beadcomm.h the exchanges. This class parses arguments, keeps the
 * per-atom bead slots, exchanges beads between partitions, calls LAMMPS (forces of extra
 * beads, computes, box) and turns statuses into LAMMPS errors.
 * fix_pimd_langevin.cpp: arguments, the time step (through the core), forces.
 * fix_pimd_langevin_atoms.cpp: per-atom storage, restart, masses, IDs and image shifts,
 * exchanges between partitions, extra beads' forces.
 * fix_pimd_langevin_output.cpp: measuring steps, the output vector, per-atom KE.
 * fix_pimd_langevin_neighbors.cpp: neighbor lists and ghost shell for several beads per
 * partition.
 * fix_pimd_langevin_checks.cpp: settings compared across partitions, refused fixes,
 * the group (atoms outside it are placed per bead by fix dplr), lost atoms.
 * On a group other than all, only the group's atoms are ring polymers: the core sees them
 * through an index list into the per-atom arrays (aisci_pimd_rows.index), the exchanges
 * carry only them, and the atoms outside the group (Wannier centroids) keep per-bead
 * positions that fix dplr sets before each bead's forces. */
#ifndef AISCI_FIX_PIMD_LANGEVIN_H
#define AISCI_FIX_PIMD_LANGEVIN_H

#include "fix.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "aisci/beadcomm.h"
#include "aisci/pimd.h"
#include "aisci/pimd_step.h"
}

namespace AISCI {
class RestartWatch;
}

namespace LAMMPS_NS {

class FixPIMDLangevinAisci : public Fix {
 public:
  FixPIMDLangevinAisci(class LAMMPS *, int, char **);
  ~FixPIMDLangevinAisci() override;
  int setmask() override;
  void init() override;
  void setup(int) override;
  void min_setup(int) override;
  void setup_pre_exchange() override;
  void pre_exchange() override;
  void initial_integrate(int) override;
  void post_force(int) override;
  void final_integrate() override;
  void end_of_step() override;
  void post_run() override;
  double compute_vector(int) override;
  void reset_dt() override;

  void write_restart(FILE *) override;
  void restart(char *) override;
  void grow_arrays(int) override;
  void copy_arrays(int, int, int) override;
  int pack_exchange(int, double *) override;
  int unpack_exchange(int, double *) override;
  int pack_restart(int, double *) override;
  void unpack_restart(int, int) override;
  int size_restart(int) override;
  int maxsize_restart() override;
  double memory_usage() override;

 private:
  enum Slot { Q, V, F, X };    // per-atom quantities of a local bead/mode

  aisci_pimd_config cfg;     // parsed keywords, unit factors filled in init()
  double temp, sp, lj[5];    // temperature, Planck scaling, lj epsilon sigma mass planck mvv2e
  int fixcom;
  int nbeads;          // P (all partitions together)
  int nlocal_beads;    // K beads (and modes) per partition
  int first_bead;      // global index of this partition's first bead/mode
  aisci_pimd *pimd;
  aisci_beadcomm *beadcomm;
  aisci_pimd_step *stepper;    // the core's time step over the local beads
  aisci_pimd_state state;      // noise counter and cell momenta (in restarts), cell virial
  int barostat_on;             // ensemble nph or npt
  double pext_user;            // external pressure (pressure units)

  // Per-atom storage of the local beads. LAMMPS's own arrays hold the bead whose forces
  // LAMMPS computes (atom->x, atom->v, atom->f, so one bead per partition needs no
  // copies); `ext` (migrating with the atoms, the restart record's per-atom values) holds
  // q of the K local modes and, for the other local beads, the mode velocity, mode force
  // and unwrapped Cartesian position. Which array holds what is decided in one place,
  // set_bead_rows(), as a table of row views that the accessors below index the same way
  // for every bead (fix_pimd_langevin_atoms.cpp).
  double **ext;
  int ext_width;
  // A row view: quantity s of local bead l for atom i is base[i * stride + 0..2]. Positions
  // are stored wrapped into the box (atom->x: `wrapped`) or unwrapped (the ext slots); the
  // accessors unwrap or wrap by the flag, never by the bead's index.
  struct BeadRows {
    double *base;
    int stride;
    bool wrapped;
  };
  std::vector<BeadRows> bead_rows;    // [s * K + l]: set where the arrays may move (grow)
  double **peratom;            // per-atom output: centroid x y z (unwrapped), centroid-virial
                               // KE, then x y z (unwrapped) of each of the K local beads
  int peratom_width;           // 4 + 3 K columns
  // beads_per_world > 1: the ghost shell and neighbor lists cover every local bead
  // (fix_pimd_langevin_neighbors.cpp)
  std::vector<double> xref;     // local first-bead positions at the last exchange
  std::vector<double> xlist;    // ... when the first bead's neighbor lists were built
  double ghost_margin;          // the ghost cutoff is widened by 2 x this (distance units)
  double margin_next;           // margin for this step's rebuild (< 0: unchanged)
  double cutghost_user;         // comm->cutghostuser before the fix widened it (< 0: no run)
  double ghost_base;            // ghost cutoff the styles need, to widen by 2 x margin
  std::vector<char> own_lists;  // per local bead: needs neighbor lists of its own this step
  bool lists_moved;             // a bead's own lists replaced the first bead's this step
  double spread_seen;           // ring-polymer width at the last rebuild (for the log)
  std::vector<double> buf_sync, buf_sync_global;    // sync_neighbor_builds' Allreduce

  // the ring-polymer atoms: every local atom (group all), or the group's (subset)
  bool subset;                 // the fix's group is not all
  std::vector<int> members;    // subset: local indices of the group's atoms, in order
  int nring;                   // local ring-polymer atoms (members.size() or nlocal)
  double ngroup;               // ring-polymer atoms in the system (the estimators' N)

  std::vector<double> mass, buf_mine, buf_all;    // mass, tags: per ring-polymer atom
  std::vector<double> buf_gathered, buf_peratom;    // per-step buffers kept between steps
  std::vector<int64_t> tags;
  bool atoms_declared;
  int declared_nlocal;    // atom->nlocal when the atoms were last declared

  std::string id_pe, id_press;
  class Compute *c_pe, *c_press;

  // checks the restart files LAMMPS writes (aisci_restart_watch.h)
  std::unique_ptr<AISCI::RestartWatch> restart_watch;

  // output vector, valid for the step est_step
  double est[AISCI_PIMD_MAXVALUES];
  bigint est_step;
  std::vector<aisci_pimd_bead_measure> measured;    // K: potential energy, diagonal virial
  std::vector<aisci_pimd_rows> rows_q, rows_v, rows_f, rows_x;

  int gbead(int l) const { return first_bead + l; }
  int ring_atom(int j) const { return subset ? members[j] : j; }    // j-th ring atom's index
  const int *row_index() const { return subset ? members.data() : nullptr; }
  void set_bead_rows();
  const BeadRows &rows_of(int l, Slot s) const { return bead_rows[(size_t) s * nlocal_beads + l]; }
  double *slot(int i, int l, Slot s)    // stored values of atom i, local bead l
  {
    const BeadRows &r = rows_of(l, s);
    return r.base + (size_t) i * r.stride;
  }
  aisci_pimd_rows core_rows(int l, Slot s) const;    // for the core: the ring atoms' rows
  void put_slot(int l, Slot s, const std::vector<double> &in);
  void local_value(int i, int l, Slot s, double *out);    // unwrapped positions
  void wrapped_position(int i, int l, double *out);       // positions as LAMMPS keeps atom->x
  void set_position(int i, int l, const double *unwrapped);
  void gather_all(Slot s, std::vector<double> &out, const bool *measure = nullptr);
  void build_masses();
  void declare_atoms();
  aisci_pimd_local local_view();
  aisci_pimd_rows centroid_rows();
  double volume() const;
  void update_positions();
  void transform_forces(bool measure);
  void measure_bead(int l, bool energy);
  void extra_bead_forces(int vflag, bool virial, bool energy);
  void sync_neighbor_builds();
  double margin_for(double spread) const;
  void set_ghost_margin(double margin);
  void restore_ghost_cutoff();
  void bead_distances(const std::vector<double> &ref_a, const std::vector<double> &ref_b,
                      double *spread, double *from_a, double *from_b);
  void widen_shell(double margin, double spread);
  void setup_bead_lists();
  void lists_for_bead(int l);
  void lists_for_first_bead();
  void compute_estimators();
  void schedule_estimators(bool use_output);
  void scale_box(const double *factor);
  void image_shift(int i, double *shift) const;
  void store_bead_positions();
  void store_outside_positions(int l);
  void scale_outside(const double *factor);
  void store_peratom_kinetic(const std::vector<double> &share);
  bool measure_step() const;
  void fail(aisci_status st);
  void check_partitions();
  // seconds the first collective over all partitions waits (AISCI_PIMD_SYNC_TIMEOUT)
  double sync_timeout();
  void check_fixes();
  void check_group();
  [[noreturn]] void exchange_failed(aisci_status st);
};

}    // namespace LAMMPS_NS

#endif
