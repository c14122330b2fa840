/* Run-time loading of the torch wrapper (libaisci_torch.so).
 *
 * libaisci_lammps never links libtorch: loading it pulls in ~290 shared libraries and
 * costs about a second per process and MPI rank, which runs that use no model (PIMD
 * with classical force fields) must not pay. The first style that needs a model calls
 * torch_api(), which dlopen()s the wrapper once per process and resolves the C
 * functions of include/aisci/model.h with dlsym. */
#ifndef AISCI_TORCH_LOADER_H
#define AISCI_TORCH_LOADER_H

#include <string>

/* Declarations only (for the function types): nothing here links libaisci_torch. */
#include "../torch/include/aisci/model.h"

namespace AISCI {

/* The C API of libaisci_torch, resolved at run time. */
struct TorchApi {
  decltype(&aisci_model_create) model_create;
  decltype(&aisci_model_destroy) model_destroy;
  decltype(&aisci_model_cutoff) model_cutoff;
  decltype(&aisci_model_cutoff_3body) model_cutoff_3body;
  decltype(&aisci_model_num_layers) model_num_layers;
  decltype(&aisci_model_needs_triplets) model_needs_triplets;
  decltype(&aisci_model_num_types) model_num_types;
  decltype(&aisci_model_type_name) model_type_name;
  decltype(&aisci_model_type_index) model_type_index;
  decltype(&aisci_model_check_type) model_check_type;
  decltype(&aisci_model_dtype) model_dtype;
  decltype(&aisci_model_architecture) model_architecture;
  decltype(&aisci_model_units) model_units;
  decltype(&aisci_model_device) model_device;
  decltype(&aisci_model_metadata) model_metadata;
  decltype(&aisci_model_compute) model_compute;
  decltype(&aisci_model_output_is_vector) model_output_is_vector;
  decltype(&aisci_model_compute_vector) model_compute_vector;
  decltype(&aisci_model_vector_backward) model_vector_backward;
  decltype(&aisci_model_ghost_exchange) model_ghost_exchange;
  decltype(&aisci_model_set_exchange) model_set_exchange;
  decltype(&aisci_torch_cuda_device_count) cuda_device_count;
  decltype(&aisci_model_format) model_format;
  decltype(&aisci_model_compute_extended) model_compute_extended;
  std::string library;    // path of the library that was opened
};

/* The torch wrapper's functions, loading the library on first use. Search order: the
 * environment variable AISCI_TORCH_LIBRARY (a path, e.g. to a CUDA build of the
 * wrapper), the path compiled in at build time, then "libaisci_torch.so" through the
 * dynamic loader's search path; a set AISCI_TORCH_LIBRARY that cannot be loaded is an
 * error (no fall-back). The library stays loaded until the process exits.
 * Returns nullptr and explains why (every path tried, dlerror text) on failure. */
const TorchApi *torch_api(std::string &why);

}    // namespace AISCI

#endif
