/* kspace_style pppm/aisci: PPPM electrostatics through the USER-AISCI C core
 * (include/aisci/pppm.h, docs/pppm_core.md). A thin adapter: kspace_modify settings
 * into aisci_pppm_config, atoms in, forces/energy/virial out. The three steps of the
 * core (spread, solve, interpolate) are separate methods so that kspace_style pppm/dplr
 * (kspace_pppm_dplr.h) can run the solve on another thread. */
#ifndef AISCI_KSPACE_PPPM_AISCI_H
#define AISCI_KSPACE_PPPM_AISCI_H

#include "kspace.h"

#include <string>
#include <vector>

extern "C" {
#include "aisci/pppm.h"
}

namespace LAMMPS_NS {

class PPPMAisci : public KSpace {
 public:
  PPPMAisci(class LAMMPS *);
  ~PPPMAisci() override;

  void settings(int, char **) override;
  void init() override;
  void setup() override;
  void compute(int, int) override;
  double memory_usage() override;

 protected:
  void current_box(double box[3][3]) const;
  // the Ewald/Gaussian parameters of cfg (g_ewald, beta, cutoff): pppm/aisci takes
  // kspace_modify gewald or the Coulomb cutoff of the pair style; pppm/dplr overrides
  virtual void configure(aisci_pppm_config &cfg);
  // step 1: pack the charged local atoms, pass the current cell, spread (collective)
  void spread_local();
  // step 3: interpolate onto the packed atoms, add to atom->f, and store the global
  // energy (with the self and background terms) and virial from the solve's ek and vir
  void finish_local(double ek, const double vir[6]);

  std::string style;          // "kspace_style pppm/aisci", for messages
  std::string banner;         // first line of the log banner at init
  aisci_pppm *pppm;
  std::vector<int> index;     // local atoms with q != 0 (the only ones spread)
  std::vector<double> xbuf, qbuf, fbuf;    // their positions (from boxlo), charges, forces
};

}    // namespace LAMMPS_NS

#endif
