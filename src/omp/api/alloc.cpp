// Memory allocators: the predefined allocators (handles 1-8) are the system
// heap; omp_init_allocator's allocators honour the alignment, pool_size
// (bytes outstanding) and fallback (default_mem_fb, null_fb, abort_fb,
// allocator_fb with fb_data) traits. Other traits are accepted with their
// specified values (sync_hint, access, partition: they change nothing on
// one memory space of host memory); pinned memory and unknown keys or values
// make omp_init_allocator return omp_null_allocator, as the specification
// allows for unsupported traits.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../core/runtime.hpp"
#include "../gomp/abi.hpp"

using canopy::omp::fatal;

namespace {

constexpr std::uintptr_t kDefaultMemAlloc = 1, kLastPredefined = 8;
constexpr std::uintptr_t kAtvDefault = ~std::uintptr_t(0);
enum : std::uintptr_t { kDefaultMemFb = 11, kNullFb = 12, kAbortFb = 13, kAllocatorFb = 14 };

struct Allocator {
  std::uintptr_t memspace = 0;
  std::size_t alignment = 1;
  std::size_t pool_size = 0;  // 0: unlimited
  std::atomic<std::size_t> used{0};
  std::uintptr_t fallback = kDefaultMemFb;
  std::uintptr_t fb_data = 0;
};

struct Header {  // just before every block
  void* raw;
  std::size_t size;
  Allocator* owner;  // whose pool the block counts in (null: a predefined allocator)
};

struct Trait {
  int key;
  std::uintptr_t value;
};

thread_local std::uintptr_t tls_default_allocator = kDefaultMemAlloc;

Allocator* user_allocator(std::uintptr_t handle) {
  return handle > kLastPredefined ? reinterpret_cast<Allocator*>(handle) : nullptr;
}

void* raw_alloc(std::size_t align, std::size_t size, Allocator* owner) {
  align = std::max<std::size_t>({align, alignof(std::max_align_t), alignof(Header)});
  char* raw = static_cast<char*>(std::malloc(size + align + sizeof(Header)));
  if (!raw) return nullptr;
  std::uintptr_t p = (reinterpret_cast<std::uintptr_t>(raw) + sizeof(Header) + align - 1) & ~(std::uintptr_t(align) - 1);
  auto* h = reinterpret_cast<Header*>(p) - 1;
  h->raw = raw;
  h->size = size;
  h->owner = owner;
  return reinterpret_cast<void*>(p);
}

void* allocate(std::size_t align, std::size_t size, std::uintptr_t handle) {
  if (handle == 0) handle = tls_default_allocator ? tls_default_allocator : kDefaultMemAlloc;
  if (size == 0) return nullptr;
  for (int hops = 0; hops < 64; ++hops) {
    Allocator* a = user_allocator(handle);
    if (!a) return raw_alloc(align, size, nullptr);
    const std::size_t al = std::max(align, a->alignment);
    if (a->pool_size) {
      std::size_t cur = a->used.load(std::memory_order_relaxed);
      bool fits = false;
      while (cur + size <= a->pool_size && cur + size >= cur) {
        if (a->used.compare_exchange_weak(cur, cur + size, std::memory_order_relaxed)) {
          fits = true;
          break;
        }
      }
      if (fits) {
        void* p = raw_alloc(al, size, a);
        if (!p) a->used.fetch_sub(size, std::memory_order_relaxed);
        if (p) return p;
      }
    } else if (void* p = raw_alloc(al, size, nullptr)) {
      return p;
    }
    switch (a->fallback) {
      case kNullFb: return nullptr;
      case kAbortFb: fatal("omp_alloc: %zu bytes do not fit the allocator and its fallback is abort_fb", size);
      case kAllocatorFb: handle = a->fb_data ? a->fb_data : kDefaultMemAlloc; break;
      default: handle = kDefaultMemAlloc; align = std::max(align, std::size_t(1)); break;  // default_mem_fb
    }
  }
  fatal("omp_alloc: the allocators' fallback chain is a cycle");
}

void release(void* p) {
  if (!p) return;
  Header* h = static_cast<Header*>(p) - 1;
  if (h->owner) h->owner->used.fetch_sub(h->size, std::memory_order_relaxed);
  std::free(h->raw);
}

}  // namespace

extern "C" {
CANOPY_GOMP void* omp_alloc(std::size_t size, std::uintptr_t a) { return allocate(1, size, a); }
CANOPY_GOMP void* omp_aligned_alloc(std::size_t align, std::size_t size, std::uintptr_t a) {
  if (align == 0 || (align & (align - 1))) return nullptr;
  return allocate(align, size, a);
}
CANOPY_GOMP void* omp_calloc(std::size_t n, std::size_t size, std::uintptr_t a) {
  if (size && n > ~std::size_t(0) / size) return nullptr;
  void* p = allocate(1, n * size, a);
  if (p) std::memset(p, 0, n * size);
  return p;
}
CANOPY_GOMP void* omp_aligned_calloc(std::size_t align, std::size_t n, std::size_t size, std::uintptr_t a) {
  if (align == 0 || (align & (align - 1)) || (size && n > ~std::size_t(0) / size)) return nullptr;
  void* p = allocate(align, n * size, a);
  if (p) std::memset(p, 0, n * size);
  return p;
}
CANOPY_GOMP void* omp_realloc(void* ptr, std::size_t size, std::uintptr_t a, std::uintptr_t free_a) {
  (void)free_a;  // the block's header knows where it came from
  if (!ptr) return allocate(1, size, a);
  if (size == 0) {
    release(ptr);
    return nullptr;
  }
  void* q = allocate(1, size, a);
  if (q) {
    std::memcpy(q, ptr, std::min(size, (static_cast<Header*>(ptr) - 1)->size));
    release(ptr);
  }
  return q;
}
CANOPY_GOMP void omp_free(void* p, std::uintptr_t) { release(p); }
CANOPY_GOMP void* GOMP_alloc(std::size_t align, std::size_t size, std::uintptr_t a) {
  void* p = allocate(align, size, a);
  if (!p && size) fatal("GOMP_alloc: out of memory allocating %zu bytes", size);
  return p;
}
CANOPY_GOMP void GOMP_free(void* p, std::uintptr_t) { release(p); }

CANOPY_GOMP std::uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, const void* traits_arg) {
  if (memspace > 4 || ntraits < 0) return 0;
  auto* a = new Allocator;
  a->memspace = memspace;
  const auto* traits = static_cast<const Trait*>(traits_arg);
  for (int i = 0; i < ntraits; ++i) {
    const std::uintptr_t v = traits[i].value;
    bool ok = true;
    switch (traits[i].key) {
      case 1: ok = v == kAtvDefault || (v >= 3 && v <= 5); break;           // sync_hint
      case 2:                                                               // alignment
        if (v == kAtvDefault) break;
        ok = v && !(v & (v - 1));
        if (ok) a->alignment = v;
        break;
      case 3: ok = v == kAtvDefault || (v >= 7 && v <= 10); break;          // access
      case 4:                                                               // pool_size
        if (v != kAtvDefault) a->pool_size = v;
        break;
      case 5:                                                               // fallback
        if (v == kAtvDefault) break;
        ok = v >= kDefaultMemFb && v <= kAllocatorFb;
        if (ok) a->fallback = v;
        break;
      case 6: a->fb_data = v; break;                                        // fb_data
      case 7: ok = v == kAtvDefault || v == 0; break;                       // pinned: not supported
      case 8: ok = v == kAtvDefault || (v >= 15 && v <= 18); break;         // partition
      default: ok = false;
    }
    if (!ok) {
      delete a;
      return 0;
    }
  }
  return reinterpret_cast<std::uintptr_t>(a);
}
CANOPY_GOMP void omp_destroy_allocator(std::uintptr_t handle) { delete user_allocator(handle); }
CANOPY_GOMP void omp_set_default_allocator(std::uintptr_t a) { tls_default_allocator = a; }
CANOPY_GOMP std::uintptr_t omp_get_default_allocator() { return tls_default_allocator; }
}
