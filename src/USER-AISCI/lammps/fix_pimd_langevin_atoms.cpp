/* fix pimd/langevin (USER-AISCI adapter), part 2: per-atom storage, restart files, the
 * atoms' masses, IDs and image shifts, the exchanges between partitions, and the force
 * evaluations of a partition's extra beads (beads_per_world > 1).
 * See fix_pimd_langevin.h. */
#include "fix_pimd_langevin.h"

#include "aisci_lmp.h"

#include "angle.h"
#include "atom.h"
#include "bond.h"
#include "comm.h"
#include "compute.h"
#include "dihedral.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "improper.h"
#include "kspace.h"
#include "memory.h"
#include "modify.h"
#include "neighbor.h"
#include "pair.h"
#include "universe.h"
#include "update.h"

#include <cmath>
#include <cstring>

using namespace LAMMPS_NS;
using namespace FixConst;

/* -------------------------------------------------------- atoms, exchanges */

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

/* Value of local bead/mode l of atom i for an exchange: slots as stored, except that the
 * positions of the first local bead are its unwrapped atom->x. */
void FixPIMDLangevinAisci::local_value(int i, int l, Slot s, double *out)
{
  if (s == X && l == 0) {
    image_shift(i, out);
    for (int d = 0; d < 3; d++) out[d] += atom->x[i][d];
  } else {
    const double *p = slot(i, l, s);
    for (int d = 0; d < 3; d++) out[d] = p[d];
  }
}

/* Exchange quantity s of every local bead/mode with all partitions: out = nbeads blocks of
 * n x 3 (block b = bead or mode b of the local atoms), one collective. With
 * measure != nullptr: *measure (0 or 1) of every partition travels along, and all ranks
 * stop together if the partitions differ (see transform_forces). */
void FixPIMDLangevinAisci::gather_all(Slot s, std::vector<double> &out, const bool *measure)
{
  const int n = atom->nlocal, K = nlocal_beads, nw = universe->nworlds;
  const size_t w = 3 * (size_t) K;
  // one bead per partition: the stored rows (ext, atom->v, atom->f: contiguous n x 3) go
  // out as they are and arrive bead-major, no packing
  const bool direct = K == 1 && s != X && n > 0;
  double *all = buf_all.data();
  const double *mine = nullptr;
  if (direct) {
    out.resize(3 * (size_t) n * nbeads);
    mine = slot(0, 0, s);
    all = out.data();
  } else {
    buf_mine.resize(w * n);
    buf_all.resize(w * n * nw);
    for (int i = 0; i < n; i++)
      for (int l = 0; l < K; l++) local_value(i, l, s, &buf_mine[w * i + 3 * l]);
    mine = buf_mine.data();
    all = buf_all.data();
  }
  int fmin = 0, fmax = 0;
  aisci_status st = aisci_beadcomm_allgather_flag(beadcomm, (int) w, mine, all,
                                                  measure && *measure ? 1 : 0, &fmin, &fmax);
  if (st != AISCI_OK) exchange_failed(st);
  if (fmin != fmax)
    error->universe_all(
        FLERR,
        "fix pimd/langevin: partitions (beads) differ on whether step " +
            std::to_string((long long) update->ntimestep) +
            " computes the estimators: LAMMPS tallied energy and virial in some partitions "
            "only, because what asks for them (thermo output, fix ave/time, fix print, "
            "dumps or variables using f_" +
            std::string(id) +
            " or the energy or pressure) differs between partitions; every partition "
            "must run the same input");
  if (direct) return;
  out.resize(3 * (size_t) n * nbeads);
  // partition-major (world, atom, local bead) -> bead-major blocks of n x 3
  for (int wld = 0; wld < nw; wld++)
    for (int i = 0; i < n; i++)
      for (int l = 0; l < K; l++)
        memcpy(&out[(size_t) (wld * K + l) * 3 * n + 3 * i],
               &buf_all[(size_t) wld * w * n + w * i + 3 * l], 3 * sizeof(double));
}

/* ---------------------------------------------------------------------- per-atom slots */

double *FixPIMDLangevinAisci::slot(int i, int l, Slot s)
{
  const int K = nlocal_beads;
  switch (s) {
    case Q:
      return &ext[i][3 * l];
    case V:
      return l == 0 ? atom->v[i] : &ext[i][3 * K + 3 * (l - 1)];
    case F:
      return l == 0 ? atom->f[i] : &ext[i][6 * K - 3 + 3 * (l - 1)];
    case X:
      return &ext[i][9 * K - 6 + 3 * (l - 1)];    // l >= 1 only
  }
  return nullptr;
}

void FixPIMDLangevinAisci::put_slot(int l, Slot s, const std::vector<double> &in)
{
  const int n = atom->nlocal;
  for (int i = 0; i < n; i++) {
    double *p = slot(i, l, s);
    p[0] = in[3 * i];
    p[1] = in[3 * i + 1];
    p[2] = in[3 * i + 2];
  }
}

/* Unwrapped Cartesian positions of the K local beads into per-atom columns 5.. 4 + 3K
 * (bead first_bead + l in columns 5 + 3l .. 7 + 3l), for dumps of every bead when a
 * partition holds several. Called after the forces, when atom->x holds bead 0 again. */
void FixPIMDLangevinAisci::store_bead_positions()
{
  double **x = atom->x;
  for (int i = 0; i < atom->nlocal; i++) {
    double s[3];
    image_shift(i, s);
    for (int d = 0; d < 3; d++) peratom[i][4 + d] = x[i][d] + s[d];
    for (int l = 1; l < nlocal_beads; l++) {
      const double *xb = slot(i, l, X);
      for (int d = 0; d < 3; d++) peratom[i][4 + 3 * l + d] = xb[d];
    }
  }
}

/* ---------------------------------------------------------------------- extra beads */

/* Neighbor-list builds, decided over the universe so that every partition rebuilds on
 * the same steps. Each partition's lists cover its first local bead: when LAMMPS's own
 * distance check (neighbor every/delay/check yes) is due on the coming step and fires in
 * some partition, every partition rebuilds now. A partition that rebuilt alone would make
 * the others wait for it at the next bead exchange, and rebuild one or two steps later
 * itself, making them wait again.
 * With several beads per partition (K > 1) the lists were built for the first local
 * bead's positions (xref); an extra bead is covered while it stays within half the skin
 * of them: request a rebuild when one strays further, and stop if the ring polymer
 * itself is wider than half the skin. One Allreduce over the universe per step. */
void FixPIMDLangevinAisci::sync_neighbor_builds()
{
  const int ago = neighbor->ago + 1;    // decide() counts this step before checking
  const bool lammps_checks = neighbor->dist_check && !neighbor->build_once;
  const bool due = lammps_checks && ago >= neighbor->delay && ago % neighbor->every == 0;
  if (nlocal_beads == 1) {
    if (!lammps_checks) return;    // LAMMPS builds on fixed steps, the same in every partition
    int local = due ? neighbor->check_distance() : 0, global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, universe->uworld);
    if (global) next_reneighbor = update->ntimestep;
    return;
  }
  const int n = atom->nlocal;
  double local[3] = {0.0, 0.0, due ? (double) neighbor->check_distance() : 0.0}, global[3];
  double **x = atom->x;
  const bool have_ref = xref.size() == 3 * (size_t) n;
  for (int l = 1; l < nlocal_beads; l++)
    for (int i = 0; i < n; i++) {
      double s[3], dref = 0.0, dspread = 0.0;
      image_shift(i, s);
      const double *xb = slot(i, l, X);
      for (int d = 0; d < 3; d++) {
        const double xw = xb[d] - s[d];
        const double a = have_ref ? xw - xref[3 * i + d] : 0.0, b = xw - x[i][d];
        dref += a * a;
        dspread += b * b;
      }
      local[0] = fmax(local[0], dref);
      local[1] = fmax(local[1], dspread);
    }
  MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_MAX, universe->uworld);
  const double trigger = 0.5 * neighbor->skin;
  if (global[1] >= trigger * trigger)
    error->universe_all(FLERR,
                        std::string("fix pimd/langevin: beads of one partition are ") +
                            std::to_string(sqrt(global[1])) +
                            " apart, more than half the neighbor skin (" +
                            std::to_string(neighbor->skin) +
                            "); increase the skin (neighbor command) or use fewer "
                            "beads_per_world");
  if (!have_ref || global[0] > trigger * trigger || global[2] > 0.0)
    next_reneighbor = update->ntimestep;
}

/* LAMMPS computed the forces of the first local bead. For each other local bead: put its
 * positions into atom->x, run the same force computation a Verlet step (or its setup)
 * does (pre_force fixes, pair, bond styles, kspace, pre_reverse fixes, reverse
 * communication, then the post_force fixes defined before this one), keep the Cartesian
 * forces, and finally restore the first bead. */
void FixPIMDLangevinAisci::extra_bead_forces(int vflag, bool virial, bool energy)
{
  const int n = atom->nlocal;
  double **x = atom->x, **f = atom->f;
  std::vector<double> x0(&x[0][0], &x[0][0] + 3 * (size_t) n);
  std::vector<double> f0(&f[0][0], &f[0][0] + 3 * (size_t) n);
  // the energy and virial flags the integrator set for this step (Integrate::ev_set):
  // vflag is passed on; per-atom energy is on when a per-atom energy compute asks for
  // this step (update->eflag_atom starts at 0, so it cannot tell at step 0)
  const bigint step = update->ntimestep;
  int eflag = update->eflag_global == step ? 1 : 0;
  for (int i = 0; i < modify->ncompute; i++)
    if (modify->compute[i]->peatomflag && modify->compute[i]->matchstep(step)) eflag |= 2;
  const int vf = vflag;
  int me_index = -1;
  for (int i = 0; i < modify->nfix; i++)
    if (modify->fix[i] == this) me_index = i;

  std::vector<double> fb;
  for (int l = 1; l < nlocal_beads; l++) {
    for (int i = 0; i < n; i++) {
      double s[3];
      image_shift(i, s);
      const double *xb = slot(i, l, X);
      for (int d = 0; d < 3; d++) x[i][d] = xb[d] - s[d];
    }
    comm->forward_comm();
    const int nall = atom->nlocal + atom->nghost;
    memset(&f[0][0], 0, sizeof(double) * 3 * nall);
    // fixes acting before the forces (e.g. fix dplr placing Wannier centroids) see this
    // bead, as they would in a partition of its own
    if (update->setupflag)
      modify->setup_pre_force(vf);
    else if (modify->n_pre_force)
      modify->pre_force(vf);
    if (force->pair && force->pair->compute_flag) force->pair->compute(eflag, vf);
    if (atom->molecular) {
      if (force->bond) force->bond->compute(eflag, vf);
      if (force->angle) force->angle->compute(eflag, vf);
      if (force->dihedral) force->dihedral->compute(eflag, vf);
      if (force->improper) force->improper->compute(eflag, vf);
    }
    if (force->kspace && force->kspace->compute_flag) force->kspace->compute(eflag, vf);
    if (update->setupflag)
      modify->setup_pre_reverse(eflag, vf);
    else if (modify->n_pre_reverse)
      modify->pre_reverse(eflag, vf);
    if (force->newton) comm->reverse_comm();
    for (int i = 0; i < me_index; i++)
      if (modify->fmask[i] & POST_FORCE) modify->fix[i]->post_force(vflag);
    if (virial) measure_bead(l, energy);
    fb.assign(&f[0][0], &f[0][0] + 3 * (size_t) n);
    put_slot(l, F, fb);
  }
  memcpy(&x[0][0], x0.data(), sizeof(double) * 3 * n);
  comm->forward_comm();
  memcpy(&f[0][0], f0.data(), sizeof(double) * 3 * n);
}

/* ---------------------------------------------------------------------- restart */

/* Global restart record, 11 values: partitions, this partition, seed (low, high 32 bits),
 * noise counter (high, low), the record's layout version (0), cell momenta (3), beads per
 * partition. */
static const double RESTART_LAYOUT = 0.0;

void FixPIMDLangevinAisci::write_restart(FILE *fp)
{
  double list[11];
  list[0] = universe->nworlds;
  list[1] = universe->iworld;
  list[2] = (double) (cfg.seed & 0xffffffffu);
  list[3] = (double) (cfg.seed >> 32);
  list[4] = (double) (state.noise_counter >> 32);
  list[5] = (double) (state.noise_counter & 0xffffffffu);
  list[6] = RESTART_LAYOUT;
  list[7] = state.cell.p[0];
  list[8] = state.cell.p[1];
  list[9] = state.cell.p[2];
  list[10] = nlocal_beads;
  if (comm->me == 0) {
    int size = 11 * sizeof(double);
    fwrite(&size, sizeof(int), 1, fp);
    fwrite(list, sizeof(double), 11, fp);
  }
}

void FixPIMDLangevinAisci::restart(char *buf)
{
  double *list = (double *) buf;
  if (list[6] != RESTART_LAYOUT)
    error->all(FLERR,
               std::string("fix pimd/langevin: restart record has layout version ") +
                   std::to_string(list[6]) + ", this build reads version " +
                   std::to_string(RESTART_LAYOUT) +
                   " (file written by another version of USER-AISCI)");
  const int p = (int) list[0], b = (int) list[1], k = (int) list[10];
  if (p != universe->nworlds || b != universe->iworld || k != nlocal_beads)
    error->all(FLERR,
               std::string("fix pimd/langevin: restart file was written by partition ") +
                   std::to_string(b) + " of " + std::to_string(p) + " with beads_per_world " +
                   std::to_string(k) + ", but this is partition " +
                   std::to_string(universe->iworld) + " of " + std::to_string(universe->nworlds) +
                   " with beads_per_world " + std::to_string(nlocal_beads) +
                   " (read each partition's own file)");
  state.noise_counter = ((uint64_t) list[4] << 32) | (uint64_t) list[5];
  for (int d = 0; d < 3; d++) state.cell.p[d] = list[7 + d];
}

/* ---------------------------------------------------------------------- per-atom */

void FixPIMDLangevinAisci::grow_arrays(int nmax)
{
  memory->grow(ext, nmax, ext_width, "pimd/langevin:ext");
  memory->grow(peratom, nmax, peratom_width, "pimd/langevin:peratom");
  array_atom = peratom;
}

void FixPIMDLangevinAisci::copy_arrays(int i, int j, int)
{
  memcpy(ext[j], ext[i], sizeof(double) * ext_width);
  memcpy(peratom[j], peratom[i], sizeof(double) * peratom_width);
}

int FixPIMDLangevinAisci::pack_exchange(int i, double *buf)
{
  memcpy(buf, ext[i], sizeof(double) * ext_width);
  memcpy(buf + ext_width, peratom[i], sizeof(double) * peratom_width);
  return ext_width + peratom_width;
}

int FixPIMDLangevinAisci::unpack_exchange(int i, double *buf)
{
  memcpy(ext[i], buf, sizeof(double) * ext_width);
  memcpy(peratom[i], buf + ext_width, sizeof(double) * peratom_width);
  return ext_width + peratom_width;
}

int FixPIMDLangevinAisci::pack_restart(int i, double *buf)
{
  buf[0] = ext_width + 1;
  memcpy(buf + 1, ext[i], sizeof(double) * ext_width);
  return ext_width + 1;
}

void FixPIMDLangevinAisci::unpack_restart(int nlocal, int nth)
{
  double **extra = atom->extra;
  int m = 0;
  for (int k = 0; k < nth; k++) m += static_cast<int>(extra[nlocal][m]);
  m++;
  memcpy(ext[nlocal], &extra[nlocal][m], sizeof(double) * ext_width);
}

int FixPIMDLangevinAisci::size_restart(int)
{
  return ext_width + 1;
}
int FixPIMDLangevinAisci::maxsize_restart()
{
  return ext_width + 1;
}

double FixPIMDLangevinAisci::memory_usage()
{
  return (double) atom->nmax * (ext_width + peratom_width) * sizeof(double) +
      (double) (buf_all.capacity() + buf_mine.capacity() + buf_one.capacity() + mass.capacity() +
                xref.capacity()) *
      sizeof(double);
}

AISCI_REGISTER_FIX("pimd/langevin", FixPIMDLangevinAisci,
                   "path-integral MD, beads over partitions, PILE-L, BZP/MTTK barostats");
