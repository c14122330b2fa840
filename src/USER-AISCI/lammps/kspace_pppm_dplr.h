/* kspace_style pppm/dplr: electrostatics of DPLR (docs/kspace_pppm_dplr.md). Gaussian
 * charges of width beta = kspace_modify gewald through the core PPPM with no real-space
 * part; optionally the Poisson solve runs on a second thread while the short-range pair
 * style runs (fix dplr starts it after placing the Wannier centroids). */
#ifndef AISCI_KSPACE_PPPM_DPLR_H
#define AISCI_KSPACE_PPPM_DPLR_H

#include "kspace_pppm_aisci.h"

#include <string>
#include <thread>

namespace LAMMPS_NS {

class PPPMDplr : public PPPMAisci {
 public:
  PPPMDplr(class LAMMPS *);
  ~PPPMDplr() override;

  void settings(int, char **) override;
  void init() override;
  void compute(int, int) override;

  /* Called by fix dplr at the end of its pre_force (all ranks): charges to the mesh on
   * this thread, then the FFT/Poisson solve on a second thread; compute() joins it.
   * Node layout: only the node's solver rank starts the thread (it solves for the whole
   * node); the other ranks hand their patches to it and collect the field in compute().
   * Does nothing when overlap is off or kspace compute is switched off. */
  void start_overlap();
  /* Whether start_overlap() launches the solve thread in this run. */
  bool overlap_active() const { return overlap_on; }

 protected:
  void configure(aisci_pppm_config &cfg) override;
  void join_solve();
  // error if charged atoms of NULL-mapped types (WCs) exist but no fix dplr places them
  void check_wcs_placed(const class PairAisci &sr);

  // warn when the solve thread has no core of its own (affinity, ranks per node)
  void check_cores();

  bool overlap_requested;    // overlap yes|no (default yes)
  int layout;                // AISCI_PPPM_LAYOUT_RANK or _NODE (layout rank|node)
  bool solver_here;          // this rank runs the grid work (its thread when overlapping)
  bool handed_off;           // node layout, not a solver: patches handed to the solver
  bool overlap_on;           // requested and MPI_THREAD_MULTIPLE available
  bool pending;              // a solve thread was started and not yet joined
  bool warned_no_beta;       // the missing-dplr_beta warning was given (once per style)
  std::thread solver;
  aisci_status solve_status;
  std::string solve_error;    // the solve thread's aisci_last_error() on failure
  double solve_energy, solve_virial[6];
};

}    // namespace LAMMPS_NS

#endif
