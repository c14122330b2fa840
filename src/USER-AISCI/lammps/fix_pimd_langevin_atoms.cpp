/* fix pimd/langevin (USER-AISCI adapter), part 2: per-atom storage, restart files, the
 * atoms' masses, IDs and image shifts, the exchanges between partitions, and the force
 * evaluations of a partition's extra beads (beads_per_world > 1; their neighbor lists and
 * ghost shell: fix_pimd_langevin_neighbors.cpp).
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
#include "group.h"
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
  mass.resize(nring);
  for (int j = 0; j < nring; j++) {
    const int i = ring_atom(j);
    mass[j] = atom->rmass ? atom->rmass[i] : atom->mass[atom->type[i]];
  }
}

/* The ring-polymer atoms of this rank (all local atoms, or the group's) and their IDs,
 * which the bead exchange matches across partitions. */
void FixPIMDLangevinAisci::declare_atoms()
{
  const int n = atom->nlocal;
  if (subset) {
    members.clear();
    for (int i = 0; i < n; i++)
      if (atom->mask[i] & groupbit) members.push_back(i);
    nring = (int) members.size();
  } else {
    nring = n;
  }
  tags.resize(nring);
  for (int j = 0; j < nring; j++) tags[j] = (int64_t) atom->tag[ring_atom(j)];
  aisci_status st = aisci_beadcomm_set_atoms(beadcomm, nring, tags.data());
  if (st != AISCI_OK) fail(st);
  build_masses();
  atoms_declared = true;
  declared_nlocal = n;
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

/* Value of local bead/mode l of atom i for an exchange, positions unwrapped: as stored,
 * or (a wrapped row) shifted by the atom's image. */
void FixPIMDLangevinAisci::local_value(int i, int l, Slot s, double *out)
{
  const BeadRows &r = rows_of(l, s);
  const double *p = r.base + (size_t) i * r.stride;
  if (r.wrapped) {
    image_shift(i, out);
    for (int d = 0; d < 3; d++) out[d] += p[d];
  } else {
    for (int d = 0; d < 3; d++) out[d] = p[d];
  }
}

/* Positions of local bead l of atom i in the box, with the image of atom->x (what LAMMPS
 * computes a bead's forces from). */
void FixPIMDLangevinAisci::wrapped_position(int i, int l, double *out)
{
  const BeadRows &r = rows_of(l, X);
  const double *p = r.base + (size_t) i * r.stride;
  if (r.wrapped) {
    for (int d = 0; d < 3; d++) out[d] = p[d];
  } else {
    double s[3];
    image_shift(i, s);
    for (int d = 0; d < 3; d++) out[d] = p[d] - s[d];
  }
}

/* Store unwrapped positions u as local bead l's positions of atom i. */
void FixPIMDLangevinAisci::set_position(int i, int l, const double *u)
{
  const BeadRows &r = rows_of(l, X);
  double *p = r.base + (size_t) i * r.stride;
  if (r.wrapped) {
    double s[3];
    image_shift(i, s);
    for (int d = 0; d < 3; d++) p[d] = u[d] - s[d];
  } else {
    for (int d = 0; d < 3; d++) p[d] = u[d];
  }
}

/* Exchange quantity s of every local bead/mode with all partitions: out = nbeads blocks of
 * n x 3 (block b = bead or mode b of the local ring-polymer atoms, n = nring), one
 * collective. With measure != nullptr: *measure (0 or 1) of every partition travels along,
 * and all ranks stop together if the partitions differ (see transform_forces). */
void FixPIMDLangevinAisci::gather_all(Slot s, std::vector<double> &out, const bool *measure)
{
  const int n = nring, K = nlocal_beads, nw = universe->nworlds;
  const size_t w = 3 * (size_t) K;
  // one bead per partition, every atom a ring polymer and the rows contiguous n x 3 as
  // they are to be sent (not positions to unwrap): they go out in place and arrive
  // bead-major, no packing
  const BeadRows &r0 = rows_of(0, s);
  const bool direct = K == 1 && n > 0 && !subset && r0.stride == 3 && !r0.wrapped;
  double *all = buf_all.data();
  const double *mine = nullptr;
  if (direct) {
    out.resize(3 * (size_t) n * nbeads);
    mine = r0.base;
    all = out.data();
  } else {
    buf_mine.resize(w * n);
    buf_all.resize(w * n * nw);
    for (int j = 0; j < n; j++)
      for (int l = 0; l < K; l++) local_value(ring_atom(j), l, s, &buf_mine[w * j + 3 * l]);
    mine = buf_mine.data();
    all = buf_all.data();
  }
  int fmin = 0, fmax = 0;
  aisci_status st = aisci_beadcomm_allgather_flag(beadcomm, (int) w, mine, all,
                                                  measure && *measure ? 1 : 0, &fmin, &fmax);
  if (st != AISCI_OK) exchange_failed(st);
  if (fmin != fmax)
    AISCI::error_universe_all(
        lmp, FLERR,
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

/* The table of row views (fix_pimd_langevin.h): the one place that says where each local
 * bead's quantities live. Local bead 0 is the bead LAMMPS computes forces for: its
 * velocities, forces and (wrapped) positions are atom->v, atom->f and atom->x, and for
 * method pimd its q (the bead's positions) is atom->x too. The modes' q (nmpimd) and the
 * other beads' velocities, forces and unwrapped positions are ext slots. Called whenever
 * LAMMPS grows the per-atom arrays (grow_arrays, after atom->x/v/f moved) and at setup. */
void FixPIMDLangevinAisci::set_bead_rows()
{
  const int K = nlocal_beads;
  double *e = ext ? &ext[0][0] : nullptr;
  double *x = atom->x ? &atom->x[0][0] : nullptr;
  double *v = atom->v ? &atom->v[0][0] : nullptr;
  double *f = atom->f ? &atom->f[0][0] : nullptr;
  auto in_ext = [&](int column) {
    return BeadRows{e ? e + column : nullptr, ext_width, false};
  };
  bead_rows.resize(4 * (size_t) K);
  for (int l = 0; l < K; l++) {
    const bool lammps = l == 0;
    bead_rows[(size_t) Q * K + l] =
        lammps && cfg.method == AISCI_PIMD_CARTESIAN ? BeadRows{x, 3, true} : in_ext(3 * l);
    bead_rows[(size_t) V * K + l] = lammps ? BeadRows{v, 3, false} : in_ext(3 * K + 3 * (l - 1));
    bead_rows[(size_t) F * K + l] = lammps ? BeadRows{f, 3, false}
                                           : in_ext(6 * K - 3 + 3 * (l - 1));
    bead_rows[(size_t) X * K + l] = lammps ? BeadRows{x, 3, true} : in_ext(9 * K - 6 + 3 * (l - 1));
  }
}

/* Rows of quantity s of local bead l for the core: in place, the group's atoms picked by
 * the index list. */
aisci_pimd_rows FixPIMDLangevinAisci::core_rows(int l, Slot s) const
{
  const BeadRows &r = rows_of(l, s);
  return {atom->nlocal > 0 ? r.base : nullptr, r.stride, row_index()};
}

/* Slot s of local bead l of every ring-polymer atom from `in` (nring x 3). */
void FixPIMDLangevinAisci::put_slot(int l, Slot s, const std::vector<double> &in)
{
  for (int j = 0; j < nring; j++) {
    double *p = slot(ring_atom(j), l, s);
    p[0] = in[3 * j];
    p[1] = in[3 * j + 1];
    p[2] = in[3 * j + 2];
  }
}

/* Unwrapped Cartesian positions of the K local beads into per-atom columns 5.. 4 + 3K
 * (bead first_bead + l in columns 5 + 3l .. 7 + 3l), for dumps of every bead when a
 * partition holds several. Called after the forces, when atom->x holds bead 0 again.
 * Atoms outside the group have no centroid: columns 1-3 hold their position in the
 * partition's first bead, column 4 (kinetic energy) zero. */
void FixPIMDLangevinAisci::store_bead_positions()
{
  const int n = atom->nlocal;
  for (int l = 0; l < nlocal_beads; l++)
    for (int i = 0; i < n; i++) local_value(i, l, X, peratom[i] + 4 + 3 * l);
  if (subset)
    for (int i = 0; i < n; i++) {
      if (atom->mask[i] & groupbit) continue;
      for (int d = 0; d < 3; d++) peratom[i][d] = peratom[i][4 + d];
      peratom[i][3] = 0.0;
    }
}

/* ---------------------------------------------------------------------- extra beads */

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

  for (int l = 1; l < nlocal_beads; l++) {
    // ring-polymer atoms at bead l; atoms outside the group where bead l last had them
    // (fix dplr's pre_force places them from bead l's parents)
    x = atom->x;    // LAMMPS's arrays as they are now (set_bead_rows() follows them too)
    for (int i = 0; i < n; i++) wrapped_position(i, l, x[i]);
    comm->forward_comm();
    lists_for_bead(l);
    const int nall = atom->nlocal + atom->nghost;
    f = atom->f;
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
    for (int j = 0; j < nring; j++) {    // bead l's forces on the ring-polymer atoms
      const int i = ring_atom(j);
      double *fl = slot(i, l, F);
      for (int d = 0; d < 3; d++) fl[d] = f[i][d];
    }
    if (subset) store_outside_positions(l);
  }
  x = atom->x;
  memcpy(&x[0][0], x0.data(), sizeof(double) * 3 * n);
  comm->forward_comm();
  lists_for_first_bead();
  f = atom->f;    // a list build may have grown the arrays
  memcpy(&f[0][0], f0.data(), sizeof(double) * 3 * n);
}

/* Atoms outside the group, after fix dplr placed them for local bead l (>= 1): their
 * unwrapped positions in that bead's slot, so that each bead keeps its own. */
void FixPIMDLangevinAisci::store_outside_positions(int l)
{
  double **x = atom->x;
  for (int i = 0; i < atom->nlocal; i++) {
    if (atom->mask[i] & groupbit) continue;
    double u[3];
    image_shift(i, u);
    for (int d = 0; d < 3; d++) u[d] += x[i][d];
    set_position(i, l, u);
  }
}

/* The cell of ensemble nph/npt scaled the centroids about the origin by `factor`: the
 * atoms outside the group (in every local bead) follow, so that they stay inside the new
 * box next to their parents until fix dplr places them again. */
void FixPIMDLangevinAisci::scale_outside(const double *factor)
{
  for (int i = 0; i < atom->nlocal; i++) {
    if (atom->mask[i] & groupbit) continue;
    for (int l = 0; l < nlocal_beads; l++)
      for (int d = 0; d < 3; d++) slot(i, l, X)[d] *= factor[d];
  }
}

/* ---------------------------------------------------------------------- restart */

/* Global restart record: partitions, this partition, seed (low, high 32 bits), noise
 * counter (high, low), the record's layout version, cell momenta (3), beads per partition
 * (11 values, layout 0), then the method (0 nmpimd, 1 pimd) and the number of atoms in
 * the fix's group (layout 1, 13 values). Layout 0 files still read (group all). */
static const double RESTART_LAYOUT = 1.0;
static const int RESTART_VALUES = 13;

void FixPIMDLangevinAisci::write_restart(FILE *fp)
{
  double list[RESTART_VALUES];
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
  list[11] = cfg.method == AISCI_PIMD_NMPIMD ? 0.0 : 1.0;
  list[12] = ngroup;    // counted in init()
  if (comm->me == 0) {
    int size = RESTART_VALUES * sizeof(double);
    fwrite(&size, sizeof(int), 1, fp);
    fwrite(list, sizeof(double), RESTART_VALUES, fp);
  }
}

void FixPIMDLangevinAisci::restart(char *buf)
{
  double *list = (double *) buf;
  if (list[6] != 0.0 && list[6] != RESTART_LAYOUT)
    error->all(FLERR,
               std::string("fix pimd/langevin: restart record has layout version ") +
                   std::to_string(lround(list[6])) + ", this build reads versions 0 and " +
                   std::to_string(lround(RESTART_LAYOUT)) +
                   " (file written by a newer version of USER-AISCI)");
  const int p = (int) list[0], b = (int) list[1], k = (int) list[10];
  if (p != universe->nworlds || b != universe->iworld || k != nlocal_beads)
    error->all(FLERR,
               std::string("fix pimd/langevin: restart file was written by partition ") +
                   std::to_string(b) + " of " + std::to_string(p) + " with beads_per_world " +
                   std::to_string(k) + ", but this is partition " +
                   std::to_string(universe->iworld) + " of " + std::to_string(universe->nworlds) +
                   " with beads_per_world " + std::to_string(nlocal_beads) +
                   " (read each partition's own file)");
  if (list[6] >= 1.0) {
    const int method = cfg.method == AISCI_PIMD_NMPIMD ? 0 : 1;
    static const char *methods[2] = {"nmpimd", "pimd"};
    if ((int) list[11] != method)
      error->all(FLERR, std::string("fix pimd/langevin: restart file was written with method ") +
                            methods[(int) list[11] != 0] + ", but this fix has method " +
                            methods[method] +
                            " (its velocities are those of the other method's coordinates); "
                            "use method " + methods[(int) list[11] != 0]);
    const double n = subset ? (double) group->count(igroup) : (double) atom->natoms;
    if (list[12] != n)
      error->all(FLERR, std::string("fix pimd/langevin: restart file has ") +
                            std::to_string((long long) list[12]) +
                            " ring-polymer atoms (the fix's group), but group " +
                            group->names[igroup] + " holds " + std::to_string((long long) n) +
                            " now; use the group the restart file was written with");
  }
  state.noise_counter = ((uint64_t) list[4] << 32) | (uint64_t) list[5];
  for (int d = 0; d < 3; d++) state.cell.p[d] = list[7 + d];
}

/* ---------------------------------------------------------------------- per-atom */

void FixPIMDLangevinAisci::grow_arrays(int nmax)
{
  memory->grow(ext, nmax, ext_width, "pimd/langevin:ext");
  memory->grow(peratom, nmax, peratom_width, "pimd/langevin:peratom");
  array_atom = peratom;
  set_bead_rows();    // LAMMPS grew atom->x, v, f before calling this
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
      (double) (buf_all.capacity() + buf_mine.capacity() + mass.capacity() +
                xref.capacity() + xlist.capacity()) *
      sizeof(double) +
      (double) members.capacity() * sizeof(int) + (double) tags.capacity() * sizeof(int64_t);
}

AISCI_REGISTER_FIX("pimd/langevin", FixPIMDLangevinAisci,
                   "path-integral MD, beads over partitions, PILE-L, BZP/MTTK barostats");
