/* deepmd::border_op: our implementation of the ghost-feature operator that DeePMD-kit's
 * message-passing models (DPA2, DPA3) call between their layers when forward_lower() gets
 * a comm_dict. Registered when libaisci_torch is loaded, so that such files load.
 *
 * Schema (DeePMD-kit's): border_op(sendlist, sendproc, recvproc, sendnum, recvnum, g1,
 * communicator, nlocal, nghost) -> Tensor[]. g1 is [nlocal + nghost, C]: the features of
 * the owned atoms, zero rows for the ghosts. The result is [g1'] with every ghost row
 * replaced by its owner's row (forward communication); its backward adds each ghost
 * row's gradient into the owner's row (reverse communication).
 *
 * Our design (docs/pair_aisci.md, "DeePMD-kit models"): the communication pattern is not
 * read from the send lists in comm_dict but taken from the caller of
 * aisci_model_compute_extended(), through the same ghost-exchange callbacks as our own
 * aisci::ghost_exchange (pair_style aisci: LAMMPS's forward_comm_pair / reverse_comm_pair,
 * which also serve periodic self-images on one rank). The tensors sendlist ... communicator
 * are therefore ignored; nlocal and nghost are checked against g1. */
#include "deepmd_model.h"

#include <torch/library.h>

#include <memory>

namespace {

std::vector<torch::Tensor> border_op(const torch::Tensor &sendlist, const torch::Tensor &sendproc,
                                     const torch::Tensor &recvproc, const torch::Tensor &sendnum,
                                     const torch::Tensor &recvnum, const torch::Tensor &g1,
                                     const torch::Tensor &communicator,
                                     const torch::Tensor &nlocal, const torch::Tensor &nghost)
{
  TORCH_CHECK(g1.dim() == 2, "deepmd::border_op: g1 must have shape [nlocal + nghost, C], got ",
              g1.sizes());
  const int64_t nl = nlocal.item<int64_t>(), ng = nghost.item<int64_t>();
  TORCH_CHECK(g1.size(0) == nl + ng, "deepmd::border_op: g1 has ", g1.size(0),
              " rows, expected nlocal + nghost = ", nl + ng);
  return {aisci_torch::ghost_exchange_apply(g1)};
}

/* Defined only if no library of this process (DeePMD-kit's own libdeepmd_op_pt) has
 * defined the operator already: a second definition would abort the process. */
struct RegisterBorderOp {
  std::unique_ptr<torch::Library> lib;
  RegisterBorderOp()
  {
    try {
      if (c10::Dispatcher::singleton().findSchema({"deepmd::border_op", ""})) return;
      lib.reset(new torch::Library(torch::Library::FRAGMENT, "deepmd", c10::nullopt, __FILE__,
                                   __LINE__));
      lib->def("border_op(Tensor sendlist, Tensor sendproc, Tensor recvproc, Tensor sendnum, "
               "Tensor recvnum, Tensor g1, Tensor communicator, Tensor nlocal, Tensor nghost) "
               "-> Tensor[]",
               &border_op);
    } catch (...) {
    }
  }
};
RegisterBorderOp register_border_op;

}    // namespace
