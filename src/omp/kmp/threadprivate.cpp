// threadprivate without native TLS (clang -fno-openmp-use-tls, and C++
// objects registered with constructors): __kmpc_threadprivate* return the
// calling thread's copy of a variable. As in libomp, an initial thread
// (not one of canopy's workers) uses the variable itself; a worker gets a
// copy made on its first access, by the registered constructor, or else
// from the variable's bytes as they were when the runtime first saw it
// (its static initial value: the copies of a parallel region must not see
// what the initial thread wrote since, which copyin transfers instead).
// Copies live as long as their worker (workers end with the process or
// omp_pause_resource; destructors of copies are not run).
#include <algorithm>
#include <cstring>
#include <new>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "../core/runtime.hpp"
#include "abi.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace {

using Ctor = void* (*)(void*);
using CCtor = void* (*)(void*, void*);
using Dtor = void (*)(void*);
using CtorVec = void* (*)(void*, std::size_t);
using CCtorVec = void* (*)(void*, void*, std::size_t);
using DtorVec = void (*)(void*, std::size_t);

struct Common {
  std::vector<char> initial;  // the variable's bytes when first seen (no constructor)
  Ctor ctor = nullptr;
  CCtor cctor = nullptr;
  CtorVec ctor_vec = nullptr;
  CCtorVec cctor_vec = nullptr;
  std::size_t vec_len = 0;
};

std::mutex g_common_m;
std::unordered_map<void*, Common>& commons() {
  static auto* m = new std::unordered_map<void*, Common>;  // never destroyed: workers may outlive static destruction
  return *m;
}

Common& common_locked(void* data, std::size_t size) {
  auto [it, fresh] = commons().try_emplace(data);
  if (fresh && size) it->second.initial.assign(static_cast<char*>(data), static_cast<char*>(data) + size);
  return it->second;
}

thread_local std::unordered_map<void*, void*>* tls_copies = nullptr;

void* thread_copy(void* data, std::size_t size) {
  if (!tls_copies) tls_copies = new std::unordered_map<void*, void*>;
  auto it = tls_copies->find(data);
  if (it != tls_copies->end()) return it->second;
  void* copy = data;
  {
    std::lock_guard<std::mutex> lock(g_common_m);
    // The snapshot is taken on the first access of any thread, before the
    // initial thread can change the variable in a region.
    Common& c = common_locked(data, size);
    if (this_thread().is_worker) {
      copy = ::operator new(size ? size : 1, std::align_val_t{64});
      if (c.ctor) c.ctor(copy);
      else if (c.ctor_vec) c.ctor_vec(copy, c.vec_len);
      else if (c.cctor) c.cctor(copy, data);
      else if (c.cctor_vec) c.cctor_vec(copy, data, c.vec_len);
      else std::memcpy(copy, c.initial.data(), std::min(size, c.initial.size()));
    }
  }
  tls_copies->emplace(data, copy);
  return copy;
}

}  // namespace

CANOPY_KMP void __kmpc_threadprivate_register(ident_t*, void* data, Ctor ctor, CCtor cctor, Dtor) {
  std::lock_guard<std::mutex> lock(g_common_m);
  Common& c = common_locked(data, 0);
  c.ctor = ctor;
  c.cctor = cctor;
}
CANOPY_KMP void __kmpc_threadprivate_register_vec(ident_t*, void* data, CtorVec ctor, CCtorVec cctor, DtorVec,
                                                  std::size_t vector_length) {
  std::lock_guard<std::mutex> lock(g_common_m);
  Common& c = common_locked(data, 0);
  c.ctor_vec = ctor;
  c.cctor_vec = cctor;
  c.vec_len = vector_length;
}
CANOPY_KMP void* __kmpc_threadprivate(ident_t*, kmp_int32, void* data, std::size_t size) {
  return thread_copy(data, size);
}
// `cache` is the compiler's per-variable slot for the runtime: unused (the
// lookup is per thread, without a lock after the first access).
CANOPY_KMP void* __kmpc_threadprivate_cached(ident_t*, kmp_int32, void* data, std::size_t size, void***) {
  return thread_copy(data, size);
}
