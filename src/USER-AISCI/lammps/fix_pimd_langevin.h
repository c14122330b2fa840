/* fix pimd/langevin (USER-AISCI): path-integral MD with the ring-polymer beads spread
 * over LAMMPS partitions (one or more beads per partition), normal-mode integration, the
 * PILE-L thermostat and BZP/MTTK barostats. Input-compatible with upstream LAMMPS's fix
 * of the same name; docs/fix_pimd_langevin.md describes it.
 * The physics lives in the C core (aisci/pimd.h, aisci/beadcomm.h); this class parses
 * arguments, moves LAMMPS arrays in and out and turns statuses into LAMMPS errors.
 * fix_pimd_langevin.cpp: arguments, time step, estimators.
 * fix_pimd_langevin_atoms.cpp: per-atom storage, restart, masses, IDs and image shifts,
 * exchanges between partitions, extra beads' forces.
 * fix_pimd_langevin_checks.cpp: settings compared across partitions, refused fixes,
 * lost atoms. */
#ifndef AISCI_FIX_PIMD_LANGEVIN_H
#define AISCI_FIX_PIMD_LANGEVIN_H

#include "fix.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "aisci/beadcomm.h"
#include "aisci/pimd.h"
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
  void initial_integrate(int) override;
  void post_force(int) override;
  void final_integrate() override;
  void end_of_step() override;
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
  enum Slot { Q, V, F, X };       // per-atom quantities of a local bead/mode

  aisci_pimd_config cfg;          // parsed keywords, unit factors filled in init()
  double temp, sp, lj[5];         // temperature, Planck scaling, lj epsilon sigma mass planck mvv2e
  int fixcom;
  int nbeads;                     // P (all partitions together)
  int nlocal_beads;               // K beads (and modes) per partition
  int first_bead;                 // global index of this partition's first bead/mode
  aisci_pimd *pimd;
  aisci_beadcomm *beadcomm;
  uint64_t noise_counter;         // half-step counter of the thermostat noise (in restarts)
  int barostat_on;                // ensemble nph or npt
  double pext_user;               // external pressure (pressure units)
  aisci_pimd_cell cell;           // cell momenta (in restarts)
  double cell_vir_local[3];       // this rank's share of the centroid virial (last forces)

  // per-atom storage, migrating with the atoms: q of the K local modes, and for local
  // beads 1..K-1 the mode velocity, mode force and unwrapped Cartesian position
  // (local bead 0 uses atom->v, atom->f, atom->x)
  double **ext;
  int ext_width;
  double **peratom;               // per-atom output: centroid x y z (unwrapped), centroid-virial
                                  // KE, then x y z (unwrapped) of each of the K local beads
  int peratom_width;              // 4 + 3 K columns
  std::vector<double> xref;       // local bead-0 positions at the last neighbor build (K > 1)

  std::vector<double> mass, buf_mine, buf_all, buf_one;
  std::vector<int64_t> tags;
  bool atoms_declared;

  std::string id_pe, id_press;
  class Compute *c_pe, *c_press;

  // estimators, valid for the step est_step
  double est[AISCI_PIMD_NVALUES + 7];
  bigint est_step;
  std::vector<double> pe_bead, vir_bead;    // K values, K x 3 diagonal virial (energy units)
  std::vector<double> xf_bead, xcf_bead, spring_bead;

  int gbead(int l) const { return first_bead + l; }
  double *slot(int i, int l, Slot s);
  void get_slot(int l, Slot s, std::vector<double> &out);
  void put_slot(int l, Slot s, const std::vector<double> &in);
  void local_value(int i, int l, Slot s, double *out);
  void gather_all(Slot s, std::vector<double> &out, const bool *measure = nullptr);
  void build_masses();
  void declare_atoms();
  void o_step(double h);
  void b_step(double h);
  void a_step(double h);
  void update_positions();
  void transform_forces(bool measure);
  void measure_bead(int l, bool energy);
  void extra_bead_forces(int vflag, bool virial, bool energy);
  void sync_neighbor_builds();
  void remove_com_velocity();
  void compute_estimators();
  void schedule_estimators(bool use_output);
  void cell_kick(double h);
  void cell_noise(double h);
  void scale_box(const double *alpha, double h);
  void image_shift(int i, double *shift) const;
  void store_centroids(const double *mode0);
  void store_bead_positions();
  void store_peratom_kinetic(const std::vector<double> &share);
  bool measure_step() const;
  void fail(aisci_status st);
  void check_partitions();
  void check_fixes();
  [[noreturn]] void exchange_failed(aisci_status st);
};

}    // namespace LAMMPS_NS

#endif
