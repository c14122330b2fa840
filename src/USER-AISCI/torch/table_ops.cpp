/* DeePMD-kit's tabulated-embedding operators, declared so that DeePMD-kit 3.2 models load.
 *
 * A model frozen by DeePMD-kit 3.2 (`dp --pt freeze`, or `dp convert-backend` of a
 * TensorFlow model) carries, in the TorchScript code of its descriptor, the branch that a
 * compressed model (`dp compress`) runs: a call of deepmd::tabulate_fusion_se_a (se_e2_a),
 * _se_atten (se_atten/DPA1, DPA2's repinit), _se_t (se_e3), _se_t_tebd (se_e3_tebd) or
 * _se_r (se_e2_r). TorchScript resolves every operator by name when the file is loaded,
 * so an uncompressed model whose code only names one of them is refused unless the name
 * exists. These definitions give the names with DeePMD-kit's schemas (read from its
 * source: the argument types of its C++ operators); an uncompressed model never calls
 * them. Called (a compressed model), they stop with an error saying so: the tabulated
 * embeddings themselves are not computed by this build.
 * Each is defined only if no library of this process (DeePMD-kit's libdeepmd_op_pt) has
 * defined it already: a second definition would abort the process (so DeePMD-kit's
 * operator library, if a process wants it, must be loaded before libaisci_torch). A
 * definition that fails (an incompatible libtorch) is left out silently: the model that
 * names the operator is then refused at load with libtorch's "unknown builtin op", which
 * deepmd_model.cpp turns into a message naming the operator. */
#include "deepmd_model.h"

#include <torch/library.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

[[noreturn]] void compressed(const char *op)
{
  throw std::runtime_error(std::string("deepmd::") + op +
                           " was called: the model is a compressed DeePMD-kit model (dp "
                           "compress), whose tabulated embeddings this build does not compute; "
                           "use the uncompressed frozen model (dp --pt freeze)");
}

std::vector<torch::Tensor> se_a(const torch::Tensor &, const torch::Tensor &, const torch::Tensor &,
                                const torch::Tensor &, int64_t)
{
  compressed("tabulate_fusion_se_a");
}
std::vector<torch::Tensor> se_t(const torch::Tensor &, const torch::Tensor &, const torch::Tensor &,
                                const torch::Tensor &, int64_t)
{
  compressed("tabulate_fusion_se_t");
}
std::vector<torch::Tensor> se_t_tebd(const torch::Tensor &, const torch::Tensor &,
                                     const torch::Tensor &, const torch::Tensor &, int64_t)
{
  compressed("tabulate_fusion_se_t_tebd");
}
std::vector<torch::Tensor> se_r(const torch::Tensor &, const torch::Tensor &, const torch::Tensor &,
                                int64_t)
{
  compressed("tabulate_fusion_se_r");
}
std::vector<torch::Tensor> se_atten(const torch::Tensor &, const torch::Tensor &,
                                    const torch::Tensor &, const torch::Tensor &,
                                    const torch::Tensor &, int64_t, bool)
{
  compressed("tabulate_fusion_se_atten");
}

struct RegisterTableOps {
  std::vector<std::unique_ptr<torch::Library>> libs;
  template <typename F> void define(const char *name, const char *schema, F *fn)
  {
    try {
      if (c10::Dispatcher::singleton().findSchema({std::string("deepmd::") + name, ""})) return;
      libs.emplace_back(new torch::Library(torch::Library::FRAGMENT, "deepmd", c10::nullopt,
                                           __FILE__, __LINE__));
      libs.back()->def(schema, fn);
    } catch (...) {
    }
  }
  RegisterTableOps()
  {
    define("tabulate_fusion_se_a",
           "tabulate_fusion_se_a(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_a);
    define("tabulate_fusion_se_t",
           "tabulate_fusion_se_t(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_t);
    define("tabulate_fusion_se_t_tebd",
           "tabulate_fusion_se_t_tebd(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_t_tebd);
    define("tabulate_fusion_se_r",
           "tabulate_fusion_se_r(Tensor table, Tensor table_info, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_r);
    define("tabulate_fusion_se_atten",
           "tabulate_fusion_se_atten(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "Tensor two_embed, int last_layer_size, bool is_sorted) -> Tensor[]",
           &se_atten);
  }
};
RegisterTableOps register_table_ops;

}    // namespace
