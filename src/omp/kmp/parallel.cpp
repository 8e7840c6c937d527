// Fork/join entry points of the libomp ABI: __kmpc_fork_call (the outlined
// function gets &gtid, &thread number, then the captured variables), the
// clauses pushed before it, serialized regions (`if(0)`), thread queries.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdarg>
#include <unistd.h>
#include <utility>

#include "../core/observe.hpp"
#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "abi.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace canopy::omp::kmp {

namespace {
__attribute__((tls_model("initial-exec"))) thread_local KmpThread tls_kmp;
std::atomic<kmp_int32> next_gtid{1};
}  // namespace

KmpThread& kmp_thread() { return tls_kmp; }

kmp_int32 global_thread_num() {
  KmpThread& k = tls_kmp;
  // The process's initial thread is 0 (libomp's too), whichever thread asks first.
  if (k.gtid < 0) k.gtid = ::gettid() == ::getpid() ? 0 : next_gtid.fetch_add(1, std::memory_order_relaxed);
  return k.gtid;
}

}  // namespace canopy::omp::kmp

namespace {

using Microtask = void (*)(kmp_int32*, kmp_int32*, ...);

// The captured variables, passed on as that many pointer arguments. clang
// emits one argument per captured variable; the table below covers 64
// (libomp's x86-64 assembly has no limit: a region capturing more stops
// with a message naming the count).
constexpr int kMaxArgs = 64;

template <std::size_t... I>
void invoke_n(Microtask fn, kmp_int32* gtid, kmp_int32* tid, void** a, std::index_sequence<I...>) {
  using Exact = void (*)(kmp_int32*, kmp_int32*, decltype((void)I, static_cast<void*>(nullptr))...);
  reinterpret_cast<Exact>(fn)(gtid, tid, a[I]...);
}

template <std::size_t... N>
constexpr auto make_invokers(std::index_sequence<N...>) {
  using Invoker = void (*)(Microtask, kmp_int32*, kmp_int32*, void**);
  return std::array<Invoker, sizeof...(N)>{
      [](Microtask fn, kmp_int32* g, kmp_int32* t, void** a) { invoke_n(fn, g, t, a, std::make_index_sequence<N>{}); }...};
}


const auto kInvokers = make_invokers(std::make_index_sequence<kMaxArgs + 1>{});

struct Region {
  Microtask fn;
  int argc;
  void** args;
};

void run_microtask(void* p) {
  const Region& r = *static_cast<const Region*>(p);
  kmp_int32 gtid = global_thread_num();
  kmp_int32 tid = this_thread().num;
  kInvokers[r.argc](r.fn, &gtid, &tid, r.args);
}

// Traces and tools name a region by clang's outlined function, not this wrapper.
[[maybe_unused]] const bool microtask_registered = (register_code_of(run_microtask,
                                                    [](void* p) -> const void* {
                                                      return reinterpret_cast<const void*>(static_cast<Region*>(p)->fn);
                                                    }),
                                   true);

// The captured variables clang passes after fn, into args (at most kMaxArgs).
void read_args(const char* what, kmp_int32 argc, va_list ap, void** args) {
  if (argc < 0 || argc > kMaxArgs)
    fatal("%s capturing %d variables (canopy passes at most %d)", what, argc, kMaxArgs);
  for (int i = 0; i < argc; ++i) args[i] = va_arg(ap, void*);
}

}  // namespace

CANOPY_KMP void __kmpc_fork_call(ident_t*, kmp_int32 argc, Microtask fn, ...) {
  void* args[kMaxArgs];
  va_list ap;
  va_start(ap, fn);
  read_args("__kmpc_fork_call: a parallel region", argc, ap, args);
  va_end(ap);
  Pushed& p = kmp_thread().pushed;
  const unsigned n = p.num_threads, bind = p.proc_bind;
  p.num_threads = 0;
  p.proc_bind = 0;
  Region r{fn, argc, args};
  fork_join(run_microtask, &r, n, bind, nullptr, __builtin_return_address(0));
}

// teams on the host (core host_teams: one team after another on the caller).
CANOPY_KMP void __kmpc_fork_teams(ident_t*, kmp_int32 argc, Microtask fn, ...) {
  void* args[kMaxArgs];
  va_list ap;
  va_start(ap, fn);
  read_args("__kmpc_fork_teams: a teams region", argc, ap, args);
  va_end(ap);
  Pushed& p = kmp_thread().pushed;
  const int teams = p.num_teams, limit = p.teams_thread_limit;
  p.num_teams = p.teams_thread_limit = 0;
  Region r{fn, argc, args};
  host_teams(run_microtask, &r, static_cast<unsigned>(teams), static_cast<unsigned>(limit));
}
CANOPY_KMP void __kmpc_push_num_teams(ident_t*, kmp_int32, kmp_int32 num_teams, kmp_int32 num_threads) {
  Pushed& p = kmp_thread().pushed;
  p.num_teams = std::max(0, num_teams);
  p.teams_thread_limit = std::max(0, num_threads);
}
// num_teams(lower: upper): as many as the upper bound (the teams run one after another).
CANOPY_KMP void __kmpc_push_num_teams_51(ident_t*, kmp_int32, kmp_int32, kmp_int32 num_teams_ub, kmp_int32 num_threads) {
  Pushed& p = kmp_thread().pushed;
  p.num_teams = std::max(0, num_teams_ub);
  p.teams_thread_limit = std::max(0, num_threads);
}

CANOPY_KMP void __kmpc_push_num_threads(ident_t*, kmp_int32, kmp_int32 num_threads) {
  kmp_thread().pushed.num_threads = num_threads > 0 ? static_cast<unsigned>(num_threads) : 0;
}
CANOPY_KMP void __kmpc_pop_num_threads(ident_t*, kmp_int32) { kmp_thread().pushed.num_threads = 0; }
// libomp's proc_bind values are OpenMP's (false 0, true 1, primary 2, close 3, spread 4), as GCC's.
CANOPY_KMP void __kmpc_push_proc_bind(ident_t*, kmp_int32, int proc_bind) {
  kmp_thread().pushed.proc_bind = proc_bind >= 0 && proc_bind <= 4 ? static_cast<unsigned>(proc_bind) : 0;
}

// parallel if(false): the caller runs the outlined function itself between
// these two calls, as the one thread of a new team.
namespace {
void nothing(void*) {}
}  // namespace
CANOPY_KMP void __kmpc_serialized_parallel(ident_t*, kmp_int32) {
  Pushed& p = kmp_thread().pushed;
  const unsigned bind = p.proc_bind;
  p.num_threads = 0;
  p.proc_bind = 0;
  fork_start(nothing, nullptr, 1, bind);
}
CANOPY_KMP void __kmpc_end_serialized_parallel(ident_t*, kmp_int32) { join_end(); }

CANOPY_KMP kmp_int32 __kmpc_global_thread_num(ident_t*) { return global_thread_num(); }
CANOPY_KMP kmp_int32 __kmpc_global_num_threads(ident_t*) { return runtime().live_threads.load(std::memory_order_relaxed); }
CANOPY_KMP kmp_int32 __kmpc_bound_thread_num(ident_t*) { return this_thread().num; }
CANOPY_KMP kmp_int32 __kmpc_bound_num_threads(ident_t*) { return this_thread().team->nthreads; }
CANOPY_KMP kmp_int32 __kmpc_in_parallel(ident_t*) { return this_thread().team->active_level > 0; }
CANOPY_KMP kmp_int32 __kmpc_ok_to_fork(ident_t*) { return 1; }
CANOPY_KMP void __kmpc_begin(ident_t*, kmp_int32) {}
CANOPY_KMP void __kmpc_end(ident_t*) {}
CANOPY_KMP void __kmpc_flush(ident_t*) { std::atomic_thread_fence(std::memory_order_seq_cst); }
