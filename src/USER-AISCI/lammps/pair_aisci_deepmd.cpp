/* pair_style aisci with DeePMD-kit PyTorch frozen models (`dp --pt freeze`): see
 * docs/pair_aisci.md, "DeePMD-kit models".
 *
 * The torch wrapper recognises the file (aisci_model_format() = "deepmd-kit"); this file
 * builds the model's forward_lower() input in C, from the same graph atoms and candidate
 * edges as our own models (build_candidates/select_edges in pair_aisci.cpp, C core cell
 * list): extended atoms = atoms of mapped types, owned first, then ghosts within the
 * cutoff + skin; one neighbour row per owned atom, every atom within the cutoff, nearest
 * first, -1 padding. Message-passing models (DPA2, DPA3) call deepmd::border_op, which
 * the wrapper runs through our ghost-feature exchange callbacks (pair_aisci_exchange.cpp:
 * LAMMPS forward communication of owned-atom features to their ghosts, reverse
 * communication of ghost gradients), on one rank too (periodic self-images). Forces on
 * ghosts and their per-atom virials go to the owners as for our models. */
#include "pair_aisci.h"

#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "neighbor.h"
#include "update.h"

#include <cstdio>
#include <cstdlib>

#include <algorithm>

using namespace LAMMPS_NS;

static const std::string STYLE = "pair_style aisci";

void PairAisci::deepmd_log()
{
  if (comm->me != 0) return;
  std::string names;
  for (int k = 0; k < api->model_num_types(model); k++)
    names += std::string(k ? " " : "") + api->model_type_name(model, k);
  const char *rewrites = api->model_metadata(model, "device_rewrites");
  std::string note;
  if (rewrites && std::string(rewrites) != "0")
    note = "; " + std::string(rewrites) + " hard-coded CUDA device constant(s) of its code "
           "moved to " + api->model_device(model);
  utils::logmesg(lmp, STYLE + ": model " + model_file + " is a DeePMD-kit frozen model "
                 "(forward_lower, no aisci_metadata): " + api->model_architecture(model) +
                 ", type map " + names + note + "\n");
}

void PairAisci::deepmd_init()
{
  if (ring_tolerance >= 0.0)
    error->all(FLERR, STYLE + ": balance ring is not available for DeePMD-kit models (use "
                              "balance off)");
  if (ghost_mode == GHOST_WIDEN)
    error->all(FLERR, STYLE + ": ghost widen is not available for DeePMD-kit models: "
                              "message-passing ones exchange ghost features (deepmd::border_op)");
  // Always the extended system with ghost atoms (DeePMD-kit's forward_lower convention).
  periodic = false;
  exchange = api->model_ghost_exchange(model) == 1;
  comm_forward = exchange ? EXCHANGE_CHUNK : 0;
  comm_reverse = comm_reverse_off = exchange ? std::max(9, EXCHANGE_CHUNK) : 9;
  aisci_status st = api->model_set_exchange(model, exchange ? &exchange_forward : nullptr,
                                            exchange ? &exchange_reverse : nullptr, this);
  check_all(st, STYLE + ": ghost exchange");
  exchange_calls = 0;
  deepmd_sel.clear();
  if (const char *sel = api->model_metadata(model, "sel")) {
    char *end = nullptr;
    for (const char *p = sel; *p; p = end) {
      const long long v = std::strtoll(p, &end, 10);
      if (end == p) break;
      deepmd_sel.push_back(v);
    }
  }
  if ((int) deepmd_sel.size() != api->model_num_types(model) && deepmd_sel.size() > 1) {
    // one limit per type only when there is one per type of the type map
    int64_t sum = 0;
    for (int64_t v : deepmd_sel) sum += v;
    deepmd_sel.assign(1, sum);
  }
  sel_warned = false;    // once per run
  sel_checked = -1;
  if (comm->cutghostuser < cutoff + neighbor->skin) comm->cutghostuser = cutoff + neighbor->skin;
  balance_init();    // ring off (refused above): drops a ring of an earlier model
  if (comm->me == 0)
    utils::logmesg(lmp, STYLE + ": DeePMD-kit forward_lower on owned atoms + ghosts within "
                   "the cutoff + skin" + (exchange ? "; deepmd::border_op exchanges ghost "
                   "features through LAMMPS communication" : "") + "\n");
}

/* One forward_lower() call: fills e_atom (owned), f_model (all graph atoms), w_atom (all,
 * when vflag_atom) and w, in the conventions of pair_aisci.cpp's scatter code. */
aisci_status PairAisci::deepmd_compute(double *energy, double *w)
{
  const int n = (int) atom_index.size();
  double **x = atom->x;
  deepmd_pos.resize(3 * (size_t) n);
  for (int k = 0; k < n; k++)
    for (int d = 0; d < 3; d++) deepmd_pos[3 * (size_t) k + d] = x[atom_index[k]][d];

  // Neighbour rows of the owned atoms from the edges within the cutoff (select_edges):
  // nearest first, ties by index, so that the model keeps the same sel nearest atoms
  // whatever the order of LAMMPS's atoms.
  const int64_t ne = aisci_graph_num_edges(edges);
  const int64_t *edge_index = aisci_graph_edge_index(edges);
  const double *vec = aisci_graph_edge_vec(edges);
  edge_r2.resize(ne);
  for (int64_t e = 0; e < ne; e++) {
    const double *v = vec + 3 * e;
    edge_r2[e] = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  }
  std::vector<int64_t> count(n_local + 1, 0);
  for (int64_t e = 0; e < ne; e++) count[edge_index[e] + 1]++;
  int64_t width = 1;
  for (int i = 0; i < n_local; i++) width = std::max(width, count[i + 1]);
  for (int i = 0; i < n_local; i++) count[i + 1] += count[i];
  std::vector<int64_t> order(ne);
  {
    std::vector<int64_t> fill(count.begin(), count.end() - 1);
    for (int64_t e = 0; e < ne; e++) order[fill[edge_index[e]]++] = e;
  }
  deepmd_nlist.assign((size_t) n_local * width, -1);
  for (int i = 0; i < n_local; i++) {
    auto first = order.begin() + count[i], last = order.begin() + count[i + 1];
    std::sort(first, last, [&](int64_t a, int64_t b) {
      if (edge_r2[a] != edge_r2[b]) return edge_r2[a] < edge_r2[b];
      return edge_index[ne + a] < edge_index[ne + b];
    });
    int64_t *row = &deepmd_nlist[(size_t) i * width];
    for (auto it = first; it != last; ++it) *row++ = edge_index[ne + *it];
  }

  deepmd_check_sel();

  const double cpu0 = cpu_seconds(), wall0 = wall_seconds();
  double wd[9];
  aisci_status st = api->model_compute_extended(
      model, n_local, n, model_types.data(), deepmd_pos.data(), width, deepmd_nlist.data(),
      nullptr, energy, eflag_atom ? e_atom.data() : nullptr, f_model.data(),
      vflag_global ? wd : nullptr, vflag_atom ? w_atom.data() : nullptr);
  work_cpu += cpu_seconds() - cpu0;
  work_wall += wall_seconds() - wall0;
  work_steps++;
  if (st != AISCI_OK) return st;
  // DeePMD-kit's virial tensors are the transposes of ours (the scatter code takes the
  // upper triangle xy, xz, yz from elements 1, 2, 5).
  auto transpose = [](double *v) {
    std::swap(v[1], v[3]);
    std::swap(v[2], v[6]);
    std::swap(v[5], v[7]);
  };
  if (vflag_global) {
    transpose(wd);
    std::copy(wd, wd + 9, w);
  }
  if (vflag_atom)
    for (int k = 0; k < n; k++) transpose(&w_atom[9 * (size_t) k]);
  return AISCI_OK;
}

/* DeePMD-kit's models keep at most sel neighbours of an atom (per neighbour type for
 * se_e2_a-like models, whose get_sel() has one value per type; in all for DPA1/2/3, one
 * value), the nearest, and drop the rest: the energy then depends on a cut the model was
 * not trained with. Kept as DeePMD-kit does, and warned once per run (rank 0 of the
 * partition) with the atom whose count exceeds its limit most, checked after each
 * neighbor-list rebuild (collective: every rank rebuilds together) until it warns. */
void PairAisci::deepmd_check_sel()
{
  if (sel_warned || deepmd_sel.empty() || neighbor->ncalls == sel_checked) return;
  sel_checked = neighbor->ncalls;
  const bool per_type = deepmd_sel.size() > 1;
  const int width = per_type ? (int) deepmd_sel.size() : 1;
  const int64_t ne = aisci_graph_num_edges(edges);
  const int64_t *edge_index = aisci_graph_edge_index(edges);
  std::vector<int64_t> count((size_t) n_local * width, 0);
  for (int64_t e = 0; e < ne; e++) {
    const int64_t i = edge_index[e], j = edge_index[ne + e];
    if (i < 0 || i >= n_local) continue;
    const int64_t t = per_type ? model_types[j] : 0;
    if (t >= 0 && t < width) count[(size_t) i * width + t]++;
  }
  struct {
    double excess;
    int rank;
  } mine = {0.0, comm->me}, worst;
  double detail[4] = {0.0, 0.0, 0.0, 0.0};    // count, limit, model type, atom ID
  for (int i = 0; i < n_local; i++)
    for (int t = 0; t < width; t++) {
      const double excess = (double) (count[(size_t) i * width + t] - deepmd_sel[t]);
      if (excess > mine.excess) {
        mine.excess = excess;
        detail[0] = (double) count[(size_t) i * width + t];
        detail[1] = (double) deepmd_sel[t];
        detail[2] = t;
        detail[3] = (double) atom->tag[atom_index[i]];
      }
    }
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, world);
  if (!(worst.excess > 0.0)) return;
  MPI_Bcast(detail, 4, MPI_DOUBLE, worst.rank, world);
  sel_warned = true;
  if (comm->me != 0) return;
  char cut[32];
  std::snprintf(cut, sizeof cut, "%g", cutoff);
  const std::string type =
      per_type ? std::string(" of type ") + api->model_type_name(model, (int) detail[2]) : "";
  error->warning(FLERR, style_label + ": atom ID " + std::to_string((long long) detail[3]) +
                            " has " + std::to_string((long long) detail[0]) + " neighbours" +
                            type + " within the cutoff (" + cut + " A) of DeePMD-kit model '" +
                            model_file + "', more than its sel " +
                            std::to_string((long long) detail[1]) + " (the largest excess, step " +
                            std::to_string((long long) update->ntimestep) +
                            "): the model keeps the nearest " +
                            std::to_string((long long) detail[1]) + " and drops the others, as "
                            "DeePMD-kit does; its energy and forces then depend on that cut "
                            "(a model with a larger sel avoids it; warned once per run)");
}
