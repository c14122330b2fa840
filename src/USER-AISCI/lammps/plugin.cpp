/* Plugin entry point for LAMMPS builds that have the PLUGIN package (`plugin load`).
 * The layout of the registration record follows LAMMPS's documented plugin interface
 * (lammpsplugin.h, not shipped by Debian): version, style kind, name, info, author,
 * creator, DSO handle. The plugin loader of this LAMMPS generation accepts pair, fix,
 * compute and command styles, so kspace styles are only reachable through lmp-aisci. */
#include "aisci_lmp.h"

#include "comm.h"
#include "lammps.h"
#include "utils.h"

#include <string>

#include <cstring>

extern "C" {
typedef void *(aisci_plugin_factory1)(void *);
typedef void *(aisci_plugin_factory2)(void *, int, char **);
typedef struct {
  const char *version;
  const char *style;
  const char *name;
  const char *info;
  const char *author;
  union {
    aisci_plugin_factory1 *v1;
    aisci_plugin_factory2 *v2;
  } creator;
  void *handle;
} aisci_plugin_t;
typedef void (*aisci_plugin_regfunc)(aisci_plugin_t *, void *);

__attribute__((visibility("default"))) void lammpsplugin_init(void *lmp, void *handle,
                                                              void *regfunc);
}

void lammpsplugin_init(void *lmp, void *handle, void *regfunc)
{
  auto reg = (aisci_plugin_regfunc) regfunc;
  auto lmp_ptr = (LAMMPS_NS::LAMMPS *) lmp;
  const char *version = lmp_ptr->version;
  for (const auto &s : AISCI::registered_styles()) {
    aisci_plugin_t p;
    memset(&p, 0, sizeof(p));
    p.version = version;
    p.name = s.name;
    p.info = s.info;
    p.author = "USER-AISCI developers";
    p.handle = handle;
    if (AISCI::yields_to_native(s) && AISCI::has_native_pair_style(lmp_ptr, s)) {
      if (lmp_ptr->comm->me == 0)
        LAMMPS_NS::utils::logmesg(lmp_ptr, std::string("USER-AISCI: pair_style ") + s.name +
                                               " not registered: this LAMMPS has its own\n");
      continue;
    }
    switch (s.kind) {
      case AISCI::StyleKind::PAIR:
        p.style = "pair";
        p.creator.v1 = (aisci_plugin_factory1 *) s.creator;
        break;
      case AISCI::StyleKind::FIX:
        p.style = "fix";
        p.creator.v2 = (aisci_plugin_factory2 *) s.creator;
        break;
      case AISCI::StyleKind::COMPUTE:
        p.style = "compute";
        p.creator.v2 = (aisci_plugin_factory2 *) s.creator;
        break;
      case AISCI::StyleKind::COMMAND:
        p.style = "command";
        p.creator.v1 = (aisci_plugin_factory1 *) s.creator;
        break;
      case AISCI::StyleKind::KSPACE:
        continue;    // not loadable as a plugin in this LAMMPS generation
    }
    (*reg)(&p, lmp);
  }
}
