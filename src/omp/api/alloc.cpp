// Memory allocators, basic version: every allocator is the system heap with
// the requested alignment (traits other than alignment are not honoured yet).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "../gomp/abi.hpp"

namespace {
// A header before each block remembers the raw pointer and the size (for realloc).
struct Header {
  void* raw;
  std::size_t size;
};
void* alloc_aligned(std::size_t align, std::size_t size) {
  align = std::max<std::size_t>({align, alignof(std::max_align_t), sizeof(Header)});
  char* raw = static_cast<char*>(std::malloc(size + align + sizeof(Header)));
  if (!raw) return nullptr;
  std::uintptr_t p = (reinterpret_cast<std::uintptr_t>(raw) + sizeof(Header) + align - 1) & ~(std::uintptr_t(align) - 1);
  auto* h = reinterpret_cast<Header*>(p) - 1;
  h->raw = raw;
  h->size = size;
  return reinterpret_cast<void*>(p);
}
void free_aligned(void* p) {
  if (p) std::free((static_cast<Header*>(p) - 1)->raw);
}
thread_local std::uintptr_t tls_default_allocator = 1;  // omp_default_mem_alloc
}  // namespace

extern "C" {
CANOPY_GOMP void* omp_alloc(std::size_t size, std::uintptr_t) { return alloc_aligned(0, size); }
CANOPY_GOMP void* omp_aligned_alloc(std::size_t align, std::size_t size, std::uintptr_t) { return alloc_aligned(align, size); }
CANOPY_GOMP void* omp_calloc(std::size_t n, std::size_t size, std::uintptr_t) {
  void* p = alloc_aligned(0, n * size);
  if (p) std::memset(p, 0, n * size);
  return p;
}
CANOPY_GOMP void* omp_aligned_calloc(std::size_t align, std::size_t n, std::size_t size, std::uintptr_t) {
  void* p = alloc_aligned(align, n * size);
  if (p) std::memset(p, 0, n * size);
  return p;
}
CANOPY_GOMP void* omp_realloc(void* ptr, std::size_t size, std::uintptr_t, std::uintptr_t) {
  if (!ptr) return alloc_aligned(0, size);
  void* q = alloc_aligned(0, size);
  if (q) std::memcpy(q, ptr, std::min(size, (static_cast<Header*>(ptr) - 1)->size));
  free_aligned(ptr);
  return q;
}
CANOPY_GOMP void omp_free(void* p, std::uintptr_t) { free_aligned(p); }
CANOPY_GOMP void* GOMP_alloc(std::size_t align, std::size_t size, std::uintptr_t) { return alloc_aligned(align, size); }
CANOPY_GOMP void GOMP_free(void* p, std::uintptr_t) { free_aligned(p); }
CANOPY_GOMP std::uintptr_t omp_init_allocator(std::uintptr_t memspace, int, const void*) { return memspace ? memspace : 1; }
CANOPY_GOMP void omp_destroy_allocator(std::uintptr_t) {}
CANOPY_GOMP void omp_set_default_allocator(std::uintptr_t a) { tls_default_allocator = a; }
CANOPY_GOMP std::uintptr_t omp_get_default_allocator() { return tls_default_allocator; }
}
