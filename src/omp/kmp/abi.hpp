// Shared by the kmp/ entry points (the `__kmpc_*` ABI that clang emits,
// LLVM libomp's): the export attribute (kmp.map puts each symbol in libomp's
// version node, VERSION), libomp's types, and what the kmp layer keeps per
// OS thread (its global thread id and the clauses pushed before a fork).
// Every entry point ignores the caller's `gtid` argument and finds the
// thread with this_thread(): the gtid is only what __kmpc_global_thread_num
// returned, and an OpenMP thread never changes OS thread.
#pragma once
#include <cstddef>
#include <cstdint>

#define CANOPY_KMP extern "C" __attribute__((visibility("default")))

namespace canopy::omp::kmp {

using kmp_int32 = std::int32_t;
using kmp_uint32 = std::uint32_t;
using kmp_int64 = std::int64_t;
using kmp_uint64 = std::uint64_t;

// libomp's source location (kmp.h): only `flags` is read here.
struct ident_t {
  kmp_int32 reserved_1;
  kmp_int32 flags;
  kmp_int32 reserved_2;
  kmp_int32 reserved_3;
  const char* psource;
};
// The compiler may reduce with atomics (flags of the ident passed to __kmpc_reduce*).
constexpr kmp_int32 kIdentAtomicReduce = 0x10;
// The construct a static loop's init and fini belong to (clang sets one).
constexpr kmp_int32 kIdentWorkLoop = 0x200, kIdentWorkSections = 0x400, kIdentWorkDistribute = 0x800;

// A critical section's name (and a reduction's lock): 32 zero bytes the
// compiler allocates per name; canopy keeps a futex word in the first four.
using kmp_critical_name = kmp_int32[8];

// The clauses of the next parallel region the thread forks, pushed by
// __kmpc_push_num_threads / __kmpc_push_proc_bind / __kmpc_push_num_teams.
struct Pushed {
  unsigned num_threads = 0;
  unsigned proc_bind = 0;
  int num_teams = 0, teams_thread_limit = 0;
};

struct KmpThread {
  kmp_int32 gtid = -1;
  Pushed pushed;
  bool reduce_locked = false;  // this thread's __kmpc_reduce* took the lock (its end releases it)
  // The OMPT work kinds of the open static loops, innermost in the low 4
  // bits (loop.cpp: clang's fini may name the enclosing construct).
  std::uint64_t ompt_static_work = 0;
};

KmpThread& kmp_thread();
kmp_int32 global_thread_num();

// The lock of a critical section or reduction: a futex word in the name.
void critical_lock(kmp_critical_name* name);
void critical_unlock(kmp_critical_name* name);

}  // namespace canopy::omp::kmp
