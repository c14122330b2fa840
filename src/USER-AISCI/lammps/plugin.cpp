/* Plugin entry point for LAMMPS builds that have the PLUGIN package (`plugin load`,
 * docs/plugin.md). The registration record follows LAMMPS's plugin interface
 * (lammpsplugin.h: version, style kind, name, info, author, creator, DSO handle); it is
 * declared here because Debian's liblammps-dev does not ship that header.
 *
 * What loading does, style by style:
 *  - a name this LAMMPS does not have yet: registered under it;
 *  - fix pimd/langevin, fix dplr, kspace_style pppm/dplr: also registered as
 *    <name>/aisci (AISCI::distinct_name); where this LAMMPS already has the plain name
 *    (REPLICA's fix pimd/langevin, DeePMD-kit's fix dplr or pppm/dplr), theirs is kept and
 *    the log says that ours is <name>/aisci: never a silent swap, and LAMMPS's own
 *    "Overriding built-in style" replacement never happens;
 *  - pair_style deepmd (a stand-in for DeePMD-kit's): only where there is none; where
 *    there is, the log says so and pair_style aisci reads the same models;
 *  - kspace styles: the plugin loaders of LAMMPS before the 2022 feature releases cannot
 *    load them (kspace plugins came with LAMMPS PR #3188, March 2022; the 29Sep2021 line
 *    has none). There the log names the kspace styles that need lmp-aisci instead;
 *  - a name that is already ours (the same file loaded again: `plugin load` twice, or
 *    LAMMPS_PLUGIN_PATH and `plugin load`): left as it is, one log line, so that LAMMPS
 *    neither registers it twice nor mistakes ours for another package's. After `clear`
 *    (which unloads every plugin) or `plugin unload`, loading again registers the
 *    missing names. */
#include "aisci_lmp.h"

#include "comm.h"
#include "compute.h"
#include "fix.h"
#include "force.h"
#include "input.h"
#include "kspace.h"
#include "lammps.h"
#include "modify.h"
#include "pair.h"
#include "utils.h"

#include <list>
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

namespace {

/* First LAMMPS version (LAMMPS::num_ver) whose plugin loader accepts kspace styles: the
 * release after lammps/lammps PR #3188 (merged 28 Mar 2022); DeePMD-kit's plugin uses the
 * same threshold for its pppm/dplr. */
constexpr int KSPACE_PLUGIN_VERSION = 20220328;

const char *kind_word(AISCI::StyleKind kind)
{
  switch (kind) {
    case AISCI::StyleKind::PAIR: return "pair";
    case AISCI::StyleKind::FIX: return "fix";
    case AISCI::StyleKind::COMPUTE: return "compute";
    case AISCI::StyleKind::COMMAND: return "command";
    case AISCI::StyleKind::KSPACE: return "kspace";
  }
  return "?";
}

/* The creator this LAMMPS instance has for a style `name` of this kind (built in, or from
 * a plugin loaded earlier, ours included), or nullptr when it has none. */
void *host_creator(LAMMPS_NS::LAMMPS *lmp, AISCI::StyleKind kind, const std::string &name)
{
  switch (kind) {
    case AISCI::StyleKind::PAIR: {
      auto it = lmp->force->pair_map->find(name);
      return it == lmp->force->pair_map->end() ? nullptr : (void *) it->second;
    }
    case AISCI::StyleKind::FIX: {
      auto it = lmp->modify->fix_map->find(name);
      return it == lmp->modify->fix_map->end() ? nullptr : (void *) it->second;
    }
    case AISCI::StyleKind::COMPUTE: {
      auto it = lmp->modify->compute_map->find(name);
      return it == lmp->modify->compute_map->end() ? nullptr : (void *) it->second;
    }
    case AISCI::StyleKind::COMMAND: {
      auto it = lmp->input->command_map->find(name);
      return it == lmp->input->command_map->end() ? nullptr : (void *) it->second;
    }
    case AISCI::StyleKind::KSPACE: {
      auto it = lmp->force->kspace_map->find(name);
      return it == lmp->force->kspace_map->end() ? nullptr : (void *) it->second;
    }
  }
  return nullptr;
}

/* True when this LAMMPS instance has a style `name` of this kind that is not ours (built
 * in or from another plugin loaded earlier). */
bool host_has(LAMMPS_NS::LAMMPS *lmp, const AISCI::StyleEntry &s, const std::string &name)
{
  void *c = host_creator(lmp, s.kind, name);
  return c != nullptr && c != s.creator;
}

/* True when `name` is already ours in this LAMMPS instance: this very file was loaded
 * before (`plugin load` twice, or LAMMPS_PLUGIN_PATH and `plugin load`). */
bool already_ours(LAMMPS_NS::LAMMPS *lmp, const AISCI::StyleEntry &s, const std::string &name)
{
  return host_creator(lmp, s.kind, name) == s.creator;
}

void log0(LAMMPS_NS::LAMMPS *lmp, const std::string &line)
{
  if (lmp->comm->me == 0) LAMMPS_NS::utils::logmesg(lmp, "USER-AISCI plugin: " + line + "\n");
}

}    // namespace

void lammpsplugin_init(void *lmp, void *handle, void *regfunc)
{
  auto reg = (aisci_plugin_regfunc) regfunc;
  auto lmp_ptr = (LAMMPS_NS::LAMMPS *) lmp;
  const bool kspace_ok = lmp_ptr->num_ver >= KSPACE_PLUGIN_VERSION;
  AISCI::set_loaded_as_plugin();
  std::string need_launcher;
  int kept = 0;
  for (const auto &s : AISCI::registered_styles()) {
    const std::string kind = kind_word(s.kind);
    if (s.kind == AISCI::StyleKind::KSPACE && !kspace_ok) {
      need_launcher += std::string(need_launcher.empty() ? "" : ", ") + s.name;
      continue;
    }
    if (AISCI::yields_to_native(s) && host_has(lmp_ptr, s, s.name)) {
      log0(lmp_ptr, kind + " style " + s.name + " not registered: this LAMMPS has its own " +
                        "(DeePMD-kit's); pair_style aisci reads the same PyTorch models");
      continue;
    }
    aisci_plugin_t p;
    memset(&p, 0, sizeof(p));
    p.version = lmp_ptr->version;
    p.style = kind_word(s.kind);
    p.info = s.info;
    p.author = "USER-AISCI developers";
    p.handle = handle;
    switch (s.kind) {
      case AISCI::StyleKind::PAIR:
      case AISCI::StyleKind::COMMAND:
      case AISCI::StyleKind::KSPACE:
        p.creator.v1 = (aisci_plugin_factory1 *) s.creator;
        break;
      case AISCI::StyleKind::FIX:
      case AISCI::StyleKind::COMPUTE:
        p.creator.v2 = (aisci_plugin_factory2 *) s.creator;
        break;
    }
    const std::string second = AISCI::distinct_name(s);
    std::string plain = s.name;
    if (!second.empty() && host_has(lmp_ptr, s, plain)) {
      log0(lmp_ptr, kind + " style " + plain + ": this LAMMPS has its own, kept; ours is " + kind +
                        " style " + second);
      plain.clear();
    }
    for (const std::string &name : {plain, second}) {
      if (name.empty()) continue;
      if (already_ours(lmp_ptr, s, name)) {
        ++kept;
        continue;
      }
      // the loader keeps a copy of the record, name pointer included, for `plugin list`
      // and `plugin unload`: the text must outlive this call
      static std::list<std::string> names;
      names.push_back(name);
      p.name = names.back().c_str();
      (*reg)(&p, lmp);
    }
  }
  if (kept > 0)
    log0(lmp_ptr, std::to_string(kept) + " style names already loaded from this plugin, kept " +
                      "as they are (loaded twice: `plugin load` again, or LAMMPS_PLUGIN_PATH " +
                      "and `plugin load`)");
  if (!need_launcher.empty())
    log0(lmp_ptr, std::string("kspace styles ") + need_launcher + " not loaded: the plugin loader " +
                      "of LAMMPS " + lmp_ptr->version + " cannot load kspace styles (LAMMPS " +
                      "releases from 2022 on can); use lmp-aisci for them");
}
