/* fix pimd/langevin (USER-AISCI adapter), part 3: checks that keep a bad input from
 * crashing, hanging or running silently wrong: the settings every partition must share
 * (compared at setup with two collectives), fixes that cannot work with several beads,
 * and the message for atoms lost between partitions. See fix_pimd_langevin.h. */
#include "fix_pimd_langevin.h"

#include "aisci/agree.h"
#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "fix_dplr.h"
#include "force.h"
#include "group.h"
#include "modify.h"
#include "output.h"
#include "pair.h"
#include "pair_aisci.h"
#include "universe.h"
#include "update.h"

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace LAMMPS_NS;

namespace {

const char *STYLE = "fix pimd/langevin";

/* One setting compared across partitions: its name in messages, this partition's value
 * and, for choices, the names of the values (index = value). hashed: the value is a
 * 53-bit hash of text (fix list, thermo variable) and only "differ" can be said. */
struct Setting {
  std::string name;
  double value;
  std::vector<std::string> choices;
  bool hashed;
};

/* A 64-bit hash cut to 53 bits, so that the double of a compared setting holds it exactly. */
double hash53(uint64_t h)
{
  return (double) (h & ((1ull << 53) - 1));
}

/* FNV-1a of the text, as a compared setting. */
double text_hash(const std::string &text)
{
  return hash53(AISCI::fnv1a(text.data(), text.size()));
}

/* The lowest partition whose `value` differs from partition 0's, or -1 (collective over
 * all partitions; every rank gets the answer). */
int first_other_partition(Universe *universe, uint64_t value)
{
  uint64_t value0 = value;
  MPI_Bcast(&value0, 1, MPI_UINT64_T, 0, universe->uworld);
  int mine = value != value0 ? universe->iworld : INT_MAX, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, universe->uworld);
  return first == INT_MAX ? -1 : first;
}

/* `text` of partition `part` (its rank 0's), on every rank of every partition. */
std::string partition_text(Universe *universe, int part, const std::string &text)
{
  const int root = universe->root_proc[part];
  int n = (int) text.size();
  MPI_Bcast(&n, 1, MPI_INT, root, universe->uworld);
  std::string out = text;
  out.resize(n);
  MPI_Bcast(&out[0], n, MPI_CHAR, root, universe->uworld);
  return out;
}

/* The pair style's coefficients as it writes them to a restart file (styles that write
 * none: empty), from rank 0 of the partition: what pair_style and pair_coeff set. */
std::string pair_restart_bytes(LAMMPS *lmp)
{
  std::string out;
  Pair *pair = lmp->force->pair;
  if (lmp->comm->me == 0 && pair && pair->restartinfo) {
    char *buf = nullptr;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (f) {
      pair->write_restart(f);
      fclose(f);
      out.assign(buf, n);
    }
    free(buf);
  }
  return out;
}

std::string hex(double hash)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%014llx", (unsigned long long) hash);
  return buf;
}

std::string show(const Setting &s, double v)
{
  const long i = lround(v);
  if (!s.choices.empty() && i >= 0 && i < (long) s.choices.size() && (double) i == v)
    return s.choices[i];
  // the shortest of 15 or 17 digits that reads back as v (0.1, not 0.10000000000000001)
  char buf[64];
  snprintf(buf, sizeof(buf), "%.15g", v);
  if (strtod(buf, nullptr) != v) snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

}    // namespace

/* Every partition must run the same dynamics on the same system: the ring polymer is
 * one object spread over them, and the exchanges between them happen on steps each
 * partition decides for itself (run length, thermo output). Compared here, before the
 * first exchange of a run: the fix's keywords, the time step, units, atoms, masses, box,
 * the run's steps and the thermo interval, the fixes and dumps defined; then the pair
 * style (by name), the atom IDs (an order-free checksum), the pair coefficients (as the
 * style writes them to restart files) and, for pair_style aisci, its keywords, elements
 * and model file content (PairAisci::model_file_hash). The first
 * setting that differs stops every rank of every partition with its name and two values
 * found for it. The relevance of a keyword follows the ensemble: a thermostat keyword of
 * an nve run is not compared.
 * These are the fix's first collective calls over all partitions (none in the
 * constructor), and they wait at most AISCI_PIMD_SYNC_TIMEOUT seconds (default 300): a
 * partition that never gets here (fix or run command missing in it) stops the run
 * instead of hanging it. Then the bead exchange is built, once. */
void FixPIMDLangevinAisci::check_partitions()
{
  const double timeout = sync_timeout();
  const bool thermostat = cfg.ensemble == AISCI_PIMD_NVT || cfg.ensemble == AISCI_PIMD_NPT;
  const std::vector<std::string> units = {"lj", "real", "metal", "si", "cgs", "electron", "micro", "nano"};
  double unit_index = -1.0;
  for (size_t k = 0; k < units.size(); k++)
    if (units[k] == update->unit_style) unit_index = (double) k;

  std::string fixes, dumps;
  for (int i = 0; i < modify->nfix; i++)
    fixes += std::string(modify->fix[i]->id) + " " + modify->fix[i]->style + ";";
  for (int i = 0; i < output->ndump; i++) dumps += std::to_string(output->every_dump[i]) + ";";

  std::vector<Setting> s = {
      {"method", (double) cfg.method, {"nmpimd", "pimd"}, false},
      {"integrator", (double) cfg.integrator, {"obabo", "baoab"}, false},
      {"ensemble", (double) cfg.ensemble, {"nve", "nvt", "nph", "npt"}, false},
      {"fmmode", (double) cfg.fmmode, {"physical", "normal"}, false},
      {"fmass", cfg.fmass, {}, false},
      {"sp", sp, {}, false},
      {"temp", temp, {}, false},
      {"tau", thermostat ? cfg.tau : 0.0, {}, false},
      {"scale", thermostat ? cfg.scale : 0.0, {}, false},
      {"iso/aniso (cell coupling)", barostat_on ? (double) cfg.pstyle : -1.0, {"iso", "aniso"}, false},
      {"iso/aniso (external pressure)", barostat_on ? pext_user : 0.0, {}, false},
      {"barostat", barostat_on ? (double) cfg.barostat : -1.0, {"BZP", "MTTK"}, false},
      {"taup", barostat_on ? cfg.taup : 0.0, {}, false},
      {"fixcom", (double) fixcom, {"no", "yes"}, false},
      {"lj epsilon", lj[0], {}, false},
      {"lj sigma", lj[1], {}, false},
      {"lj mass", lj[2], {}, false},
      {"lj planck", lj[3], {}, false},
      {"lj mvv2e", lj[4], {}, false},
      {"beads_per_world", (double) nlocal_beads, {}, false},
      {"units", unit_index, units, false},
      {"timestep", update->dt, {}, false},
      {"number of atoms", (double) atom->natoms, {}, false},
      {"number of atom types", (double) atom->ntypes, {}, false},
      {"number of atoms in the fix's group (ring polymers)", ngroup, {}, false},
      {"per-atom masses (atom style with rmass)", atom->rmass ? 1.0 : 0.0, {"no", "yes"}, false},
      {"boundary x (periodic)", (double) domain->xperiodic, {"no", "yes"}, false},
      {"boundary y (periodic)", (double) domain->yperiodic, {"no", "yes"}, false},
      {"boundary z (periodic)", (double) domain->zperiodic, {"no", "yes"}, false},
      {"box shape (triclinic)", (double) domain->triclinic, {"no", "yes"}, false},
      {"box xlo", domain->boxlo[0], {}, false},
      {"box xhi", domain->boxhi[0], {}, false},
      {"box ylo", domain->boxlo[1], {}, false},
      {"box yhi", domain->boxhi[1], {}, false},
      {"box zlo", domain->boxlo[2], {}, false},
      {"box zhi", domain->boxhi[2], {}, false},
      {"box tilt xy", domain->xy, {}, false},
      {"box tilt xz", domain->xz, {}, false},
      {"box tilt yz", domain->yz, {}, false},
      {"run start step", (double) update->firststep, {}, false},
      {"run end step", (double) update->laststep, {}, false},
      {"run start keyword (first step of the runs)", (double) update->beginstep, {}, false},
      {"run stop keyword (last step of the runs)", (double) update->endstep, {}, false},
      {"thermo interval", output->var_thermo ? -1.0 : (double) output->thermo_every, {}, false},
      {"thermo variable", output->var_thermo ? text_hash(output->var_thermo) : 0.0, {}, true},
      {"number of fixes", (double) modify->nfix, {}, false},
      {"fixes defined (IDs and styles, in order)", text_hash(fixes), {}, true},
      {"number of dumps", (double) output->ndump, {}, false},
      {"dump intervals", text_hash(dumps), {}, true},
  };

  // per-type masses (their count is agreed first), and per-atom masses as two sums
  auto agree = [&](const std::vector<Setting> &list) {
    std::vector<double> v;
    for (const Setting &e : list) v.push_back(e.value);
    int index = -1;
    double lo = 0.0, hi = 0.0;
    aisci_status st = aisci_agree(universe->uworld, (int) v.size(), v.data(), 1e-12, timeout, &index,
                                  &lo, &hi);
    if (st == AISCI_ERR_MPI && timeout > 0.0)
      AISCI::error_one(lmp, FLERR, std::string(STYLE) + ": partition " + std::to_string(universe->iworld) +
                            " waited " + show(Setting{"", timeout, {}, false}, timeout) +
                            " s at the setup of a run on step " +
                            std::to_string((long long) update->ntimestep) +
                            " for the other partitions: some partition does not run this input "
                            "(a run, minimize or fix pimd/langevin command missing or extra in it?); "
                            "every partition must run the same input (AISCI_PIMD_SYNC_TIMEOUT "
                            "sets this wait in seconds)");
    if (st != AISCI_OK) fail(st);
    if (index < 0) return;
    const Setting &e = list[index];
    std::string msg = std::string(STYLE) + ": partitions (beads) differ in " + e.name;
    if (e.hashed)
      msg += " (compared by a hash: " + hex(lo) + " in one partition, " + hex(hi) + " in another)";
    else msg += ": " + show(e, lo) + " in one partition, " + show(e, hi) + " in another";
    msg += "; every partition must run the same input (docs/fix_pimd_langevin.md lists the "
           "settings compared)";
    AISCI::error_universe_all(lmp, FLERR, msg);
  };
  agree(s);

  std::vector<Setting> m;
  if (atom->rmass) {
    double local[2] = {0.0, 0.0}, sum[2];
    for (int i = 0; i < atom->nlocal; i++) {
      local[0] += atom->rmass[i];
      local[1] += atom->rmass[i] * (double) atom->tag[i];
    }
    MPI_Allreduce(local, sum, 2, MPI_DOUBLE, MPI_SUM, world);
    m.push_back({"per-atom masses (sum over atoms)", sum[0], {}, false});
    m.push_back({"per-atom masses (sum of ID x mass)", sum[1], {}, false});
  } else {
    for (int t = 1; t <= atom->ntypes; t++)
      m.push_back({"mass of atom type " + std::to_string(t), atom->mass ? atom->mass[t] : 0.0, {}, false});
  }
  agree(m);

  // the same force field: pair style by name, then (below) its coefficients
  const std::string pair_style = force->pair_style ? force->pair_style : "none";
  int part = first_other_partition(universe, AISCI::fnv1a(pair_style.data(), pair_style.size()));
  if (part >= 0)
    AISCI::error_universe_all(lmp, FLERR, std::string(STYLE) + ": partitions (beads) differ in pair style: " +
                                   partition_text(universe, 0, pair_style) + " in partition 0, " +
                                   partition_text(universe, part, pair_style) + " in partition " +
                                   std::to_string(part) + "; every partition must run the same "
                                   "input (docs/fix_pimd_langevin.md lists the settings compared)");

  // the same atoms: an order-free checksum of the atom IDs (a mixed hash of each ID,
  // summed), after the atom counts agreed; otherwise the first bead exchange would call
  // the atoms missing in one partition "lost"
  uint64_t ids_local = 0, ids = 0;
  for (int i = 0; i < atom->nlocal; i++) {
    uint64_t z = (uint64_t) atom->tag[i] + 0x9e3779b97f4a7c15ull;    // splitmix64 finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    ids_local += z ^ (z >> 31);
  }
  MPI_Allreduce(&ids_local, &ids, 1, MPI_UINT64_T, MPI_SUM, world);
  part = first_other_partition(universe, ids);
  if (part >= 0)
    AISCI::error_universe_all(lmp, FLERR, std::string(STYLE) + ": partition " + std::to_string(part) +
                                   " holds other atom IDs than partition 0 (the same number of "
                                   "atoms, " + std::to_string((long long) atom->natoms) +
                                   "); every partition must hold the same atoms: read the same "
                                   "data file (or create the same atoms) in each");

  const std::string coeffs = pair_restart_bytes(lmp);
  PairAisci *aisci = AISCI::find_aisci_pair(lmp);
  uint64_t dw_hash = 0;    // the DW models of the fix dplr instances, in order (0: none)
  for (int i = 0; i < modify->nfix; i++)
    if (const FixDplr *dplr = AISCI::as_aisci_fix_dplr(modify->fix[i])) {
      const uint64_t h = dplr->model_file_hash();
      dw_hash = AISCI::fnv1a(&h, sizeof h, dw_hash ? dw_hash : AISCI::FNV_OFFSET);
    }
  std::vector<Setting> p = {
      {"pair coefficients (as written to restart files)", text_hash(coeffs), {}, true},
      {"pair_style aisci keywords and pair_coeff elements",
       aisci ? text_hash(aisci->input_arguments()) : 0.0, {}, true},
      {"pair_style aisci model file content (FNV-1a of its bytes)",
       aisci ? hash53(aisci->model_file_hash()) : 0.0, {}, true},
      {"fix dplr DW model file content (FNV-1a of its bytes)", hash53(dw_hash), {}, true}};
  for (Setting &e : p) MPI_Bcast(&e.value, 1, MPI_DOUBLE, 0, world);
  agree(p);

  // Thermostat seeds may differ between partitions (upstream's examples give each
  // partition its own, "thermostat PILE_L ${ibead}"): the ring polymer's noise is one
  // stream keyed by atom, mode and step, so partition 0's seed serves every partition.
  if (thermostat) {
    uint64_t seed0 = cfg.seed;
    MPI_Bcast(&seed0, 1, MPI_UINT64_T, 0, universe->uworld);
    int differs = seed0 != cfg.seed ? 1 : 0, any = 0;
    MPI_Allreduce(&differs, &any, 1, MPI_INT, MPI_MAX, universe->uworld);
    if (any && universe->me == 0)
      error->warning(FLERR, std::string(STYLE) + ": thermostat seeds differ between partitions; "
                                "the noise of the ring polymer is one stream, all partitions use "
                                "partition 0's seed " + std::to_string((unsigned long long) seed0));
    if (differs) {
      cfg.seed = seed0;
      aisci_pimd_destroy(pimd);
      pimd = nullptr;
      aisci_status st = aisci_pimd_create(&cfg, &pimd);
      if (st != AISCI_OK) fail(st);
    }
  }

  if (!beadcomm) {
    aisci_status st = aisci_beadcomm_create(universe->uworld, world, universe->nworlds,
                                            universe->iworld, &beadcomm);
    if (st != AISCI_OK)
      AISCI::error_universe_all(lmp, FLERR, std::string(STYLE) + ": " + aisci_last_error() +
                                     " (run with -partition PxM: P partitions of M ranks each)");
  }
}

/* Fixes that cannot work with this integrator, refused by name (init, local check):
 * - with several beads, constraints (fix shake, fix rattle): they act on one set of
 *   positions and velocities per step while the fix moves normal modes; constrained PIMD
 *   is future work;
 * - with several beads, thermostats that act on atom->v (fix langevin, temp/..., viscous,
 *   gld, gle): atom->v holds a normal-mode velocity (nmpimd) or a bead velocity that must
 *   be sampled at P T (pimd), so they would thermostat the wrong thing without a word;
 * - with several beads, fix momentum and fix recenter (each partition would shift its
 *   own bead by its own centre of mass) and fix wall/reflect (it flips atom->v, a mode
 *   velocity here): fixcom and soft walls acting as forces do their jobs;
 * - in a run, fixes that change the box (fix deform, press/berendsen, ...): the fix keeps
 *   unwrapped normal-mode coordinates and wraps them with the current box, so a box that
 *   changes under it moves atoms that crossed a boundary (the barostats of ensemble
 *   nph/npt scale modes and box together). fix box/relax acts only in minimize. */
void FixPIMDLangevinAisci::check_fixes()
{
  auto starts = [](const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; };
  for (int i = 0; i < modify->nfix; i++) {
    Fix *f = modify->fix[i];
    if (f == this) continue;
    const std::string fstyle = f->style;
    const std::string which = std::string(STYLE) + ": fix " + f->id + " (" + fstyle + ") ";
    if (nbeads > 1 && (starts(fstyle, "shake") || starts(fstyle, "rattle")))
      error->all(FLERR, which + "is not supported with more than one bead (P = " +
                            std::to_string(nbeads) +
                            "): bond constraints in path-integral MD are future work; use "
                            "flexible bonds (or P = 1)");
    if (nbeads > 1 && (starts(fstyle, "langevin") || starts(fstyle, "temp/") ||
                       starts(fstyle, "viscous") || starts(fstyle, "gld") || starts(fstyle, "gle")))
      error->all(FLERR, which + "acts on atom velocities, which hold normal-mode (or bead) "
                            "velocities of the ring polymer here; it cannot be combined with "
                            "more than one bead: use ensemble nvt or npt of fix " + id +
                            " for the temperature");
    if (nbeads > 1 && (fstyle == "momentum" || starts(fstyle, "momentum/") ||
                       fstyle == "recenter" || starts(fstyle, "recenter/")))
      error->all(FLERR, which + "is not supported with more than one bead (P = " +
                            std::to_string(nbeads) + "): it moves the atoms of each bead "
                            "(partition) by that bead's own centre of mass, which splits the "
                            "ring polymers; use the fixcom keyword of fix " + id +
                            " (fixcom yes removes the centroids' centre-of-mass motion)");
    if (nbeads > 1 && (fstyle == "wall/reflect" || starts(fstyle, "wall/reflect/")))
      error->all(FLERR, which + "is not supported with more than one bead (P = " +
                            std::to_string(nbeads) + "): it reverses the velocities of single "
                            "beads, which hold normal-mode velocities here; use a wall that "
                            "acts as a force, e.g. fix wall/harmonic or fix wall/lj93");
    if (update->whichflag == 1 && (f->box_change & (BOX_CHANGE_SIZE | BOX_CHANGE_SHAPE)) &&
        fstyle != "box/relax")
      error->all(FLERR, which + "changes the box during the run, which fix " + id +
                            " cannot follow (it keeps unwrapped normal-mode coordinates); use "
                            "its ensemble nph or npt for a changing cell");
  }
}

/* The group's atoms are the ring polymers; the others must be placed for each bead by a
 * fix that runs before this one's force step (init, collective in the partition):
 * - a fix dplr must be defined before this fix: its post_force moves the force on each
 *   Wannier centroid (WC) to the parent, which must happen before this fix turns the
 *   bead forces into mode forces (and, with beads_per_world, for each extra bead);
 * - no WC type of a fix dplr may be in the group (group all included): a WC has no mass
 *   of its own and no dynamics, it is a function of its bead's nuclei;
 * - every atom outside the group must be of a type that a fix dplr places. */
void FixPIMDLangevinAisci::check_group()
{
  const std::string gname = group->names[igroup];
  std::vector<const FixDplr *> placers;
  std::string placer_ids;
  bool after = false;
  for (int i = 0; i < modify->nfix; i++) {
    Fix *f = modify->fix[i];
    if (f == this) after = true;
    const FixDplr *d = AISCI::as_aisci_fix_dplr(f);
    if (!d) continue;
    if (after)
      error->all(FLERR, std::string(STYLE) + ": fix " + f->id + " (" + f->style +
                            ") is defined after fix " + id +
                            "; define it before: its forces on the Wannier centroids must reach "
                            "their parent atoms before fix " + id +
                            " turns each bead's forces into ring-polymer forces");
    placers.push_back(d);
    placer_ids += std::string(placer_ids.empty() ? "" : ", ") + f->id;
  }
  auto placed = [&](int t) {
    for (const FixDplr *d : placers)
      if (d->places_type(t)) return true;
    return false;
  };
  // counts of WCs inside and of unplaced atoms outside, and the smallest atom ID of each
  // (with its type) for the message
  const double none = 1e300;
  double count_local[2] = {0.0, 0.0}, count[2];
  struct {
    double tag;
    int type;
  } first_local[2] = {{none, 0}, {none, 0}}, first[2];
  for (int i = 0; i < atom->nlocal; i++) {
    const bool in = atom->mask[i] & groupbit, wc = placed(atom->type[i]);
    const int which = in && wc ? 0 : (!in && !wc ? 1 : -1);
    if (which < 0) continue;
    count_local[which] += 1.0;
    if ((double) atom->tag[i] < first_local[which].tag)
      first_local[which] = {(double) atom->tag[i], atom->type[i]};
  }
  MPI_Allreduce(count_local, count, 2, MPI_DOUBLE, MPI_SUM, world);
  MPI_Allreduce(first_local, first, 2, MPI_DOUBLE_INT, MPI_MINLOC, world);
  std::string nuclei_types, wc_types;
  for (int t = 1; t <= atom->ntypes; t++)
    (placed(t) ? wc_types : nuclei_types) += " " + std::to_string(t);
  auto atom_text = [&](int which) {
    return "atom ID " + std::to_string((long long) first[which].tag) + ", type " +
        std::to_string(first[which].type);
  };
  if (count[0] > 0.0)
    error->all(FLERR, std::string(STYLE) + ": group " + gname + " holds " +
                          std::to_string((long long) count[0]) +
                          " Wannier centroids of fix " + placer_ids + " (atom type(s)" + wc_types +
                          "; e.g. " + atom_text(0) +
                          "): they would be ring polymers, integrated, thermostatted and counted "
                          "in every estimator; apply fix " + id +
                          " to the nuclei only, e.g. 'group nuclei type" + nuclei_types +
                          "' and 'fix " + id + " nuclei pimd/langevin ...'");
  if (count[1] > 0.0)
    error->all(FLERR, std::string(STYLE) + ": " + std::to_string((long long) count[1]) +
                          " atoms are outside group " + gname + " (e.g. " + atom_text(1) +
                          ") and nothing places them for each bead: only the Wannier centroids "
                          "of a fix dplr defined before fix " + id +
                          " may stay outside the group; put these atoms in it" +
                          (placers.empty() ? " (or use group all)" : ""));
}

/* A bead exchange found an atom that some partition does not hold: it was lost there
 * (every partition must hold every atom). The core gives every rank the same atom and
 * partition, so all ranks stop together with the same message. */
void FixPIMDLangevinAisci::exchange_failed(aisci_status st)
{
  int64_t tag = -1;
  int part = -1;
  if (st != AISCI_ERR_MISSING || !aisci_beadcomm_missing(beadcomm, &tag, &part))
    AISCI::fail_one(lmp, STYLE, st);
  const int K = nlocal_beads;
  std::string beads = K == 1 ? "bead " + std::to_string(part)
                             : "beads " + std::to_string(part * K) + "-" + std::to_string(part * K + K - 1);
  AISCI::error_universe_all(
      lmp, FLERR, std::string(STYLE) + ": atoms were lost: atom ID " + std::to_string((long long) tag) +
                 " is missing in partition " + std::to_string(part) + " (" + beads + ") on step " +
                 std::to_string((long long) update->ntimestep) +
                 " but present in another. Atoms get lost when they leave a non-periodic box "
                 "or move too far in one step, usually because the time step is too large or "
                 "the potential is bad (overlapping atoms, a wrong model or units); check them. "
                 "thermo_modify lost ignore cannot help here: every bead must hold every atom");
}
