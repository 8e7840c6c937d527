// Barriers, critical, atomic, single/copyprivate, ordered, cancellation,
// error directives.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "../core/cancel.hpp"
#include "../core/workshare.hpp"
#include "abi.hpp"

using namespace canopy::omp;

namespace {
std::mutex g_critical, g_atomic;
}  // namespace

CANOPY_GOMP void GOMP_barrier() { team_barrier(); }
CANOPY_GOMP bool GOMP_barrier_cancel() { return team_barrier_cancellable(); }

CANOPY_GOMP void GOMP_critical_start() { g_critical.lock(); }
CANOPY_GOMP void GOMP_critical_end() { g_critical.unlock(); }

// Named critical: *pptr is a per-name pointer GCC zero-initialises; the
// first user installs a mutex there.
namespace {
std::mutex* named_mutex(void** pptr) {
  auto* slot = reinterpret_cast<std::atomic<std::mutex*>*>(pptr);
  std::mutex* m = slot->load(std::memory_order_acquire);
  if (m) return m;
  auto* fresh = new std::mutex;
  if (slot->compare_exchange_strong(m, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return m;
}
}  // namespace
CANOPY_GOMP void GOMP_critical_name_start(void** pptr) { named_mutex(pptr)->lock(); }
CANOPY_GOMP void GOMP_critical_name_end(void** pptr) { named_mutex(pptr)->unlock(); }

CANOPY_GOMP void GOMP_atomic_start() { g_atomic.lock(); }
CANOPY_GOMP void GOMP_atomic_end() { g_atomic.unlock(); }

// GCC calls nothing when the executor leaves the block (nor at a nowait
// single's end): an OMPT tool sees its work event end where it begins.
CANOPY_GOMP bool GOMP_single_start() {
  const bool mine = single_start();
  if (mine) single_end();
  return mine;
}
CANOPY_GOMP void* GOMP_single_copy_start() { return single_copy_start(); }
CANOPY_GOMP void GOMP_single_copy_end(void* data) { single_copy_end(data); }

CANOPY_GOMP void GOMP_ordered_start() { ordered_start(); }
CANOPY_GOMP void GOMP_ordered_end() { ordered_end(); }

// scope construct: GCC emits its barrier itself; only task reductions come
// here (ended by GOMP_workshare_task_reduction_unregister).
CANOPY_GOMP void GOMP_scope_start(uintptr_t* reductions) { scope_enter(reductions); }

CANOPY_GOMP bool GOMP_cancellation_point(int which) { return cancellation_point(which); }
CANOPY_GOMP bool GOMP_cancel(int which, bool do_cancel) { return do_cancel ? cancel(which) : cancellation_point(which); }

// The error directive at(execution). The text is libgomp's, word for word
// (programs and GCC's test suite match it): a newline, then "libgomp: error
// directive encountered[: <message>]" and a newline; a fatal error says
// "fatal error: " after "libgomp: " and exits with EXIT_FAILURE. The message
// is `len` bytes, or NUL-terminated when len is SIZE_MAX (C's string form;
// Fortran passes its length, trailing blanks included).
namespace {
void print_error_directive(const char* prefix, const char* msg, size_t len) {
  if (msg) {
    if (len == ~size_t(0)) len = std::strlen(msg);
    std::fprintf(stderr, "\nlibgomp: %serror directive encountered: %.*s\n", prefix, static_cast<int>(len), msg);
  } else {
    std::fprintf(stderr, "\nlibgomp: %serror directive encountered\n", prefix);
  }
  std::fflush(stderr);
}
}  // namespace

CANOPY_GOMP void GOMP_error(const char* msg, size_t len) {
  print_error_directive("fatal error: ", msg, len);
  std::exit(EXIT_FAILURE);
}
CANOPY_GOMP void GOMP_warning(const char* msg, size_t len) { print_error_directive("", msg, len); }
