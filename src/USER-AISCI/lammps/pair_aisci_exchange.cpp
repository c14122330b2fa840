/* pair_style aisci, keyword ghost: ghost-feature exchange for deep message-passing
 * models, the per-rank GPU choice of device cuda, and the style's forward and reverse
 * communication (features; forces and per-atom virials with newton off). See
 * docs/pair_aisci.md.
 *
 * A model exported with ghost exchange (metadata ghost_exchange = 1) calls the operator
 * aisci::ghost_exchange(h) of libaisci_torch between its layers. With the callbacks of
 * this file registered (aisci_model_set_exchange), the operator
 *   forward:  overwrites the feature rows of ghost atoms with their owners' rows, through
 *             LAMMPS's forward communication (comm->forward_comm_pair);
 *   backward: adds the gradient rows of ghost atoms into their owners' rows (reverse
 *             communication, comm->reverse_comm_pair) and zeroes the ghost rows.
 * Each rank then computes the features of its owned atoms only (edges with owned
 * centres) and needs ghosts within one cutoff (+ skin), not num_layers x cutoff. Every
 * rank makes the same calls in the same order (same model, same layers), so the
 * communication is collective without further synchronisation. */
#include "pair_aisci.h"

#include "aisci_lmp.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "universe.h"

#include <algorithm>
#include <cstdio>
#include <mpi.h>

using namespace LAMMPS_NS;

static const std::string STYLE = "pair_style aisci";

/* device cuda: one GPU per rank, chosen by the node-local rank (ranks of one node share
 * its GPUs round-robin); cpu and an explicit cuda:N are passed on unchanged. With no GPU
 * visible, "cuda" is passed on and aisci_model_create reports it. */
std::string PairAisci::select_device()
{
  if (device != "cuda") return device;
  // Ranks of the whole job (universe->uworld), not of this partition: with one bead per
  // partition, a partition-local count would send every bead on a node to cuda:0.
  MPI_Comm node;
  MPI_Comm_split_type(universe->uworld, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0, nlocal_ranks = 1;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &nlocal_ranks);
  MPI_Comm_free(&node);
  const int count = api->cuda_device_count();
  if (count <= 0) return device;
  const std::string chosen = "cuda:" + std::to_string(local % count);
  if (comm->me == 0)
    utils::logmesg(lmp, STYLE + ": device cuda: " + std::to_string(count) +
                            " GPU(s) visible per node, " + std::to_string(nlocal_ranks) +
                            " rank(s) of the job on this node; rank r uses cuda:(node-local rank % " +
                            std::to_string(count) + "), rank 0 -> " + chosen + "\n");
  return chosen;
}

/* Choose widened shell or exchange for this run, register or clear the callbacks, and
 * size LAMMPS's communication buffers (comm->init() runs after init_style()). */
void PairAisci::exchange_init()
{
  const bool capable = api->model_ghost_exchange(model) == 1;
  if (ghost_mode == GHOST_EXCHANGE && !capable)
    error->all(FLERR, STYLE + ": ghost exchange needs a model exported with ghost-feature "
                              "exchange (metadata ghost_exchange = 1, potentials/common/"
                              "export.py --ghost-exchange), but model file '" + model_file +
                              "' has none (use ghost auto or ghost widen)");
  // auto: exchange when the model can and has something to exchange (several layers);
  // one rank with the periodic graph has no ghosts, hence nothing to exchange either
  exchange = !periodic && capable &&
      (ghost_mode == GHOST_EXCHANGE || (ghost_mode == GHOST_AUTO && num_layers > 1));
  if (exchange && ring_tolerance >= 0.0)
    error->all(FLERR, STYLE + ": balance ring cannot be combined with ghost exchange (ring "
                              "balancing hands single environments to other ranks); use "
                              "ghost widen, or balance off");
  comm_forward = exchange ? EXCHANGE_CHUNK : 0;
  comm_reverse = comm_reverse_off = exchange ? std::max(9, EXCHANGE_CHUNK) : 9;
  aisci_status st = api->model_set_exchange(model, exchange ? &exchange_forward : nullptr,
                                            exchange ? &exchange_reverse : nullptr, this);
  check_all(st, STYLE + ": ghost exchange");
  exchange_calls = 0;
  if (comm->me != 0) return;
  char text[160];
  if (exchange)
    std::snprintf(text, sizeof text, "ghost exchange of features between the %d layers, "
                  "ghost shell one cutoff (%g A + skin)", num_layers, cutoff);
  else if (periodic)
    std::snprintf(text, sizeof text, "periodic graph on one rank (no ghost atoms)");
  else
    std::snprintf(text, sizeof text, "widened ghost shell %d x %g A + skin", num_layers, cutoff);
  utils::logmesg(lmp, STYLE + ": " + text + "\n");
}

int PairAisci::exchange_forward(void *self, int64_t n, int64_t width, double *features)
{
  try {
    static_cast<PairAisci *>(self)->exchange_features(n, width, features, true);
  } catch (...) {
    return 1;    // no C++ exception may cross the C callback
  }
  return 0;
}

int PairAisci::exchange_reverse(void *self, int64_t n, int64_t width, double *features)
{
  try {
    static_cast<PairAisci *>(self)->exchange_features(n, width, features, false);
  } catch (...) {
    return 1;
  }
  return 0;
}

/* features: n x width row-major, graph order (graph atom k is LAMMPS atom atom_index[k];
 * k < n_local owned). One communication per chunk of at most EXCHANGE_CHUNK channels. */
void PairAisci::exchange_features(int64_t n, int64_t width, double *features, bool forward)
{
  if (n != (int64_t) atom_index.size())
    AISCI::error_one(lmp, FLERR, STYLE + ": ghost exchange got " + std::to_string(n) +
                          " feature rows for " + std::to_string(atom_index.size()) +
                          " graph atoms");
  const int nall = atom->nlocal + atom->nghost;
  exchange_calls++;
  for (int64_t c0 = 0; c0 < width; c0 += EXCHANGE_CHUNK) {
    const int w = (int) std::min<int64_t>(EXCHANGE_CHUNK, width - c0);
    xwidth = w;
    xbuf.assign((size_t) w * nall, 0.0);
    if (forward) {
      for (int k = 0; k < n_local; k++)
        std::copy_n(&features[k * width + c0], w, &xbuf[(size_t) w * atom_index[k]]);
      AISCI::forward_comm_pair(comm, this);
      for (int64_t k = n_local; k < n; k++)
        std::copy_n(&xbuf[(size_t) w * atom_index[k]], w, &features[k * width + c0]);
    } else {
      for (int64_t k = 0; k < n; k++)
        std::copy_n(&features[k * width + c0], w, &xbuf[(size_t) w * atom_index[k]]);
      comm_features = true;
      AISCI::reverse_comm_pair(comm, this);
      comm_features = false;
      for (int k = 0; k < n_local; k++)
        std::copy_n(&xbuf[(size_t) w * atom_index[k]], w, &features[k * width + c0]);
      for (int64_t k = n_local; k < n; k++) std::fill_n(&features[k * width + c0], w, 0.0);
    }
  }
}

/* Forward communication of one feature chunk (xbuf, xwidth values per atom); features
 * are invariant, so periodic images need no shift (pbc arguments unused). */
int PairAisci::pack_forward_comm(int n, int *list, double *buf, int, int *)
{
  int m = 0;
  for (int k = 0; k < n; k++)
    for (int v = 0; v < xwidth; v++) buf[m++] = xbuf[(size_t) xwidth * list[k] + v];
  return m;
}

void PairAisci::unpack_forward_comm(int n, int first, double *buf)
{
  int m = 0;
  for (int i = first; i < first + n; i++)
    for (int v = 0; v < xwidth; v++) xbuf[(size_t) xwidth * i + v] = buf[m++];
}

/* Reverse communication of forces (newton off: rbuf, rstride values per atom) or of
 * feature gradients (ghost exchange: xbuf, xwidth values per atom). */
int PairAisci::pack_reverse_comm(int n, int first, double *buf)
{
  const std::vector<double> &b = comm_features ? xbuf : rbuf;
  const int w = comm_features ? xwidth : rstride;
  int m = 0;
  for (int i = first; i < first + n; i++)
    for (int v = 0; v < w; v++) buf[m++] = b[(size_t) w * i + v];
  return m;
}

void PairAisci::unpack_reverse_comm(int n, int *list, double *buf)
{
  std::vector<double> &b = comm_features ? xbuf : rbuf;
  const int w = comm_features ? xwidth : rstride;
  int m = 0;
  for (int k = 0; k < n; k++)
    for (int v = 0; v < w; v++) b[(size_t) w * list[k] + v] += buf[m++];
}
