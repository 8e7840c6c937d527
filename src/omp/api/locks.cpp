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

}  // namespace

extern "C" {
CANOPY_GOMP void omp_init_lock(void* lock) { word(lock).store(0, std::memory_order_relaxed); }
CANOPY_GOMP void omp_init_lock_with_hint(void* lock, int) { omp_init_lock(lock); }
CANOPY_GOMP void omp_destroy_lock(void* lock) {
  if (word(lock).load() != 0) fatal("omp_destroy_lock: the lock is still set");
}
CANOPY_GOMP void omp_set_lock(void* lock) {
  std::uint32_t me = my_tid();
  if ((word(lock).load(std::memory_order_relaxed) & ~kWaiters) == me)
    fatal("omp_set_lock: the calling thread already holds this simple lock (deadlock)");
  acquire(word(lock), me);
}
CANOPY_GOMP void omp_unset_lock(void* lock) {
  if ((word(lock).load(std::memory_order_relaxed) & ~kWaiters) != my_tid())
    fatal("omp_unset_lock: the lock is not held by the calling thread");
  release(word(lock));
}
CANOPY_GOMP int omp_test_lock(void* lock) {
  std::uint32_t expected = 0;
  return word(lock).compare_exchange_strong(expected, my_tid(), std::memory_order_acquire) ? 1 : 0;
}

CANOPY_GOMP void omp_init_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  l->word.store(0, std::memory_order_relaxed);
  l->depth = 0;
}
CANOPY_GOMP void omp_init_nest_lock_with_hint(void* lock, int) { omp_init_nest_lock(lock); }
CANOPY_GOMP void omp_destroy_nest_lock(void* lock) {
  if (static_cast<NestLock*>(lock)->word.load() != 0) fatal("omp_destroy_nest_lock: the lock is still set");
}
CANOPY_GOMP void omp_set_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  std::uint32_t me = my_tid();
  if ((l->word.load(std::memory_order_relaxed) & ~kWaiters) != me) acquire(l->word, me);
  ++l->depth;
}
CANOPY_GOMP void omp_unset_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  if ((l->word.load(std::memory_order_relaxed) & ~kWaiters) != my_tid() || l->depth == 0)
    fatal("omp_unset_nest_lock: the lock is not held by the calling thread");
  if (--l->depth == 0) release(l->word);
}
CANOPY_GOMP int omp_test_nest_lock(void* lock) {
  auto* l = static_cast<NestLock*>(lock);
  std::uint32_t me = my_tid();
  if ((l->word.load(std::memory_order_relaxed) & ~kWaiters) != me) {
    std::uint32_t expected = 0;
    if (!l->word.compare_exchange_strong(expected, me, std::memory_order_acquire)) return 0;
  }
  return static_cast<int>(++l->depth);
}

// Fortran: the lock variable itself is passed by reference.
CANOPY_GOMP void omp_init_lock_(void* l) { omp_init_lock(l); }
CANOPY_GOMP void omp_init_lock_with_hint_(void* l, int*) { omp_init_lock(l); }
CANOPY_GOMP void omp_destroy_lock_(void* l) { omp_destroy_lock(l); }
CANOPY_GOMP void omp_set_lock_(void* l) { omp_set_lock(l); }
CANOPY_GOMP void omp_unset_lock_(void* l) { omp_unset_lock(l); }
CANOPY_GOMP int omp_test_lock_(void* l) { return omp_test_lock(l); }
CANOPY_GOMP void omp_init_nest_lock_(void* l) { omp_init_nest_lock(l); }
CANOPY_GOMP void omp_init_nest_lock_with_hint_(void* l, int*) { omp_init_nest_lock(l); }
CANOPY_GOMP void omp_destroy_nest_lock_(void* l) { omp_destroy_nest_lock(l); }
CANOPY_GOMP void omp_set_nest_lock_(void* l) { omp_set_nest_lock(l); }
CANOPY_GOMP void omp_unset_nest_lock_(void* l) { omp_unset_nest_lock(l); }
CANOPY_GOMP int omp_test_nest_lock_(void* l) { return omp_test_nest_lock(l); }
}
