/* Internal to libaisci_torch: DeePMD-kit PyTorch frozen models (`dp --pt freeze`).
 *
 * Such a file is TorchScript without our aisci_metadata; it has the methods
 * forward_lower(extended_coord, extended_atype, nlist, mapping, fparam, aparam,
 * do_atomic_virial, comm_dict), get_type_map(), get_rcut(), get_sel(), get_dim_fparam(),
 * get_dim_aparam(), has_message_passing() and model_output_type(). model.cpp recognises
 * it at aisci_model_create() and calls the functions here; docs/pair_aisci.md,
 * "DeePMD-kit models", describes what is supported and refused. */
#ifndef AISCI_TORCH_DEEPMD_MODEL_H
#define AISCI_TORCH_DEEPMD_MODEL_H

#include "aisci/status.h"

#include <torch/script.h>

#include <string>
#include <vector>

namespace aisci_torch {

/* A refusal or failure: the status and the full message (caught by model.cpp). */
struct DeepmdFailure {
  aisci_status status;
  std::string message;
};

/* What aisci_model_create() learns from a DeePMD-kit file. */
struct DeepmdInfo {
  std::vector<std::string> type_map; /* element name of each model type */
  double rcut = 0.0;                 /* Angstrom */
  int64_t nsel = 0;                  /* sum of get_sel(): neighbours the model keeps */
  std::string sel;                   /* get_sel(), space-separated: one value (all types
                                        together) or one per type of the type map */
  bool message_passing = false;      /* DPA2/DPA3: calls deepmd::border_op with comm_dict */
  bool vector = false;               /* dipole model: per-atom vectors "dipole" */
  std::string output;                /* "energy" or "dipole" */
  std::string selected_types;        /* dipole: names of get_sel_type(), space-separated */
  std::string dtype;                 /* "float32" or "float64": the weights' dtype */
  int device_rewrites = 0;           /* hard-coded CUDA device constants moved to the run device */
};

/* True for a module that looks like a DeePMD-kit frozen model (forward_lower,
 * get_type_map and get_rcut methods). */
bool deepmd_detect(const torch::jit::Module &module);

/* Read the model's properties and refuse what is not supported (fparam/aparam, unknown
 * output kinds); rewrite hard-coded CUDA device constants of the TorchScript code to
 * `device` (a file frozen on a GPU creates its border_op arguments on "cuda:0"). Throws
 * DeepmdFailure. Call before the first forward_lower(). */
DeepmdInfo deepmd_inspect(torch::jit::Module &module, const std::string &path,
                          const torch::Device &device);

/* Outputs of one forward_lower() call, float64 host arrays owned by the caller (NULL: not
 * wanted). Shapes as in aisci_model_compute_extended(). */
struct DeepmdOutputs {
  double *energy = nullptr;
  double *atom_energy = nullptr;
  double *forces = nullptr;
  double *virial = nullptr;
  double *atom_virial = nullptr;
};

/* Energy model on an extended system: n_local owned atoms first, then n_all - n_local
 * ghosts; nlist n_local x n_neigh (indices into the extended atoms, -1 padding); mapping
 * (n_all owner indices in [0, n_local)) or NULL; with_comm: pass a comm_dict so that a
 * message-passing model calls deepmd::border_op (ghost-feature exchange). Throws
 * DeepmdFailure or c10::Error. */
void deepmd_compute_extended(torch::jit::Module &module, const DeepmdInfo &info,
                             const std::string &path, const torch::Device &device,
                             int64_t n_local, int64_t n_all, const int64_t *types,
                             const double *coords, int64_t n_neigh, const int64_t *nlist,
                             const int64_t *mapping, bool with_comm, const DeepmdOutputs &out);

/* Vector (dipole) model on an edge graph, for aisci_model_compute_vector(): every edge e
 * = (i, j) becomes an extended atom of type types[j] at edge_vec[e] relative to its
 * centre i (centres at the origin), so the result is a differentiable function of the
 * edge-vector leaf `vec` ([E, 3], model dtype) and the existing vector-Jacobian product
 * applies. Exact for models without message passing (refused otherwise). Returns
 * [n_atoms, 3] (zeros for atoms of types the model does not predict). */
torch::Tensor deepmd_vector_from_edges(torch::jit::Module &module, const DeepmdInfo &info,
                                       const std::string &path, int64_t n_atoms,
                                       const torch::Tensor &atom_types,
                                       const torch::Tensor &edge_index,
                                       const torch::Tensor &vec);

/* For a load error "Unknown builtin op: NS::NAME" of libtorch: a message naming the
 * operator (with a hint for DeePMD-kit's compressed models); "" for any other error. */
std::string unknown_operator_message(const std::string &path, const std::string &what);

/* deepmd::border_op's kernel (border_op.cpp) calls this: the ghost-feature exchange of
 * the aisci_model compute call running on this thread (model.cpp). */
torch::Tensor ghost_exchange_apply(const torch::Tensor &features);

}    // namespace aisci_torch

#endif
