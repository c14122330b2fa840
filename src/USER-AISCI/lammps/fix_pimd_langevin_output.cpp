/* fix pimd/langevin (USER-AISCI adapter), part 4: the output vector. Which steps measure
 * (LAMMPS tallies energy and virial only when a compute asks), each bead's energy and
 * virial from the partition's computes, the core's output vector and the per-atom
 * centroid-virial kinetic energy. See fix_pimd_langevin.h. */
#include "fix_pimd_langevin.h"

#include "aisci_lmp.h"
#include "aisci_restart_watch.h"

#include "atom.h"
#include "comm.h"
#include "compute.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "output.h"
#include "universe.h"
#include "update.h"

#include <string>

using namespace LAMMPS_NS;

static const char *STYLE = "fix pimd/langevin";

bool FixPIMDLangevinAisci::measure_step() const
{
  return update->eflag_global == update->ntimestep && update->vflag_global == update->ntimestep;
}

/* Energy and virial are tallied only on steps some compute asks for (LAMMPS's ev_set,
 * which runs before initial_integrate). The fix asks for the first thermo step after the
 * current step s, where its estimators and per-atom column 4 are refreshed: Output's
 * next_thermo when it lies ahead, else the next multiple of the thermo interval (the
 * step after a thermo step, e.g. with thermo 1, or at setup, when next_thermo is not yet
 * set for the new run). Other consumers of the vector (fix ave/time, fix print, dumps,
 * variable-interval thermo) get their steps through compute_vector(), which marks the
 * fix's computes as invoked, so LAMMPS schedules them with the consumer's next step as
 * for any compute it uses. */
void FixPIMDLangevinAisci::schedule_estimators(bool use_output)
{
  const bigint s = update->ntimestep;
  if (barostat_on) c_press->addstep(s + 1);    // the cell needs it every step
  bigint next = use_output ? output->next_thermo : s;
  if (next <= s && !output->var_thermo) {
    const bigint every = output->thermo_every;
    next = every > 0 ? (s / every) * every + every : update->laststep;
    if (next > update->laststep) next = update->laststep;
  }
  if (next > s) {
    c_pe->addstep(next);
    c_press->addstep(next);
  }
}

/* Potential energy and diagonal virial of local bead l, from the partition's computes,
 * right after that bead's forces were computed. Collective within the partition. */
void FixPIMDLangevinAisci::measure_bead(int l, bool energy)
{
  const double vol = volume();
  if (energy) measured[l].potential = c_pe->compute_scalar();
  c_press->compute_vector();
  for (int d = 0; d < 3; d++) measured[l].virial[d] = vol * c_press->vector[d] / force->nktv2p;
}

/* Per-atom centroid-virial kinetic energy 3kT/2 - (1/2P) sum_j (x_j - xc).f_j from each
 * partition's share of the sum (per local atom). */
void FixPIMDLangevinAisci::store_peratom_kinetic(const std::vector<double> &share)
{
  const int n = nring, nw = universe->nworlds;
  std::vector<double> all((size_t) n * nw);
  aisci_status st = aisci_beadcomm_allgather(beadcomm, 1, share.data(), all.data());
  if (st != AISCI_OK) exchange_failed(st);
  if (!subset) {
    st = aisci_pimd_peratom_kinetic(pimd, n, nw, all.data(), n > 0 ? &peratom[0][3] : nullptr,
                                    peratom_width);
  } else {    // the group's atoms, then into their rows (the others keep zero)
    std::vector<double> ke((size_t) n);
    st = aisci_pimd_peratom_kinetic(pimd, n, nw, all.data(), ke.data(), 1);
    for (int j = 0; j < n && st == AISCI_OK; j++) peratom[members[j]][3] = ke[j];
  }
  if (st != AISCI_OK) fail(st);
}

void FixPIMDLangevinAisci::end_of_step()
{
  if (measure_step()) compute_estimators();
  restart_watch->end_of_step();
}

/* The output vector, from the core (universe sums of the per-bead values). Called on
 * steps where LAMMPS tallied energy and virial (thermo steps): the same steps in every
 * partition, so the collective calls match. */
void FixPIMDLangevinAisci::compute_estimators()
{
  std::vector<double> vbeads;    // method pimd: every bead's velocities, for the centroid's
  if (cfg.method == AISCI_PIMD_CARTESIAN) gather_all(V, vbeads);
  const aisci_pimd_local loc = local_view();
  aisci_status st = aisci_pimd_step_output(stepper, &loc, &state, measured.data(),
                                           vbeads.empty() ? nullptr : vbeads.data(),
                                           ngroup, volume(), force->nktv2p, est);
  if (st != AISCI_OK) fail(st);
  est_step = update->ntimestep;
}

double FixPIMDLangevinAisci::compute_vector(int i)
{
  // in a minimization the fix is idle (min_setup warns), outside a run nothing moves:
  // the values of the last step that computed them
  if (update->whichflag != 1) return est[i];
  if (est_step != update->ntimestep)
    error->all(FLERR,
               std::string(STYLE) + ": output vector requested on step " +
                   std::to_string(update->ntimestep) +
                   ", but it is only computed on steps where LAMMPS tallies energy and "
                   "virial (thermo output steps, and steps that consumers which schedule "
                   "their computes, such as fix ave/time, fix print and dumps, ask for)");
  // the consumer schedules its next step for computes it invoked: ours included
  c_pe->invoked_flag |= Compute::INVOKED_SCALAR;
  c_press->invoked_flag |= Compute::INVOKED_VECTOR;
  return est[i];
}

void FixPIMDLangevinAisci::min_setup(int)
{
  if (comm->me == 0 && universe->iworld == 0)
    error->warning(FLERR,
                   std::string(STYLE) + ": fix " + id +
                       " does not act during minimization (each partition minimizes "
                       "its bead on its own); its output vector keeps the values of "
                       "the last MD step that computed them (zeros before the first run)");
}
