/* fix pimd/langevin (USER-AISCI adapter), part 5: neighbor lists and the ghost shell when
 * a partition holds several beads (beads_per_world K > 1). See fix_pimd_langevin.h.
 *
 * LAMMPS builds one set of neighbor lists and one ghost shell per partition, from the
 * positions in atom->x at a build: those of the partition's first local bead. The other
 * K - 1 beads of an atom sit up to the ring polymer's width away from it (about 1 A for
 * hydrogen at 300 K), which no fixed skin bounds. Two things must hold for every bead:
 *   - ghost shell: every atom within the ghost cutoff of the subdomain, at that bead's
 *     positions, is a ghost. The shell is built from the first bead's positions at the
 *     last exchange (xref) and is widened by 2 x ghost_margin (comm->cutghostuser), so it
 *     covers a bead while every atom of it stays within ghost_margin + skin/2 of xref. The
 *     margin is chosen at rebuilds from the ring polymers' width (margin_for), applied
 *     before that rebuild's exchange (pre_exchange), and 0 (the shell LAMMPS would build
 *     anyway) while the beads stay within 7/16 of the skin of the first bead.
 *   - neighbor lists (and the candidate graphs pair aisci and fix dplr build at each
 *     LAMMPS build): built for the first bead's positions (xlist), they serve a bead whose
 *     atoms all stay within skin/2 of xlist. A bead further away gets lists of its own,
 *     built from its positions in the shell (neighbor->build) before its forces, and the
 *     first bead's lists are built again after the last bead (extra_bead_forces).
 * Rebuilds (exchange, borders, lists) stay on the same steps in every partition: one
 * Allreduce over the universe per step decides them. So no bead spread stops a run: a wide
 * ring polymer costs a wider shell and, while it lasts, K + 1 list builds per step instead
 * of one per rebuild; at the usual skin (beads within skin/2 of each other) nothing changes. */
#include "fix_pimd_langevin.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "modify.h"
#include "neighbor.h"
#include "universe.h"
#include "update.h"
#include "utils.h"

#include <cmath>
#include <cstdio>
#include <string>

using namespace LAMMPS_NS;

/* The ghost margin for ring polymers `spread` wide (the largest distance of a bead from
 * the first local bead of its atom): 0 while they fit within 3/8 of the skin (the lists
 * and shell of a one-bead partition, rebuilt a little more often), otherwise 1.25 x the
 * spread rounded up to an eighth of the skin: at least half the skin to move before the
 * next rebuild, as in a one-bead partition, and room for the ring polymers to widen a
 * little before the shell must grow again. */
double FixPIMDLangevinAisci::margin_for(double spread) const
{
  const double skin = neighbor->skin, step = 0.125 * skin;
  if (spread <= 3.0 * step || step <= 0.0) return 0.0;
  return ceil(1.25 * spread / step) * step;
}

/* Widen (or restore) LAMMPS's ghost cutoff by 2 x margin: comm->cutghostuser is the only
 * ghost cutoff LAMMPS lets a fix set, and comm->setup() reads it at the next exchange. */
void FixPIMDLangevinAisci::set_ghost_margin(double margin)
{
  ghost_margin = margin;
  if (cutghost_user < 0.0) return;    // outside a run: applied at the next setup
  comm->cutghostuser = margin > 0.0 ? ghost_base + 2.0 * margin : cutghost_user;
}

/* Before the setup's exchange: the shell of the previous run's margin (0 at first), over
 * the ghost cutoff the styles asked for in this run's init. */
void FixPIMDLangevinAisci::setup_pre_exchange()
{
  if (nlocal_beads == 1) return;
  if (comm->mode != Comm::SINGLE)
    error->all(FLERR, std::string("fix pimd/langevin: beads_per_world > 1 needs comm_modify "
                                  "mode single (the ghost shell is widened to cover every "
                                  "bead of a partition)"));
  cutghost_user = comm->cutghostuser;
  ghost_base = fmax(neighbor->cutneighmax, cutghost_user);
  set_ghost_margin(ghost_margin);
}

/* Set the margin; say so in the log when the shell grows (`spread`: the ring polymers'
 * width that asked for it). */
void FixPIMDLangevinAisci::widen_shell(double margin, double spread)
{
  if (margin > ghost_margin && comm->me == 0) {
    char line[200];
    snprintf(line, sizeof line,
             "fix pimd/langevin: step " BIGINT_FORMAT ": ghost shell widened by 2 x %.4g "
             "(ring polymers up to %.4g wide, skin %.4g)\n",
             update->ntimestep, margin, spread, neighbor->skin);
    utils::logmesg(lmp, std::string(line));
  }
  set_ghost_margin(margin);
}

/* On a rebuild step, before LAMMPS's exchange and borders: a margin decided this step
 * (sync_neighbor_builds) takes effect in this rebuild's ghost shell. */
void FixPIMDLangevinAisci::pre_exchange()
{
  if (nlocal_beads == 1 || margin_next < 0.0) return;
  widen_shell(margin_next, spread_seen);
  margin_next = -1.0;
  comm->setup();
  if (neighbor->style) neighbor->setup_bins();
}

/* After a run, LAMMPS's own ghost cutoff again (the margin is kept for the next run). */
void FixPIMDLangevinAisci::restore_ghost_cutoff()
{
  if (cutghost_user >= 0.0) comm->cutghostuser = cutghost_user;
  cutghost_user = -1.0;
  margin_next = -1.0;
}

/* Largest squared distances, over this rank's atoms, of each extra local bead l >= 1 from
 * the first bead's current positions (spread[l]) and from the positions in `ref_a` and
 * `ref_b` (from_a[l], from_b[l]; local first-bead positions, 3 per atom, or empty: 0),
 * in one pass over the beads; all 0 for l = 0. from_a and from_b may be null. */
void FixPIMDLangevinAisci::bead_distances(const std::vector<double> &ref_a,
                                          const std::vector<double> &ref_b, double *spread,
                                          double *from_a, double *from_b)
{
  const int n = atom->nlocal;
  double **x = atom->x;
  const bool have_a = from_a && ref_a.size() == 3 * (size_t) n;
  const bool have_b = from_b && ref_b.size() == 3 * (size_t) n;
  for (int l = 0; l < nlocal_beads; l++) {
    spread[l] = 0.0;
    if (from_a) from_a[l] = 0.0;
    if (from_b) from_b[l] = 0.0;
  }
  for (int l = 1; l < nlocal_beads; l++)
    for (int i = 0; i < n; i++) {
      double xl[3], u2 = 0.0, a2 = 0.0, b2 = 0.0;
      wrapped_position(i, l, xl);
      for (int d = 0; d < 3; d++) {
        const double xw = xl[d];
        const double u = xw - x[i][d];
        const double a = have_a ? xw - ref_a[3 * i + d] : 0.0;
        const double b = have_b ? xw - ref_b[3 * i + d] : 0.0;
        u2 += u * u;
        a2 += a * a;
        b2 += b * b;
      }
      spread[l] = fmax(spread[l], u2);
      if (have_a) from_a[l] = fmax(from_a[l], a2);
      if (have_b) from_b[l] = fmax(from_b[l], b2);
    }
}

/* Neighbor-list builds, decided over the universe so that every partition rebuilds on
 * the same steps. When LAMMPS's own distance check (neighbor every/delay/check yes) is due
 * on the coming step and fires in some partition, every partition rebuilds now: a
 * partition that rebuilt alone would make the others wait for it at the next bead
 * exchange, and rebuild one or two steps later itself, making them wait again.
 * With K > 1 (see the top of this file) a rebuild is also due when a bead leaves the ghost
 * shell's reach, or when a bead needs lists of its own and a rebuild would give it the
 * first bead's again; the ghost margin is chosen then, and each extra bead is marked for
 * lists of its own (own_lists) when it is half a skin from the first bead's lists. */
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
  const int n = atom->nlocal, K = nlocal_beads;
  // [0] LAMMPS's check fired, [1] first bead from xref, then per bead l: [2 + l] spread
  // from the first bead now, [2 + K + l] distance from xlist, [2 + 2K + l] from xref
  std::vector<double> &local = buf_sync;
  local.assign(2 + 3 * (size_t) K, 0.0);
  local[0] = due ? (double) neighbor->check_distance() : 0.0;
  double **x = atom->x;
  const bool have_ref = xref.size() == 3 * (size_t) n && xlist.size() == 3 * (size_t) n;
  if (have_ref)
    for (int i = 0; i < n; i++) {
      double r = 0.0;
      for (int d = 0; d < 3; d++) r += (x[i][d] - xref[3 * i + d]) * (x[i][d] - xref[3 * i + d]);
      local[1] = fmax(local[1], r);
    }
  bead_distances(xlist, xref, &local[2], &local[2 + K], &local[2 + 2 * K]);
  std::vector<double> &global = buf_sync_global;
  global.resize(local.size());
  MPI_Allreduce(local.data(), global.data(), (int) local.size(), MPI_DOUBLE, MPI_MAX,
                universe->uworld);

  const double half = 0.5 * neighbor->skin, reach = ghost_margin + half;
  double spread = 0.0, shell = global[1];
  bool lists_stale = false;
  for (int l = 1; l < K; l++) {
    spread = fmax(spread, global[2 + l]);
    shell = fmax(shell, global[2 + 2 * K + l]);
    lists_stale = lists_stale || global[2 + K + l] >= half * half;
  }
  spread = sqrt(spread);
  bool rebuild = !have_ref || global[0] > 0.0 || shell >= reach * reach;
  // a rebuild puts the first bead's lists within reach of every bead again, if they are
  // within 3/8 of the skin of it: cheaper than lists of their own on every step
  if (!rebuild && lists_stale && spread <= 0.75 * half) rebuild = true;
  own_lists.assign(K, 0);
  for (int l = 1; l < K; l++)
    own_lists[l] = (rebuild ? global[2 + l] : global[2 + K + l]) >= half * half;
  if (!rebuild) return;
  next_reneighbor = update->ntimestep;
  // the margin for this rebuild's shell: wider when the ring polymers leave less than a
  // sixteenth of the skin to move (before that, rebuilds a little more often than with
  // one bead per partition cost less than the wider shell would on every step); narrower
  // only when 1.5 x their width would need at most half of it (so that a width hovering
  // near a threshold does not widen and narrow the shell at every other rebuild)
  spread_seen = spread;
  if (spread + 0.0625 * neighbor->skin > reach) {
    margin_next = margin_for(spread);
  } else {
    const double narrower = margin_for(1.5 * spread);
    if (narrower <= 0.5 * ghost_margin) margin_next = narrower;
  }
}

/* In setup, once the beads' positions are final (post_force then records the first bead's
 * as those of the lists just built): the extra beads far from them get lists of their
 * own, and if the ring polymers are wider than the shell reaches (the skin was made
 * smaller, or a restart of a wider run), the shell is widened and built again now, as
 * LAMMPS's setup would. */
void FixPIMDLangevinAisci::setup_bead_lists()
{
  const int K = nlocal_beads;
  if (K == 1) return;
  std::vector<double> local(K), global(K);
  bead_distances({}, {}, local.data(), nullptr, nullptr);
  MPI_Allreduce(local.data(), global.data(), K, MPI_DOUBLE, MPI_MAX, universe->uworld);
  double spread = 0.0;
  for (int l = 1; l < K; l++) spread = fmax(spread, global[l]);
  spread = sqrt(spread);
  const double half = 0.5 * neighbor->skin;
  if (spread >= ghost_margin + half) {
    widen_shell(margin_for(spread), spread);
    if (domain->triclinic) domain->x2lamda(atom->nlocal);
    comm->setup();
    if (neighbor->style) neighbor->setup_bins();
    comm->exchange();
    comm->borders();
    if (domain->triclinic) domain->lamda2x(atom->nlocal + atom->nghost);
    modify->setup_pre_neighbor();
    neighbor->build(1);
    modify->setup_post_neighbor();
    declare_atoms();
  }
  own_lists.assign(K, 0);
  for (int l = 1; l < K; l++) own_lists[l] = global[l] >= half * half;
}

/* Before bead l's forces: its own neighbor lists when the first bead's do not reach it
 * (the ghost shell does: atom->x holds bead l, ghosts included). */
void FixPIMDLangevinAisci::lists_for_bead(int l)
{
  if (l < (int) own_lists.size() && own_lists[l]) {
    neighbor->build(1);
    lists_moved = true;
  }
}

/* After the extra beads (atom->x holds the first bead again, ghosts included): its lists,
 * if another bead's replaced them. */
void FixPIMDLangevinAisci::lists_for_first_bead()
{
  if (!lists_moved) return;
  neighbor->build(1);
  xlist.assign(&atom->x[0][0], &atom->x[0][0] + 3 * (size_t) atom->nlocal);
  lists_moved = false;
}
