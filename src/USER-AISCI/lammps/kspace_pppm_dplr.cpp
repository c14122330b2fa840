/* kspace_style pppm/dplr <accuracy> [overlap yes|no] [layout rank|node]
 *
 * The long-range part of DPLR: every charge (ions and Wannier centroids) is a Gaussian
 * whose pair kernel is erf(beta r)/r, beta = kspace_modify gewald (required). The
 * energy is the reciprocal-space sum at g_eff = beta plus the self and background terms
 * (potentials/dplr/ewald.py writes it out); there is no real-space part, so the pair
 * style needs no Coulomb term.
 *
 * Overlap: fix dplr calls start_overlap() after it has placed the WCs (pre_force). The
 * charges are spread on this thread (collective on the core's atom communicator), the
 * FFTs and the influence function run on a std::thread (collective on the core's FFT
 * communicator) while LAMMPS computes the pair style on the main thread, and compute()
 * joins the thread and interpolates the field. The other thread's MPI calls may run at
 * the same time as the main thread's, so this needs MPI_THREAD_MULTIPLE; with a lower
 * level (e.g. a LAMMPS that called MPI_Init) the steps run in sequence, with a warning.
 * Both orders give the same numbers: the same calls on the same data.
 *
 * Layout node: one solver per node (node-local rank 0; AISCI_PPPM_RANKS_PER_NODE = k
 * makes pretend nodes of k consecutive ranks) does the FFT work of all ranks of its node
 * on its solve thread; the others spread and interpolate their own charges and hand the
 * grid patches over (aisci_pppm_hand_off), so they need no thread and no spare core. */
#include "kspace_pppm_dplr.h"

#include "aisci_lmp.h"
#include "pair_aisci.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "fix.h"
#include "force.h"
#include "modify.h"
#include "pair.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace LAMMPS_NS;

AISCI_REGISTER_KSPACE("pppm/dplr", PPPMDplr,
                      "DPLR Gaussian charges (beta = gewald) by PPPM, solve overlapped with "
                      "the pair style");

PPPMDplr::PPPMDplr(LAMMPS *lmp) :
    PPPMAisci(lmp), overlap_requested(true), layout(AISCI_PPPM_LAYOUT_RANK), solver_here(true),
    handed_off(false), overlap_on(false), pending(false), warned_no_beta(false),
    solve_status(AISCI_OK), solve_energy(0.0), solve_virial{0, 0, 0, 0, 0, 0}
{
  style = "kspace_style pppm/dplr";
  banner = "PPPM/dplr initialization ...";
}

PPPMDplr::~PPPMDplr()
{
  // an error between start_overlap() and compute() can leave the thread running
  if (solver.joinable()) solver.join();
}

void PPPMDplr::settings(int narg, char **arg)
{
  if (narg < 1)
    error->all(FLERR,
               style +
                   ": expected <accuracy> [overlap yes|no] [layout rank|node], got "
                   "no arguments");
  accuracy_relative = AISCI::parse_double(lmp, style, "accuracy", arg[0]);
  if (!(accuracy_relative > 0.0))
    error->all(FLERR, style + ": accuracy must be > 0, got " + std::string(arg[0]));
  overlap_requested = true;
  layout = AISCI_PPPM_LAYOUT_RANK;
  int iarg = 1;
  while (iarg < narg) {
    std::string key = arg[iarg];
    if (key == "overlap") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      overlap_requested = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"yes", "no"}) == 0;
      iarg += 2;
    } else if (key == "layout") {
      AISCI::need_values(lmp, style, iarg, narg, arg, 1);
      layout = AISCI::parse_choice(lmp, style, key, arg[iarg + 1], {"rank", "node"}) == 0
          ? AISCI_PPPM_LAYOUT_RANK
          : AISCI_PPPM_LAYOUT_NODE;
      iarg += 2;
    } else {
      error->all(FLERR, style + ": unknown keyword '" + key + "' (expected overlap or layout)");
    }
  }
}

void PPPMDplr::configure(aisci_pppm_config &cfg)
{
  if (!gewaldflag || !(g_ewald > 0.0))
    error->all(FLERR,
               style +
                   ": needs the Gaussian charge parameter beta as kspace_modify "
                   "gewald <beta> (1/Angstrom, > 0; the dplr_beta of the "
                   "short-range model)");
  cfg.beta = g_ewald;    // Gaussian charges, kernel erf(beta r)/r
  cfg.g_ewald = 0.0;     // no Ewald split: no real-space part
  cfg.cutoff = 0.0;
  cfg.layout = (aisci_pppm_layout) layout;
  cfg.ranks_per_node = 0;
  if (layout == AISCI_PPPM_LAYOUT_NODE)
    cfg.ranks_per_node = (int) AISCI::env_number(
        lmp, "AISCI_PPPM_RANKS_PER_NODE", 0.0, 1.0, 1e6, true,
        "a positive integer (ranks per pretend node)");
}

void PPPMDplr::init()
{
  join_solve();
  if (handed_off) {
    // a run ended between the hand-off and compute(): complete the messages
    double e, v[6];
    handed_off = false;
    aisci_pppm_solve(pppm, &e, v);
  }
  PPPMAisci::init();

  // The short-range model was trained on E - E_gauss(beta): its beta must be this one.
  const PairAisci *sr = AISCI::find_aisci_pair(lmp);
  if (sr) {
    double beta = 0.0;
    const bool has_beta = sr->model_dplr_beta(beta);
    char text[256];
    if (has_beta && std::fabs(beta - g_ewald) > 1e-6 * beta) {
      std::snprintf(text, sizeof text,
                    ": kspace_modify gewald %.10g differs from the dplr_beta = %.10g of the "
                    "pair_style aisci model; set kspace_modify gewald %.10g",
                    g_ewald, beta, beta);
      error->all(FLERR, style + text);
    }
    if (!has_beta && comm->me == 0 && !warned_no_beta)
      error->warning(FLERR,
                     style +
                         ": the pair_style aisci model has no dplr_beta metadata; "
                         "cannot check that it was trained for this beta");
    warned_no_beta = warned_no_beta || !has_beta;
    if (has_beta) check_wcs_placed(*sr);
  }
  if (force->pair) {
    int dim = 0;
    if (force->pair->extract("cut_coul", dim) && comm->me == 0)
      error->warning(FLERR,
                     style +
                         ": has no real-space part; the pair style's own "
                         "Coulomb term is added on top of the Gaussian charges");
  }

  aisci_pppm_info info;
  aisci_pppm_get_info(pppm, &info);
  overlap_on = overlap_requested;
  if (overlap_requested && info.mpi_thread_level < MPI_THREAD_MULTIPLE) {
    overlap_on = false;
    if (comm->me == 0)
      error->warning(FLERR,
                     style +
                         ": overlap needs MPI initialised with "
                         "MPI_THREAD_MULTIPLE (lmp-aisci does this); this process "
                         "has a lower level, so the solve runs without overlap");
  }
  solver_here = info.solver != 0;
  if (comm->me == 0) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "  Gaussian charges: beta = %.8g 1/distance, no real-space part\n"
                  "  overlap = %s\n  layout = %s\n",
                  g_ewald,
                  overlap_on ? (layout == AISCI_PPPM_LAYOUT_NODE
                                    ? "yes (Poisson solve on a thread of each node's solver)"
                                    : "yes (Poisson solve on a second thread)")
                             : "no",
                  layout == AISCI_PPPM_LAYOUT_NODE
                      ? ("node (" + std::to_string(info.nodes) + " solver ranks, " +
                         std::to_string(info.node_ranks) + " ranks on rank 0's node)")
                            .c_str()
                      : "rank (every rank solves its FFT slab)");
    utils::logmesg(lmp, std::string(line));
  }
  if (overlap_on) check_cores();
}

/* The overlap hides the solve only if its thread has a core to itself. Two cheap
 * checks: the CPUs this process may run on (a rank bound to one core makes the thread
 * share it with the network), and the solve threads plus ranks of this node against
 * the node's online CPUs. */
void PPPMDplr::check_cores()
{
  int allowed = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) allowed = CPU_COUNT(&set);
  const int threads_here = solver_here ? 1 : 0;
  int bad_affinity = solver_here && allowed == 1 ? 1 : 0, any_bad = 0;
  MPI_Allreduce(&bad_affinity, &any_bad, 1, MPI_INT, MPI_MAX, world);
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, comm->me, MPI_INFO_NULL, &node);
  int mine[2] = {1, threads_here}, sums[2] = {0, 0};
  MPI_Allreduce(mine, sums, 2, MPI_INT, MPI_SUM, node);
  int node_me = 0;
  MPI_Comm_rank(node, &node_me);
  MPI_Comm_free(&node);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  int short_here = node_me == 0 && online > 0 && sums[0] + sums[1] > online ? 1 : 0, any_short;
  MPI_Allreduce(&short_here, &any_short, 1, MPI_INT, MPI_MAX, world);
  if (comm->me != 0) return;
  if (any_bad)
    error->warning(FLERR,
                   style +
                       ": a rank that runs the solve thread may use only one CPU "
                       "(CPU affinity): the thread shares that core with the "
                       "network and cannot overlap; bind such ranks to two cores "
                       "(e.g. mpirun --bind-to none or --map-by ...:PE=2)");
  if (any_short)
    error->warning(FLERR,
                   style + ": a node runs " + std::to_string(sums[0]) + " ranks and " +
                       std::to_string(sums[1]) + " solve threads on " + std::to_string(online) +
                       " CPUs: the solve shares cores with the "
                       "network; use layout node with one rank fewer than cores per "
                       "node");
}

/* With a DPLR short-range model, charged atoms of the types the model leaves out (NULL
 * in pair_coeff) are Wannier centroids: without fix dplr they would stay where the data
 * file put them, and the electrostatics would be those of a frozen configuration. */
void PPPMDplr::check_wcs_placed(const PairAisci &sr)
{
  for (int ifix = 0; ifix < modify->nfix; ifix++)
    if (AISCI::is_aisci_fix_dplr(modify->fix[ifix])) return;
  const std::vector<std::string> &elements = sr.element_names();
  if (elements.empty()) return;
  bigint n = 0, nall = 0;
  int wc_type = 0;
  for (int i = 0; i < atom->nlocal; i++) {
    const int t = atom->type[i];
    if (t < (int) elements.size() && elements[t] == "NULL" && atom->q[i] != 0.0) {
      n++;
      wc_type = t;
    }
  }
  MPI_Allreduce(&n, &nall, 1, MPI_LMP_BIGINT, MPI_SUM, world);
  int type_all = 0;
  MPI_Allreduce(&wc_type, &type_all, 1, MPI_INT, MPI_MAX, world);
  if (nall > 0)
    error->all(FLERR,
               style +
                   ": the pair_style aisci model is a DPLR short-range model "
                   "(metadata dplr_beta) and " +
                   std::to_string((long) nall) +
                   " charged atoms of types it maps to NULL (e.g. type " +
                   std::to_string(type_all) +
                   ") look like Wannier centroids, but there "
                   "is no fix dplr to place them: add fix dplr");
}

void PPPMDplr::start_overlap()
{
  if (!overlap_on || !compute_flag || !pppm) return;
  if (pending) {
    // the previous step's compute() did not run: finish its solve (thread or hand-off)
    // and its interpolation, so that the core object is ready for the next spread
    join_solve();
    aisci_status st = solve_status;
    if (handed_off) {
      double e, v[6];
      handed_off = false;
      st = aisci_pppm_solve(pppm, &e, v);
    }
    if (st == AISCI_OK) {
      fbuf.assign(3 * index.size(), 0.0);
      st = aisci_pppm_interpolate(pppm, (int) index.size(), qbuf.data(), fbuf.data());
    }
    if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);
  }
  spread_local();
  solve_status = AISCI_OK;
  solve_error.clear();
  pending = true;
  if (!solver_here) {
    // node layout: the node's solver does the grid work; post the patch messages now
    aisci_status st = aisci_pppm_hand_off(pppm);
    if (st != AISCI_OK) AISCI::fail_one(lmp, style, st);
    handed_off = true;
    return;
  }
  solver = std::thread([this]() {
    // named, so that top -H and /proc/PID/task show the solve apart from the network
    pthread_setname_np(pthread_self(), "aisci-solve");
    solve_status = aisci_pppm_solve(pppm, &solve_energy, solve_virial);
    if (solve_status != AISCI_OK) solve_error = aisci_last_error();
  });
}

void PPPMDplr::join_solve()
{
  if (solver.joinable()) solver.join();
  pending = false;
}

void PPPMDplr::compute(int eflag, int vflag)
{
  if (!pending) {
    PPPMAisci::compute(eflag, vflag);
    return;
  }
  ev_init(eflag, vflag);
  join_solve();
  if (handed_off) {
    // node layout, not a solver: wait for the node's solver to send the field back
    handed_off = false;
    solve_status = aisci_pppm_solve(pppm, &solve_energy, solve_virial);
    if (solve_status != AISCI_OK) solve_error = aisci_last_error();
  }
  if (eflag_atom || vflag_atom)
    error->all(FLERR, style + ": per-atom energy and virial are not supported");
  if (solve_status != AISCI_OK) {
    aisci_set_error(solve_status, "%s", solve_error.c_str());
    AISCI::fail_all(lmp, style, solve_status);
  }
  finish_local(solve_energy, solve_virial);
}
