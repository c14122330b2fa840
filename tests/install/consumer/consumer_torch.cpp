// Uses libaisci_torch through its installed header from C++: its version and the error
// path of a missing model file (AISCI_ERR_IO, NULL handle, the path in the message).
#include <cstdio>
#include <cstring>

#include "aisci/model.h"

int main(int argc, char **argv)
{
  const char *missing = argc > 1 ? argv[1] : "no-such-model.pt";
  int failed = 0, major = -1, minor = -1;
  const char *lib = aisci_torch_api_version(&major, &minor, nullptr);
  if (major != AISCI_TORCH_API_VERSION_MAJOR || minor != AISCI_TORCH_API_VERSION_MINOR) {
    std::fprintf(stderr, "version mismatch: header %s, library %s\n", AISCI_TORCH_API_VERSION,
                 lib);
    failed = 1;
  }
  aisci_model *model = nullptr;
  aisci_status st = aisci_model_create(missing, "cpu", "auto", 1, &model);
  if (st != AISCI_ERR_IO || model || !std::strstr(aisci_last_error(), missing)) {
    std::fprintf(stderr, "missing file: expected AISCI_ERR_IO naming it, got %d: %s\n", (int) st,
                 aisci_last_error());
    failed = 1;
  }
  std::printf("torch %s %s\n", AISCI_TORCH_API_VERSION, lib);
  return failed;
}
