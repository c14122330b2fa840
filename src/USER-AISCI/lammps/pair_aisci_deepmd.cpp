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
