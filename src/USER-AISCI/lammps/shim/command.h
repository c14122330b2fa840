/* Declaration of LAMMPS's Command base class (29Sep2021 ABI): the header is not shipped
 * by liblammps-dev. A command style derives from it and is created by Input::command_map. */
#ifndef AISCI_LMP_COMMAND_H
#define AISCI_LMP_COMMAND_H

#include "pointers.h"

namespace LAMMPS_NS {
class Command : protected Pointers {
 public:
  Command(class LAMMPS *lmp) : Pointers(lmp) {}
  virtual void command(int, char **) = 0;
};
}    // namespace LAMMPS_NS

#endif
