/* Caching CPU allocator for libtorch tensors (see cpu_cache.h and docs/pair_aisci.md,
 * "Memory").
 *
 * Why: one force evaluation allocates and frees the same large tensors every step
 * (edge and triplet features, their gradients: tens to hundreds of MB each at a few
 * thousand atoms). glibc serves blocks above its mmap threshold (at most 32 MiB) with
 * mmap and gives them back with munmap on free, so every step page-faults the whole
 * working set in again: on the project's machines this was 60-80 % of the step's CPU
 * time at 4k atoms (sys time), and made the cost per atom grow with N. This allocator
 * keeps large blocks in per-size-class free lists and hands them out again, so the
 * working set is faulted in once.
 *
 * Size classes: requests >= kMinCached bytes are rounded up to a multiple of 1/8 of the
 * largest power of two not above them (<= 12.5 % waste). Smaller requests go to the
 * allocator that was installed before (libtorch's default), which glibc serves from its
 * heap without faults.
 *
 * Bounded memory: a free block that no request took during the last kKeepCalls calls of
 * the C API (cpu_cache_end_call()) is returned to the system. In steady-state MD the
 * cache then holds what one step (or one step of each model in the process, e.g. the DW
 * and short-range models of DPLR) needs; when the graph grows and requests move to the
 * next size class, the old class's blocks are released after kKeepCalls calls. */
#include "cpu_cache.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

/* libtorch 2.3 changed c10::Allocator: allocate() is no longer const and copy_data() is a
 * new pure virtual. Built and tested against 1.13 (Debian) and 2.11 (PyPI). */
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define AISCI_ALLOCATE_CONST
#define AISCI_ALLOCATOR_HAS_COPY_DATA 1
#else
#define AISCI_ALLOCATE_CONST const
#define AISCI_ALLOCATOR_HAS_COPY_DATA 0
#endif

namespace {

constexpr size_t kMinCached = 64 << 10;
constexpr size_t kAlignment = 64;
constexpr uint64_t kKeepCalls = 8;

size_t size_class(size_t n)
{
  size_t p = 1;
  while (p <= n / 2) p <<= 1;    // largest power of two <= n
  const size_t step = p / 8;
  return (n + step - 1) / step * step;
}

struct BlockInfo {
  size_t bytes;
  uint64_t last_call;    // the call counter when the block was last handed out
};

class CachingCpuAllocator final : public c10::Allocator {
public:
  explicit CachingCpuAllocator(c10::Allocator *fallback) : fallback_(fallback) {}

  c10::DataPtr allocate(size_t n) AISCI_ALLOCATE_CONST override
  {
    if (n < kMinCached) return fallback_->allocate(n);
    void *p = self()->take(n);
    return c10::DataPtr(p, p, &release_raw, c10::Device(c10::DeviceType::CPU));
  }

#if AISCI_ALLOCATOR_HAS_COPY_DATA
  /* Host memory on both sides: a plain copy (what libtorch's own CPU allocator does). */
  void copy_data(void *dest, const void *src, std::size_t count) const override
  {
    default_copy_data(dest, src, count);
  }
#endif

  c10::DeleterFnPtr raw_deleter() const override { return &release_raw; }

  /* Our DataPtrs have ctx == data and release_raw as deleter, so raw_allocate() and
   * raw_deleter() work too. */
  void *take(size_t n)
  {
    const size_t bytes = size_class(n);
    std::lock_guard<std::mutex> lock(mutex_);
    void *p = nullptr;
    auto &list = free_[bytes];
    if (!list.empty()) {
      p = list.back();
      list.pop_back();
      cached_bytes_ -= bytes;
    } else if (posix_memalign(&p, kAlignment, bytes) != 0 || !p) {
      throw std::bad_alloc();
    }
    blocks_[p] = BlockInfo{bytes, calls_};
    in_use_bytes_ += bytes;
    if (in_use_bytes_ > peak_in_use_bytes_) peak_in_use_bytes_ = in_use_bytes_;
    if (in_use_bytes_ + cached_bytes_ > peak_held_bytes_)
      peak_held_bytes_ = in_use_bytes_ + cached_bytes_;
    return p;
  }

  void give_back(void *p)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(p);
    if (it == blocks_.end()) {    // not ours (cannot happen through our DataPtrs)
      std::free(p);
      return;
    }
    in_use_bytes_ -= it->second.bytes;
    cached_bytes_ += it->second.bytes;
    free_[it->second.bytes].push_back(p);
  }

  void end_call()
  {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_++;
    if (calls_ <= kKeepCalls) return;
    release_older_than(calls_ - kKeepCalls);
  }

  /* Give every free block back now. */
  void release_all()
  {
    std::lock_guard<std::mutex> lock(mutex_);
    release_older_than(UINT64_MAX);
  }

  void release_older_than(uint64_t oldest)
  {
    for (auto &entry : free_) {
      auto &list = entry.second;
      size_t keep = 0;
      for (size_t k = 0; k < list.size(); k++) {
        auto it = blocks_.find(list[k]);
        if (it->second.last_call < oldest) {
          cached_bytes_ -= it->second.bytes;
          std::free(list[k]);
          blocks_.erase(it);
        } else {
          list[keep++] = list[k];
        }
      }
      list.resize(keep);
    }
  }

  void stats(aisci_cpu_cache_stats *s)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s->in_use_bytes = in_use_bytes_;
    s->cached_bytes = cached_bytes_;
    s->peak_in_use_bytes = peak_in_use_bytes_;
    s->peak_held_bytes = peak_held_bytes_;
    s->calls = calls_;
  }

  static void release_raw(void *p);

private:
  CachingCpuAllocator *self() const { return const_cast<CachingCpuAllocator *>(this); }

  c10::Allocator *fallback_;
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void *>> free_;
  std::unordered_map<void *, BlockInfo> blocks_;
  size_t in_use_bytes_ = 0, cached_bytes_ = 0, peak_in_use_bytes_ = 0, peak_held_bytes_ = 0;
  uint64_t calls_ = 0;
};

/* Never destroyed: tensors may outlive every model handle (and static destructors). */
CachingCpuAllocator *g_cache = nullptr;
std::once_flag g_once;
int g_status = 0;    // 0: not decided, 1: caching, 2: default
std::string g_error;

void CachingCpuAllocator::release_raw(void *p)
{
  if (p) g_cache->give_back(p);
}
}    // namespace

namespace aisci_torch {

bool cpu_cache_install(std::string &error)
{
  std::call_once(g_once, []() {
    const char *env = std::getenv("AISCI_CPU_ALLOCATOR");
    const std::string v = env ? env : "caching";
    if (v == "caching") {
      g_cache = new CachingCpuAllocator(c10::GetCPUAllocator());
      c10::SetCPUAllocator(g_cache, /*priority=*/1);
      g_status = 1;
    } else if (v == "default") {
      g_status = 2;
    } else {
      g_error = "environment variable AISCI_CPU_ALLOCATOR = '" + v +
                "': expected 'caching' (the default) or 'default' (libtorch's own "
                "allocator)";
    }
  });
  if (!g_error.empty()) {
    error = g_error;
    return false;
  }
  return true;
}

void cpu_cache_end_call()
{
  if (g_cache) g_cache->end_call();
}

void cpu_cache_release()
{
  if (g_cache) g_cache->release_all();
}

const char *cpu_cache_name() { return g_status == 1 ? "caching" : g_status == 2 ? "default" : ""; }

void cpu_cache_stats(aisci_cpu_cache_stats *s)
{
  std::memset(s, 0, sizeof *s);
  if (g_cache) g_cache->stats(s);
}

}    // namespace aisci_torch
