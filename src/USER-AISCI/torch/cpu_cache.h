/* Caching CPU allocator of libaisci_torch (cpu_cache.cpp); internal to the library. */
#ifndef AISCI_TORCH_CPU_CACHE_H
#define AISCI_TORCH_CPU_CACHE_H

#include "aisci/model.h"

#include <string>

namespace aisci_torch {

/* Decide once per process (AISCI_CPU_ALLOCATOR = caching (default) | default) and
 * install the caching allocator as libtorch's CPU allocator. False with a message for
 * an unknown value of the variable (every later call gives the same answer). */
bool cpu_cache_install(std::string &error);

/* End of one C API call: free cached blocks unused during the last calls. */
void cpu_cache_end_call();

/* Give every cached free block back to the system now. */
void cpu_cache_release();

/* "caching", "default", or "" before the first aisci_model_create(). */
const char *cpu_cache_name();

void cpu_cache_stats(aisci_cpu_cache_stats *stats);

}    // namespace aisci_torch

#endif
