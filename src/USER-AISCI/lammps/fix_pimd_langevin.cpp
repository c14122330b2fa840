/* fix pimd/langevin (USER-AISCI adapter). See fix_pimd_langevin.h and
 * docs/fix_pimd_langevin.md.
 *
 * Storage convention (as upstream's fix of this name): partition b holds bead b.
 * atom->x holds the Cartesian bead positions, atom->v the velocities of normal mode b
 * (method nmpimd) or of bead b (method pimd), and after post_force atom->f holds the
 * force on normal mode b (nmpimd). The fix keeps the unwrapped normal-mode coordinate
 * q_b of every local atom in a per-atom array that migrates with the atoms.
 *
 * One time step (OBABO): o_step(dt/2) b_step(dt/2) a_step(dt) -> exchange q, build x
 * -> LAMMPS forces -> exchange f, transform -> b_step(dt/2) o_step(dt/2). */
#include "fix_pimd_langevin.h"

#include "aisci_lmp.h"

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
    Fix(lmp, narg, arg), pimd(nullptr), beadcomm(nullptr), noise_counter(0), barostat_on(0),
    pext_user(1.0), qmode(nullptr), peratom(nullptr),
    atoms_declared(false), c_pe(nullptr), c_press(nullptr), est_step(-1), xf_local(0.0),
    xcf_local(0.0), spring_local(0.0)
{
  const std::string style(STYLE);
  cfg = aisci_pimd_config_default();
  temp = 298.15;
  sp = 1.0;
  for (double &v : lj) v = 1.0;
  fixcom = 1;
  cfg.seed = 975481;
  int ensemble = PIMD_ENS_NVT;
  int seed_given = 0;

  int iarg = 3;
  while (iarg < narg) {
    const std::string key = arg[iarg];
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
      if (key == "taup") cfg.taup = v;
      else if (key == "fmass") cfg.fmass = v;
      else if (key == "scale") cfg.scale = v;
      else if (key == "temp") temp = v;
      else if (key == "tau") cfg.tau = v;
      else if (key == "sp") sp = v;
      iarg += 2;
    } else if (key == "thermostat") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 2);
      AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"PILE_L"});
      long seed = AISCI::parse_int(lmp, style, "thermostat seed", arg[iarg + 2]);
      if (seed <= 0)
        error->all(FLERR, style + ": thermostat seed must be a positive integer, got " +
                              std::string(arg[iarg + 2]));
      cfg.seed = (uint64_t) seed;
      seed_given = 1;
      iarg += 3;
    } else if (key == "iso" || key == "aniso") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
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
    } else if (key == "lj") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 5);
      static const char *names[5] = {"lj epsilon", "lj sigma", "lj mass", "lj planck", "lj mvv2e"};
      for (int k = 0; k < 5; k++) {
        lj[k] = AISCI::parse_double(lmp, style, names[k], arg[iarg + 1 + k]);
        if (!(lj[k] > 0.0))
          error->all(FLERR, style + ": " + names[k] + " must be > 0, got " +
                                std::string(arg[iarg + 1 + k]));
      }
      iarg += 6;
    } else {
      error->all(FLERR, style + ": unknown keyword '" + key +
                            "' (expected method, integrator, ensemble, fmmode, fmass, sp, scale, "
                            "temp, thermostat, tau, iso, aniso, barostat, taup, fixcom or lj)");
    }
  }
  (void) seed_given;
  static const aisci_pimd_ensemble ens_map[4] = {AISCI_PIMD_NVE, AISCI_PIMD_NVT, AISCI_PIMD_NPH,
                                                 AISCI_PIMD_NPT};
  cfg.ensemble = ens_map[ensemble];
  barostat_on = ensemble >= PIMD_ENS_NPH;
  if (barostat_on) {
    if (cfg.method != AISCI_PIMD_NMPIMD)
      error->all(FLERR, style + ": ensemble " + arg_ensemble(ensemble) + " needs method nmpimd");
    if (domain->triclinic)
      error->all(FLERR, style + ": ensemble " + arg_ensemble(ensemble) +
                            " supports orthogonal boxes only (iso or aniso cell)");
    if (!domain->xperiodic || !domain->yperiodic || !domain->zperiodic)
      error->all(FLERR, style + ": ensemble " + arg_ensemble(ensemble) +
                            " needs a box periodic in x, y and z");
    box_change |= BOX_CHANGE_SIZE;
    no_change_box = 1;
  }

  if (igroup != 0)
    error->all(FLERR, style + ": must be applied to group all (every atom is a ring polymer)");
  if (cfg.method == AISCI_PIMD_CARTESIAN && cfg.fmmode == AISCI_PIMD_FM_NORMAL)
    error->all(FLERR, style + ": fmmode normal needs method nmpimd");
  if (atom->map_style == 0)
    error->all(FLERR, style + ": requires an atom map (add 'atom_modify map yes' before the box is defined)");

  nbeads = universe->nworlds;
  bead = universe->iworld;
  cfg.nbeads = nbeads;

  time_integrate = 1;
  vector_flag = 1;
  size_vector = AISCI_PIMD_NVALUES;
  if (barostat_on) size_vector += cfg.pstyle == AISCI_PIMD_ISO ? 5 : 7;
  global_freq = 1;
  extvector = -1;
  extlist = new int[AISCI_PIMD_NVALUES + 7]{1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  if (barostat_on && cfg.pstyle == AISCI_PIMD_ANISO) extlist[11] = extlist[12] = 0;
  cell.p[0] = cell.p[1] = cell.p[2] = 0.0;
  cell_vir_local[0] = cell_vir_local[1] = cell_vir_local[2] = 0.0;
  restart_global = 1;
  restart_peratom = 1;
  maxexchange = 7;
  peratom_flag = 1;
  size_peratom_cols = 4;
  peratom_freq = 1;
  nevery = 1;
  for (double &e : est) e = 0.0;

  // every partition must hold the same atoms; checked here so no exchange can hang later
  bigint nmin, nmax, nat = atom->natoms;
  MPI_Allreduce(&nat, &nmin, 1, MPI_LMP_BIGINT, MPI_MIN, universe->uworld);
  MPI_Allreduce(&nat, &nmax, 1, MPI_LMP_BIGINT, MPI_MAX, universe->uworld);
  if (nmin != nmax)
    error->universe_all(FLERR, style + ": all partitions (beads) must have the same number of atoms, found " +
                                   std::to_string(nmin) + " and " + std::to_string(nmax));

  aisci_status st = aisci_beadcomm_create(universe->uworld, world, nbeads, bead, &beadcomm);
  if (st != AISCI_OK) {
    std::string msg = std::string(STYLE) + ": " + aisci_last_error() +
        " (run with -partition PxM: P beads of M ranks each)";
    error->universe_all(FLERR, msg);
  }

  grow_arrays(atom->nmax);
  atom->add_callback(Atom::GROW);
  atom->add_callback(Atom::RESTART);
  for (int i = 0; i < atom->nlocal; i++) {
    qmode[i][0] = qmode[i][1] = qmode[i][2] = 0.0;
    for (int c = 0; c < 4; c++) peratom[i][c] = 0.0;
  }

  id_pe = std::string(id) + "_pe";
  id_press = std::string(id) + "_press";
  modify->add_compute(id_pe + " all pe");
  modify->add_compute(id_press + " all pressure NULL virial");
}

FixPIMDLangevinAisci::~FixPIMDLangevinAisci()
{
  aisci_pimd_destroy(pimd);
  aisci_beadcomm_destroy(beadcomm);
  atom->delete_callback(id, Atom::GROW);
  atom->delete_callback(id, Atom::RESTART);
  memory->destroy(qmode);
  memory->destroy(peratom);
  delete[] extlist;
  if (modify->find_compute(id_pe) >= 0) modify->delete_compute(id_pe);
  if (modify->find_compute(id_press) >= 0) modify->delete_compute(id_press);
}

int FixPIMDLangevinAisci::setmask()
{
  return INITIAL_INTEGRATE | POST_FORCE | FINAL_INTEGRATE | END_OF_STEP;
}

void FixPIMDLangevinAisci::fail(aisci_status st) { AISCI::fail_one(lmp, STYLE, st); }

void FixPIMDLangevinAisci::init()
{
  const std::string style(STYLE);
  if (atom->map_style == 0)
    error->all(FLERR, style + ": requires an atom map (add 'atom_modify map yes' before the box is defined)");
  for (int i = 0; i < modify->nfix; i++) {
    Fix *f = modify->fix[i];
    if (f != this && f->time_integrate)
      error->all(FLERR, style + ": fix " + f->id + " (" + f->style +
                            ") also integrates the atoms; pimd/langevin is a complete integrator");
  }
  bool seen_self = false;
  for (int i = 0; i < modify->nfix; i++) {
    if (modify->fix[i] == this) seen_self = true;
    else if (seen_self && (modify->fmask[i] & POST_FORCE) && comm->me == 0 && universe->iworld == 0)
      error->warning(FLERR, style + ": fix " + std::string(modify->fix[i]->id) +
                                " adds forces after pimd/langevin and its forces will be applied to "
                                "normal modes, not beads; define it before fix " + id);
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
  cfg.natoms = (double) atom->natoms;
  aisci_pimd_destroy(pimd);
  pimd = nullptr;
  aisci_status st = aisci_pimd_create(&cfg, &pimd);
  if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);

  int ipe = modify->find_compute(id_pe), ipress = modify->find_compute(id_press);
  if (ipe < 0 || ipress < 0) error->all(FLERR, style + ": internal computes were deleted");
  c_pe = modify->compute[ipe];
  c_press = modify->compute[ipress];
}

void FixPIMDLangevinAisci::reset_dt() { cfg.dt = update->dt; }

/* ---------------------------------------------------------------------- */

void FixPIMDLangevinAisci::build_masses()
{
  const int n = atom->nlocal;
  mass.resize(n);
  if (atom->rmass) {
    for (int i = 0; i < n; i++) mass[i] = atom->rmass[i];
  } else {
    for (int i = 0; i < n; i++) mass[i] = atom->mass[atom->type[i]];
  }
}

void FixPIMDLangevinAisci::declare_atoms()
{
  const int n = atom->nlocal;
  tags.resize(n);
  for (int i = 0; i < n; i++) tags[i] = (int64_t) atom->tag[i];
  aisci_status st = aisci_beadcomm_set_atoms(beadcomm, n, tags.data());
  if (st != AISCI_OK) fail(st);
  build_masses();
  atoms_declared = true;
}

void FixPIMDLangevinAisci::image_shift(int i, double *s) const
{
  const imageint img = atom->image[i];
  const int xb = (img & IMGMASK) - IMGMAX;
  const int yb = (img >> IMGBITS & IMGMASK) - IMGMAX;
  const int zb = (img >> IMG2BITS) - IMGMAX;
  if (domain->triclinic) {
    const double *h = domain->h;
    s[0] = h[0] * xb + h[5] * yb + h[4] * zb;
    s[1] = h[1] * yb + h[3] * zb;
    s[2] = h[2] * zb;
  } else {
    s[0] = domain->xprd * xb;
    s[1] = domain->yprd * yb;
    s[2] = domain->zprd * zb;
  }
}

void FixPIMDLangevinAisci::setup(int vflag)
{
  declare_atoms();
  const int n = atom->nlocal;
  double **x = atom->x;

  if (cfg.method == AISCI_PIMD_NMPIMD) {
    // Keep the stored normal modes (from the previous run or a restart file) if they
    // still reproduce the current positions, so a run split in two continues exactly;
    // otherwise (first run, or the user moved atoms) rebuild them from the positions.
    buf_mine.resize(3 * (size_t) n);
    buf_all.resize(3 * (size_t) n * nbeads);
    buf_mode.resize(3 * (size_t) n);
    for (int i = 0; i < n; i++)
      for (int d = 0; d < 3; d++) buf_mine[3 * i + d] = qmode[i][d];
    aisci_status st = aisci_beadcomm_allgather(beadcomm, 3, buf_mine.data(), buf_all.data());
    if (st != AISCI_OK) fail(st);
    aisci_pimd_to_bead(pimd, bead, n, buf_all.data(), buf_mode.data());
    int consistent = 1;
    for (int i = 0; i < n && consistent; i++) {
      double s[3];
      image_shift(i, s);
      for (int d = 0; d < 3; d++)
        if (fabs(buf_mode[3 * i + d] - s[d] - x[i][d]) > 1e-9 * (1.0 + fabs(x[i][d]))) consistent = 0;
    }
    int all_consistent;
    MPI_Allreduce(&consistent, &all_consistent, 1, MPI_INT, MPI_MIN, universe->uworld);
    if (!all_consistent) {
      for (int i = 0; i < n; i++) {
        double s[3];
        image_shift(i, s);
        for (int d = 0; d < 3; d++) buf_mine[3 * i + d] = x[i][d] + s[d];
      }
      st = aisci_beadcomm_allgather(beadcomm, 3, buf_mine.data(), buf_all.data());
      if (st != AISCI_OK) fail(st);
      aisci_pimd_to_mode(pimd, bead, n, buf_all.data(), buf_mode.data());
      for (int i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) qmode[i][d] = buf_mode[3 * i + d];
      aisci_pimd_to_mode(pimd, 0, n, buf_all.data(), buf_mode.data());
      store_centroids(buf_mode.data());
    } else {
      store_centroids(buf_all.data());
    }
  }
  post_force(vflag);
  if (update->eflag_global == update->ntimestep && update->vflag_global == update->ntimestep)
    compute_estimators();
  schedule_estimators();
}

/* ---------------------------------------------------------------------- */

void FixPIMDLangevinAisci::o_step(double h)
{
  if (barostat_on) cell_noise(h);
  if (cfg.ensemble != AISCI_PIMD_NVT && cfg.ensemble != AISCI_PIMD_NPT) return;
  aisci_status st = aisci_pimd_o_step(pimd, bead, atom->nlocal, tags.data(), mass.data(),
                                      &atom->v[0][0], h, noise_counter++);
  if (st != AISCI_OK) fail(st);
  if (fixcom) remove_com_velocity();
}

void FixPIMDLangevinAisci::b_step(double h)
{
  aisci_status st = aisci_pimd_b_step(pimd, bead, atom->nlocal, mass.data(), &atom->f[0][0],
                                      &atom->v[0][0], h);
  if (st != AISCI_OK) fail(st);
}

void FixPIMDLangevinAisci::a_step(double h)
{
  aisci_status st;
  if (barostat_on) {
    // the centroid moves with the cell; internal modes are free ring-polymer modes
    double alpha[3];
    st = aisci_pimd_cell_rates(pimd, &cell, alpha);
    if (st == AISCI_OK && bead == 0)
      st = aisci_pimd_cell_a_centroid(pimd, alpha, atom->nlocal, &qmode[0][0], &atom->v[0][0], h);
    else if (st == AISCI_OK)
      st = aisci_pimd_a_step(pimd, bead, atom->nlocal, &qmode[0][0], &atom->v[0][0], h);
    if (st != AISCI_OK) fail(st);
    scale_box(alpha, h);
    return;
  }
  if (cfg.method == AISCI_PIMD_NMPIMD)
    st = aisci_pimd_a_step(pimd, bead, atom->nlocal, &qmode[0][0], &atom->v[0][0], h);
  else
    st = aisci_pimd_a_step(pimd, bead, atom->nlocal, &atom->x[0][0], &atom->v[0][0], h);
  if (st != AISCI_OK) fail(st);
}

/* Scale the (orthogonal) box about the origin by exp(alpha_d h), as the centroids. */
void FixPIMDLangevinAisci::scale_box(const double *alpha, double h)
{
  for (int d = 0; d < 3; d++) {
    const double f = exp(alpha[d] * h);
    domain->boxlo[d] *= f;
    domain->boxhi[d] *= f;
  }
  domain->set_global_box();
  domain->set_local_box();
  if (force->kspace) force->kspace->setup();
}

/* Cell kick: universe sums of the centroid kinetic tensor (mode 0) and of the centroid
 * virial of all beads (stored by post_force), then p += h * force. */
void FixPIMDLangevinAisci::cell_kick(double h)
{
  double local[6] = {0, 0, 0, cell_vir_local[0], cell_vir_local[1], cell_vir_local[2]}, sum[6];
  if (bead == 0) {
    aisci_status st = aisci_pimd_kinetic_tensor(pimd, 0, atom->nlocal, mass.data(), &atom->v[0][0], local);
    if (st != AISCI_OK) fail(st);
  }
  aisci_status st = aisci_beadcomm_sum_universe(beadcomm, 6, local, sum);
  if (st != AISCI_OK) fail(st);
  double force_cell[3];
  const double volume = domain->xprd * domain->yprd * domain->zprd;
  st = aisci_pimd_cell_force(pimd, sum, sum + 3, volume, force_cell);
  if (st == AISCI_OK) st = aisci_pimd_cell_b_step(pimd, &cell, force_cell, h);
  if (st != AISCI_OK) fail(st);
}

void FixPIMDLangevinAisci::cell_noise(double h)
{
  aisci_status st = aisci_pimd_cell_o_step(pimd, &cell, h, noise_counter);
  if (st != AISCI_OK) fail(st);
}

/* The centroid's centre-of-mass velocity is removed from mode 0 (partition 0 only). */
void FixPIMDLangevinAisci::remove_com_velocity()
{
  if (cfg.method == AISCI_PIMD_NMPIMD && bead != 0) return;
  const int n = atom->nlocal;
  double **v = atom->v;
  double local[4] = {0, 0, 0, 0}, sum[4];
  for (int i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++) local[d] += mass[i] * v[i][d];
    local[3] += mass[i];
  }
  MPI_Allreduce(local, sum, 4, MPI_DOUBLE, MPI_SUM, world);
  if (cfg.method == AISCI_PIMD_CARTESIAN) {
    // Cartesian: the centroid momentum is the sum over beads
    double u[4];
    MPI_Allreduce(sum, u, 4, MPI_DOUBLE, MPI_SUM, universe->uworld);
    for (int d = 0; d < 4; d++) sum[d] = u[d];
  }
  for (int d = 0; d < 3; d++) sum[d] /= sum[3];
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) v[i][d] -= sum[d];
}

/* After the A step: gather all modes, x_b = sum_k C[b][k] q_k, re-apply the image shift. */
void FixPIMDLangevinAisci::update_positions()
{
  if (cfg.method != AISCI_PIMD_NMPIMD) return;
  const int n = atom->nlocal;
  double **x = atom->x;
  buf_mine.resize(3 * (size_t) n);
  buf_all.resize(3 * (size_t) n * nbeads);
  buf_mode.resize(3 * (size_t) n);
  memcpy(buf_mine.data(), &qmode[0][0], sizeof(double) * 3 * n);
  aisci_status st = aisci_beadcomm_allgather(beadcomm, 3, buf_mine.data(), buf_all.data());
  if (st != AISCI_OK) fail(st);
  aisci_pimd_to_bead(pimd, bead, n, buf_all.data(), buf_mode.data());
  for (int i = 0; i < n; i++) {
    double s[3];
    image_shift(i, s);
    for (int d = 0; d < 3; d++) x[i][d] = buf_mode[3 * i + d] - s[d];
  }
  store_centroids(buf_all.data());
}

/* Energy and virial are tallied only on steps some compute asks for. Ask for the next
 * thermo step, where the estimators are output; thermo itself only schedules the
 * computes it prints. */
void FixPIMDLangevinAisci::schedule_estimators()
{
  if (barostat_on) c_press->addstep(update->ntimestep + 1);    // the cell needs it every step
  if (output->next_thermo > update->ntimestep) {
    c_pe->addstep(output->next_thermo);
    c_press->addstep(output->next_thermo);
  }
}

void FixPIMDLangevinAisci::initial_integrate(int)
{
  if (!atoms_declared) declare_atoms();
  schedule_estimators();
  const double dt = update->dt;
  if (cfg.integrator == AISCI_PIMD_OBABO) {
    o_step(0.5 * dt);
    if (barostat_on) cell_kick(0.5 * dt);
    b_step(0.5 * dt);
    a_step(dt);
  } else {
    if (barostat_on) cell_kick(0.5 * dt);
    b_step(0.5 * dt);
    a_step(0.5 * dt);
    o_step(dt);
    a_step(0.5 * dt);
  }
  update_positions();
}

/* Forces of this bead (everything LAMMPS computed, plus fixes defined before this one):
 * nmpimd: exchange and transform to the force on mode b; pimd: add the ring springs. */
void FixPIMDLangevinAisci::transform_forces()
{
  const int n = atom->nlocal;
  double **f = atom->f;
  const bool measure = update->eflag_global == update->ntimestep &&
      update->vflag_global == update->ntimestep;
  buf_mine.resize(3 * (size_t) n);
  buf_all.resize(3 * (size_t) n * nbeads);
  buf_mode.resize(3 * (size_t) n);
  aisci_status st;
  if (cfg.method == AISCI_PIMD_NMPIMD) {
    memcpy(buf_mine.data(), &f[0][0], sizeof(double) * 3 * n);
    st = aisci_beadcomm_allgather(beadcomm, 3, buf_mine.data(), buf_all.data());
    if (st != AISCI_OK) fail(st);
    aisci_pimd_to_mode(pimd, bead, n, buf_all.data(), &f[0][0]);
    if (barostat_on) {
      // centroid virial of this bead, per direction: W_j,dd - sum_i (x - xc)_d f_d; in
      // modes the second term is sum over k >= 1 of q_k . f_k, owned by partition k
      double w[3] = {0.0, 0.0, 0.0};
      if (bead > 0)
        for (int i = 0; i < n; i++)
          for (int d = 0; d < 3; d++) w[d] -= qmode[i][d] * f[i][d];
      if (comm->me == 0) {
        c_press->compute_vector();
        const double volume = domain->xprd * domain->yprd * domain->zprd;
        for (int d = 0; d < 3; d++) w[d] += volume * c_press->vector[d] / force->nktv2p;
      }
      for (int d = 0; d < 3; d++) cell_vir_local[d] = w[d];
      if (comm->me != 0) c_press->compute_vector();
    }
    if (measure) {
      // per atom: q_b . f_b of this mode; the sum over modes k >= 1 is the atom's
      // centroid virial sum_j (x_j - xc) . f_j, gathered for the per-atom output
      double s = 0.0;
      for (int i = 0; i < n; i++) {
        const double a = qmode[i][0] * f[i][0] + qmode[i][1] * f[i][1] + qmode[i][2] * f[i][2];
        buf_mine[i] = bead > 0 ? a : 0.0;
        s += a;
      }
      xf_local = s;
      st = aisci_beadcomm_allgather(beadcomm, 1, buf_mine.data(), buf_all.data());
      if (st != AISCI_OK) fail(st);
      const double kt15 = 1.5 * cfg.kT;
      for (int i = 0; i < n; i++) {
        double c = 0.0;
        for (int b = 1; b < nbeads; b++) c += buf_all[(size_t) b * n + i];
        peratom[i][3] = kt15 - 0.5 * c / nbeads;
      }
    }
    return;
  }
  // Cartesian beads: gather unwrapped positions, add spring forces of bead b
  double **x = atom->x;
  for (int i = 0; i < n; i++) {
    double s[3];
    image_shift(i, s);
    for (int d = 0; d < 3; d++) buf_mine[3 * i + d] = x[i][d] + s[d];
  }
  st = aisci_beadcomm_allgather(beadcomm, 3, buf_mine.data(), buf_all.data());
  if (st != AISCI_OK) fail(st);
  aisci_pimd_to_mode(pimd, 0, n, buf_all.data(), buf_mode.data());
  store_centroids(buf_mode.data());
  if (measure) {
    // x.f and (x - centroid).f with the physical forces, before the springs are added
    const double inv_sqrt_p = 1.0 / sqrt((double) nbeads);
    double s = 0.0, sc = 0.0;
    std::vector<double> per(n);
    for (int i = 0; i < n; i++) {
      double a = 0.0;
      for (int d = 0; d < 3; d++) {
        s += buf_mine[3 * i + d] * f[i][d];
        a += (buf_mine[3 * i + d] - inv_sqrt_p * buf_mode[3 * i + d]) * f[i][d];
      }
      per[i] = a;
      sc += a;
    }
    xf_local = s;
    xcf_local = sc;
    std::vector<double> all((size_t) n * nbeads);
    st = aisci_beadcomm_allgather(beadcomm, 1, per.data(), all.data());
    if (st != AISCI_OK) fail(st);
    for (int i = 0; i < n; i++) {
      double c = 0.0;
      for (int b = 0; b < nbeads; b++) c += all[(size_t) b * n + i];
      peratom[i][3] = 1.5 * cfg.kT - 0.5 * c / nbeads;
    }
  }
  spring_local = aisci_pimd_spring_bead(pimd, bead, n, mass.data(), buf_all.data(), &f[0][0]);
}

void FixPIMDLangevinAisci::post_force(int)
{
  if (neighbor->ago == 0 || !atoms_declared || (int) tags.size() != atom->nlocal) declare_atoms();
  transform_forces();
}

void FixPIMDLangevinAisci::final_integrate()
{
  const double dt = update->dt;
  b_step(0.5 * dt);
  if (barostat_on) cell_kick(0.5 * dt);
  if (cfg.integrator == AISCI_PIMD_OBABO) o_step(0.5 * dt);
}

void FixPIMDLangevinAisci::end_of_step()
{
  if (update->eflag_global == update->ntimestep && update->vflag_global == update->ntimestep)
    compute_estimators();
}

/* Collect the per-bead sums over the universe and build the output vector. Called on
 * steps where LAMMPS tallied energy and virial (thermo steps): the same steps in every
 * partition, so the collective calls match. */
void FixPIMDLangevinAisci::compute_estimators()
{
  const int n = atom->nlocal;
  double **v = atom->v;
  // per-bead local sums: kinetic, spring, xf, xcf, centroid KE (physical masses)
  double kin = aisci_pimd_kinetic(pimd, bead, n, mass.data(), &v[0][0]);
  double spring = 0.0, xf = xf_local, xcf = 0.0, kcen = 0.0;
  if (cfg.method == AISCI_PIMD_NMPIMD) {
    spring = aisci_pimd_spring_mode(pimd, bead, n, mass.data(), &qmode[0][0]);
    xcf = bead > 0 ? xf_local : 0.0;
    if (bead == 0) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += mass[i] * (v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]);
      kcen = 0.5 * force->mvv2e * s / nbeads;
    }
  } else {
    spring = spring_local;
    xcf = xcf_local;
    // centroid velocity = mean of the bead velocities
    buf_mine.resize(3 * (size_t) n);
    buf_all.resize(3 * (size_t) n * nbeads);
    buf_mode.resize(3 * (size_t) n);
    memcpy(buf_mine.data(), &v[0][0], sizeof(double) * 3 * n);
    aisci_status st = aisci_beadcomm_allgather(beadcomm, 3, buf_mine.data(), buf_all.data());
    if (st != AISCI_OK) fail(st);
    if (bead == 0) {
      aisci_pimd_to_mode(pimd, 0, n, buf_all.data(), buf_mode.data());
      double s = 0.0;
      for (int i = 0; i < 3 * n; i++) s += mass[i / 3] * buf_mode[i] * buf_mode[i];
      kcen = 0.5 * force->mvv2e * s / nbeads;
    }
  }
  // bead-resolved reduction: slot b of each quantity
  const int NQ = 6;
  std::vector<double> local((size_t) NQ * nbeads + 1, 0.0), total((size_t) NQ * nbeads + 1);
  double *l = local.data() + (size_t) NQ * bead;
  l[0] = kin;
  l[1] = spring;
  l[3] = xf;
  l[4] = xcf;
  local[(size_t) NQ * nbeads] = kcen;
  // potential energy and virial are already summed over the partition by the computes
  if (comm->me == 0) {
    l[2] = c_pe->compute_scalar();
    const double volume = domain->xprd * domain->yprd * domain->zprd;
    l[5] = 3.0 * volume * c_press->compute_scalar() / force->nktv2p;
  } else {
    c_pe->compute_scalar();
    c_press->compute_scalar();
  }
  aisci_status st = aisci_beadcomm_sum_universe(beadcomm, NQ * nbeads + 1, local.data(), total.data());
  if (st != AISCI_OK) fail(st);
  std::vector<aisci_pimd_bead_sums> sums(nbeads);
  for (int b = 0; b < nbeads; b++) {
    const double *t = total.data() + (size_t) NQ * b;
    sums[b].kinetic = t[0];
    sums[b].spring = t[1];
    sums[b].potential = t[2];
    sums[b].xf = t[3];
    sums[b].xcf = t[4];
    sums[b].virial = t[5];
  }
  const double volume = domain->xprd * domain->yprd * domain->zprd;
  st = aisci_pimd_estimators(pimd, bead, sums.data(), (double) atom->natoms,
                             total[(size_t) NQ * nbeads], volume, force->nktv2p, est);
  if (st != AISCI_OK) fail(st);
  if (barostat_on) {
    // barostat velocity (strain rate), cell kinetic, potential and Jacobian energies,
    // and the conserved enthalpy-like quantity of the extended ring polymer
    double alpha[3], e[3];
    st = aisci_pimd_cell_rates(pimd, &cell, alpha);
    if (st == AISCI_OK) st = aisci_pimd_cell_energies(pimd, &cell, volume, e);
    if (st != AISCI_OK) fail(st);
    int m = AISCI_PIMD_NVALUES;
    if (cfg.pstyle == AISCI_PIMD_ISO) est[m++] = alpha[0];
    else for (int d = 0; d < 3; d++) est[m++] = alpha[d];
    est[m++] = e[0];
    est[m++] = e[1];
    est[m++] = e[2];
    est[m++] = est[3] + e[0] + e[1] + e[2];
  }
  est_step = update->ntimestep;
}

double FixPIMDLangevinAisci::compute_vector(int i)
{
  if (est_step != update->ntimestep)
    error->all(FLERR, std::string(STYLE) + ": output vector requested on step " +
                          std::to_string(update->ntimestep) +
                          ", but it is only computed on steps where LAMMPS tallies energy and "
                          "virial (thermo output steps); use f_" + id +
                          " in thermo_style or at multiples of the thermo interval");
  return est[i];
}

/* ---------------------------------------------------------------------- restart */

void FixPIMDLangevinAisci::write_restart(FILE *fp)
{
  double list[5] = {(double) nbeads, (double) bead, (double) (cfg.seed & 0xffffffffu),
                    (double) (cfg.seed >> 32), 0.0};
  // the noise counter may exceed 2^53 only after ~10^15 steps; stored as two halves
  double hi = (double) (noise_counter >> 32), lo = (double) (noise_counter & 0xffffffffu);
  if (comm->me == 0) {
    int size = 10 * sizeof(double);
    fwrite(&size, sizeof(int), 1, fp);
    fwrite(list, sizeof(double), 4, fp);
    fwrite(&hi, sizeof(double), 1, fp);
    fwrite(&lo, sizeof(double), 1, fp);
    fwrite(&list[4], sizeof(double), 1, fp);
    fwrite(cell.p, sizeof(double), 3, fp);
  }
}

void FixPIMDLangevinAisci::restart(char *buf)
{
  double *list = (double *) buf;
  const int p = (int) list[0], b = (int) list[1];
  if (p != nbeads || b != bead)
    error->all(FLERR, std::string(STYLE) + ": restart file was written by bead " + std::to_string(b) +
                          " of " + std::to_string(p) + ", but this is bead " + std::to_string(bead) +
                          " of " + std::to_string(nbeads) + " (read each partition's own file)");
  noise_counter = ((uint64_t) list[4] << 32) | (uint64_t) list[5];
  for (int d = 0; d < 3; d++) cell.p[d] = list[7 + d];
}

/* ---------------------------------------------------------------------- per-atom */

void FixPIMDLangevinAisci::grow_arrays(int nmax)
{
  memory->grow(qmode, nmax, 3, "pimd/langevin:qmode");
  memory->grow(peratom, nmax, 4, "pimd/langevin:peratom");
  array_atom = peratom;
}

void FixPIMDLangevinAisci::copy_arrays(int i, int j, int)
{
  for (int c = 0; c < 3; c++) qmode[j][c] = qmode[i][c];
  for (int c = 0; c < 4; c++) peratom[j][c] = peratom[i][c];
}

int FixPIMDLangevinAisci::pack_exchange(int i, double *buf)
{
  for (int c = 0; c < 3; c++) buf[c] = qmode[i][c];
  for (int c = 0; c < 4; c++) buf[3 + c] = peratom[i][c];
  return 7;
}

int FixPIMDLangevinAisci::unpack_exchange(int i, double *buf)
{
  for (int c = 0; c < 3; c++) qmode[i][c] = buf[c];
  for (int c = 0; c < 4; c++) peratom[i][c] = buf[3 + c];
  return 7;
}

/* Centroids from the centroid mode (n x 3, unwrapped): xc = q_0 / sqrt(P). */
void FixPIMDLangevinAisci::store_centroids(const double *mode0)
{
  const double s = 1.0 / sqrt((double) nbeads);
  for (int i = 0; i < atom->nlocal; i++)
    for (int d = 0; d < 3; d++) peratom[i][d] = s * mode0[3 * i + d];
}

int FixPIMDLangevinAisci::pack_restart(int i, double *buf)
{
  buf[0] = 4;
  buf[1] = qmode[i][0];
  buf[2] = qmode[i][1];
  buf[3] = qmode[i][2];
  return 4;
}

void FixPIMDLangevinAisci::unpack_restart(int nlocal, int nth)
{
  double **extra = atom->extra;
  int m = 0;
  for (int k = 0; k < nth; k++) m += static_cast<int>(extra[nlocal][m]);
  m++;
  qmode[nlocal][0] = extra[nlocal][m++];
  qmode[nlocal][1] = extra[nlocal][m++];
  qmode[nlocal][2] = extra[nlocal][m++];
}

int FixPIMDLangevinAisci::size_restart(int) { return 4; }
int FixPIMDLangevinAisci::maxsize_restart() { return 4; }

double FixPIMDLangevinAisci::memory_usage()
{
  return (double) atom->nmax * 7 * sizeof(double) +
      (double) (buf_all.capacity() + buf_mine.capacity() + buf_mode.capacity() + mass.capacity()) *
      sizeof(double);
}

AISCI_REGISTER_FIX("pimd/langevin", FixPIMDLangevinAisci,
                   "path-integral MD, one bead per partition, PILE-L thermostat");
