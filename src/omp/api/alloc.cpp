// OpenMP memory allocators (OpenMP 5.1, 2.13 and 3.8; GCC 12's ABI): the
// predefined memory spaces and allocators, omp_init_allocator with every
// trait, the omp_alloc family, the default allocator (def-allocator-var,
// OMP_ALLOCATOR) and GOMP_alloc / GOMP_free of the allocate clause.
//
// What each trait does in canopy (docs/omp.md, "Memory allocators"):
// alignment, pool_size (bytes the allocator's blocks take at once, headers
// and padding included), fallback and fb_data are enforced here; pinned
// locks the block's own pages in RAM (mlock), partition nearest / blocked /
// interleaved places a block's pages on NUMA nodes with canopy's data layer
// and checks them (core/alloc_memory.cpp). When a block cannot be had as
// asked (pool exhausted, mlock or placement refused), the allocator's
// fallback decides, and canopy_omp_alloc_error() says why. sync_hint and
// access are accepted and need nothing: the pool counter is lock-free for
// every hint, and host memory is accessible to every thread.
//
// Handles: 1-8 are the predefined allocators (GCC's numbering), anything
// larger is an Allocator made by omp_init_allocator.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "../core/alloc_memory.hpp"
#include "../core/runtime.hpp"
#include "../gomp/abi.hpp"

using canopy::omp::fatal;
namespace mem = canopy::omp::alloc_memory;

namespace {

// omp_memspace_handle_t values.
enum : std::uintptr_t { kDefaultMemSpace, kLargeCapMemSpace, kConstMemSpace, kHighBwMemSpace, kLowLatMemSpace };
// omp_allocator_handle_t values of the predefined allocators.
enum : std::uintptr_t {
  kNullAllocator,
  kDefaultMemAlloc,
  kLargeCapMemAlloc,
  kConstMemAlloc,
  kHighBwMemAlloc,
  kLowLatMemAlloc,
  kCgroupMemAlloc,
  kPteamMemAlloc,
  kThreadMemAlloc,
};
constexpr std::uintptr_t kLastPredefined = kThreadMemAlloc;
// omp_alloctrait_key_t and omp_alloctrait_value_t.
enum : int { kSyncHint = 1, kAlignment, kAccess, kPoolSize, kFallback, kFbData, kPinned, kPartition };
enum : std::uintptr_t {
  kFalse = 0,
  kTrue = 1,
  kContended = 3,
  kUncontended,
  kSerialized,
  kPrivate,
  kAll,
  kThread,
  kPteam,
  kCgroup,
  kDefaultMemFb,
  kNullFb,
  kAbortFb,
  kAllocatorFb,
  kEnvironment,
  kNearest,
  kBlocked,
  kInterleaved,
};
constexpr std::uintptr_t kAtvDefault = ~std::uintptr_t(0);
constexpr std::size_t kUnlimited = ~std::size_t(0);

constexpr std::uint32_t kMagic = 0x0a110ca7;

struct Allocator {
  std::uint32_t magic = kMagic;  // cleared by omp_destroy_allocator
  std::uintptr_t memspace = kDefaultMemSpace;
  std::uintptr_t sync_hint = kContended;
  std::size_t alignment = 1;
  std::uintptr_t access = kAll;
  std::size_t pool_size = kUnlimited;
  std::uintptr_t fallback = kDefaultMemFb;
  std::uintptr_t fb_data = kNullAllocator;
  bool pinned = false;
  mem::Partition partition = mem::Partition::Environment;
  std::atomic<std::size_t> used{0};  // bytes of the pool taken (footprints), when pool_size is limited
};

// The predefined allocators: default traits on their memory space (every
// memory space is this machine's host memory, see docs/omp.md), except
// the access trait of cgroup / pteam / thread.
Allocator* predefined(std::uintptr_t handle) {
  static Allocator table[kLastPredefined + 1];
  static const bool ready = [] {
    table[kLargeCapMemAlloc].memspace = kLargeCapMemSpace;
    table[kConstMemAlloc].memspace = kConstMemSpace;
    table[kHighBwMemAlloc].memspace = kHighBwMemSpace;
    table[kLowLatMemAlloc].memspace = kLowLatMemSpace;
    table[kCgroupMemAlloc].access = kCgroup;
    table[kPteamMemAlloc].access = kPteam;
    table[kThreadMemAlloc].access = kThread;
    return true;
  }();
  (void)ready;
  return &table[handle];
}

// A handle's allocator; a handle that is not one (destroyed, or never made
// by omp_init_allocator) stops the program with a message, where the
// header check can see it, instead of using whatever lies there.
Allocator* allocator_of(std::uintptr_t handle) {
  if (handle <= kLastPredefined) return predefined(handle);
  auto* a = reinterpret_cast<Allocator*>(handle);
  if (a->magic != kMagic)
    fatal("omp_alloc: %#lx is not an allocator (destroyed, or not made by omp_init_allocator)",
          static_cast<unsigned long>(handle));
  return a;
}

// Why the calling thread's last allocation did not come from the allocator
// it asked (canopy_omp_alloc_error): empty when it did.
thread_local char tls_alloc_error[512];

void note_error(std::uintptr_t handle, std::size_t size, const char* why) {
  std::snprintf(tls_alloc_error, sizeof tls_alloc_error, "allocator %#lx, %zu bytes: %s",
                static_cast<unsigned long>(handle), size, why);
}

// OMP_ALLOCATOR's allocator (the initial def-allocator-var).
std::uintptr_t environment_default() {
  static const std::uintptr_t handle = [] {
    static const char* names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc", "omp_const_mem_alloc",
                                  "omp_high_bw_mem_alloc", "omp_low_lat_mem_alloc",   "omp_cgroup_mem_alloc",
                                  "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
    const std::string& name = canopy::omp::runtime().settings.allocator;
    for (std::uintptr_t i = 0; i < kLastPredefined; ++i)
      if (name == names[i]) return i + 1;
    return std::uintptr_t(kDefaultMemAlloc);  // settings.cpp already warned about anything else
  }();
  return handle;
}

std::uintptr_t default_allocator() {
  const std::uintptr_t a = canopy::omp::current_icvs().def_allocator;
  return a != kNullAllocator ? a : environment_default();
}

// Takes `fp` bytes from a's pool; `credit` bytes of it are a block that
// omp_realloc frees right after (so a block may grow within its pool), which
// briefly counts twice: another thread may see the pool full meanwhile.
bool reserve(Allocator& a, std::size_t fp, std::size_t credit) {
  if (a.pool_size == kUnlimited) return true;
  std::size_t cur = a.used.load(std::memory_order_relaxed);
  for (;;) {
    const std::size_t after = cur - std::min(cur, credit);
    if (fp > a.pool_size || after > a.pool_size - fp) return false;
    if (a.used.compare_exchange_weak(cur, cur + fp, std::memory_order_relaxed)) return true;
  }
}

void unreserve(Allocator& a, std::size_t fp) {
  if (a.pool_size != kUnlimited) a.used.fetch_sub(fp, std::memory_order_relaxed);
}

// A block of `size` bytes aligned to at least `align` from `handle`, taking
// the fallbacks; `credit` is the footprint of the block a realloc replaces,
// which counts only while the allocator tried is that block's
// (`credit_from`). Null when the fallbacks end in nothing (null_fb, or
// omp_default_mem_alloc itself failing).
void* allocate(std::size_t align, std::size_t size, std::uintptr_t handle, bool zero, std::size_t credit = 0,
               std::uintptr_t credit_from = kNullAllocator) {
  if (handle == kNullAllocator) handle = default_allocator();
  tls_alloc_error[0] = '\0';
  if (size == 0) return nullptr;
  const std::uintptr_t asked = handle;
  for (int hops = 0; hops < 64; ++hops) {
    Allocator& a = *allocator_of(handle);
    mem::Request r;
    r.size = size;
    r.align = std::max<std::size_t>({align, a.alignment, 16});
    r.partition = a.partition;
    r.pinned = a.pinned;
    r.allocator = handle;
    const std::size_t fp = mem::footprint(size, r.align, mem::kind_for(r));
    char why[400];
    bool zeroed = false;
    void* p = nullptr;
    if (fp == 0) {
      std::snprintf(why, sizeof why, "larger than the address space");
    } else if (!reserve(a, fp, handle == credit_from ? credit : 0)) {
      std::snprintf(why, sizeof why, "its pool_size of %zu bytes is exhausted (%zu in use, %zu asked)", a.pool_size,
                    a.used.load(std::memory_order_relaxed), fp);
    } else if (!(p = mem::obtain(r, zeroed, why, sizeof why))) {
      unreserve(a, fp);
    }
    if (p) {
      if (zero && !zeroed) std::memset(p, 0, size);
      return p;
    }
    note_error(asked, size, why);
    switch (a.fallback) {
      case kNullFb: return nullptr;
      case kAbortFb:
        fatal("omp_alloc: %zu bytes from allocator %#lx failed (%s) and its fallback is abort_fb", size,
              static_cast<unsigned long>(handle), why);
      case kAllocatorFb: handle = a.fb_data != kNullAllocator ? a.fb_data : kDefaultMemAlloc; break;
      default:  // default_mem_fb: omp_default_mem_alloc, with the alignment the call asked for
        if (handle == kDefaultMemAlloc) return nullptr;
        handle = kDefaultMemAlloc;
        break;
    }
  }
  // Only a chain of allocator_fb longer than any sensible one gets here
  // (fb_data naming a destroyed allocator whose address was reused).
  fatal("omp_alloc: allocator %#lx: more than 64 allocator_fb fallbacks in a row (a cycle?)",
        static_cast<unsigned long>(asked));
}

void release(void* p) {
  if (!p) return;
  mem::Header* h = mem::header_of(p);
  // A block may outlive its allocator (freed after omp_destroy_allocator,
  // which libgomp tolerates): there is no pool left to give the bytes to.
  if (h->allocator <= kLastPredefined || reinterpret_cast<Allocator*>(h->allocator)->magic == kMagic)
    unreserve(*allocator_of(h->allocator), mem::footprint(*h));
  mem::give_back(h);
}

bool power_of_two(std::size_t v) { return v && !(v & (v - 1)); }

// omp_init_allocator's trait checks; false for a key or value OpenMP 5.1
// does not define (the allocator is then omp_null_allocator).
bool apply_trait(Allocator& a, int key, std::uintptr_t v) {
  const bool dflt = v == kAtvDefault;
  switch (key) {
    case kSyncHint:
      if (!dflt && (v < kContended || v > kPrivate)) return false;
      a.sync_hint = dflt ? kContended : v;
      return true;
    case kAlignment:
      if (!dflt && !power_of_two(v)) return false;
      a.alignment = dflt ? 1 : v;
      return true;
    case kAccess:
      if (!dflt && (v < kAll || v > kCgroup)) return false;
      a.access = dflt ? kAll : v;
      return true;
    case kPoolSize:
      a.pool_size = dflt ? kUnlimited : v;
      return true;
    case kFallback:
      if (!dflt && (v < kDefaultMemFb || v > kAllocatorFb)) return false;
      a.fallback = dflt ? kDefaultMemFb : v;
      return true;
    case kFbData:
      a.fb_data = v;
      return true;
    case kPinned:
      if (!dflt && v != kTrue && v != kFalse) return false;
      a.pinned = v == kTrue;
      return true;
    case kPartition:
      if (!dflt && (v < kEnvironment || v > kInterleaved)) return false;
      a.partition = dflt ? mem::Partition::Environment : static_cast<mem::Partition>(v - kEnvironment);
      return true;
  }
  return false;
}

struct Trait {
  int key;
  std::uintptr_t value;
};

}  // namespace

extern "C" {
CANOPY_GOMP void* omp_alloc(std::size_t size, std::uintptr_t a) { return allocate(1, size, a, false); }
CANOPY_GOMP void* omp_aligned_alloc(std::size_t align, std::size_t size, std::uintptr_t a) {
  if (!power_of_two(align)) return nullptr;
  return allocate(align, size, a, false);
}
CANOPY_GOMP void* omp_calloc(std::size_t n, std::size_t size, std::uintptr_t a) {
  if (size && n > ~std::size_t(0) / size) return nullptr;
  return allocate(1, n * size, a, true);
}
CANOPY_GOMP void* omp_aligned_calloc(std::size_t align, std::size_t n, std::size_t size, std::uintptr_t a) {
  if (!power_of_two(align) || (size && n > ~std::size_t(0) / size)) return nullptr;
  return allocate(align, n * size, a, true);
}
// As GCC: a null `a` means the allocator that provided `ptr` (not the
// default one), free_a is not needed (the header knows), and a block grows
// within its own pool by the difference only.
CANOPY_GOMP void* omp_realloc(void* ptr, std::size_t size, std::uintptr_t a, std::uintptr_t free_a) {
  (void)free_a;
  if (!ptr) return allocate(1, size, a, false);
  if (size == 0) {
    release(ptr);
    return nullptr;
  }
  const mem::Header* h = mem::header_of(ptr);
  if (a == kNullAllocator) a = h->allocator;
  void* q = allocate(1, size, a, false, mem::footprint(*h), h->allocator);
  if (q) {
    std::memcpy(q, ptr, std::min(size, h->size));
    release(ptr);
  }
  return q;
}
CANOPY_GOMP void omp_free(void* p, std::uintptr_t) { release(p); }
// The allocate clause: out of memory is fatal (the program has no way to
// test the pointer), as in libgomp.
CANOPY_GOMP void* GOMP_alloc(std::size_t align, std::size_t size, std::uintptr_t a) {
  void* p = power_of_two(align) ? allocate(align, size, a, false) : nullptr;
  if (!p && size)
    fatal("GOMP_alloc: out of memory allocating %zu bytes aligned to %zu (allocate clause): %s", size, align,
          tls_alloc_error[0] ? tls_alloc_error : "bad alignment");
  return p;
}
CANOPY_GOMP void GOMP_free(void* p, std::uintptr_t) { release(p); }

CANOPY_GOMP std::uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, const void* traits_arg) {
  if (memspace > kLowLatMemSpace || ntraits < 0 || (ntraits > 0 && !traits_arg)) return kNullAllocator;
  auto* a = new Allocator;
  a->memspace = memspace;
  const auto* traits = static_cast<const Trait*>(traits_arg);
  for (int i = 0; i < ntraits; ++i)
    if (!apply_trait(*a, traits[i].key, traits[i].value)) {
      delete a;
      return kNullAllocator;
    }
  return reinterpret_cast<std::uintptr_t>(a);
}
CANOPY_GOMP void omp_destroy_allocator(std::uintptr_t handle) {
  if (handle <= kLastPredefined) return;
  Allocator* a = allocator_of(handle);
  a->magic = 0;
  delete a;
}
// As GCC: setting omp_null_allocator sets omp_default_mem_alloc.
CANOPY_GOMP void omp_set_default_allocator(std::uintptr_t a) {
  canopy::omp::current_icvs().def_allocator = a != kNullAllocator ? a : kDefaultMemAlloc;
}
CANOPY_GOMP std::uintptr_t omp_get_default_allocator() { return default_allocator(); }

// canopy's extension: why the calling thread's last omp_alloc-family call
// did not get its memory from the allocator it asked (and took a fallback,
// or returned null), or null when it did.
CANOPY_GOMP const char* canopy_omp_alloc_error() { return tls_alloc_error[0] ? tls_alloc_error : nullptr; }
}
