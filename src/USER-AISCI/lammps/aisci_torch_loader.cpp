/* Run-time loading of libaisci_torch.so; see aisci_torch_loader.h. */
#include "aisci_torch_loader.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace AISCI {

namespace {

template <typename F> bool resolve(void *handle, const char *name, F &fn, std::string &why)
{
  dlerror();
  fn = (F) dlsym(handle, name);
  if (!fn) {
    const char *err = dlerror();
    why += std::string(why.empty() ? "" : "; ") + "symbol " + name + " not found" +
        (err ? std::string(" (") + err + ")" : std::string());
    return false;
  }
  return true;
}

}    // namespace

const TorchApi *torch_api(std::string &why)
{
  static std::mutex lock;
  static TorchApi api;
  static bool loaded = false;
  std::lock_guard<std::mutex> guard(lock);
  why.clear();
  if (loaded) return &api;

  // AISCI_TORCH_LIBRARY is an explicit choice: it is the only candidate, and a path
  // that cannot be loaded is an error, never a silent fall-back to another build
  std::vector<std::string> candidates;
  const char *env = std::getenv("AISCI_TORCH_LIBRARY");
  const bool from_env = env && *env;
  if (from_env) candidates.push_back(env);
#ifdef AISCI_TORCH_LIBRARY
  if (!from_env) candidates.push_back(AISCI_TORCH_LIBRARY);
#endif
  if (!from_env) candidates.push_back("libaisci_torch.so");

  void *handle = nullptr;
  std::string tried;
  for (const auto &path : candidates) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      api.library = path;
      break;
    }
    const char *err = dlerror();
    if (from_env) {
      why = "environment variable AISCI_TORCH_LIBRARY = '" + path + "' cannot be loaded: " +
          (err ? err : "unknown dlopen error") + " (unset it to use the torch wrapper of "
          "this build)";
      return nullptr;
    }
    tried += "\n  " + path + ": " + (err ? err : "unknown dlopen error");
  }
  if (!handle) {
    why = "cannot load the torch wrapper libaisci_torch.so (build USER-AISCI with "
          "AISCI_ENABLE_TORCH=ON, or set AISCI_TORCH_LIBRARY to its path); tried:" +
        tried;
    return nullptr;
  }

  bool ok = true;
  ok &= resolve(handle, "aisci_model_create", api.model_create, why);
  ok &= resolve(handle, "aisci_model_destroy", api.model_destroy, why);
  ok &= resolve(handle, "aisci_model_cutoff", api.model_cutoff, why);
  ok &= resolve(handle, "aisci_model_cutoff_3body", api.model_cutoff_3body, why);
  ok &= resolve(handle, "aisci_model_num_layers", api.model_num_layers, why);
  ok &= resolve(handle, "aisci_model_needs_triplets", api.model_needs_triplets, why);
  ok &= resolve(handle, "aisci_model_num_types", api.model_num_types, why);
  ok &= resolve(handle, "aisci_model_type_name", api.model_type_name, why);
  ok &= resolve(handle, "aisci_model_type_index", api.model_type_index, why);
  ok &= resolve(handle, "aisci_model_check_type", api.model_check_type, why);
  ok &= resolve(handle, "aisci_model_dtype", api.model_dtype, why);
  ok &= resolve(handle, "aisci_model_architecture", api.model_architecture, why);
  ok &= resolve(handle, "aisci_model_units", api.model_units, why);
  ok &= resolve(handle, "aisci_model_device", api.model_device, why);
  ok &= resolve(handle, "aisci_model_metadata", api.model_metadata, why);
  ok &= resolve(handle, "aisci_model_compute", api.model_compute, why);
  ok &= resolve(handle, "aisci_model_output_is_vector", api.model_output_is_vector, why);
  ok &= resolve(handle, "aisci_model_compute_vector", api.model_compute_vector, why);
  ok &= resolve(handle, "aisci_model_vector_backward", api.model_vector_backward, why);
  ok &= resolve(handle, "aisci_model_ghost_exchange", api.model_ghost_exchange, why);
  ok &= resolve(handle, "aisci_model_set_exchange", api.model_set_exchange, why);
  ok &= resolve(handle, "aisci_torch_cuda_device_count", api.cuda_device_count, why);
  ok &= resolve(handle, "aisci_model_format", api.model_format, why);
  ok &= resolve(handle, "aisci_model_compute_extended", api.model_compute_extended, why);
  if (!ok) {
    why = "library " + api.library + " is not a compatible torch wrapper: " + why;
    // Keep the handle: unloading libtorch is unsafe; a later call retries nothing.
    return nullptr;
  }
  loaded = true;
  return &api;
}

}    // namespace AISCI
