/* kspace_style pppm/aisci <accuracy>
 *
 * Reciprocal-space Coulomb by the USER-AISCI PPPM core. Honours kspace_modify mesh,
 * order (2..7), gewald and diff (ik or ad); the accuracy has LAMMPS's meaning (relative
 * to the force of two unit charges 1 Angstrom apart, or absolute with kspace_modify
 * force). The energy includes the self and neutralising-background terms, as for
 * kspace_style pppm; the virial also has the background term's volume derivative. */
#include "kspace_pppm_aisci.h"

#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "pair.h"

#include <cmath>
#include <cstring>

using namespace LAMMPS_NS;

AISCI_REGISTER_KSPACE("pppm/aisci", PPPMAisci,
                      "PPPM Coulomb (FFTW-MPI, order 2..7, ik/ad, triclinic) from the C core");

PPPMAisci::PPPMAisci(LAMMPS *lmp) :
    KSpace(lmp), style("kspace_style pppm/aisci"), banner("PPPM/aisci initialization ..."),
    pppm(nullptr)
{
  pppmflag = 1;
  triclinic_support = 1;
}

PPPMAisci::~PPPMAisci()
{
  aisci_pppm_destroy(pppm);
}

void PPPMAisci::settings(int narg, char **arg)
{
  if (narg != 1)
    error->all(FLERR, style + ": expected one argument (accuracy), got " + std::to_string(narg));
  accuracy_relative = AISCI::parse_double(lmp, style, "accuracy", arg[0]);
  if (!(accuracy_relative > 0.0))
    error->all(FLERR, style + ": accuracy must be > 0, got " + std::string(arg[0]));
}

void PPPMAisci::current_box(double box[3][3]) const
{
  // LAMMPS cell vectors as rows: a = (xprd, 0, 0), b = (xy, yprd, 0), c = (xz, yz, zprd)
  std::memset(box, 0, sizeof(double) * 9);
  box[0][0] = domain->xprd;
  box[1][0] = domain->triclinic ? domain->xy : 0.0;
  box[1][1] = domain->yprd;
  box[2][0] = domain->triclinic ? domain->xz : 0.0;
  box[2][1] = domain->triclinic ? domain->yz : 0.0;
  box[2][2] = domain->zprd;
}

void PPPMAisci::init()
{
  if (domain->dimension == 2) error->all(FLERR, style + ": needs a 3d simulation");
  if (domain->nonperiodic)
    error->all(FLERR, style + ": needs periodic boundaries in x, y and z (no slab correction)");
  if (slabflag) error->all(FLERR, style + ": kspace_modify slab is not supported");
  if (!atom->q_flag) error->all(FLERR, style + ": needs atom attribute q (charges)");
  if (order < 2 || order > 7)
    error->all(FLERR, style + ": kspace_modify order must be 2..7, got " + std::to_string(order));
  if (differentiation_flag != 0 && differentiation_flag != 1)
    error->all(FLERR, style + ": kspace_modify diff must be ik or ad");

  qsum_qsq();
  natoms_original = atom->natoms;
  // As LAMMPS's pppm: an uncharged system has no long-range term to compute, and the
  // automatic g_ewald and mesh have no charges to size them; run only if both are given.
  if (qsqsum == 0.0 && !(gewaldflag && gridflag))
    error->all(FLERR,
               style +
                   ": the system has no charge (every atom has q = 0), so there "
                   "is no long-range Coulomb term: remove the kspace_style, or give "
                   "both kspace_modify gewald and mesh to run it anyway");
  two_charge();
  accuracy = accuracy_absolute >= 0.0 ? accuracy_absolute : accuracy_relative * two_charge_force;

  aisci_pppm_config cfg = aisci_pppm_config_default();
  current_box(cfg.box);
  if (gridflag) {
    cfg.grid[0] = nx_pppm;
    cfg.grid[1] = ny_pppm;
    cfg.grid[2] = nz_pppm;
  }
  // core accuracy: relative to qqrd2e / length^2 (force of unit charges at unit distance)
  cfg.accuracy = accuracy / force->qqrd2e;
  cfg.order = order;
  cfg.diff = differentiation_flag == 1 ? AISCI_PPPM_AD : AISCI_PPPM_IK;
  cfg.qqrd2e = force->qqrd2e;
  cfg.q2sum = qsqsum;
  cfg.natoms = (double) atom->natoms;
  configure(cfg);

  aisci_pppm_destroy(pppm);
  pppm = nullptr;
  aisci_status st = aisci_pppm_create(&cfg, world, &pppm);
  if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);

  aisci_pppm_info info;
  aisci_pppm_get_info(pppm, &info);
  // with Gaussian charges g_ewald keeps its pppm/dplr meaning (beta); the core's own
  // g_ewald is then infinite (no real-space split)
  if (cfg.beta == 0.0) g_ewald = info.g_ewald;
  nx_pppm = info.grid[0];
  ny_pppm = info.grid[1];
  nz_pppm = info.grid[2];
  if (comm->me == 0) {
    char line[512];
    snprintf(line, sizeof(line),
             "%s\n  G vector (1/distance) = %.8g\n"
             "  grid = %d %d %d\n  stencil order = %d\n"
             "  estimated absolute RMS force accuracy = %.8g\n"
             "  estimated relative force accuracy = %.8g\n",
             banner.c_str(), g_ewald, nx_pppm, ny_pppm, nz_pppm, order,
             info.kspace_error * force->qqrd2e,
             info.kspace_error * force->qqrd2e / two_charge_force);
    utils::logmesg(lmp, std::string(line));
  }
}

void PPPMAisci::configure(aisci_pppm_config &cfg)
{
  // Real-space cutoff from the Coulomb pair style (needed for the automatic g_ewald)
  double cutoff = 0.0;
  if (force->pair) {
    int itmp = 0;
    auto p_cutoff = (double *) force->pair->extract("cut_coul", itmp);
    if (p_cutoff) cutoff = *p_cutoff;
  }
  if (!gewaldflag && !(cutoff > 0.0))
    error->all(FLERR,
               style +
                   ": needs a pair style with a long-range Coulomb cutoff "
                   "(e.g. coul/long) or kspace_modify gewald");
  cfg.g_ewald = gewaldflag ? g_ewald : 0.0;
  cfg.cutoff = cutoff;
}

void PPPMAisci::setup()
{
  // The cell is passed to the core on every step; a changed cell rebuilds the
  // influence function there.
}

void PPPMAisci::spread_local()
{
  if (atom->natoms != natoms_original) {
    qsum_qsq();
    natoms_original = atom->natoms;
  }
  const int nlocal = atom->nlocal;
  double **x = atom->x, *q = atom->q;
  const double *lo = domain->boxlo;
  // Uncharged atoms add exact zeros to the grid and get no force: leave them out (the
  // O atoms of DPLR water, for instance). Positions from boxlo, so the mesh sits where
  // LAMMPS's own PPPM puts it.
  index.clear();
  xbuf.clear();
  qbuf.clear();
  for (int i = 0; i < nlocal; i++) {
    if (q[i] == 0.0) continue;
    index.push_back(i);
    xbuf.insert(xbuf.end(), {x[i][0] - lo[0], x[i][1] - lo[1], x[i][2] - lo[2]});
    qbuf.push_back(q[i]);
  }
  double box[3][3];
  current_box(box);
  aisci_status st = aisci_pppm_set_box(pppm, (const double(*)[3]) box);
  if (st == AISCI_OK) st = aisci_pppm_spread(pppm, (int) index.size(), xbuf.data(), qbuf.data());
  if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);
}

void PPPMAisci::finish_local(double ek, const double vir[6])
{
  const int n = (int) index.size();
  fbuf.assign(3 * (size_t) n, 0.0);
  aisci_status st = aisci_pppm_interpolate(pppm, n, qbuf.data(), fbuf.data());
  if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);
  double **f = atom->f;
  for (int k = 0; k < n; k++)
    for (int d = 0; d < 3; d++) f[index[k]][d] += fbuf[3 * k + d];

  // global energy and virial (the same on every rank, as LAMMPS expects of KSpace)
  double eself = 0.0, vbg[6];
  aisci_pppm_self_energy(pppm, qsum, qsqsum, &eself, vbg);
  if (eflag_global) energy = ek + eself;
  if (vflag_global)
    for (int v = 0; v < 6; v++) virial[v] = vir[v] + vbg[v];
}

void PPPMAisci::compute(int eflag, int vflag)
{
  ev_init(eflag, vflag);
  if (eflag_atom || vflag_atom)
    error->all(FLERR, style + ": per-atom energy and virial are not supported");
  spread_local();
  double ek = 0.0, vir[6] = {0, 0, 0, 0, 0, 0};
  aisci_status st = aisci_pppm_solve(pppm, &ek, vir);
  if (st != AISCI_OK) AISCI::fail_all(lmp, style, st);
  finish_local(ek, vir);
}

double PPPMAisci::memory_usage()
{
  return (double) (xbuf.capacity() + qbuf.capacity() + fbuf.capacity()) * sizeof(double) +
      (double) index.capacity() * sizeof(int);
}
