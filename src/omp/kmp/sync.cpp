// Synchronisation of the libomp ABI: barriers, critical (with hints),
// single, master/masked, copyprivate, and __kmpc_reduce* (the compiler
// combines; the runtime says how: 1 under the reduction's lock, 2 with
// atomics when the compiler marked them possible).
#include <atomic>

#include "../core/cancel.hpp"
#include "../core/futex.hpp"
#include "../core/spin_mutex.hpp"
#include "../core/runtime.hpp"
#include "../core/workshare.hpp"
#include "abi.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace canopy::omp::kmp {

// The name's first word: 0 free, 1 held, 2 held with sleepers (a futex
// mutex in the compiler's zero-initialised 32 bytes: no allocation, no
// table of names).
namespace {
std::atomic<std::uint32_t>& name_word(kmp_critical_name* name) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(kmp_int32));
  return *reinterpret_cast<std::atomic<std::uint32_t>*>(&(*name)[0]);
}
}  // namespace

// The three-state futex mutex (spin_mutex.hpp), polling a sixteenth of
// the runtime's spin budget.
void critical_lock(kmp_critical_name* name) {
  spin_lock_word(name_word(name), [] { return spin_budget() / 16; });
}

void critical_unlock(kmp_critical_name* name) { spin_unlock_word(name_word(name)); }

}  // namespace canopy::omp::kmp

CANOPY_KMP void __kmpc_barrier(ident_t*, kmp_int32) { team_barrier(); }
// Ends a construct that may be cancelled: a dispatch loop left by a
// cancellation (the compiler jumps past its __kmpc_dispatch_next) leaves its
// work share here.
CANOPY_KMP kmp_int32 __kmpc_cancel_barrier(ident_t*, kmp_int32) {
  if (this_thread().loop.ws) loop_leave();
  return team_barrier_cancellable() ? 1 : 0;
}

// A barrier whose primary thread runs a block before the others go on
// (__kmpc_end_barrier_master releases them): two barriers.
CANOPY_KMP kmp_int32 __kmpc_barrier_master(ident_t*, kmp_int32) {
  team_barrier();
  if (this_thread().num == 0) return 1;
  team_barrier();
  return 0;
}
CANOPY_KMP void __kmpc_end_barrier_master(ident_t*, kmp_int32) { team_barrier(); }
CANOPY_KMP kmp_int32 __kmpc_barrier_master_nowait(ident_t*, kmp_int32) {
  team_barrier();
  return this_thread().num == 0 ? 1 : 0;
}

CANOPY_KMP void __kmpc_critical(ident_t*, kmp_int32, kmp_critical_name* name) { critical_lock(name); }
// Hints (contended, speculative...) are permissions, not obligations: one kind of lock serves them all.
CANOPY_KMP void __kmpc_critical_with_hint(ident_t*, kmp_int32, kmp_critical_name* name, kmp_uint32) {
  critical_lock(name);
}
CANOPY_KMP void __kmpc_end_critical(ident_t*, kmp_int32, kmp_critical_name* name) { critical_unlock(name); }

CANOPY_KMP kmp_int32 __kmpc_single(ident_t*, kmp_int32) { return single_start() ? 1 : 0; }
CANOPY_KMP void __kmpc_end_single(ident_t*, kmp_int32) { single_end(); }

CANOPY_KMP kmp_int32 __kmpc_master(ident_t*, kmp_int32) { return this_thread().num == 0 ? 1 : 0; }
CANOPY_KMP void __kmpc_end_master(ident_t*, kmp_int32) {}
CANOPY_KMP kmp_int32 __kmpc_masked(ident_t*, kmp_int32, kmp_int32 filter) {
  return this_thread().num == filter ? 1 : 0;
}
CANOPY_KMP void __kmpc_end_masked(ident_t*, kmp_int32) {}

// The thread that ran the single block (didit) publishes its data; after a
// barrier the others copy from it; a second barrier keeps the data alive
// until they have.
CANOPY_KMP void __kmpc_copyprivate(ident_t*, kmp_int32, std::size_t, void* cpy_data, void (*cpy_func)(void*, void*),
                                   kmp_int32 didit) {
  Team& team = *this_thread().team;
  if (team.nthreads == 1) return;
  if (didit) team.copyprivate = cpy_data;
  team_barrier();
  if (!didit) cpy_func(cpy_data, team.copyprivate);
  team_barrier();
}

namespace {
kmp_int32 reduce_begin(const ident_t* loc, kmp_critical_name* lck) {
  KmpThread& k = kmp_thread();
  k.reduce_locked = false;
  if (this_thread().team->nthreads == 1) return 1;  // alone: combine directly, nothing to lock
  if (loc && (loc->flags & kIdentAtomicReduce)) return 2;
  critical_lock(lck);
  k.reduce_locked = true;
  return 1;
}
void reduce_end(kmp_critical_name* lck) {
  KmpThread& k = kmp_thread();
  if (k.reduce_locked) critical_unlock(lck);
  k.reduce_locked = false;
}
}  // namespace

CANOPY_KMP kmp_int32 __kmpc_reduce_nowait(ident_t* loc, kmp_int32, kmp_int32, std::size_t, void*,
                                          void (*)(void*, void*), kmp_critical_name* lck) {
  return reduce_begin(loc, lck);
}
CANOPY_KMP void __kmpc_end_reduce_nowait(ident_t*, kmp_int32, kmp_critical_name* lck) { reduce_end(lck); }
CANOPY_KMP kmp_int32 __kmpc_reduce(ident_t* loc, kmp_int32, kmp_int32, std::size_t, void*, void (*)(void*, void*),
                                   kmp_critical_name* lck) {
  return reduce_begin(loc, lck);
}
// Called after both the locked and the atomic combination: the reduction's barrier.
CANOPY_KMP void __kmpc_end_reduce(ident_t*, kmp_int32, kmp_critical_name* lck) {
  reduce_end(lck);
  team_barrier();
}

// Cancellation: libomp's kinds (parallel 1, loop 2, sections 3, taskgroup 4) as the core's set.
namespace {
int cancel_kind(kmp_int32 kind) {
  switch (kind) {
    case 1: return kCancelParallel;
    case 2: return kCancelLoop;
    case 3: return kCancelSections;
    case 4: return kCancelTaskgroup;
    default: return 0;
  }
}
}  // namespace
CANOPY_KMP kmp_int32 __kmpc_cancel(ident_t*, kmp_int32, kmp_int32 kind) { return cancel(cancel_kind(kind)) ? 1 : 0; }
CANOPY_KMP kmp_int32 __kmpc_cancellationpoint(ident_t*, kmp_int32, kmp_int32 kind) {
  return cancellation_point(cancel_kind(kind)) ? 1 : 0;
}
