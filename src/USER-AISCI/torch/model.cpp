/* libaisci_torch: the C API of include/aisci/model.h over libtorch (TorchScript).
 *
 * Every entry point catches std::exception and everything else, so no C++ exception
 * crosses the C boundary; failures become an aisci_status plus aisci_set_error(). */
#include "aisci/model.h"

#include "cpu_cache.h"
#include "deepmd_model.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

/* Ghost-feature exchange of one model handle (aisci_model_set_exchange()): the caller's
 * callbacks and, during one aisci_model_compute(), the number of graph atoms and the
 * feature tensors that entered aisci::ghost_exchange (extra inputs of the backward pass,
 * so that every exchange's backward, a collective call, runs on every rank). */
struct aisci_exchange_state {
  aisci_exchange_fn forward = nullptr;
  aisci_exchange_fn reverse = nullptr;
  void *user_data = nullptr;
  int64_t n_atoms = 0;
  std::vector<torch::Tensor> inputs;
};

struct aisci_model {
  torch::jit::Module module;
  aisci_exchange_state exchange;
  int ghost_exchange = 0; /* metadata ghost_exchange = 1: the model calls the op */
  torch::Device device{torch::kCPU};
  torch::ScalarType dtype{torch::kFloat64};
  std::string path;
  std::string device_name;
  std::string dtype_name;
  std::map<std::string, std::string> metadata;
  std::vector<std::string> type_names;
  double cutoff = 0.0;
  double cutoff_3body = 0.0;
  int num_layers = 0;
  int needs_triplets = 0;
  int output_vector = 0; /* metadata output = vector (DW model) */
  /* A DeePMD-kit frozen model (deepmd_model.cpp): its properties; null for our files. */
  std::shared_ptr<aisci_torch::DeepmdInfo> deepmd;
  /* Autograd graph of the last aisci_model_compute_vector(), kept for
   * aisci_model_vector_backward(): the edge-vector leaf (model dtype), the same vectors
   * in float64, the edge index and the [N, 3] output. Undefined when none is held. */
  torch::Tensor held_vec, held_vec64, held_index, held_out;
  int64_t held_atoms = 0;
  void release_graph()
  {
    held_vec = held_vec64 = held_index = held_out = torch::Tensor();
    held_atoms = 0;
  }
};

namespace {

/* The exchange of the aisci_model_compute() running on this thread, or null: outside it
 * (Python, a handle without callbacks, the vector path) aisci::ghost_exchange is the
 * identity. */
thread_local aisci_exchange_state *current_exchange = nullptr;

/* Makes x (or nothing, when null) the exchange of one C API call over n_atoms atoms:
 * the saved inputs of an earlier call are dropped on entry and this call's on exit. */
struct ExchangeScope {
  aisci_exchange_state *x;
  ExchangeScope(aisci_exchange_state *state, int64_t n_atoms) : x(state)
  {
    if (x) {
      x->n_atoms = n_atoms;
      x->inputs.clear();
    }
    current_exchange = x;
  }
  ~ExchangeScope()
  {
    current_exchange = nullptr;
    if (x) x->inputs.clear();
  }
};

/* Run one callback on a float64 host copy of t ([n_atoms, C]) and return the result on
 * t's device in t's dtype. */
torch::Tensor run_exchange(aisci_exchange_state *x, bool forward, const torch::Tensor &t)
{
  const char *what = forward ? "forward" : "reverse";
  TORCH_CHECK(t.dim() == 2 && t.size(0) == x->n_atoms, "aisci::ghost_exchange (", what,
              "): features must have shape [n_atoms = ", x->n_atoms, ", C], got ", t.sizes());
  torch::Tensor host = t.detach().to(torch::kCPU, torch::kFloat64, false, true).contiguous();
  aisci_exchange_fn fn = forward ? x->forward : x->reverse;
  const int rc = fn(x->user_data, host.size(0), host.size(1), host.data_ptr<double>());
  TORCH_CHECK(rc == 0, "aisci::ghost_exchange: the ", what, " callback failed (code ", rc, ")");
  return host.to(t.device(), t.scalar_type());
}

/* forward: ghost rows <- their owners' rows (caller's forward callback); backward:
 * owners' rows += their ghosts' gradients, ghost rows <- 0 (reverse callback). */
struct GhostExchange : public torch::autograd::Function<GhostExchange> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx, torch::Tensor features)
  {
    aisci_exchange_state *x = current_exchange;
    // Kept in the node: the backward pass may run on another thread (CUDA).
    ctx->saved_data["exchange"] = (int64_t) (intptr_t) x;
    if (!x) return features.clone();
    return run_exchange(x, true, features);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                 torch::autograd::variable_list grad)
  {
    auto *x = (aisci_exchange_state *) (intptr_t) ctx->saved_data["exchange"].toInt();
    if (!x) return {grad[0]};
    return {run_exchange(x, false, grad[0])};
  }
};

torch::Tensor ghost_exchange_op(const torch::Tensor &features)
{
  aisci_exchange_state *x = current_exchange;
  torch::Tensor in = features;
  if (x && torch::GradMode::is_enabled()) {
    // Every exchange needs a node in the graph and must be reached by the backward pass,
    // even where the features do not depend on the edge vectors (a rank without edges).
    if (!in.requires_grad()) in = in.detach().requires_grad_(true);
    x->inputs.push_back(in);
  }
  return GhostExchange::apply(in);
}

/* Registers aisci::ghost_exchange when the library is loaded. The schema is defined
 * here unless it exists already (potentials/common/ops.py defines it, with an identity
 * kernel, for Python; defining it twice would abort the process). Our kernel is then
 * registered directly for the autograd keys of CPU and CUDA tensors, which take
 * precedence over the Python kernel (CompositeImplicitAutograd), so a process that
 * imported ops.py first still reaches the exchange callbacks. */
struct RegisterOps {
  std::unique_ptr<torch::Library> def, impl_cpu, impl_cuda;
  RegisterOps()
  {
    try {
      if (!c10::Dispatcher::singleton().findSchema({"aisci::ghost_exchange", ""})) {
        def.reset(new torch::Library(torch::Library::FRAGMENT, "aisci", c10::nullopt, __FILE__,
                                     __LINE__));
        def->def("ghost_exchange(Tensor features) -> Tensor", &ghost_exchange_op);
      }
      impl_cpu.reset(new torch::Library(torch::Library::IMPL, "aisci",
                                        c10::DispatchKey::AutogradCPU, __FILE__, __LINE__));
      impl_cpu->impl("ghost_exchange", &ghost_exchange_op);
      impl_cuda.reset(new torch::Library(torch::Library::IMPL, "aisci",
                                         c10::DispatchKey::AutogradCUDA, __FILE__, __LINE__));
      impl_cuda->impl("ghost_exchange", &ghost_exchange_op);
    } catch (...) {
    }
  }
};
RegisterOps register_ops;

/* Keys every model file of contract v1 must carry, in the order they are checked.
 * "checksum" is not among them: the exporters always write it and it is verified when
 * present, but a file without it still loads (the adapters log that it has none). */
const char *const required_keys[] = {"format_version", "architecture", "cutoff",
                                     "cutoff_3body",   "num_layers",   "type_names",
                                     "units",          "dtype",        "needs_triplets"};

/* The first line of an exception text: libtorch appends long C++ backtraces. An error
 * raised inside a TorchScript graph starts with a generic line and ends with the
 * original message: take that last non-empty line then. */
std::string first_line(const char *what)
{
  std::string s(what ? what : "");
  // some messages (e.g. "Unknown builtin op: ..." from the TorchScript loader) start
  // with a newline: their first line is the first non-blank one
  size_t start = s.find_first_not_of(" \t\r\n");
  s.erase(0, start == std::string::npos ? s.size() : start);
  if (s.rfind("The following operation failed in the TorchScript interpreter", 0) == 0) {
    size_t end = s.find_last_not_of(" \t\r\n");
    if (end != std::string::npos) {
      size_t begin = s.rfind('\n', end);
      return s.substr(begin == std::string::npos ? 0 : begin + 1, end - begin);
    }
  }
  size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

std::string trim(const std::string &s)
{
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

/* The failure of one entry point: status plus message (thrown inside, caught at the
 * boundary by guard()). */
struct Failure {
  aisci_status status;
  std::string message;
};

[[noreturn]] void fail(aisci_status status, const std::string &message)
{
  throw Failure{status, message};
}

/* Run body(); turn every exception into a status and a last-error message. */
template <typename F> aisci_status guard(const char *where, F &&body)
{
  /* Ends the call for the CPU cache after body()'s tensors are gone, on every path. */
  struct EndCall {
    ~EndCall() { aisci_torch::cpu_cache_end_call(); }
  } end_call;
  try {
    body();
    return AISCI_OK;
  } catch (const Failure &f) {
    return aisci_set_error(f.status, "%s", f.message.c_str());
  } catch (const std::bad_alloc &) {
    return aisci_set_error(AISCI_ERR_ALLOC, "%s: out of memory", where);
  } catch (const c10::Error &e) {
    return aisci_set_error(AISCI_ERR_MODEL, "%s: libtorch error: %s", where,
                           first_line(e.what_without_backtrace()).c_str());
  } catch (const std::exception &e) {
    return aisci_set_error(AISCI_ERR_MODEL, "%s: %s", where, first_line(e.what()).c_str());
  } catch (...) {
    return aisci_set_error(AISCI_ERR_INTERNAL, "%s: unknown C++ exception", where);
  }
}

bool parse_double_value(const std::string &s, double &v)
{
  char *end = nullptr;
  errno = 0;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0' && errno != ERANGE && std::isfinite(v);
}

bool parse_int_value(const std::string &s, long &v)
{
  char *end = nullptr;
  errno = 0;
  v = std::strtol(s.c_str(), &end, 10);
  return !s.empty() && *end == '\0' && errno != ERANGE;
}

/* FNV-1a 64-bit hash over the raw bytes of every tensor of the state dict (parameters
 * and buffers, recursive), in sorted key order, each contiguous in its own dtype. */
uint64_t weights_checksum(const torch::jit::Module &module)
{
  std::map<std::string, torch::Tensor> state;
  for (const auto &p : module.named_parameters(true)) state[p.name] = p.value;
  for (const auto &b : module.named_buffers(true)) state[b.name] = b.value;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto &kv : state) {
    torch::Tensor t = kv.second.detach().to(torch::kCPU).contiguous();
    const unsigned char *p = (const unsigned char *) t.data_ptr();
    size_t nbytes = (size_t) t.numel() * t.element_size();
    for (size_t k = 0; k < nbytes; k++) {
      h ^= p[k];
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

/* Number of NaN or infinite values among the floating-point parameters and buffers. */
int64_t count_nonfinite_weights(const torch::jit::Module &module)
{
  int64_t n = 0;
  auto count = [&](const torch::Tensor &t) {
    if (t.is_floating_point() && t.numel() > 0)
      n += torch::logical_not(torch::isfinite(t.detach())).sum().item<int64_t>();
  };
  for (const auto &p : module.named_parameters(true)) count(p.value);
  for (const auto &b : module.named_buffers(true)) count(b.value);
  return n;
}

/* A weight that is NaN or infinite makes every evaluation non-finite: the file is
 * damaged (or was exported from a diverged training). Checked at load, and again where
 * a model gave a non-finite result, so that the message names the file. */
void check_weights_finite(const aisci_model &m, aisci_status status, const std::string &where)
{
  const int64_t n = count_nonfinite_weights(m.module);
  if (n > 0)
    fail(status, where + "model file '" + m.path + "' has non-finite weights (" +
                     std::to_string((long long) n) + " values): the file is damaged");
}

/* The failure of an evaluation that gave a non-finite value: the weights' own failure
 * first when they are not finite, else `message`. */
[[noreturn]] void fail_nonfinite(const aisci_model &m, const std::string &where,
                                 const std::string &message)
{
  check_weights_finite(m, AISCI_ERR_MODEL, where);
  fail(AISCI_ERR_MODEL, message);
}

torch::Device parse_device(const std::string &name)
{
  if (name == "cpu") return torch::Device(torch::kCPU);
  long index = 0;
  if (name == "cuda") {
    index = 0;
  } else if (name.rfind("cuda:", 0) == 0 && parse_int_value(name.substr(5), index) &&
             index >= 0) {
  } else {
    fail(AISCI_ERR_ARG, "unknown device '" + name + "' (expected cpu, cuda or cuda:N)");
  }
  if (!torch::cuda::is_available())
    fail(AISCI_ERR_ARG, "device '" + name + "' requested but this libtorch has no CUDA "
                        "support or no GPU is visible (use device cpu, or a CUDA libtorch)");
  if (index >= (long) torch::cuda::device_count())
    fail(AISCI_ERR_ARG, "device '" + name + "' requested but only " +
                            std::to_string(torch::cuda::device_count()) + " GPU(s) visible");
  return torch::Device(torch::kCUDA, (c10::DeviceIndex) index);
}

/* Parse "key = value" lines and check every key of contract v1. */
void parse_metadata(aisci_model &m, const std::string &text)
{
  const std::string &file = m.path;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  std::map<std::string, int> key_line;    // line of each key seen
  while (std::getline(in, line)) {
    lineno++;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos)
      fail(AISCI_ERR_FORMAT, "model file '" + file + "': metadata line " +
                                 std::to_string(lineno) + " is not 'key = value': '" + t + "'");
    const std::string key = trim(t.substr(0, eq));
    auto seen = key_line.find(key);
    if (seen != key_line.end())
      fail(AISCI_ERR_FORMAT, "model file '" + file + "': metadata key '" + key +
                                 "' appears twice (lines " + std::to_string(seen->second) +
                                 " and " + std::to_string(lineno) + ")");
    key_line[key] = lineno;
    m.metadata[key] = trim(t.substr(eq + 1));
  }
  for (const char *key : required_keys)
    if (!m.metadata.count(key))
      fail(AISCI_ERR_FORMAT, "model file '" + file + "': metadata key '" + key + "' is missing");

  auto bad = [&](const std::string &key, const std::string &what) {
    fail(AISCI_ERR_FORMAT, "model file '" + file + "': metadata key '" + key + "' " + what +
                               ", got '" + m.metadata[key] + "'");
  };
  long iv = 0;
  if (!parse_int_value(m.metadata["format_version"], iv) || iv != 1)
    bad("format_version", "must be 1 (this library reads contract v1)");
  if (!parse_double_value(m.metadata["cutoff"], m.cutoff) || m.cutoff <= 0.0 ||
      m.cutoff > AISCI_MODEL_MAX_CUTOFF)
    bad("cutoff", "must be a number in (0, " + std::to_string((int) AISCI_MODEL_MAX_CUTOFF) +
                      "] (Angstrom)");
  if (!parse_double_value(m.metadata["cutoff_3body"], m.cutoff_3body) || m.cutoff_3body < 0.0 ||
      m.cutoff_3body > m.cutoff)
    bad("cutoff_3body", "must be a number in [0, cutoff]");
  if (!parse_int_value(m.metadata["num_layers"], iv) || iv < 1 || iv > 1000)
    bad("num_layers", "must be an integer >= 1");
  m.num_layers = (int) iv;
  if (!parse_int_value(m.metadata["needs_triplets"], iv) || (iv != 0 && iv != 1))
    bad("needs_triplets", "must be 0 or 1");
  m.needs_triplets = (int) iv;
  if (m.needs_triplets && m.cutoff_3body <= 0.0)
    bad("cutoff_3body", "must be > 0 when needs_triplets = 1");
  if (m.metadata["units"] != "metal") bad("units", "must be metal (eV, Angstrom) in contract v1");
  const std::string &dt = m.metadata["dtype"];
  if (dt != "float32" && dt != "float64") bad("dtype", "must be float32 or float64");
  if (m.metadata["architecture"].empty()) bad("architecture", "must not be empty");

  std::istringstream names(m.metadata["type_names"]);
  std::string name;
  while (names >> name) {
    for (const auto &other : m.type_names)
      if (other == name) bad("type_names", "lists element '" + name + "' twice");
    m.type_names.push_back(name);
  }
  if (m.type_names.empty()) bad("type_names", "must list at least one element");

  auto out_it = m.metadata.find("output");
  if (out_it != m.metadata.end()) {
    if (out_it->second == "vector")
      m.output_vector = 1;
    else if (out_it->second != "energy")
      bad("output", "must be energy or vector");
  }

  auto gx = m.metadata.find("ghost_exchange");
  if (gx != m.metadata.end()) {
    if (!parse_int_value(gx->second, iv) || (iv != 0 && iv != 1)) bad("ghost_exchange", "must be 0 or 1");
    m.ghost_exchange = (int) iv;
  }

  auto cs = m.metadata.find("checksum");
  if (cs != m.metadata.end() &&
      (cs->second.size() != 16 ||
       cs->second.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos))
    bad("checksum", "must be 16 hexadecimal digits");
}

/* Check the graph arguments shared by the compute calls; returns the number of
 * triplets actually passed to the model (0 when it needs none). */
int64_t check_graph(const aisci_model &m, const std::string &where, int64_t n_atoms,
                    const int64_t *types, int64_t n_edges, const int64_t *edge_index,
                    const double *edge_vec, int64_t n_triplets, const int64_t *triplets)
{
  if (n_atoms < 0 || n_edges < 0 || n_triplets < 0)
    fail(AISCI_ERR_ARG, where + "negative atom, edge or triplet count");
  if ((n_atoms > 0 && !types) || (n_edges > 0 && (!edge_index || !edge_vec)))
    fail(AISCI_ERR_ARG, where + "types, edge_index and edge_vec must not be NULL");
  const int64_t ntypes = (int64_t) m.type_names.size();
  for (int64_t a = 0; a < n_atoms; a++)
    if (types[a] < 0 || types[a] >= ntypes)
      fail(AISCI_ERR_ARG, where + "atom " + std::to_string(a) + " has type " +
                              std::to_string(types[a]) + ", outside [0, " +
                              std::to_string(ntypes) + ")");
  for (int64_t k = 0; k < 2 * n_edges; k++)
    if (edge_index[k] < 0 || edge_index[k] >= n_atoms)
      fail(AISCI_ERR_ARG, where + "edge " + std::to_string(k % (n_edges ? n_edges : 1)) +
                              " refers to atom " + std::to_string(edge_index[k]) +
                              ", outside [0, " + std::to_string(n_atoms) + ")");
  const int64_t T = m.needs_triplets ? n_triplets : 0;
  if (T > 0 && !triplets) fail(AISCI_ERR_ARG, where + "triplets must not be NULL");
  for (int64_t k = 0; k < 2 * T; k++)
    if (triplets[k] < 0 || triplets[k] >= n_edges)
      fail(AISCI_ERR_ARG, where + "triplet " + std::to_string(k / 2) + " refers to edge " +
                              std::to_string(triplets[k]) + ", outside [0, " +
                              std::to_string(n_edges) + ")");
  return T;
}

/* Model inputs on the model's device: vec (model dtype) is the autograd leaf, vec64 the
 * same vectors in float64 for the virial. */
struct GraphInput {
  torch::Tensor vec64, vec, index, atom_types, trip;
};

GraphInput make_inputs(const aisci_model &m, int64_t n_atoms, const int64_t *types,
                       int64_t n_edges, const int64_t *edge_index, const double *edge_vec,
                       int64_t T, const int64_t *triplets)
{
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  GraphInput in;
  // Inputs are copied (copy = true): the model must never alias the caller's arrays.
  in.vec64 = torch::from_blob((void *) edge_vec, {n_edges, 3}, f64)
                 .to(m.device, torch::kFloat64, false, true);
  in.vec = in.vec64.to(m.dtype, false, true).requires_grad_(true);
  in.index = torch::from_blob((void *) edge_index, {2, n_edges}, i64)
                 .to(m.device, torch::kInt64, false, true);
  in.atom_types = torch::from_blob((void *) types, {n_atoms}, i64)
                      .to(m.device, torch::kInt64, false, true);
  in.trip = T > 0 ? torch::from_blob((void *) triplets, {T, 2}, i64)
                        .to(m.device, torch::kInt64, false, true)
                  : torch::zeros({0, 2}, i64.device(m.device));
  return in;
}

/* forward() with autograd on; the result must be a Tensor (what names the output). */
torch::Tensor run_forward(aisci_model &m, const std::string &where, const GraphInput &in,
                          const char *what)
{
  torch::IValue result;
  try {
    result = m.module.forward({in.vec, in.index, in.atom_types, in.trip});
  } catch (const c10::Error &e) {
    fail(AISCI_ERR_MODEL, where + "forward() of model '" + m.path +
                              "' failed: " + first_line(e.what_without_backtrace()));
  } catch (const std::exception &e) {    // errors raised inside the TorchScript graph
    fail(AISCI_ERR_MODEL, where + "forward() of model '" + m.path +
                              "' failed: " + first_line(e.what()));
  }
  if (!result.isTensor())
    fail(AISCI_ERR_MODEL, where + "forward() of model '" + m.path + "' returned a " +
                              result.tagKind() + ", expected a Tensor of " + what);
  return result.toTensor();
}

/* Every floating-point parameter and buffer must have the precision the metadata key
 * dtype declares (the weights are cast to it at export). */
void check_weight_dtype(const aisci_model &m)
{
  const std::string &want = m.metadata.at("dtype");
  const torch::ScalarType st = want == "float32" ? torch::kFloat32 : torch::kFloat64;
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto &p : m.module.named_parameters(true)) tensors.emplace_back(p.name, p.value);
  for (const auto &b : m.module.named_buffers(true)) tensors.emplace_back(b.name, b.value);
  for (const auto &nt : tensors) {
    const torch::Tensor &t = nt.second;
    if (!t.is_floating_point() || t.scalar_type() == st) continue;
    // the metadata's spelling for the two dtypes it can name, libtorch's for the rest
    std::string have = c10::toString(t.scalar_type());
    if (t.scalar_type() == torch::kFloat64) have = "float64";
    if (t.scalar_type() == torch::kFloat32) have = "float32";
    fail(AISCI_ERR_FORMAT, "model file '" + m.path + "': metadata key 'dtype' says " + want +
                               " but the weights are " + have + " (tensor '" + nt.first +
                               "'); export the model with the dtype of its weights");
  }
}

/* Forward and backward passes whose output has no autograd path to the edge vectors:
 * the model detached them or ran under torch.no_grad(), and every force would be zero. */
[[noreturn]] void fail_no_gradient(const aisci_model &m, const std::string &where,
                                   const char *what)
{
  fail(AISCI_ERR_MODEL, where + "the " + what + " of model '" + m.path +
                            "' do not depend on the edge vectors (no autograd path: "
                            "exported under torch.no_grad() or with detach()?); its forces "
                            "would all be zero");
}

std::string shape_string(const torch::Tensor &t)
{
  std::string shape = "[";
  for (int64_t d = 0; d < t.dim(); d++) shape += (d ? ", " : "") + std::to_string(t.size(d));
  return shape + "]";
}

/* Set up a DeePMD-kit frozen model (no aisci_metadata): properties from its methods. */
void setup_deepmd(aisci_model &m, const std::string &prec)
{
  aisci_torch::DeepmdInfo info;
  try {
    info = aisci_torch::deepmd_inspect(m.module, m.path, m.device);
  } catch (const aisci_torch::DeepmdFailure &f) {
    fail(f.status, f.message);
  }
  if (prec != "auto" && prec != info.dtype)
    fail(AISCI_ERR_ARG, "DeePMD-kit model file '" + m.path + "' is " + info.dtype +
                            " and casts its inputs itself: precision must be auto (or " + info.dtype +
                            "), got " + prec);
  m.type_names = info.type_map;
  m.cutoff = info.rcut;
  m.num_layers = 1;
  m.output_vector = info.vector ? 1 : 0;
  m.ghost_exchange = info.message_passing ? 1 : 0;
  m.dtype_name = info.dtype;
  m.dtype = info.dtype == "float32" ? torch::kFloat32 : torch::kFloat64;
  m.metadata["format"] = "deepmd-kit";
  m.metadata["architecture"] = std::string("deepmd-kit ") + info.output +
      (info.message_passing ? " (message passing)" : "");
  m.metadata["units"] = "metal";
  m.metadata["dtype"] = info.dtype;
  m.metadata["output"] = info.vector ? "vector" : "energy";
  std::string names;
  for (const auto &n : info.type_map) names += (names.empty() ? "" : " ") + n;
  m.metadata["type_names"] = names;
  m.metadata["device_rewrites"] = std::to_string(info.device_rewrites);
  m.metadata["sel"] = info.sel;    // for the adapters' warning about truncated neighbours
  if (info.vector) m.metadata["selected_types"] = info.selected_types;
  m.deepmd = std::make_shared<aisci_torch::DeepmdInfo>(info);
  try {
    m.module.to(m.device);
    m.module.eval();
  } catch (const c10::Error &e) {
    fail(AISCI_ERR_MODEL, "model file '" + m.path + "': cannot move the model to " +
                              m.device_name + ": " + first_line(e.what_without_backtrace()));
  }
}

}    // namespace

namespace aisci_torch {
/* deepmd::border_op (border_op.cpp) reaches the exchange of the running compute call. */
torch::Tensor ghost_exchange_apply(const torch::Tensor &features)
{
  TORCH_CHECK(current_exchange != nullptr,
              "deepmd::border_op was called without a ghost exchange: use "
              "aisci_model_compute_extended() with exchange callbacks set, or call "
              "forward_lower() without comm_dict");
  return ghost_exchange_op(features);
}
}    // namespace aisci_torch

extern "C" {

aisci_status aisci_model_create(const char *path, const char *device, const char *precision,
                                int nthreads, aisci_model **out)
{
  if (out) *out = nullptr;
  std::unique_ptr<aisci_model> m;
  aisci_status st = guard("aisci_model_create", [&]() {
    if (!out) fail(AISCI_ERR_ARG, "aisci_model_create: out is NULL");
    if (!path || !*path) fail(AISCI_ERR_ARG, "aisci_model_create: no model file given");
    std::string dev = device ? device : "cpu";
    std::string prec = precision ? precision : "auto";
    if (prec != "auto" && prec != "float32" && prec != "float64")
      fail(AISCI_ERR_ARG, "unknown precision '" + prec + "' (expected auto, float32 or float64)");
    if (nthreads < 0)
      fail(AISCI_ERR_ARG, "threads must be >= 0, got " + std::to_string(nthreads));

    m.reset(new aisci_model());
    m->path = path;
    struct stat sb;
    if (stat(path, &sb) != 0)
      fail(AISCI_ERR_IO, "model file '" + m->path + "' not found or not accessible: " +
                             std::strerror(errno));
    if (!S_ISREG(sb.st_mode)) fail(AISCI_ERR_IO, "model file '" + m->path + "' is not a file");
    FILE *probe = std::fopen(path, "rb");
    if (!probe)
      fail(AISCI_ERR_IO, "model file '" + m->path + "' cannot be read: " + std::strerror(errno));
    std::fclose(probe);

    m->device = parse_device(dev);
    m->device_name = m->device.str();
    std::string alloc_error;
    if (!aisci_torch::cpu_cache_install(alloc_error)) fail(AISCI_ERR_ARG, alloc_error);

    /* The profiling executor re-specialises the graph during the first calls and was
     * measured slower for force evaluation than the simple executor when the wrapper
     * was written (that measurement is not kept in the repository; docs/architecture.md
     * has the layers). */
    torch::jit::setGraphExecutorOptimize(false);
    int nt = nthreads;
    if (nt == 0) {
      long env = 0;
      const char *s = std::getenv("OMP_NUM_THREADS");
      nt = (s && parse_int_value(s, env) && env > 0) ? (int) env : 1;
    }
    at::set_num_threads(nt);

    torch::jit::ExtraFilesMap extra{{"aisci_metadata", ""}};
    // libtorch's reason is kept: its archive reader (PytorchStreamReader) fails on
    // truncated or damaged files; anything else (an unknown operator, a newer format)
    // is not corruption
    auto load_failed = [&](const std::string &reason) {
      const bool archive = reason.find("PytorchStreamReader") != std::string::npos;
      fail(AISCI_ERR_FORMAT, "model file '" + m->path + "' " +
                                 (archive ? "is not a readable TorchScript archive (truncated "
                                            "or corrupt?): "
                                          : "cannot be loaded by libtorch: ") +
                                 reason);
    };
    try {
      m->module = torch::jit::load(m->path, torch::Device(torch::kCPU), extra);
    } catch (const c10::Error &e) {
      const std::string op_message =
          aisci_torch::unknown_operator_message(m->path, e.what_without_backtrace());
      if (!op_message.empty()) fail(AISCI_ERR_FORMAT, op_message);
      load_failed(first_line(e.what_without_backtrace()));
    } catch (const std::exception &e) {
      const std::string op_message = aisci_torch::unknown_operator_message(m->path, e.what());
      if (!op_message.empty()) fail(AISCI_ERR_FORMAT, op_message);
      load_failed(first_line(e.what()));
    }
    if (extra["aisci_metadata"].empty() && aisci_torch::deepmd_detect(m->module)) {
      // a DeePMD-kit file has no checksum of ours: its weights are at least finite
      check_weights_finite(*m, AISCI_ERR_FORMAT, "");
      setup_deepmd(*m, prec);
      return;
    }
    if (extra["aisci_metadata"].empty())
      fail(AISCI_ERR_FORMAT, "model file '" + m->path +
                                 "' has no aisci_metadata (save it with torch.jit.save(..., "
                                 "_extra_files={'aisci_metadata': text}))");
    parse_metadata(*m, extra["aisci_metadata"]);

    // Flipped bits inside the weight data load silently in libtorch (no CRC check of
    // the archive's entries), so the weights are hashed and compared with the checksum
    // written at export. A file without the key loads unverified (the adapters say so).
    auto cs = m->metadata.find("checksum");
    if (cs != m->metadata.end()) {
      char have[17];
      std::snprintf(have, sizeof have, "%016llx",
                    (unsigned long long) weights_checksum(m->module));
      std::string want = cs->second;
      for (auto &c : want) c = (char) std::tolower((unsigned char) c);
      if (want != have)
        fail(AISCI_ERR_FORMAT, "model file '" + m->path +
                                   "' is damaged: weight checksum mismatch (expected " + want +
                                   " from its metadata, found " + have +
                                   " in its weights); use an intact copy of the file");
    }
    check_weights_finite(*m, AISCI_ERR_FORMAT, "");

    check_weight_dtype(*m);

    m->dtype_name = prec == "auto" ? m->metadata["dtype"] : prec;
    m->dtype = m->dtype_name == "float32" ? torch::kFloat32 : torch::kFloat64;
    try {
      m->module.to(m->device, m->dtype);
      m->module.eval();
    } catch (const c10::Error &e) {
      fail(AISCI_ERR_MODEL, "model file '" + m->path + "': cannot move the model to " +
                                m->device_name + " as " + m->dtype_name + ": " +
                                first_line(e.what_without_backtrace()));
    }
    if (!m->module.find_method("forward"))
      fail(AISCI_ERR_FORMAT, "model file '" + m->path + "' has no forward() method");
  });
  if (st == AISCI_OK) *out = m.release();
  return st;
}

void aisci_model_destroy(aisci_model *model)
{
  try {
    delete model;
  } catch (...) {
  }
}

double aisci_model_cutoff(const aisci_model *m) { return m ? m->cutoff : 0.0; }
double aisci_model_cutoff_3body(const aisci_model *m) { return m ? m->cutoff_3body : 0.0; }
int aisci_model_num_layers(const aisci_model *m) { return m ? m->num_layers : 0; }
int aisci_model_needs_triplets(const aisci_model *m) { return m ? m->needs_triplets : 0; }
int aisci_model_num_types(const aisci_model *m) { return m ? (int) m->type_names.size() : 0; }

const char *aisci_model_type_name(const aisci_model *m, int index)
{
  if (!m || index < 0 || index >= (int) m->type_names.size()) return nullptr;
  return m->type_names[index].c_str();
}

aisci_status aisci_model_type_index(const aisci_model *m, const char *name, int *index)
{
  return guard("aisci_model_type_index", [&]() {
    if (!m || !name || !index) fail(AISCI_ERR_ARG, "aisci_model_type_index: NULL argument");
    *index = -1;
    std::string known;
    for (size_t k = 0; k < m->type_names.size(); k++) {
      if (m->type_names[k] == name) {
        *index = (int) k;
        return;
      }
      known += (k ? " " : "") + m->type_names[k];
    }
    fail(AISCI_ERR_ARG, "element '" + std::string(name) + "' is not in model file '" + m->path +
                            "' (its type_names are: " + known + ")");
  });
}

aisci_status aisci_model_check_type(aisci_model *m, int index)
{
  return guard("aisci_model_check_type", [&]() {
    if (!m) fail(AISCI_ERR_ARG, "aisci_model_check_type: model is NULL");
    const int ntypes = (int) m->type_names.size();
    if (index < 0 || index >= ntypes)
      fail(AISCI_ERR_ARG, "aisci_model_check_type: type index " + std::to_string(index) +
                              " outside [0, " + std::to_string(ntypes) + ")");
    // A DeePMD-kit model's type map comes from its own get_type_map(), which the network
    // was built with; it does not take our graph inputs (deepmd_model.cpp).
    if (m->deepmd) return;
    // Three atoms of this type on an equilateral triangle of side r (half the smaller
    // cutoff): six edges, and each centre's two edges as triplets, so that the probe is
    // an ordinary graph (models need not handle an empty edge list). No exchange
    // callbacks: aisci::ghost_exchange is the identity here.
    const double r = 0.5 * (m->needs_triplets ? m->cutoff_3body : m->cutoff);
    const double pos[3][3] = {
        {0.0, 0.0, 0.0}, {r, 0.0, 0.0}, {0.5 * r, 0.5 * std::sqrt(3.0) * r, 0.0}};
    const int64_t types[3] = {index, index, index};
    std::vector<int64_t> centre, neighbour, trip;
    std::vector<double> vec;
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 3; j++) {
        if (i == j) continue;
        centre.push_back(i);
        neighbour.push_back(j);
        for (int d = 0; d < 3; d++) vec.push_back(pos[j][d] - pos[i][d]);
      }
    for (int64_t e = 0; e < 6; e += 2) trip.insert(trip.end(), {e, e + 1, e + 1, e});
    centre.insert(centre.end(), neighbour.begin(), neighbour.end());    // 2 x E
    torch::AutoGradMode grad_mode(true);
    GraphInput in = make_inputs(*m, 3, types, 6, centre.data(), vec.data(),
                                m->needs_triplets ? (int64_t) trip.size() / 2 : 0, trip.data());
    run_forward(*m,
                "element '" + m->type_names[index] + "' (type index " + std::to_string(index) +
                    " of the " + std::to_string(ntypes) +
                    " type_names) cannot be evaluated (does the network know fewer types than "
                    "type_names lists?): ",
                in, "outputs");
  });
}

const char *aisci_model_dtype(const aisci_model *m) { return m ? m->dtype_name.c_str() : nullptr; }

const char *aisci_model_metadata(const aisci_model *m, const char *key)
{
  if (!m || !key) return nullptr;
  auto it = m->metadata.find(key);
  return it == m->metadata.end() ? nullptr : it->second.c_str();
}

const char *aisci_model_architecture(const aisci_model *m)
{
  return aisci_model_metadata(m, "architecture");
}

const char *aisci_model_units(const aisci_model *m) { return aisci_model_metadata(m, "units"); }

const char *aisci_model_device(const aisci_model *m)
{
  return m ? m->device_name.c_str() : nullptr;
}

aisci_status aisci_model_compute(aisci_model *m, int64_t n_atoms, const int64_t *types,
                                 int64_t n_edges, const int64_t *edge_index,
                                 const double *edge_vec, int64_t n_triplets,
                                 const int64_t *triplets, int64_t n_energy_atoms, double *energy,
                                 double *per_atom_energy, double *forces, double *virial,
                                 double *per_atom_virial)
{
  return guard("aisci_model_compute", [&]() {
    const std::string where = "aisci_model_compute: ";
    if (!m || !energy) fail(AISCI_ERR_ARG, where + "model and energy must not be NULL");
    m->release_graph();
    if (n_atoms < 0 || n_edges < 0 || n_triplets < 0)
      fail(AISCI_ERR_ARG, where + "negative atom, edge or triplet count");
    if (n_energy_atoms < 0 || n_energy_atoms > n_atoms)
      fail(AISCI_ERR_ARG, where + "n_energy_atoms " + std::to_string(n_energy_atoms) +
                              " outside [0, n_atoms = " + std::to_string(n_atoms) + "]");
    if (m->deepmd && !m->output_vector)
      fail(AISCI_ERR_MODEL, where + "model '" + m->path + "' is a DeePMD-kit model: use "
                                "aisci_model_compute_extended()");
    if (m->output_vector)
      fail(AISCI_ERR_MODEL, where + "model '" + m->path + "' returns per-atom vectors "
                                "(output = vector): use aisci_model_compute_vector()");
    const int64_t T = check_graph(*m, where, n_atoms, types, n_edges, edge_index, edge_vec,
                                  n_triplets, triplets);
    torch::AutoGradMode grad_mode(true);
    GraphInput in = make_inputs(*m, n_atoms, types, n_edges, edge_index, edge_vec, T, triplets);
    torch::Tensor &vec64 = in.vec64, &vec = in.vec, &index = in.index;
    // With exchange callbacks the model's aisci::ghost_exchange calls reach them (forward
    // here, reverse in the backward pass below); the scope ends with this call.
    ExchangeScope scope(m->exchange.forward ? &m->exchange : nullptr, n_atoms);
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    torch::Tensor e_atom = run_forward(*m, where, in, "per-atom energies");
    if (e_atom.dim() != 1 || e_atom.size(0) != n_atoms || !e_atom.is_floating_point()) {
      const std::string shape = shape_string(e_atom);
      const std::string dtype = c10::toString(e_atom.scalar_type());
      fail(AISCI_ERR_MODEL, where + "forward() of model '" + m->path + "' returned shape " +
                                shape + " of type " + dtype +
                                ", expected per-atom energies of shape [" +
                                std::to_string(n_atoms) + "] (floating point)");
    }

    // Per-atom energies on the host in float64; the total is summed there too.
    torch::Tensor e_host = e_atom.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    const double *ep = e_host.data_ptr<double>();
    double etot = 0.0;
    for (int64_t a = 0; a < n_atoms; a++) {
      if (!std::isfinite(ep[a]))
        fail_nonfinite(*m, where, where + "model '" + m->path +
                                      "' gave a non-finite energy for atom " + std::to_string(a));
      if (a < n_energy_atoms) etot += ep[a];
    }
    *energy = etot;
    if (per_atom_energy) std::memcpy(per_atom_energy, ep, sizeof(double) * n_atoms);
    if (!forces && !virial && !per_atom_virial) return;

    // One backward pass: g_e = dE/d(edge_vec_e), E summed over atoms 0..n_energy_atoms-1.
    torch::Tensor g;
    torch::Tensor esum = e_atom.narrow(0, 0, n_energy_atoms).sum();
    const bool exchanged = scope.x && !scope.x->inputs.empty();
    // energies that cannot depend on the edges: no edges, or no energy atoms here
    const bool expect_gradient = n_edges > 0 && n_energy_atoms > 0;
    if (expect_gradient && !e_atom.requires_grad())
      fail_no_gradient(*m, where, "per-atom energies");
    if ((n_edges > 0 || exchanged) && esum.requires_grad()) {
      // The features that entered each exchange are extra inputs: the backward pass then
      // runs every exchange's reverse callback, as on every other rank.
      std::vector<torch::Tensor> wrt{vec};
      if (exchanged) wrt.insert(wrt.end(), scope.x->inputs.begin(), scope.x->inputs.end());
      try {
        g = torch::autograd::grad({esum}, wrt, {}, false, false, true)[0];
      } catch (const c10::Error &e) {
        fail(AISCI_ERR_MODEL, where + "backward pass of model '" + m->path +
                                  "' failed: " + first_line(e.what_without_backtrace()));
      }
      if (expect_gradient && !g.defined()) fail_no_gradient(*m, where, "per-atom energies");
    }
    if (!g.defined()) g = torch::zeros({n_edges, 3}, f64.device(m->device));
    g = g.to(torch::kFloat64);

    if (forces) {
      torch::Tensor f = torch::zeros({n_atoms, 3}, f64.device(m->device));
      f.index_add_(0, index[0], g);
      f.index_add_(0, index[1], -g);
      torch::Tensor fh = f.to(torch::kCPU).contiguous();
      const double *fp = fh.data_ptr<double>();
      for (int64_t k = 0; k < 3 * n_atoms; k++)
        if (!std::isfinite(fp[k]))
          fail_nonfinite(*m, where, where + "model '" + m->path +
                                        "' gave a non-finite force on atom " +
                                        std::to_string(k / 3));
      std::memcpy(forces, fp, sizeof(double) * 3 * n_atoms);
    }
    if (virial) {
      torch::Tensor w = -torch::matmul(vec64.transpose(0, 1), g);
      torch::Tensor wh = w.to(torch::kCPU).contiguous();
      std::memcpy(virial, wh.data_ptr<double>(), sizeof(double) * 9);
    }
    if (per_atom_virial) {
      torch::Tensor we = (vec64.unsqueeze(2) * g.unsqueeze(1)).reshape({n_edges, 9}) * -0.5;
      torch::Tensor pv = torch::zeros({n_atoms, 9}, f64.device(m->device));
      pv.index_add_(0, index[0], we);
      pv.index_add_(0, index[1], we);
      torch::Tensor ph = pv.to(torch::kCPU).contiguous();
      std::memcpy(per_atom_virial, ph.data_ptr<double>(), sizeof(double) * 9 * n_atoms);
    }
  });
}

int aisci_model_output_is_vector(const aisci_model *m) { return m ? m->output_vector : -1; }

int aisci_model_ghost_exchange(const aisci_model *m) { return m ? m->ghost_exchange : 0; }

aisci_status aisci_model_set_exchange(aisci_model *m, aisci_exchange_fn forward,
                                      aisci_exchange_fn reverse, void *user_data)
{
  return guard("aisci_model_set_exchange", [&]() {
    const std::string where = "aisci_model_set_exchange: ";
    if (!m) fail(AISCI_ERR_ARG, where + "model is NULL");
    if (!forward != !reverse)
      fail(AISCI_ERR_ARG, where + "give both the forward and the reverse callback, or neither");
    if (forward && !m->ghost_exchange)
      fail(AISCI_ERR_MODEL, where + "model '" + m->path + "' does not exchange ghost features "
                                "(its metadata has no 'ghost_exchange = 1'; export it with "
                                "potentials/common/export.py --ghost-exchange)");
    m->exchange.forward = forward;
    m->exchange.reverse = reverse;
    m->exchange.user_data = forward ? user_data : nullptr;
  });
}

const char *aisci_torch_cpu_allocator(aisci_cpu_cache_stats *stats)
{
  if (stats) aisci_torch::cpu_cache_stats(stats);
  return aisci_torch::cpu_cache_name();
}

void aisci_torch_cpu_cache_release(void) { aisci_torch::cpu_cache_release(); }

const char *aisci_torch_api_version(int *major, int *minor, int *patch)
{
  if (major) *major = AISCI_TORCH_API_VERSION_MAJOR;
  if (minor) *minor = AISCI_TORCH_API_VERSION_MINOR;
  if (patch) *patch = AISCI_TORCH_API_VERSION_PATCH;
  return AISCI_TORCH_API_VERSION;
}

int aisci_torch_cuda_device_count(void)
{
  try {
    return torch::cuda::is_available() ? (int) torch::cuda::device_count() : 0;
  } catch (...) {
    return 0;
  }
}

aisci_status aisci_model_compute_vector(aisci_model *m, int64_t n_atoms, const int64_t *types,
                                        int64_t n_edges, const int64_t *edge_index,
                                        const double *edge_vec, int64_t n_triplets,
                                        const int64_t *triplets, double *vectors)
{
  return guard("aisci_model_compute_vector", [&]() {
    const std::string where = "aisci_model_compute_vector: ";
    if (!m || !vectors) fail(AISCI_ERR_ARG, where + "model and vectors must not be NULL");
    m->release_graph();
    if (!m->output_vector)
      fail(AISCI_ERR_MODEL, where + "model '" + m->path + "' returns per-atom energies, not "
                                "vectors (its metadata has no 'output = vector'): use "
                                "aisci_model_compute()");
    const int64_t T = check_graph(*m, where, n_atoms, types, n_edges, edge_index, edge_vec,
                                  n_triplets, triplets);
    torch::AutoGradMode grad_mode(true);
    GraphInput in = make_inputs(*m, n_atoms, types, n_edges, edge_index, edge_vec, T, triplets);
    torch::Tensor d;
    if (m->deepmd) {
      try {
        d = aisci_torch::deepmd_vector_from_edges(m->module, *m->deepmd, m->path, n_atoms,
                                                  in.atom_types, in.index, in.vec);
      } catch (const aisci_torch::DeepmdFailure &f) {
        fail(f.status, where + f.message);
      }
    } else {
      d = run_forward(*m, where, in, "per-atom vectors");
    }
    if (d.dim() != 2 || d.size(0) != n_atoms || d.size(1) != 3 || !d.is_floating_point())
      fail(AISCI_ERR_MODEL, where + "forward() of model '" + m->path + "' returned shape " +
                                shape_string(d) + " of type " +
                                c10::toString(d.scalar_type()) +
                                ", expected per-atom vectors of shape [" +
                                std::to_string(n_atoms) + ", 3] (floating point)");
    torch::Tensor host = d.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    const double *dp = host.data_ptr<double>();
    for (int64_t k = 0; k < 3 * n_atoms; k++)
      if (!std::isfinite(dp[k]))
        fail_nonfinite(*m, where, where + "model '" + m->path +
                                      "' gave a non-finite vector for atom " +
                                      std::to_string(k / 3));
    std::memcpy(vectors, dp, sizeof(double) * 3 * n_atoms);
    if (n_edges > 0 && !d.requires_grad()) fail_no_gradient(*m, where, "per-atom vectors");
    // Keep the graph for aisci_model_vector_backward() (released by the next compute call).
    m->held_vec = in.vec;
    m->held_vec64 = in.vec64;
    m->held_index = in.index;
    m->held_out = d;
    m->held_atoms = n_atoms;
  });
}

aisci_status aisci_model_vector_backward(aisci_model *m, const double *grad_out, double *forces,
                                         double *virial9)
{
  return guard("aisci_model_vector_backward", [&]() {
    const std::string where = "aisci_model_vector_backward: ";
    if (!m || !grad_out) fail(AISCI_ERR_ARG, where + "model and grad_out must not be NULL");
    if (!m->output_vector)
      fail(AISCI_ERR_MODEL, where + "model '" + m->path + "' returns per-atom energies, not "
                                "vectors (its metadata has no 'output = vector')");
    if (!m->held_out.defined())
      fail(AISCI_ERR_ARG, where + "no forward pass held for model '" + m->path +
                              "': call aisci_model_compute_vector() first");
    const int64_t n_atoms = m->held_atoms;
    const int64_t n_edges = m->held_vec.size(0);
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    torch::Tensor go = torch::from_blob((void *) grad_out, {n_atoms, 3}, f64)
                           .to(m->device, m->held_out.scalar_type(), false, true);
    // One vector-Jacobian product: G = (dd/d edge_vec)^T grad_out. retain_graph = true
    // so that several backward passes may follow one forward pass.
    torch::Tensor g;
    if (n_edges > 0 && m->held_out.requires_grad()) {
      try {
        g = torch::autograd::grad({m->held_out}, {m->held_vec}, {go}, true, false, true)[0];
      } catch (const c10::Error &e) {
        fail(AISCI_ERR_MODEL, where + "backward pass of model '" + m->path +
                                  "' failed: " + first_line(e.what_without_backtrace()));
      }
      if (!g.defined()) fail_no_gradient(*m, where, "per-atom vectors");
    }
    if (!g.defined()) g = torch::zeros({n_edges, 3}, f64.device(m->device));
    g = g.to(torch::kFloat64);
    torch::Tensor f = torch::zeros({n_atoms, 3}, f64.device(m->device));
    f.index_add_(0, m->held_index[0], g);
    f.index_add_(0, m->held_index[1], -g);
    torch::Tensor fh = f.to(torch::kCPU).contiguous();
    const double *fp = fh.data_ptr<double>();
    for (int64_t k = 0; k < 3 * n_atoms; k++)
      if (!std::isfinite(fp[k]))
        fail_nonfinite(*m, where, where + "model '" + m->path +
                                      "' gave a non-finite force on atom " +
                                      std::to_string(k / 3));
    torch::Tensor wh =
        (-torch::matmul(m->held_vec64.transpose(0, 1), g)).to(torch::kCPU).contiguous();
    if (forces)
      for (int64_t k = 0; k < 3 * n_atoms; k++) forces[k] += fp[k];
    if (virial9) {
      const double *wp = wh.data_ptr<double>();
      for (int k = 0; k < 9; k++) virial9[k] += wp[k];
    }
  });
}

const char *aisci_model_format(const aisci_model *m)
{
  if (!m) return nullptr;
  return m->deepmd ? "deepmd-kit" : "aisci";
}

aisci_status aisci_model_compute_extended(aisci_model *m, int64_t n_local, int64_t n_all,
                                          const int64_t *types, const double *coords,
                                          int64_t n_neigh, const int64_t *nlist,
                                          const int64_t *mapping, double *energy,
                                          double *per_atom_energy, double *forces,
                                          double *virial, double *per_atom_virial)
{
  return guard("aisci_model_compute_extended", [&]() {
    const std::string where = "aisci_model_compute_extended: ";
    if (!m || !energy) fail(AISCI_ERR_ARG, where + "model and energy must not be NULL");
    m->release_graph();
    if (!m->deepmd || m->output_vector)
      fail(AISCI_ERR_MODEL, where + "model '" + m->path + "' is not a DeePMD-kit energy model "
                                "(use aisci_model_compute())");
    if (n_local < 0 || n_all < n_local || n_neigh < 0)
      fail(AISCI_ERR_ARG, where + "need 0 <= n_local <= n_all and n_neigh >= 0, got n_local " +
                              std::to_string(n_local) + ", n_all " + std::to_string(n_all) +
                              ", n_neigh " + std::to_string(n_neigh));
    if ((n_all > 0 && (!types || !coords)) || (n_local > 0 && n_neigh > 0 && !nlist))
      fail(AISCI_ERR_ARG, where + "types, coords and nlist must not be NULL");
    const int64_t ntypes = (int64_t) m->type_names.size();
    for (int64_t a = 0; a < n_all; a++)
      if (types[a] < 0 || types[a] >= ntypes)
        fail(AISCI_ERR_ARG, where + "atom " + std::to_string(a) + " has type " +
                                std::to_string(types[a]) + ", outside [0, " +
                                std::to_string(ntypes) + ")");
    for (int64_t k = 0; k < n_local * n_neigh; k++)
      if (nlist[k] < -1 || nlist[k] >= n_all)
        fail(AISCI_ERR_ARG, where + "neighbour list entry " + std::to_string(k) + " is " +
                                std::to_string(nlist[k]) + ", outside [-1, n_all)");
    if (mapping)
      for (int64_t a = 0; a < n_all; a++)
        if (mapping[a] < 0 || mapping[a] >= n_local)
          fail(AISCI_ERR_ARG, where + "mapping of atom " + std::to_string(a) + " is " +
                                  std::to_string(mapping[a]) + ", outside [0, n_local)");
    const bool comm = m->ghost_exchange && m->exchange.forward;
    if (m->deepmd->message_passing && !comm && !mapping)
      fail(AISCI_ERR_ARG, where + "message-passing model '" + m->path + "' needs a mapping "
                              "(ghost -> owner) or ghost-exchange callbacks");
    // A message-passing model calls deepmd::border_op, which runs the exchange callbacks.
    ExchangeScope scope(comm ? &m->exchange : nullptr, n_all);
    aisci_torch::DeepmdOutputs out;
    out.energy = energy;
    out.atom_energy = per_atom_energy;
    out.forces = forces;
    out.virial = virial;
    out.atom_virial = per_atom_virial;
    try {
      aisci_torch::deepmd_compute_extended(m->module, *m->deepmd, m->path, m->device, n_local,
                                           n_all, types, coords, n_neigh, nlist,
                                           comm ? nullptr : mapping, comm, out);
    } catch (const aisci_torch::DeepmdFailure &f) {
      fail(f.status, where + f.message);
    }
  });
}

}    // extern "C"
