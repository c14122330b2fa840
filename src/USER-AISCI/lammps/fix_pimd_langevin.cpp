/* fix pimd/langevin (USER-AISCI adapter). See fix_pimd_langevin.h and
 * docs/fix_pimd_langevin.md.
 *
 * Storage convention (as upstream's fix of this name): partition w holds beads (and
 * normal modes) w K .. w K + K - 1 (K = beads_per_world, default 1). For its first local
 * bead, atom->x holds the Cartesian bead positions, atom->v the velocities of the normal
 * mode with the same index (method nmpimd) or of the bead (method pimd), and after
 * post_force atom->f the force on that mode (nmpimd). The fix keeps the unwrapped
 * normal-mode coordinates of every local mode, and the other local beads' velocities,
 * forces and positions, in a per-atom array that migrates with the atoms. Where each
 * bead's rows live is decided in set_bead_rows() (fix_pimd_langevin_atoms.cpp) only: the
 * accessors and the core reach them through its table, the same way for every bead.
 *
 * One time step: the core's aisci_pimd_step_begin (O B A for OBABO) -> exchange q,
 * aisci_pimd_step_positions builds x -> LAMMPS forces (plus K-1 extra force evaluations)
 * -> exchange f, aisci_pimd_step_forces -> aisci_pimd_step_end (B O). */
#include "fix_pimd_langevin.h"

#include "aisci_lmp.h"
#include "aisci_restart_watch.h"

#include "atom.h"
#include "comm.h"
#include "compute.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "group.h"
#include "kspace.h"
#include "memory.h"
#include "modify.h"
#include "neighbor.h"
#include "output.h"
#include "universe.h"
#include "update.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace LAMMPS_NS;
using namespace FixConst;

static const char *STYLE = "fix pimd/langevin";
static const double TWO_PI = 6.283185307179586476925286766559;

enum { PIMD_ENS_NVE, PIMD_ENS_NVT, PIMD_ENS_NPH, PIMD_ENS_NPT };

static std::string arg_ensemble(int e)
{
  static const char *names[4] = {"nve", "nvt", "nph", "npt"};
  return names[e];
}

FixPIMDLangevinAisci::FixPIMDLangevinAisci(LAMMPS *lmp, int narg, char **arg) :
    Fix(lmp, narg, arg), pimd(nullptr), beadcomm(nullptr), stepper(nullptr), state(),
    barostat_on(0), pext_user(1.0), ext(nullptr), ext_width(3), peratom(nullptr), peratom_width(4),
    ghost_margin(0.0), margin_next(-1.0), cutghost_user(-1.0), ghost_base(0.0),
    lists_moved(false), spread_seen(0.0), subset(false), nring(0), ngroup(0.0), atoms_declared(false),
    declared_nlocal(-1),
    c_pe(nullptr), c_press(nullptr), est_step(-1)
{
  const std::string style(STYLE);
  cfg = aisci_pimd_config_default();
  temp = 298.15;
  sp = 1.0;
  for (double &v : lj) v = 1.0;
  fixcom = 1;
  cfg.seed = 975481;
  int ensemble = PIMD_ENS_NVT;
  std::vector<std::string> given;    // keywords seen, for the checks after the loop
  std::string pstyle_given;          // iso or aniso, once one was given
  nlocal_beads = 1;

  int iarg = 3;
  while (iarg < narg) {
    const std::string key = arg[iarg];
    given.push_back(key);
    if (key == "method") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      int c = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"nmpimd", "pimd", "cmd"});
      if (c == 2)
        error->all(FLERR, style + ": method cmd is not supported by pimd/langevin (use nmpimd)");
      cfg.method = c == 0 ? AISCI_PIMD_NMPIMD : AISCI_PIMD_CARTESIAN;
      iarg += 2;
    } else if (key == "integrator") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      int c = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"obabo", "baoab"});
      cfg.integrator = c == 0 ? AISCI_PIMD_OBABO : AISCI_PIMD_BAOAB;
      iarg += 2;
    } else if (key == "ensemble") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      ensemble = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"nve", "nvt", "nph", "npt"});
      iarg += 2;
    } else if (key == "fmmode") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      int c = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"physical", "normal"});
      cfg.fmmode = c == 0 ? AISCI_PIMD_FM_PHYSICAL : AISCI_PIMD_FM_NORMAL;
      iarg += 2;
    } else if (key == "fmass" || key == "scale" || key == "temp" || key == "tau" || key == "sp" ||
               key == "taup") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      double v = AISCI::parse_double(lmp, style, key, arg[iarg + 1]);
      if (!(v > 0.0))
        error->all(FLERR, style + ": " + key + " must be > 0, got " + std::string(arg[iarg + 1]));
      if (key == "taup")
        cfg.taup = v;
      else if (key == "fmass")
        cfg.fmass = v;
      else if (key == "scale")
        cfg.scale = v;
      else if (key == "temp")
        temp = v;
      else if (key == "tau")
        cfg.tau = v;
      else if (key == "sp")
        sp = v;
      iarg += 2;
    } else if (key == "thermostat") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 2);
      AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"PILE_L"});
      long seed = AISCI::parse_int(lmp, style, "thermostat seed", arg[iarg + 2]);
      if (seed <= 0)
        error->all(FLERR,
                   style + ": thermostat seed must be a positive integer, got " +
                       std::string(arg[iarg + 2]));
      cfg.seed = (uint64_t) seed;
      iarg += 3;
    } else if (key == "iso" || key == "aniso") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      const std::string other = key == "iso" ? "aniso" : "iso";
      if (pstyle_given == other)
        error->all(FLERR,
                   style +
                       ": keywords iso and aniso exclude each other (one cell coupling), "
                       "got both");
      pstyle_given = key;
      pext_user = AISCI::parse_double(lmp, style, key, arg[iarg + 1]);
      cfg.pstyle = key == "iso" ? AISCI_PIMD_ISO : AISCI_PIMD_ANISO;
      iarg += 2;
    } else if (key == "barostat") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      int c = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"BZP", "MTTK"});
      cfg.barostat = c == 0 ? AISCI_PIMD_BZP : AISCI_PIMD_MTTK;
      iarg += 2;
    } else if (key == "fixcom") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      fixcom = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"no", "yes"});
      iarg += 2;
    } else if (key == "beads_per_world") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      long k = AISCI::parse_int(lmp, style, key, arg[iarg + 1]);
      if (k < 1 || k > 4096)
        error->all(FLERR,
                   style + ": beads_per_world must be an integer from 1 to 4096, got " +
                       std::string(arg[iarg + 1]));
      nlocal_beads = (int) k;
      iarg += 2;
    } else if (key == "lj") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 5);
      static const char *names[5] = {"lj epsilon", "lj sigma", "lj mass", "lj planck", "lj mvv2e"};
      for (int k = 0; k < 5; k++) {
        lj[k] = AISCI::parse_double(lmp, style, names[k], arg[iarg + 1 + k]);
        if (!(lj[k] > 0.0))
          error->all(FLERR,
                     style + ": " + names[k] + " must be > 0, got " +
                         std::string(arg[iarg + 1 + k]));
      }
      iarg += 6;
    } else {
      error->all(
          FLERR,
          style + ": unknown keyword '" + key +
              "' (expected method, integrator, ensemble, fmmode, fmass, sp, scale, "
              "temp, thermostat, tau, iso, aniso, barostat, taup, fixcom, lj or beads_per_world)");
    }
  }
  static const aisci_pimd_ensemble ens_map[4] = {AISCI_PIMD_NVE, AISCI_PIMD_NVT, AISCI_PIMD_NPH,
                                                 AISCI_PIMD_NPT};
  cfg.ensemble = ens_map[ensemble];
  barostat_on = ensemble >= PIMD_ENS_NPH;
  // keywords the ensemble does not use: accepted (as upstream), but not silently
  const bool thermostat_on = ensemble == PIMD_ENS_NVT || ensemble == PIMD_ENS_NPT;
  std::string unused;
  for (const std::string &k : given)
    if ((!barostat_on && (k == "iso" || k == "aniso" || k == "barostat" || k == "taup")) ||
        (!thermostat_on && (k == "thermostat" || k == "tau" || k == "scale")))
      if (unused.find(" " + k + ",") == std::string::npos) unused += " " + k + ",";
  if (!unused.empty() && comm->me == 0) {
    unused.pop_back();
    error->warning(FLERR,
                   style + ": keyword(s)" + unused + " ignored: ensemble " +
                       arg_ensemble(ensemble) + " has no " +
                       (barostat_on         ? "thermostat"
                            : thermostat_on ? "barostat"
                                            : "thermostat or barostat"));
  }
  if (barostat_on) {
    if (cfg.method != AISCI_PIMD_NMPIMD)
      error->all(FLERR, style + ": ensemble " + arg_ensemble(ensemble) + " needs method nmpimd");
    if (domain->triclinic)
      error->all(FLERR,
                 style + ": ensemble " + arg_ensemble(ensemble) +
                     " supports orthogonal boxes only (iso or aniso cell)");
    if (!domain->xperiodic || !domain->yperiodic || !domain->zperiodic)
      error->all(FLERR,
                 style + ": ensemble " + arg_ensemble(ensemble) +
                     " needs a box periodic in x, y and z");
    box_change |= BOX_CHANGE_SIZE;
    no_change_box = 1;
  }

  // a group other than all: its atoms are the ring polymers, the others (Wannier centroids
  // of fix dplr) are placed per bead (check_group() in init)
  subset = igroup != 0;
  if (cfg.method == AISCI_PIMD_CARTESIAN && cfg.fmmode == AISCI_PIMD_FM_NORMAL)
    error->all(FLERR, style + ": fmmode normal needs method nmpimd");
  if (cfg.method == AISCI_PIMD_CARTESIAN && nlocal_beads > 1)
    error->all(FLERR, style + ": beads_per_world > 1 needs method nmpimd");
  if (atom->map_style == 0)
    error->all(FLERR,
               style +
                   ": requires an atom map (add 'atom_modify map yes' before the box is defined)");

  nbeads = universe->nworlds * nlocal_beads;
  first_bead = universe->iworld * nlocal_beads;
  cfg.nbeads = nbeads;
  const int K = nlocal_beads;
  ext_width = 3 * K + 9 * (K - 1);
  measured.assign(K, aisci_pimd_bead_measure());

  time_integrate = 1;
  vector_flag = 1;
  global_freq = 1;
  extvector = -1;
  extlist = new int[AISCI_PIMD_MAXVALUES];
  aisci_status lst = aisci_pimd_output_layout(&cfg, &size_vector, extlist);
  if (lst != AISCI_OK) AISCI::fail_all(lmp, style, lst);
  restart_global = 1;
  restart_peratom = 1;
  peratom_width = 4 + 3 * K;    // centroid (3), centroid-virial KE, K bead positions
  maxexchange = ext_width + peratom_width;
  peratom_flag = 1;
  size_peratom_cols = peratom_width;
  peratom_freq = 1;
  nevery = 1;
  // every partition rebuilds its neighbor lists on the same steps (sync_neighbor_builds),
  // and extra beads may need a rebuild that LAMMPS cannot see coming
  force_reneighbor = 1;
  next_reneighbor = -1;
  for (double &e : est) e = 0.0;
  restart_watch.reset(new AISCI::RestartWatch(lmp, style));

  grow_arrays(atom->nmax);
  atom->add_callback(Atom::GROW);
  atom->add_callback(Atom::RESTART);
  for (int i = 0; i < atom->nlocal; i++) {
    for (int c = 0; c < ext_width; c++) ext[i][c] = 0.0;
    for (int c = 0; c < peratom_width; c++) peratom[i][c] = 0.0;
  }

  id_pe = std::string(id) + "_pe";
  id_press = std::string(id) + "_press";
  modify->add_compute(id_pe + " all pe");
  modify->add_compute(id_press + " all pressure NULL virial");
}

FixPIMDLangevinAisci::~FixPIMDLangevinAisci()
{
  aisci_pimd_step_destroy(stepper);
  aisci_pimd_destroy(pimd);
  aisci_beadcomm_destroy(beadcomm);
  atom->delete_callback(id, Atom::GROW);
  atom->delete_callback(id, Atom::RESTART);
  memory->destroy(ext);
  memory->destroy(peratom);
  delete[] extlist;
  if (modify->find_compute(id_pe) >= 0) modify->delete_compute(id_pe);
  if (modify->find_compute(id_press) >= 0) modify->delete_compute(id_press);
}

/* A restart file of the run's last step is checked here (end_of_step checks the others
 * on the step after they were written). */
void FixPIMDLangevinAisci::post_run()
{
  restart_watch->post_run();
  restore_ghost_cutoff();
}

int FixPIMDLangevinAisci::setmask()
{
  return INITIAL_INTEGRATE | PRE_EXCHANGE | POST_FORCE | FINAL_INTEGRATE | END_OF_STEP;
}

void FixPIMDLangevinAisci::fail(aisci_status st)
{
  AISCI::fail_one(lmp, STYLE, st);
}

void FixPIMDLangevinAisci::init()
{
  AISCI::note_partition_files(lmp);    // for error_one(): paths after any `log` command
  const std::string style(STYLE);
  if (atom->map_style == 0)
    error->all(FLERR,
               style +
                   ": requires an atom map (add 'atom_modify map yes' before the box is defined)");
  for (int i = 0; i < modify->nfix; i++) {
    Fix *f = modify->fix[i];
    if (f != this && f->time_integrate)
      error->all(FLERR,
                 style + ": fix " + f->id + " (" + f->style +
                     ") also integrates the atoms; pimd/langevin is a complete integrator");
  }
  ngroup = subset ? (double) group->count(igroup) : (double) atom->natoms;
  if (ngroup < 1.0)
    error->all(FLERR, style + ": group " + std::string(group->names[igroup]) +
                          " has no atoms (the ring-polymer atoms of the fix)");
  check_fixes();
  check_group();
  bool seen_self = false;
  for (int i = 0; i < modify->nfix; i++) {
    if (modify->fix[i] == this)
      seen_self = true;
    else if (seen_self && (modify->fmask[i] & POST_FORCE) && comm->me == 0 && universe->iworld == 0)
      error->warning(FLERR,
                     style + ": fix " + std::string(modify->fix[i]->id) +
                         " adds forces after pimd/langevin and its forces will be applied to "
                         "normal modes, not beads; define it before fix " +
                         id);
  }

  // units: kT, hbar (with sp, or reduced from the lj keyword), mass and force factors
  double hplanck = force->hplanck;
  if (strcmp(update->unit_style, "lj") == 0)
    hplanck = lj[3] / (lj[1] * sqrt(lj[2] * lj[4] * lj[0]));
  cfg.kT = force->boltz * temp;
  cfg.hbar = sp * hplanck / TWO_PI;
  cfg.dt = update->dt;
  cfg.mvv2e = force->mvv2e;
  cfg.ftm2v = force->ftm2v;
  cfg.pext = pext_user / force->nktv2p;
  cfg.natoms = ngroup;
  aisci_pimd_step_destroy(stepper);    // built again for the new integrator in setup()
  stepper = nullptr;
  aisci_pimd_destroy(pimd);
  pimd = nullptr;
  aisci_status st = aisci_pimd_create(&cfg, &pimd);
  if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);

  int ipe = modify->find_compute(id_pe), ipress = modify->find_compute(id_press);
  if (ipe < 0 || ipress < 0) error->all(FLERR, style + ": internal computes were deleted");
  c_pe = modify->compute[ipe];
  c_press = modify->compute[ipress];
}

void FixPIMDLangevinAisci::reset_dt()
{
  cfg.dt = update->dt;
  if (pimd) {
    aisci_status st = aisci_pimd_set_dt(pimd, update->dt);
    if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE, st);
  }
}

double FixPIMDLangevinAisci::volume() const
{
  return domain->xprd * domain->yprd * domain->zprd;
}

/* The local beads as the core's rows, in place (the table of set_bead_rows()); on a
 * group, the index list picks its atoms. */
aisci_pimd_local FixPIMDLangevinAisci::local_view()
{
  const int K = nlocal_beads;
  rows_q.resize(K);
  rows_v.resize(K);
  rows_f.resize(K);
  for (int l = 0; l < K; l++) {
    rows_q[l] = core_rows(l, Q);
    rows_v[l] = core_rows(l, V);
    rows_f[l] = core_rows(l, F);
  }
  aisci_pimd_local loc;
  loc.n = nring;
  loc.mass = mass.data();
  loc.tags = tags.data();
  loc.q = rows_q.data();
  loc.v = rows_v.data();
  loc.f = rows_f.data();
  return loc;
}

/* Per-atom columns 1-3: the centroids. */
aisci_pimd_rows FixPIMDLangevinAisci::centroid_rows()
{
  return {atom->nlocal > 0 ? &peratom[0][0] : nullptr, peratom_width, row_index()};
}

/* ---------------------------------------------------------------------- */

double FixPIMDLangevinAisci::sync_timeout()
{
  return AISCI::env_number(lmp, "AISCI_PIMD_SYNC_TIMEOUT", 300.0, 0.0, 1e9, false,
                           "a number of seconds >= 0 (0 = no limit)");
}

void FixPIMDLangevinAisci::setup(int vflag)
{
  // The first setup of the fix is its first collective over all partitions, where a
  // partition that started early (or whose partners never arrive) waits: one line in
  // each partition's log says so before the wait, whether it lasts or not (later setups
  // exchange beads already and do not wait for a missing partition). The line does not
  // name the environment variable: the error at the end of the wait does.
  if (!beadcomm && universe->nworlds > 1 && comm->me == 0) {
    const double timeout = sync_timeout();
    char limit[64];
    if (timeout > 0.0)
      std::snprintf(limit, sizeof limit, "up to %g s", timeout);
    else
      std::snprintf(limit, sizeof limit, "without a time limit");
    utils::logmesg(lmp, std::string(STYLE) + ": waiting " + limit + " for all " +
                            std::to_string(universe->nworlds) +
                            " partitions to reach the setup of this run\n");
    if (screen) std::fflush(screen);
    if (logfile) std::fflush(logfile);
  }
  check_partitions();    // may build the integrator again (partition 0's seed)
  aisci_pimd_step_destroy(stepper);
  stepper = nullptr;
  aisci_status sst = aisci_pimd_step_create(pimd, nlocal_beads, first_bead, fixcom, world,
                                            universe->uworld, beadcomm, &stepper);
  if (sst != AISCI_OK) AISCI::fail_all(lmp, STYLE, sst);
  declare_atoms();
  set_bead_rows();
  const int n = atom->nlocal, K = nlocal_beads, nr = nring;
  // atoms outside the group: no dynamics of their own, and until fix dplr places them for
  // a bead, every local bead's copy sits where the first bead's is
  if (subset)
    for (int i = 0; i < n; i++) {
      if (atom->mask[i] & groupbit) continue;
      double u[3];
      local_value(i, 0, X, u);
      for (int l = 0; l < K; l++) {
        if (l > 0) set_position(i, l, u);
        for (int d = 0; d < 3; d++) slot(i, l, V)[d] = 0.0;
      }
    }

  if (cfg.method == AISCI_PIMD_NMPIMD) {
    // Keep the stored normal modes (from the previous run or a restart file) if they
    // still reproduce the current positions, so a run split in two continues exactly;
    // otherwise (first run, or the user moved atoms) rebuild them from the positions,
    // the partition's other beads starting where its first bead is and with its
    // velocities (as if each bead were a partition running the same input).
    std::vector<double> modes, xb(3 * (size_t) nr);
    gather_all(Q, modes);
    int consistent = 1;
    for (int l = 0; l < K && consistent; l++) {
      for (int j = 0; j < nr; j++) local_value(ring_atom(j), l, X, &xb[3 * (size_t) j]);
      aisci_status st = aisci_pimd_modes_reproduce(pimd, gbead(l), nr, modes.data(), xb.data(),
                                                   1e-9, &consistent);
      if (st != AISCI_OK) fail(st);
    }
    int all_consistent;
    MPI_Allreduce(&consistent, &all_consistent, 1, MPI_INT, MPI_MIN, universe->uworld);
    if (!all_consistent) {
      for (int j = 0; j < nr; j++) {
        const int i = ring_atom(j);
        double u[3];
        local_value(i, 0, X, u);
        for (int l = 1; l < K; l++) {
          set_position(i, l, u);
          for (int d = 0; d < 3; d++) slot(i, l, V)[d] = slot(i, 0, V)[d];
        }
      }
      std::vector<double> beads;
      gather_all(X, beads);
      for (int l = 0; l < K; l++) {
        aisci_pimd_to_mode(pimd, gbead(l), nr, beads.data(), xb.data());
        put_slot(l, Q, xb);
      }
      aisci_pimd_to_mode(pimd, 0, nr, beads.data(), xb.data());
      modes.swap(xb);    // the centroid mode: all the centroids need
    }
    // centroids only (no bead rows): reads the first block of the modes
    rows_x.assign(K, aisci_pimd_rows{nullptr, 3, nullptr});
    aisci_status st =
        aisci_pimd_step_positions(stepper, nr, modes.data(), rows_x.data(), centroid_rows());
    if (st != AISCI_OK) fail(st);
  }
  setup_bead_lists();
  post_force(vflag);
  if (measure_step()) compute_estimators();
  schedule_estimators(false);
}

/* ---------------------------------------------------------------------- */

/* Scale the (orthogonal) box about the origin by the factors of the core's A steps (the
 * centroids moved with the cell; atoms outside the group move with it too, until fix dplr
 * places them from their parents before the forces). */
void FixPIMDLangevinAisci::scale_box(const double *factor)
{
  if (subset) scale_outside(factor);
  for (int d = 0; d < 3; d++) {
    domain->boxlo[d] *= factor[d];
    domain->boxhi[d] *= factor[d];
  }
  domain->set_global_box();
  domain->set_local_box();
  if (force->kspace) force->kspace->setup();
}

/* After the A step: gather all modes, x_b = sum_k C[b][k] q_k for the local beads,
 * written by the core in place into each bead's position rows, unwrapped; rows that
 * LAMMPS keeps wrapped (atom->x) then get the image shift taken off again. And the
 * centroids. */
void FixPIMDLangevinAisci::update_positions()
{
  if (cfg.method != AISCI_PIMD_NMPIMD) return;
  const int K = nlocal_beads, nr = nring;
  std::vector<double> &all_modes = buf_gathered;
  gather_all(Q, all_modes);
  rows_x.resize(K);
  for (int l = 0; l < K; l++) rows_x[l] = core_rows(l, X);
  aisci_status st =
      aisci_pimd_step_positions(stepper, nr, all_modes.data(), rows_x.data(), centroid_rows());
  if (st != AISCI_OK) fail(st);
  for (int l = 0; l < K; l++) {
    const BeadRows r = rows_of(l, X);
    if (!r.wrapped) continue;
    for (int j = 0; j < nr; j++) {
      const int i = ring_atom(j);
      double s[3];
      image_shift(i, s);
      double *p = r.base + (size_t) i * r.stride;
      for (int d = 0; d < 3; d++) p[d] -= s[d];
    }
  }
}

void FixPIMDLangevinAisci::initial_integrate(int)
{
  if (!atoms_declared) declare_atoms();
  schedule_estimators(true);
  const aisci_pimd_local loc = local_view();
  aisci_pimd_box_scaling box;
  aisci_status st = aisci_pimd_step_begin(stepper, &loc, &state, volume(), &box);
  if (st != AISCI_OK) fail(st);
  for (int k = 0; k < box.count; k++) scale_box(box.factor[k]);
  update_positions();
  sync_neighbor_builds();
}

void FixPIMDLangevinAisci::post_force(int vflag)
{
  if (neighbor->ago == 0 || !atoms_declared || declared_nlocal != atom->nlocal) declare_atoms();
  const bool measure = measure_step();
  const bool need_virial = barostat_on || measure;
  if (need_virial) measure_bead(0, measure);
  if (nlocal_beads > 1) {
    if (neighbor->ago == 0) {    // a rebuild (exchange, shell, lists) for the first bead
      xref.assign(&atom->x[0][0], &atom->x[0][0] + 3 * (size_t) atom->nlocal);
      xlist = xref;
    }
    extra_bead_forces(vflag, need_virial, measure);
  }
  store_bead_positions();
  transform_forces(measure);
}

/* Forces of each local bead (everything LAMMPS computed, plus fixes defined before this
 * one), exchanged with all partitions; the core turns them into forces on the local modes
 * (nmpimd) or adds the ring springs (pimd), and makes the sums the estimators and the cell
 * need. */
void FixPIMDLangevinAisci::transform_forces(bool measure)
{
  std::vector<double> &all = buf_gathered;
  // every partition's forces (nmpimd) or unwrapped positions (pimd), and the check that
  // every partition measures on this step
  gather_all(cfg.method == AISCI_PIMD_NMPIMD ? F : X, all, &measure);
  std::vector<double> &per = buf_peratom;    // per-atom centroid-virial shares
  per.assign(measure ? nring : 0, 0.0);
  const aisci_pimd_local loc = local_view();
  const bool modes = cfg.method == AISCI_PIMD_NMPIMD;
  aisci_status st = aisci_pimd_step_forces(stepper, &loc, &state, modes ? all.data() : nullptr,
                                           modes ? nullptr : all.data(), measured.data(),
                                           measure ? 1 : 0, per.data(), centroid_rows());
  if (st != AISCI_OK) fail(st);
  if (measure) store_peratom_kinetic(per);
}

void FixPIMDLangevinAisci::final_integrate()
{
  const aisci_pimd_local loc = local_view();
  aisci_status st = aisci_pimd_step_end(stepper, &loc, &state, volume());
  if (st != AISCI_OK) fail(st);
}
