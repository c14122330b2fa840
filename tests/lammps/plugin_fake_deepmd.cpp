/* A stand-in for DeePMD-kit's LAMMPS plugin in tests/lammps/test_plugin_names.py: it
 * registers pair_style deepmd, fix dplr and kspace_style pppm/dplr, the three names that
 * DeePMD-kit's plugin (libdeepmd_lmp.so) registers, with the creators of LAMMPS's own
 * pair_style zero, fix nve and kspace_style ewald, so that a test can tell whose style an
 * input got without DeePMD-kit (whose plugin is built for another LAMMPS and MPI).
 * Built by the test against the LAMMPS it loads into (its installed headers). */

#include "force.h"
#include "lammps.h"
#include "modify.h"

using namespace LAMMPS_NS;

// LAMMPS's lammpsplugin.h (not among the headers LAMMPS installs)
extern "C" {
typedef void *(lammpsplugin_factory1)(void *);
typedef void *(lammpsplugin_factory2)(void *, int, char **);
typedef struct {
  const char *version;
  const char *style;
  const char *name;
  const char *info;
  const char *author;
  union {
    lammpsplugin_factory1 *v1;
    lammpsplugin_factory2 *v2;
  } creator;
  void *handle;
} lammpsplugin_t;
typedef void (*lammpsplugin_regfunc)(lammpsplugin_t *, void *);
}

extern "C" void lammpsplugin_init(void *lmp_ptr, void *handle, void *regfunc)
{
  auto lmp = (LAMMPS *) lmp_ptr;
  auto reg = (lammpsplugin_regfunc) regfunc;
  lammpsplugin_t p = {};
  p.version = lmp->version;
  p.author = "fake DeePMD-kit (USER-AISCI tests)";
  p.handle = handle;

  p.style = "pair";
  p.name = "deepmd";
  p.info = "fake pair_style deepmd (= pair_style zero)";
  p.creator.v1 = (lammpsplugin_factory1 *) (*lmp->force->pair_map)["zero"];
  (*reg)(&p, lmp);

  p.style = "fix";
  p.name = "dplr";
  p.info = "fake fix dplr (= fix nve)";
  p.creator.v2 = (lammpsplugin_factory2 *) (*lmp->modify->fix_map)["nve"];
  (*reg)(&p, lmp);

  p.style = "kspace";
  p.name = "pppm/dplr";
  p.info = "fake kspace_style pppm/dplr (= kspace_style ewald)";
  p.creator.v1 = (lammpsplugin_factory1 *) (*lmp->force->kspace_map)["ewald"];
  (*reg)(&p, lmp);
}
