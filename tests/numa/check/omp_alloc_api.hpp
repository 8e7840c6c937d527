// The part of the OpenMP allocator API the NUMA checks call (canopy's
// OpenMP runtime, libcanopy-omp.so, linked into canopy_numa_check): omp.h's
// handle types are integers of pointer size, and its values are these.
#pragma once
#include <cstddef>
#include <cstdint>

extern "C" {
std::uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, const void* traits);
void omp_destroy_allocator(std::uintptr_t allocator);
void* omp_alloc(std::size_t size, std::uintptr_t allocator);
void omp_free(void* p, std::uintptr_t allocator);
// canopy's extension: why the last allocation took a fallback (null: it did not).
const char* canopy_omp_alloc_error();
}

namespace omp_alloc_api {

constexpr int kAtkFallback = 5, kAtkPartition = 8;
constexpr std::uintptr_t kDefaultMemFb = 11, kNullFb = 12, kNearest = 16, kBlocked = 17, kInterleaved = 18;

struct Trait {
  int key;
  std::uintptr_t value;
};

// An allocator on omp_default_mem_space with the given partition and fallback.
inline std::uintptr_t partition_allocator(std::uintptr_t partition, std::uintptr_t fallback) {
  const Trait t[] = {{kAtkPartition, partition}, {kAtkFallback, fallback}};
  return omp_init_allocator(0, 2, t);
}

}  // namespace omp_alloc_api
