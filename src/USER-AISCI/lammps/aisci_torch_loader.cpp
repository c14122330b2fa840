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
      why = "environment variable AISCI_TORCH_LIBRARY = '" + path +
          "' cannot be loaded: " + (err ? err : "unknown dlopen error") +
          " (unset it to use the torch wrapper of "
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
#define AISCI_TORCH_FN(member, symbol) ok &= resolve(handle, #symbol, api.member, why);
#include "../torch/include/aisci/model_api.def"
#undef AISCI_TORCH_FN
  if (!ok) {
    why = "library " + api.library + " is not a compatible torch wrapper: " + why;
    // Keep the handle: unloading libtorch is unsafe; a later call retries nothing.
    return nullptr;
  }
  loaded = true;
  return &api;
}

std::string unverified_weights_note(const TorchApi *api, const aisci_model *model,
                                    const std::string &style, const std::string &file)
{
  if (!api || !model || std::string(api->model_format(model)) != "aisci") return "";
  if (api->model_metadata(model, "checksum")) return "";
  return style + ": model file " + file +
      " has no weight checksum (metadata key checksum): its weights were not verified\n";
}

}    // namespace AISCI
