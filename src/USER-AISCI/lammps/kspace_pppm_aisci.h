/* kspace_style pppm/aisci: PPPM electrostatics through the USER-AISCI C core
 * (include/aisci/pppm.h, docs/pppm_core.md). A thin adapter: kspace_modify settings
 * into aisci_pppm_config, atoms in, forces/energy/virial out. */
#ifndef AISCI_KSPACE_PPPM_AISCI_H
#define AISCI_KSPACE_PPPM_AISCI_H

#include "kspace.h"

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

  aisci_pppm *pppm;
  std::vector<double> xbuf, qbuf, fbuf;    // nlocal x 3 positions (from boxlo), charges, forces
};

}    // namespace LAMMPS_NS

#endif
