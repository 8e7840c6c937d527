// omp_*_lock and omp_*_nest_lock: futex locks whose word holds the owning
// task's 31-bit id (bit 31: waiters), so that misuse (unsetting a lock not held,
// setting a simple lock the thread already holds, destroying a held lock)
// stops the program with a clear message instead of corrupting it. A nest
// lock uses 8 bytes {word, depth}, which fits both C's omp_nest_lock_t and
// Fortran's omp_nest_lock_kind.
#include <atomic>
#include <cstdint>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/futex.hpp"
#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "../gomp/abi.hpp"

using namespace canopy::omp;

namespace {

constexpr std::uint32_t kWaiters = 1u << 31;

// Locks are owned by tasks (OpenMP 3.0 and later), not threads.
std::uint32_t my_tid() { return this_thread().task->id; }

std::atomic<std::uint32_t>& word(void* lock) { return *static_cast<std::atomic<std::uint32_t>*>(lock); }

void acquire(std::atomic<std::uint32_t>& w, std::uint32_t me) {
  std::uint32_t expected = 0;
  if (w.compare_exchange_strong(expected, me, std::memory_order_acquire)) return;
  int spins = spin_budget() / 16;
  for (;;) {
    expected = w.load(std::memory_order_relaxed);
    if (expected == 0) {
      if (w.compare_exchange_weak(expected, me | (spins <= 0 ? kWaiters : 0), std::memory_order_acquire)) return;
      continue;
    }
    if (spins > 0) {
      --spins;
      cpu_relax();
      continue;
    }
    if (!(expected & kWaiters) && !w.compare_exchange_weak(expected, expected | kWaiters, std::memory_order_relaxed)) continue;
    futex_wait(w, expected | kWaiters);
  }
}

void release(std::atomic<std::uint32_t>& w) {
  if (w.exchange(0, std::memory_order_release) & kWaiters) futex_wake(w, 1);
}

struct NestLock {
  std::atomic<std::uint32_t> word;
  std::uint32_t depth;
};


// The routines, under names of their own: each is exported twice below.
void init_lock(void* lock) { word(lock).store(0, std::memory_order_relaxed); }
void destroy_lock(void* lock) {
  if (word(lock).load() != 0) fatal("omp_destroy_lock: the lock is still set");
}
void set_lock(void* lock) {
  std::uint32_t me = my_tid();
  if ((word(lock).load(std::memory_order_relaxed) & ~kWaiters) == me)
    fatal("omp_set_lock: the calling thread already holds this simple lock (deadlock)");
  acquire(word(lock), me);
}
void unset_lock(void* lock) {
  if ((word(lock).load(std::memory_order_relaxed) & ~kWaiters) != my_tid())
    fatal("omp_unset_lock: the lock is not held by the calling thread");
  release(word(lock));
}
int test_lock(void* lock) {
  std::uint32_t expected = 0;
  return word(lock).compare_exchange_strong(expected, my_tid(), std::memory_order_acquire) ? 1 : 0;
}

void init_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  l->word.store(0, std::memory_order_relaxed);
  l->depth = 0;
}
void destroy_nest_lock(void* lock) {
  if (static_cast<NestLock*>(lock)->word.load() != 0) fatal("omp_destroy_nest_lock: the lock is still set");
}
void set_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  std::uint32_t me = my_tid();
  if ((l->word.load(std::memory_order_relaxed) & ~kWaiters) != me) acquire(l->word, me);
  ++l->depth;
}
void unset_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  if ((l->word.load(std::memory_order_relaxed) & ~kWaiters) != my_tid() || l->depth == 0)
    fatal("omp_unset_nest_lock: the lock is not held by the calling thread");
  if (--l->depth == 0) release(l->word);
}
int test_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  std::uint32_t me = my_tid();
  if ((l->word.load(std::memory_order_relaxed) & ~kWaiters) != me) {
    std::uint32_t expected = 0;
    if (!l->word.compare_exchange_strong(expected, me, std::memory_order_acquire)) return 0;
  }
  return static_cast<int>(++l->depth);
}

}  // namespace

extern "C" {
CANOPY_GOMP void omp_init_lock_with_hint(void* lock, int) { init_lock(lock); }
CANOPY_GOMP void omp_init_nest_lock_with_hint(void* lock, int) { init_nest_lock(lock); }
CANOPY_GOMP void omp_init_lock_with_hint_(void* l, int*) { init_lock(l); }
CANOPY_GOMP void omp_init_nest_lock_with_hint_(void* l, int*) { init_nest_lock(l); }
}

// Each lock routine is exported under two versions, as libgomp does: the
// default OMP_3.0 one, and OMP_1.0's, which programs linked against libgomp
// before GCC 4.4 (OpenMP 2.5) call. libgomp needs two because its 2.5 nest
// lock had another layout, {int owner; int count;}; canopy's locks fit both
// layouts (4 bytes; 8 bytes {word, depth}) and an OpenMP 2.5 program has no
// explicit tasks, so a lock owned by the implicit task is owned by the
// thread, as 2.5 says: both versions are the same routine. The Fortran
// forms (name_) get the lock variable itself by reference, as the C ones.
// The version script (libgomp.map) lists the names in both nodes.
#define CANOPY_LOCK_VERSIONS(ret, name, impl)                                                              \
  extern "C" __attribute__((visibility("default"), symver(#name "@@OMP_3.0"))) ret canopy_##name##_30(void* l) { \
    return impl(l);                                                                                       \
  }                                                                                                       \
  extern "C" __attribute__((visibility("default"), symver(#name "@OMP_1.0"))) ret canopy_##name##_10(void* l) {  \
    return impl(l);                                                                                       \
  }
CANOPY_LOCK_VERSIONS(void, omp_init_lock, init_lock)
CANOPY_LOCK_VERSIONS(void, omp_destroy_lock, destroy_lock)
CANOPY_LOCK_VERSIONS(void, omp_set_lock, set_lock)
CANOPY_LOCK_VERSIONS(void, omp_unset_lock, unset_lock)
CANOPY_LOCK_VERSIONS(int, omp_test_lock, test_lock)
CANOPY_LOCK_VERSIONS(void, omp_init_nest_lock, init_nest_lock)
CANOPY_LOCK_VERSIONS(void, omp_destroy_nest_lock, destroy_nest_lock)
CANOPY_LOCK_VERSIONS(void, omp_set_nest_lock, set_nest_lock)
CANOPY_LOCK_VERSIONS(void, omp_unset_nest_lock, unset_nest_lock)
CANOPY_LOCK_VERSIONS(int, omp_test_nest_lock, test_nest_lock)
CANOPY_LOCK_VERSIONS(void, omp_init_lock_, init_lock)
CANOPY_LOCK_VERSIONS(void, omp_destroy_lock_, destroy_lock)
CANOPY_LOCK_VERSIONS(void, omp_set_lock_, set_lock)
CANOPY_LOCK_VERSIONS(void, omp_unset_lock_, unset_lock)
CANOPY_LOCK_VERSIONS(int, omp_test_lock_, test_lock)
CANOPY_LOCK_VERSIONS(void, omp_init_nest_lock_, init_nest_lock)
CANOPY_LOCK_VERSIONS(void, omp_destroy_nest_lock_, destroy_nest_lock)
CANOPY_LOCK_VERSIONS(void, omp_set_nest_lock_, set_nest_lock)
CANOPY_LOCK_VERSIONS(void, omp_unset_nest_lock_, unset_nest_lock)
CANOPY_LOCK_VERSIONS(int, omp_test_nest_lock_, test_nest_lock)
#undef CANOPY_LOCK_VERSIONS
