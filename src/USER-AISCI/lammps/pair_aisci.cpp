/* pair_style aisci: see pair_aisci.h and docs/pair_aisci.md.
 *
 * compute() = gather the atoms of mapped types (local first, then ghosts), build the
 * graph with the C core (centres = all of them), evaluate the model (energy of the local
 * atoms, forces on all, virial from the edge vectors), scatter into LAMMPS arrays. The
 * ghost shell is widened to num_layers x cutoff + skin so that every local atom sees its
 * whole receptive field; ghost forces reach their owners through LAMMPS's reverse
 * communication (newton_pair on) or our own (newton_pair off). Models exported with
 * ghost exchange instead get one cutoff of ghosts and the edges of the owned atoms only:
 * between layers the model exchanges ghost features (pair_aisci_exchange.cpp).
 *
 * Files: this one parses the settings, loads the model, runs compute() and scatters the
 * results; pair_aisci_graph.cpp builds the graph, pair_aisci_ring.cpp balances the work
 * over a ring of ranks, pair_aisci_deepmd.cpp evaluates DeePMD-kit frozen models,
 * pair_aisci_exchange.cpp exchanges ghost features between layers. */
#include "pair_aisci.h"

#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "force.h"
#include "group.h"
#include "memory.h"
#include "neighbor.h"
#include "update.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>

using namespace LAMMPS_NS;

static const std::string STYLE = "pair_style aisci";

/* 1 eV in kcal/mol (CODATA 2018: e N_A / 4184 J/kcal). */
static constexpr double EV_TO_KCAL_MOL = 23.060547830619026;

PairAisci::PairAisci(LAMMPS *lmp) :
    Pair(lmp), nthreads(0), device("cpu"), precision("auto"), ghost_mode(GHOST_AUTO),
    exchange(false), api(nullptr), model(nullptr), model_hash(0), style_label(STYLE),
    exclude_warned(false), reload(false), cutoff(0.0), cutoff_3body(0.0),
    num_layers(0), energy_scale(1.0), graph(nullptr), graph_valid(false), nall_built(-1),
    ncalls_built(-1),
    n_local(0), edges(nullptr), rstride(3), xwidth(0), comm_features(false), exchange_calls(0),
    ring_tolerance(-1.0), ring(nullptr), graph_builds(0), work_cpu(0.0), work_wall(0.0),
    work_steps(0), deepmd(false), sel_warned(false), sel_checked(-1)
{
  single_enable = 0;
  restartinfo = 0;
  one_coeff = 1;
  manybody_flag = 1;
  no_virial_fdotr_compute = 1;    // the virial comes from the edge vectors, not f . r
  centroidstressflag = CENTROID_NOTAVAIL;
  comm_reverse = 9;    // newton off: forces (3) and per-atom virial (6)
  comm_reverse_off = 9;
  aisci_status st = aisci_graph_create(&graph);
  if (st == AISCI_OK) st = aisci_graph_create(&edges);
  if (st != AISCI_OK) AISCI::fail_all(lmp, STYLE, st);
}

PairAisci::~PairAisci()
{
  ring_free();
  if (api && model) api->model_destroy(model);
  aisci_graph_destroy(graph);
  aisci_graph_destroy(edges);
  if (allocated) {
    memory->destroy(setflag);
    memory->destroy(cutsq);
  }
}

void PairAisci::allocate()
{
  allocated = 1;
  int n = atom->ntypes;
  memory->create(setflag, n + 1, n + 1, "pair:setflag");
  memory->create(cutsq, n + 1, n + 1, "pair:cutsq");
  for (int i = 1; i <= n; i++)
    for (int j = i; j <= n; j++) setflag[i][j] = 0;
}

/* pair_style aisci [threads N] [device cpu|cuda|cuda:N] [precision auto|float32|float64]
 *                  [graph auto|ghost] [ghost auto|exchange|widen] [balance off|ring TOL] */
void PairAisci::settings(int narg, char **arg)
{
  int nthreads_new = 0;
  std::string device_new = "cpu", precision_new = "auto";
  bool ghost_only_new = false;
  int ghost_mode_new = GHOST_AUTO;
  double ring_tolerance_new = -1.0;
  int iarg = 0;
  while (iarg < narg) {
    std::string key = arg[iarg];
    if (key == AISCI::THREADS_KEYWORD) {
      nthreads_new = AISCI::parse_threads(lmp, STYLE, iarg, narg, arg);
      iarg += 2;
    } else if (key == "device") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      std::string v = arg[iarg + 1];
      bool ok = v == "cpu" || v == "cuda";
      if (!ok && v.rfind("cuda:", 0) == 0 && v.size() > 5)
        ok = v.find_first_not_of("0123456789", 5) == std::string::npos;
      if (!ok)
        error->all(FLERR,
                   STYLE + ": unknown device value '" + v +
                       "' (expected one of: cpu, cuda, cuda:N)");
      device_new = v;
      iarg += 2;
    } else if (key == "precision") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      static const std::vector<std::string> choices = {"auto", "float32", "float64"};
      precision_new = choices[AISCI::parse_choice(lmp, STYLE, key, arg[iarg + 1], choices)];
      iarg += 2;
    } else if (key == "graph") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      ghost_only_new = AISCI::parse_choice(lmp, STYLE, key, arg[iarg + 1], {"auto", "ghost"}) == 1;
      iarg += 2;
    } else if (key == "ghost") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      ghost_mode_new =
          AISCI::parse_choice(lmp, STYLE, key, arg[iarg + 1], {"auto", "exchange", "widen"});
      iarg += 2;
    } else if (key == "balance") {
      AISCI::need_values(lmp, STYLE, iarg, narg, arg, 1);
      if (AISCI::parse_choice(lmp, STYLE, key, arg[iarg + 1], {"off", "ring"}) == 0) {
        ring_tolerance_new = -1.0;
        iarg += 2;
        continue;
      }
      if (iarg + 2 >= narg)
        error->all(FLERR,
                   STYLE + ": balance ring needs a tolerance value (e.g. balance ring 0.05)");
      ring_tolerance_new = AISCI::parse_double(lmp, STYLE, "balance ring tolerance", arg[iarg + 2]);
      if (ring_tolerance_new < 0.0)
        error->all(FLERR,
                   STYLE + ": balance ring tolerance must be >= 0, got " +
                       std::string(arg[iarg + 2]));
      iarg += 3;
    } else {
      error->all(FLERR,
                 STYLE + ": unknown keyword '" + key +
                     "' (expected threads, device, precision, graph, ghost or balance)");
    }
  }
  exclude_warned = false;    // a pair_style command (LAMMPS keeps the instance) warns anew
  settings_args.clear();
  for (int k = 0; k < narg; k++) settings_args += std::string(k ? " " : "") + arg[k];
  input_args = settings_args + " | " + coeff_args;
  if (model && (nthreads_new != nthreads || device_new != device || precision_new != precision))
    reload = true;
  nthreads = nthreads_new;
  device = device_new;
  precision = precision_new;
  ghost_only = ghost_only_new;
  ghost_mode = ghost_mode_new;
  ring_tolerance = ring_tolerance_new;
}

/* Turn a failed C API call into a LAMMPS error: error->all when every rank failed
 * (the usual case: all read the same file), error->one on the ranks that failed. */
void PairAisci::check_all(aisci_status st, const std::string &what)
{
  int bad = st != AISCI_OK, nbad = 0;
  MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, world);
  if (nbad == 0) return;
  std::string msg = what + ": " + aisci_status_string(st) + ": " + aisci_last_error();
  if (nbad == comm->nprocs) error->all(FLERR, msg);
  if (bad) AISCI::error_one(lmp, FLERR, msg);
  error->all(FLERR,
             what + ": failed on " + std::to_string(nbad) + " of " + std::to_string(comm->nprocs) +
                 " ranks (see their messages)");
}

void PairAisci::load_model()
{
  if (!api) {
    std::string why;
    api = AISCI::torch_api(why);
    if (!api) error->all(FLERR, STYLE + ": " + why);
  }
  if (model) api->model_destroy(model);
  model = nullptr;
  const std::string dev = select_device();
  aisci_status st =
      api->model_create(model_file.c_str(), dev.c_str(), precision.c_str(), nthreads, &model);
  check_all(st, STYLE + ": cannot load model file '" + model_file + "'");
  if (api->model_output_is_vector(model) == 1 &&
      std::string(api->model_format(model)) == "deepmd-kit")
    error->all(FLERR,
               STYLE + ": model file '" + model_file +
                   "' is a DeePMD-kit dipole "
                   "model (per-atom vectors): use it as the Wannier model of fix dplr");
  if (api->model_output_is_vector(model) == 1)
    error->all(FLERR,
               STYLE + ": model file '" + model_file +
                   "' returns per-atom vectors "
                   "(metadata output = vector: a DW model, for fix dplr); "
                   "pair_style aisci needs an energy model");
  reload = false;
  // the file's content, for fix pimd/langevin's comparison of partitions: read once here
  // (rank 0 of the partition), not per step
  model_hash = AISCI::world_file_fnv1a(lmp, STYLE, model_file);
  cutoff = api->model_cutoff(model);
  cutoff_3body = api->model_needs_triplets(model) ? api->model_cutoff_3body(model) : 0.0;
  num_layers = api->model_num_layers(model);
  deepmd = std::string(api->model_format(model)) == "deepmd-kit";
  if (deepmd) deepmd_log();
  if (comm->me == 0) {
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, "%d layer(s), cutoff %g A, 3-body cutoff %g A",
                  num_layers, cutoff, cutoff_3body);
    utils::logmesg(lmp,
                   STYLE + ": model " + model_file + ": architecture " +
                       api->model_architecture(model) + ", " + numbers + ", " +
                       api->model_dtype(model) + " on " + api->model_device(model) + "\n");
    const std::string note = AISCI::unverified_weights_note(api, model, STYLE, model_file);
    if (!note.empty()) utils::logmesg(lmp, note);
  }
}

/* pair_coeff * * model.pt E1 E2 ... (one element or NULL per LAMMPS atom type) */
void PairAisci::coeff(int narg, char **arg)
{
  if (!allocated) allocate();
  const int ntypes = atom->ntypes;
  if (narg != 3 + ntypes)
    error->all(FLERR,
               "pair_coeff aisci: expected '* * <model file>' and " + std::to_string(ntypes) +
                   " element names (one per atom type, NULL to skip a type), got " +
                   std::to_string(narg) + " arguments");
  if (std::strcmp(arg[0], "*") != 0 || std::strcmp(arg[1], "*") != 0)
    error->all(FLERR,
               std::string("pair_coeff aisci: the first two arguments must be * *, got ") + arg[0] +
                   " " + arg[1]);
  model_file = arg[2];
  load_model();

  coeff_args.clear();
  for (int t = 1; t <= ntypes; t++) coeff_args += std::string(t > 1 ? " " : "") + arg[2 + t];
  input_args = settings_args + " | " + coeff_args;
  elements.assign(ntypes + 1, "NULL");
  type_map.assign(ntypes + 1, -1);
  std::string mapping;
  for (int t = 1; t <= ntypes; t++) {
    elements[t] = arg[2 + t];
    if (elements[t] != "NULL") {
      int index = -1;
      aisci_status st = api->model_type_index(model, elements[t].c_str(), &index);
      check_all(st, "pair_coeff aisci: atom type " + std::to_string(t));
      // the network must know the type, not only the metadata's type_names
      st = api->model_check_type(model, index);
      check_all(st, "pair_coeff aisci: atom type " + std::to_string(t));
      type_map[t] = index;
    }
    mapping += " " + std::to_string(t) + "->" + elements[t];
  }
  int count = 0;
  for (int i = 1; i <= ntypes; i++)
    for (int j = i; j <= ntypes; j++) {
      setflag[i][j] = (type_map[i] >= 0 && type_map[j] >= 0) ? 1 : 0;
      count += setflag[i][j];
    }
  if (count == 0) error->all(FLERR, std::string("pair_coeff aisci: every atom type is NULL"));
  // Alone (not a pair hybrid sub-style), the style is set for every pair of types: NULL
  // types (e.g. the Wannier centroids of fix dplr) simply have no model interactions.
  if (force->pair == this)
    for (int i = 1; i <= ntypes; i++)
      for (int j = i; j <= ntypes; j++) setflag[i][j] = 1;

  if (comm->me == 0) utils::logmesg(lmp, STYLE + ": type mapping" + mapping + "\n");
}

void PairAisci::init_style()
{
  AISCI::note_partition_files(lmp);    // for error_one(): paths after any `log` command
  std::string units = update->unit_style;
  if (units == "metal")
    energy_scale = 1.0;
  else if (units == "real")
    energy_scale = EV_TO_KCAL_MOL;
  else
    error->all(FLERR,
               STYLE +
                   " requires units metal or real (the model is in eV and "
                   "Angstrom), got units " +
                   units);
  if (!model) error->all(FLERR, STYLE + ": no model loaded; use pair_coeff * * <model file> ...");
  if (reload) load_model();
  // A DPLR short-range model (metadata dplr_beta) lacks the electrostatics that
  // kspace_style pppm/dplr adds (with fix dplr placing the WCs): legitimate alone only
  // to look at the short-range part, so say so.
  const char *beta = api->model_metadata(model, "dplr_beta");
  if (beta && !AISCI::uses_aisci_pppm_dplr(lmp) && comm->me == 0)
    error->warning(FLERR,
                   STYLE + ": model file '" + model_file +
                       "' is the short-range part of a DPLR model (metadata dplr_beta = " + beta +
                       "); without kspace_style pppm/dplr and fix dplr its "
                       "long-range electrostatics are missing");
  graph_valid = false;    // type mapping or skin may have changed
  check_exclusions();

  // The default half list only keeps LAMMPS's neighbor bookkeeping (rebuild triggers,
  // ghost exchange) going; the graph itself is built by the C core
  // (docs/architecture.md).
  Pair::init_style();

  // On one rank the graph is built over the owned atoms and their periodic images, as
  // a Python driver would: no ghost atoms enter the model. On several ranks every local
  // atom needs all atoms within num_layers x cutoff as ghosts; atoms move up to skin/2
  // between rebuilds on either side, hence + skin.
  periodic = comm->nprocs == 1 && !ghost_only;
  if (deepmd) {
    deepmd_init();    // pair_aisci_deepmd.cpp
    return;
  }
  exchange_init();
  if (exchange) {
    // the model exchanges ghost features: one cutoff of ghosts (+ skin) suffices
    if (comm->cutghostuser < cutoff + neighbor->skin) comm->cutghostuser = cutoff + neighbor->skin;
  } else if (!periodic) {
    if (comm->mode != Comm::SINGLE)
      error->all(FLERR,
                 STYLE +
                     " on several MPI ranks (or with graph ghost) needs "
                     "comm_modify mode single: it sets the ghost cutoff to "
                     "num_layers x cutoff + skin");
    double ghost = num_layers * cutoff + neighbor->skin;
    if (comm->cutghostuser < ghost) comm->cutghostuser = ghost;
  }
  balance_init();
}

/* neigh_modify exclude acts on LAMMPS's neighbor lists, which this style does not use:
 * the graph holds every atom of a mapped type within the cutoff, so an excluded pair
 * still interacts through the model. Warned once (rank 0), naming what is excluded;
 * silent for type pairs with a NULL-mapped type, which have no model interaction anyway
 * (DeePMD-kit's DPLR inputs exclude the nuclei-Wannier centroid pairs this way). Group
 * and molecule exclusions always warn. Once per pair_style command. */
void PairAisci::check_exclusions()
{
  if (exclude_warned) return;
  std::string what;
  auto mapped = [&](int t) { return t >= 1 && t < (int) type_map.size() && type_map[t] >= 0; };
  for (int k = 0; k < neighbor->nex_type; k++)
    if (mapped(neighbor->ex1_type[k]) && mapped(neighbor->ex2_type[k]))
      what += std::string(what.empty() ? "" : ", ") + "type " +
          std::to_string(neighbor->ex1_type[k]) + " " + std::to_string(neighbor->ex2_type[k]);
  for (int k = 0; k < neighbor->nex_group; k++)
    what += std::string(what.empty() ? "" : ", ") + "group " +
        group->names[neighbor->ex1_group[k]] + " " + group->names[neighbor->ex2_group[k]];
  for (int k = 0; k < neighbor->nex_mol; k++)
    what += std::string(what.empty() ? "" : ", ") +
        (neighbor->ex_mol_intra[k] ? "molecule/intra " : "molecule/inter ") +
        group->names[neighbor->ex_mol_group[k]];
  if (what.empty()) return;
  exclude_warned = true;
  if (comm->me == 0)
    error->warning(FLERR, style_label + ": neigh_modify exclude is ignored (" + what + "): " +
                              style_label + " builds its own graph of every atom of a mapped "
                              "type within the cutoff, so excluded pairs still interact through "
                              "the model; remove the exclusion (or map one type of each "
                              "excluded pair to NULL in pair_coeff)");
}

double PairAisci::init_one(int, int)
{
  return cutoff;
}

void PairAisci::compute(int eflag, int vflag)
{
  ev_init(eflag, vflag);

  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  double **f = atom->f;
  const int newton = force->newton_pair;

  // The set of atoms and the candidate edges change only when LAMMPS rebuilds its
  // neighbor lists (atoms migrate, ghosts are re-created, indices change): once per build,
  // at the positions of that build. (fix pimd/langevin with beads_per_world evaluates its
  // other beads after the first on the same step; their positions must not replace the
  // build's, which the fix's rebuild check measures every bead against.)
  if (!graph_valid || neighbor->ncalls != ncalls_built || nall != nall_built)
    build_candidates();
  select_edges();
  const int n = (int) atom_index.size();
  const int64_t n_edges = aisci_graph_num_edges(edges);
  const int64_t n_triplets = aisci_graph_num_triplets(edges);

  e_atom.resize(n);
  f_model.resize(3 * (size_t) n);
  if (vflag_atom) w_atom.resize(9 * (size_t) n);
  double energy = 0.0, w[9];
  aisci_status st;
  if (ring) {
    st = ring_compute(&energy, w);    // fills e_atom, f_model, w_atom as the call below
  } else if (deepmd) {
    st = deepmd_compute(&energy, w);    // the same outputs from forward_lower()
  } else {
    const double cpu0 = cpu_seconds(), wall0 = wall_seconds();
    st = api->model_compute(model, n, model_types.data(), n_edges, aisci_graph_edge_index(edges),
                            aisci_graph_edge_vec(edges), n_triplets, aisci_graph_triplets(edges),
                            n_local, &energy, eflag_atom ? e_atom.data() : nullptr, f_model.data(),
                            vflag_global ? w : nullptr, vflag_atom ? w_atom.data() : nullptr);
    work_cpu += cpu_seconds() - cpu0;
    work_wall += wall_seconds() - wall0;
    work_steps++;
  }
  if (st != AISCI_OK) AISCI::fail_one(lmp, STYLE, st);

  const double s = energy_scale;
  if (eflag_global) eng_vdwl += s * energy;
  if (eflag_atom)
    for (int k = 0; k < n_local; k++) eatom[atom_index[k]] += s * e_atom[k];
  if (vflag_global) {
    AISCI::add_voigt(virial, w, s);
  }

  if (newton || periodic) {
    // Ghost contributions (none with the periodic graph) reach their owners through
    // LAMMPS's reverse communication.
    for (int k = 0; k < n; k++) {
      const int i = atom_index[k];
      for (int d = 0; d < 3; d++) f[i][d] += s * f_model[3 * k + d];
    }
    if (vflag_atom)
      for (int k = 0; k < n; k++) {
        AISCI::add_voigt(vatom[atom_index[k]], &w_atom[9 * (size_t) k], s);
      }
    return;
  }

  // newton_pair off: LAMMPS neither clears nor communicates ghost forces, so collect
  // every contribution in rbuf, send the ghost part to the owners, then add the local
  // part to f (and vatom).
  rstride = vflag_atom ? 9 : 3;
  rbuf.assign((size_t) rstride * nall, 0.0);
  for (int k = 0; k < n; k++) {
    double *r = &rbuf[(size_t) rstride * atom_index[k]];
    for (int d = 0; d < 3; d++) r[d] = s * f_model[3 * k + d];
    if (vflag_atom) AISCI::set_voigt(r + 3, &w_atom[9 * (size_t) k], s);
  }
  AISCI::reverse_comm_pair(comm, this);
  for (int i = 0; i < nlocal; i++) {
    const double *r = &rbuf[(size_t) rstride * i];
    for (int d = 0; d < 3; d++) f[i][d] += r[d];
    if (vflag_atom)
      for (int v = 0; v < 6; v++) vatom[i][v] += r[3 + v];
  }
}

double PairAisci::memory_usage()
{
  double bytes = Pair::memory_usage();
  bytes += sizeof(double) *
      (pos.capacity() + e_atom.capacity() + f_model.capacity() + w_atom.capacity() +
       rbuf.capacity() + xbuf.capacity());
  bytes += sizeof(int64_t) * model_types.capacity();
  bytes += sizeof(int) * atom_index.capacity();
  bytes += (double) aisci_graph_num_edges(graph) * (2 * sizeof(int64_t) + 3 * sizeof(double));
  bytes += (double) aisci_graph_num_edges(edges) * (2 * sizeof(int64_t) + 3 * sizeof(double)) +
      (double) aisci_graph_num_triplets(edges) * 2 * sizeof(int64_t);
  return bytes;
}

bool PairAisci::model_dplr_beta(double &beta) const
{
  if (!model) return false;
  const char *text = api->model_metadata(model, "dplr_beta");
  if (!text) return false;
  char *end = nullptr;
  beta = std::strtod(text, &end);
  if (end == text || !(beta > 0.0))
    error->all(FLERR,
               STYLE + ": model file '" + model_file +
                   "' has a malformed dplr_beta metadata value '" + text + "'");
  return true;
}

AISCI_REGISTER_PAIR("aisci", LAMMPS_NS::PairAisci,
                    "neural-network potential (TorchScript model) through libaisci_torch");
