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

  /* The version this build needs, as the rules of aisci/version.h say: the same major;
   * while the major is 0, the same minor; from 1 on, a minor at least the compiled one. */
  std::string needed_version()
  {
    const std::string mm = std::to_string(AISCI_TORCH_API_VERSION_MAJOR) + ".";
    if (AISCI_TORCH_API_VERSION_MAJOR == 0)
      return mm + std::to_string(AISCI_TORCH_API_VERSION_MINOR) + ".x";
    return mm + "x with x >= " + std::to_string(AISCI_TORCH_API_VERSION_MINOR);
  }

  bool check_version(void *handle, const std::string &library, std::string &why)
  {
    const std::string built = "this USER-AISCI was built against torch wrapper API " +
        std::string(AISCI_TORCH_API_VERSION) + " and needs " + needed_version();
    decltype(&aisci_torch_api_version) version = nullptr;
    std::string missing;
    if (!resolve(handle, "aisci_torch_api_version", version, missing)) {
      why = "library " + library +
          " is not a compatible torch wrapper: it has no API version (" + missing +
          "), so it comes from a USER-AISCI release before API 0.1.0 or is not "
          "libaisci_torch; " + built +
          " (use the libaisci_torch.so of this build: unset AISCI_TORCH_LIBRARY or point it "
          "there)";
      return false;
    }
    int major = -1, minor = -1, patch = -1;
    const char *text = version(&major, &minor, &patch);
    const bool ok = major == AISCI_TORCH_API_VERSION_MAJOR &&
        (major == 0 ? minor == AISCI_TORCH_API_VERSION_MINOR
                    : minor >= AISCI_TORCH_API_VERSION_MINOR);
    if (!ok) {
      why = "library " + library + " is torch wrapper API version " +
          std::string(text ? text : "?") + ", but " + built +
          " (use the libaisci_torch.so of this build: unset AISCI_TORCH_LIBRARY or point it "
          "there)";
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

  // The API version first: a wrapper of another release is named as such, instead of
  // being called through a changed signature or failing on some other missing symbol.
  if (!check_version(handle, api.library, why)) return nullptr;    // keeps the handle

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
