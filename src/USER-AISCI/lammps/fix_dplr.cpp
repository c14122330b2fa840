/* fix ID group dplr model dw.pt type_associate Tp1 Twc1 [Tp2 Twc2 ...] bond_type B
 *                    [efield Ex Ey Ez] [elements E1 ... En] [threads N]
 *
 * Steps (docs/fix_dplr.md has the derivation):
 *   pre_force  (also setup_pre_force, min_pre_force)
 *     1. after a neighbor-list rebuild: find each local WC's parent from the bonds of
 *        type B (map_wcs) and the candidate DW-graph edges (build_candidates);
 *     2. DW forward pass over the local parents (edges within the cutoff, ghosts as
 *        neighbours; the model has one layer): d_p for every local parent;
 *     3. d to the ghost images of the parents (forward communication);
 *     4. every local WC at x_p + d_p (p = the parent's image closest to the WC), and the
 *        WC positions to their ghost images (forward communication);
 *     5. kspace_style pppm/dplr: spread the charges and start the solve thread.
 *   post_force (also setup, min_post_force), after LAMMPS's reverse communication:
 *     6. efield: q E on every charged atom of the group, WCs included;
 *     7. the force on each WC to its parent (reverse communication when the parent is
 *        a ghost), the WC's force set to zero;
 *     8. one vector-Jacobian product of the DW model with grad_out_p = -F_wc(p),
 *        forces on the DW graph's atoms, the ghost part to the owners;
 *     9. virial: sum_wc -F_wc (x) d + the product's virial (+ the field term).
 * The DW model works in Angstrom; forces and grad_out are in LAMMPS units on both sides
 * of the (linear) product, so real and metal need no factor.
 *
 * Files: this one parses the arguments, checks the setup and runs the steps;
 * fix_dplr_wcs.cpp maps the WCs to their parents, builds the DW graph and places the WCs
 * (steps 1 and 4); fix_dplr_comm.cpp packs and unpacks the communicated values. */
#include "fix_dplr.h"

#include "aisci_lmp.h"
#include "kspace_pppm_dplr.h"
#include "pair_aisci.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "group.h"
#include "input.h"
#include "modify.h"
#include "neighbor.h"
#include "pair.h"
#include "update.h"
#include "variable.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <mpi.h>

extern "C" {
#include "aisci/dplr.h"
}

using namespace LAMMPS_NS;
using namespace FixConst;

static const std::string STYLE = "fix dplr";

namespace {
std::string str(long v)
{
  return std::to_string(v);
}
}    // namespace

/* aisci_dplr_type_map's lookup: the DW model's type of an element */
aisci_status FixDplr::model_type_index(void *fix, const char *element, int *index)
{
  auto self = (FixDplr *) fix;
  return self->api->model_type_index(self->model, element, index);
}

FixDplr::FixDplr(LAMMPS *lmp, int narg, char **arg) :
    Fix(lmp, narg, arg), efield_on(false), efield{0, 0, 0}, efield_ivar{-1, -1, -1}, nthreads(0),
    jacobian(true), api(nullptr), model(nullptr), dw_cutoff(0.0), rebuild(true), nall_built(-1),
    ncalls_built(-1), graph(nullptr), n_centres(0), edges(nullptr), comm_mode(MAP),
    energy_local(0.0)
{
  if (!atom->q_flag || !atom->num_bond)
    error->all(FLERR,
               STYLE +
                   ": needs an atom style with charges and bonds (e.g. atom_style "
                   "full): WCs are charged atoms bonded to their parents");
  const int ntypes = atom->ntypes;
  wc_parent_type.assign(ntypes + 1, 0);
  wc_of_parent.assign(ntypes + 1, 0);
  auto type_arg = [&](const char *what, const char *value) {
    long t = AISCI::parse_int(lmp, STYLE, what, value);
    if (t < 1 || t > ntypes)
      error->all(FLERR,
                 STYLE + ": " + what + " type must be 1.." + str(ntypes) + ", got " +
                     std::string(value));
    return (int) t;
  };
  int iarg = 3;
  while (iarg < narg) {
    std::string key = arg[iarg];
    if (key == "model") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      model_file = arg[iarg + 1];
      iarg += 2;
    } else if (key == "type_associate") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 2);
      iarg++;
      // pairs of integers until the next keyword
      while (iarg < narg && std::isdigit((unsigned char) arg[iarg][0])) {
        if (iarg + 1 >= narg)
          error->all(FLERR,
                     STYLE +
                         ": type_associate needs pairs of types (parent WC), got "
                         "an odd number");
        int tp = type_arg("type_associate parent", arg[iarg]);
        int tw = type_arg("type_associate WC", arg[iarg + 1]);
        if (aisci_dplr_associate(ntypes, tp, tw, wc_of_parent.data(), wc_parent_type.data()))
          error->all(FLERR, STYLE + ": type_associate: " + aisci_last_error());
        iarg += 2;
      }
    } else if (key == "bond_type") {
      // one or more bond types (DeePMD-kit: one per type_associate pair), until the
      // next keyword
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      wc_bond.assign(atom->nbondtypes + 1, 0);
      bond_names.clear();
      iarg++;
      while (iarg < narg && std::isdigit((unsigned char) arg[iarg][0])) {
        long b = AISCI::parse_int(lmp, STYLE, key, arg[iarg]);
        if (b < 1 || b > atom->nbondtypes)
          error->all(FLERR,
                     STYLE + ": bond_type must be 1.." + str(atom->nbondtypes) +
                         " (the bond types of the data file), got " + arg[iarg]);
        if (!wc_bond[b]) bond_names += (bond_names.empty() ? "" : " or ") + str(b);
        wc_bond[b] = 1;
        iarg++;
      }
      if (bond_names.empty())
        error->all(FLERR,
                   STYLE + ": bond_type expects a bond type, got '" + std::string(arg[iarg]) +
                       "'");    // need_values: iarg < narg
    } else if (key == "efield") {
      // components in V/Angstrom, or v_NAME: an equal-style variable, evaluated every step
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 3);
      for (int d = 0; d < 3; d++) {
        const char *v = arg[iarg + 1 + d];
        efield[d] = 0.0;
        efield_var[d].clear();
        if (std::strncmp(v, "v_", 2) == 0 && v[2])
          efield_var[d] = v + 2;
        else
          efield[d] = AISCI::parse_double(lmp, STYLE, key, v);
      }
      efield_on = efield[0] != 0.0 || efield[1] != 0.0 || efield[2] != 0.0 ||
          !efield_var[0].empty() || !efield_var[1].empty() || !efield_var[2].empty();
      iarg += 4;
    } else if (key == "elements") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, ntypes);
      elements.assign(1, "NULL");
      for (int t = 1; t <= ntypes; t++) elements.push_back(arg[iarg + t]);
      iarg += 1 + ntypes;
    } else if (key == AISCI::THREADS_KEYWORD) {
      nthreads = AISCI::parse_threads(lmp, STYLE, iarg, narg, arg);
      iarg += 2;
    } else if (key == "jacobian") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      jacobian = AISCI::parse_choice(lmp, STYLE, key, arg[iarg + 1], {"yes", "no"}) == 0;
      iarg += 2;
    } else {
      error->all(FLERR,
                 STYLE + ": unknown keyword '" + key +
                     "' (expected model, type_associate, bond_type, efield, elements, "
                     "threads or jacobian)");
    }
  }
  if (model_file.empty()) error->all(FLERR, STYLE + ": missing keyword model <DW model file>");
  bool any = false;
  for (int t = 1; t <= ntypes; t++) any = any || wc_of_parent[t];
  if (!any) error->all(FLERR, STYLE + ": missing keyword type_associate <parent type> <WC type>");
  if (bond_names.empty())
    error->all(FLERR, STYLE + ": missing keyword bond_type <parent-WC bond type>");

  std::string why;
  api = AISCI::torch_api(why);
  if (!api) error->all(FLERR, STYLE + ": " + why);
  aisci_status st = api->model_create(model_file.c_str(), "cpu", "auto", nthreads, &model);
  if (st != AISCI_OK)
    error->all(FLERR,
               STYLE + ": cannot load DW model file '" + model_file +
                   "': " + aisci_status_string(st) + ": " + aisci_last_error());
  if (api->model_output_is_vector(model) != 1)
    error->all(FLERR,
               STYLE + ": model file '" + model_file +
                   "' is an energy model (metadata output = energy); fix dplr needs a DW "
                   "model (output = vector, docs/dplr.md)");
  if (api->model_num_layers(model) != 1 || api->model_needs_triplets(model))
    error->all(FLERR,
               STYLE + ": DW model '" + model_file + "' has " + str(api->model_num_layers(model)) +
                   " message-passing layers" +
                   (api->model_needs_triplets(model) ? " and triplets" : "") +
                   "; fix dplr supports one layer without triplets");
  dw_cutoff = api->model_cutoff(model);
  // the file's content, for fix pimd/langevin's comparison of partitions
  model_hash = AISCI::world_file_fnv1a(lmp, STYLE, model_file);
  if (comm->me == 0) {
    const std::string note = AISCI::unverified_weights_note(api, model, STYLE, model_file);
    if (!note.empty()) utils::logmesg(lmp, note);
  }
  st = aisci_graph_create(&graph);
  if (st == AISCI_OK) st = aisci_graph_create(&edges);
  if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE, st);

  scalar_flag = 1;    // energy of the charges in the field
  global_freq = 1;
  extscalar = 1;
  energy_global_flag = 1;
  virial_global_flag = 1;
  thermo_virial = 1;    // the WC virial belongs to the pressure (fix_modify virial no: off)
  comm_forward = 3;
  comm_reverse = 3;
}

FixDplr::~FixDplr()
{
  if (api && model) api->model_destroy(model);
  aisci_graph_destroy(graph);
  aisci_graph_destroy(edges);
}

int FixDplr::setmask()
{
  return PRE_FORCE | POST_FORCE | MIN_PRE_FORCE | MIN_POST_FORCE;
}

void FixDplr::init()
{
  AISCI::note_partition_files(lmp);    // for error_one(): paths after any `log` command
  const int ntypes = atom->ntypes;
  std::string units = update->unit_style;
  if (units != "metal" && units != "real")
    error->all(FLERR,
               STYLE +
                   " requires units metal or real (the DW model is in Angstrom), "
                   "got units " +
                   units);
  if (atom->map_style == Atom::MAP_NONE)
    error->all(FLERR, STYLE + ": needs an atom map (atom_modify map array or yes)");
  if (update->whichflag == 1 && std::strncmp(update->integrate_style, "respa", 5) == 0)
    error->all(FLERR, STYLE + ": run_style respa is not supported");
  // one set of WCs, one owner: a second fix would move the same WCs again
  for (int ifix = 0; ifix < modify->nfix; ifix++) {
    Fix *other = modify->fix[ifix];
    if (other != this && AISCI::is_aisci_fix_dplr(other))
      error->all(FLERR,
                 STYLE + ": fix IDs " + std::string(id) + " and " + other->id +
                     " are both fix dplr; only one may place the WCs (unfix one of them)");
  }
  // the WC and ion charges act only through the kspace style
  if (!force->kspace)
    error->all(FLERR,
               STYLE +
                   " needs kspace_style pppm/dplr (with kspace_modify gewald "
                   "<beta>): without a kspace style the charges of the ions and WCs "
                   "have no electrostatics");
  if (!dynamic_cast<PPPMDplr *>(force->kspace) && comm->me == 0)
    error->warning(FLERR,
                   STYLE + ": kspace_style " + std::string(force->kspace_style) +
                       " is not pppm/dplr: the ions and WCs are point charges, not the "
                       "Gaussian charges of DPLR");

  // Element of each LAMMPS type: keyword elements, else pair_style aisci's mapping.
  std::vector<std::string> el = elements;
  const PairAisci *sr = AISCI::find_aisci_pair(lmp);
  const std::vector<std::string> *sr_el = sr && !sr->element_names().empty() ? &sr->element_names()
                                                                             : nullptr;
  if (el.empty()) {
    if (!sr_el)
      error->all(FLERR,
                 STYLE +
                     ": the pair style is not aisci: give the element of every atom "
                     "type with the keyword elements (NULL for WC types)");
    el = *sr_el;
  }
  for (int t = 1; t <= ntypes; t++)
    if (wc_parent_type[t] && sr_el && (int) sr_el->size() > t && (*sr_el)[t] != "NULL")
      error->all(FLERR,
                 STYLE + ": pair_style aisci maps WC type " + str(t) + " to element " +
                     (*sr_el)[t] +
                     "; WCs are not atoms of the short-range model, map "
                     "the type to NULL in pair_coeff");
  // LAMMPS type -> DW model type; parents must be of the model's selected_types
  std::vector<const char *> el_names;
  for (const std::string &e : el) el_names.push_back(e.c_str());
  type_map.assign(ntypes + 1, -1);
  aisci_status st = aisci_dplr_type_map(
      ntypes, el_names.data(), wc_of_parent.data(), wc_parent_type.data(),
      api->model_metadata(model, "selected_types"), model_type_index, this, type_map.data());
  if (st != AISCI_OK) error->all(FLERR, STYLE + ": " + aisci_last_error());
  for (int t = 1; t <= ntypes; t++)    // the network must know each type it is given
    if (type_map[t] >= 0 && api->model_check_type(model, type_map[t]) != AISCI_OK)
      error->all(FLERR, STYLE + ": atom type " + str(t) + ": " + aisci_last_error());

  // Every parent needs its DW neighbours (cutoff, + skin between rebuilds) as ghosts.
  if (comm->mode != Comm::SINGLE)
    error->all(FLERR, STYLE + " needs comm_modify mode single (it sets the ghost cutoff)");
  const double ghost = dw_cutoff + neighbor->skin;
  if (comm->cutghostuser < ghost) comm->cutghostuser = ghost;

  // WCs have no dynamics of their own: warn if an integrator moves them.
  for (int ifix = 0; ifix < modify->nfix; ifix++) {
    Fix *fix = modify->fix[ifix];
    if (!fix->time_integrate) continue;
    bigint n = 0, nall = 0;
    for (int i = 0; i < atom->nlocal; i++)
      if (wc_parent_type[atom->type[i]] && (atom->mask[i] & fix->groupbit)) n++;
    MPI_Allreduce(&n, &nall, 1, MPI_LMP_BIGINT, MPI_SUM, world);
    if (nall > 0 && comm->me == 0)
      error->warning(FLERR,
                     STYLE + ": fix " + std::string(fix->id) + " (" + fix->style + ") integrates " +
                         str((long) nall) +
                         " WC atoms; fix dplr places WCs itself, exclude their types "
                         "from the integrator's group");
  }
  for (int d = 0; d < 3; d++) {
    if (efield_var[d].empty()) continue;
    efield_ivar[d] = input->variable->find(efield_var[d].c_str());
    if (efield_ivar[d] < 0)
      error->all(FLERR, STYLE + ": efield variable " + efield_var[d] + " does not exist");
    if (!input->variable->equalstyle(efield_ivar[d]))
      error->all(FLERR, STYLE + ": efield variable " + efield_var[d] + " is not equal-style");
  }
  rebuild = true;
}

/* ---------------------------------------------------------------------- */

void FixDplr::setup_pre_force(int vflag)
{
  pre_force(vflag);    // the setup's neighbor build is a new build (ncalls)
  // WCs have no dynamics: no kinetic energy either (e.g. after velocity all create)
  double **v = atom->v;
  for (int i : wc_local) v[i][0] = v[i][1] = v[i][2] = 0.0;
}

void FixDplr::min_pre_force(int vflag)
{
  pre_force(vflag);
}
void FixDplr::setup(int vflag)
{
  post_force(vflag);
}
void FixDplr::min_setup(int vflag)
{
  post_force(vflag);
}
void FixDplr::min_post_force(int vflag)
{
  post_force(vflag);
}

void FixDplr::pre_force(int)
{
  const int nall = atom->nlocal + atom->nghost;
  // once per LAMMPS neighbor build, at that build's positions (not again for the other
  // beads of fix pimd/langevin's beads_per_world, evaluated after the first on that step)
  if (rebuild || neighbor->ncalls != ncalls_built || nall != nall_built) {
    map_wcs();
    build_candidates();
    rebuild = false;
  }
  select_edges();
  const int n = (int) atom_index.size();
  dw_out.assign(3 * (size_t) n, 0.0);
  if (n > 0) {
    aisci_status st = api->model_compute_vector(
        model, n, model_types.data(), aisci_graph_num_edges(edges), aisci_graph_edge_index(edges),
        aisci_graph_edge_vec(edges), 0, nullptr, dw_out.data());
    if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": DW model '" + model_file + "'", st);
  }
  dvec.assign(3 * (size_t) nall, 0.0);
  for (int k = 0; k < n_centres; k++)
    for (int d = 0; d < 3; d++) dvec[3 * (size_t) atom_index[k] + d] = dw_out[3 * k + d];
  comm_mode = DVEC;
  AISCI::forward_comm_fix(comm, this, 3);
  place_wcs();
  comm_mode = XWC;
  AISCI::forward_comm_fix(comm, this, 3);

  auto kspace = dynamic_cast<PPPMDplr *>(force->kspace);
  if (kspace) kspace->start_overlap();
}

void FixDplr::post_force(int vflag)
{
  v_init(vflag);
  double w9[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};    // this rank's virial, 3 x 3
  energy_local = 0.0;
  if (efield_on) apply_efield(w9);
  transfer_forces(w9);
  // W_ab = -dE/d eps_ab for x_a -> x_a + eps_ab x_b (docs/fix_dplr.md): xy is W[0][1]
  if (vflag_global) AISCI::add_voigt(virial, w9, 1.0);
}

/* Step 6: U = -sum q E . x over the charged atoms of the group (unwrapped positions,
 * WCs included), F = q E, virial W_ab = sum F_a x_b as LAMMPS's fix efield. */
void FixDplr::apply_efield(double w9[9])
{
  double **x = atom->x, **f = atom->f, *q = atom->q;
  const int nlocal = atom->nlocal;
  xbuf.clear();
  qbuf.clear();
  ibuf.clear();
  for (int i = 0; i < nlocal; i++) {
    if (!(atom->mask[i] & groupbit) || q[i] == 0.0) continue;
    double xu[3];
    domain->unmap(x[i], atom->image[i], xu);
    xbuf.insert(xbuf.end(), {xu[0], xu[1], xu[2]});
    qbuf.push_back(q[i]);
    ibuf.push_back(i);
  }
  const int n = (int) qbuf.size();
  for (int d = 0; d < 3; d++)
    if (efield_ivar[d] >= 0) efield[d] = input->variable->compute_equal(efield_ivar[d]);
  const double field[3] = {force->qe2f * efield[0], force->qe2f * efield[1],
                           force->qe2f * efield[2]};
  std::vector<double> fe(3 * (size_t) n, 0.0);
  aisci_status st = aisci_dplr_efield(n, xbuf.data(), qbuf.data(), field, fe.data(), &energy_local);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  for (int k = 0; k < n; k++)
    for (int a = 0; a < 3; a++) {
      f[ibuf[k]][a] += fe[3 * k + a];
      for (int b = 0; b < 3; b++) w9[3 * a + b] += fe[3 * k + a] * xbuf[3 * k + b];
    }
}

/* Steps 7-9 of the file comment. */
void FixDplr::transfer_forces(double w9[9])
{
  double **f = atom->f;
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost;
  // 7. F_wc to the parent's image closest to the WC (reverse-communicated to its owner)
  ibuf.resize(wc_local.size());
  for (size_t w = 0; w < wc_local.size(); w++)
    ibuf[w] = domain->closest_image(wc_local[w], atom->map((tagint) wc_parent[w]));
  buf.assign(3 * (size_t) nall, 0.0);
  double *f0 = nall > 0 ? f[0] : nullptr;    // LAMMPS's per-atom rows are contiguous
  aisci_status st =
      aisci_dplr_collect((int) wc_local.size(), nall, wc_local.data(), ibuf.data(), f0, buf.data());
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  comm_mode = FORCE;
  AISCI::reverse_comm_fix(comm, this, 3);

  // F_wc on the parent, grad_out_p = dE/dd_p = -F_wc(p) and -F_wc (x) d_p
  const int n = (int) atom_index.size();
  grad.assign(3 * (size_t) n, 0.0);
  st = aisci_dplr_parent_forces(n_centres, nall, atom_index.data(), buf.data(), dvec.data(), f0,
                                grad.data(), vflag_global ? w9 : nullptr);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  if (!jacobian || n == 0) return;

  // 8. the DW model's Jacobian: one vector-Jacobian product, ghost forces to the owners
  f_dw.assign(3 * (size_t) n, 0.0);
  double wv[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  st = api->model_vector_backward(model, grad.data(), f_dw.data(), vflag_global ? wv : nullptr);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE + ": DW model '" + model_file + "'", st);
  buf.assign(3 * (size_t) nall, 0.0);
  st = aisci_dplr_jacobian_forces(n, nall, atom_index.data(), f_dw.data(), wv, buf.data(),
                                  vflag_global ? w9 : nullptr);
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);
  AISCI::reverse_comm_fix(comm, this, 3);
  for (int i = 0; i < nlocal; i++)
    for (int d = 0; d < 3; d++) f[i][d] += buf[3 * (size_t) i + d];
}

double FixDplr::compute_scalar()
{
  double all = 0.0;
  MPI_Allreduce(&energy_local, &all, 1, MPI_DOUBLE, MPI_SUM, world);
  return all;
}

AISCI_REGISTER_FIX("dplr", LAMMPS_NS::FixDplr,
                   "DPLR Wannier centroids from a DW model, forces through its Jacobian");
