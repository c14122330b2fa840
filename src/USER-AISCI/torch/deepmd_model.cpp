/* DeePMD-kit PyTorch frozen models inside libaisci_torch: recognise, inspect, evaluate.
 * See deepmd_model.h and docs/pair_aisci.md ("DeePMD-kit models").
 *
 * The calling convention of forward_lower() is the one of DeePMD-kit's own C++ interface
 * (read from the model's TorchScript code): extended coordinates [1, n_all, 3], extended
 * types [1, n_all] (int64), neighbour list [1, n_local, n_neigh] (int64, -1 padding; the
 * model pads or sorts and truncates it to its sel itself), mapping [1, n_all] (ghost ->
 * owner) or None, fparam, aparam (None here), do_atomic_virial, comm_dict (None, or the
 * tensors that a message-passing model hands to deepmd::border_op). The result is a
 * Dict[str, Tensor] with energy [1, 1], atom_energy [1, n_local, 1], extended_force
 * [1, n_all, 3], virial [1, 9] and, with do_atomic_virial, extended_virial [1, n_all, 9];
 * a dipole model gives dipole [1, n_local, 3]. */
#include "deepmd_model.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace aisci_torch {

namespace {

[[noreturn]] void refuse(aisci_status status, const std::string &message)
{
  throw DeepmdFailure{status, message};
}

/* Run a no-argument method, turning libtorch's error into a refusal naming the method. */
c10::IValue call0(torch::jit::Module &module, const std::string &path, const char *name)
{
  auto method = module.find_method(name);
  if (!method)
    refuse(AISCI_ERR_FORMAT, "DeePMD-kit model file '" + path + "' has no " + name +
                                 "() method (freeze it with a recent `dp --pt freeze`)");
  try {
    return (*method)(std::vector<c10::IValue>{});
  } catch (const c10::Error &e) {
    std::string what = e.what_without_backtrace();
    what = what.substr(0, what.find('\n'));
    refuse(AISCI_ERR_FORMAT, "DeePMD-kit model file '" + path + "': " + name + "() failed: " + what);
  }
}

/* Replace every constant CUDA device of the TorchScript graphs (torch.device("cuda:0")
 * written into the code of a model frozen on a GPU) by `device`: without this such a file
 * cannot run its border_op path on a CPU-only libtorch. Returns the number of rewrites. */
int rewrite_devices(torch::jit::Module &module, const torch::Device &device)
{
  if (device.is_cuda()) return 0;
  const std::string target = device.str();
  const c10::Symbol aten_device = c10::Symbol::fromQualString("aten::device");
  int count = 0;
  std::vector<torch::jit::Block *> stack;
  for (torch::jit::Function *fn : module._ivalue()->compilation_unit()->get_functions()) {
    if (!fn->isGraphFunction()) continue;
    std::shared_ptr<torch::jit::Graph> graph = torch::jit::toGraphFunction(*fn).graph();
    stack.assign(1, graph->block());
    while (!stack.empty()) {
      torch::jit::Block *block = stack.back();
      stack.pop_back();
      for (torch::jit::Node *node : block->nodes()) {
        for (torch::jit::Block *sub : node->blocks()) stack.push_back(sub);
        if (node->kind() == torch::jit::prim::Constant &&
            node->output()->type()->kind() == c10::TypeKind::DeviceObjType) {
          auto value = torch::jit::toIValue(node->output());
          if (value && value->toDevice().is_cuda()) {
            torch::jit::WithInsertPoint guard(node);
            node->output()->replaceAllUsesWith(graph->insertConstant(device));
            count++;
          }
        } else if (node->kind() == aten_device && node->inputs().size() == 1) {
          auto value = torch::jit::toIValue(node->input(0));
          if (value && value->isString() && value->toStringRef().rfind("cuda", 0) == 0) {
            torch::jit::WithInsertPoint guard(node);
            node->replaceInput(0, graph->insertConstant(target));
            count++;
          }
        }
      }
    }
  }
  return count;
}

torch::Tensor get_output(const c10::Dict<c10::IValue, c10::IValue> &dict, const char *key,
                         const std::string &path)
{
  auto it = dict.find(c10::IValue(std::string(key)));
  if (it == dict.end() || !it->value().isTensor())
    refuse(AISCI_ERR_MODEL, "DeePMD-kit model '" + path + "': forward_lower() returned no '" +
                                key + "' tensor");
  return it->value().toTensor();
}

/* Copy a result tensor of `count` values to a host float64 array, checking it is finite. */
void copy_out(const torch::Tensor &t, int64_t count, double *dst, const char *what,
              const std::string &path)
{
  torch::Tensor h = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  if (h.numel() != count)
    refuse(AISCI_ERR_MODEL, "DeePMD-kit model '" + path + "': " + what + " has " +
                                std::to_string(h.numel()) + " values, expected " +
                                std::to_string(count));
  const double *p = h.data_ptr<double>();
  for (int64_t k = 0; k < count; k++)
    if (!std::isfinite(p[k]))
      refuse(AISCI_ERR_MODEL, "DeePMD-kit model '" + path + "' gave a non-finite " + what);
  std::memcpy(dst, p, sizeof(double) * count);
}

c10::Dict<c10::IValue, c10::IValue> run_lower(torch::jit::Module &module, const std::string &path,
                                              std::vector<c10::IValue> args)
{
  c10::IValue result;
  try {
    result = module.get_method("forward_lower")(std::move(args));
  } catch (const c10::Error &e) {
    std::string what = e.what_without_backtrace();
    // Errors raised inside TorchScript end with the original message.
    size_t end = what.find_last_not_of(" \t\r\n");
    size_t begin = end == std::string::npos ? 0 : what.rfind('\n', end);
    std::string last = what.substr(begin == std::string::npos ? 0 : begin + 1);
    refuse(AISCI_ERR_MODEL, "DeePMD-kit model '" + path + "': forward_lower() failed: " + last);
  }
  if (!result.isGenericDict())
    refuse(AISCI_ERR_MODEL, "DeePMD-kit model '" + path + "': forward_lower() returned a " +
                                result.tagKind() + ", expected a Dict[str, Tensor]");
  return result.toGenericDict();
}

}    // namespace

std::string unknown_operator_message(const std::string &path, const std::string &what)
{
  const std::string key = "Unknown builtin op: ";
  size_t at = what.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  size_t end = what.find_first_of(". \n", at);
  const std::string op = what.substr(at, end == std::string::npos ? std::string::npos : end - at);
  std::string message = "model file '" + path + "' needs the TorchScript operator " + op +
      ", which libaisci_torch does not provide (libtorch: unknown builtin op " + op + ")";
  if (op.rfind("deepmd::", 0) == 0)
    message += "; it is a custom operator of DeePMD-kit that this build does not define "
               "(defined: deepmd::border_op and the tabulate_fusion operators of compressed "
               "models)";
  return message;
}

bool deepmd_detect(const torch::jit::Module &module)
{
  return module.find_method("forward_lower") && module.find_method("get_type_map") &&
      module.find_method("get_rcut");
}

DeepmdInfo deepmd_inspect(torch::jit::Module &module, const std::string &path,
                          const torch::Device &device)
{
  DeepmdInfo info;
  info.device_rewrites = rewrite_devices(module, device);
  // (the IValues are kept alive in locals: toListRef() borrows from them)
  const c10::IValue type_map = call0(module, path, "get_type_map");
  for (const auto &name : type_map.toListRef()) info.type_map.push_back(name.toStringRef());
  if (info.type_map.empty())
    refuse(AISCI_ERR_FORMAT, "DeePMD-kit model file '" + path + "' has an empty type map");
  info.rcut = call0(module, path, "get_rcut").toDouble();
  if (!(info.rcut > 0.0))
    refuse(AISCI_ERR_FORMAT, "DeePMD-kit model file '" + path + "' has rcut " +
                                 std::to_string(info.rcut) + " (must be > 0)");
  const c10::IValue sel = call0(module, path, "get_sel");
  for (const auto &s : sel.toListRef()) {
    info.nsel += s.toInt();
    info.sel += (info.sel.empty() ? "" : " ") + std::to_string(s.toInt());
  }

  const int64_t dim_fparam = call0(module, path, "get_dim_fparam").toInt();
  const int64_t dim_aparam = call0(module, path, "get_dim_aparam").toInt();
  if (dim_fparam > 0)
    refuse(AISCI_ERR_FORMAT, "DeePMD-kit model file '" + path + "' needs frame parameters "
                             "(get_dim_fparam() = " + std::to_string(dim_fparam) +
                             "): fparam is not supported by pair_style aisci");
  if (dim_aparam > 0)
    refuse(AISCI_ERR_FORMAT, "DeePMD-kit model file '" + path + "' needs atomic parameters "
                             "(get_dim_aparam() = " + std::to_string(dim_aparam) +
                             "): aparam is not supported by pair_style aisci");
  info.message_passing = module.find_method("has_message_passing") &&
      call0(module, path, "has_message_passing").toBool();

  std::vector<std::string> outputs;
  const c10::IValue output_type = call0(module, path, "model_output_type");
  for (const auto &o : output_type.toListRef()) outputs.push_back(o.toStringRef());
  auto has = [&](const char *k) { return std::find(outputs.begin(), outputs.end(), k) != outputs.end(); };
  if (has("energy")) {
    info.output = "energy";
  } else if (has("dipole")) {
    info.output = "dipole";
    info.vector = true;
    if (module.find_method("get_sel_type")) {
      const c10::IValue sel_type = call0(module, path, "get_sel_type");
      for (const auto &t : sel_type.toListRef()) {
        const int64_t k = t.toInt();
        if (k >= 0 && k < (int64_t) info.type_map.size())
          info.selected_types += (info.selected_types.empty() ? "" : " ") + info.type_map[k];
      }
    } else {
      for (const auto &n : info.type_map)
        info.selected_types += (info.selected_types.empty() ? "" : " ") + n;
    }
    if (info.message_passing)
      refuse(AISCI_ERR_FORMAT, "DeePMD-kit dipole model file '" + path + "' uses message "
                               "passing: only dipole models without it are supported");
  } else {
    std::string list;
    for (const auto &o : outputs) list += (list.empty() ? "" : ", ") + o;
    refuse(AISCI_ERR_FORMAT, "DeePMD-kit model file '" + path + "' predicts " + list +
                                 ": only energy and dipole models are supported");
  }
  info.dtype = "float64";
  for (const auto &p : module.parameters(true)) {
    if (p.scalar_type() == torch::kFloat32) info.dtype = "float32";
    break;
  }
  return info;
}

void deepmd_compute_extended(torch::jit::Module &module, const DeepmdInfo &info,
                             const std::string &path, const torch::Device &device,
                             int64_t n_local, int64_t n_all, const int64_t *types,
                             const double *coords, int64_t n_neigh, const int64_t *nlist,
                             const int64_t *mapping, bool with_comm, const DeepmdOutputs &out)
{
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  torch::Tensor coord = torch::from_blob((void *) coords, {1, n_all, 3}, f64)
                            .to(device, torch::kFloat64, false, true);
  torch::Tensor atype = torch::from_blob((void *) types, {1, n_all}, i64).to(device, torch::kInt64, false, true);
  torch::Tensor nl = torch::from_blob((void *) nlist, {1, n_local, n_neigh}, i64)
                         .to(device, torch::kInt64, false, true);
  c10::IValue map_arg;
  if (mapping)
    map_arg = torch::from_blob((void *) mapping, {1, n_all}, i64).to(device, torch::kInt64, false, true);
  c10::IValue comm_arg;
  if (with_comm) {
    // Our deepmd::border_op (border_op.cpp) exchanges through the caller's callbacks and
    // reads none of these; the model only checks that the keys exist.
    c10::Dict<std::string, torch::Tensor> comm;
    const auto i32 = torch::TensorOptions().dtype(torch::kInt32).device(device);
    for (const char *key : {"send_list", "send_proc", "recv_proc", "send_num", "recv_num"})
      comm.insert(key, torch::zeros({0}, i32));
    comm.insert("communicator", torch::zeros({1}, i64.device(device)));
    comm_arg = comm;
  }
  const bool atomic_virial = out.atom_virial != nullptr;
  torch::AutoGradMode grad_mode(true);
  auto dict = run_lower(module, path,
                        {coord, atype, nl, map_arg, c10::IValue(), c10::IValue(),
                         c10::IValue(atomic_virial), comm_arg});
  if (out.energy) copy_out(get_output(dict, "energy", path), 1, out.energy, "energy", path);
  if (out.atom_energy)
    copy_out(get_output(dict, "atom_energy", path), n_local, out.atom_energy, "atom_energy", path);
  if (out.forces)
    copy_out(get_output(dict, "extended_force", path), 3 * n_all, out.forces, "extended_force",
             path);
  if (out.virial) copy_out(get_output(dict, "virial", path), 9, out.virial, "virial", path);
  if (out.atom_virial)
    copy_out(get_output(dict, "extended_virial", path), 9 * n_all, out.atom_virial,
             "extended_virial", path);
}

torch::Tensor deepmd_vector_from_edges(torch::jit::Module &module, const DeepmdInfo &info,
                                       const std::string &path, int64_t n_atoms,
                                       const torch::Tensor &atom_types,
                                       const torch::Tensor &edge_index,
                                       const torch::Tensor &vec)
{
  const int64_t n_edges = vec.size(0);
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  // Neighbour list of each centre on the host: its edges' extended atoms (n_atoms + e),
  // nearest first (the model truncates a longer list to its sel by distance).
  torch::Tensor idx = edge_index.to(torch::kCPU).contiguous();
  torch::Tensor v = vec.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  const int64_t *centre = idx.data_ptr<int64_t>();
  const double *vp = v.data_ptr<double>();
  std::vector<std::vector<int64_t>> edges_of(n_atoms);
  for (int64_t e = 0; e < n_edges; e++) edges_of[centre[e]].push_back(e);
  size_t width = 1;
  for (const auto &l : edges_of) width = std::max(width, l.size());
  std::vector<int64_t> nlist((size_t) n_atoms * width, -1);
  auto r2 = [&](int64_t e) {
    return vp[3 * e] * vp[3 * e] + vp[3 * e + 1] * vp[3 * e + 1] + vp[3 * e + 2] * vp[3 * e + 2];
  };
  for (int64_t i = 0; i < n_atoms; i++) {
    auto &l = edges_of[i];
    std::stable_sort(l.begin(), l.end(), [&](int64_t a, int64_t b) { return r2(a) < r2(b); });
    for (size_t k = 0; k < l.size(); k++) nlist[(size_t) i * width + k] = n_atoms + l[k];
  }
  torch::Tensor nl = torch::from_blob(nlist.data(), {1, n_atoms, (int64_t) width}, i64)
                         .to(vec.device(), torch::kInt64, false, true);
  // Extended atoms: the centres at the origin, then one image of every edge's neighbour.
  torch::Tensor coord =
      torch::cat({torch::zeros({n_atoms, 3}, vec.options()), vec}, 0).unsqueeze(0);
  torch::Tensor atype =
      torch::cat({atom_types, atom_types.index_select(0, edge_index[1])}, 0).unsqueeze(0);
  torch::Tensor mapping =
      torch::cat({torch::arange(n_atoms, atom_types.options()), edge_index[1]}, 0).unsqueeze(0);
  torch::AutoGradMode grad_mode(true);
  auto dict = run_lower(module, path,
                        {coord, atype, nl, mapping, c10::IValue(), c10::IValue(),
                         c10::IValue(false), c10::IValue()});
  torch::Tensor d = get_output(dict, info.output.c_str(), path);
  if (d.numel() != 3 * n_atoms)
    refuse(AISCI_ERR_MODEL, "DeePMD-kit model '" + path + "': '" + info.output + "' has " +
                                std::to_string(d.numel()) + " values, expected " +
                                std::to_string(3 * n_atoms));
  return d.reshape({n_atoms, 3});
}

}    // namespace aisci_torch
