/* Run-time loading of the torch wrapper (libaisci_torch.so).
 *
 * libaisci_lammps never links libtorch: loading it pulls in ~290 shared libraries and
 * costs about a second per process and MPI rank, which runs that use no model (PIMD
 * with classical force fields) must not pay. The first style that needs a model calls
 * torch_api(), which dlopen()s the wrapper once per process and resolves the C
 * functions listed in include/aisci/model_api.def with dlsym. */
#ifndef AISCI_TORCH_LOADER_H
#define AISCI_TORCH_LOADER_H

#include <string>

/* Declarations only (for the function types): nothing here links libaisci_torch. */
#include "../torch/include/aisci/model.h"

namespace AISCI {

/* The C API of libaisci_torch, resolved at run time. */
struct TorchApi {
  // one member per entry of aisci/model_api.def, typed by the declaration in model.h
#define AISCI_TORCH_FN(member, symbol) decltype(&symbol) member;
#include "../torch/include/aisci/model_api.def"
#undef AISCI_TORCH_FN
  std::string library;    // path of the library that was opened
};

/* The torch wrapper's functions, loading the library on first use. Search order: the
 * environment variable AISCI_TORCH_LIBRARY (a path, e.g. to a CUDA build of the
 * wrapper), the path compiled in at build time, then "libaisci_torch.so" through the
 * dynamic loader's search path; a set AISCI_TORCH_LIBRARY that cannot be loaded is an
 * error (no fall-back). The library stays loaded until the process exits.
 * Returns nullptr and explains why (every path tried, dlerror text) on failure. */
const TorchApi *torch_api(std::string &why);

/* The line a style writes to LAMMPS's log (rank 0) after loading `model` from `file`
 * when the file is one of ours without a weight checksum (metadata key checksum): its
 * weights loaded unverified. "" when it has one, or for DeePMD-kit files. */
std::string unverified_weights_note(const TorchApi *api, const aisci_model *model,
                                    const std::string &style, const std::string &file);

}    // namespace AISCI

#endif
